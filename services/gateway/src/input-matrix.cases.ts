/**
 * Input and SSRF matrix, layer 3: request bodies at the gateway's HTTP edge (`createApp` with
 * fakes of our ports; the 10 MB cases through a real @hono/node-server on 127.0.0.1, as served).
 * Run by `input-matrix.test.ts` beside this file; docs/input-matrix.md is generated from this list.
 */
import type { ErrorCode } from '@tailor/proto'

export interface BodyCase {
  id: string
  case: string
  input: string
  /** The `error_code` answered, or `accepted` (202) for a body that is (deliberately) taken. */
  expected: ErrorCode | 'accepted'
}

export const BODY_MATRIX_FILE = 'services/gateway/src/input-matrix.test.ts'
export const BODY_MATRIX_LAYER = 'gateway HTTP edge (createApp, @hono/node-server)'

export const BODY_CASES = [
  {
    id: 'G01',
    case: 'malformed JSON',
    input: 'POST /v1/video/remove-background `{"video_url": "https://…",`',
    expected: 'invalid_request_body',
  },
  {
    id: 'G02',
    case: 'JSON that is not an object',
    input: 'POST /v1/try-on `[1, 2, 3]`',
    expected: 'invalid_request_body',
  },
  {
    id: 'G03',
    case: 'JSON nested 100 000 levels deep (body limit raised to 1 MiB)',
    input: 'POST /v1/video/remove-background `[[[…]]]`',
    expected: 'invalid_request_body',
  },
  {
    id: 'G04',
    case: 'a field nested 100 000 levels deep (body limit raised to 1 MiB)',
    input: 'POST /v1/video/remove-background `{"video_url": [[[…]]]}`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G05',
    case: 'an unknown field nested 30 000 levels deep (inside 64 KiB)',
    input: 'POST /v1/video/remove-background `{"video_url": "https://…", "x": [[[…]]]}`',
    expected: 'accepted',
  },
  {
    id: 'G06',
    case: '10 MB JSON body with Content-Length (answered before the body is read)',
    input: 'POST /v1/video/remove-background, 10 MB, real HTTP server',
    expected: 'invalid_request_body',
  },
  {
    id: 'G07',
    case: '10 MB JSON body, chunked (reading stops at the limit)',
    input: 'POST /v1/try-on, 10 MB chunked, real HTTP server',
    expected: 'invalid_request_body',
  },
  {
    id: 'G08',
    case: 'Content-Type lies: JSON sent as text/plain',
    input: 'POST /v1/video/remove-background, `Content-Type: text/plain`',
    expected: 'unsupported_content_type',
  },
  {
    id: 'G09',
    case: 'Content-Type lies: a form body sent as application/json',
    input: 'POST /v1/try-on `person_image_url=https://…`',
    expected: 'invalid_request_body',
  },
  {
    id: 'G10',
    case: 'file: URL as video_url',
    input: '`file:///etc/passwd`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G11',
    case: 'gopher: URL as video_url',
    input: '`gopher://127.0.0.1:6379/_FLUSHALL`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G12',
    case: 'data: URL as person_image_url',
    input: '`data:image/png;base64,iVBORw0KGgo=`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G13',
    case: 'ftp: URL as garment_image_url',
    input: '`ftp://example.com/garment.jpg`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G14',
    case: 'credentials in video_url',
    input: '`https://user:secret@example.com/v.mp4`',
    expected: 'invalid_parameter',
  },
  {
    id: 'G15',
    case: 'input URL over 2048 characters (like webhook_url)',
    input: '`https://example.com/` + 2030 × `a` as person_image_url',
    expected: 'invalid_parameter',
  },
  {
    id: 'G16',
    case: 'result path whose percent-escapes are not UTF-8',
    input: 'GET `/results/%A4%A2`',
    expected: 'invalid_signature',
  },
] as const satisfies readonly BodyCase[]
