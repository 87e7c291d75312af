/**
 * Static checks of the service images (built and run by test/integration/images.full.test.ts): multi-stage,
 * an unprivileged user, health checks, ports and paths that agree with the Kubernetes manifests,
 * and, for inference, the CUDA pieces onnxruntime-node needs.
 */
import { createRequire } from 'node:module'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'

const ROOT = resolve(import.meta.dirname, '../..')
const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8')

interface Instruction {
  op: string
  args: string
}
interface Stage {
  from: string
  name: string | null
  body: Instruction[]
}

/** Dockerfile → global ARGs and stages (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const logical: string[] = []
  let cur = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#') || line === '') continue
    if (line.endsWith('\\')) cur += `${line.slice(0, -1)} `
    else {
      logical.push(cur + line)
      cur = ''
    }
  }
  const args: Record<string, string> = {}
  const stages: Stage[] = []
  for (const l of logical) {
    const m = /^(\w+)\s+(.*)$/.exec(l)
    if (m === null) throw new Error(`unparsable line: ${l}`)
    const op = m[1]!.toUpperCase()
    const rest = m[2]!
    if (op === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest)!
      stages.push({ from: f[1]!, name: f[2] ?? null, body: [] })
    } else if (stages.length === 0) {
      if (op === 'ARG') {
        const [k, v] = rest.split('=')
        args[k!] = v ?? ''
      }
    } else stages.at(-1)!.body.push({ op, args: rest })
  }
  return { args, stages }
}
const expand = (s: string, args: Record<string, string>): string =>
  s.replace(/\$\{(\w+)\}/g, (_m, k: string) => args[k] ?? '')
const ops = (st: Stage, op: string): string[] =>
  st.body.filter((i) => i.op === op).map((i) => i.args)
const envOf = (st: Stage): Record<string, string> =>
  Object.fromEntries(
    ops(st, 'ENV').flatMap((e) => [...e.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
  )

/** Container ports of a base Deployment, by name. */
const k8sPorts = (file: string): Record<string, number> => {
  const d = parseAllDocuments(read(file))[0]!.toJS() as {
    spec: {
      template: { spec: { containers: { ports: { name: string; containerPort: number }[] }[] } }
    }
  }
  return Object.fromEntries(
    d.spec.template.spec.containers[0]!.ports.map((p) => [p.name, p.containerPort]),
  )
}

const pkg = JSON.parse(read('package.json')) as {
  packageManager: string
  engines: { node: string }
}

describe.each([
  ['gateway', 'services/gateway/Dockerfile', 'deploy/k8s/base/gateway/deployment.yaml'],
  ['inference', 'services/inference/Dockerfile', 'deploy/k8s/base/inference/deployment.yaml'],
])('%s image', (service, dockerfile, deployment) => {
  const { args, stages } = parseDockerfile(read(dockerfile))
  const runtime = stages.at(-1)!
  const build = stages.find((s) => s.name === 'build')!

  it('is multi-stage: dependencies and build in one stage, a runtime stage that copies only the result', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    expect(runtime.name).toBe('runtime')
    expect(build).toBeDefined()
    const names = new Set(stages.map((s) => s.name))
    for (const c of ops(runtime, 'COPY')) {
      const from = /--from=(\S+)/.exec(c)?.[1]
      expect(from, `runtime COPY ${c}`).toBeDefined() // nothing from the build context directly
      expect(names.has(from!), c).toBe(true)
    }
    // The service is cut out with its production dependencies only.
    expect(ops(build, 'RUN').join('\n')).toContain(`pnpm --filter @tailor/${service} deploy --prod`)
    expect(ops(build, 'RUN').join('\n')).toContain('pnpm install --frozen-lockfile')
  })

  it('runs as an unprivileged user, with exec-form entry point and a health check on /healthz', () => {
    const users = ops(runtime, 'USER')
    expect(users.length).toBeGreaterThan(0)
    const user = users.at(-1)!
    expect(user).toMatch(/^\d+(:\d+)?$/) // numeric, so runAsNonRoot can verify it
    expect(Number(user.split(':')[0])).toBeGreaterThan(0)
    const entry = ops(runtime, 'ENTRYPOINT').at(-1)!
    // Compiled JavaScript (scripts/images/compile.ts), not TypeScript through tsx at every start.
    expect(JSON.parse(entry)).toEqual(['node', 'src/main.js'])
    expect(ops(build, 'RUN').join('\n')).toContain(
      `cd services/${service} && node --import tsx ../../scripts/images/compile.ts /out`,
    )
    const hc = ops(runtime, 'HEALTHCHECK').at(-1)!
    expect(hc).toContain('/healthz')
    expect(hc).toMatch(/CMD \[/)
  })

  it("copies every workspace package's manifest before the install (pnpm reads the whole workspace)", () => {
    const globs = (
      parseAllDocuments(read('pnpm-workspace.yaml'))[0]!.toJS() as { packages: string[] }
    ).packages
    const dirs = globs
      .flatMap((g) =>
        g.endsWith('/*')
          ? readdirSync(join(ROOT, g.slice(0, -2))).map((d) => `${g.slice(0, -2)}/${d}`)
          : [g],
      )
      .filter((d) => existsSync(join(ROOT, d, 'package.json')))
    expect(dirs.length).toBeGreaterThan(5)
    const copies = ops(build, 'COPY')
    for (const d of dirs) expect(copies, d).toContain(`${d}/package.json ${d}/`)
  })

  it('uses the pinned pnpm and a Node.js the workspace supports', () => {
    expect(`pnpm@${args.PNPM_VERSION}`).toBe(pkg.packageManager)
    const [major, minor] = (args.NODE_VERSION ?? '').split('.').map(Number)
    const [needMajor, needMinor] = pkg.engines.node.replace('>=', '').split('.').map(Number)
    expect(
      major! > needMajor! || (major === needMajor && minor! >= needMinor!),
      args.NODE_VERSION,
    ).toBe(true)
  })

  it('takes its base images as build arguments (defaults: the public images); the runtime gets the node binary alone', () => {
    // Two stages only (an instruction-less stage used as a COPY source is left behind as a
    // container by every buildah build).
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime'])
    expect(build.from).toBe('${NODE_IMAGE}')
    expect(expand(args.NODE_IMAGE!, args)).toBe(`node:${args.NODE_VERSION}-bookworm-slim`)
    expect(runtime.from).toBe('${RUNTIME_IMAGE}')
    expect(args.RUNTIME_IMAGE).toMatch(
      service === 'gateway' ? /^debian:bookworm-slim$/ : /^nvidia\/cuda:/,
    )
    // No npm in the runtime: only /usr/local/bin/node comes from the Node.js image.
    expect(ops(runtime, 'COPY').filter((c) => c.includes('/usr/local'))).toEqual([
      '--from=build /usr/local/bin/node /usr/local/bin/node',
    ])
  })

  it('trusts an extra CA for HTTPS during the build only, as a build secret (never an ARG, ENV or layer)', () => {
    const runs = ops(build, 'RUN')
    const online = runs.filter((r) =>
      /npm install|pnpm install|pnpm --filter \S+ deploy|script\/install\.js/.test(r),
    )
    expect(online.length).toBeGreaterThanOrEqual(3)
    for (const r of online) {
      expect(r, r).toContain('--mount=type=secret,id=build_ca')
      expect(r, r).toContain('NODE_EXTRA_CA_CERTS=/run/secrets/build_ca')
    }
    for (const st of stages) {
      for (const op of ['ARG', 'ENV', 'COPY']) {
        for (const i of ops(st, op)) {
          expect(i, `${op} ${i}`).not.toMatch(/\bca\b|certificates?\.crt|CA_CERTS/i)
        }
      }
    }
  })

  it('carries the licence texts in /app/licenses', () => {
    expect(ops(build, 'RUN').join('\n')).toContain('cp LICENSE /out/licenses/LICENSE')
    expect(ops(runtime, 'COPY')).toContain('--from=build /out /app')
  })

  it('exposes the ports the Kubernetes manifests probe and serve', () => {
    const exposed = ops(runtime, 'EXPOSE')
      .flatMap((e) => e.split(/\s+/))
      .map(Number)
      .sort()
    expect(exposed).toEqual(Object.values(k8sPorts(deployment)).sort())
  })
})

describe('inference image', () => {
  const { args, stages } = parseDockerfile(read('services/inference/Dockerfile'))
  const runtime = stages.at(-1)!
  const build = stages.find((s) => s.name === 'build')!
  const buildRuns = ops(build, 'RUN').join('\n')

  it('runs on a CUDA runtime whose major version onnxruntime-node ships a provider for', () => {
    const base = expand(runtime.from, args)
    expect(ops(build, 'ARG')).toContain('ORT_CUDA=cuda12') // the default image is the GPU one
    const m = /^nvidia\/cuda:(\d+)\.[\d.]+-cudnn-runtime-/.exec(base)
    expect(m, base).not.toBeNull()
    // The provider flavours onnxruntime-node's install script knows for linux/x64 (e.g. cuda12).
    const req = createRequire(join(ROOT, 'services/inference/package.json'))
    const ortDir = dirname(req.resolve('onnxruntime-node/package.json'))
    const meta = req(join(ortDir, 'script/install-metadata.js')) as {
      requirements: Record<string, string[]>
    }
    expect(meta.requirements['linux/x64']).toContain(`cuda${m![1]}`)
    expect(buildRuns).toContain(`ONNXRUNTIME_NODE_INSTALL=cuda${m![1]} node script/install.js`)
    expect(buildRuns).toMatch(/test -f bin\/napi-v6\/linux\/x64\/libonnxruntime_providers_cuda\.so/)
  })

  it('offers the npm-only CUDA 13 route (ORT_CUDA=npm-cuda13): onnxruntime 1.29.0 and its provider from npm packages only', () => {
    expect(buildRuns).toContain('npm-cuda13)')
    expect(buildRuns).toContain(
      'npm pack --silent onnxruntime-node@1.29.0 onnxruntime-common@1.29.0 com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9',
    )
    expect(buildRuns).toContain('grep -q \'"version": "1.29.0"\' package.json')
    // Any other value stops the build instead of producing an image without a provider.
    expect(buildRuns).toMatch(
      /\*\) echo "ORT_CUDA must be cuda12, npm-cuda13 or none \(got \$ORT_CUDA\)" >&2; exit 1 ;;/,
    )
  })

  it('builds the models in the image and points MODELS_DIR at them; ffmpeg and Node in the runtime; ORT_EP=cuda', () => {
    expect(buildRuns).toContain('node --import tsx ../../models/src/cli/build.ts') // pnpm models
    const env = envOf(runtime)
    expect(env.ORT_EP).toBe('${ORT_EP}')
    expect(ops(runtime, 'ARG')).toContain('ORT_EP=cuda')
    expect(ops(runtime, 'COPY')).toContain(`--from=build /src/models/dist ${env.MODELS_DIR}`)
    const runtimeRuns = ops(runtime, 'RUN').join('\n')
    expect(runtimeRuns).toMatch(/apt-get install[^\n]*\bffmpeg\b/)
    expect(ops(runtime, 'COPY').some((c) => c.includes('/usr/local/bin/node'))).toBe(true)
    // The same health port and work dir as the manifests.
    const cm = read('deploy/k8s/base/kustomization.yaml')
    expect(cm).toContain(`HEALTH_PORT=${env.HEALTH_PORT}`)
    expect(cm).toContain(`TAILOR_WORK_DIR=${env.TAILOR_WORK_DIR}`)
    expect(cm).toContain(`MODELS_DIR=${env.MODELS_DIR}`)
  })

  it('keeps onnxruntime binaries for linux/x64 only and drops the TensorRT provider unless asked for', () => {
    expect(buildRuns).toContain(`! -path '*/linux/x64'`)
    expect(buildRuns).toContain('rm -rf "$ORT/bin/napi-v6/darwin" "$ORT/bin/napi-v6/win32"')
    expect(ops(build, 'ARG')).toContain('ORT_TENSORRT=0')
    expect(buildRuns).toContain(
      'if [ "$ORT_TENSORRT" != "1" ]; then rm -f bin/napi-v6/linux/x64/libonnxruntime_providers_tensorrt.so; fi',
    )
  })

  it("carries the models' licences: their origins, the GPL-3.0 of rvm.onnx, the MIT licence of their npm package", () => {
    for (const f of [
      '/out/licenses/MODELS.md',
      '/out/licenses/GPL-3.0.txt',
      '/out/licenses/human-models-MIT.txt',
    ]) {
      expect(buildRuns).toContain(f)
    }
    expect(read('models/licenses/GPL-3.0.txt')).toContain('GNU GENERAL PUBLIC LICENSE')
  })
})

describe('.dockerignore', () => {
  it('keeps host dependencies and built artefacts out of the build context', () => {
    const lines = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
    for (const p of ['**/node_modules', 'models/dist', 'playground/dist', '.git']) {
      expect(lines).toContain(p)
    }
  })
})
