/**
 * The embedded mode (`pnpm start`, one process) under the same faults: crash leftovers in the data
 * dir are swept at start, and a job whose process dies on every run fails `worker_crashed` after
 * MAX_DELIVER runs instead of being requeued for ever at each restart.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { deadWorkerDir, workLeft as jobDirsLeft } from '../helpers/work-dir.ts'
import { createMediaFixtures, type MediaFixtures } from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'

const ENTRY = 'services/embedded/src/main.ts'
const API_KEY = 'embedded-faults-test-key-abcdefg'
const JOB_TIMEOUT_MS = 120_000
const MAX_DELIVER = 1
const STALE_ID = '0190c0de-dead-7000-8000-000000000000'

let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let dataDir: string
let env: Record<string, string>
let tailor: ServiceProcess
let api: ApiClient

const startTailor = async (): Promise<void> => {
  await tailor?.stop()
  tailor = startService(ENTRY, env)
  await tailor.waitFor('Tailor is running at')
}
const workLeft = (): Promise<string[]> => jobDirsLeft(join(dataDir, 'work'))
const ls = async (d: string): Promise<string[]> =>
  (await readdir(join(dataDir, d), { recursive: true })).map(String).sort()

beforeAll(async () => {
  models = await snapshotModels()
  media = await createMediaFixtures()
  dataDir = await mkdtemp(join(tmpdir(), 'tailor-data-faults-'))
  const port = await freePort()
  env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    TAILOR_DATA_DIR: dataDir,
    TAILOR_API_KEY: API_KEY,
    TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
    MODELS_DIR: models.dir,
    MAX_DELIVER: String(MAX_DELIVER),
  }
  api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
})

afterAll(async () => {
  await tailor?.stop('SIGKILL')
  await media?.stop()
  await models?.remove()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe('embedded mode faults (real process)', () => {
  it('start-up sweeps what a crash left in the data dir: scratch files, half-written records and results', async () => {
    const stale = deadWorkerDir(join(dataDir, 'work'))
    await mkdir(join(stale, `${STALE_ID}-x1`), { recursive: true })
    await writeFile(join(stale, `${STALE_ID}-x1`, 'input'), 'stale download')
    await mkdir(join(dataDir, 'jobs'), { recursive: true })
    await writeFile(join(dataDir, 'jobs', `${STALE_ID}.json.tmp`), '{"half')
    await mkdir(join(dataDir, 'results', 'remove-background'), { recursive: true })
    await writeFile(
      join(dataDir, 'results', 'remove-background', `${STALE_ID}.mp4.partial`),
      'half a result',
    )
    await startTailor()
    expect(await workLeft()).toEqual([])
    expect((await ls('work')).filter((n) => n.startsWith(basename(stale)))).toEqual([])
    expect((await ls('jobs')).filter((n) => n.endsWith('.tmp'))).toEqual([])
    expect(await ls('results')).toEqual(['remove-background'])
  })

  it(`a job whose process dies on every run → failed worker_crashed after MAX_DELIVER (${MAX_DELIVER}) at the next start; the next job completes`, async () => {
    const id = await api.start({
      video_url: `${media.baseUrl}/medium_01.mp4`,
      output_format: 'mp4_h264',
    })
    await api.waitUntil(id, (s) => s.status === 'running', JOB_TIMEOUT_MS)
    // "running" is recorded as the job starts; its scratch dir appears as the download begins.
    const hasScratch = async (): Promise<boolean> =>
      (await ls('work')).some((n) => n.includes(`/${id}-`))
    const deadline = Date.now() + JOB_TIMEOUT_MS
    while (!(await hasScratch()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
    }
    await tailor.stop('SIGKILL')
    expect(await hasScratch()).toBe(true) // the dead run's scratch files
    await startTailor() // requeues the unfinished job: its delivery MAX_DELIVER + 1 records the failure
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    expect(s).toMatchObject({
      status: 'failed',
      result_url: null,
      error: { error_code: 'worker_crashed' },
    })
    expect(tailor.output()).not.toContain('"msg":"job started"')
    expect(await workLeft()).toEqual([])
    const next = await api.wait(
      await api.start({ video_url: `${media.baseUrl}/short_01.mp4` }),
      JOB_TIMEOUT_MS,
    )
    expect(next).toMatchObject({ status: 'completed' })
    expect(await workLeft()).toEqual([])
  })
})
