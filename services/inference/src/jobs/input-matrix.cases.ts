/**
 * Input and SSRF matrix, layer 2: a whole job as a user submits it (`runJob`: safeFetchToFile →
 * media/image.ts (sharp) or media/video.ts (ffprobe/ffmpeg) → engine). The outcome is what the
 * user sees in the job's `error.error_code` (and, for a synchronous try-on, as the HTTP error).
 * Run by `input-matrix.test.ts` beside this file; docs/input-matrix.md is generated from this list.
 *
 * Crafted media is made by the test (hand-written headers, sharp, ffmpeg) and served by the test's
 * own loopback server (`{loopback}`); production refuses loopback, so those cases run with
 * TAILOR_FETCH_ALLOW_LOOPBACK=true as a developer would. The `L` cases run with it false (the
 * default) and must be refused before any connection.
 */
import type { ErrorCode } from '@tailor/proto'

export interface JobCase {
  id: string
  case: string
  input: string
  /** The job's error code, or `completed` for an input that is (deliberately) accepted. */
  expected: ErrorCode | 'completed'
}

export const JOB_MATRIX_FILE = 'services/inference/src/jobs/input-matrix.test.ts'
export const JOB_MATRIX_LAYER = 'inference runJob (fetch → sharp / ffprobe → engine fake)'

export const JOB_CASES = [
  // Loopback in every spelling, TAILOR_FETCH_ALLOW_LOOPBACK=false (the default): no connection.
  {
    id: 'L01',
    case: 'loopback as 127.1',
    input: 'video_url http://127.1:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L02',
    case: 'loopback as 0x7f000001',
    input: 'video_url http://0x7f000001:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L03',
    case: 'loopback as 2130706433',
    input: 'video_url http://2130706433:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L04',
    case: 'loopback as 0177.0.0.1 (octal)',
    input: 'video_url http://0177.0.0.1:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L05',
    case: 'loopback as [::1]',
    input: 'video_url http://[::1]:{port6}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L06',
    case: 'loopback as [::ffff:127.0.0.1]',
    input: 'video_url http://[::ffff:127.0.0.1]:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L07',
    case: 'loopback as 0.0.0.0',
    input: 'video_url http://0.0.0.0:{port}/clip.mp4',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L08',
    case: 'loopback as the name localhost',
    input: 'person_image_url http://localhost:{port}/person.jpg',
    expected: 'input_fetch_failed',
  },
  {
    id: 'L09',
    case: 'loopback as 127.1 with TAILOR_FETCH_ALLOW_LOOPBACK=true (development)',
    input: 'person_image_url http://127.1:{port}/person.jpg',
    expected: 'completed',
  },
  // Crafted media (served on loopback, loopback allowed).
  {
    id: 'M01',
    case: 'PNG decompression bomb (20000×20000, 48 KB file)',
    input: 'person_image_url {loopback}/bomb.png',
    expected: 'resolution_too_high',
  },
  {
    id: 'M02',
    case: 'JPEG whose header claims 50000×50000',
    input: 'person_image_url {loopback}/huge.jpg',
    expected: 'resolution_too_high',
  },
  {
    id: 'M03',
    case: 'GIF with 5000 frames as a try-on image (only the first frame is decoded)',
    input: 'garment_image_url {loopback}/frames.gif',
    expected: 'completed',
  },
  {
    id: 'M04',
    case: 'GIF with 5000 frames as a video (100 s at 50 fps)',
    input: 'video_url {loopback}/frames.gif',
    expected: 'video_too_long',
  },
  {
    id: 'M05',
    case: 'video whose header claims 16000×16000',
    input: 'video_url {loopback}/wide.gif',
    expected: 'resolution_too_high',
  },
  {
    id: 'M06',
    case: 'video whose header claims 65535×65535',
    input: 'video_url {loopback}/huge.gif',
    expected: 'malformed_video',
  },
  {
    id: 'M07',
    case: 'HLS playlist naming a local segment file (never opened)',
    input:
      'video_url {loopback}/local.m3u8 (application/vnd.apple.mpegurl): #EXTINF … /tmp/…/secret.ts',
    expected: 'malformed_video',
  },
  {
    id: 'M08',
    case: 'HLS playlist naming a loopback URL (never requested)',
    input: 'video_url {loopback}/remote.m3u8: #EXTINF … http://127.0.0.1:{port}/canary.ts',
    expected: 'malformed_video',
  },
  {
    id: 'M09',
    case: 'ffconcat playlist naming local files (never opened)',
    input:
      "video_url {loopback}/list.ffconcat served as video/mp4: file '/tmp/…/secret.ts', file '/etc/passwd'",
    expected: 'malformed_video',
  },
  {
    id: 'M10',
    case: 'SVG naming a local file as a try-on image (never opened)',
    input:
      'person_image_url {loopback}/person.svg served as image/png: <image href="file:///tmp/…/secret.ts">',
    expected: 'unsupported_image_format',
  },
  {
    id: 'M11',
    case: 'Content-Type lies: an HTML page served as video/mp4',
    input: 'video_url {loopback}/page.html',
    expected: 'malformed_video',
  },
  {
    id: 'M12',
    case: 'Content-Type lies: an HTML page served as image/jpeg',
    input: 'person_image_url {loopback}/page.jpg',
    expected: 'unsupported_image_format',
  },
  {
    id: 'M13',
    case: 'Content-Type lies the other way: a real JPEG served as text/html (the bytes decide)',
    input: 'person_image_url {loopback}/person-as-html.jpg served as text/html',
    expected: 'completed',
  },
  {
    id: 'M14',
    case: 'truncated PNG',
    input: 'person_image_url {loopback}/truncated.png',
    expected: 'malformed_image',
  },
  {
    id: 'M15',
    case: 'H.264 at 1000 fps, 3000 frames, 256×256 (a few KB; processed at the 60 fps cap: at most 181 frames)',
    input: 'video_url {loopback}/fast.mp4',
    expected: 'completed',
  },
] as const satisfies readonly JobCase[]
