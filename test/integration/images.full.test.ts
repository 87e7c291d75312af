/**
 * The service images, built and run (`pnpm test:full`: a cold build takes tens of minutes on a
 * 2-core machine, a cached one seconds). `pnpm images:build` (scripts/images/build.sh) builds the
 * gateway image and the CPU inference image from local Debian bases with buildah; here they run
 * with `buildah run --isolation chroot` on the host network, against a real nats-server as
 * deploy/k8s configures it: accounts and users (deploy/k8s/base/nats/accounts.conf) and TLS with
 * a certificate made here (the services verify it against NATS_TLS_CA_FILE, mounted read-only like
 * the Secret in overlays/production/nats-tls.yaml). A 1-second video job and a try-on complete and
 * their results are fetched; every process of both containers runs as UID/GID 10001; the images
 * carry the licence texts and none of what was cut (npm, tsx, foreign onnxruntime binaries).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, type ApiClient } from '../helpers/api.ts'
import { createMediaFixtures, probe, type MediaFixtures } from '../helpers/media.ts'
import { freePort, startNatsServer, type NatsServer } from '../helpers/nats-server.ts'
import { REPO_ROOT } from '../helpers/processes.ts'
import { makeTestPki } from '../helpers/tls.ts'

const run = promisify(execFile)
const GATEWAY_IMAGE = 'localhost/tailor-gateway:dev'
const INFERENCE_IMAGE = 'localhost/tailor-inference-cpu:dev'
const BUILD_TIMEOUT_MS = 90 * 60_000
const READY_TIMEOUT_MS = 300_000
const JOB_TIMEOUT_MS = 300_000
const API_KEY = 'integration-test-key-images-0123456789'
const GATEWAY_PASSWORD = 'gateway-password-images-0123456789ab'
const INFERENCE_PASSWORD = 'inference-password-images-0123456789ab'
const JOB_EVENTS_TOKEN = 'images-test-job-events-token-0123456789abcdef'
const SERVICE_UID = 10001

interface Container {
  name: string
  output(): string
  waitFor(text: string, timeoutMs: number): Promise<void>
  /** PIDs (host view) of the processes running in this container. */
  pids(): Promise<number[]>
  /** Where the container's root file system is mounted on the host. */
  mountPoint(): Promise<string>
  stop(): Promise<void>
}

/**
 * `buildah from IMAGE` + `buildah run` of the image's own entry point, user and working directory
 * (buildah run applies the image's USER and WORKDIR), on the host network, with `env` added and
 * `volumes` ("host:container:ro") bound. Its processes are found by a marker in their environment.
 */
async function runImage(
  image: string,
  env: Record<string, string>,
  volumes: string[],
): Promise<Container> {
  const { stdout: ctr } = await run('buildah', ['from', '--pull=never', '--quiet', image])
  const name = ctr.trim()
  const { stdout: inspect } = await run('buildah', ['inspect', '--type', 'image', image], {
    maxBuffer: 16 << 20,
  })
  const entry = (JSON.parse(inspect) as { Docker: { config: { Entrypoint: string[] } } }).Docker
    .config.Entrypoint
  const marker = `TAILOR_TEST_CONTAINER=${name}`
  const args = [
    'run',
    '--isolation',
    'chroot',
    '--network',
    'host',
    ...volumes.flatMap((v) => ['-v', v]),
    '-e',
    marker,
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    name,
    '--',
    ...entry,
  ]
  const proc: ChildProcess = spawn('buildah', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const waiters: { text: string; resolve: () => void }[] = []
  const onData = (d: Buffer): void => {
    out = (out + d.toString()).slice(-1_000_000)
    for (const w of [...waiters]) {
      if (out.includes(w.text)) (waiters.splice(waiters.indexOf(w), 1), w.resolve())
    }
  }
  proc.stdout?.on('data', onData)
  proc.stderr?.on('data', onData)
  const exited = new Promise<void>((r) => proc.once('exit', () => r()))
  const pids = async (): Promise<number[]> => {
    const found: number[] = []
    for (const p of await readdir('/proc')) {
      if (!/^\d+$/.test(p)) continue
      const environ = await readFile(`/proc/${p}/environ`, 'utf8').catch(() => '')
      if (environ.split('\0').includes(marker)) found.push(Number(p))
    }
    return found
  }
  return {
    name,
    output: () => out,
    waitFor(text, timeoutMs) {
      if (out.includes(text)) return Promise.resolve()
      return new Promise((res, rej) => {
        const t = setTimeout(
          () =>
            rej(
              new Error(`${image}: "${text}" not seen within ${timeoutMs} ms\n${out.slice(-3000)}`),
            ),
          timeoutMs,
        )
        const w = { text, resolve: () => (clearTimeout(t), res()) }
        waiters.push(w)
        void exited.then(() => {
          if (waiters.includes(w)) {
            ;(clearTimeout(t),
              rej(new Error(`${image} exited before "${text}"\n${out.slice(-3000)}`)))
          }
        })
      })
    },
    pids,
    mountPoint: async () => (await run('buildah', ['mount', name])).stdout.trim(),
    async stop() {
      // SIGTERM to the service itself (what the kubelet sends), then the container is removed.
      if (proc.exitCode === null && proc.signalCode === null) {
        for (const p of await pids()) {
          try {
            process.kill(p, 'SIGTERM')
          } catch {
            // already gone
          }
        }
        const t = setTimeout(() => proc.kill('SIGKILL'), 60_000)
        await exited
        clearTimeout(t)
      }
      await run('buildah', ['rm', name]).catch(() => undefined)
    },
  }
}

let build = { output: '', seconds: 0 }
let certDir: string
let nats: NatsServer
let media: MediaFixtures
let gateway: Container
let inference: Container
let api: ApiClient
let base: string

const containers = async (): Promise<string[]> =>
  (await run('buildah', ['containers', '--quiet', '--notruncate'])).stdout
    .split('\n')
    .filter(Boolean)
let leftBehind: string[] = []

beforeAll(
  async () => {
    const before = new Set(await containers().catch(() => []))
    const t0 = Date.now()
    build = await new Promise((res, rej) => {
      const p = spawn('bash', [resolve(REPO_ROOT, 'scripts/images/build.sh')], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      p.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-200_000)))
      p.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-200_000)))
      p.once('exit', (code) =>
        code === 0
          ? res({ output, seconds: (Date.now() - t0) / 1000 })
          : rej(new Error(`pnpm images:build failed (${code})\n${output.slice(-4000)}`)),
      )
    })
    leftBehind = (await containers()).filter((c) => !before.has(c))
    console.log(
      `images built in ${build.seconds.toFixed(0)} s\n${build.output
        .split('\n')
        .filter((l) => l.startsWith('images:'))
        .join('\n')}`,
    )

    certDir = await mkdtemp(join(tmpdir(), 'tailor-images-tls-'))
    await makeTestPki(certDir)
    for (const f of ['accounts.conf']) {
      await writeFile(
        join(certDir, f),
        await readFile(resolve(REPO_ROOT, 'deploy/k8s/base/nats', f)),
      )
    }
    // The production TLS block of overlays/production/nats-tls.yaml, with this test's files.
    await writeFile(
      join(certDir, 'nats.conf'),
      `include ./accounts.conf\ntls { cert_file: "${join(certDir, 'tls.crt')}", key_file: "${join(certDir, 'tls.key')}" }\n`,
    )
    nats = await startNatsServer({
      config: join(certDir, 'nats.conf'),
      env: { NATS_GATEWAY_PASSWORD: GATEWAY_PASSWORD, NATS_INFERENCE_PASSWORD: INFERENCE_PASSWORD },
    })
    media = await createMediaFixtures()

    const [port, metricsPort, grpcPort, apiGrpcPort, healthPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ])
    const tls = [`${certDir}/ca.crt:/etc/nats-tls/ca.crt:ro`]
    const common = {
      NATS_URL: nats.url,
      NATS_TLS_CA_FILE: '/etc/nats-tls/ca.crt',
      JOB_EVENTS_TOKEN,
      LOG_LEVEL: 'info',
    }
    gateway = await runImage(
      GATEWAY_IMAGE,
      {
        ...common,
        NATS_USER: 'gateway',
        NATS_PASSWORD: GATEWAY_PASSWORD,
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        GRPC_PORT: String(grpcPort),
        API_GRPC_PORT: String(apiGrpcPort),
        API_KEYS: API_KEY,
        RESULT_URL_SECRET: 'images-test-secret-0123456789abcdefghij',
        TRYON_WAIT_TIMEOUT_MS: String(JOB_TIMEOUT_MS - 30_000),
      },
      tls,
    )
    await gateway.waitFor('gateway listening', READY_TIMEOUT_MS)
    inference = await runImage(
      INFERENCE_IMAGE,
      {
        ...common,
        NATS_USER: 'inference',
        NATS_PASSWORD: INFERENCE_PASSWORD,
        GATEWAY_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
        HEALTH_PORT: String(healthPort),
        HEALTH_HOST: '127.0.0.1',
        TAILOR_FETCH_ALLOW_LOOPBACK: 'true',
      },
      tls,
    )
    await inference.waitFor('inference consuming jobs', READY_TIMEOUT_MS)
    base = `http://127.0.0.1:${port}`
    api = apiClient(base, API_KEY)
  },
  BUILD_TIMEOUT_MS + 2 * READY_TIMEOUT_MS,
)

afterAll(async () => {
  await inference?.stop()
  await gateway?.stop()
  await nats?.stop()
  await media?.stop()
  if (certDir) await rm(certDir, { recursive: true, force: true })
})

describe('images (pnpm images:build), run with buildah on loopback', () => {
  it(
    'a 1-second video job completes over NATS with users and TLS; the result is fetched',
    async () => {
      const id = await api.start({
        video_url: `${media.baseUrl}/short_01.mp4`,
        output_format: 'mp4_h264',
      })
      const s = await api.wait(id, JOB_TIMEOUT_MS)
      expect(s, inference.output().slice(-3000)).toMatchObject({ status: 'completed', progress: 1 })
      const r = await fetch(s.result_url!)
      expect(r.status).toBe(200)
      const dir = await mkdtemp(join(tmpdir(), 'tailor-images-result-'))
      try {
        await writeFile(join(dir, 'r.mp4'), Buffer.from(await r.arrayBuffer()))
        const p = await probe(join(dir, 'r.mp4'))
        expect(Number(p.format.duration)).toBeGreaterThan(0.8)
        expect(p.streams.some((st) => st.codec_type === 'video' && st.codec_name === 'h264')).toBe(
          true,
        )
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
    JOB_TIMEOUT_MS + 30_000,
  )

  it(
    'a try-on completes (sync); the result is fetched',
    async () => {
      const r = await fetch(`${base}/v1/try-on`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
        body: JSON.stringify({
          person_image_url: `${media.baseUrl}/shared/person_02.jpg`,
          garment_image_url: `${media.baseUrl}/shared/garment_lower_01.jpg`,
        }),
      })
      const body = (await r.json()) as { result_url?: string }
      expect(r.status, `${JSON.stringify(body)}\n${inference.output().slice(-3000)}`).toBe(200)
      const res = await fetch(body.result_url!)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/jpeg')
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(10_000)
    },
    JOB_TIMEOUT_MS + 30_000,
  )

  it('the build leaves no working container behind', () => {
    expect(leftBehind).toEqual([])
  })

  it('every process of both containers runs as the unprivileged user (UID/GID 10001)', async () => {
    for (const c of [gateway, inference]) {
      const pids = await c.pids()
      expect(pids.length, c.name).toBeGreaterThan(0)
      for (const p of pids) {
        const status = await readFile(`/proc/${p}/status`, 'utf8')
        const ids = (re: RegExp): number[] => re.exec(status)![1]!.trim().split(/\s+/).map(Number)
        expect(ids(/^Uid:(.*)$/m), `${c.name} pid ${p}`).toEqual([
          SERVICE_UID,
          SERVICE_UID,
          SERVICE_UID,
          SERVICE_UID,
        ])
        expect(ids(/^Gid:(.*)$/m), `${c.name} pid ${p}`).toEqual([
          SERVICE_UID,
          SERVICE_UID,
          SERVICE_UID,
          SERVICE_UID,
        ])
      }
    }
  })

  it('the images carry the licence texts, compiled JavaScript, and none of what was cut', async () => {
    const gw = await gateway.mountPoint()
    const inf = await inference.mountPoint()
    expect(await readFile(join(gw, 'app/licenses/LICENSE'), 'utf8')).toContain('Apache License')
    expect(await readFile(join(inf, 'app/licenses/LICENSE'), 'utf8')).toContain('Apache License')
    expect(await readFile(join(inf, 'app/licenses/GPL-3.0.txt'), 'utf8')).toContain(
      'GNU GENERAL PUBLIC LICENSE',
    )
    expect(await readFile(join(inf, 'app/licenses/MODELS.md'), 'utf8')).toContain('rvm.onnx')
    expect(await readFile(join(inf, 'app/licenses/human-models-MIT.txt'), 'utf8')).toMatch(/MIT/)
    for (const root of [gw, inf]) {
      expect(existsSync(join(root, 'app/src/main.js')), root).toBe(true)
      for (const gone of [
        'usr/local/lib/node_modules/npm',
        'usr/local/bin/npm',
        'app/node_modules/tsx',
        'app/node_modules/.pnpm/node_modules/esbuild',
      ]) {
        expect(existsSync(join(root, gone)), `${root}/${gone}`).toBe(false)
      }
    }
    const ort = join(inf, 'app/node_modules/onnxruntime-node/bin/napi-v6')
    expect(await readdir(ort)).toEqual(['linux'])
    expect(await readdir(join(ort, 'linux'))).toEqual(['x64'])
    expect((await readdir(join(ort, 'linux/x64'))).filter((f) => f.includes('tensorrt'))).toEqual(
      [],
    )
    const { stdout } = await run('buildah', ['images', '--format', '{{.Name}}:{{.Tag}} {{.Size}}'])
    console.log(
      `image sizes:\n${stdout
        .split('\n')
        .filter((l) => l.includes('tailor-'))
        .join('\n')}`,
    )
  })
})
