/**
 * Garment shape analysis on a product-photo mask: the category (upper / lower / full) and the
 * landmarks the warp needs, all in garment-image pixels.
 *
 * Category rules (from the silhouette alone, so they work for any print or colour):
 * - two legs: in the bottom 15 % of the garment's height, most rows have two separate runs with
 *   a gap near the middle → `lower` (trousers, jeans, shorts);
 * - otherwise a tall silhouette (height / width > 1.45) → `full` (dress, jumpsuit);
 * - otherwise, if the widest row is in the top 45 % (shoulders and sleeves) or the top rows have a
 *   neckline notch → `upper`; else (widest at the bottom: a skirt) → `lower`.
 *
 * Landmarks (checked against hand labels of every garment of the evaluation set:
 * bench/tryon-eval/garment-landmarks.json, `pnpm eval:garment-landmarks`):
 * - upper / full: the shoulder points from the top outline (where it turns down steeply: the
 *   sleeve's outer side, an armhole, a strap's outer edge; shoulderPoints), the torso's side lines
 *   (half the median torso width either side of its centre, measured below the sleeves for tops —
 *   below the cuffs when hanging sleeves touch the body — and on the bodice for dresses), the neck
 *   (top of the centre column), the armpits (where the side line stops running along a sleeve, or
 *   out of a sleeveless armhole), the hem corners (the outline points farthest down and out at
 *   HEM_CORNER_SLOPE: a square corner, where a rounded hem leaves the side line), and per sleeve
 *   its cuff (the sleeve pixels farthest from the shoulder–armpit seam; none when nothing reaches
 *   past the side line or hangs below the armpit: sleeveless).
 * - lower: the waistband corners (the outline's extent over its first rows), the crotch (top of
 *   the gap between the legs), the hips (outline extents at the crotch, or at most 0.75 × the waist
 *   width below the waistband for wide short legs), and per leg the hem's outer and inner corners
 *   (as a top's hem corners, per leg; a skirt's two).
 */
import { clamp, type Plane, type Point } from './raster.ts'

export type GarmentCategory = 'upper' | 'lower' | 'full'

export interface Run {
  x0: number
  x1: number
}

export interface Bbox {
  x0: number
  y0: number
  x1: number
  y1: number
}

export function rowRuns(m: Plane, y: number, minLen = 2): Run[] {
  const runs: Run[] = []
  let start = -1
  const row = y * m.width
  for (let x = 0; x <= m.width; x++) {
    const on = x < m.width && m.data[row + x]! > 0.5
    if (on && start < 0) start = x
    if (!on && start >= 0) {
      if (x - start >= minLen) runs.push({ x0: start, x1: x - 1 })
      start = -1
    }
  }
  return runs
}

export function maskBbox(m: Plane): Bbox | null {
  let x0 = m.width
  let y0 = m.height
  let x1 = -1
  let y1 = -1
  for (let y = 0; y < m.height; y++) {
    for (let x = 0; x < m.width; x++) {
      if (m.data[y * m.width + x]! > 0.5) {
        if (x < x0) x0 = x
        if (x > x1) x1 = x
        if (y < y0) y0 = y
        if (y > y1) y1 = y
      }
    }
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 }
}

/** The run nearest to x (null: no runs). */
const nearestRun = (runs: Run[], x: number): Run | null => {
  let best: Run | null = null
  let bd = Infinity
  for (const r of runs) {
    const d = x < r.x0 ? r.x0 - x : x > r.x1 ? x - r.x1 : 0
    if (d < bd) {
      bd = d
      best = r
    }
  }
  return best
}

const extent = (runs: Run[]): Run | null =>
  runs.length === 0 ? null : { x0: runs[0]!.x0, x1: runs[runs.length - 1]!.x1 }

/**
 * Body length / narrowest body width at or above which a garment worn from the shoulders is a dress.
 * Product photos of tees and shirts measure 1.4–2.2 (the narrowest run is the waist, the height
 * includes the collar), a long muscle tank 2.55, dresses from a one-shoulder mini (2.9) up.
 */
export const DRESS_BODY_ASPECT = 2.7

/** One row slice of the silhouette: its runs (left to right). */
export interface SliceRow {
  y: number
  runs: Run[]
}

/**
 * What the silhouette says, in numbers that do not depend on the photo's size (fractions of the
 * garment's height `h` or its widest extent `W`).
 */
export interface CategoryEvidence {
  category: GarmentCategory
  /** Height / width of the bounding box. */
  aspect: number
  /** Two legs: one waistband at the top, split by a centred gap (the crotch) into two lobes that reach the hem. */
  legs: boolean
  /** Depth of the crotch (fraction of h) when `legs`. */
  crotchAt: number
  /** Separate lobes at the top that join lower down (straps, shoulders around a neck opening): 0, 1, 2… */
  topLobes: number
  /** Share of the rows with a narrow run each side of the body run (sleeves hanging beside the body). */
  sleeveRows: number
  /** Width of the top band (3 % of h below the top) / W: a waistband is wide, a collar or straps are narrow. */
  topBand: number
  /** Width at 20 % of h / the top band: shoulders widen fast below a neck; a skirt widens slowly. */
  shoulderRise: number
  /** 1 − (narrowest row between the widest row of the top quarter and 45 % of h) / that widest row. */
  armholeNarrowing: number
  /** Body length / body width (the narrowest central run between 30 and 70 % of h): a dress is long. */
  bodyAspect: number
  /** Set when the category came from the wearer's pose (a garment photographed on a model). */
  fromPose?: boolean
}

/** The silhouette's runs row by row (runs shorter than `minLen` are noise). */
export function slices(m: Plane, box: Bbox, minLen: number): SliceRow[] {
  const out: SliceRow[] = []
  for (let y = box.y0; y <= box.y1; y++) out.push({ y, runs: rowRuns(m, y, minLen) })
  return out
}

interface Lobe {
  y0: number
  y1: number
  /** Run of the lobe on its first and last row. */
  first: Run
  last: Run
  /** Lobes it came from (a merge) and lobes it split into. */
  from: number[]
  into: number[]
}

const overlaps = (a: Run, b: Run): boolean => a.x0 <= b.x1 && b.x0 <= a.x1

/**
 * The silhouette's branching structure, scanned top to bottom: a lobe is a run followed from row to
 * row while it overlaps exactly one run; where one run meets two it splits, where two meet one
 * they merge (a Reeb graph of the height function).
 */
export function lobes(rows: readonly SliceRow[]): Lobe[] {
  const all: Lobe[] = []
  let active: { lobe: number; run: Run }[] = []
  for (const { y, runs } of rows) {
    const next: { lobe: number; run: Run }[] = []
    const parentsOf = runs.map((r) => active.filter((a) => overlaps(a.run, r)).map((a) => a.lobe))
    const childCount = new Map<number, number>()
    for (const ps of parentsOf) for (const p of ps) childCount.set(p, (childCount.get(p) ?? 0) + 1)
    runs.forEach((r, i) => {
      const ps = parentsOf[i]!
      if (ps.length === 1 && childCount.get(ps[0]!) === 1) {
        const l = all[ps[0]!]!
        l.y1 = y
        l.last = r
        next.push({ lobe: ps[0]!, run: r })
        return
      }
      const id = all.length
      all.push({ y0: y, y1: y, first: r, last: r, from: ps, into: [] })
      for (const p of ps) all[p]!.into.push(id)
      next.push({ lobe: id, run: r })
    })
    active = next
  }
  return all
}

const widthAt = (rows: readonly SliceRow[], i: number): number => {
  const r = rows[Math.max(0, Math.min(rows.length - 1, i))]!.runs
  return r.length === 0 ? 0 : r[r.length - 1]!.x1 - r[0]!.x0 + 1
}

/**
 * Category from the silhouette's topology and width profile (any print or colour, any size):
 * - `lower` with legs: one waistband lobe from the top splits, at a gap near its centre, into two
 *   lobes that both reach the hem, with no sleeves beside it and no straps or shoulders above it;
 * - `upper` / `full` (something worn from the shoulders): two or more lobes at the top that join
 *   (straps, the shoulders either side of a neck opening), or sleeves (a narrow run each side of
 *   the body over a stretch of rows), or a narrow top band that widens fast (neck → shoulders:
 *   shoulderRise ≥ 1.45); then `full` when the body is long: body length ≥ 1.7 × its narrowest width
 *   below the armholes (a tunic-length top is ~1.3, a mini dress ~1.8);
 * - otherwise `lower` (a skirt: one wide waistband that widens slowly or not at all).
 */
/** Least depth of a top lobe (shoulder, strap) as a share of the garment's height. */
export const TOP_LOBE_MIN_H = 0.06

export function detectCategory(m: Plane, box: Bbox): CategoryEvidence {
  const h = box.y1 - box.y0 + 1
  const W = box.x1 - box.x0 + 1
  const aspect = h / W
  const rows = slices(m, box, Math.max(2, Math.round(0.015 * W)))
  const at = (f: number) => Math.round(f * (h - 1))
  const minLobeH = Math.max(3, 0.03 * h)

  const all = lobes(rows)
  // Top lobes: start within the top 12 %, reach down at least TOP_LOBE_MIN_H of the height (a neck
  // opening or the gap between straps is that deep; an uneven waistband edge or a belt's buckle
  // makes bumps of a few rows), and join another lobe lower down.
  const topStarts = all.filter((l) => l.from.length === 0 && l.y0 - box.y0 < 0.12 * h)
  const joinsLater = (i: number) => all[i]!.into.some((c) => all[c]!.from.length >= 2)
  const topLobes = topStarts.filter(
    (l) => l.y1 - l.y0 + 1 >= Math.max(minLobeH, TOP_LOBE_MIN_H * h) && joinsLater(all.indexOf(l)),
  ).length

  // Sleeves: rows with a run each side of the run that holds the body's centre, both narrow.
  const cx = (box.x0 + box.x1) / 2
  let sleeve = 0
  let counted = 0
  for (let i = at(0.1); i <= at(0.95); i++) {
    counted++
    const runs = rows[i]!.runs
    if (runs.length < 3) continue
    const bi = runs.findIndex((r) => r.x0 <= cx && r.x1 >= cx)
    if (bi <= 0 || bi >= runs.length - 1) continue
    const body = runs[bi]!
    const left = runs[0]!
    const right = runs[runs.length - 1]!
    const bw = body.x1 - body.x0
    if (left.x1 - left.x0 < 0.8 * bw && right.x1 - right.x0 < 0.8 * bw) sleeve++
  }
  const sleeveRows = counted === 0 ? 0 : sleeve / counted

  // Legs: a lobe that starts at the top with no parents splits into exactly two lobes, both of which
  // reach the bottom 6 %, at a gap near the middle of the parent's last run.
  let legs = false
  let crotchAt = 0
  for (const l of all) {
    if (l.from.length !== 0 || l.y0 - box.y0 > 0.05 * h || l.into.length !== 2) continue
    const [a, b] = l.into.map((c) => all[c]!) as [Lobe, Lobe]
    if (a.from.length !== 1 || b.from.length !== 1) continue
    if (a.y1 < box.y1 - 0.06 * h || b.y1 < box.y1 - 0.06 * h) continue
    // Legs are at least a tenth of the garment's length (hot pants' ~20 %); a split just
    // above the hem is a notch or a vent, not a crotch.
    if (box.y1 - l.y1 < 0.1 * h) continue
    if (a.into.length > 0 || b.into.length > 0) continue
    const pw = l.last.x1 - l.last.x0
    const gapAt = (a.first.x1 + b.first.x0) / 2
    if (Math.abs(gapAt - (l.last.x0 + l.last.x1) / 2) > 0.2 * pw) continue
    // A waistband is about as wide as the section above the crotch; a collar is far narrower.
    if (widthAt(rows, at(0.03)) < 0.6 * pw) continue
    // Nothing beside the waist section (sleeves would be lobes of their own).
    const others = all.filter((o) => o !== l && o !== a && o !== b && o.y1 - o.y0 + 1 >= minLobeH)
    if (others.length > 0) continue
    legs = true
    crotchAt = (l.y1 - box.y0) / h
  }

  const topBand = widthAt(rows, at(0.03)) / W
  const shoulderRise = widthAt(rows, at(0.2)) / Math.max(1, widthAt(rows, at(0.03)))
  // Body width: the narrowest central run between 30 % and 70 % of the height.
  let bodyW = W
  for (let i = at(0.3); i <= at(0.7); i++) {
    const runs = rows[i]!.runs
    // The run over the centre, or — an open front — the span of the two runs either side of it.
    let c = runs.find((r) => r.x0 <= cx && r.x1 >= cx) ?? null
    if (c === null) {
      const l = runs.filter((r) => r.x1 < cx).pop()
      const r = runs.find((q) => q.x0 > cx)
      // (Fronts are panels; two straps either side of a neckline are not a body.)
      const wide = (q: Run) => q.x1 - q.x0 + 1 >= 0.15 * W
      if (l !== undefined && r !== undefined && wide(l) && wide(r)) c = { x0: l.x0, x1: r.x1 }
    }
    if (c !== null && c.x1 - c.x0 + 1 < bodyW) bodyW = c.x1 - c.x0 + 1
  }
  const bodyAspect = h / Math.max(1, bodyW)

  // Armholes / sleeve ends: below the widest row of the top quarter (shoulders, sleeves) the
  // silhouette narrows again before mid-height. A waistband only widens into the hips.
  let wMax = 0
  let iMax = 0
  for (let i = 0; i <= at(0.25); i++) {
    const wi = widthAt(rows, i)
    if (wi > wMax) {
      wMax = wi
      iMax = i
    }
  }
  let wMin = wMax
  for (let i = iMax; i <= at(0.45); i++) wMin = Math.min(wMin, widthAt(rows, i))
  const armholeNarrowing = wMax > 0 ? 1 - wMin / wMax : 0

  let category: GarmentCategory
  // A narrow top that widens fast reads as neck → shoulders only on a garment at least as long as
  // its body is wide: on a short, wide one (a mini skirt) a buckle or a bow above the waistband
  // makes the same profile, and a crop top still shows its neck opening (top lobes) or armholes.
  const neckProfile = topBand < 0.75 && shoulderRise >= 1.45 && bodyAspect >= 1
  const shoulders = topLobes >= 2 || sleeveRows > 0.08 || neckProfile || armholeNarrowing >= 0.1
  if (legs && topLobes < 2 && sleeveRows <= 0.08) category = 'lower'
  else if (shoulders) category = bodyAspect >= DRESS_BODY_ASPECT ? 'full' : 'upper'
  else category = 'lower'
  return {
    category,
    aspect,
    legs,
    crotchAt,
    topLobes,
    sleeveRows,
    topBand,
    shoulderRise,
    armholeNarrowing,
    bodyAspect,
  }
}

// ---- landmarks -----------------------------------------------------------------------------------

/** Left/right here are image sides (x small = image left), not the wearer's. */
export interface SleeveLandmarks {
  shoulder: Point
  armpit: Point
  /** Cuff centre and its half-width across the sleeve axis. */
  cuff: Point
  cuffHalfWidth: number
  /**
   * Where the sleeve bends on the photo (a worn sleeve on a bent arm, from the wearer's elbow):
   * its axis runs root → elbow → cuff. Absent: straight from the root to the cuff.
   */
  elbow?: Point
}

export interface TopLandmarks {
  kind: 'top'
  neck: Point
  shoulderL: Point
  shoulderR: Point
  armpitL: Point
  armpitR: Point
  /** Narrowest torso row between armpits and hem (dresses: the waist seam). */
  waistL: Point
  waistR: Point
  hemL: Point
  hemR: Point
  /** Torso side line x at a given y (image left / right). */
  sideL: (y: number) => number
  sideR: (y: number) => number
  sleeveL: SleeveLandmarks | null
  sleeveR: SleeveLandmarks | null
  /**
   * The body the garment is worn on, on a model photo (worn-landmarks.ts): shoulder-joint centre,
   * hip-joint centre and shoulder-joint distance, in garment pixels. The fit then draws the
   * garment at the scale of that body (fit.ts).
   */
  wearer?: { shoulders: Point; hips: Point; shoulderWidth: number }
}

export interface BottomLandmarks {
  kind: 'bottom'
  waistL: Point
  waistR: Point
  /** Top of the gap between the legs; for a skirt, the hem centre. */
  crotch: Point
  /** Hip corners: outline extents at the crotch height. */
  hipL: Point
  hipR: Point
  hemLOuter: Point
  hemLInner: Point
  hemROuter: Point
  hemRInner: Point
  /** Two legs (trousers, shorts) or one tube (skirt). */
  legs: boolean
}

export type GarmentLandmarks = TopLandmarks | BottomLandmarks

const on = (m: Plane, x: number, y: number): boolean => {
  const xi = Math.round(x)
  const yi = Math.round(y)
  return xi >= 0 && yi >= 0 && xi < m.width && yi < m.height && m.data[yi * m.width + xi]! > 0.5
}

function topOf(m: Plane, x: number, y0: number, y1: number): number {
  for (let y = Math.max(0, y0); y <= y1; y++) if (on(m, x, y)) return y
  return y1
}

/** Mean outline descent (rows per column, over the next 6 % of the width) past which the shoulder line has ended. */
export const SHOULDER_TURN = 1.5

/**
 * The shoulder points from the top outline alone: from the highest point of each half, walk outward
 * along the top outline while it rises or falls gently (a collar, the shoulder slope, the flat top
 * of a strap); the shoulder is where it turns down steeply and stays steep over the next 6 % of the
 * width (the sleeve's outer side, an armhole; a collar's edge drops only briefly) or the garment
 * ends. Independent of the torso width, which hanging sleeves or a wide body hide.
 */
export function shoulderPoints(m: Plane, box: Bbox): { left: Point; right: Point } {
  const w = box.x1 - box.x0 + 1
  const top = new Float64Array(w).fill(Number.NaN)
  for (let x = box.x0; x <= box.x1; x++) {
    for (let y = box.y0; y <= box.y1; y++) {
      if (m.data[y * m.width + x]! > 0.5) {
        top[x - box.x0] = y
        break
      }
    }
  }
  const step = Math.max(2, Math.round(0.01 * w))
  const ahead = Math.max(4 * step, Math.round(0.06 * w))
  const cx = Math.round((w - 1) / 2)
  /** Mean descent per column from column i over the next `ahead` columns (to the garment's edge). */
  const descent = (i: number, dir: -1 | 1): number => {
    let k = i
    while (Math.abs(k - i) < ahead && k + dir >= 0 && k + dir < w && !Number.isNaN(top[k + dir]!)) {
      k += dir
    }
    // The outline ends within reach (the garment's side): a turn when it ends close by.
    if (Math.abs(k - i) < ahead) {
      return Math.abs(k - i) <= step ? Infinity : (top[k]! - top[i]!) / Math.abs(k - i)
    }
    return (top[k]! - top[i]!) / ahead
  }
  const walk = (dir: -1 | 1): Point => {
    // Highest point of this half (ties: the one nearest the centre).
    let xs = -1
    for (let i = cx; i >= 0 && i < w; i += dir) {
      if (!Number.isNaN(top[i]!) && (xs < 0 || top[i]! < top[xs]!)) xs = i
    }
    if (xs < 0) return { x: dir < 0 ? box.x0 : box.x1, y: box.y0 }
    let i = xs
    while (descent(i, dir) <= SHOULDER_TURN) i += dir
    // The turn itself: on along the outline while it is still locally gentle (a rounded shoulder
    // turns over a few percent of the width; the corner is where it gets steep).
    for (const i0 = i; Math.abs(i - i0) < ahead; i += dir) {
      const j = i + dir * step
      if (j < 0 || j >= w || Number.isNaN(top[j]!) || (top[j]! - top[i]!) / step > SHOULDER_TURN) {
        break
      }
    }
    return { x: box.x0 + i, y: top[i]! }
  }
  return { left: walk(-1), right: walk(1) }
}

/**
 * A hem corner is where the outline's tangent is this steep (rows per column): on a rounded hem,
 * about where it leaves the straight side; on a square or flared one, the corner itself.
 */
export const HEM_CORNER_SLOPE = 2

/**
 * What the wearer's pose says about a top worn on a model photo (worn-landmarks.ts): the body's
 * centre line, and the rows' runs that are a sleeve hanging below the hem (not the hem).
 */
export interface TopHints {
  /** The torso's centre x (the wearer's midline at the torso rows) instead of the runs' median. */
  centreX?: number
  /** A run that is not the body (a sleeve over the forearm): no hem corner on it. */
  notHem?: (r: Run, y: number) => boolean
}

export function topLandmarks(
  m: Plane,
  box: Bbox,
  category: GarmentCategory,
  hints: TopHints = {},
): TopLandmarks {
  const h = box.y1 - box.y0 + 1
  const w = box.x1 - box.x0 + 1
  const cx = (box.x0 + box.x1) / 2
  // Shoulders: where the top outline turns down (shoulderPoints).
  const { left: shoulderL, right: shoulderR } = shoulderPoints(m, box)
  // Torso sides: vertical lines half the torso width from the centre. The width is the median
  // centre-run width over the rows at 65–85 % for tops (below the sleeves) and 30–45 % for
  // dresses (bodice below the sleeves, above the skirt flare); for a top whose hanging sleeves
  // touch the body, the rows below their cuffs. Product photos are frontal, so the side seams sit
  // close to these lines.
  const [fa, fb] = category === 'full' ? [0.3, 0.45] : [0.65, 0.85]
  const centreRun = (y: number): Run | null => {
    const runs = rowRuns(m, y, 3)
    return runs.find((r) => r.x0 <= cx && r.x1 >= cx) ?? extent(runs)
  }
  // Sleeves hanging against the body widen the centre run down to their cuffs, where it narrows
  // abruptly (a curved hem narrows gradually): below the lowest such step only the body is left.
  const rowAt = (f: number) => Math.round(box.y0 + f * (h - 1))
  let cuffStep = -1
  if (category !== 'full') {
    const lag = Math.max(2, Math.round(0.02 * h))
    const strict = (y: number): number => {
      const r = rowRuns(m, y, 3).find((q) => q.x0 <= cx && q.x1 >= cx)
      return r === undefined ? 0 : r.x1 - r.x0
    }
    for (let y = rowAt(0.95); y - lag >= rowAt(0.45); y--) {
      const below = strict(y)
      // The body under the cuffs: as wide a few rows further down (not a notch in the hem).
      if (below === 0 || Math.abs(strict(y + 2 * lag) - below) > 0.1 * below) continue
      if (strict(y - lag) > 1.25 * below) {
        cuffStep = y
        break
      }
    }
  }
  const widths: number[] = []
  const centres: number[] = []
  const y0 = cuffStep > rowAt(fa) ? cuffStep + 1 : rowAt(fa)
  const y1 =
    cuffStep > rowAt(fa)
      ? Math.max(rowAt(fb), Math.min(rowAt(0.95), cuffStep + 0.2 * h))
      : rowAt(fb)
  const hc = hints.centreX
  for (let y = y0; y <= y1; y++) {
    const torso = centreRun(y)
    if (torso === null) continue
    // About a given centre: twice the wider half (an object held against one side, cut out of the
    // mask, narrows the row from that side only).
    widths.push(hc === undefined ? torso.x1 - torso.x0 : 2 * Math.max(hc - torso.x0, torso.x1 - hc))
    centres.push((torso.x0 + torso.x1) / 2)
  }
  const median = (v: number[], d: number) =>
    v.length === 0 ? d : [...v].sort((p, q) => p - q)[v.length >> 1]!
  const torsoW = median(widths, 0.6 * w)
  const tc = hc ?? median(centres, cx)
  const sideL = (_y: number) => tc - torsoW / 2
  const sideR = (_y: number) => tc + torsoW / 2
  const yTop = box.y0
  const neck = { x: tc, y: topOf(m, tc, yTop, box.y1) }
  // Neck: the back collar is the top of the centre column; the front neckline dips below it.
  neck.y = Math.min(neck.y, (shoulderL.y + shoulderR.y) / 2)

  // Armpit: walking down the side line from the shoulder, the first row where the side is the
  // body's own edge: just outside it is no longer sleeve, and just inside it is no longer armhole
  // (a sleeveless top's armhole reaches inside the side line).
  const armpitAt = (side: (y: number) => number, dir: -1 | 1, y0: number): Point => {
    const off = Math.max(3, 0.015 * w)
    let y = y0 + 0.05 * torsoW
    const sleeve = on(m, side(y) + dir * off, y)
    const yMax = y0 + (sleeve ? 0.6 : 0.8) * torsoW
    if (sleeve) while (y < yMax && on(m, side(y) + dir * off, y)) y++
    else while (y < yMax && !on(m, side(y) - dir * off, y)) y++
    // A sleeve hanging against the body leaves no gap: fall back to a typical armhole depth.
    if (y >= yMax) y = y0 + 0.42 * torsoW
    return { x: side(y), y }
  }
  const armpitL = armpitAt(sideL, -1, shoulderL.y)
  const armpitR = armpitAt(sideR, 1, shoulderR.y)

  // Hem corners: on the torso's rows below the armpits, the outline point farthest down and out
  // (the largest y ∓ HEM_CORNER_SLOPE · x): the corner of a straight hem, the point where a curved
  // hem (a shirt's tails, a rounded tank) leaves the side line, the bottom corner of a flared or
  // asymmetric one.
  // For a top, rows whose run reaches well past the side line (a hanging sleeve or its cuff
  // against the body) are not the hem.
  const hemY = box.y1
  const reach = category === 'full' ? Infinity : 0.15 * torsoW
  let hemL: Point | null = null
  let hemR: Point | null = null
  // (Below the cuffs of sleeves hanging against the body, when there are.)
  // A dress's skirt may show gaps (lace, a slit, legs through a sheer panel): runs closer than
  // 0.3 × the torso width count as one.
  const merge = category === 'full' ? 0.3 * torsoW : 0
  for (let y = Math.round(Math.max(armpitL.y, armpitR.y, cuffStep)); y <= box.y1; y++) {
    const runs: Run[] = []
    for (const q of rowRuns(m, y, 3)) {
      const last = runs[runs.length - 1]
      if (last !== undefined && q.x0 - last.x1 <= merge) last.x1 = q.x1
      else runs.push({ ...q })
    }
    const r =
      runs.find((q) => q.x0 <= tc && q.x1 >= tc) ??
      (category === 'full' ? nearestRun(runs, tc) : extent(runs))
    if (r === null || hints.notHem?.(r, y) === true) continue
    if (
      r.x0 >= sideL(y) - reach &&
      (hemL === null || y - HEM_CORNER_SLOPE * r.x0 >= hemL.y - HEM_CORNER_SLOPE * hemL.x)
    ) {
      hemL = { x: r.x0, y }
    }
    if (
      r.x1 <= sideR(y) + reach &&
      (hemR === null || y + HEM_CORNER_SLOPE * r.x1 >= hemR.y + HEM_CORNER_SLOPE * hemR.x)
    ) {
      hemR = { x: r.x1, y }
    }
  }
  hemL ??= { x: sideL(hemY), y: hemY }
  hemR ??= { x: sideR(hemY), y: hemY }

  // Waist: narrowest torso row between the armpits and 60 % of the way to the hem (the hem
  // corners' height: long sleeves may hang lower). Rows where hanging sleeves widen the torso run
  // past 1.3 × the torso width are not the waist; with none left, the side lines at mid-height.
  const hemAt = Math.max(hemL.y, hemR.y)
  let waistY = (armpitL.y + hemAt) / 2
  let waistW = Infinity
  let waist: Run | null = null
  for (
    let y = Math.round(Math.max(armpitL.y, armpitR.y) + 0.05 * h);
    y <= armpitL.y + 0.6 * (hemAt - armpitL.y);
    y++
  ) {
    const runs = rowRuns(m, y, 3)
    const r = runs.find((q) => q.x0 <= tc && q.x1 >= tc)
    if (r === undefined || r.x1 - r.x0 > 1.3 * torsoW) continue
    if (r.x1 - r.x0 < waistW && r.x1 - r.x0 > 0.5 * torsoW) {
      waistW = r.x1 - r.x0
      waistY = y
      waist = r
    }
  }
  const waistL = { x: waist?.x0 ?? sideL(waistY), y: waistY }
  const waistR = { x: waist?.x1 ?? sideR(waistY), y: waistY }

  const sleeve = (
    shoulder: Point,
    armpit: Point,
    side: (y: number) => number,
    dir: -1 | 1,
  ): SleeveLandmarks | null => {
    // Sleeve pixels: outside the side line, from the shoulder row down to half the torso width below
    // the armpit (lower down, what sticks out of the side line is hem flare, not sleeve).
    // Below that, a sleeve hanging beside the body is a run of its own, wholly outside the side line,
    // or — on a top, whose hem flares little — a run that reaches well past the side line (a sleeve
    // hanging against the body): its part outside the line.
    const pts: Point[] = []
    const yEnd = Math.min(box.y1, armpit.y + 0.5 * torsoW)
    const outside = (x: number, y: number) =>
      dir < 0 ? x < side(y) - 0.03 * torsoW : x > side(y) + 0.03 * torsoW
    const against = (r: Run, y: number) =>
      category !== 'full' &&
      (dir < 0 ? r.x0 < side(y) - 0.12 * torsoW : r.x1 > side(y) + 0.12 * torsoW)
    for (let y = box.y0; y <= box.y1; y += 2) {
      if (y <= yEnd) {
        const row = y * m.width
        for (let x = box.x0; x <= box.x1; x += 2) {
          if (m.data[row + x]! > 0.5 && outside(x, y)) pts.push({ x, y })
        }
        continue
      }
      for (const r of rowRuns(m, y, 2)) {
        const own = outside(r.x0, y) && outside(r.x1, y)
        if (!own && !against(r, y)) continue
        for (let x = r.x0; x <= r.x1; x += 2) if (outside(x, y)) pts.push({ x, y })
      }
    }
    if (pts.length < 20) return null
    // The cuff: the sleeve pixels farthest from the seam (shoulder → armpit) it hangs from.
    const seamDist = (p: Point): number => {
      const sx = armpit.x - shoulder.x
      const sy = armpit.y - shoulder.y
      const t = clamp(
        ((p.x - shoulder.x) * sx + (p.y - shoulder.y) * sy) / (sx * sx + sy * sy || 1),
        0,
        1,
      )
      return Math.hypot(p.x - shoulder.x - t * sx, p.y - shoulder.y - t * sy)
    }
    const root = { x: (shoulder.x + armpit.x) / 2, y: (shoulder.y + armpit.y) / 2 }
    let far = 0
    for (const p of pts) far = Math.max(far, seamDist(p))
    // Less than that past the seam: a sleeveless armhole's edge or a strap, not a sleeve.
    if (far < 0.12 * torsoW) return null
    const tip = pts.filter((p) => seamDist(p) > 0.85 * far)
    const cuff = {
      x: tip.reduce((a, p) => a + p.x, 0) / tip.length,
      y: tip.reduce((a, p) => a + p.y, 0) / tip.length,
    }
    // A sleeve ends outside the body's side, or hangs well below the armpit beside it; what ends
    // just past the side line, not far below the armpit, is the body widening (a drape, a flare).
    if (dir * (cuff.x - side(cuff.y)) < 0.1 * torsoW && cuff.y - armpit.y < 0.5 * torsoW) {
      return null
    }
    const ax = (cuff.x - root.x) / Math.hypot(cuff.x - root.x, cuff.y - root.y)
    const ay = (cuff.y - root.y) / Math.hypot(cuff.x - root.x, cuff.y - root.y)
    let half = 0
    for (const p of tip) half = Math.max(half, Math.abs(-(p.x - cuff.x) * ay + (p.y - cuff.y) * ax))
    return { shoulder, armpit, cuff, cuffHalfWidth: Math.max(half, 0.05 * torsoW) }
  }
  return {
    kind: 'top',
    neck,
    shoulderL,
    shoulderR,
    armpitL,
    armpitR,
    waistL,
    waistR,
    hemL,
    hemR,
    sideL,
    sideR,
    sleeveL: sleeve(shoulderL, armpitL, sideL, -1),
    sleeveR: sleeve(shoulderR, armpitR, sideR, 1),
  }
}

/**
 * `tube: true` (a skirt known from elsewhere, e.g. the wearer's pose) skips the search for two
 * legs; `crotch` (from the wearer's pose: legs that touch hide the gap up to the knees) replaces
 * the walk up the gap between the legs when it is higher.
 */
export function bottomLandmarks(
  m: Plane,
  box: Bbox,
  o: { tube?: boolean; crotch?: Point } = {},
): BottomLandmarks {
  const h = box.y1 - box.y0 + 1
  const w = box.x1 - box.x0 + 1
  const cx = (box.x0 + box.x1) / 2
  // Waistband: the first row from the top (2 % down at the earliest) that is at least 0.6 × the
  // widest row of the top 30 %: a buckle, a bow or a belt loop standing above the waistband is
  // narrow, a waistband is about as wide as the hips below it.
  const widthOf = (y: number) => {
    const e = extent(rowRuns(m, Math.round(y), 3))
    return e === null ? 0 : e.x1 - e.x0 + 1
  }
  let widest = 0
  for (let y = box.y0; y <= box.y0 + 0.3 * h; y++) widest = Math.max(widest, widthOf(y))
  let waistY = box.y0 + 0.02 * h
  while (waistY < box.y0 + 0.15 * h && widthOf(waistY) < 0.6 * widest) waistY++
  // The waistband's corners: the outline's extent over its first rows (a tenth of the height), so a
  // top worn over it on a model photo (a cardigan, a hand) does not pull a corner in.
  let top = extent(rowRuns(m, Math.round(waistY), 3)) ?? { x0: box.x0, x1: box.x1 }
  for (let y = Math.round(waistY) + 1; y <= waistY + 0.1 * h; y++) {
    const e = extent(rowRuns(m, y, 3))
    if (e !== null) top = { x0: Math.min(top.x0, e.x0), x1: Math.max(top.x1, e.x1) }
  }
  // Bottom rows: two legs or one tube.
  const hemY = Math.round(box.y1 - 0.01 * h)
  const hemRuns = rowRuns(m, hemY, Math.max(2, Math.round(0.02 * w)))
  let legs = false
  let gapX = cx
  if (hemRuns.length >= 2 && o.tube !== true) {
    let best = { gap: 0, i: 0 }
    for (let i = 0; i + 1 < hemRuns.length; i++) {
      const gap = hemRuns[i + 1]!.x0 - hemRuns[i]!.x1
      if (gap > best.gap) best = { gap, i }
    }
    if (best.gap > 0.03 * w) {
      legs = true
      gapX = (hemRuns[best.i]!.x1 + hemRuns[best.i + 1]!.x0) / 2
      const left = { x0: hemRuns[0]!.x0, x1: hemRuns[best.i]!.x1 }
      const right = { x0: hemRuns[best.i + 1]!.x0, x1: hemRuns[hemRuns.length - 1]!.x1 }
      // Crotch: walk up the gap while it stays empty.
      let y = hemY
      let x = gapX
      while (y > box.y0 + 0.1 * h) {
        const runs = rowRuns(m, y - 1, 1)
        const hole = runs.every((r) => x < r.x0 || x > r.x1)
        if (!hole) {
          // Re-centre on the gap of this row if there still is one.
          let g: number | null = null
          for (let i = 0; i + 1 < runs.length; i++) {
            if (runs[i]!.x1 < x + 0.05 * w && runs[i + 1]!.x0 > x - 0.05 * w) {
              g = (runs[i]!.x1 + runs[i + 1]!.x0) / 2
            }
          }
          if (g === null) break
          x = g
        }
        y--
      }
      // Legs are at least a tenth of the length: a gap only just above the hem is a vent, a notch,
      // or wide legs that touch all the way down (drawn as one tube then).
      const shortGap = o.crotch === undefined && hemY - y < 0.1 * h
      if (o.crotch !== undefined && o.crotch.y < y) {
        y = Math.round(o.crotch.y)
        x = o.crotch.x
      }
      const crotch = { x, y }
      // Hips: at the crotch for trousers; for wide short legs the crotch row is already the flare,
      // so no lower than a typical rise (0.75 × the waist width) below the waistband.
      const hipY = Math.round(Math.min(y, waistY + 0.75 * (top.x1 - top.x0)))
      const hip = extent(rowRuns(m, hipY, 3)) ?? top
      if (!shortGap) {
        // Each leg's hem corners: below the crotch, the leg's outline points farthest down and
        // out (inwards for the inner corner) at HEM_CORNER_SLOPE, so a slanted or curved leg
        // opening (shorts cut on the bias) has its corners, not the bottom row's pixels.
        const gapAt = (yy: number) =>
          hemY === crotch.y
            ? gapX
            : crotch.x + ((gapX - crotch.x) * (yy - crotch.y)) / (hemY - crotch.y)
        const k = HEM_CORNER_SLOPE
        const c = {
          lo: { x: left.x0, y: hemY },
          li: { x: left.x1, y: hemY },
          ri: { x: right.x0, y: hemY },
          ro: { x: right.x1, y: hemY },
        }
        for (let yy = crotch.y + 1; yy <= box.y1; yy++) {
          const g = gapAt(yy)
          const runs = rowRuns(m, yy, 2)
          const l = extent(runs.filter((r) => (r.x0 + r.x1) / 2 < g))
          const r = extent(runs.filter((q) => (q.x0 + q.x1) / 2 >= g))
          if (l !== null) {
            if (yy - k * l.x0 >= c.lo.y - k * c.lo.x) c.lo = { x: l.x0, y: yy }
            if (yy + k * l.x1 >= c.li.y + k * c.li.x) c.li = { x: l.x1, y: yy }
          }
          if (r !== null) {
            if (yy - k * r.x0 >= c.ri.y - k * c.ri.x) c.ri = { x: r.x0, y: yy }
            if (yy + k * r.x1 >= c.ro.y + k * c.ro.x) c.ro = { x: r.x1, y: yy }
          }
        }
        return {
          kind: 'bottom',
          legs,
          waistL: { x: top.x0, y: waistY },
          waistR: { x: top.x1, y: waistY },
          crotch,
          hipL: { x: hip.x0, y: hipY },
          hipR: { x: hip.x1, y: hipY },
          hemLOuter: c.lo,
          hemLInner: c.li,
          hemROuter: c.ro,
          hemRInner: c.ri,
        }
      }
    }
  }
  // A skirt: one tube. Its hem corners as a top's (HEM_CORNER_SLOPE), below the hips.
  legs = false
  const hipY = box.y0 + 0.35 * h
  const hip = extent(rowRuns(m, Math.round(hipY), 3)) ?? top
  const e0 = extent(hemRuns) ?? { x0: box.x0, x1: box.x1 }
  let hl: Point = { x: e0.x0, y: hemY }
  let hr: Point = { x: e0.x1, y: hemY }
  for (let yy = Math.round(hipY); yy <= box.y1; yy++) {
    const e = extent(rowRuns(m, yy, 3))
    if (e === null) continue
    if (yy - HEM_CORNER_SLOPE * e.x0 >= hl.y - HEM_CORNER_SLOPE * hl.x) hl = { x: e.x0, y: yy }
    if (yy + HEM_CORNER_SLOPE * e.x1 >= hr.y + HEM_CORNER_SLOPE * hr.x) hr = { x: e.x1, y: yy }
  }
  const hem = { x0: hl.x, x1: hr.x }
  return {
    kind: 'bottom',
    legs,
    waistL: { x: top.x0, y: waistY },
    waistR: { x: top.x1, y: waistY },
    crotch: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hipL: { x: hip.x0, y: hipY },
    hipR: { x: hip.x1, y: hipY },
    hemLOuter: hl,
    hemLInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hemROuter: hr,
    hemRInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
  }
}
