/**
 * `pnpm tryon:sheet`: every person × garment in ../shared/media through the try-on engine, into one
 * contact sheet (bench-results/tryon/contact-sheet.png, git-ignored). Row 0 shows the garments,
 * column 0 the people; each cell is the result with its detected category and total ms.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openTryOnEngine } from '../src/engine/tryon/tryon-engine.ts'
import { tryOn } from '../src/jobs/try-on.ts'
import { decodeImage, encodePng, resizeRgb } from '../src/media/image.ts'

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))
const MEDIA = process.env.TAILOR_MEDIA_DIR ?? resolve(ROOT, '../shared/media')
const OUT_DIR = join(ROOT, 'bench-results', 'tryon')
const PERSONS = ['person_01', 'person_02', 'person_03', 'person_04']
const GARMENTS = [
  'garment_upper_01',
  'garment_upper_02',
  'garment_lower_01',
  'garment_lower_02',
  'garment_full_01',
]
const CELL_W = 300
const CELL_H = 400
const removeBackground = process.argv.includes('--remove-background')

async function cell(path: string, maxSide?: number): Promise<Uint8Array> {
  const img = await decodeImage(path, {
    what: 'image',
    ...(maxSide ? { maxWorkSidePx: maxSide } : {}),
  })
  // Fit inside the cell on grey.
  const k = Math.min(CELL_W / img.width, CELL_H / img.height)
  const w = Math.max(1, Math.round(img.width * k))
  const h = Math.max(1, Math.round(img.height * k))
  const small = await resizeRgb(img.rgb, img.width, img.height, { width: w, height: h })
  const out = new Uint8Array(CELL_W * CELL_H * 3).fill(128)
  const ox = (CELL_W - w) >> 1
  const oy = (CELL_H - h) >> 1
  for (let y = 0; y < h; y++) {
    out.set(small.subarray(y * w * 3, (y + 1) * w * 3), ((oy + y) * CELL_W + ox) * 3)
  }
  return out
}

async function main(): Promise<void> {
  await mkdir(OUT_DIR, { recursive: true })
  const engine = await openTryOnEngine({ modelsDir: join(ROOT, 'models', 'dist') })
  const work = await mkdtemp(join(tmpdir(), 'tailor-sheet-'))
  const cols = GARMENTS.length + 1
  const rows = PERSONS.length + 1
  const W = cols * CELL_W
  const sheet = new Uint8Array(W * rows * CELL_H * 3).fill(32)
  const put = (c: Uint8Array, col: number, row: number) => {
    for (let y = 0; y < CELL_H; y++) {
      sheet.set(
        c.subarray(y * CELL_W * 3, (y + 1) * CELL_W * 3),
        ((row * CELL_H + y) * W + col * CELL_W) * 3,
      )
    }
  }
  try {
    for (const [j, g] of GARMENTS.entries()) {
      put(await cell(join(MEDIA, `${g}.jpg`), 1024), j + 1, 0)
    }
    for (const [i, p] of PERSONS.entries()) {
      put(await cell(join(MEDIA, `${p}.jpg`)), 0, i + 1)
      for (const [j, g] of GARMENTS.entries()) {
        const dir = join(work, `${p}-${g}`)
        await mkdir(dir)
        const r = await tryOn(
          {
            personPath: join(MEDIA, `${p}.jpg`),
            garmentPath: join(MEDIA, `${g}.jpg`),
            workDir: dir,
            options: { preprocessGarment: true, garmentMode: 'auto', removeBackground },
          },
          { engine },
        )
        console.log(`${p} × ${g}: ${r.category} ${Math.round(r.timings.total ?? 0)} ms`)
        put(await cell(r.outputPath), j + 1, i + 1)
      }
    }
    const file = join(OUT_DIR, removeBackground ? 'contact-sheet-white.png' : 'contact-sheet.png')
    await encodePng(sheet, W, rows * CELL_H, file)
    console.log(`wrote ${file}`)
  } finally {
    await rm(work, { recursive: true, force: true })
    await engine.close()
  }
}

await main()
