/** `tailor try-on PERSON GARMENT -o out.jpg`: one try-on, the JPEG saved locally. */
import { extname } from 'node:path'
import { createProgressBar } from '../progress-bar.ts'
import {
  createClient,
  EXIT,
  interruptSignal,
  optionLines,
  reportError,
  resolveInput,
  saveResult,
  parseServiceArgs,
  SERVICE_HELP_ROWS,
  UsageError,
  userPath,
  type CliIO,
} from '../service.ts'

export const TRY_ON_HELP = `Usage: tailor try-on PERSON GARMENT -o OUT.jpg [options]

Dresses the person in PERSON with the garment in GARMENT and saves the result (JPEG, the person
photo's size). PERSON and GARMENT are local files (uploaded first, kept 1 hour) or http(s) URLs.

Options:
${optionLines([
  [
    '-o, --output FILE',
    'where to write the JPEG (required; .jpg or .jpeg, or an extension\nthat is not an image or video one)',
  ],
  ['--category C', 'auto (default: detected from the garment), upper, lower or full'],
  [
    '--photo-type T',
    'garment photo: auto (default: detected), flat-lay (laid flat, ghost\nmannequin or cut out) or model (worn by a person)',
  ],
  ['--remove-background', 'put the dressed person on white'],
  ['--no-preprocess', 'the garment photo is already cut out (skip its background removal)'],
  ...SERVICE_HELP_ROWS,
  ['-h, --help', 'this help'],
])}

Exit codes: 0 done, 1 the service or the job failed (error_code on stderr), 2 bad usage,
130 interrupted.
`

const CATEGORIES = ['auto', 'upper', 'lower', 'full'] as const
type Category = (typeof CATEGORIES)[number]
const PHOTO_TYPES = ['auto', 'flat-lay', 'model'] as const
type PhotoType = (typeof PHOTO_TYPES)[number]

/** Image and video extensions other than JPEG's: writing the JPEG result there would mislabel it. */
const NOT_JPEG = new Set([
  '.png',
  '.webp',
  '.gif',
  '.tif',
  '.tiff',
  '.avif',
  '.heic',
  '.bmp',
  '.mp4',
  '.m4v',
  '.mov',
  '.webm',
  '.mkv',
])

export async function tryOnCommand(argv: string[], io: CliIO): Promise<number> {
  const intr = interruptSignal()
  try {
    const { values, positionals } = parseServiceArgs(argv, {
      output: { type: 'string', short: 'o' },
      category: { type: 'string' },
      'photo-type': { type: 'string' },
      'remove-background': { type: 'boolean' },
      'no-preprocess': { type: 'boolean' },
    })
    if (values.help === true) {
      io.stdout.write(TRY_ON_HELP)
      return EXIT.ok
    }
    if (positionals.length !== 2) {
      throw new UsageError(`expected PERSON and GARMENT, got ${positionals.length} argument(s)`)
    }
    const [person, garment] = positionals as [string, string]
    if (values.output === undefined) throw new UsageError('-o OUT.jpg is required')
    const category = (values.category ?? 'auto') as Category
    if (!CATEGORIES.includes(category)) {
      throw new UsageError(
        `--category must be one of ${CATEGORIES.join(', ')}; got ${values.category}`,
      )
    }
    const photoType = (values['photo-type'] ?? 'auto') as PhotoType
    if (!PHOTO_TYPES.includes(photoType)) {
      throw new UsageError(
        `--photo-type must be one of ${PHOTO_TYPES.join(', ')}; got ${values['photo-type']}`,
      )
    }
    const ext = extname(values.output).toLowerCase()
    if (NOT_JPEG.has(ext)) {
      throw new UsageError(
        `the result is a JPEG, but OUT is ${values.output}: name it ${values.output.slice(0, -ext.length)}.jpg`,
      )
    }
    const client = createClient(values, io)
    const signal = intr.signal

    const [personUrl, garmentUrl] = [
      await resolveInput(client, person, 'PERSON', io, signal),
      await resolveInput(client, garment, 'GARMENT', io, signal),
    ]
    const bar = createProgressBar(io.stderr, 'try-on')
    bar.update('running', 0)
    let r = await client.tryOn(
      {
        person_image_url: personUrl,
        garment_image_url: garmentUrl,
        ...(category !== 'auto' ? { garment_mode: category } : {}),
        ...(photoType !== 'auto' ? { garment_photo_type: photoType } : {}),
        remove_background: values['remove-background'] === true ? 'true' : 'false',
        preprocess_garment: values['no-preprocess'] === true ? 'false' : 'true',
        wait_for_result: 'true',
      },
      { signal },
    )
    if (r.result_url === undefined) {
      // Still running when the service's wait ran out: poll it.
      const doc = await client.waitForJob('try-on', r.job_id, {
        signal,
        onProgress: (d) => bar.update(d.status, d.progress),
      })
      r = { job_id: r.job_id, result_url: doc.result_url ?? '' }
    }
    bar.update('completed', 1)
    bar.done()
    const bytes = await saveResult(client, r.result_url!, userPath(io, values.output), signal)
    io.stderr.write(`saved ${values.output} (${bytes} bytes, job ${r.job_id})\n`)
    return EXIT.ok
  } catch (err) {
    return reportError(err, io, 'try-on')
  } finally {
    intr.dispose()
  }
}
