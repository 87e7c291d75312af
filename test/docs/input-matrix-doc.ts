/**
 * Renders docs/input-matrix.md from the input-matrix case lists, so the table is the tests' own
 * data and cannot drift: `pnpm docs:input-matrix` writes it, input-matrix-doc.test.ts checks it.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { HTTP_STATUS, type ErrorCode } from '@tailor/proto'
import { refusedDestination } from '@tailor/proto/net'
import { matrixTitle } from '@tailor/proto/net/testing'
import {
  BODY_CASES,
  BODY_MATRIX_FILE,
  BODY_MATRIX_LAYER,
} from '@tailor/gateway/src/input-matrix.cases.ts'
import {
  JOB_CASES,
  JOB_MATRIX_FILE,
  JOB_MATRIX_LAYER,
} from '@tailor/inference/src/jobs/input-matrix.cases.ts'
import {
  NET_CASES,
  NET_MATRIX_FILE,
  NET_MATRIX_LAYER,
  STUB_DNS,
} from '../../proto/src/net/input-matrix.cases.ts'

export const DOC_PATH = fileURLToPath(new URL('../../docs/input-matrix.md', import.meta.url))

interface Row {
  id: string
  case: string
  input: string
  expected: string
}
export interface MatrixLayer {
  title: string
  /** Short name of the layer checked, for the table. */
  short: string
  layer: string
  file: string
  /** The name of the array the test file runs (`it.each(<name>.map(…))`). */
  casesName: string
  cases: readonly Row[]
  notes: string
}

export const LAYERS: readonly MatrixLayer[] = [
  {
    title: 'URLs and addresses',
    short: 'fetch guard',
    layer: NET_MATRIX_LAYER,
    file: NET_MATRIX_FILE,
    casesName: 'NET_CASES',
    cases: NET_CASES,
    notes:
      'Each case calls `safeFetchToFile` with loopback allowed (as in tests) unless noted, a 1 MiB cap and a resolver stub ' +
      `(${Object.entries(STUB_DNS)
        .map(([h, a]) => `\`${h}\` → ${a.join(', ')}`)
        .join('; ')}). ` +
      'Asserted every time: the code and message, no partial file left, and from the connection tripwire either no connection ' +
      'attempt at all (literal addresses, schemes, credentials and DNS answers are refused before connecting) or, for redirects ' +
      'and bodies, connections to the loopback test server only; literal addresses never even reach the resolver. ' +
      `Every refused destination answers exactly one sentence, "${refusedDestination()}", whether the host was a refused ` +
      'literal, a name resolving to a refused address, or a name that does not resolve: the message never tells a tenant which ' +
      'internal names exist or what they resolve to. IPv4 carried in IPv6 (IPv4-mapped, IPv4-compatible `::/96`, NAT64 ' +
      '`64:ff9b::/96` and local-use `64:ff9b:1::/48` at every RFC 6052 position, 6to4 `2002::/16`) is classified by that IPv4.',
  },
  {
    title: 'Whole jobs: what the user sees',
    short: 'job',
    layer: JOB_MATRIX_LAYER,
    file: JOB_MATRIX_FILE,
    casesName: 'JOB_CASES',
    cases: JOB_CASES,
    notes:
      "The outcome is the job's `error.error_code` (GET …/job/{id}; a synchronous try-on answers it as the HTTP error). " +
      'The gateway accepts any syntactically valid http(s) URL; the address rules are enforced by the worker when it fetches. ' +
      'Asserted every time: the outcome, an empty work directory, no ffmpeg/ffprobe process left, no connection attempt to a ' +
      'non-loopback address; the `L` cases also no connection at all. "Never opened" is proved with a FIFO that the test holds ' +
      'open for writing: the open completes only if something opens it for reading.',
  },
  {
    title: 'Request bodies',
    short: 'HTTP edge',
    layer: BODY_MATRIX_LAYER,
    file: BODY_MATRIX_FILE,
    casesName: 'BODY_CASES',
    cases: BODY_CASES,
    notes:
      'Asserted every time: the HTTP status and `error_code` (or 202), and that nothing was queued for a refused body. ' +
      'The 10 MB cases also assert that the server had read less than 1 MiB off the socket when it answered.',
  },
]

function outcome(expected: string): string {
  if (expected === 'completed') return 'completed (accepted by design)'
  if (expected === 'accepted') return '202 accepted (ignored field)'
  return `\`${expected}\` (${HTTP_STATUS[expected as ErrorCode]})`
}

const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ')

export function renderInputMatrix(): string {
  const total = LAYERS.reduce((n, l) => n + l.cases.length, 0)
  const out: string[] = [
    '# Input and SSRF test matrix',
    '',
    '<!-- Generated from the case lists by `pnpm docs:input-matrix`; test/docs/input-matrix-doc.test.ts fails when this file differs. -->',
    '',
    `${total} cases, each its own automated test (part of \`pnpm test\`), named in the last column. Every case ends in a`,
    'documented outcome (docs/errors-and-limits.md, "Error codes"), with no temporary file and no ffmpeg process left behind.',
    '',
    '**Safety rule.** The test machine may send traffic only to loopback addresses, so a live test only ever connects to a',
    'server the test itself started on 127.0.0.1 or ::1 (`{loopback}` below). Private, link-local, metadata and unique-local',
    'addresses are exercised through the address check and a resolver stub, and must be refused before any connection is',
    'attempted. Tests prove it with a connection tripwire (`@tailor/proto/net/testing`): every client socket of the test process',
    "is observed through Node's `net.client.socket` diagnostics channel, each connection attempt is recorded, and a socket about",
    'to connect to anything but loopback is destroyed first (and the test fails).',
    '',
    'In production `TAILOR_FETCH_ALLOW_LOOPBACK` is false, so every loopback spelling is refused like a private address.',
    '',
  ]
  for (const l of LAYERS) {
    out.push(
      `## ${l.title}`,
      '',
      `Layer checked ("${l.short}"): ${l.layer}. Tests: \`${l.file}\`.`,
      '',
      l.notes,
      '',
    )
    out.push(
      '| ID | Case | Input | Layer checked | Expected outcome | Test name |',
      '|---|---|---|---|---|---|',
    )
    for (const c of l.cases) {
      out.push(
        `| ${c.id} | ${cell(c.case)} | ${cell(c.input)} | ${l.short} | ${outcome(c.expected)} | ${cell(matrixTitle(c))} |`,
      )
    }
    out.push('')
  }
  return out.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderInputMatrix()
  const old = await readFile(DOC_PATH, 'utf8').catch(() => '')
  if (old !== text) await writeFile(DOC_PATH, text)
  console.log(old === text ? `${DOC_PATH} is up to date` : `wrote ${DOC_PATH}`)
}
