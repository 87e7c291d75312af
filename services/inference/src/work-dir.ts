import { lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { StartupError } from '@tailor/proto'

/**
 * The scratch space of one inference process: `<TAILOR_WORK_DIR>/w-<host>-<pid>-XXXXXX`, made
 * with mkdtemp (mode 0700) at start; each job makes its own subdirectory in it and removes it
 * after. Several workers may share TAILOR_WORK_DIR (two on one host, the embedded mode and a
 * worker): each sweeps only what a *dead* process left, never another live worker's running jobs
 * (issue 15: the second worker's sweep used to delete the first one's job).
 *
 * The sweep never follows a symbolic link: TAILOR_WORK_DIR itself must be a real directory (a link
 * there refuses start-up), and only entries that are real directories, owned by this user, named
 * as above, of this host, whose process is gone are removed (fs.rm removes links inside them, not
 * what they point to). Anything else is left alone.
 */
export interface WorkDir {
  /** This process's own directory (jobs' work roots). */
  path: string
  /** Dead processes' directories removed at open. */
  swept: string[]
  /** Removes this process's directory (at stop). */
  close(): Promise<void>
}

const NAME_RE = /^w-(.+)-(\d+)-[A-Za-z0-9]{6}$/
const hostTag = (h: string): string => h.replace(/[^A-Za-z0-9.]/g, '_').slice(0, 64) || 'host'
/** Directories made by this process (several in-process workers share its pid: tests, embedded). */
const OWN = new Set<string>()

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' // someone else's process: alive
  }
}

/** Whether `name` in `root` is a directory this user may sweep: a dead process of this host. */
async function isStale(root: string, name: string, host: string): Promise<boolean> {
  const m = NAME_RE.exec(name)
  if (m === null || m[1] !== host) return false
  const path = join(root, name)
  const st = await lstat(path).catch(() => null)
  if (
    st === null ||
    !st.isDirectory() ||
    (process.getuid !== undefined && st.uid !== process.getuid())
  ) {
    return false
  }
  const pid = Number(m[2])
  // Our own pid: a predecessor in the same container (pid 1 again), unless this process made it.
  if (pid === process.pid) return !OWN.has(path)
  return !processAlive(pid)
}

export async function openWorkDir(root: string, o: { host?: string } = {}): Promise<WorkDir> {
  const host = hostTag(o.host ?? hostname())
  const fail = (why: string, cause?: unknown): StartupError =>
    new StartupError(
      `TAILOR_WORK_DIR ${root} ${why}: point TAILOR_WORK_DIR at a directory this service may own`,
      { cause },
    )
  try {
    await mkdir(root, { recursive: true, mode: 0o700 })
  } catch (err) {
    throw fail(`cannot be created (${(err as NodeJS.ErrnoException).code ?? 'error'})`, err)
  }
  const st = await lstat(root)
  if (st.isSymbolicLink()) throw fail('is a symbolic link')
  if (!st.isDirectory()) throw fail('is not a directory')
  const swept: string[] = []
  for (const name of await readdir(root)) {
    if (await isStale(root, name, host)) {
      await rm(join(root, name), { recursive: true, force: true })
      swept.push(name)
    }
  }
  let path: string
  try {
    path = await mkdtemp(join(root, `w-${host}-${process.pid}-`))
  } catch (err) {
    throw fail(`is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})`, err)
  }
  OWN.add(path)
  return {
    path,
    swept,
    async close() {
      OWN.delete(path)
      await rm(path, { recursive: true, force: true })
    },
  }
}
