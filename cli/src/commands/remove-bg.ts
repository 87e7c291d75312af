/** `tailor remove-bg VIDEO -o out.webm`: one video background removal with a progress bar. */
import { extname } from 'node:path'
import { TailorError, type OutputFormat } from '@tailor/client'
import {
  ALPHA_FORMATS,
  OUTPUT_FORMAT_SPECS,
  OUTPUT_FORMATS,
  removeBackgroundBodyError,
  RemoveBackgroundBody,
} from '@tailor/proto'
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

/** The output file extensions a format's container takes (its table extension; .m4v also for MP4). */
export const formatExtensions = (format: OutputFormat): readonly string[] => {
  const ext = OUTPUT_FORMAT_SPECS[format].extension
  return ext === 'mp4' ? ['.mp4', '.m4v'] : [`.${ext}`]
}
const CONTAINER_EXTENSIONS = new Set(OUTPUT_FORMATS.flatMap(formatExtensions))

export const REMOVE_BG_HELP = `Usage: tailor remove-bg VIDEO -o OUT [options]

Removes the background of VIDEO (a local file, uploaded first and kept 1 hour, or an http(s) URL)
and saves the result. Progress is shown on stderr. The options are checked before anything is
uploaded.

Options:
${optionLines([
  [
    '-o, --output FILE',
    'where to write the result (required); its extension must match the\nformat (.mp4, .webm, .mov, .mkv, .gif; any other extension is taken as is)',
  ],
  [
    '--format F',
    `${OUTPUT_FORMATS.slice(0, 5).join(', ')},\n${OUTPUT_FORMATS.slice(5).join(', ')}\n(default: from OUT's extension: .webm webm_vp9, .mov mov_proresks with a\ntransparent background else mov_h265, .mkv mkv_h264, .gif gif, else mp4_h264)`,
  ],
  [
    '--background B',
    `transparent, #RGB or #RRGGBB (default #000000); transparent needs\n${ALPHA_FORMATS.join(', ')}`,
  ],
  ['--poll-interval MS', 'how often to ask for progress (default 1000)'],
  ...SERVICE_HELP_ROWS,
  ['-h, --help', 'this help'],
])}

Ctrl-C cancels the job. Exit codes: 0 done, 1 the service or the job failed (error_code on
stderr), 2 bad usage, 130 interrupted.
`

/** The output format implied by the output file's extension when --format is not given. */
export function formatFor(outPath: string, background: string | undefined): OutputFormat {
  switch (extname(outPath).toLowerCase()) {
    case '.webm':
      return 'webm_vp9'
    case '.mov':
      return background === 'transparent' ? 'mov_proresks' : 'mov_h265'
    case '.mkv':
      return 'mkv_h264'
    case '.gif':
      return 'gif'
    default:
      return 'mp4_h264'
  }
}

/** --format webm_vp9 -o x.mp4 would write WebM into a .mp4: refused (the user picks the name or the format). */
export function checkOutputExtension(outPath: string, format: OutputFormat): void {
  const ext = extname(outPath).toLowerCase()
  if (!CONTAINER_EXTENSIONS.has(ext) || formatExtensions(format).includes(ext)) return
  const right = formatExtensions(format)[0]!
  throw new UsageError(
    `--format ${format} writes ${right} files, but OUT is ${outPath}: name it ${outPath.slice(0, -ext.length)}${right}, or leave --format out to take the format from OUT's extension`,
  )
}

/** The service's own rules for the body (proto's schema), checked before any upload; a refusal says it in the CLI's words. */
export function checkOptions(
  format: OutputFormat,
  background: string | undefined,
  outPath?: string,
): void {
  const raw = {
    video_url: 'https://example.com/video.mp4',
    output_format: format,
    ...(background !== undefined ? { background_color: background } : {}),
  }
  const r = RemoveBackgroundBody.safeParse(raw)
  if (r.success) return
  const msg = removeBackgroundBodyError(raw, r.error).message
  throw new UsageError(
    msg
      .replace(
        /background_color "transparent" requires output_format/,
        '--background transparent needs --format',
      )
      .replace(/^background_color/, '--background')
      .replace(/\.$/, '') +
      (outPath !== undefined && background === 'transparent'
        ? ` (${CONTAINER_EXTENSIONS.has(extname(outPath).toLowerCase()) ? "from OUT's extension" : 'the default for an OUT without a video extension'}): name OUT .webm, .mov or .gif, or pass --format`
        : ''),
  )
}

export async function removeBgCommand(argv: string[], io: CliIO): Promise<number> {
  const intr = interruptSignal()
  let jobId: string | null = null
  let client: ReturnType<typeof createClient> | null = null
  try {
    const { values, positionals } = parseServiceArgs(argv, {
      output: { type: 'string', short: 'o' },
      format: { type: 'string' },
      background: { type: 'string' },
      'poll-interval': { type: 'string' },
    })
    if (values.help === true) {
      io.stdout.write(REMOVE_BG_HELP)
      return EXIT.ok
    }
    if (positionals.length !== 1) {
      throw new UsageError(`expected one VIDEO, got ${positionals.length} argument(s)`)
    }
    if (values.output === undefined) throw new UsageError('-o OUT is required')
    const format = (values.format ?? formatFor(values.output, values.background)) as OutputFormat
    if (!OUTPUT_FORMATS.includes(format)) {
      throw new UsageError(
        `--format must be one of ${OUTPUT_FORMATS.join(', ')}; got ${values.format}`,
      )
    }
    checkOutputExtension(values.output, format)
    checkOptions(format, values.background, values.format === undefined ? values.output : undefined)
    const pollIntervalMs =
      values['poll-interval'] === undefined ? 1000 : Number(values['poll-interval'])
    if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 50) {
      throw new UsageError('--poll-interval must be a whole number of milliseconds, at least 50')
    }
    client = createClient(values, io)
    const signal = intr.signal

    const videoUrl = await resolveInput(client, positionals[0]!, 'VIDEO', io, signal)
    const job = await client.removeVideoBackground(
      {
        video_url: videoUrl,
        output_format: format,
        ...(values.background !== undefined ? { background_color: values.background } : {}),
      },
      { signal },
    )
    jobId = job.job_id
    io.stderr.write(`job ${jobId} (${format})\n`)
    const bar = createProgressBar(io.stderr, 'remove-bg')
    let doc
    try {
      doc = await client.waitForJob('remove-background', jobId, {
        signal,
        pollIntervalMs,
        onProgress: (d) => bar.update(d.status, d.progress, d.attempt),
      })
    } finally {
      bar.done()
    }
    const bytes = await saveResult(client, doc.result_url!, userPath(io, values.output), signal)
    io.stderr.write(`saved ${values.output} (${bytes} bytes)\n`)
    return EXIT.ok
  } catch (err) {
    if (
      err instanceof TailorError &&
      err.errorCode === 'aborted' &&
      jobId !== null &&
      client !== null
    ) {
      // Ctrl-C: the job would go on without us; stop it.
      await client.cancelJob('remove-background', jobId).then(
        () => io.stderr.write(`cancelled job ${jobId}\n`),
        () => undefined,
      )
    }
    return reportError(err, io, 'remove-bg')
  } finally {
    intr.dispose()
  }
}
