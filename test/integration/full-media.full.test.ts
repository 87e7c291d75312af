import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OutputFormat } from '@tailor/proto'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { expectVideoResult } from '../helpers/expect-output.ts'
import {
  createMediaFixtures,
  probe,
  SHARED_MEDIA_DIR,
  type MediaFixtures,
} from '../helpers/media.ts'
import { snapshotModels } from '../helpers/models.ts'
import { freePort } from '../helpers/nats-server.ts'
import { startService, type ServiceProcess } from '../helpers/processes.ts'
import { workLeft } from '../helpers/work-dir.ts'

/**
 * The full ../shared/media clips (about 10 s each) through the embedded path. Minutes on a CPU
 * machine, so they are their own suite, `pnpm test:full` (vitest.full.config.ts), not part of
 * `pnpm test`; the default suite runs a full clip through the pipeline once
 * (services/inference/src/jobs/remove-background.test.ts).
 */
const JOB_TIMEOUT_MS = 600_000
const API_KEY = 'full-media-test-key-abcdefghijkl'

let media: MediaFixtures
let models: { dir: string; remove(): Promise<void> }
let dataDir: string
let tailor: ServiceProcess
let api: ApiClient

describe('full-length clips, embedded path', () => {
  beforeAll(async () => {
    models = await snapshotModels()
    media = await createMediaFixtures()
    dataDir = await mkdtemp(join(tmpdir(), 'tailor-data-full-'))
    const port = await freePort()
    tailor = startService('services/embedded/src/main.ts', {
      PORT: String(port),
      HOST: '127.0.0.1',
      TAILOR_DATA_DIR: dataDir,
      TAILOR_API_KEY: API_KEY,
      TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
      MODELS_DIR: models.dir,
    })
    await tailor.waitFor('Tailor is running at')
    api = apiClient(`http://127.0.0.1:${port}`, API_KEY)
  })
  afterAll(async () => {
    await tailor?.stop()
    await media?.stop()
    await models?.remove()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  it.each([
    ['video_01.mp4', 'webm_vp9', 'transparent'],
    ['video_02.mp4', 'mp4_h264', '#ffffff'],
  ] as const)('%s → %s on %s', async (clip, format, color) => {
    const id = await api.start({
      video_url: `${media.baseUrl}/shared/${clip}`,
      output_format: format,
      background_color: color,
    })
    const s = await api.wait(id, JOB_TIMEOUT_MS)
    expect(s, JSON.stringify(s)).toMatchObject({ status: 'completed', progress: 1 })
    const out = await mkdtemp(join(tmpdir(), 'tailor-out-'))
    try {
      const file = join(out, `result-${format}`)
      await writeFile(file, Buffer.from(await (await fetch(s.result_url!)).arrayBuffer()))
      await expectVideoResult(
        file,
        format as OutputFormat,
        await probe(join(SHARED_MEDIA_DIR, clip)),
        color === 'transparent',
      )
    } finally {
      await rm(out, { recursive: true, force: true })
    }
    expect(await workLeft(join(dataDir, 'work'))).toEqual([])
  })
})
