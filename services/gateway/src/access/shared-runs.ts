/**
 * Runs of `fn` shared by callers: each call resolves (or rejects) with a run that started after
 * the call was made, yet however many callers there are, at most one run is in flight and one
 * queued behind it. For "make sure what was true when I asked has been seen" checks (a key store
 * watch catching up) that many requests may ask for at once.
 */
export function sharedRuns(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null
  let queued: Promise<void> | null = null
  const start = (): Promise<void> => {
    const run = fn().finally(() => {
      if (running === run) running = null
    })
    running = run
    return run
  }
  return () => {
    if (queued !== null) return queued
    if (running === null) return start()
    const next = running
      .catch(() => undefined)
      .then(() => {
        queued = null
        return start()
      })
    queued = next
    return next
  }
}
