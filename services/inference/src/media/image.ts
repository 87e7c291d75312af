/**
 * Still images: the ONLY module that imports sharp (STYLE.md §3.2, §3.7).
 *
 * Uploads are untrusted: the file size and the header's pixel dimensions are checked before any
 * pixel is decoded, decoding runs with `failOn: 'error'` and `limitInputPixels`, and EXIF
 * orientation is applied (`.rotate()`), so callers always get upright raw pixels.
 */
import { stat } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import sharp from 'sharp'
import { AppError } from '@tailor/proto'

sharp.cache(false)
sharp.concurrency(1)

export interface ImageLimits {
  maxBytes: number
  minSidePx: number
  maxSidePx: number
}

/** ARCHITECTURE.md §2 defaults for try-on images. */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxBytes: 25 * 1024 * 1024,
  minSidePx: 64,
  maxSidePx: 6000,
}

/** Decoded, upright pixels: `rgb` is w·h·3 bytes; `alpha` (w·h) only when the file has an alpha channel. */
export interface RasterImage {
  width: number
  height: number
  rgb: Uint8Array
  alpha: Uint8Array | null
  /** The container format sharp recognised (jpeg, png, webp, …). */
  format: string
}

/** Formats we accept. SVG/PDF are refused: they are programs, not photos. */
const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'heif'])

/** Magic numbers of image containers: bytes that claim to be an image but fail to decode are `malformed_image`. */
const IMAGE_MAGIC: readonly (readonly number[])[] = [
  [0xff, 0xd8, 0xff], // JPEG
  [0x89, 0x50, 0x4e, 0x47], // PNG
  [0x47, 0x49, 0x46, 0x38], // GIF
  [0x52, 0x49, 0x46, 0x46], // RIFF (WebP)
  [0x49, 0x49, 0x2a, 0x00], // TIFF LE
  [0x4d, 0x4d, 0x00, 0x2a], // TIFF BE
]

async function looksLikeImage(path: string): Promise<boolean> {
  const fh = await open(path, 'r')
  try {
    const head = Buffer.alloc(12)
    const { bytesRead } = await fh.read(head, 0, 12, 0)
    const h = head.subarray(0, bytesRead)
    if (h.length >= 12 && h.toString('latin1', 4, 8) === 'ftyp') return true // AVIF/HEIF
    return IMAGE_MAGIC.some((m) => m.every((b, i) => h[i] === b))
  } finally {
    await fh.close()
  }
}

/**
 * Reads an image file into upright raw RGB (+ alpha when present).
 *
 * Throws AppError:
 * - `file_size_too_large` — the file is larger than `limits.maxBytes`;
 * - `unsupported_image_format` — not recognised as an image at all (HTML, text, random bytes) or a
 *   format we do not accept (SVG, PDF, …);
 * - `malformed_image` — an image container (by its magic number) that does not decode;
 * - `resolution_too_high` / `resolution_too_low` — a side outside [minSidePx, maxSidePx] (checked
 *   from the header, before decoding).
 *
 * `maxWorkSidePx`, when given, downsizes (never enlarges) so that the longer side fits: the garment
 * photo is analysed at a working size, the person photo never is.
 */
export async function decodeImage(
  path: string,
  opts: { what: string; limits?: Partial<ImageLimits>; maxWorkSidePx?: number },
): Promise<RasterImage> {
  const limits = { ...DEFAULT_IMAGE_LIMITS, ...opts.limits }
  const { size } = await stat(path)
  if (size > limits.maxBytes) {
    throw new AppError(
      'file_size_too_large',
      `The ${opts.what} is larger than the ${Math.round(limits.maxBytes / (1024 * 1024))} MB limit.`,
    )
  }
  const maxPixels = limits.maxSidePx * limits.maxSidePx
  let meta: sharp.Metadata
  try {
    meta = await sharp(path, { failOn: 'error', limitInputPixels: false }).metadata()
  } catch (err) {
    if (await looksLikeImage(path)) {
      throw new AppError(
        'malformed_image',
        `The ${opts.what} could not be decoded: the file is damaged or truncated.`,
        { cause: err },
      )
    }
    throw new AppError(
      'unsupported_image_format',
      `The ${opts.what} is not an image in a supported format (JPEG, PNG, WebP, GIF, TIFF, AVIF).`,
      {
        cause: err,
      },
    )
  }
  if (meta.format === undefined || !ACCEPTED_FORMATS.has(meta.format)) {
    throw new AppError(
      'unsupported_image_format',
      `The ${opts.what} is in ${meta.format ?? 'an unknown'} format; use JPEG, PNG, WebP, GIF, TIFF or AVIF.`,
    )
  }
  const w0 = meta.width ?? 0
  const h0 = meta.height ?? 0
  // EXIF orientations 5–8 swap the sides; the limits are symmetric so order does not matter.
  if (w0 > limits.maxSidePx || h0 > limits.maxSidePx) {
    throw new AppError(
      'resolution_too_high',
      `The ${opts.what} is ${w0}×${h0} px; each side must be at most ${limits.maxSidePx} px.`,
    )
  }
  if (w0 < limits.minSidePx || h0 < limits.minSidePx) {
    throw new AppError(
      'resolution_too_low',
      `The ${opts.what} is ${w0}×${h0} px; each side must be at least ${limits.minSidePx} px.`,
    )
  }
  const hasAlpha = meta.hasAlpha === true
  try {
    let img = sharp(path, { failOn: 'error', limitInputPixels: maxPixels, pages: 1 }).rotate()
    if (opts.maxWorkSidePx !== undefined) {
      img = img.resize({
        width: opts.maxWorkSidePx,
        height: opts.maxWorkSidePx,
        fit: 'inside',
        withoutEnlargement: true,
      })
    }
    const { data, info } = await img
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    const n = info.width * info.height
    const rgb = new Uint8Array(n * 3)
    const alpha = hasAlpha ? new Uint8Array(n) : null
    for (let i = 0, j = 0; i < n; i++, j += 4) {
      rgb[i * 3] = data[j]!
      rgb[i * 3 + 1] = data[j + 1]!
      rgb[i * 3 + 2] = data[j + 2]!
      if (alpha !== null) alpha[i] = data[j + 3]!
    }
    return { width: info.width, height: info.height, rgb, alpha, format: meta.format }
  } catch (err) {
    throw new AppError(
      'malformed_image',
      `The ${opts.what} could not be decoded: the file is damaged or truncated.`,
      { cause: err },
    )
  }
}

/**
 * Writes RGB pixels as a baseline sRGB JPEG with no metadata (orientation is already applied).
 * `exifOrientation` (test fixtures only) stores the pixels turned so that a viewer honouring the
 * EXIF tag shows them as given: 6 = stored turned 90° counter-clockwise, tagged "rotate 90° CW".
 */
export async function encodeJpeg(
  rgb: Uint8Array,
  width: number,
  height: number,
  path: string,
  quality = 92,
  o: { exifOrientation?: 1 | 3 | 6 | 8 } = {},
): Promise<number> {
  let img = sharp(rgb, { raw: { width, height, channels: 3 } })
  const undo = { 1: 0, 3: 180, 6: 270, 8: 90 } as const
  if (o.exifOrientation !== undefined && o.exifOrientation !== 1) {
    // Materialise the turn first: sharp applies rotate() after the raw input is read.
    const turned = await img
      .rotate(undo[o.exifOrientation])
      .raw()
      .toBuffer({ resolveWithObject: true })
    img = sharp(turned.data, {
      raw: { width: turned.info.width, height: turned.info.height, channels: 3 },
    }).withMetadata({ orientation: o.exifOrientation })
  }
  const info = await img.jpeg({ quality, chromaSubsampling: '4:4:4', mozjpeg: false }).toFile(path)
  return info.size
}

/** Writes RGB pixels as PNG (contact sheets, debugging). */
export async function encodePng(
  rgb: Uint8Array,
  width: number,
  height: number,
  path: string,
): Promise<void> {
  await sharp(rgb, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 6 })
    .toFile(path)
}

/** Resizes raw RGB pixels (contact sheets, test fixtures). */
export async function resizeRgb(
  rgb: Uint8Array,
  width: number,
  height: number,
  to: { width: number; height: number },
): Promise<Uint8Array> {
  const { data } = await sharp(rgb, { raw: { width, height, channels: 3 } })
    .resize(to.width, to.height, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true })
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}
