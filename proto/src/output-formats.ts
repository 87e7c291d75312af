/**
 * The remove-background output formats, defined once: the request validation (api.ts, jobs.ts),
 * the OpenAPI document, the worker (result key and content type) and the encoder
 * (inference media/video.ts: `ENCODER_SETTINGS[encoder]`) all derive from this table.
 */

/** The ffmpeg muxer a format writes. */
export type Container = 'mp4' | 'webm' | 'mov' | 'matroska' | 'gif'
/** The key of the encoder settings in inference `media/video.ts` (`ENCODER_SETTINGS`). */
export type EncoderKey = 'h264' | 'h265' | 'vp9' | 'prores_4444' | 'gif'

export interface OutputFormatSpec {
  container: Container
  /** The result file's extension (and the result key's). */
  extension: string
  /** The result's MIME type. */
  contentType: string
  /** Container and codec carry an alpha channel: `background_color: transparent` is allowed. */
  alpha: boolean
  encoder: EncoderKey
}

export const OUTPUT_FORMAT_SPECS = {
  mp4_h264: {
    container: 'mp4',
    extension: 'mp4',
    contentType: 'video/mp4',
    alpha: false,
    encoder: 'h264',
  },
  mp4_h265: {
    container: 'mp4',
    extension: 'mp4',
    contentType: 'video/mp4',
    alpha: false,
    encoder: 'h265',
  },
  webm_vp9: {
    container: 'webm',
    extension: 'webm',
    contentType: 'video/webm',
    alpha: true,
    encoder: 'vp9',
  },
  mov_h265: {
    container: 'mov',
    extension: 'mov',
    contentType: 'video/quicktime',
    alpha: false,
    encoder: 'h265',
  },
  mov_proresks: {
    container: 'mov',
    extension: 'mov',
    contentType: 'video/quicktime',
    alpha: true,
    encoder: 'prores_4444',
  },
  mkv_h264: {
    container: 'matroska',
    extension: 'mkv',
    contentType: 'video/x-matroska',
    alpha: false,
    encoder: 'h264',
  },
  mkv_h265: {
    container: 'matroska',
    extension: 'mkv',
    contentType: 'video/x-matroska',
    alpha: false,
    encoder: 'h265',
  },
  mkv_vp9: {
    container: 'matroska',
    extension: 'mkv',
    contentType: 'video/x-matroska',
    alpha: false,
    encoder: 'vp9',
  },
  gif: {
    container: 'gif',
    extension: 'gif',
    contentType: 'image/gif',
    alpha: true,
    encoder: 'gif',
  },
} as const satisfies Record<string, OutputFormatSpec>

export type OutputFormat = keyof typeof OUTPUT_FORMAT_SPECS
/** Every output format, in the table's order (the order error messages and docs list them in). */
export const OUTPUT_FORMATS = Object.keys(OUTPUT_FORMAT_SPECS) as [OutputFormat, ...OutputFormat[]]
/** Formats whose container and codec can carry an alpha channel (spec 2.3). */
export const ALPHA_FORMATS: readonly OutputFormat[] = OUTPUT_FORMATS.filter(
  (f) => OUTPUT_FORMAT_SPECS[f].alpha,
)

/**
 * The alpha rule, in one place: a transparent background (`background_color: transparent`) needs
 * a format that carries alpha. Returns the message for an `invalid_parameter` error, or null when
 * the pair is allowed. Checked by the request schema, the worker and the encoder.
 */
export function transparencyIssue(transparent: boolean, format: OutputFormat): string | null {
  if (!transparent || OUTPUT_FORMAT_SPECS[format].alpha) {
    return null
  }
  return `background_color "transparent" requires output_format ${ALPHA_FORMATS.join(', ')} (formats that carry alpha); got ${format}.`
}

/** MIME type by result-key extension: the output formats' plus try-on's JPEG. */
const CONTENT_TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    OUTPUT_FORMATS.map((f) => [
      OUTPUT_FORMAT_SPECS[f].extension,
      OUTPUT_FORMAT_SPECS[f].contentType,
    ]),
  ),
  jpg: 'image/jpeg',
}

/** Content type of a result key, from its extension; octet-stream when unknown. */
export function contentTypeForKey(key: string): string {
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase()
  return CONTENT_TYPES_BY_EXTENSION[ext] ?? 'application/octet-stream'
}
