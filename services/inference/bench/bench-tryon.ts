/**
 * `pnpm bench:tryon`: end-to-end try-on latency for 768×1024 inputs, excluding the URL fetch
 * (decode → engine stages → JPEG encode), p50 / p95 per stage over RUNS runs (default 20) after
 * WARMUP runs, cycling through person × garment pairs of ../shared/media at 768×1024. Prints the
 * machine's load average before and after (the figures are only comparable on a quiet machine) and
 * writes bench-results/tryon/bench.json.
 *
 *   pnpm bench:tryon [--runs 20] [--threads N]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openTryOnEngine } from '../src/engine/tryon/tryon-engine.ts'
import { tryOn } from '../src/jobs/try-on.ts'
import { decodeImage, encodeJpeg, resizeRgb } from '../src/media/image.ts'

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))
const MEDIA = process.env.TAILOR_MEDIA_DIR ?? resolve(ROOT, '../shared/media')
const OUT_DIR = join(ROOT, 'bench-results', 'tryon')
const WARMUP = 2
const PERSONS = ['person_01', 'person_02', 'person_03', 'person_04']
const GARMENTS = ['garment_upper_01', 'garment_upper_02', 'garment_lower_01', 'garment_lower_02', 'garment_full_01']

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, threads: { type: 'string' } } })
const runs = Math.max(1, Number(values.runs))

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

/** Every input at exactly 768×1024 (person_03 and garment_upper_02 are other sizes). */
async function prepare(dir: string, name: string): Promise<string> {
  const img = await decodeImage(join(MEDIA, `${name}.jpg`), { what: name })
  const rgb = img.width === 768 && img.height === 1024 ? img.rgb : await resizeRgb(img.rgb, img.width, img.height, { width: 768, height: 1024 })
  const path = join(dir, `${name}.jpg`)
  await encodeJpeg(rgb, 768, 1024, path, 92)
  return path
}

async function main(): Promise<void> {
  await mkdir(OUT_DIR, { recursive: true })
  const work = await mkdtemp(join(tmpdir(), 'tailor-bench-tryon-'))
  const load0 = loadavg()
  const engine = await openTryOnEngine({
    modelsDir: join(ROOT, 'models', 'dist'),
    ...(values.threads !== undefined ? { intraOpThreads: Number(values.threads) } : {}),
  })
  try {
    const inputs: Record<string, string> = {}
    for (const n of [...PERSONS, ...GARMENTS]) inputs[n] = await prepare(work, n)
    const pairs = PERSONS.flatMap((p) => GARMENTS.map((g) => [p, g] as const))
    const stages: Record<string, number[]> = {}
    for (let i = 0; i < WARMUP + runs; i++) {
      const [p, g] = pairs[i % pairs.length]!
      const dir = await mkdtemp(join(work, 'run-'))
      const r = await tryOn({ personPath: inputs[p]!, garmentPath: inputs[g]!, workDir: dir, options: { preprocessGarment: true, garmentMode: 'auto', removeBackground: false } }, { engine })
      await rm(dir, { recursive: true, force: true })
      if (i < WARMUP) continue
      for (const [k, v] of Object.entries(r.timings)) (stages[k] ??= []).push(v)
    }
    const load1 = loadavg()
    const rows = Object.entries(stages).map(([stage, xs]) => ({ stage, p50_ms: Math.round(pct(xs, 50)), p95_ms: Math.round(pct(xs, 95)) }))
    console.log(`try-on, 768×1024 person and garment, ${runs} runs (+${WARMUP} warm-up), ${availableParallelism()} cores, ORT ${engine.provider}`)
    console.log(`load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`)
    console.table(rows)
    await writeFile(join(OUT_DIR, 'bench.json'), JSON.stringify({ runs, cores: availableParallelism(), provider: engine.provider, loadBefore: load0, loadAfter: load1, stages: rows }, null, 2))
  } finally {
    await engine.close()
    await rm(work, { recursive: true, force: true })
  }
}

await main()
