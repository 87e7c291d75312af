import { open } from 'node:fs/promises'
import { extname } from 'node:path'

/** Media types by file extension, for files whose first bytes say nothing we know. */
const BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.avif': 'image/avif',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
}

const ascii = (b: Uint8Array, from: number, to: number): string =>
  String.fromCharCode(...b.subarray(from, to))

/** The media type from a file's first bytes (magic numbers), else null. */
export function sniffMediaType(b: Uint8Array): string | null {
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (b[0] === 0x89 && ascii(b, 1, 4) === 'PNG') return 'image/png'
  if (ascii(b, 0, 4) === 'GIF8') return 'image/gif'
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp'
  if (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*') return 'image/tiff'
  if (ascii(b, 4, 8) === 'ftyp') {
    const brand = ascii(b, 8, 12)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (brand === 'qt  ') return 'video/quicktime'
    return 'video/mp4'
  }
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) {
    return ascii(b, 0, Math.min(b.length, 64)).includes('webm') ? 'video/webm' : 'video/x-matroska'
  }
  return null
}

/** Content-Type to upload a local file with: its magic bytes first, its extension second; null when neither tells. */
export async function mediaTypeOf(path: string): Promise<string | null> {
  const fh = await open(path, 'r')
  try {
    const buf = new Uint8Array(64)
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0)
    return (
      sniffMediaType(buf.subarray(0, bytesRead)) ??
      BY_EXTENSION[extname(path).toLowerCase()] ??
      null
    )
  } finally {
    await fh.close()
  }
}
