import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** How often the embedded data dir's results are swept. */
export const RESULT_SWEEP_INTERVAL_MS = 60_000

/**
 * Deletes the regular files under `dir` (recursively) last written at least `maxAgeMs` before
 * `nowMs`; `alsoRemove` names files to delete whatever their age. Returns the paths deleted.
 * Files that vanish meanwhile are fine (another sweep, a redelivered job replacing its result).
 */
export async function sweepOldFiles(
  dir: string,
  maxAgeMs: number,
  nowMs: number,
  alsoRemove: (name: string) => boolean = () => false,
): Promise<string[]> {
  const removed: string[] = []
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return removed
    throw err
  }
  for (const e of entries) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      removed.push(...(await sweepOldFiles(p, maxAgeMs, nowMs, alsoRemove)))
      continue
    }
    if (!e.isFile()) continue
    const st = await stat(p).catch(() => null)
    if (st !== null && (alsoRemove(e.name) || nowMs - st.mtimeMs >= maxAgeMs)) {
      await rm(p, { force: true })
      removed.push(p)
    }
  }
  return removed
}

export interface Sweeper {
  stop(): void
}

/**
 * Results in the embedded data dir (`<dir>/<kind>/<id>.<ext>`): each is deleted `retentionMs`
 * (RESULT_RETENTION_S) after it was written, like the Object Store bucket's TTL distributed.
 * The first sweep runs now and also removes `.partial` copies a crash left mid-write (only this
 * process writes results, and it has not started a job yet).
 */
export async function startFileResultSweeper(
  dir: string,
  o: { retentionMs: number; intervalMs?: number; onSwept?: (paths: string[]) => void },
): Promise<Sweeper> {
  const report = (paths: string[]): void => {
    if (paths.length > 0) o.onSwept?.(paths)
  }
  report(await sweepOldFiles(dir, o.retentionMs, Date.now(), (n) => n.endsWith('.partial')))
  const timer = setInterval(() => {
    sweepOldFiles(dir, o.retentionMs, Date.now()).then(report, () => undefined)
  }, o.intervalMs ?? RESULT_SWEEP_INTERVAL_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
