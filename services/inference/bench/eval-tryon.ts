/**
 * `pnpm eval:tryon`: every category-compatible person × garment pair of the evaluation set
 * (../shared/media/tryon with labels.json, plus the old ../shared/media pairs) through the real
 * try-on engine in this process, one table of per-pair figures, a summary per split, contact
 * sheets, and optionally the results as JSON (to compare before/after). docs/tryon-eval.md says
 * what every figure means.
 *
 *   pnpm eval:tryon [--split tune,holdout,mixed,dev] [--person person_03] [--garment upper_0]
 *                   [--json out.json] [--compare before.json] [--sheets DIR | --no-sheets]
 *                   [--threads N] [--suggest-floors] [--paired]
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openTryOnEngine } from '../src/engine/tryon/tryon-engine.ts'
import { encodePng } from '../src/media/image.ts'
import {
  filterPairs,
  loadEvalSet,
  SPLITS,
  type EvalPair,
  type Split,
} from './tryon-eval/eval-set.ts'
import { floorsSource } from './tryon-eval/check.ts'
import { BOX_DILATE, CHANGED_DIFF, regionRects } from './tryon-eval/metrics.ts'
import {
  EVAL_OPTIONS,
  REGION_PASS,
  runPairs,
  summarizeAll,
  type PairOutput,
  type PairResult,
  type SplitSummary,
} from './tryon-eval/run-eval.ts'
import { Canvas, drawOutline, drawRect, putImage } from './tryon-eval/sheet.ts'

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))

const { values } = parseArgs({
  options: {
    split: { type: 'string', multiple: true },
    person: { type: 'string', multiple: true },
    garment: { type: 'string', multiple: true },
    json: { type: 'string' },
    compare: { type: 'string' },
    sheets: { type: 'string' },
    'no-sheets': { type: 'boolean', default: false },
    threads: { type: 'string' },
    'suggest-floors': { type: 'boolean', default: false },
    paired: { type: 'boolean', default: false },
  },
})
const list = (xs: string[] | undefined): string[] | undefined =>
  xs
    ?.flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean)
const splits = list(values.split)
for (const s of splits ?? []) {
  if (!(SPLITS as readonly string[]).includes(s)) {
    throw new Error(`--split ${s}: one of ${SPLITS.join(', ')}`)
  }
}

export interface EvalReport {
  when: string
  commit: string
  args: string[]
  options: typeof EVAL_OPTIONS
  changedDiff: number
  boxDilate: number
  regionPass: number
  results: PairResult[]
  summary: SplitSummary[]
}

const pct = (v: number): string => (Number.isNaN(v) ? '–' : `${(100 * v).toFixed(1)} %`)
const num = (v: number | null, d = 3): string =>
  v === null || Number.isNaN(v) ? '–' : v.toFixed(d)

// ---- contact sheets: one per person, three person | garment | result triplets per row ------------
const CW = 210
const CH = 280
const CAP = 30
const PER_ROW = 3

class PersonSheet {
  readonly cv: Canvas
  constructor(
    readonly person: string,
    n: number,
  ) {
    this.cv = new Canvas(PER_ROW * 3 * CW + (PER_ROW - 1) * 12, Math.ceil(n / PER_ROW) * (CH + CAP))
  }

  async add(o: PairOutput, pair: EvalPair, k: number): Promise<void> {
    const x = (k % PER_ROW) * (3 * CW + 12)
    const y = Math.floor(k / PER_ROW) * (CH + CAP)
    const { width: w, height: h } = o.person
    const rects = regionRects(pair.garment.category, pair.person.boxes, w, h)
    const grown = regionRects(pair.garment.category, pair.person.boxes, w, h, BOX_DILATE)
    const green = [40, 220, 60] as const
    const dark = [20, 110, 30] as const
    const at = await putImage(this.cv, o.person.rgb, w, h, x, y, CW, CH)
    for (const r of grown) drawRect(this.cv, at, r, dark)
    for (const r of rects) drawRect(this.cv, at, r, green)
    await putImage(this.cv, o.garment.rgb, o.garment.width, o.garment.height, x + CW, y, CW, CH)
    const r = o.result
    if (o.rgb !== null && o.changed !== null) {
      const at2 = await putImage(this.cv, o.rgb, w, h, x + 2 * CW, y, CW, CH)
      for (const q of rects) drawRect(this.cv, at2, q, green)
      drawOutline(this.cv, at2, o.changed, w, h, [255, 0, 255])
    }
    const ok = r.outcome === 'answered'
    const pass = ok && r.regionScore! >= REGION_PASS && r.detected === r.labelled
    const col = ok
      ? pass
        ? ([200, 255, 200] as const)
        : ([255, 200, 120] as const)
      : ([255, 90, 90] as const)
    this.cv.text(
      x + 4,
      y + CH + 3,
      `${pair.garment.id.replace('/garment_', ' ')} ${pair.split}${pair.paired ? ' paired' : ''}`,
      [230, 230, 230],
    )
    const line2 = ok
      ? `${r.detected}/${r.labelled} region ${num(r.regionScore, 2)} box ${num(r.boxChanged, 2)}${r.oldLeft !== null && !r.paired ? ` old ${num(r.oldLeft, 2)}` : ''}${r.ssim !== null ? ` ssim ${num(r.ssim, 3)}` : ''} ${Math.round(r.ms)}ms`
      : `${r.code ?? 'error'}`
    this.cv.text(x + 4, y + CH + 16, line2, col)
  }
}

async function main(): Promise<void> {
  const set = await loadEvalSet()
  const pairs = filterPairs(set.pairs, {
    ...(splits ? { split: splits as Split[] } : {}),
    ...(values.person ? { person: list(values.person)! } : {}),
    ...(values.garment ? { garment: list(values.garment)! } : {}),
  }).filter((p) => !values.paired || p.paired)
  if (pairs.length === 0) throw new Error('no pair matches the filters')
  const commit = await gitHead()
  const sheetDir = values['no-sheets']
    ? null
    : resolve(values.sheets ?? join(ROOT, 'bench-results', 'tryon', 'eval'))
  if (sheetDir !== null) await mkdir(sheetDir, { recursive: true })
  const load0 = loadavg()
  console.log(
    `eval:tryon — ${pairs.length} pairs (${set.pairs.length} in the set), engine at ${commit}, ${availableParallelism()} cores`,
  )
  const engine = await openTryOnEngine({
    modelsDir: join(ROOT, 'models', 'dist'),
    ...(values.threads !== undefined ? { intraOpThreads: Number(values.threads) } : {}),
  })
  const sheets = new Map<string, PersonSheet>()
  const counts = new Map<string, number>()
  for (const p of pairs) counts.set(p.person.id, (counts.get(p.person.id) ?? 0) + 1)
  const done = new Map<string, number>()
  const written: string[] = []
  let results: PairResult[]
  try {
    results = await runPairs(engine, pairs, async (o, i) => {
      const pair = pairs[i]!
      const r = o.result
      process.stdout.write(
        `  [${i + 1}/${pairs.length}] ${r.pair}: ${r.outcome === 'answered' ? `${r.detected} region ${num(r.regionScore, 2)}` : (r.code ?? `error: ${r.message}`)} ${Math.round(r.ms)} ms\n`,
      )
      if (sheetDir === null) return
      let sheet = sheets.get(pair.person.id)
      if (sheet === undefined) {
        sheets.set(
          pair.person.id,
          (sheet = new PersonSheet(pair.person.id, counts.get(pair.person.id)!)),
        )
      }
      const k = done.get(pair.person.id) ?? 0
      done.set(pair.person.id, k + 1)
      await sheet.add(o, pair, k)
      if (k + 1 === counts.get(pair.person.id)) {
        const file = join(sheetDir, `${pair.person.id.replace('/', '-')}.png`)
        await encodePng(sheet.cv.rgb, sheet.cv.width, sheet.cv.height, file)
        written.push(file)
        sheets.delete(pair.person.id)
      }
    })
  } finally {
    await engine.close()
  }
  const load1 = loadavg()

  console.log(
    '\nper pair (region: share of changed pixels inside the labelled box +5 %; box: share of the box that changed; warp: share of the warped garment, before clipping, inside the box +5 %; old: share of the old garment pixels in the box left unchanged; ssim/mae: paired only, inside the garment box)',
  )
  console.table(
    results.map((r) => ({
      pair: r.pair
        .replace(/(tryon|dev)\//g, (m) => (m === 'dev/' ? 'dev:' : ''))
        .replace(/garment_|person_/g, ''),
      split: r.split,
      result: r.outcome === 'answered' ? 'answered' : (r.code ?? 'ERROR'),
      'detected/labelled': `${r.detected ?? '–'}/${r.labelled}${r.detected !== null && r.detected !== r.labelled ? ' ✗' : ''}`,
      region: num(r.regionScore, 2),
      box: num(r.boxChanged, 2),
      warp: num(r.warpInside, 2),
      old: num(r.oldLeft, 2),
      ssim: num(r.ssim, 3),
      mae: num(r.mae, 1),
      ms: Math.round(r.ms),
    })),
  )
  const summary = summarizeAll(results)
  printSummary(summary)
  console.log(
    `load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')} (times are only comparable on a quiet machine)`,
  )
  if (written.length > 0) {
    console.log(
      `contact sheets (person | garment | result; green: labelled box, dark green: +5 %, magenta: changed pixels) in ${sheetDir}`,
    )
  }

  if (values['suggest-floors']) {
    console.log(`\nfloors just under this run (thresholds.ts):\n${floorsSource(results, summary)}`)
  }
  if (values.compare !== undefined) {
    compare(JSON.parse(await readFile(values.compare, 'utf8')) as EvalReport, results)
  }
  if (values.json !== undefined) {
    const report: EvalReport = {
      when: new Date().toISOString(),
      commit,
      args: process.argv.slice(2),
      options: EVAL_OPTIONS,
      changedDiff: CHANGED_DIFF,
      boxDilate: BOX_DILATE,
      regionPass: REGION_PASS,
      results,
      summary,
    }
    await writeFile(values.json, `${JSON.stringify(report, null, 1)}\n`)
    console.log(`wrote ${values.json}`)
  }
}

/** The checked-out commit, read from .git (a worktree's .git is a file naming its git dir). */
async function gitHead(): Promise<string> {
  try {
    let gitDir = join(ROOT, '.git')
    const dotGit = await readFile(gitDir, 'utf8').catch(() => null)
    if (dotGit !== null) gitDir = resolve(ROOT, dotGit.replace(/^gitdir:\s*/, '').trim())
    const head = (await readFile(join(gitDir, 'HEAD'), 'utf8')).trim()
    if (!head.startsWith('ref: ')) return head.slice(0, 12)
    const ref = head.slice(5)
    const common = await readFile(join(gitDir, 'commondir'), 'utf8').then(
      (c) => resolve(gitDir, c.trim()),
      () => gitDir,
    )
    for (const dir of [gitDir, common]) {
      const sha = await readFile(join(dir, ref), 'utf8').catch(() => null)
      if (sha !== null) return `${sha.trim().slice(0, 12)} (${ref.replace('refs/heads/', '')})`
    }
    const packed = await readFile(join(common, 'packed-refs'), 'utf8')
    const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`))
    return line ? `${line.slice(0, 12)} (${ref.replace('refs/heads/', '')})` : 'unknown'
  } catch {
    return 'unknown'
  }
}

export function printSummary(summary: readonly SplitSummary[]): void {
  console.log(
    '\nsummary per split (targets: category ≥ 95 %, region ≥ 0.8 on ≥ 90 % of answered pairs, refusals ≤ 10 %)',
  )
  console.table(
    summary.map((s) => ({
      split: s.split,
      pairs: s.pairs,
      'category right': `${s.categoryRight}/${s.garments} (${pct(s.categoryAccuracy)})`,
      'region ≥ 0.8': pct(s.regionPass),
      'mean region': num(s.regionScoreMean, 3),
      'mean box': num(s.boxChangedMean, 3),
      'mean warp': num(s.warpInsideMean, 3),
      'old left': s.oldLeftPairs === 0 ? '–' : `${num(s.oldLeftMean, 3)} (${s.oldLeftPairs})`,
      refused: `${s.pairs - s.answered} (${pct(s.refusedShare)})${
        Object.keys(s.refusalCodes).length > 0
          ? ` ${Object.entries(s.refusalCodes)
              .map(([k, v]) => `${k}×${v}`)
              .join(' ')}`
          : ''
      }`,
      'paired ssim': s.pairedPairs === 0 ? '–' : `${num(s.pairedSsimMean, 3)} (${s.pairedPairs})`,
      'paired mae': s.pairedPairs === 0 ? '–' : num(s.pairedMaeMean, 1),
      'p50 ms': Math.round(s.p50Ms),
    })),
  )
}

function compare(before: EvalReport, after: readonly PairResult[]): void {
  const old = new Map(before.results.map((r) => [r.pair, r]))
  console.log(`\ncompared with ${values.compare} (engine ${before.commit}, ${before.when})`)
  const rows = []
  let better = 0
  let n = 0
  for (const r of after) {
    const b = old.get(r.pair)
    if (b === undefined || !r.paired) continue
    n++
    const ok = r.ssim !== null && b.ssim !== null && r.ssim > b.ssim
    if (ok) better++
    rows.push({
      pair: r.pair,
      'ssim before': num(b.ssim, 4),
      'ssim after': num(r.ssim, 4),
      'mae before': num(b.mae, 1),
      'mae after': num(r.mae, 1),
      better: ok ? 'yes' : 'NO',
    })
  }
  if (rows.length > 0) console.table(rows)
  console.log(`paired SSIM better than before on ${better}/${n} paired pairs`)
  const ob = new Map(before.summary.map((s) => [s.split, s]))
  console.table(
    summarizeAll(after).map((s) => {
      const b = ob.get(s.split)
      return {
        split: s.split,
        'category before→after': `${pct(b?.categoryAccuracy ?? Number.NaN)} → ${pct(s.categoryAccuracy)}`,
        'region ≥ 0.8 before→after': `${pct(b?.regionPass ?? Number.NaN)} → ${pct(s.regionPass)}`,
        'old left before→after': `${num(b?.oldLeftMean ?? Number.NaN, 3)} → ${num(s.oldLeftMean, 3)}`,
        'refused before→after': `${pct(b?.refusedShare ?? Number.NaN)} → ${pct(s.refusedShare)}`,
        'p50 ms before→after': `${Math.round(b?.p50Ms ?? Number.NaN)} → ${Math.round(s.p50Ms)}`,
      }
    }),
  )
}

await main()
