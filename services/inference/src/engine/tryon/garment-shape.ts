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
 * Landmarks:
 * - upper / full: the torso's side lines (half the median torso width either side of its centre,
 *   measured below the sleeves for tops and on the bodice for dresses), the shoulder points where
 *   those lines meet the top outline, the neck (top of the centre column), the armpits (where the mask stops just outside
 *   the side line below the shoulder), the hem corners, and per sleeve its cuff (the sleeve pixels
 *   farthest from the shoulder).
 * - lower: the waistband corners (top row extents), the crotch (top of the gap between the legs),
 *   the hips (outline extents at the crotch, or at most 0.75 × the waist width below the waistband
 *   for wide short legs), and per leg the hem's outer and inner corners.
 */
import type { Plane, Point } from './raster.ts'

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

export function topLandmarks(m: Plane, box: Bbox, category: GarmentCategory): TopLandmarks {
  const h = box.y1 - box.y0 + 1
  const w = box.x1 - box.x0 + 1
  const cx = (box.x0 + box.x1) / 2
  // Torso sides: vertical lines half the torso width from the centre. The width is the median
  // centre-run width over the rows at 65–85 % for tops (below the sleeves) and 30–45 % for
  // dresses (bodice below the sleeves, above the skirt flare). Product photos are frontal, so the
  // shoulder seams sit close to these lines.
  const [fa, fb] = category === 'full' ? [0.3, 0.45] : [0.65, 0.85]
  const widths: number[] = []
  const centres: number[] = []
  for (let y = Math.round(box.y0 + fa * h); y <= box.y0 + fb * h; y++) {
    const runs = rowRuns(m, y, 3)
    const torso = runs.find((r) => r.x0 <= cx && r.x1 >= cx) ?? extent(runs)
    if (torso === null) continue
    widths.push(torso.x1 - torso.x0)
    centres.push((torso.x0 + torso.x1) / 2)
  }
  const median = (v: number[], d: number) =>
    v.length === 0 ? d : [...v].sort((p, q) => p - q)[v.length >> 1]!
  const torsoW = median(widths, 0.6 * w)
  const tc = median(centres, cx)
  const sideL = (_y: number) => tc - torsoW / 2
  const sideR = (_y: number) => tc + torsoW / 2
  const yTop = box.y0
  const shoulderYL = topOf(m, sideL(yTop + 0.1 * h), yTop, box.y1)
  const shoulderYR = topOf(m, sideR(yTop + 0.1 * h), yTop, box.y1)
  const shoulderL = { x: sideL(shoulderYL), y: shoulderYL }
  const shoulderR = { x: sideR(shoulderYR), y: shoulderYR }
  const neck = { x: tc, y: topOf(m, tc, yTop, box.y1) }
  // Neck: the back collar is the top of the centre column; the front neckline dips below it.
  neck.y = Math.min(neck.y, (shoulderL.y + shoulderR.y) / 2)

  const armpitAt = (side: (y: number) => number, dir: -1 | 1, y0: number): Point => {
    const off = Math.max(3, 0.015 * w)
    const yMax = y0 + 0.6 * torsoW
    let y = y0 + 0.05 * torsoW
    while (y < yMax && on(m, side(y) + dir * off, y)) y++
    // A sleeve hanging against the body leaves no gap: fall back to a typical armhole depth.
    if (y >= yMax) y = y0 + 0.42 * torsoW
    return { x: side(y), y }
  }
  const armpitL = armpitAt(sideL, -1, shoulderL.y)
  const armpitR = armpitAt(sideR, 1, shoulderR.y)

  // Hem: the lowest rows of the centre run.
  const hemY = box.y1
  const hemRuns = rowRuns(m, Math.max(box.y0, hemY - Math.round(0.01 * h)), 3)
  const hemRun = hemRuns.find((r) => r.x0 <= cx && r.x1 >= cx) ??
    extent(hemRuns) ?? { x0: sideL(hemY), x1: sideR(hemY) }
  const hemL = { x: hemRun.x0, y: hemY }
  const hemR = { x: hemRun.x1, y: hemY }

  // Waist: narrowest torso row between the armpits and 60 % of the way to the hem.
  let waistY = (armpitL.y + hemY) / 2
  let waistW = Infinity
  let waist: Run | null = null
  for (
    let y = Math.round(Math.max(armpitL.y, armpitR.y) + 0.05 * h);
    y <= armpitL.y + 0.6 * (hemY - armpitL.y);
    y++
  ) {
    const runs = rowRuns(m, y, 3)
    const r = runs.find((q) => q.x0 <= tc && q.x1 >= tc)
    if (r !== undefined && r.x1 - r.x0 < waistW && r.x1 - r.x0 > 0.5 * torsoW) {
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
    // Below that, a sleeve hanging beside the body is a run of its own, wholly outside the side line.
    const pts: Point[] = []
    const yEnd = Math.min(box.y1, armpit.y + 0.5 * torsoW)
    const outside = (x: number, y: number) =>
      dir < 0 ? x < side(y) - 0.03 * torsoW : x > side(y) + 0.03 * torsoW
    for (let y = box.y0; y <= box.y1; y += 2) {
      if (y <= yEnd) {
        const row = y * m.width
        for (let x = box.x0; x <= box.x1; x += 2) {
          if (m.data[row + x]! > 0.5 && outside(x, y)) pts.push({ x, y })
        }
        continue
      }
      for (const r of rowRuns(m, y, 2)) {
        if (!outside(r.x0, y) || !outside(r.x1, y)) continue
        for (let x = r.x0; x <= r.x1; x += 2) pts.push({ x, y })
      }
    }
    if (pts.length < 20) return null
    const root = { x: (shoulder.x + armpit.x) / 2, y: (shoulder.y + armpit.y) / 2 }
    let far = 0
    for (const p of pts) far = Math.max(far, Math.hypot(p.x - root.x, p.y - root.y))
    if (far < 0.08 * torsoW) return null
    const tip = pts.filter((p) => Math.hypot(p.x - root.x, p.y - root.y) > 0.85 * far)
    const cuff = {
      x: tip.reduce((a, p) => a + p.x, 0) / tip.length,
      y: tip.reduce((a, p) => a + p.y, 0) / tip.length,
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
  const top = extent(rowRuns(m, Math.round(waistY), 3)) ?? { x0: box.x0, x1: box.x1 }
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
        return {
          kind: 'bottom',
          legs,
          waistL: { x: top.x0, y: waistY },
          waistR: { x: top.x1, y: waistY },
          crotch,
          hipL: { x: hip.x0, y: hipY },
          hipR: { x: hip.x1, y: hipY },
          hemLOuter: { x: left.x0, y: hemY },
          hemLInner: { x: left.x1, y: hemY },
          hemROuter: { x: right.x1, y: hemY },
          hemRInner: { x: right.x0, y: hemY },
        }
      }
    }
  }
  // A skirt: one tube.
  legs = false
  const hem = extent(hemRuns) ?? { x0: box.x0, x1: box.x1 }
  const hipY = box.y0 + 0.35 * h
  const hip = extent(rowRuns(m, Math.round(hipY), 3)) ?? top
  return {
    kind: 'bottom',
    legs,
    waistL: { x: top.x0, y: waistY },
    waistR: { x: top.x1, y: waistY },
    crotch: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hipL: { x: hip.x0, y: hipY },
    hipR: { x: hip.x1, y: hipY },
    hemLOuter: { x: hem.x0, y: hemY },
    hemLInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hemROuter: { x: hem.x1, y: hemY },
    hemRInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
  }
}
