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

const extent = (runs: Run[]): Run | null => (runs.length === 0 ? null : { x0: runs[0]!.x0, x1: runs[runs.length - 1]!.x1 })

export interface CategoryEvidence {
  category: GarmentCategory
  aspect: number
  legSplitRows: number
  widestRowAt: number
  neckNotch: boolean
}

export function detectCategory(m: Plane, box: Bbox): CategoryEvidence {
  const h = box.y1 - box.y0 + 1
  const w = box.x1 - box.x0 + 1
  const aspect = h / w
  const cx = (box.x0 + box.x1) / 2
  // Leg split in the bottom 15 %.
  let split = 0
  let rows = 0
  for (let y = Math.round(box.y1 - 0.15 * h); y <= box.y1 - Math.max(2, 0.01 * h); y++) {
    rows++
    const runs = rowRuns(m, y, Math.max(2, Math.round(0.02 * w)))
    if (runs.length < 2) continue
    // The widest gap between consecutive runs must be near the middle and wide enough.
    let best = { gap: 0, at: 0 }
    for (let i = 0; i + 1 < runs.length; i++) {
      const gap = runs[i + 1]!.x0 - runs[i]!.x1
      if (gap > best.gap) best = { gap, at: (runs[i + 1]!.x0 + runs[i]!.x1) / 2 }
    }
    if (best.gap > 0.03 * w && Math.abs(best.at - cx) < 0.2 * w) split++
  }
  const legSplitRows = rows === 0 ? 0 : split / rows
  // Where the widest row is.
  let widest = 0
  let widestY = box.y0
  for (let y = box.y0; y <= box.y1; y++) {
    const e = extent(rowRuns(m, y))
    if (e !== null && e.x1 - e.x0 > widest) {
      widest = e.x1 - e.x0
      widestY = y
    }
  }
  const widestRowAt = (widestY - box.y0) / h
  // A neckline notch: one of the top rows (2–6 %) has two runs with the gap near the middle.
  let neckNotch = false
  for (let y = Math.round(box.y0 + 0.02 * h); y <= box.y0 + 0.06 * h; y++) {
    const runs = rowRuns(m, y, Math.max(2, Math.round(0.02 * w)))
    if (runs.length >= 2) {
      const gapAt = (runs[0]!.x1 + runs[1]!.x0) / 2
      if (Math.abs(gapAt - cx) < 0.15 * w) neckNotch = true
    }
  }
  let category: GarmentCategory
  if (legSplitRows > 0.5) category = 'lower'
  else if (aspect > 1.45) category = 'full'
  else if (widestRowAt < 0.45 || neckNotch) category = 'upper'
  else category = 'lower'
  return { category, aspect, legSplitRows, widestRowAt, neckNotch }
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
  const median = (v: number[], d: number) => (v.length === 0 ? d : [...v].sort((p, q) => p - q)[v.length >> 1]!)
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
  const hemRun = hemRuns.find((r) => r.x0 <= cx && r.x1 >= cx) ?? extent(hemRuns) ?? { x0: sideL(hemY), x1: sideR(hemY) }
  const hemL = { x: hemRun.x0, y: hemY }
  const hemR = { x: hemRun.x1, y: hemY }

  // Waist: narrowest torso row between the armpits and 60 % of the way to the hem.
  let waistY = (armpitL.y + hemY) / 2
  let waistW = Infinity
  let waist: Run | null = null
  for (let y = Math.round(Math.max(armpitL.y, armpitR.y) + 0.05 * h); y <= armpitL.y + 0.6 * (hemY - armpitL.y); y++) {
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

  const sleeve = (shoulder: Point, armpit: Point, side: (y: number) => number, dir: -1 | 1): SleeveLandmarks | null => {
    // Sleeve pixels: outside the side line, between the shoulder row and the hem.
    // (Rows below the armpit by more than half the torso width are hem flare, not sleeve.)
    const pts: Point[] = []
    const yEnd = Math.min(box.y1, armpit.y + 0.5 * torsoW)
    for (let y = box.y0; y <= yEnd; y += 2) {
      const row = y * m.width
      for (let x = box.x0; x <= box.x1; x += 2) {
        if (m.data[row + x]! <= 0.5) continue
        if (dir < 0 ? x < side(y) - 0.03 * torsoW : x > side(y) + 0.03 * torsoW) pts.push({ x, y })
      }
    }
    if (pts.length < 20) return null
    const root = { x: (shoulder.x + armpit.x) / 2, y: (shoulder.y + armpit.y) / 2 }
    let far = 0
    for (const p of pts) far = Math.max(far, Math.hypot(p.x - root.x, p.y - root.y))
    if (far < 0.08 * torsoW) return null
    const tip = pts.filter((p) => Math.hypot(p.x - root.x, p.y - root.y) > 0.85 * far)
    const cuff = { x: tip.reduce((a, p) => a + p.x, 0) / tip.length, y: tip.reduce((a, p) => a + p.y, 0) / tip.length }
    const ax = (cuff.x - root.x) / Math.hypot(cuff.x - root.x, cuff.y - root.y)
    const ay = (cuff.y - root.y) / Math.hypot(cuff.x - root.x, cuff.y - root.y)
    let half = 0
    for (const p of tip) half = Math.max(half, Math.abs(-(p.x - cuff.x) * ay + (p.y - cuff.y) * ax))
    return { shoulder, armpit, cuff, cuffHalfWidth: Math.max(half, 0.05 * torsoW) }
  }
  return {
    kind: 'top',
    neck, shoulderL, shoulderR, armpitL, armpitR, waistL, waistR, hemL, hemR, sideL, sideR,
    sleeveL: sleeve(shoulderL, armpitL, sideL, -1),
    sleeveR: sleeve(shoulderR, armpitR, sideR, 1),
  }
}

export function bottomLandmarks(m: Plane, box: Bbox): BottomLandmarks {
  const h = box.y1 - box.y0 + 1
  const w = box.x1 - box.x0 + 1
  const cx = (box.x0 + box.x1) / 2
  const topRuns = rowRuns(m, Math.round(box.y0 + 0.02 * h), 3)
  const top = extent(topRuns) ?? { x0: box.x0, x1: box.x1 }
  const waistY = box.y0 + 0.02 * h
  // Bottom rows: two legs or one tube.
  const hemY = Math.round(box.y1 - 0.01 * h)
  const hemRuns = rowRuns(m, hemY, Math.max(2, Math.round(0.02 * w)))
  let legs = false
  let gapX = cx
  if (hemRuns.length >= 2) {
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
            if (runs[i]!.x1 < x + 0.05 * w && runs[i + 1]!.x0 > x - 0.05 * w) g = (runs[i]!.x1 + runs[i + 1]!.x0) / 2
          }
          if (g === null) break
          x = g
        }
        y--
      }
      const crotch = { x, y }
      // Hips: at the crotch for trousers; for wide short legs the crotch row is already the flare,
      // so no lower than a typical rise (0.75 × the waist width) below the waistband.
      const hipY = Math.round(Math.min(y, waistY + 0.75 * (top.x1 - top.x0)))
      const hip = extent(rowRuns(m, hipY, 3)) ?? top
      return {
        kind: 'bottom', legs,
        waistL: { x: top.x0, y: waistY }, waistR: { x: top.x1, y: waistY }, crotch,
        hipL: { x: hip.x0, y: hipY }, hipR: { x: hip.x1, y: hipY },
        hemLOuter: { x: left.x0, y: hemY }, hemLInner: { x: left.x1, y: hemY },
        hemROuter: { x: right.x1, y: hemY }, hemRInner: { x: right.x0, y: hemY },
      }
    }
  }
  // A skirt: one tube.
  const hem = extent(hemRuns) ?? { x0: box.x0, x1: box.x1 }
  const hipY = box.y0 + 0.35 * h
  const hip = extent(rowRuns(m, Math.round(hipY), 3)) ?? top
  return {
    kind: 'bottom', legs,
    waistL: { x: top.x0, y: waistY }, waistR: { x: top.x1, y: waistY }, crotch: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hipL: { x: hip.x0, y: hipY }, hipR: { x: hip.x1, y: hipY },
    hemLOuter: { x: hem.x0, y: hemY }, hemLInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
    hemROuter: { x: hem.x1, y: hemY }, hemRInner: { x: (hem.x0 + hem.x1) / 2, y: hemY },
  }
}
