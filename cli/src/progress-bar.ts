/**
 * Job progress on stderr: on a terminal one line redrawn in place (`\r`), otherwise plain lines,
 * one per status change or 10 % step (logs stay readable).
 */
export interface ProgressSink {
  write(s: string): unknown
  isTTY?: boolean
  columns?: number
}

export const BAR_WIDTH = 30

export function createProgressBar(out: ProgressSink, label: string) {
  let lastLine = ''
  let lastStatus = ''
  let lastStep = -1
  let drawn = false
  return {
    /** `attempt` > 1: the job was started again (its worker died, or a retryable error); progress restarts from 0, and the line says why. */
    update(jobStatus: string, progress: number, attempt = 1): void {
      const status = attempt > 1 ? `${jobStatus} (attempt ${attempt})` : jobStatus
      const pct = Math.max(0, Math.min(100, Math.floor(progress * 100)))
      if (out.isTTY === true) {
        const filled = Math.round((pct / 100) * BAR_WIDTH)
        const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(pct).padStart(3)}% ${status}`
        if (line === lastLine) return
        out.write(`\r\x1b[2K${line}`)
        lastLine = line
        drawn = true
        return
      }
      const step = Math.floor(pct / 10)
      if (status === lastStatus && step === lastStep) return
      out.write(`${label}: ${status} ${pct}%\n`)
      lastStatus = status
      lastStep = step
    },
    /** Ends the in-place line (TTY) so what follows starts on its own line. */
    done(): void {
      if (drawn) out.write('\n')
      drawn = false
    },
  }
}
