import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CODES } from '@tailor/proto'
import { createApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { openFileJobStore } from '../jobs/job-store-files.ts'
import type { JobStore } from '../jobs/job-store.ts'
import { createLogger } from '../logger.ts'
import type { ResultReader } from '../results/result-reader.ts'
import { ERROR_CODE_DOCS } from './error-codes.ts'
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document.ts'

const KEY = 'test-key-0123456789-abcdefghijkl'
// A high request budget: this file sends a few POSTs in a row and is not about rate limits.
const config = loadConfig({
  API_KEYS: KEY,
  RESULT_URL_SECRET: 'x'.repeat(32),
  PUBLIC_BASE_URL: 'http://tailor.test',
  DEFAULT_RATE_LIMIT_PER_S: '1000',
})
const results: ResultReader = { size: async () => null, open: async () => Readable.from([]) }
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

let dir: string
let jobs: JobStore
let app: ReturnType<typeof createApp>
let doc: OpenApiDocument

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tailor-openapi-'))
  jobs = await openFileJobStore(dir)
  app = createApp({
    config,
    logger: createLogger('silent'),
    jobs,
    results,
    publisher: { publish: async () => undefined },
    cancel: { cancel: () => undefined },
    health: () => ({ ok: true }),
    // A small fake of our UploadStore port: counts the bytes, keeps nothing.
    uploads: {
      put: async (meta, body) => {
        let bytes = 0
        for await (const chunk of body) bytes += chunk.byteLength
        return { ...meta, bytes }
      },
      info: async () => null,
      usage: async () => ({ count: 0, bytes: 0, firstExpiresAt: null }),
      remove: async () => undefined,
      close: async () => undefined,
    },
  })
  doc = (await (await app.request('/openapi.json')).json()) as OpenApiDocument
})
afterAll(async () => {
  await jobs?.close()
  await rm(dir, { recursive: true, force: true })
})

/** `/v1/try-on/job/{job_id}` → a regexp matching Hono's `/v1/try-on/job/:id` and `/results/*` forms alike. */
const templateOf = (path: string): string =>
  path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z0-9_]+/g, '{}')
/** The routes the app registered (middleware excluded), as `METHOD path` with Hono's `/*` kept. */
function appRoutes(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>()
  for (const r of app.routes) {
    if (r.method === 'ALL') continue // middleware (use) entries
    seen.set(`${r.method} ${r.path}`, { method: r.method.toLowerCase(), path: r.path })
  }
  return [...seen.values()]
}
/** Does the document path `docPath` cover the Hono route path `routePath`? (`*` spans one or more segments.) */
function covers(docPath: string, routePath: string): boolean {
  const rx = new RegExp(
    `^${templateOf(routePath)
      .split('*')
      .map((p) => p.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\{\}/g, '[^/]+'))
      .join('.+')}$`,
  )
  return rx.test(templateOf(docPath).replace(/\{\}/g, 'x'))
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document whose $refs all resolve', async () => {
    const v = new Validator()
    const res = await v.validate(structuredClone(doc))
    expect(res.errors ?? [], JSON.stringify(res.errors, null, 2)).toEqual([])
    expect(res.valid).toBe(true)
    expect(v.version).toBe('3.1')
    expect(() => v.resolveRefs()).not.toThrow()
    expect(doc.openapi).toBe('3.1.0')
  })

  it('the validator does reject a broken document (so the check above can fail)', async () => {
    const broken = structuredClone(doc) as Record<string, unknown> & {
      paths: Record<string, Record<string, Record<string, unknown>>>
    }
    broken.paths['/healthz']!.get!.responses = { '200': { content: {} } } // a response without its required description
    const res = await new Validator().validate(broken)
    expect(res.valid).toBe(false)
  })

  it('describes every route registered on the app, and the app serves every path it describes', () => {
    const routes = appRoutes()
    expect(routes.length).toBeGreaterThan(10)
    const described = Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m] !== undefined).map((method) => ({ method, path })),
    )
    const missing = routes.filter(
      (r) => !described.some((d) => d.method === r.method && covers(d.path, r.path)),
    )
    expect(missing, 'routes missing from openapi-document.ts').toEqual([])
    // HEAD is served by every GET route (Hono answers HEAD with the GET handler).
    const unserved = described.filter(
      (d) =>
        !routes.some(
          (r) =>
            (r.method === d.method || (d.method === 'head' && r.method === 'get')) &&
            covers(d.path, r.path),
        ),
    )
    expect(unserved, 'documented operations no route serves').toEqual([])
  })

  it('gives every operation an id, a summary, a tag and documented responses', () => {
    const ids = new Set<string>()
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        const op = item[m]
        if (op === undefined) continue
        expect(op.operationId, `${m} ${path}`).toMatch(/^[a-zA-Z]+$/)
        expect(ids.has(op.operationId), `duplicate ${op.operationId}`).toBe(false)
        ids.add(op.operationId)
        expect(op.summary.length, `${m} ${path}`).toBeGreaterThan(3)
        expect(op.tags.length).toBe(1)
        expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      }
    }
  })

  it('requires X-API-KEY (apiKey in header) on every /v1 operation and only where the app asks for it', () => {
    const schemes = (doc.components as { securitySchemes: Record<string, unknown> }).securitySchemes
    expect(schemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-KEY' }),
    })
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        const op = item[m] as
          { security?: unknown[]; responses: Record<string, unknown> } | undefined
        if (op === undefined) continue
        const secured = (op.security ?? []).length > 0
        expect(secured, `${m} ${path}`).toBe(
          path.startsWith('/v1/') || path.startsWith('/playground/samples'),
        )
        if (secured) expect(Object.keys(op.responses), `${m} ${path}`).toContain('401')
      }
    }
  })

  it('describes every error code and every field of every schema', () => {
    expect(
      ERROR_CODES.filter((c) => ERROR_CODE_DOCS[c] === undefined),
      'add a sentence to openapi/error-codes.ts',
    ).toEqual([])
    const schemas = (
      doc.components as {
        schemas: Record<
          string,
          {
            description?: string
            properties?: Record<string, { description?: string }>
            enum?: string[]
          }
        >
      }
    ).schemas
    expect(schemas.ErrorCode?.enum).toEqual(ERROR_CODES)
    for (const [name, s] of Object.entries(schemas)) {
      expect(s.description, name).toBeTruthy()
      for (const [field, f] of Object.entries(s.properties ?? {})) {
        expect(f.description, `${name}.${field}`).toBeTruthy()
      }
    }
  })

  it("matches what the app answers (bodies checked against the document's own schemas)", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    ajv.addSchema({
      $id: 'doc',
      components: (doc as unknown as { components: unknown }).components,
    } as object)
    const check = (name: string, body: unknown): void => {
      const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!
      expect(validate(body), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
    const post = (path: string, body: unknown) =>
      app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify(body),
      })
    const accepted = await post('/v1/video/remove-background', {
      video_url: 'https://example.com/v.mp4',
    })
    expect(accepted.status).toBe(202)
    const { job_id } = (await accepted.json()) as { job_id: string }
    check('JobAccepted', { job_id })
    // Headers of ours that an answer carries are documented for it.
    const documentedHeaders = (path: string, method: 'get' | 'post', status: string): string[] =>
      Object.keys(
        (
          doc.paths[path]?.[method]?.responses[status] as
            { headers?: Record<string, unknown> } | undefined
        )?.headers ?? {},
      ).map((h) => h.toLowerCase())
    const ours = (r: Response): string[] =>
      [...r.headers.keys()].filter((h) =>
        /^(ratelimit-|retry-after|idempotent-|deprecation)/i.test(h),
      )
    expect(ours(accepted)).toEqual(
      expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']),
    )
    for (const h of ours(accepted)) {
      expect(documentedHeaders('/v1/video/remove-background', 'post', '202')).toContain(h)
    }
    const deprecated = await post('/v1/try-on', {
      person_image_url: 'https://example.com/p.jpg',
      garment_image_url: 'https://example.com/g.jpg',
      garment_mode: 'upper',
      wait_for_result: 'false',
    })
    expect(deprecated.headers.get('deprecation')).not.toBeNull()
    for (const h of ours(deprecated)) {
      expect(documentedHeaders('/v1/try-on', 'post', '202')).toContain(h)
    }
    const status = await app.request(`/v1/video/remove-background/job/${job_id}`, {
      headers: { 'x-api-key': KEY },
    })
    check('JobStatus', await status.json())
    const cancel = await app.request(`/v1/video/remove-background/job/${job_id}/cancel`, {
      method: 'POST',
      headers: { 'x-api-key': KEY },
    })
    expect(cancel.status).toBe(200)
    check('CancelResult', await cancel.json())
    const failed = await app.request(`/v1/video/remove-background/job/${job_id}`, {
      headers: { 'x-api-key': KEY },
    })
    check('JobStatus', await failed.json())
    const tryOn = await post('/v1/try-on', {
      person_image_url: 'https://example.com/p.jpg',
      garment_image_url: 'https://example.com/g.jpg',
      wait_for_result: 'false',
    })
    expect(tryOn.status).toBe(202)
    check('JobAccepted', await tryOn.json())
    for (const r of [
      await app.request('/v1/try-on/job/x'),
      await post('/v1/video/remove-background', {}),
      await post('/v1/video/remove-background', {
        video_url: 'https://example.com/v.mp4',
        output_format: 'avi',
      }),
      await app.request('/results/remove-background/x.mp4?expires=1&sig=x'),
      await app.request('/nowhere'),
    ]) {
      expect(r.status).toBeGreaterThanOrEqual(400)
      check('Error', await r.json())
    }
    const upload = await app.request('/v1/uploads', {
      method: 'POST',
      headers: { 'content-type': 'image/jpeg', 'x-api-key': KEY },
      body: new Uint8Array([0xff, 0xd8, 0xff]),
    })
    expect(upload.status, await upload.clone().text()).toBe(201)
    check('UploadResult', await upload.json())
    check('Health', await (await app.request('/healthz')).json())
    check(
      'SampleList',
      await (await app.request('/playground/samples', { headers: { 'x-api-key': KEY } })).json(),
    )
  })

  it('takes the server from PUBLIC_BASE_URL, else is relative to where it is served', () => {
    expect(doc.servers).toEqual([{ url: 'http://tailor.test', description: 'PUBLIC_BASE_URL' }])
    expect(buildOpenApiDocument().servers).toEqual([{ url: '/', description: 'This server' }])
  })
})

describe('/docs', () => {
  it('renders every operation, schema and error code in one self-contained page', async () => {
    const r = await app.request('/docs')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toMatch(/^text\/html/)
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await r.text()
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) {
        if (item[m] !== undefined) {
          expect(html, `${m} ${path}`).toContain(`id="op-${item[m].operationId}"`)
        }
      }
    }
    for (const code of ERROR_CODES) expect(html).toContain(`id="code-${code}"`)
    for (const name of ['TryOnRequest', 'RemoveBackgroundRequest', 'JobStatus', 'Error']) {
      expect(html).toContain(`id="schema-${name}"`)
    }
    expect(html).toContain('X-API-KEY')
    // Nothing loaded from elsewhere: no script, no external style sheet, image or font.
    expect(html.replace('<link rel="icon" href="data:,">', '')).not.toMatch(
      /<script|<link|<img|@import|url\(/i,
    )
    // Descriptions are escaped, then their Markdown subset rendered.
    expect(html).toContain('<code>tailor://uploads/&lt;id&gt;</code>')
  })
})
