/**
 * The old bottom in front of a new top (part of stage 4, called by composite.ts for a new top).
 *
 * Product decision (issue 10, keep the person's styling): a new top is drawn the way the old top
 * was worn over the old bottom. Where the person's old top ends on a visible old bottom (trousers,
 * a skirt, shorts), that bottom stays in front of the new top from the old top's hem down: the new
 * top ends where the old one did (tucked in, it ends at the waistband; a shorter new top ends at its
 * own hem). Where no bottom shows below the old top (a half-body photo cut at the hips, a dress, a
 * bottom of the top's colour), the new top hangs at its own length. A new dress is never tucked
 * (composite.ts calls this for tops only).
 *
 * Why not "tucked or untucked" (composite.ts `UNTUCK_MARGIN` for a new bottom): on the six paired
 * photos the clothing finder's top reaches down to the hip joints whatever the person wears (its
 * `topHemY` lies within 3 px of the hip line on four of them, tucked and untucked alike), and an
 * untucked top's hem lies where the bottom begins just as a tucked one's does; the photo does not
 * tell the two apart at the hem. Both keep the old top's length over the bottom here.
 *
 * How: the old bottom is told from the old top by colour: prototypes (k-means, 4) of what the
 * person wears on the chest (CHEST) and below the hip joints (HIPS) — the clothing finder's own
 * split puts the top's hem at the hip line, the waistband of a tucked-in bottom in the top — and a
 * pixel is bottom when it lies within FAR of the bottom's prototypes and BOTTOM_MARGIN nearer them
 * than the top's (a long top, or a bottom of the top's colour: none is). Down the body axis (a quarter
 * shoulder width either side), from BOTTOM_FROM of the way from the shoulders to the hip joints to
 * BOTTOM_TO of the torso length below the hips, the old top's hem is the first row of a run of
 * BOTTOM_RUN × the shoulder width of rows at least BOTTOM_ROW bottom. Rows where arms and hands
 * hide more than 1 − BOTTOM_SEEN of the band say nothing: they neither start nor end a run, and a
 * run that begins right below such rows (hands resting on the waistband, person_03) starts at
 * their top, since the hem lies somewhere under the hands. Below it, every bottom pixel
 * (and what the finder calls bottom) in the person mask stays in front, closed over small gaps, as
 * far as a top reaches (BOTTOM_BOX), with what it encloses (fillEnclosed: a button, a belt loop,
 * a shadowed fold, a hand resting on it; the new top showed through such holes as dark blocks).
 */
import { FAR, kmeans, labOf, nearestD2, type Clothing, type Vec3 } from './clothing.ts'
import type { PersonAnalysis } from './person.ts'
import { LM } from './pose.ts'
import { boxBlur, components, dilate, erode, mid, plane, type Plane, type Rgb } from './raster.ts'

/** The old top's colours: sampled this far down (× the shoulders-to-hip-joints length) … */
export const CHEST = [0.15, 0.45] as const
/** … the old bottom's: this far (the hip joints at 1), both ZONE_HALF × the shoulder width either side of the body axis, off arms, hands, skin and hair; at least ZONE_MIN samples each. */
export const HIPS = [1.1, 1.4] as const
export const ZONE_HALF = 0.3
export const ZONE_MIN = 40
export const BOTTOM_MARGIN = 4
export const BOTTOM_FROM = 0.45
export const BOTTOM_TO = 0.6
export const BOTTOM_ROW = 0.5
export const BOTTOM_RUN = 0.06
export const BOTTOM_SEEN = 0.6
export const BOTTOM_BOX = 1

export interface OldBottom {
  /** The old top's hem on the body axis (photo row). */
  hemY: number
  /** The old bottom below it (0..1), drawn in front of the new top. */
  front: Plane
}

export function oldBottomInFront(img: Rgb, a: PersonAnalysis, c: Clothing): OldBottom | null {
  const { width: w, height: h } = img
  const sm = mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!)
  const hm = mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!)
  const sw = a.shoulderWidth
  const L = hm.y - sm.y
  if (L <= 0) return null
  const axisX = (y: number) => sm.x + ((hm.x - sm.x) * (y - sm.y)) / L
  const colourAt = (i: number): Vec3 =>
    labOf(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)
  /** Colour prototypes of the person's clothes between rows f0 and f1 (× L below the shoulders) near the axis. */
  const zone = (f0: number, f1: number): Vec3[] => {
    const cols: Vec3[] = []
    for (let y = Math.max(0, Math.round(sm.y + f0 * L)); y < Math.min(h, sm.y + f1 * L); y += 2) {
      const cx = axisX(y)
      for (
        let x = Math.max(0, Math.round(cx - ZONE_HALF * sw));
        x <= Math.min(w - 1, Math.round(cx + ZONE_HALF * sw));
        x += 2
      ) {
        const i = y * w + x
        if (a.mask.data[i]! < 0.5 || a.hands.data[i]! > 0.3 || a.arms.data[i]! > 0.5) continue
        if (c.skin.data[i]! > 0.5 || c.hairFront.data[i]! > 0.5) continue
        cols.push(colourAt(i))
      }
    }
    return cols.length >= ZONE_MIN ? kmeans(cols, 4) : []
  }
  const top = zone(CHEST[0], CHEST[1])
  const below = zone(HIPS[0], HIPS[1])
  if (top.length === 0 || below.length === 0) return null
  // Decided once per colour (a photo's box holds far fewer colours than pixels).
  const seen = new Map<number, boolean>()
  const bottom = (i: number): boolean => {
    const key = (img.data[i * 3]! << 16) | (img.data[i * 3 + 1]! << 8) | img.data[i * 3 + 2]!
    let is = seen.get(key)
    if (is === undefined) {
      const v = colourAt(i)
      const dl = Math.sqrt(nearestD2(v, below))
      is = dl < FAR && dl + BOTTOM_MARGIN < Math.sqrt(nearestD2(v, top))
      seen.set(key, is)
    }
    return is
  }
  const y0 = Math.max(0, Math.round(sm.y + BOTTOM_FROM * L))
  const y1 = Math.min(h, Math.round(hm.y + BOTTOM_TO * L))
  const run = Math.max(2, Math.round(BOTTOM_RUN * sw))
  let hemY = -1
  let inRun = 0
  let runFrom = -1
  let hiddenFrom = -1
  for (let y = y0; y < y1 && hemY < 0; y++) {
    const cx = axisX(y)
    let on = 0
    let total = 0
    for (
      let x = Math.max(0, Math.round(cx - 0.25 * sw));
      x <= Math.min(w - 1, Math.round(cx + 0.25 * sw));
      x++
    ) {
      const i = y * w + x
      if (a.mask.data[i]! < 0.5 || a.hands.data[i]! > 0.3 || a.arms.data[i]! > 0.5) continue
      total++
      if (bottom(i)) on++
    }
    // A row mostly under the arms or hands says nothing (a dark fold between forearms is not a
    // bottom): it neither ends a run nor starts one. Hands resting on the waistband hide the hem
    // itself; a run of bottom right below such a band starts at the band's top.
    const seen = total >= BOTTOM_SEEN * (0.5 * sw)
    if (!seen) {
      if (inRun === 0 && hiddenFrom < 0) hiddenFrom = y
      continue
    }
    if (on >= BOTTOM_ROW * total) {
      if (inRun === 0) runFrom = hiddenFrom >= 0 ? hiddenFrom : y
      inRun++
    } else inRun = 0
    hiddenFrom = -1
    if (inRun >= run) hemY = runFrom
  }
  if (hemY < 0) return null
  // Below the hem, within reach of a top (the box BOTTOM_BOX × the torso length below the hip
  // joints, BOTTOM_BOX × the shoulder width either side of the axis), closed over small gaps.
  const yEnd = Math.min(h, Math.ceil(hm.y + BOTTOM_BOX * L))
  if (yEnd <= hemY) return null
  const cx = axisX(hm.y)
  const x0 = Math.max(0, Math.floor(cx - BOTTOM_BOX * 1.5 * sw))
  const x1 = Math.min(w, Math.ceil(cx + BOTTOM_BOX * 1.5 * sw))
  const bw = x1 - x0
  const raw = plane(bw, yEnd - hemY)
  for (let y = hemY; y < yEnd; y++) {
    for (let x = x0; x < x1; x++) {
      const i = y * w + x
      if (a.mask.data[i]! < 0.5) continue
      if (c.lower.data[i]! > 0.5 || bottom(i)) raw.data[(y - hemY) * bw + x - x0] = 1
    }
  }
  const r = Math.max(1, 0.02 * sw)
  const solid = erode(dilate(raw, r), r)
  // What the bottom encloses is on it (a button, a belt loop, a label, a fold in shadow, a hand
  // resting on it): in front too. Left as holes, the new top showed through them as dark blocks.
  fillEnclosed(solid)
  const closed = boxBlur(solid, 1)
  const front = plane(w, h)
  for (let y = hemY; y < yEnd; y++) {
    front.data.set(closed.data.subarray((y - hemY) * bw, (y - hemY + 1) * bw), y * w + x0)
  }
  return { hemY, front }
}

/** Sets the holes of a binary plane (what is 0 and does not reach the plane's border) to 1, in place. */
export function fillEnclosed(m: Plane): void {
  const { width: w, height: h } = m
  const inv = plane(w, h)
  for (let i = 0; i < w * h; i++) inv.data[i] = m.data[i]! > 0.5 ? 0 : 1
  const { labels } = components(inv)
  const open = new Set<number>()
  for (let x = 0; x < w; x++) open.add(labels[x]!).add(labels[(h - 1) * w + x]!)
  for (let y = 0; y < h; y++) open.add(labels[y * w]!).add(labels[y * w + w - 1]!)
  for (let i = 0; i < w * h; i++) if (labels[i]! > 0 && !open.has(labels[i]!)) m.data[i] = 1
}
