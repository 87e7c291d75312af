/**
 * The OpenAPI 3.1 document of the HTTP surface, generated from the zod schemas the routes validate
 * with (requests) and the response schemas (response-schemas.ts) with `z.toJSONSchema` (JSON
 * Schema 2020-12, OpenAPI 3.1's own dialect). Served at /openapi.json and rendered at /docs.
 * openapi-document.test.ts validates it with an OpenAPI 3.1 validator and checks that every route
 * registered on the app is described here (and every path here is served).
 */
import { z } from 'zod'
import {
  ALPHA_FORMATS,
  CancelAccepted,
  ERROR_CODES,
  ErrorBody,
  ErrorCodeSchema,
  HTTP_STATUS,
  JobAccepted,
  JobStatusDocument,
  OUTPUT_FORMAT_SPECS,
  OUTPUT_FORMATS,
  RemoveBackgroundBody,
  TryOnBody,
  TryOnCompleted,
  UPLOAD_CONTENT_TYPES,
  type ErrorCode,
} from '@tailor/proto'
import { INVALID_API_KEY_MESSAGE } from '../middleware/api-key.ts'
import { ERROR_CODE_DOCS } from './error-codes.ts'
import {
  CreditsSchema,
  HealthSchema,
  ReadinessSchema,
  SampleListSchema,
  UploadResultSchema,
} from './response-schemas.ts'

/** A JSON value of the document (objects are plain records). */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: '3.1.0'
  paths: Record<string, Record<string, Operation>>
}
type Json = Record<string, unknown>
interface Operation extends Json {
  operationId: string
  summary: string
  tags: string[]
  responses: Record<string, Json>
}

export const API_KEY_HEADER = 'X-API-KEY'
const SCHEMA_REF = '#/components/schemas/'
const ref = (name: string): Json => ({ $ref: `${SCHEMA_REF}${name}` })

/** JSON Schema of one registry, cleaned for embedding (no $schema/$id, no safe-integer noise). */
function schemasOf(
  entries: Record<string, z.ZodType>,
  io: 'input' | 'output',
): Record<string, Json> {
  const registry = z.registry<{ id: string }>()
  for (const [id, schema] of Object.entries(entries)) registry.add(schema, { id })
  const out = z.toJSONSchema(registry, {
    io,
    uri: (id) => `${SCHEMA_REF}${id}`,
    unrepresentable: 'any',
  }).schemas
  return Object.fromEntries(Object.entries(out).map(([id, s]) => [id, clean(s) as Json]))
}

function clean(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clean)
  if (typeof v !== 'object' || v === null) return v
  const o: Json = {}
  for (const [k, x] of Object.entries(v)) {
    if (k === '$schema' || k === '$id') continue
    if (
      (k === 'maximum' && x === Number.MAX_SAFE_INTEGER) ||
      (k === 'minimum' && x === Number.MIN_SAFE_INTEGER)
    ) {
      continue
    }
    if (k === 'additionalProperties' && x === false) continue // answers may gain fields; clients must ignore unknown ones
    o[k] = clean(x)
  }
  return o
}

const json = (schema: Json, example?: unknown): Json => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
})

/** Error answers for `codes`, one response per HTTP status, each listing its possible codes. */
function errors(...codes: ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    byStatus.set(HTTP_STATUS[code], [...(byStatus.get(HTTP_STATUS[code]) ?? []), code])
  }
  const out: Record<string, Json> = {}
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const example = ERROR_EXAMPLES[list[0]!]
    out[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${list.map((c) => `\`${c}\``).join(', ')}.`,
      ...(status === 429
        ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } }
        : {}),
      content: json(
        { allOf: [ref('Error'), { type: 'object', properties: { error_code: { enum: list } } }] },
        example === undefined
          ? undefined
          : {
              error: example,
              error_code: list[0],
              request_id: '5f0e8c1a-3b7d-4c2e-9a61-0d4f2b8e7c35',
            },
      ),
    }
  }
  return out
}
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Too large',
  416: 'Range not satisfiable',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Unavailable',
  504: 'Timed out',
  507: 'Insufficient storage',
}
/** Real sentences of the service, shown as examples for the first code of an error response. */
const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  invalid_auth_token: INVALID_API_KEY_MESSAGE,
  missing_parameter:
    'Missing required parameter video_url: give the http or https URL of the video to process.',
  job_finished:
    'Job … has already finished (completed); only pending or running jobs can be cancelled.',
}

/** Codes any authenticated /v1 call may answer. */
const AUTH_ERRORS: ErrorCode[] = [
  'invalid_auth_token',
  'too_many_auth_failures',
  'rate_limit_exceeded',
  'unexpected_error',
  'service_unavailable',
]
const BODY_ERRORS: ErrorCode[] = [
  'invalid_request_body',
  'missing_parameter',
  'invalid_parameter',
  'unsupported_content_type',
]
/** Codes a finished try-on job can carry (a synchronous try-on answers them as its own error). */
const TRY_ON_JOB_ERRORS: ErrorCode[] = [
  'input_fetch_failed',
  'file_size_too_large',
  'malformed_image',
  'unsupported_image_format',
  'resolution_too_high',
  'resolution_too_low',
  'no_person_detected',
  'no_garment_detected',
  'unsupported_pose',
  'job_cancelled',
  'request_timeout',
  'worker_crashed',
]

const jobIdParam: Json = {
  name: 'job_id',
  in: 'path',
  required: true,
  description: 'The `job_id` returned when the job was accepted.',
  schema: { type: 'string' },
}

const idempotencyKeyParam: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retried submission safe: the same key with the same body within `IDEMPOTENCY_TTL_S` (24 h) answers the first ' +
    'answer again (with `Idempotent-Replayed: true`) instead of starting a second job. The same key with another body → 422 ' +
    '`idempotency_key_reused`; while the first request is still being processed → 409 `idempotency_key_in_use`. Scoped to the API key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
}
const replayedHeader: Json = {
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored answer of an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', const: 'true' },
  },
}
const deprecationHeader: Json = {
  Deprecation: {
    description:
      'Sent when the request used `garment_mode` (deprecated): RFC 9745 form `@<unix seconds>`.',
    schema: { type: 'string', example: '@1735689600' },
  },
}
const IDEMPOTENCY_ERRORS: ErrorCode[] = ['idempotency_key_reused', 'idempotency_key_in_use']

/** An operation that needs the API key. */
const secured = (op: Operation, o: { rateLimited?: boolean } = {}): Operation => ({
  ...op,
  security: [{ ApiKey: [] }],
  responses: o.rateLimited === false ? op.responses : withRateLimitHeaders(op.responses),
})

/** The key's request budget, sent on every answer to an authenticated /v1 request (not on 401). */
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const
function withRateLimitHeaders(responses: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => {
      if (status === '401') return [status, r]
      const headers = { ...((r.headers as Json | undefined) ?? {}) }
      for (const h of RATE_LIMIT_HEADERS) headers[h] = { $ref: `#/components/headers/${h}` }
      return [status, { ...r, headers }]
    }),
  )
}

function jobOperations(
  kind: 'try-on' | 'remove-background',
  base: string,
  label: string,
  tag: string,
): Record<string, Record<string, Operation>> {
  const id = kind === 'try-on' ? 'TryOn' : 'RemoveBackground'
  return {
    [`${base}/job/{job_id}`]: {
      get: secured({
        operationId: `get${id}Job`,
        summary: `Status of a ${label} job`,
        description:
          'Poll until `status` is `completed` (then `result_url` is set) or `failed` (then `error` is set). ' +
          'Each poll issues a fresh signed `result_url`. A job whose result or record has expired answers ' +
          '`failed` with `job_expired`.',
        tags: [tag],
        parameters: [jobIdParam],
        responses: {
          '200': {
            description: 'The status document (also for failed jobs).',
            content: json(ref('JobStatus')),
          },
          ...errors('not_found', ...AUTH_ERRORS),
        },
      }),
    },
    [`${base}/job/{job_id}/cancel`]: {
      post: secured({
        operationId: `cancel${id}Job`,
        summary: `Cancel a ${label} job`,
        description:
          'Stops a pending or running job within about a second; it becomes `failed` with `job_cancelled`.',
        tags: [tag],
        parameters: [jobIdParam],
        responses: {
          '200': { description: 'Cancelled.', content: json(ref('CancelResult')) },
          ...errors('not_found', 'job_finished', ...AUTH_ERRORS),
        },
      }),
    },
  }
}

export interface OpenApiOptions {
  /** `PUBLIC_BASE_URL` when configured: the document's server; otherwise the document's own origin. */
  publicBaseUrl?: string | undefined
}

/** Builds the document (pure; the app builds it once). */
export function buildOpenApiDocument(o: OpenApiOptions = {}): OpenApiDocument {
  const requestSchemas = schemasOf(
    { TryOnRequest: TryOnBody, RemoveBackgroundRequest: RemoveBackgroundBody },
    'input',
  )
  const responseSchemas = schemasOf(
    {
      ErrorCode: ErrorCodeSchema,
      Error: ErrorBody,
      JobAccepted,
      TryOnResult: TryOnCompleted,
      JobStatus: JobStatusDocument,
      CancelResult: CancelAccepted,
      UploadResult: UploadResultSchema,
      Credits: CreditsSchema,
      Health: HealthSchema,
      Readiness: ReadinessSchema,
      SampleList: SampleListSchema,
    },
    'output',
  )
  const schemas: Record<string, Json> = {
    ...requestSchemas,
    TryOnForm: tryOnFormSchema(requestSchemas.TryOnRequest!),
    ...responseSchemas,
    ErrorCode: errorCodeSchema(),
  }
  for (const [name, s] of Object.entries(schemas)) describeSchema(name, s)

  const doc = {
    openapi: '3.1.0' as const,
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Tailor API',
      version: '1.0.0',
      summary: 'Virtual try-on on images and background removal on videos.',
      description:
        'Self-hostable media AI with a Pixelcut-compatible HTTP API.\n\n' +
        `- Every \`/v1\` call needs the \`${API_KEY_HEADER}\` header.\n` +
        '- Work runs as jobs: a POST answers 202 `{job_id}`; poll `GET …/job/{job_id}` for progress and the signed `result_url`.\n' +
        '- Local files reach the service through `POST /v1/uploads`, whose `tailor://uploads/<id>` URL is accepted wherever an input URL is.\n' +
        '- Every error answers `{error, error_code}` (plus `request_id`, also sent as the `X-Request-Id` header); the codes are listed under the `ErrorCode` schema.',
    },
    servers: [
      {
        url: o.publicBaseUrl ?? '/',
        description: o.publicBaseUrl ? 'PUBLIC_BASE_URL' : 'This server',
      },
    ],
    tags: [
      {
        name: 'try-on',
        description:
          'Virtual try-on (Beta): dress the person in a photo with a garment from a product photo.',
      },
      { name: 'video', description: 'Video background removal.' },
      { name: 'uploads', description: 'Local files as inputs.' },
      { name: 'account', description: "The calling API key's credit budget." },
      { name: 'results', description: 'Signed, time-limited result downloads.' },
      { name: 'operations', description: 'Health and the API description itself.' },
      { name: 'playground', description: 'The browser playground served at `/`.' },
    ],
    security: [],
    paths: {
      '/v1/try-on': {
        post: secured({
          operationId: 'tryOn',
          summary: 'Try a garment on a person (Beta)',
          description:
            'With `wait_for_result` "true" (the default) the request waits for the job up to `TRYON_WAIT_TIMEOUT_MS`: ' +
            "completed → 200 `{result_url, job_id}`; failed → the job's error with its HTTP status (e.g. 422 `no_person_detected`); " +
            'still running → 202 `{job_id}`. With "false" it answers 202 `{job_id}` at once. The result is a JPEG at the person photo\'s size.',
          tags: ['try-on'],
          parameters: [idempotencyKeyParam],
          requestBody: {
            required: true,
            description:
              'JSON, or `multipart/form-data` with the same fields as text parts; in a form the images may instead be file parts ' +
              '`person_image` / `garment_image` (each stored as an upload of the calling key; at most `UPLOAD_MAX_IMAGE_BYTES`).',
            content: {
              ...json(ref('TryOnRequest'), {
                person_image_url: 'https://example.com/person.jpg',
                garment_image_url: 'https://example.com/garment.jpg',
                wait_for_result: 'false',
              }),
              'multipart/form-data': {
                schema: ref('TryOnForm'),
                encoding: {
                  person_image: { contentType: 'image/*' },
                  garment_image: { contentType: 'image/*' },
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'Finished within the wait.',
              headers: { ...replayedHeader, ...deprecationHeader },
              content: json(ref('TryOnResult')),
            },
            '202': {
              description: 'Accepted (or still running at the end of the wait): poll the job.',
              headers: { ...replayedHeader, ...deprecationHeader },
              content: json(ref('JobAccepted')),
            },
            ...errors(
              ...BODY_ERRORS,
              'insufficient_api_credits',
              ...IDEMPOTENCY_ERRORS,
              ...AUTH_ERRORS,
              ...TRY_ON_JOB_ERRORS,
              'upload_quota_exceeded',
              'storage_full',
            ),
          },
        }),
      },
      ...jobOperations('try-on', '/v1/try-on', 'try-on', 'try-on'),
      '/v1/video/remove-background': {
        post: secured({
          operationId: 'removeVideoBackground',
          summary: 'Remove the background of a video',
          description:
            'Answers 202 `{job_id}`; poll the job for `progress` and the signed `result_url`. Frame rate, frame count, ' +
            'duration, orientation and audio (where the container allows) are kept.',
          tags: ['video'],
          parameters: [idempotencyKeyParam],
          requestBody: {
            required: true,
            content: json(ref('RemoveBackgroundRequest'), {
              video_url: 'https://example.com/clip.mp4',
              background_color: 'transparent',
              output_format: 'webm_vp9',
            }),
          },
          responses: {
            '202': {
              description: 'Accepted: poll the job.',
              headers: replayedHeader,
              content: json(ref('JobAccepted')),
            },
            ...errors(
              ...BODY_ERRORS,
              'insufficient_api_credits',
              ...IDEMPOTENCY_ERRORS,
              ...AUTH_ERRORS,
            ),
          },
        }),
      },
      ...jobOperations(
        'remove-background',
        '/v1/video/remove-background',
        'video background removal',
        'video',
      ),
      '/v1/credits': {
        get: secured({
          operationId: 'getCredits',
          summary: 'Credits left for this API key',
          description:
            'A key made with `tailor keys create --credits N` has a budget of N credits; each job that completes is charged one ' +
            '(failed and cancelled jobs cost nothing), and once none is left a submission answers 403 `insufficient_api_credits`. ' +
            'A key without a budget (and a key configured by environment) answers `{"credits_remaining": null, "unlimited": true}`.',
          tags: ['account'],
          responses: {
            '200': {
              description: 'The balance.',
              content: json(ref('Credits'), { credits_remaining: 42, unlimited: false }),
            },
            ...errors(...AUTH_ERRORS),
          },
        }),
      },
      '/v1/uploads': {
        post: secured({
          operationId: 'upload',
          summary: 'Upload a local file to use as an input',
          description:
            'The raw body is the file itself, its `Content-Type` the media type. Size limits are those of inputs ' +
            '(images 25 MB, videos 100 MB by default). The upload lives one hour and only jobs of the same API key may use it.',
          tags: ['uploads'],
          requestBody: {
            required: true,
            content: Object.fromEntries(
              [...UPLOAD_CONTENT_TYPES.image, ...UPLOAD_CONTENT_TYPES.video].map((t) => [
                t,
                { schema: { type: 'string', contentMediaType: t } },
              ]),
            ),
          },
          responses: {
            '201': { description: 'Stored.', content: json(ref('UploadResult')) },
            ...errors(
              'invalid_request_body',
              'unsupported_content_type',
              'file_size_too_large',
              'upload_quota_exceeded',
              'storage_full',
              ...AUTH_ERRORS,
            ),
          },
        }),
      },
      '/results/{kind}/{file}': Object.fromEntries(
        (['get', 'head'] as const).map((method) => [
          method,
          {
            operationId: method === 'get' ? 'getResult' : 'headResult',
            summary: method === 'get' ? 'Download a result' : 'Size and type of a result',
            description:
              'The `result_url` of a job. No API key: the HMAC signature is the credential, valid 1 hour ' +
              '(`RESULT_URL_TTL_S`). `Range` requests are served (players can seek).',
            tags: ['results'],
            parameters: [
              {
                name: 'kind',
                in: 'path',
                required: true,
                schema: { type: 'string', enum: ['try-on', 'remove-background'] },
              },
              {
                name: 'file',
                in: 'path',
                required: true,
                description: '`<job_id>.<extension>`',
                schema: { type: 'string' },
              },
              {
                name: 'expires',
                in: 'query',
                required: true,
                description: 'Unix seconds after which the URL is refused.',
                schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
              },
              {
                name: 'sig',
                in: 'query',
                required: true,
                description: 'HMAC-SHA256 signature (base64url).',
                schema: { type: 'string' },
              },
              {
                name: 'Range',
                in: 'header',
                required: false,
                description: 'One `bytes=start-end` range.',
                schema: { type: 'string', example: 'bytes=0-1023' },
              },
            ],
            responses: {
              '200': {
                description: 'The whole result.',
                headers: {
                  'Accept-Ranges': { schema: { type: 'string', const: 'bytes' } },
                  'Content-Length': { schema: { type: 'integer' } },
                },
                content: resultMedia(),
              },
              '206': {
                description: 'The requested range.',
                headers: {
                  'Content-Range': { schema: { type: 'string', example: 'bytes 0-1023/52133' } },
                },
                content: resultMedia(),
              },
              ...errors(
                'invalid_signature',
                'result_url_expired',
                'not_found',
                'range_not_satisfiable',
              ),
            },
          } satisfies Operation,
        ]),
      ),
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Liveness',
          description: 'The process serves requests (Kubernetes liveness probe).',
          tags: ['operations'],
          responses: {
            '200': { description: 'Up.', content: json(ref('Health')) },
            '503': {
              description: 'Not able to serve (e.g. the queue is unreachable).',
              content: json(ref('Health')),
            },
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          summary: 'Readiness',
          description:
            'Ready to take work: the queue is connected and the job store answers (Kubernetes readiness probe).',
          tags: ['operations'],
          responses: {
            '200': { description: 'Ready.', content: json(ref('Readiness')) },
            '503': { description: 'Not ready.', content: json(ref('Readiness')) },
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics',
          description:
            'Request counts and latencies, job counts and durations, in the Prometheus text format.',
          tags: ['operations'],
          responses: {
            '200': {
              description: 'The metrics.',
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
            ...errors('not_found'),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openApiDocument',
          summary: 'This document',
          tags: ['operations'],
          responses: {
            '200': {
              description: 'OpenAPI 3.1.',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
      '/docs': {
        get: {
          operationId: 'apiReference',
          summary: 'API reference (HTML rendered from this document)',
          tags: ['operations'],
          responses: { '200': { description: 'The reference page.', content: html() } },
        },
      },
      '/': {
        get: {
          operationId: 'playground',
          summary: 'Browser playground',
          description:
            'A page to try the API with a key: try-on and video background removal, on samples, URLs or local files.',
          tags: ['playground'],
          responses: {
            '200': { description: 'The playground page.', content: html() },
            '503': {
              description: 'The playground bundle is not built (`pnpm build:playground`).',
              content: html(),
            },
          },
        },
      },
      '/playground/{asset}': {
        get: {
          operationId: 'playgroundAsset',
          summary: 'Playground script and style sheet',
          tags: ['playground'],
          parameters: [
            {
              name: 'asset',
              in: 'path',
              required: true,
              schema: { type: 'string', enum: ['playground.js', 'playground.css'] },
            },
          ],
          responses: {
            '200': {
              description: 'The asset.',
              content: {
                'text/javascript': { schema: { type: 'string' } },
                'text/css': { schema: { type: 'string' } },
              },
            },
            ...errors('not_found'),
          },
        },
      },
      '/playground/samples': {
        get: secured(
          {
            operationId: 'listSamples',
            summary: 'Sample media offered by the playground',
            description:
              'Files of `PLAYGROUND_SAMPLES_DIR`, when the operator sets it; nothing is served otherwise.',
            tags: ['playground'],
            responses: {
              '200': { description: 'The samples.', content: json(ref('SampleList')) },
              ...errors('invalid_auth_token', 'unexpected_error'),
            },
          },
          { rateLimited: false },
        ),
      },
      '/playground/samples/{name}': {
        get: secured(
          {
            operationId: 'getSample',
            summary: 'One sample file',
            tags: ['playground'],
            parameters: [
              {
                name: 'name',
                in: 'path',
                required: true,
                description: 'A name from the sample list.',
                schema: { type: 'string' },
              },
            ],
            responses: {
              '200': {
                description: 'The file.',
                content: {
                  'image/*': { schema: { type: 'string', contentMediaType: 'image/*' } },
                  'video/*': { schema: { type: 'string', contentMediaType: 'video/*' } },
                },
              },
              ...errors('not_found', 'invalid_auth_token', 'unexpected_error'),
            },
          },
          { rateLimited: false },
        ),
      },
    },
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: API_KEY_HEADER,
          description: 'An API key of this service (the header name is case-insensitive).',
        },
      },
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before retrying.',
          schema: { type: 'integer', minimum: 0 },
        },
        'RateLimit-Limit': {
          description:
            'Requests per second this API key may make (requests that create work count: POSTs of jobs and uploads).',
          schema: { type: 'integer', minimum: 0 },
        },
        'RateLimit-Remaining': {
          description: 'Requests left in the current budget.',
          schema: { type: 'integer', minimum: 0 },
        },
        'RateLimit-Reset': {
          description: 'Seconds until the budget is full again.',
          schema: { type: 'integer', minimum: 0 },
        },
      },
      schemas,
    },
  }
  return doc
}

/** Every code with its meaning and HTTP status: `enum` for generators, `oneOf` for the descriptions. */
function errorCodeSchema(): Json {
  return {
    type: 'string',
    enum: [...ERROR_CODES],
    oneOf: ERROR_CODES.map((code) => ({
      const: code,
      description: ERROR_CODE_DOCS[code] ?? code,
      'x-http-status': HTTP_STATUS[code],
    })),
  }
}

/** The multipart try-on body: the JSON fields as text parts, the URLs optional when the file parts are sent. */
function tryOnFormSchema(tryOn: Json): Json {
  const props = structuredClone(tryOn.properties as Record<string, Json>)
  const file = { type: 'string', contentMediaType: 'image/*' }
  return {
    type: 'object',
    properties: { ...props, person_image: file, garment_image: { ...file } },
  }
}

/** Adds SCHEMA_DOCS / FIELD_DOCS descriptions (the shared zod schemas carry none). */
function describeSchema(name: string, s: Json): void {
  if (SCHEMA_DOCS[name] !== undefined && s.description === undefined) {
    s.description = SCHEMA_DOCS[name]
  }
  const props = s.properties as Record<string, Json> | undefined
  for (const [field, d] of Object.entries(FIELD_DOCS[name] ?? {})) {
    const p = props?.[field]
    if (p !== undefined && p.description === undefined) p.description = d
  }
  if (name === 'TryOnRequest' && props?.garment_mode !== undefined) {
    props.garment_mode.deprecated = true
  }
}

const SCHEMA_DOCS: Record<string, string> = {
  TryOnRequest:
    'Body of `POST /v1/try-on`. Booleans take the strings "true"/"false" (as specified) or JSON booleans. Unknown fields are ignored.',
  TryOnForm:
    'The same request as `multipart/form-data`: the fields as text parts; each image either as its URL field or as a file part ' +
    '(`person_image`, `garment_image`), not both. A missing image is `missing_parameter`.',
  RemoveBackgroundRequest:
    'Body of `POST /v1/video/remove-background`. Unknown fields are ignored.',
  ErrorCode:
    'Public error codes. `x-http-status` is the HTTP status an answer failing with the code carries.',
  Error: 'The body of every 4xx and 5xx answer.',
  JobAccepted: 'The job was accepted; poll its status.',
  TryOnResult: 'A try-on that finished within the wait.',
  JobStatus: "A job's status document.",
  CancelResult: 'The job was cancelled; polling it now answers `failed` with `job_cancelled`.',
  UploadResult: 'The upload is stored.',
  Credits: "The calling key's credit balance.",
  Health: 'Liveness, with details of what runs (mode, connected workers…).',
  Readiness: 'Readiness, with what was checked.',
  SampleList: 'The sample media in `PLAYGROUND_SAMPLES_DIR` (empty lists when it is not set).',
}

const INPUT_URL =
  'an http(s) URL (public addresses only) or `tailor://uploads/<id>` from `POST /v1/uploads`'
const JOB_ID = 'Job id (a UUIDv7: time-ordered).'
const WEBHOOK_URL =
  'http(s) URL called with a signed POST (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`) when the job ' +
  "completes or fails; retried with backoff until it answers 2xx. Signed with the API key's own `whsec_` secret (shown once by " +
  "`tailor keys create`, replaced by `tailor keys rotate-webhook-secret`); keys without one (from the environment) use the operator's " +
  '`WEBHOOK_SECRET`, and without that the field is refused (`invalid_parameter`).'

/** Field descriptions by schema name; openapi-document.test.ts fails on a field left without one. */
const FIELD_DOCS: Record<string, Record<string, string>> = {
  TryOnRequest: {
    person_image_url: `Photo of the person: ${INPUT_URL}. JPEG, PNG, WebP, GIF, TIFF or AVIF.`,
    garment_image_url: `Product photo of the garment: ${INPUT_URL}.`,
    garment_mode:
      'Deprecated: overrides category detection (the answer then carries a `Deprecation` header).',
    garment_photo_type:
      'What the garment photo shows: `flat-lay` (laid flat, ghost mannequin or cut out: the whole foreground is the garment), ' +
      '`model` (worn by a person: the garment is cut out of the person, without head, skin, shoes or other garments), ' +
      '`auto` (default: detected from the photo).',
    preprocess_garment:
      '"true": remove the garment photo\'s background; "false": the photo is already cut out.',
    remove_background: '"true": put the dressed person on white.',
    webhook_url: WEBHOOK_URL,
    wait_for_result:
      '"true": wait up to `TRYON_WAIT_TIMEOUT_MS` (60 s) and answer the result; "false": answer 202 `{job_id}` at once.',
  },
  TryOnForm: {
    person_image_url: `Photo of the person: ${INPUT_URL}; or send the file as the part \`person_image\`.`,
    garment_image_url: `Product photo of the garment: ${INPUT_URL}; or send the file as the part \`garment_image\`.`,
    garment_mode:
      'Deprecated: overrides category detection (the answer then carries a `Deprecation` header).',
    garment_photo_type: '`auto`, `flat-lay` or `model`, as in the JSON body.',
    preprocess_garment: '"true" or "false", as in the JSON body.',
    remove_background: '"true" or "false", as in the JSON body.',
    webhook_url: WEBHOOK_URL,
    wait_for_result: '"true" or "false", as in the JSON body.',
    person_image:
      'The person photo as a file (JPEG, PNG, WebP, TIFF or AVIF; its type is read from its bytes when the part declares none), stored as an upload of the calling key.',
    garment_image: 'The garment photo as a file, like `person_image`.',
  },
  RemoveBackgroundRequest: {
    video_url: `The video: ${INPUT_URL}. MP4, MOV, WebM, MKV or GIF; H.264, H.265, VP8, VP9, AV1 or ProRes.`,
    background_color: '`transparent`, `#RGB` or `#RRGGBB`.',
    webhook_url: WEBHOOK_URL,
    output_format: `Container and codec of the result (its MIME type): ${OUTPUT_FORMATS.map((f) => `\`${f}\` ${OUTPUT_FORMAT_SPECS[f].contentType}`).join(', ')}. \`transparent\` needs a format with alpha: ${ALPHA_FORMATS.map((f) => `\`${f}\``).join(', ')}.`,
  },
  Error: {
    error: 'A sentence saying what was wrong and what is allowed.',
    error_code: 'What went wrong, as a stable code.',
    request_id:
      'The request id (also the `X-Request-Id` header): quote it when reporting a problem.',
    job_id: 'The job concerned (a synchronous try-on whose job failed).',
  },
  JobAccepted: { job_id: JOB_ID },
  TryOnResult: {
    result_url:
      'Signed URL of the JPEG result, valid for `RESULT_URL_TTL_S` (1 hour by default); no API key needed.',
    job_id: JOB_ID,
  },
  JobStatus: {
    job_id: JOB_ID,
    status: '`pending` → `running` → `completed` or `failed`.',
    progress:
      'Fraction done, 0..1 (frames processed, for video), of the current attempt: when a job is retried (its worker died or a retryable error) `attempt` goes up and progress starts again from 0.',
    attempt:
      'Which delivery of the job is running or ran last: 0 while it waits for its first worker, 1 the first, 2 after one retry… A job is tried at most `MAX_DELIVER` times (default 3); a worker that dies is noticed within `ACK_WAIT_MS` (default 10 s).',
    result_url:
      'Only when completed: a signed URL of the result, freshly issued by each poll and valid 1 hour.',
    error:
      'Only when failed: `{message, error_code}` (e.g. `malformed_video`, `no_person_detected`, `job_cancelled`, `job_expired`).',
    created_at: 'ISO 8601 time the job was accepted.',
    updated_at: 'ISO 8601 time of its last change.',
  },
  CancelResult: { message: 'A sentence confirming the cancel.' },
  UploadResult: {
    upload_id: 'Upload id (UUID).',
    url: '`tailor://uploads/<upload_id>`: pass it as `person_image_url`, `garment_image_url` or `video_url` (jobs of the same API key only).',
    expires_at: 'ISO 8601 time after which the upload is gone (1 hour).',
  },
  Credits: {
    credits_remaining:
      'Credits left (one is charged per completed job); null when the key has no budget.',
    unlimited: 'true when the key has no credit budget.',
  },
  Health: { status: '`ok`, or `unavailable` (503).' },
  Readiness: { status: '`ready`, or `unavailable` (503).' },
  SampleList: {
    images: 'Image file names (JPEG, PNG, WebP).',
    videos: 'Video file names (MP4, MOV, WebM, MKV, GIF).',
  },
}

function resultMedia(): Json {
  const types = [
    'image/jpeg',
    'video/mp4',
    'video/webm',
    'video/quicktime',
    'video/x-matroska',
    'image/gif',
  ]
  return Object.fromEntries(
    types.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }]),
  )
}

const html = (): Json => ({ 'text/html': { schema: { type: 'string' } } })
