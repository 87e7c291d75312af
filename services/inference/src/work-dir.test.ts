import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StartupError } from '@tailor/proto'
import { openWorkDir } from './work-dir.ts'

const HOST = hostname()
  .replace(/[^A-Za-z0-9.]/g, '_')
  .slice(0, 64)
/** A pid that was just in use and is not any more. */
const deadPid = (): number => spawnSync('true').pid!

describe('openWorkDir', () => {
  let base: string
  let root: string
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'tailor-workdir-test-'))
    root = join(base, 'work')
  })
  afterEach(async () => {
    await rm(base, { recursive: true, force: true })
  })

  it("gives each worker process its own 0700 directory (mkdtemp) and never sweeps a live worker's running job", async () => {
    // Another worker on this host, alive (our parent process), with a job running in its dir.
    const live = join(root, `w-${HOST}-${process.ppid}-abc123`)
    await mkdir(join(live, 'job-1-xyz'), { recursive: true })
    await writeFile(join(live, 'job-1-xyz', 'input'), 'downloading')
    const a = await openWorkDir(root)
    const b = await openWorkDir(root) // a second worker sharing TAILOR_WORK_DIR (here: the same pid, as in embedded mode and tests)
    expect(a.path).not.toBe(b.path)
    expect(((await stat(a.path)).mode & 0o777).toString(8)).toBe('700')
    await mkdir(join(a.path, 'job-2-abc'))
    const c = await openWorkDir(root)
    expect(await readFile(join(live, 'job-1-xyz', 'input'), 'utf8')).toBe('downloading')
    expect(await readdir(a.path), 'a live worker of this process keeps its job dir').toEqual([
      'job-2-abc',
    ])
    expect(a.swept.concat(b.swept, c.swept)).toEqual([])
    for (const w of [a, b, c]) await w.close()
    expect((await readdir(root)).sort()).toEqual([`w-${HOST}-${process.ppid}-abc123`])
  })

  it("sweeps what a dead worker of this host left; leaves other hosts', unknown and foreign entries alone", async () => {
    const dead = `w-${HOST}-${deadPid()}-Dead01`
    await mkdir(join(root, dead, 'job-x'), { recursive: true })
    await writeFile(join(root, dead, 'job-x', 'input'), 'stale download')
    const otherHost = `w-other-host.example-${deadPid()}-Other1`
    await mkdir(join(root, otherHost), { recursive: true })
    await mkdir(join(root, 'not-ours'))
    const w = await openWorkDir(root)
    expect(w.swept).toEqual([dead])
    expect((await readdir(root)).sort()).toEqual(
      [otherHost, 'not-ours', w.path.slice(root.length + 1)].sort(),
    )
    await w.close()
  })

  it("never follows a symbolic link: not in a dead worker's dir, not as an entry, not as TAILOR_WORK_DIR itself", async () => {
    const outside = join(base, 'precious')
    await mkdir(outside)
    await writeFile(join(outside, 'keep.txt'), 'keep')
    // A dead worker's dir holding a link to the outside: the dir goes, the link's target stays.
    const dead = join(root, `w-${HOST}-${deadPid()}-Dead02`)
    await mkdir(dead, { recursive: true })
    await symlink(outside, join(dead, 'link'))
    // A link named like a dead worker's dir: left alone (not a directory).
    const linkEntry = `w-${HOST}-${deadPid()}-Link01`
    await symlink(outside, join(root, linkEntry))
    const w = await openWorkDir(root)
    await w.close()
    expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('keep')
    expect(await readdir(root)).toEqual([linkEntry])

    // TAILOR_WORK_DIR a link (e.g. planted in a shared /tmp): start-up refused, nothing swept.
    const linked = join(base, 'linked-work')
    await symlink(outside, linked)
    const err = await openWorkDir(linked).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(StartupError)
    expect((err as Error).message).toMatch(
      /^TAILOR_WORK_DIR .* is a symbolic link: point TAILOR_WORK_DIR at/,
    )
    expect(await readdir(outside)).toEqual(['keep.txt'])
  })
})
