/**
 * Static validation of the Kubernetes manifests (no cluster here): every overlay renders with
 * `kubectl kustomize`, every rendered document validates against the Kubernetes OpenAPI schemas
 * (kubernetes-models: ajv validators generated from the API server's OpenAPI document) or KEDA's
 * CRD schema (@kubernetes-models/keda), and the project's own rules hold.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { loadConfig as loadGatewayConfig } from '../../services/gateway/src/config.ts'
import { loadConfig as loadInferenceConfig } from '../../services/inference/src/config.ts'
import { durableFor, JOB_KINDS, STREAM, type JobKind } from '../../proto/src/jobs.ts'

const K8S_DIR = resolve(import.meta.dirname, '../k8s')
const OVERLAYS = readdirSync(join(K8S_DIR, 'overlays')).sort()
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']
/** Secrets the production overlay expects the operator to create (docs/deployment.md). */
const OPERATOR_SECRETS = new Set([
  'tailor-gateway-secrets',
  'tailor-job-events',
  'tailor-nats-auth',
])
/** Stand-ins of the right shape for Secret values the operator creates (production renders none). */
const STAND_INS: Record<string, string> = {
  RESULT_URL_SECRET: 'x'.repeat(32),
  API_KEY_SHA256: 'a'.repeat(64),
  JOB_EVENTS_TOKEN: 't'.repeat(32),
  NATS_PASSWORD: 'p'.repeat(24),
}

/** Rendered YAML is free-form: the schemas above check it; the rules below read it. */
type Obj = Record<string, any>

/** Model classes by apiVersion: each validates with the schema of its kind. */
const MODEL_MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
  'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
  'keda.sh/v1alpha1': () => import('@kubernetes-models/keda/keda.sh/v1alpha1'),
}

function render(overlay: string): Obj[] {
  let out: string
  try {
    out = execFileSync('kubectl', ['kustomize', join(K8S_DIR, 'overlays', overlay)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string }
    if (e.code === 'ENOENT') {
      throw new Error(
        "kubectl not found: run scripts/setup.sh (installs Debian's kubernetes-client)",
        { cause: err },
      )
    }
    throw new Error(`kubectl kustomize ${overlay} failed:\n${e.stderr ?? ''}`, { cause: err })
  }
  const docs = parseAllDocuments(out)
  for (const d of docs) {
    if (d.errors.length > 0) {
      throw new Error(`${overlay}: ${d.errors.map((x) => x.message).join('; ')}`)
    }
  }
  return docs.map((d) => d.toJS() as Obj).filter((o) => o !== null)
}

async function validate(o: Obj): Promise<string | null> {
  const load = MODEL_MODULES[o.apiVersion as string]
  if (load === undefined) {
    return `${o.kind}/${o.metadata?.name}: no schema for apiVersion ${o.apiVersion}`
  }
  const Model = (await load())[o.kind as string] as
    (new (d: unknown) => { validate(): void }) | undefined
  if (Model === undefined) {
    return `${o.kind}/${o.metadata?.name}: no schema for ${o.apiVersion} ${o.kind}`
  }
  // The API server decodes Secret data as Go does, ignoring line breaks (kustomize v5 folds long values).
  const doc =
    o.kind === 'Secret' && o.data
      ? {
          ...o,
          data: Object.fromEntries(
            Object.entries(o.data as Record<string, string>).map(([k, v]) => [
              k,
              v.replace(/\s+/g, ''),
            ]),
          ),
        }
      : o
  try {
    new Model(doc).validate()
    return null
  } catch (err) {
    return `${o.kind}/${o.metadata?.name}: ${(err as Error).message}`
  }
}

const byKind = (docs: Obj[], kind: string): Obj[] => docs.filter((d) => d.kind === kind)
const named = (docs: Obj[], kind: string, name: string): Obj => {
  const hit = docs.find((d) => d.kind === kind && d.metadata?.name === name)
  if (hit === undefined) throw new Error(`no ${kind}/${name}`)
  return hit
}
const podSpecs = (docs: Obj[]): { owner: string; spec: Obj }[] =>
  docs
    .filter((d) => ['Deployment', 'StatefulSet'].includes(d.kind))
    .map((d) => ({ owner: `${d.kind}/${d.metadata.name}`, spec: d.spec.template.spec }))
const containersOf = (spec: Obj): Obj[] => [
  ...(spec.containers ?? []),
  ...(spec.initContainers ?? []),
]

/** The environment a container sees: its ConfigMap(s), literal env and (when rendered) Secret values. */
function containerEnv(docs: Obj[], c: Obj): Record<string, string> {
  const env: Record<string, string> = {}
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named(docs, 'ConfigMap', from.configMapRef.name).data)
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = String(e.value)
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef
      const secret = docs.find((d) => d.kind === 'Secret' && d.metadata.name === ref.name)
      if (secret !== undefined && secret.data[ref.key] !== undefined) {
        env[e.name] = Buffer.from(String(secret.data[ref.key]), 'base64').toString('utf8')
      } else if (secret === undefined && STAND_INS[e.name] !== undefined) {
        env[e.name] = STAND_INS[e.name]!
      }
    } else if (e.valueFrom?.fieldRef) env[e.name] = `field:${e.valueFrom.fieldRef.fieldPath}`
  }
  return env
}
/** Names our config schemas declare (an env name nobody reads is a typo). */
const declaredEnv = (file: string): Set<string> =>
  new Set(
    [
      ...readFileSync(resolve(import.meta.dirname, file), 'utf8').matchAll(
        /^\s+([A-Z][A-Z0-9_]+): \S/gm,
      ),
    ].map((m) => m[1]!),
  )
const GATEWAY_ENV = declaredEnv('../../services/gateway/src/config.ts')
const INFERENCE_ENV = declaredEnv('../../services/inference/src/config.ts')

describe.each(OVERLAYS)('deploy/k8s/overlays/%s', (overlay) => {
  const docs = render(overlay)
  const gatewayDeploy = named(docs, 'Deployment', 'tailor-gateway')
  /** One inference Deployment per lane (job kind). */
  const LANES = [
    { lane: 'video', kind: 'remove-background' as JobKind },
    { lane: 'try-on', kind: 'try-on' as JobKind },
  ]
  const inferenceDeploys = LANES.map((l) => ({
    ...l,
    deploy: named(docs, 'Deployment', `tailor-inference-${l.lane}`),
  }))
  const inferenceDeploy = inferenceDeploys[0]!.deploy
  const gatewayContainer = gatewayDeploy.spec.template.spec.containers[0] as Obj
  const inferenceContainer = inferenceDeploy.spec.template.spec.containers[0] as Obj
  const isInference = (owner: string): boolean => owner.startsWith('Deployment/tailor-inference-')

  it('renders the whole system', () => {
    const kinds = docs.map((d) => `${d.kind}/${d.metadata.name}`)
    for (const k of [
      'Namespace/tailor',
      'StatefulSet/nats',
      'Service/nats',
      'Service/nats-headless',
      'Deployment/tailor-gateway',
      'Service/tailor-gateway',
      'HorizontalPodAutoscaler/tailor-gateway',
      'PodDisruptionBudget/tailor-gateway',
      'Deployment/tailor-inference-video',
      'Deployment/tailor-inference-try-on',
      'ScaledObject/tailor-inference-video',
      'ScaledObject/tailor-inference-try-on',
      'PodDisruptionBudget/tailor-inference-video',
      'PodDisruptionBudget/tailor-inference-try-on',
      'NetworkPolicy/default-deny',
      'NetworkPolicy/tailor-inference',
    ]) {
      expect(kinds).toContain(k)
    }
    for (const d of docs) {
      if (d.kind !== 'Namespace') {
        expect(d.metadata.namespace, `${d.kind}/${d.metadata.name}`).toBe('tailor')
      }
    }
  })

  it('every document passes its Kubernetes OpenAPI (or KEDA CRD) schema', async () => {
    const problems = (await Promise.all(docs.map(validate))).filter((p) => p !== null)
    expect(problems).toEqual([])
  })

  it('the validator is real: it rejects a broken manifest', async () => {
    const broken = structuredClone(gatewayDeploy)
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http'
    expect(await validate(broken)).toMatch(/containerPort must be integer/)
    const brokenScaler = structuredClone(named(docs, 'ScaledObject', 'tailor-inference-video'))
    delete brokenScaler.spec.scaleTargetRef
    expect(await validate(brokenScaler)).toMatch(/scaleTargetRef/)
  })

  it('every container has CPU and memory requests and limits', () => {
    for (const { owner, spec } of podSpecs(docs)) {
      for (const c of containersOf(spec)) {
        for (const k of ['cpu', 'memory']) {
          expect(c.resources?.requests?.[k], `${owner} ${c.name} requests.${k}`).toBeDefined()
          expect(c.resources?.limits?.[k], `${owner} ${c.name} limits.${k}`).toBeDefined()
        }
      }
    }
  })

  it('every pod runs as non-root, without privilege escalation, capabilities dropped, RuntimeDefault seccomp', () => {
    for (const { owner, spec } of podSpecs(docs)) {
      expect(spec.securityContext?.runAsNonRoot, owner).toBe(true)
      expect(spec.securityContext?.runAsUser, owner).toBeGreaterThan(0)
      expect(spec.securityContext?.seccompProfile?.type, owner).toBe('RuntimeDefault')
      for (const c of containersOf(spec)) {
        expect(c.securityContext?.allowPrivilegeEscalation, `${owner} ${c.name}`).toBe(false)
        expect(c.securityContext?.capabilities?.drop, `${owner} ${c.name}`).toContain('ALL')
        expect(c.securityContext?.runAsUser ?? 1, `${owner} ${c.name}`).not.toBe(0)
      }
    }
  })

  it('only inference asks for a GPU, with the toleration; no GFD-only node selector', () => {
    for (const { owner, spec } of podSpecs(docs)) {
      for (const c of containersOf(spec)) {
        if (isInference(owner)) continue
        expect(JSON.stringify(c.resources), `${owner} ${c.name}`).not.toContain('nvidia.com/gpu')
      }
    }
    for (const { lane, deploy } of inferenceDeploys) {
      const c = deploy.spec.template.spec.containers[0] as Obj
      const env = containerEnv(docs, c)
      const spec = deploy.spec.template.spec
      // nvidia.com/gpu.present is a GPU Feature Discovery label: with the device plugin alone no node has it.
      expect(spec.nodeSelector, lane).toBeUndefined()
      if (env.ORT_EP === 'cuda') {
        expect(c.resources.requests['nvidia.com/gpu'], lane).toBe(1)
        expect(c.resources.limits['nvidia.com/gpu'], lane).toBe(1)
        expect(spec.tolerations, lane).toContainEqual({
          key: 'nvidia.com/gpu',
          operator: 'Exists',
          effect: 'NoSchedule',
        })
      } else {
        expect(env.ORT_EP, lane).toBe('cpu')
        expect(JSON.stringify(deploy), lane).not.toContain('nvidia.com/gpu')
      }
    }
  })

  it('inference rolls out without surge (a surge pod stalls on a full GPU pool), one pod at a time', () => {
    for (const { lane, deploy } of inferenceDeploys) {
      expect(deploy.spec.strategy.rollingUpdate, lane).toEqual({ maxSurge: 0, maxUnavailable: 1 })
    }
  })

  it('probes: readiness on /readyz, liveness and startup on /healthz, on ports the containers expose', () => {
    const gwEnv = containerEnv(docs, gatewayContainer)
    const cases: [Obj, number][] = [
      [gatewayContainer, Number(gwEnv.PORT)],
      ...inferenceDeploys.map(({ deploy }): [Obj, number] => {
        const c = deploy.spec.template.spec.containers[0] as Obj
        return [c, Number(containerEnv(docs, c).HEALTH_PORT)]
      }),
    ]
    for (const [c, port] of cases) {
      const portOf = (p: string | number): number =>
        typeof p === 'number' ? p : (c.ports as Obj[]).find((x) => x.name === p)?.containerPort
      expect(c.readinessProbe.httpGet.path, c.name).toBe('/readyz')
      expect(c.livenessProbe.httpGet.path, c.name).toBe('/healthz')
      expect(c.startupProbe.httpGet.path, c.name).toBe('/healthz')
      for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        expect(portOf(p.httpGet.port), c.name).toBe(port)
      }
    }
    // Model load and warm-up may take minutes on a cold GPU node: the startup probe allows ≥ 5 min.
    for (const { deploy } of inferenceDeploys) {
      const sp = deploy.spec.template.spec.containers[0].startupProbe
      expect(sp.periodSeconds * sp.failureThreshold).toBeGreaterThanOrEqual(300)
    }
  })

  it("each service's environment passes its own config schema and names only variables it reads", () => {
    const gwEnv = containerEnv(docs, gatewayContainer)
    const infEnv = containerEnv(docs, inferenceContainer)
    for (const k of Object.keys(gwEnv)) expect(GATEWAY_ENV.has(k), `gateway env ${k}`).toBe(true)
    for (const { lane, kind, deploy } of inferenceDeploys) {
      const env = containerEnv(docs, deploy.spec.template.spec.containers[0])
      for (const k of Object.keys(env)) {
        expect(INFERENCE_ENV.has(k), `inference (${lane}) env ${k}`).toBe(true)
      }
      expect(loadInferenceConfig({ ...env, WORKER_ID: 'w' }).JOB_KINDS, lane).toEqual([kind])
    }
    const secrets = gatewayContainer.env
      .filter((e: Obj) => e.valueFrom?.secretKeyRef)
      .map((e: Obj) => ({ env: e.name, ...e.valueFrom.secretKeyRef }))
    expect(secrets.map((s: Obj) => s.env).sort()).toEqual([
      'API_KEY_SHA256',
      'JOB_EVENTS_TOKEN',
      'NATS_PASSWORD',
      'RESULT_URL_SECRET',
      'WEBHOOK_SECRET',
    ])
    expect(secrets.find((s: Obj) => s.env === 'WEBHOOK_SECRET')).toMatchObject({
      name: 'tailor-gateway-secrets',
      optional: true,
    }) // webhooks are optional
    // The job-events secret: the same Secret key in both services (every lane).
    const ref = (c: Obj, name: string): Obj | undefined =>
      (c.env as Obj[]).find((e) => e.name === name)?.valueFrom?.secretKeyRef
    for (const { lane, deploy } of inferenceDeploys) {
      expect(ref(deploy.spec.template.spec.containers[0], 'JOB_EVENTS_TOKEN'), lane).toEqual(
        ref(gatewayContainer, 'JOB_EVENTS_TOKEN'),
      )
    }
    const everySecretRef = [...podSpecs(docs)]
      .flatMap(({ spec }) => containersOf(spec).flatMap((c) => (c.env ?? []) as Obj[]))
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => e.valueFrom.secretKeyRef)
    for (const s of everySecretRef) {
      const rendered = docs.some((d) => d.kind === 'Secret' && d.metadata.name === s.name)
      expect(rendered || OPERATOR_SECRETS.has(s.name), `Secret ${s.name}`).toBe(true)
    }
    // Secrets created by the operator: stand-ins of the right shape (containerEnv), to check the rest of the config.
    const gw = loadGatewayConfig(gwEnv)
    const inf = loadInferenceConfig({ ...infEnv, WORKER_ID: 'w' })
    expect(inf.ORT_EP).toBeDefined()
    // Addresses match the Services.
    const svcPort = (svc: string, name: string): number =>
      (named(docs, 'Service', svc).spec.ports as Obj[]).find((p) => p.name === name)?.port
    expect(gw.natsUrl).toBe(`nats://nats:${svcPort('nats', 'client')}`)
    expect(inf.NATS_URL).toBe(gw.natsUrl)
    expect(inf.GATEWAY_GRPC_ADDR).toBe(`tailor-gateway:${svcPort('tailor-gateway', 'grpc-events')}`)
    expect(svcPort('tailor-gateway', 'http')).toBe(gw.port)
    const containerPort = (name: string): number =>
      (gatewayContainer.ports as Obj[]).find((p) => p.name === name)?.containerPort
    expect(containerPort('http')).toBe(gw.port)
    expect(containerPort('grpc-events')).toBe(gw.grpcPort)
    expect(containerPort('grpc-api')).toBe(Number(gwEnv.API_GRPC_PORT))
    expect(svcPort('tailor-gateway', 'grpc-api')).toBe(Number(gwEnv.API_GRPC_PORT))
    // The inference grace period covers its shutdown timeout (jobs finish or are released).
    for (const { deploy } of inferenceDeploys) {
      expect(deploy.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
        inf.SHUTDOWN_TIMEOUT_MS,
      )
    }
  })

  it('NATS: JetStream on file storage, three servers, a volume each; users with passwords from a Secret', () => {
    const sts = named(docs, 'StatefulSet', 'nats')
    expect(sts.spec.replicas).toBe(3)
    expect(sts.spec.serviceName).toBe('nats-headless')
    const cmName = (sts.spec.template.spec.volumes as Obj[]).find((v) => v.name === 'config')
      ?.configMap?.name as string
    const files = named(docs, 'ConfigMap', cmName).data as Record<string, string>
    const conf = files['nats.conf']!
    expect(conf).toMatch(/jetstream\s*\{[^}]*store_dir:\s*\/data/)
    expect([...conf.matchAll(/nats:\/\/nats-\d\.nats-headless:6222/g)]).toHaveLength(3)
    expect(conf).toContain('include ./accounts.conf')
    expect(conf).toContain('include ./tls.conf')
    const mount = (sts.spec.template.spec.containers[0].volumeMounts as Obj[]).find(
      (m) => m.mountPath === '/data',
    )
    expect(mount?.name).toBe('data')
    expect(sts.spec.volumeClaimTemplates[0].metadata.name).toBe('data')
    expect(named(docs, 'PodDisruptionBudget', 'nats').spec.maxUnavailable).toBe(1)
    // Every password variable accounts.conf names comes from the Secret tailor-nats-auth.
    const accounts = files['accounts.conf']!
    const vars = [...accounts.matchAll(/password:\s*\$(\w+)/g)].map((m) => m[1]!)
    expect(vars.sort()).toEqual(['NATS_GATEWAY_PASSWORD', 'NATS_INFERENCE_PASSWORD'])
    const natsEnv = sts.spec.template.spec.containers[0].env as Obj[]
    for (const v of vars) {
      expect(natsEnv.find((e) => e.name === v)?.valueFrom?.secretKeyRef?.name, v).toBe(
        'tailor-nats-auth',
      )
    }
    // Each service logs in as its own user, with the password the server expects for it.
    const passwordKey = (c: Obj): string =>
      (c.env as Obj[]).find((e) => e.name === 'NATS_PASSWORD')?.valueFrom?.secretKeyRef?.key
    const serverKey = (v: string): string =>
      natsEnv.find((e) => e.name === v)?.valueFrom?.secretKeyRef?.key
    expect(containerEnv(docs, gatewayContainer).NATS_USER).toBe('gateway')
    expect(passwordKey(gatewayContainer)).toBe(serverKey('NATS_GATEWAY_PASSWORD'))
    for (const { deploy } of inferenceDeploys) {
      const c = deploy.spec.template.spec.containers[0] as Obj
      expect(containerEnv(docs, c).NATS_USER).toBe('inference')
      expect(passwordKey(c)).toBe(serverKey('NATS_INFERENCE_PASSWORD'))
    }
    expect(accounts).toMatch(/user:\s*gateway\b/)
    expect(accounts).toMatch(/user:\s*inference\b/)
    // KEDA reads the lanes in Tailor's account.
    const account = /accounts\s*\{\s*(\w+)\s*\{/.exec(accounts)?.[1]
    for (const so of byKind(docs, 'ScaledObject')) {
      expect(so.spec.triggers[0].metadata.account).toBe(account)
    }
  })

  it('gateway: HPA and PDB target it; KEDA scales each inference lane on its own consumer, jobs in flight per worker', () => {
    const hpa = named(docs, 'HorizontalPodAutoscaler', 'tailor-gateway')
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'tailor-gateway',
    })
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2)
    expect(gatewayDeploy.spec.replicas).toBeUndefined() // the HPA owns it
    for (const pdb of byKind(docs, 'PodDisruptionBudget')) {
      const sel = pdb.spec.selector.matchLabels as Record<string, string>
      const targets = docs.filter(
        (d) =>
          ['Deployment', 'StatefulSet'].includes(d.kind) &&
          Object.entries(sel).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      )
      expect(targets, `PDB ${pdb.metadata.name}`).toHaveLength(1)
    }
    const monitor = (named(docs, 'Service', 'nats-headless').spec.ports as Obj[]).find(
      (p) => p.name === 'monitor',
    )?.port
    expect(byKind(docs, 'ScaledObject')).toHaveLength(JOB_KINDS.length)
    for (const { lane, kind, deploy } of inferenceDeploys) {
      expect(deploy.spec.replicas, lane).toBeUndefined() // KEDA owns it
      const env = containerEnv(docs, deploy.spec.template.spec.containers[0])
      const cfg = loadInferenceConfig({ ...env, WORKER_ID: 'w' })
      const so = named(docs, 'ScaledObject', `tailor-inference-${lane}`)
      expect(so.spec.scaleTargetRef.name).toBe(deploy.metadata.name)
      const trigger = (so.spec.triggers as Obj[]).find((t) => t.type === 'nats-jetstream')
      expect(trigger?.metadata, lane).toMatchObject({ stream: STREAM, consumer: durableFor(kind) })
      expect(trigger?.metadata.natsServerMonitoringEndpoint).toBe(
        `nats-headless.tailor.svc.cluster.local:${monitor}`,
      )
      // KEDA's lag counts waiting and running jobs: the threshold is jobs in flight per worker.
      expect(Number(trigger?.metadata.lagThreshold), lane).toBe(cfg.CONCURRENCY)
      // The lane's consumer hands out enough jobs to keep every worker KEDA may start busy.
      expect(cfg.JOBS_MAX_ACK_PENDING, lane).toBeGreaterThanOrEqual(
        so.spec.maxReplicaCount * cfg.CONCURRENCY,
      )
    }
    const kedaTargets = new Set(
      byKind(docs, 'ScaledObject').map((so) => so.spec.scaleTargetRef.name),
    )
    expect(
      byKind(docs, 'HorizontalPodAutoscaler')
        .map((h) => h.spec.scaleTargetRef.name)
        .filter((n) => kedaTargets.has(n)),
    ).toEqual([]) // KEDA makes those
  })

  it('gateway /metrics on its own port (METRICS_PORT), reachable by the metrics scraper, not by the public rule', () => {
    const env = containerEnv(docs, gatewayContainer)
    const port = Number(env.METRICS_PORT)
    expect(port).toBeGreaterThan(0)
    expect(port).not.toBe(Number(env.PORT))
    expect((gatewayContainer.ports as Obj[]).find((p) => p.name === 'metrics')?.containerPort).toBe(
      port,
    )
    expect(gatewayDeploy.spec.template.metadata.annotations['prometheus.io/port']).toBe(
      String(port),
    )
    const ingress = named(docs, 'NetworkPolicy', 'tailor-gateway').spec.ingress as Obj[]
    const rule = ingress.find((r) => (r.ports as Obj[]).some((p) => p.port === port))
    expect(rule?.from).toEqual([
      { namespaceSelector: { matchLabels: { 'tailor.dev/metrics-scraper': 'true' } } },
    ])
    // The Service publishes no metrics port: nothing routes it out of the cluster.
    expect(
      (named(docs, 'Service', 'tailor-gateway').spec.ports as Obj[]).map((p) => p.port),
    ).not.toContain(port)
  })

  it('inference /metrics on its own port (METRICS_PORT) in both lanes, reachable by the metrics scraper; probes stay on HEALTH_PORT', () => {
    const rules = named(docs, 'NetworkPolicy', 'tailor-inference').spec.ingress as Obj[]
    for (const { lane, deploy } of inferenceDeploys) {
      const c = deploy.spec.template.spec.containers[0] as Obj
      const env = containerEnv(docs, c)
      const port = Number(env.METRICS_PORT)
      expect(port, lane).toBeGreaterThan(0)
      expect(port, lane).not.toBe(Number(env.HEALTH_PORT))
      expect((c.ports as Obj[]).find((p) => p.name === 'metrics')?.containerPort, lane).toBe(port)
      expect(deploy.spec.template.metadata.annotations['prometheus.io/port'], lane).toBe(
        String(port),
      )
      expect(
        rules.find((r) => (r.ports as Obj[]).some((p) => p.port === port))?.from,
        lane,
      ).toEqual([{ namespaceSelector: { matchLabels: { 'tailor.dev/metrics-scraper': 'true' } } }])
    }
  })

  it('NetworkPolicy: inference reaches the internet but no cluster-internal range; in the cluster only DNS, NATS and the gateway', () => {
    const np = named(docs, 'NetworkPolicy', 'tailor-inference')
    expect(np.spec.podSelector.matchLabels['app.kubernetes.io/name']).toBe('tailor-inference')
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress'])
    const egress = np.spec.egress as Obj[]
    const ipRules = egress.filter((r) => ((r.to ?? []) as Obj[]).some((t) => t.ipBlock))
    expect(ipRules).toHaveLength(1)
    const blocks = (ipRules[0]!.to as Obj[]).map((t) => t.ipBlock)
    expect(blocks).toHaveLength(1)
    expect(blocks[0].cidr).toBe('0.0.0.0/0')
    for (const r of PRIVATE_RANGES) expect(blocks[0].except).toContain(r)
    expect(ipRules[0]!.ports).toBeUndefined() // any port: input URLs may name one
    const allows = (sel: (t: Obj) => boolean, port: number, protocol = 'TCP'): boolean =>
      egress.some(
        (r) =>
          ((r.to ?? []) as Obj[]).some(sel) &&
          (r.ports as Obj[] | undefined)?.some(
            (p) => p.port === port && (p.protocol ?? 'TCP') === protocol,
          ),
      )
    const app = (name: string) => (t: Obj) =>
      t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === name &&
      t.namespaceSelector === undefined
    // DNS: port 53 to any destination, so NodeLocal DNSCache (a link-local address on the node)
    // answers too; the rule names no peer and no other port.
    const dnsRules = egress.filter((r) => r.to === undefined)
    expect(dnsRules).toHaveLength(1)
    expect((dnsRules[0]!.ports as Obj[]).map((p) => `${p.port}/${p.protocol}`).sort()).toEqual([
      '53/TCP',
      '53/UDP',
    ])
    expect(allows(app('nats'), 4222)).toBe(true)
    expect(allows(app('tailor-gateway'), 50051)).toBe(true)
    // Nothing else inside the cluster: every other non-ipBlock rule is NATS or the gateway.
    for (const r of egress.filter((x) => !ipRules.includes(x) && !dnsRules.includes(x))) {
      expect(
        (r.to as Obj[]).every((t) => app('nats')(t) || app('tailor-gateway')(t)),
        JSON.stringify(r),
      ).toBe(true)
    }
    for (const name of ['tailor-gateway', 'nats']) {
      const other = named(docs, 'NetworkPolicy', name).spec.egress as Obj[]
      expect(
        other.some((r) => r.to === undefined && (r.ports as Obj[]).every((p) => p.port === 53)),
        name,
      ).toBe(true)
    }
    // The namespace denies by default what no policy allows.
    const deny = named(docs, 'NetworkPolicy', 'default-deny')
    expect(deny.spec.policyTypes).toEqual(['Ingress', 'Egress'])
    expect(deny.spec.ingress ?? []).toEqual([])
    expect(deny.spec.egress ?? []).toEqual([])
  })
})

describe('overlays', () => {
  it('production asks for GPUs, requires CUDA and takes images from a registry; dev runs on the CPU', () => {
    expect(OVERLAYS).toEqual(['dev', 'production'])
    const prod = render('production')
    for (const lane of ['video', 'try-on']) {
      const inf = named(prod, 'Deployment', `tailor-inference-${lane}`).spec.template.spec
        .containers[0]
      expect(inf.resources.limits['nvidia.com/gpu']).toBe(1)
      expect(inf.image).toMatch(/^[\w.-]+\.[\w.-]+\/.+:.+$/)
      // No silent CPU on a GPU node: start-up fails unless every model loaded on CUDA.
      expect(inf.env).toContainEqual({ name: 'REQUIRE_EXECUTION_PROVIDER', value: 'cuda' })
    }
    expect(prod.some((d) => d.kind === 'Secret')).toBe(false) // never committed
    const dev = render('dev')
    expect(JSON.stringify(dev)).not.toContain('nvidia.com/gpu')
    // Production: each NATS server on its own node, required (the base only spreads them when it can).
    const natsAffinity = named(prod, 'StatefulSet', 'nats').spec.template.spec.affinity
      ?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution
    expect(natsAffinity).toEqual([
      {
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'nats' } },
      },
    ])
    expect(named(dev, 'StatefulSet', 'nats').spec.template.spec.affinity).toBeUndefined() // one-node dev clusters
  })

  it('examples: the Ingress validates, has TLS and routes no /metrics, /healthz or /readyz; the PodMonitor scrapes the named ports', async () => {
    const read = (f: string): Obj =>
      parseAllDocuments(readFileSync(join(K8S_DIR, 'examples', f), 'utf8'))[0]!.toJS() as Obj
    const ing = read('ingress.yaml')
    expect(await validate(ing)).toBeNull()
    expect(ing.spec.tls[0].hosts).toEqual(ing.spec.rules.map((r: Obj) => r.host))
    const paths = (ing.spec.rules as Obj[]).flatMap((r) => r.http.paths as Obj[])
    for (const p of paths) {
      expect(p.backend.service).toEqual({ name: 'tailor-gateway', port: { name: 'http' } })
      for (const internal of ['/metrics', '/healthz', '/readyz']) {
        const routed =
          p.pathType === 'Exact'
            ? p.path === internal
            : internal.startsWith(p.path === '/' ? '/' : p.path) && p.path !== '/'
        expect(routed, `${p.path} routes ${internal}`).toBe(false)
      }
    }
    const pm = read('podmonitor.yaml')
    expect(pm.kind).toBe('PodMonitor')
    const prod = render('production')
    const portNames = new Set(
      podSpecs(prod)
        .filter(({ owner }) => owner.includes('tailor-'))
        .flatMap(({ spec }) =>
          containersOf(spec).flatMap((c) => (c.ports ?? []).map((p: Obj) => p.name)),
        ),
    )
    for (const e of pm.spec.podMetricsEndpoints as Obj[]) {
      expect(portNames.has(e.port), e.port).toBe(true)
    }
  })
})
