/**
 * Compositing (stage 4).
 *
 * Contract — in: the person photo, its analysis, the warped garment parts (premultiplied RGBA at
 * the photo's size). Out: the dressed photo (RGB, same size) and the garment's final coverage
 * (0..1, for metrics and background removal).
 *
 * Dresses and skirts may also cover the gap between the legs (see bridgeLegs).
 *
 * Occlusion order, back to front: the photo → body parts of the garment (torso, dress body, legs,
 * skirt) → the person's arms (upper arms and forearms, from the photo) → sleeves → hair in front
 * (below; not over an arm raised beside the head) → hands (the fingers past them too, handsFront) → face, neck and hair above the neck
 * line (headInFront; not an arm raised beside the head, armReach). Every garment part is clipped to the person's silhouette dilated by 6 % of the
 * shoulder width, 1.5 % above the shoulder line (clothes may stand off the body a little, never
 * float in the background), with a soft 1–2 px edge; a sleeve also along a sure arm where the
 * segmentation is faint (armReach: a raised arm against trees); the parts themselves are bilinearly resampled, so their outlines are
 * anti-aliased.
 *
 * Shading: the photo's own light is carried onto the garment as a ratio of the photo's local
 * brightness (blur of 2.5 % of the shoulder width, which keeps folds and drops fine print) to its
 * broad brightness (a quarter of the shoulder width), clamped to [0.75, 1.15] and applied at SHADING_STRENGTH: folds and shadows of the clothes the person wears
 * darken the new garment where they darkened the old one. With the old clothes found (clothing.ts)
 * both are taken over the silhouette only, each pixel's luma relative to its own main colour's on
 * the old top or bottom (undress.ts fabricAlbedo; a pixel beside another colour carries no light),
 * elsewhere to the rest's mean (shadeField), so neither the old clothes' outlines (dark trouser legs
 * against the backdrop or a light top) nor their print (a striped polo's stripes, big letters) show
 * through the new garment.
 *
 * With `takeOff` (on by default, TAKE_OFF_DEFAULT; where takeOffZone allows) the old garment is taken off first (clothing.ts finds it, undress.ts repaints it with skin shaded
 * from the photo's light where the body is and with background where it is not), so where the new
 * garment is smaller than the one worn (shorter sleeves, a shorter hem, a slimmer cut, a sleeveless
 * top, a dress over trousers) the body shows, not the old garment. A top replaces the old top, a
 * bottom the old bottom, a dress both.
 *
 * Hair that falls in front of the shoulders or chest is drawn in front of a new top or dress, like
 * the face, from the photo as it was (never repainted): clothing.ts `hairFront` where it is connected
 * to the hair on the head (takeOffZone `hair`: this person's hair colours, sampled above the eyes),
 * and that hair's part below the neck line nearer the hair's colours than the old top's, found on
 * the work grid and soft-edged (one piece, not broken strands).
 *
 * Tucked or untucked, for a new bottom under the old top: the old top is untucked when its hem on
 * the body axis (clothing.ts `topHemY`) lies lower than the new garment's waistband on that axis by
 * more than UNTUCK_MARGIN × the shoulder width and, just below that waistband, what was found as
 * the top has the chest's colour (UNTUCK_SAME); then the old top is drawn in front of the new
 * bottom (the top hangs over it). Otherwise (a top tucked in, or one ending above the new
 * waistband) the new bottom is drawn in front up to its own waistband. An old dress (clothing.ts
 * `dress`) is never an untucked top: the new bottom goes in front of it, and its skirt below the new
 * hem is taken off like old trousers. A new top goes behind the old bottom below the old top's hem
 * (tuck.ts `oldBottomInFront`: it keeps the old top's length over a visible old bottom).
 */
import {
  HAIR_MARGIN,
  HAIR_REACH,
  kmeans,
  L_WEIGHT,
  labInto,
  labOf,
  mainColours,
  nearestD2,
  segmentClothing,
  upsampleSparse,
  type Clothing,
  type Vec3,
} from './clothing.ts'
import {
  ARM_LOST_BLEND,
  ARM_LOST_MASK,
  armHeld,
  RAISE_BLEND,
  RAISE_FROM,
  sureArm,
} from './fit-sleeve.ts'
import { LM } from './pose.ts'
import { neckLine, type PersonAnalysis } from './person.ts'
import {
  boxBlur,
  clamp,
  components,
  dilate,
  dot,
  drawCapsule,
  erode,
  fillPolygon,
  lerp,
  mid,
  norm,
  plane,
  resizePlane,
  sub,
  threshold,
  type Plane,
  type Point,
  type Rgb,
} from './raster.ts'
import { oldBottomInFront, type OldBottom } from './tuck.ts'
import { fabricAlbedo, takeOff, type Undressed } from './undress.ts'
import type { WarpedPart } from './warp.ts'

export const SHADING_STRENGTH = 0.35
export const ENVELOPE_DILATE = 0.06
export const ENVELOPE_DILATE_SHOULDERS = 0.015
/**
 * Taking the old garment off is on by default, limited to where it is certain (takeOffZone below);
 * turn it off per engine with `takeOffOldGarment: false`.
 */
export const TAKE_OFF_DEFAULT = true
/** The old top counts as untucked when its hem is this much (× shoulder width) below the new waistband. */
export const UNTUCK_MARGIN = 0.05
/**
 * … and when what the clothing finder calls the top just below the new waistband has the top's own
 * colour (median colour within this distance of the chest's): otherwise it is a bottom of a colour
 * the finder could not tell apart (beige shorts under a grey tee), and the top is tucked or ends there.
 */
export const UNTUCK_SAME = 8
/** Half width of the neck's column (× shoulder width) where the head region always stays in front. */
export const NECK_COLUMN = 0.25
export const NECK_COLUMN_FADE = 0.1

export interface Composite {
  rgb: Uint8Array
  /** Coverage of the garment after clipping and occlusion (0..1). */
  garment: Plane
  /** The clipping envelope used (dilated person mask, 0..1). */
  envelope: Plane
  // The fields below are the built-in compositor's (a replacement stage may leave them out).
  /** What the person wore (clothing.ts). */
  clothing?: Clothing
  /** Where the old garment was repainted before the new one was drawn (0..1), and where with background. */
  removed?: Plane
  background?: Plane
  /** The skin tone painted where the old garment was taken off, and where it came from (undress.ts). */
  skin?: Undressed['skin']
  /**
   * For a new bottom: whether the old top was judged tucked (null: no bottom, or no top found); for
   * a new top: whether it is drawn tucked into the old bottom (tuck.ts).
   */
  tucked?: boolean | null
  /** The old top drawn in front of a new bottom (untucked), the old bottom in front of a new top (tuck.ts), or null. */
  inFront?: Plane | null
  /** Taking off: how much of the body part it replaces the new garment covers, and why it was skipped (null: done). */
  takeOff?: { cover: number; skipped: string | null; same: number | null }
}

export function compositeGarment(
  person: Rgb,
  a: PersonAnalysis,
  parts: readonly WarpedPart[],
  o: {
    removeBackground: boolean
    category: 'upper' | 'lower' | 'full'
    takeOff?: boolean
    /** clothing.ts's and tuck.ts's findings when the engine made them already (they also size a top, fit.ts). */
    clothing?: Clothing | null
    oldBottom?: OldBottom | null
  },
): Composite {
  const { width: w, height: h } = person
  const N = w * h
  const sw = a.shoulderWidth
  const coverage = new Float32Array(N)
  const envelopeFull = new Float32Array(N)
  // On by default (TAKE_OFF_DEFAULT): with it off the compositor draws over the photo as it is.
  const clothing =
    (o.takeOff ?? TAKE_OFF_DEFAULT) ? (o.clothing ?? segmentClothing(person, a)) : null
  const zone = clothing ? takeOffZone(person, a, parts, clothing, o.category) : null
  const undressed =
    clothing && zone && zone.skipped === null
      ? takeOff(
          person,
          a,
          clothing,
          { upper: o.category !== 'lower', lower: o.category !== 'upper' },
          zone.zone,
          zone.collar ?? undefined,
        )
      : null
  // Everything below draws over the photo with the old garment taken off.
  const photo = undressed ? undressed.rgb : person.data
  const rgb = photo.slice()
  let tucked: boolean | null = null
  let inFront: Plane | null = null
  // All work happens in the box the parts cover (plus the envelope's reach): the rest of the photo
  // is the photo.
  const r = Math.max(1, ENVELOPE_DILATE * sw)
  const margin = Math.ceil(r) + 4
  let bx0 = w
  let by0 = h
  let bx1 = -1
  let by1 = -1
  for (const p of parts) {
    bx0 = Math.min(bx0, p.x0)
    by0 = Math.min(by0, p.y0)
    bx1 = Math.max(bx1, p.x0 + p.width - 1)
    by1 = Math.max(by1, p.y0 + p.height - 1)
  }
  if (bx1 >= 0) {
    bx0 = Math.max(0, bx0 - margin)
    by0 = Math.max(0, by0 - margin)
    bx1 = Math.min(w - 1, bx1 + margin)
    by1 = Math.min(h - 1, by1 + margin)
    const cw = bx1 - bx0 + 1
    const ch = by1 - by0 + 1
    const cN = cw * ch
    const crop = (m: Plane): Plane => {
      const d = new Float32Array(cN)
      for (let y = 0; y < ch; y++) {
        d.set(m.data.subarray((by0 + y) * w + bx0, (by0 + y) * w + bx0 + cw), y * cw)
      }
      return { width: cw, height: ch, data: d }
    }
    const body = threshold(crop(a.mask), 0.5)
    const skirted = o.category === 'full' || parts.some((p) => p.part.name === 'skirt')
    if (skirted) bridgeLegs(body, a, bx0, by0)
    // Above the shoulder line the envelope hugs the silhouette (a collar must not stand above the
    // shoulders into the background or the hair).
    const loose = dilate(body, r)
    const tight = dilate(body, Math.max(1, ENVELOPE_DILATE_SHOULDERS * sw))
    const sl = a.points[LM.leftShoulder]!
    const sr = a.points[LM.rightShoulder]!
    const slope = (sl.y - sr.y) / (sl.x - sr.x || 1e-6)
    for (let y = 0; y < ch; y++) {
      for (let x = 0; x < cw; x++) {
        const lineY = sr.y + slope * (bx0 + x - sr.x) - by0
        if (y < lineY) loose.data[y * cw + x] = tight.data[y * cw + x]!
      }
    }
    const envelope = boxBlur(loose, 1.5)
    for (let y = 0; y < ch; y++) {
      envelopeFull.set(envelope.data.subarray(y * cw, (y + 1) * cw), (by0 + y) * w + bx0)
    }

    // Shading ratio from the photo's luma, computed at half resolution (it is smooth by design).
    const { luma: half, rgb: halfRgb } = halfLuma(person, bx0, by0, cw, ch)
    // Over old clothes: the light taken from each old colour's own lightness only (shadeField), so
    // the old garments' outlines and print do not show through the new one.
    const field = clothing ? shadeField(half, halfRgb, a, clothing, bx0, by0) : null
    const fine = field ? field.fine : boxBlur(half, Math.max(1, 0.025 * sw * 0.5))
    const broad = field ? field.broad : boxBlur(half, Math.max(2, 0.25 * sw * 0.5))
    const shadeHalf = new Float32Array(half.data.length)
    for (let i = 0; i < shadeHalf.length; i++) {
      const q = (fine.data[i]! + 0.02) / (broad.data[i]! + 0.02)
      const c = q < 0.75 ? 0.75 : q > 1.15 ? 1.15 : q
      shadeHalf[i] = 1 + (c - 1) * SHADING_STRENGTH
    }
    const shade = resizePlane(
      { width: half.width, height: half.height, data: shadeHalf },
      cw,
      ch,
    ).data

    const out = new Float32Array(cN * 3)
    for (let y = 0; y < ch; y++) {
      const src = ((by0 + y) * w + bx0) * 3
      for (let k = 0; k < cw * 3; k++) out[y * cw * 3 + k] = photo[src + k]!
    }
    // Sleeves may also go where the segmentation is faint on a sure arm (a raised arm against a busy
    // background is often half lost by it).
    const reach = armReach(a, envelope, bx0, by0)
    const sleeveEnvelope = reach.envelope
    const paint = (p: WarpedPart) => {
      const clip = p.part.layer === 'sleeve' ? sleeveEnvelope : envelope
      const d = p.rgba
      const n = p.width * p.height
      for (let yy = 0; yy < p.height; yy++) {
        const cy = p.y0 + yy - by0
        for (let xx = 0; xx < p.width; xx++) {
          const j = yy * p.width + xx
          const pa = d[3 * n + j]!
          if (pa <= 0.002) continue
          const ci = cy * cw + p.x0 + xx - bx0
          const al = Math.min(1, pa) * clip.data[ci]!
          if (al <= 0) continue
          const k = (255 * shade[ci]!) / pa // un-premultiply, shade, scale to 0..255
          const o3 = ci * 3
          out[o3] = out[o3]! * (1 - al) + Math.min(255, d[j]! * k) * al
          out[o3 + 1] = out[o3 + 1]! * (1 - al) + Math.min(255, d[n + j]! * k) * al
          out[o3 + 2] = out[o3 + 2]! * (1 - al) + Math.min(255, d[2 * n + j]! * k) * al
          const i = (p.y0 + yy) * w + p.x0 + xx
          coverage[i] = coverage[i]! + (1 - coverage[i]!) * al
        }
      }
    }
    // What stays in front of the garment, from the photo with the old garment taken off, or (hair in
    // front: never repainted) from the photo as it was.
    const keep = (m: Plane, src: Uint8Array = photo) => {
      for (let y = 0; y < ch; y++) {
        for (let x = 0; x < cw; x++) {
          const i = (by0 + y) * w + bx0 + x
          const k = m.data[i]!
          if (k <= 0 || (coverage[i]! <= 0 && src === photo)) continue
          const o3 = (y * cw + x) * 3
          const p3 = i * 3
          out[o3] = out[o3]! * (1 - k) + src[p3]! * k
          out[o3 + 1] = out[o3 + 1]! * (1 - k) + src[p3 + 1]! * k
          out[o3 + 2] = out[o3 + 2]! * (1 - k) + src[p3 + 2]! * k
          coverage[i] = coverage[i]! * (1 - k)
        }
      }
    }
    for (const p of parts) if (p.part.layer === 'body') paint(p)
    if (clothing && o.category === 'lower' && clothing.topHemY !== null) {
      const waistY = waistbandY(parts, a)
      if (waistY !== null) {
        tucked =
          clothing.dress ||
          clothing.topHemY <= waistY + UNTUCK_MARGIN * sw ||
          !sameTopBelow(person, a, clothing, waistY)
        if (!tucked) {
          // Only the top itself, down to its hem (never a bottom of a similar colour below it).
          inFront = { width: w, height: h, data: new Float32Array(N) }
          const hem = Math.min(h, Math.ceil(clothing.topHemY))
          inFront.data.set(clothing.upper.data.subarray(0, hem * w))
          keep(inFront)
        }
      }
    }
    if (clothing && o.category === 'upper') {
      // The old bottom stays in front of a new top below the old top's hem (tuck.ts).
      const ob = o.oldBottom !== undefined ? o.oldBottom : oldBottomInFront(person, a, clothing)
      inFront = ob?.front ?? null
      tucked = inFront !== null
      if (inFront) keep(inFront)
    }
    keep(a.arms)
    for (const p of parts) if (p.part.layer === 'sleeve') paint(p)
    // Hair in front yields to the sleeve on an arm raised beside the head (the arm is in front of
    // the hair that falls behind it) and on an arm the segmentation lost (armReach).
    if (clothing && o.category !== 'lower') {
      const hair = { width: w, height: h, data: Float32Array.from(clothing.hairFront.data) }
      // Only hair connected to the hair on the head (takeOffZone `hair`): not a collar, a stripe or
      // shaded neck skin of a hair colour.
      const onHair = zone?.hair
      if (onHair) for (let i = 0; i < N; i++) if (onHair.data[i]! < 0.5) hair.data[i] = 0
      // … and the hair in front found on the work grid, soft-edged: no strands broken where the
      // hair's colour comes near the old top's.
      const whole = zone?.hairFront
      if (whole) for (let i = 0; i < N; i++) hair.data[i] = Math.max(hair.data[i]!, whole.data[i]!)
      keep(offArms(hair, null, reach.raised, bx0, by0), person.data)
    }
    keep(a.hands)
    // The fingers past the hand capsules, over a new top only: below the waist the skin beside a
    // hand is as often a bare thigh under new trousers or a dress (handsFront).
    if (clothing && o.category === 'upper') keep(handsFront(a, clothing))
    // The head region is the silhouette above the neck: an arm raised beside or over the head is
    // in it, and its sleeve stays in front (the forearm over the hair, a hand on the head).
    keep(
      offArms(
        headInFront(a, clothing, zone?.under ?? null, bx0, by0, cw, ch),
        a.arms,
        reach.arms,
        bx0,
        by0,
      ),
    )
    for (let y = 0; y < ch; y++) {
      const dst = ((by0 + y) * w + bx0) * 3
      for (let k = 0; k < cw * 3; k++) rgb[dst + k] = Math.round(out[y * cw * 3 + k]!)
    }
  }
  if (o.removeBackground) {
    for (let i = 0; i < N; i++) {
      const al = Math.max(
        a.mask.data[i]! * (1 - (undressed ? undressed.background.data[i]! : 0)),
        coverage[i]!,
      )
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round(rgb[i * 3 + c]! * al + 255 * (1 - al))
    }
  }
  return {
    rgb,
    garment: { width: w, height: h, data: coverage },
    envelope: { width: w, height: h, data: envelopeFull },
    ...(clothing ? { clothing } : {}),
    ...(undressed
      ? { removed: undressed.removed, background: undressed.background, skin: undressed.skin }
      : {}),
    ...(zone ? { takeOff: { cover: zone.cover, skipped: zone.skipped, same: zone.same } } : {}),
    tucked,
    inFront,
  }
}

/**
 * The fingers drawn in front of the new garment past person.ts `hands` (capsules from the wrist to
 * 1.25 × its index and pinky landmarks): within HAND_REACH × the wrist → knuckle length of each
 * wrist, on the hand's side of the line across the forearm there (the forearm's own skin may be
 * under a new sleeve), what the clothing finder calls skin (clothing.ts `skin`) and the hand
 * capsule, closed over gaps up to 2 × HAND_CLOSE × that length (a shadowed finger the finder does
 * not call skin, the gap between pinching fingers), in the person mask. BlazePose's index and
 * pinky points are the knuckles, not the fingertips: the fingers reach about as far again past
 * them, and hands held together in front of the body (tryon/person_03, fingers pinching the hem)
 * had their fingers and the gap between them drawn over by the new top, a green patch between
 * her hands. For a new top only: skin beside a hand hanging at the thighs is the bare thigh a new
 * bottom or dress covers (dev person_03 in shorts: trousers' region covered 0.85+ → 0.46–0.51).
 */
export const HAND_REACH = 2.2
export const HAND_CLOSE = 0.25
function handsFront(a: PersonAnalysis, clothing: Clothing): Plane {
  const { width: w, height: h } = a.mask
  const out = plane(w, h)
  for (const [el, wr, ix, pk] of [
    [LM.leftElbow, LM.leftWrist, LM.leftIndex, LM.leftPinky],
    [LM.rightElbow, LM.rightWrist, LM.rightIndex, LM.rightPinky],
  ] as const) {
    const W = a.points[wr]!
    const d = norm(sub(W, a.points[el]!))
    const handLen = Math.max(
      Math.hypot(a.points[ix]!.x - W.x, a.points[ix]!.y - W.y),
      Math.hypot(a.points[pk]!.x - W.x, a.points[pk]!.y - W.y),
      0.12 * a.shoulderWidth,
    )
    const R = HAND_REACH * handLen
    const r = Math.max(1, HAND_CLOSE * handLen)
    const pad = Math.ceil(r) + 1
    const bx0 = Math.max(0, Math.floor(W.x - R - pad))
    const by0 = Math.max(0, Math.floor(W.y - R - pad))
    const bx1 = Math.min(w, Math.ceil(W.x + R + pad))
    const by1 = Math.min(h, Math.ceil(W.y + R + pad))
    if (bx1 <= bx0 || by1 <= by0) continue
    const bw = bx1 - bx0
    const box = plane(bw, by1 - by0)
    const inside = (x: number, y: number): number => {
      const dx = x - W.x
      const dy = y - W.y
      if (dx * dx + dy * dy > R * R) return 0
      return clamp((dx * d.x + dy * d.y + 1) / 2, 0, 1)
    }
    for (let y = by0; y < by1; y++) {
      for (let x = bx0; x < bx1; x++) {
        const i = y * w + x
        const on = clothing.skin.data[i]! > 0.5 || a.hands.data[i]! > 0.5
        if (on && a.mask.data[i]! > 0.5 && inside(x, y) > 0) box.data[(y - by0) * bw + x - bx0] = 1
      }
    }
    const closed = erode(dilate(box, r), r)
    for (let y = by0; y < by1; y++) {
      for (let x = bx0; x < bx1; x++) {
        const i = y * w + x
        const v = closed.data[(y - by0) * bw + x - bx0]! * inside(x, y) * a.mask.data[i]!
        if (v > out.data[i]!) out.data[i] = v
      }
    }
  }
  return out
}

/**
 * The envelope a sleeve is clipped to (over the crop at x0, y0): the garment's envelope, and along
 * each arm whose joints are sure and make an arm (fit-sleeve.ts `sureArm`: shoulder → elbow, and
 * → wrist when that is sure too) a capsule SLEEVE_REACH × the shoulder width thick wherever the
 * person mask is faint (from SLEEVE_FAINT_MASK, fully from twice that, to 0.5): a raised arm
 * against trees or hair is often segmented at 0.2–0.4, below the envelope's 0.5, and its sleeve
 * vanished (clipped, or kept under the head region when beside the head).
 *
 * An arm the segmentation lost (`armHeld`: the mean person mask along its bone, the upper arm from
 * its middle on, below ARM_LOST_MASK, fully from ARM_LOST_MASK − ARM_LOST_BLEND; fit-sleeve.ts) gets its
 * whole capsule wherever the mask is below 0.5, not only where it is faint: tryon/person_06's
 * raised arm against sunlit trees holds 0.35 (0.0–0.45 along the upper arm), and its sleeve was
 * drawn half transparent where the mask was 0.08–0.16 and not at all below (the arm's skin seen
 * through, the sleeve's outline left). An arm the segmentation holds keeps the faint rule (a
 * sleeve does not stand off a hanging arm into the background).
 *
 * Past an elbow whose wrist is not sure, the capsule stops at the elbow (the half-plane across the
 * upper arm there): the forearm goes where nothing says, and a long sleeve that goes on straight
 * past the elbow (fit-sleeve.ts armPath) filled the capsule's round end as a black block sticking
 * out of the elbow (person_06 × upper_09); past the elbow only the body's own envelope holds it.
 *
 * `arms` is what the head region, drawn after the sleeves, gives way to: the reach above, and the
 * capsule of an upper arm raised RAISE_FROM off the body's down (blended in over RAISE_BLEND,
 * fit-sleeve.ts raiseTurn's measure) wherever the mask is. `raised` is what hair in front gives way
 * to: that raised upper arm and a lost arm's capsule, not the faint rim of an arm the segmentation
 * holds (hair hangs in front of a hanging arm's edge: person_02's braids). A raised upper arm is in
 * front of the hair that falls behind it and beside the head: on person_06 the clothing finder's
 * hair in front reached into the shaded armpit and the head region (the silhouette above the neck
 * line) over the upper arm, and both cut the sleeve's root away.
 */
export const SLEEVE_REACH = 0.22
export const SLEEVE_FAINT_MASK = 0.08
function armReach(
  a: PersonAnalysis,
  envelope: Plane,
  x0: number,
  y0: number,
): { envelope: Plane; arms: Plane; raised: Plane } {
  const { width: cw, height: ch } = envelope
  const reach = plane(cw, ch)
  const arms = plane(cw, ch)
  const raisedArms = plane(cw, ch)
  const at = (i: number): Point => ({ x: a.points[i]!.x - x0, y: a.points[i]!.y - y0 })
  const r = SLEEVE_REACH * a.shoulderWidth
  const down = norm(
    sub(
      mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!),
      mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!),
    ),
  )
  for (const arm of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
  ] as const) {
    const sure = sureArm(a, arm)
    if (sure === 'none') continue
    const s = at(arm[0])
    const e = at(arm[1])
    const dir = norm(sub(e, s))
    // The upper arm's capsule; without a sure wrist nothing past the elbow across it (the
    // capsule's round end).
    const upper = plane(cw, ch)
    drawCapsule(upper, s, e, r)
    const fore = plane(cw, ch)
    if (sure === 'elbow-wrist') drawCapsule(fore, e, at(arm[2]), 0.8 * r)
    else {
      for (let y = 0; y < ch; y++) {
        for (let x = 0; x < cw; x++) {
          if ((x - e.x) * dir.x + (y - e.y) * dir.y > 0) upper.data[y * cw + x] = 0
        }
      }
    }
    const lost = clamp((ARM_LOST_MASK - armHeld(a, arm, sure)) / ARM_LOST_BLEND, 0, 1)
    // How far the upper arm is raised past RAISE_FROM (fit-sleeve.ts raiseTurn's measure).
    const raised = clamp((Math.acos(clamp(dot(dir, down), -1, 1)) - RAISE_FROM) / RAISE_BLEND, 0, 1)
    for (let y = 0; y < ch; y++) {
      for (let x = 0; x < cw; x++) {
        const j = y * cw + x
        const u = upper.data[j]!
        const c = Math.max(u, fore.data[j]!)
        if (c <= 0) continue
        const m = a.mask.data[(y0 + y) * a.width + x0 + x]!
        // Only where the mask is faint, unless the arm was lost: elsewhere the envelope and
        // person.ts `arms` already hold.
        const faint = m < 0.5 ? clamp((m - SLEEVE_FAINT_MASK) / SLEEVE_FAINT_MASK, 0, 1) : 0
        const v = c * (m < 0.5 ? Math.max(faint, lost) : 0)
        if (v > reach.data[j]!) reach.data[j] = v
        // What the keep regions give way to: the head region to the reach and a raised upper arm
        // wherever the mask is; hair in front only to a lost arm and a raised upper arm (hair does
        // hang in front of the edge of an arm the segmentation holds).
        const up = u * raised
        const k = Math.max(v, up)
        if (k > arms.data[j]!) arms.data[j] = k
        const f = Math.max(m < 0.5 ? c * lost : 0, up)
        if (f > raisedArms.data[j]!) raisedArms.data[j] = f
      }
    }
  }
  const env = plane(cw, ch)
  for (let j = 0; j < env.data.length; j++) {
    env.data[j] = Math.max(envelope.data[j]!, reach.data[j]!)
  }
  return { envelope: env, arms, raised: raisedArms }
}

/**
 * `m` without the arms' capsules (person.ts `arms`, when given) nor what armReach's `arms` gives
 * the sleeves, in place over the crop at x0, y0 (the box of `reach`; all that `keep` reads).
 */
function offArms(m: Plane, arms: Plane | null, reach: Plane, x0: number, y0: number): Plane {
  for (let y = 0; y < reach.height; y++) {
    for (let x = 0; x < reach.width; x++) {
      const i = (y0 + y) * m.width + x0 + x
      if (arms && m.data[i]! > 0) m.data[i] = m.data[i]! * (1 - arms.data[i]!)
      const r = reach.data[y * reach.width + x]!
      if (m.data[i]! > 0 && r > 0) m.data[i] = m.data[i]! * (1 - r)
    }
  }
  return m
}

/**
 * What of the head stays in front of the garment (0..1 at the photo's size, filled in the box
 * x0, y0, cw, ch): the head region (person.ts: the person mask above the neck line, the face and
 * neck ellipses) and everything else above the neck line that the clothing finder does not call
 * the old top: the hair's soft outline, where the person mask is below 1 and the garment, clipped
 * to the dilated silhouette, used to show through as a seam of garment colour around the hair;
 * the background beside the neck. Below the mouth and farther than NECK_COLUMN × the shoulder
 * width from the neck's axis (fading over NECK_COLUMN_FADE × sw), the head region gives way to
 * the old top too: there it is the top
 * of the shoulders (sloping shoulders, a turn), which would otherwise show the old top above the
 * new one. Within the column it does not (the clothing finder takes shaded neck skin for the top
 * too often). Anywhere below the chin, down to the shoulder line, it gives way to the new garment
 * over what is cloth (`under`, takeOffZone: neither lit skin, shaded skin nor hair connected to the
 * head): a red rib collar showed in front of a tank's or tee's back neckline, a white rib at the
 * neck's sides, and the new top was cut flat at the neck line across the neck column.
 */
function headInFront(
  a: PersonAnalysis,
  clothing: Clothing | null,
  under: Plane | null,
  x0: number,
  y0: number,
  cw: number,
  ch: number,
): Plane {
  const { width: w, height: h } = a.mask
  const out = plane(w, h)
  const neck = neckLine(a.points, a.shoulderWidth)
  const sm = mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!)
  const mouth = mid(a.points[LM.mouthLeft]!, a.points[LM.mouthRight]!)
  const half = NECK_COLUMN * a.shoulderWidth
  const fade = Math.max(1, NECK_COLUMN_FADE * a.shoulderWidth)
  for (let y = y0; y < y0 + ch; y++) {
    // The neck's axis runs from the mouth to the shoulders' middle.
    const t = (y - mouth.y) / (sm.y - mouth.y || 1)
    const axisX = mouth.x + (sm.x - mouth.x) * t
    for (let x = x0; x < x0 + cw; x++) {
      const i = y * w + x
      const notTop = clothing ? 1 - clothing.upper.data[i]! : 1
      // 1 inside the column, fading to 0 over NECK_COLUMN_FADE × sw beyond it (no hard edge).
      const column = y < mouth.y ? 1 : clamp((half + fade - Math.abs(x - axisX)) / fade, 0, 1)
      const head = a.head.data[i]! * (column + (1 - column) * notTop)
      const kept = Math.max(head, neck.above(x, y) * notTop)
      out.data[i] = under ? kept * (1 - under.data[i]!) : kept
    }
  }
  return out
}

/**
 * The new bottom's waistband on the body axis: the highest row where a body part of the garment
 * covers more than half of a band a fifth of the shoulder width wide around the hip centre.
 */
function waistbandY(parts: readonly WarpedPart[], a: PersonAnalysis): number | null {
  const hc = mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!)
  const half = Math.max(1, Math.round(0.1 * a.shoulderWidth))
  let best: number | null = null
  for (const p of parts) {
    if (p.part.layer !== 'body') continue
    const n = p.width * p.height
    for (let yy = 0; yy < p.height; yy++) {
      const y = p.y0 + yy
      if (best !== null && y >= best) break
      let on = 0
      let total = 0
      for (let x = Math.round(hc.x) - half; x <= Math.round(hc.x) + half; x++) {
        total++
        const xx = x - p.x0
        if (xx < 0 || xx >= p.width) continue
        if (p.rgba[3 * n + yy * p.width + xx]! > 0.5) on++
      }
      if (on > 0.5 * total) {
        best = y
        break
      }
    }
  }
  return best
}

/**
 * Dresses and skirts hang across the gap between the legs: below the hips, fill the gaps between
 * silhouette runs that lie between the legs (narrower than 1.6 × the hip-joint distance, centred within
 * it), so the envelope does not cut the skirt into trouser legs.
 */
function bridgeLegs(body: Plane, a: PersonAnalysis, ox: number, oy: number): void {
  const pl = a.points[LM.leftHip]!
  const pr = a.points[LM.rightHip]!
  const hw = Math.abs(pl.x - pr.x) || 0.5 * a.shoulderWidth
  const cx = (pl.x + pr.x) / 2 - ox
  const y0 = Math.max(0, Math.round(Math.max(pl.y, pr.y) - oy))
  const { width: w, height: h } = body
  for (let y = y0; y < h; y++) {
    const row = y * w
    let prevEnd = -1
    for (let x = 0; x < w; x++) {
      if (body.data[row + x]! <= 0.5) continue
      if (prevEnd >= 0 && x - prevEnd > 1) {
        const gap = x - prevEnd - 1
        const gc = (x + prevEnd) / 2
        if (gap < 1.6 * hw && Math.abs(gc - cx) < 0.6 * hw) {
          for (let k = prevEnd + 1; k < x; k++) body.data[row + k] = 1
        }
      }
      prevEnd = x
    }
  }
}

/**
 * The shading's local and broad lightness (the half-resolution luma `half` of the crop at x0, y0,
 * ×2 px, and its colour `halfRgb`): each pixel's luma over the luma of what it is, averaged over
 * the silhouette only (blur of luma × weight over blur of weight; 1 where no silhouette is near).
 * On the old top and the old bottom that is the luma of the pixel's own main colour (undress.ts
 * fabricAlbedo, each garment's apart), and pixels of none of them or beside another of them (the
 * mixed pixels at a stripe's or a print's outline) carry no light; on the rest of the silhouette
 * (skin, hair) it is that rest's mean luma. The folds and the light of the old clothes carry over,
 * but not their outlines nor their print: dark jeans against a white backdrop made a new dress
 * darker over the old trouser legs, and a striped polo's navy and white stripes, over twice the
 * fine blur's width apart, showed through every new top as stripes of their own.
 */
function shadeField(
  half: Plane,
  halfRgb: Float32Array,
  a: PersonAnalysis,
  c: Clothing,
  x0: number,
  y0: number,
): { fine: Plane; broad: Plane } {
  const { width: w, height: h } = half
  const W = a.width
  const n = w * h
  const cls = new Uint8Array(n)
  const m = plane(w, h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = Math.min(a.height - 1, y0 + 2 * y) * W + Math.min(W - 1, x0 + 2 * x)
      if (a.mask.data[i]! <= 0.5) continue
      const j = y * w + x
      cls[j] = c.upper.data[i]! > 0.5 ? 0 : c.lower.data[i]! > 0.5 ? 1 : 2
      m.data[j] = 1
    }
  }
  // Each pixel's albedo: its main colour's luma (old top, old bottom), or the rest's mean; NaN: none.
  const albedo = new Float32Array(n).fill(NaN)
  const label = new Int16Array(n).fill(-1)
  for (const k of [0, 1]) {
    const worn = new Float32Array(n)
    for (let j = 0; j < n; j++) if (m.data[j]! > 0 && cls[j] === k) worn[j] = 1
    const f = fabricAlbedo(halfRgb, worn)
    for (let j = 0; j < n; j++) {
      if (worn[j]! <= 0) continue
      const l = f.label(halfRgb[j * 3]!, halfRgb[j * 3 + 1]!, halfRgb[j * 3 + 2]!)
      if (l < 0) continue
      label[j] = 8 * k + l
      albedo[j] = f.luma[l]!
    }
  }
  let sum = 0
  let cnt = 0
  for (let j = 0; j < n; j++) if (m.data[j]! > 0 && cls[j] === 2) ((sum += half.data[j]!), cnt++)
  const rest = cnt > 0 ? sum / cnt : NaN
  const rel = plane(w, h)
  const wt = plane(w, h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const j = y * w + x
      if (m.data[j]! <= 0) continue
      let alb = cls[j] === 2 ? rest : albedo[j]!
      if (cls[j] !== 2 && label[j]! >= 0) {
        // Beside another main colour or another class the pixel may be mixed: no light from it.
        for (let dy = -1; dy <= 1 && !Number.isNaN(alb); dy++) {
          for (let dx = -1; dx <= 1; dx++) {
            const yy = y + dy
            const xx = x + dx
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue
            const q = yy * w + xx
            if (m.data[q]! > 0 && (cls[q] !== cls[j] || label[q] !== label[j])) {
              alb = NaN
              break
            }
          }
        }
      }
      if (Number.isNaN(alb)) continue
      rel.data[j] = half.data[j]! / Math.max(0.02, alb)
      wt.data[j] = 1
    }
  }
  const over = (r: number): Plane => {
    const l = boxBlur(rel, r).data
    const q = boxBlur(wt, r).data
    const out = plane(w, h, 1)
    for (let j = 0; j < n; j++) if (q[j]! > 0.05) out.data[j] = l[j]! / q[j]!
    return out
  }
  const sw = a.shoulderWidth
  return { fine: over(Math.max(1, 0.025 * sw * 0.5)), broad: over(Math.max(2, 0.25 * sw * 0.5)) }
}

/** Work cells (each way) around a cell whose photo colour is averaged to tell a bottom below the waist. */
export const WAIST_CELLS = 1

/** The photo's mean colour (features as `labOf`) over the work cells within `r` of cell (u, v); k: work px per photo px. */
function meanLabAround(img: Rgb, u: number, v: number, k: number, r: number): Vec3 {
  const W = img.width
  const H = img.height
  const x0 = Math.max(0, Math.floor((u - r) / k))
  const x1 = Math.min(W - 1, Math.ceil((u + r + 1) / k) - 1)
  const y0 = Math.max(0, Math.floor((v - r) / k))
  const y1 = Math.min(H - 1, Math.ceil((v + r + 1) / k) - 1)
  const s = [0, 0, 0]
  let cnt = 0
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const o3 = (y * W + x) * 3
      s[0]! += img.data[o3]!
      s[1]! += img.data[o3 + 1]!
      s[2]! += img.data[o3 + 2]!
      cnt++
    }
  }
  const q = (c: number) => clamp(Math.round(s[c]! / Math.max(1, cnt)), 0, 255)
  return labOf(q(0), q(1), q(2))
}

/** Luma (0..1) and RGB (0..255) of the box (x0, y0, cw, ch) at half resolution, 2×2 box-averaged. */
function halfLuma(
  img: Rgb,
  x0: number,
  y0: number,
  cw: number,
  ch: number,
): { luma: Plane; rgb: Float32Array } {
  const w = Math.max(1, cw >> 1)
  const h = Math.max(1, ch >> 1)
  const out = new Float32Array(w * h)
  const rgb = new Float32Array(w * h * 3)
  const W = img.width
  const d = img.data
  const l = (i: number) => 0.299 * d[i]! + 0.587 * d[i + 1]! + 0.114 * d[i + 2]!
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = ((y0 + 2 * y) * W + x0 + 2 * x) * 3
      const b = Math.min(y0 + 2 * y + 1, img.height - 1) === y0 + 2 * y ? a : a + W * 3
      const c = Math.min(x0 + 2 * x + 1, W - 1) === x0 + 2 * x ? 0 : 3
      const j = y * w + x
      out[j] = (l(a) + l(a + c) + l(b) + l(b + c)) / (4 * 255)
      for (let k = 0; k < 3; k++) {
        rgb[j * 3 + k] = (d[a + k]! + d[a + c + k]! + d[b + k]! + d[b + c + k]!) / 4
      }
    }
  }
  return { luma: { width: w, height: h, data: out }, rgb }
}

/**
 * Where the old garment may be taken off (0..1 at the photo's size), and whether to take it off at
 * all. Only where it would show beside the new garment and only where that is certain:
 * - trust: the new garment must cover at least TAKE_OFF_MIN_COVER of the body part it replaces (a
 *   top or dress: the upper 60 % of the torso quad, shoulders → hips; a bottom: the hips down a
 *   quarter of the way to the knees). Less means the garment was not understood or not fitted (a
 *   patch at the collar): then the old garment stays, and nothing worse than today is drawn.
 * - the sleeves: a new top or dress takes the old top off the arms (capsules shoulder → elbow →
 *   wrist, TAKE_OFF_ARM × the shoulder width thick, outside the torso's core — the shoulder–hip quad
 *   with its shoulder corners moved TAKE_OFF_TORSO of the shoulder width inwards — above the old
 *   top's hem and the hip joints, but for a long sleeve's cuff: what the finder gave the top on the
 *   lower half of a sure forearm, TAKE_OFF_CUFF of its capsule, wherever it hangs): an old long
 *   sleeve under a new short sleeve or a sleeveless top shows the arm. The new garment is drawn over it, so only what it leaves uncovered shows. A new
 *   garment without sleeves takes the old sleeves off whatever their colour (below). Below the
 *   waist not what has the old bottom's colours rather than the chest's (averaged over WAIST_CELLS
 *   work cells): a forearm hangs beside the hips, and a waistband the finder gave the top is not
 *   a sleeve.
 * - the whole old top, when it is another garment than the new one (oldTopLook: on the chest, less
 *   than TAKE_OFF_OTHER_SAME of it is near the new garment's colours, or of the new garment near
 *   its colours): also the torso's core (a new top narrower than the old one), below the new hem
 *   (a shorter top over a long one) down to the old top's own hem (at most TAKE_OFF_BELOW_HIPS × the
 *   torso length below the hip joints; below the waist not what has the old bottom's colours rather
 *   than the chest's), and whatever its colour (the navy stripes of a striped polo under a navy tee
 *   go with its white ones, instead of leaving a striped patch). When the old top looks like the new
 *   garment (the paired photos, where it is the very garment) only the sleeves come off, as above.
 * - above the new neckline: between the shoulder joints, in each column the new garment reaches,
 *   everything above its top edge from the mouth down (a scoop, a V, straps, one bare shoulder: the
 *   old top's chest and collar showed above it). The old collar too when the clothing finder left it
 *   out for being of another colour (and the head region protected it): there, from
 *   COLLAR_BELOW_MOUTH × the shoulder width below the mouth and within COLLAR_REACH of the old top,
 *   whatever is neither this person's skin nor hair (`collar`, repainted even in the head region);
 *   only when this person's skin prototypes were found. Where the new garment does reach (its back
 *   neckline, its shoulders), the old top there below the chin that is neither skin, shaded skin
 *   (skin's hue up to UNDER_SKIN_CHROMA), hair nor of the new garment's colours is `under`: the
 *   head region gives way to the new garment over it (headInFront).
 * - the legs: a new bottom or dress takes the old bottom off everywhere below the hip joints (a
 *   skirt or shorts over trousers, a slimmer cut, a dress over trousers; under the new garment it is
 *   covered anyway), but only the part of it connected to the thighs (a bag of the trousers' colour
 *   stays); above the hip joints up to where the old top covers it (a low-rise new bottom leaves
 *   the old waistband: below the waist also what the finder gave to the top but has the old
 *   bottom's colours, connected to the legs; above the new waistband whatever its colour), and on
 *   the feet (capsules ankle → heel → toes, SHOE_REACH) only what has the old
 *   bottom's colours rather than the shoes' (shoes stay). An old dress's skirt counts as a bottom.
 * - never (but for another old top, above) where the old garment looks like the new one (colour
 *   within TAKE_OFF_SAME of one of the new garment's main colours: its colour prototypes that hold at least TAKE_OFF_SAME_SHARE of its
 *   pixels; below the hips only within TAKE_OFF_NEAR × the shoulder width of the new garment and
 *   not below its hem — white jeans below a white skirt come off):
 *   there the old cloth reads as the new garment's own fit, and painting skin would only show the
 *   warp's error (the paired photos, where the person wears the very garment). A trim, a cuff or a
 *   print is not a main colour: a light grey old tee (7–10 from white here, L* weighted) under a
 *   navy tee with white trims came off nowhere before. The price: old sleeves of the new top's main
 *   colour stay.
 * - never the person's own skin: a pixel nearer the skin prototypes found on this person
 *   (clothing.ts `skinProtos`: face, neck, hands) or, above the hips, the hair's than the old
 *   garment's own prototypes, and within TAKE_OFF_SKIN_D of them (shaded skin is far from the lit
 *   skin's prototypes, farther from the cloth's): bare arms the colour classes gave to the top stay
 *   as they are, while a beige, tan or olive old garment, nearer its own colours than this person's
 *   skin, comes off. When no skin was found, nothing of skin's hue (Lab hue 10°–90°, chroma
 *   TAKE_OFF_SKIN_CHROMA–60) is taken off (uncertain).
 */
export const TAKE_OFF_MIN_COVER = 0.6
export const TAKE_OFF_ARM = 0.3
/** A long sleeve's cuff below the hip joints comes off within this share of the forearm's capsule … */
export const TAKE_OFF_CUFF = 0.8
/** … around a wrist the landmark model is at least this sure of. */
export const TAKE_OFF_CUFF_SURE = 0.5
export const TAKE_OFF_SAME = 24
export const TAKE_OFF_SAME_SHARE = 0.12
export const TAKE_OFF_TORSO = 0.2
export const TAKE_OFF_SKIN_CHROMA = 5
export const TAKE_OFF_SKIN_D = 22
export const TAKE_OFF_NEAR = 0.15
export const SHOE_REACH = 0.16
/**
 * The old top is another garment than the new one when under this share of its chest is within
 * TAKE_OFF_LOOK_D of the new garment's colours, or of the new garment within it of the chest's
 * (oldTopLook). On the six paired photos (the very garment) the smaller share is 0.67–0.99; a navy
 * Lee tee over the striped polo 0.28, a black tee over the navy Lee tee 0.09.
 */
export const TAKE_OFF_OTHER_SAME = 0.5
export const TAKE_OFF_LOOK_D = 20
/** Work pixels of old top on the chest needed to judge its look. */
export const TAKE_OFF_LOOK_MIN = 30
export const TAKE_OFF_BELOW_HIPS = 0.25
/**
 * The old collar (takeOffZone): above the new neckline, from this far (× shoulder width) below the
 * mouth (the lips and chin stay) and within COLLAR_REACH of the old top.
 */
export const COLLAR_BELOW_MOUTH = 0.1
export const COLLAR_REACH = 0.08
/** Skin's hue up to this Lab chroma counts as (shaded) skin under the new collar, never old top. */
export const UNDER_SKIN_CHROMA = 70
/** Within this distance (× shoulder width) of hair-coloured pixels only the old top is cloth under the new collar. */
export const UNDER_HAIR_GAP = 0.03
export const UNDER_DARK_L = 30
/** Hair prototypes come from the head region this far (× sw) above the eyes, from at least HAIR_MIN_SAMPLES work pixels. */
export const HAIR_ABOVE_EYES = 0.05
export const HAIR_MIN_SAMPLES = 20

/**
 * This person's lit skin: within TAKE_OFF_SKIN_D of their skin prototypes and of skin's chroma (at
 * least TAKE_OFF_SKIN_CHROMA): with L* weighted low, a white rib is within 17 of person_02's skin.
 */
function litSkin(v: Vec3, skin: readonly Vec3[]): boolean {
  return nearestD2(v, skin) < TAKE_OFF_SKIN_D ** 2 && Math.hypot(v[1], v[2]) >= TAKE_OFF_SKIN_CHROMA
}

/**
 * Shaded neck skin: far from the lit skin's prototypes, but skin's hue below UNDER_SKIN_CHROMA. The
 * features' chroma is divided by lightness (labOf, from L* 20 down): below UNDER_DARK_L it is taken
 * as at UNDER_DARK_L, or the deep shadow on dark skin beside the neck (person_05) passed for cloth.
 */
function shadedSkin(v: Vec3): boolean {
  const hue = (Math.atan2(v[2], v[1]) * 180) / Math.PI
  const L = v[0] / L_WEIGHT
  const chroma = (Math.hypot(v[1], v[2]) * Math.max(L, 20)) / Math.max(L, UNDER_DARK_L)
  return hue >= 10 && hue <= 90 && chroma >= TAKE_OFF_SKIN_CHROMA && chroma <= UNDER_SKIN_CHROMA
}

function takeOffZone(
  img: Rgb,
  a: PersonAnalysis,
  parts: readonly WarpedPart[],
  c: Clothing,
  category: 'upper' | 'lower' | 'full',
): {
  zone: Plane
  collar: Plane | null
  under: Plane | null
  hair: Plane | null
  hairFront: Plane | null
  cover: number
  skipped: string | null
  same: number | null
} {
  const W = img.width
  const H = img.height
  const w = c.upperWork.width
  const h = c.upperWork.height
  const n = w * h
  const k = w / W
  // The new garment on the work grid: alpha and premultiplied colour, parts drawn in order.
  const na = new Float32Array(n)
  const nc = new Float32Array(n * 3)
  for (const p of parts) {
    const pn = p.width * p.height
    const u0 = Math.max(0, Math.floor(p.x0 * k))
    const u1 = Math.min(w - 1, Math.ceil((p.x0 + p.width) * k))
    const v0 = Math.max(0, Math.floor(p.y0 * k))
    const v1 = Math.min(h - 1, Math.ceil((p.y0 + p.height) * k))
    for (let v = v0; v <= v1; v++) {
      const yy = Math.floor((v + 0.5) / k) - p.y0
      if (yy < 0 || yy >= p.height) continue
      for (let u = u0; u <= u1; u++) {
        const xx = Math.floor((u + 0.5) / k) - p.x0
        if (xx < 0 || xx >= p.width) continue
        const q = yy * p.width + xx
        const al = Math.min(1, p.rgba[3 * pn + q]!)
        if (al <= 0.002) continue
        const j = v * w + u
        na[j] = na[j]! * (1 - al) + al
        for (let ch = 0; ch < 3; ch++) {
          nc[j * 3 + ch] =
            nc[j * 3 + ch]! * (1 - al) +
            p.rgba[ch * pn + q]! *
              255 *
              (Math.min(1, p.rgba[3 * pn + q]!) / Math.max(p.rgba[3 * pn + q]!, 1e-6))
        }
      }
    }
  }
  const P = (i: number): Point => ({ x: a.points[i]!.x * k, y: a.points[i]!.y * k })
  const sl = P(LM.leftShoulder)
  const sr = P(LM.rightShoulder)
  const hl = P(LM.leftHip)
  const hr = P(LM.rightHip)
  const sw = a.shoulderWidth * k
  const mask = resizePlane(a.mask, w, h).data
  // Trust: coverage of the body part the new garment replaces.
  const part = plane(w, h)
  if (category === 'lower') {
    fillPolygon(part, [hl, hr, lerp(hr, P(LM.rightKnee), 0.25), lerp(hl, P(LM.leftKnee), 0.25)])
  } else {
    fillPolygon(part, [sl, sr, lerp(sr, hr, 0.6), lerp(sl, hl, 0.6)])
  }
  let inside = 0
  let covered = 0
  for (let j = 0; j < n; j++) {
    if (part.data[j]! < 0.5 || mask[j]! < 0.5) continue
    inside++
    if (na[j]! > 0.5) covered++
  }
  const cover = inside > 0 ? covered / inside : 0
  const zone = plane(w, h)
  if (inside < 8 || cover < TAKE_OFF_MIN_COVER) {
    return {
      zone: plane(W, H),
      collar: null,
      under: null,
      hair: null,
      hairFront: null,
      cover,
      same: null,
      skipped: `the new garment covers ${Math.round(100 * cover)} % of the body part it replaces`,
    }
  }
  const photoAt = (j: number): Vec3 => {
    const x = Math.min(W - 1, Math.floor(((j % w) + 0.5) / k))
    const y = Math.min(H - 1, Math.floor((Math.floor(j / w) + 0.5) / k))
    const o3 = (y * W + x) * 3
    return labOf(img.data[o3]!, img.data[o3 + 1]!, img.data[o3 + 2]!)
  }
  // The new garment's colours: prototypes (k-means) of its opaque pixels, so a print counts by its
  // own colours, not their average.
  const samples: Vec3[] = []
  const step = Math.max(1, Math.floor(n / 4000))
  for (let j = 0; j < n; j += step) {
    if (na[j]! < 0.9) continue
    const col = [0, 1, 2].map((ch) => clamp(Math.round(nc[j * 3 + ch]! / na[j]!), 0, 255))
    samples.push(labOf(col[0]!, col[1]!, col[2]!))
  }
  const allProtos = kmeans(samples, 6)
  const protos = mainColours(samples, allProtos, TAKE_OFF_SAME_SHARE)
  // Where the old top comes off whatever its colour (another garment than the new one, below).
  const whole = plane(w, h)
  let look: { chest: Vec3[]; same: number } | null = null
  const neckline = plane(w, h)
  if (category !== 'lower') {
    // The torso's core stays (there the old and new tops meet at the warp's error): the shoulder–hip
    // quad with its shoulder corners moved TAKE_OFF_TORSO × the shoulder width towards each other,
    // so that the whole upper arm, from the shoulder down, is outside it, hanging or raised.
    const core = plane(w, h)
    const inward = (p: Point, q: Point): Point => lerp(p, q, TAKE_OFF_TORSO)
    fillPolygon(core, [inward(sl, sr), inward(sr, sl), hr, hl])
    const arm = plane(w, h)
    for (const [s, e, wr, ix, pk] of [
      [LM.leftShoulder, LM.leftElbow, LM.leftWrist, LM.leftIndex, LM.leftPinky],
      [LM.rightShoulder, LM.rightElbow, LM.rightWrist, LM.rightIndex, LM.rightPinky],
    ] as const) {
      drawCapsule(arm, P(s), P(e), TAKE_OFF_ARM * sw)
      drawCapsule(arm, P(e), P(wr), 0.7 * TAKE_OFF_ARM * sw)
      drawCapsule(arm, P(wr), mid(P(ix), P(pk)), 0.3 * TAKE_OFF_ARM * sw)
    }
    // Never below the old top's own hem nor the hip joints (a bottom of a colour the top also has),
    // but for a long sleeve's cuff: around a sure wrist (the lower half of the forearm, TAKE_OFF_CUFF
    // × the arm's capsule), what the finder gave the top (a cuff hangs below the hips).
    const hemV = Math.min(c.topHemY === null ? h : c.topHemY * k, Math.min(hl.y, hr.y))
    const cuff = plane(w, h)
    for (const [e, wr] of [
      [LM.leftElbow, LM.leftWrist],
      [LM.rightElbow, LM.rightWrist],
    ] as const) {
      if (a.points[wr]!.score < TAKE_OFF_CUFF_SURE) continue
      drawCapsule(cuff, lerp(P(e), P(wr), 0.5), P(wr), TAKE_OFF_CUFF * 0.7 * TAKE_OFF_ARM * sw)
    }
    // A new garment without sleeves has none an old sleeve could be read as: on the arms the old
    // top comes off whatever its colour (a grey tank over a grey tee leaves bare arms).
    const sleeveless = !parts.some((p) => p.part.layer === 'sleeve')
    look = oldTopLook(c, k, [sl, sr, hr, hl], allProtos, photoAt, mask, samples)
    // Below the waist (60 % of the way from the shoulders to the hips) what the finder gave the top
    // but has the old bottom's colours rather than the chest's is the old bottom (a gathered
    // waistband, its folds in shadow, near a dark top's colours): the capsule around a forearm
    // hanging beside the hips does not take it off (it painted person_02's blue waistband at the hip
    // as a tan block under every new top). The colour is the mean over WAIST_CELLS work cells
    // around: one photo pixel a cell flipped from one side to the other within the folds, and the
    // cells that stayed in the zone were painted as a speckled patch.
    const waistV = lerp(mid(sl, sr), mid(hl, hr), 0.6).y
    const chest = look?.chest ?? c.upperProtos
    const bottomBelowWaist = (j: number): boolean => {
      if (Math.floor(j / w) <= waistV || c.lowerProtos.length === 0 || chest.length === 0) {
        return false
      }
      const col = meanLabAround(img, j % w, Math.floor(j / w), k, WAIST_CELLS)
      return nearestD2(col, c.lowerProtos) < nearestD2(col, chest)
    }
    for (let j = 0; j < n; j++) {
      const onCuff = cuff.data[j]! > 0.5 && c.upperWork.data[j]! > 0.5
      if (core.data[j]! < 0.5 && (Math.floor(j / w) <= hemV || onCuff) && arm.data[j]! > 0) {
        if (c.upperWork.data[j]! > 0.5 && bottomBelowWaist(j)) continue
        zone.data[j] = Math.max(zone.data[j]!, arm.data[j]!)
        if (sleeveless && arm.data[j]! > 0.5) whole.data[j] = 1
      }
    }
    if (look !== null && look.same < TAKE_OFF_OTHER_SAME) {
      // Another garment than the new one (its chest mostly unlike the new garment's colours):
      // all of it comes off, the torso's core, below the new hem and the stripes of the new
      // garment's colour included, wherever the new garment leaves it uncovered — down to its own
      // hem (an untucked top, at most TAKE_OFF_BELOW_HIPS × the torso length below the hip joints),
      // but not, below the waist, what has the old bottom's colours rather than the chest's (a
      // waistband the finder gave to the top).
      const torsoLen = Math.hypot(mid(hl, hr).x - mid(sl, sr).x, mid(hl, hr).y - mid(sl, sr).y)
      const hipV = Math.max(hl.y, hr.y)
      const otherHemV = Math.min(
        c.topHemY === null ? h : c.topHemY * k,
        hipV + TAKE_OFF_BELOW_HIPS * torsoLen,
      )
      // With the old cloth's soft edge (undress.ts WORN_GROW).
      const onTop = dilate(c.upperWork, Math.max(1, 0.02 * sw)).data
      for (let j = 0; j < n; j++) {
        const v = Math.floor(j / w)
        if (v > otherHemV) break
        if (onTop[j]! < 0.5 || mask[j]! < 0.5) continue
        if (v > waistV && c.lowerProtos.length > 0) {
          const col = photoAt(j)
          if (nearestD2(col, c.lowerProtos) < nearestD2(col, look.chest)) continue
        }
        zone.data[j] = 1
        whole.data[j] = 1
      }
    }
    // Above the new garment's neckline: between the shoulder joints, in each column where the new
    // garment is, everything above its top edge, from the mouth down (a scoop, a V, straps or
    // one shoulder bare leave the old top's chest and collar showing). Not the warp's error: the
    // new garment's own top edge, where nothing of it is drawn.
    const mouthV = Math.min(P(LM.mouthLeft).y, P(LM.mouthRight).y)
    const u0 = Math.max(0, Math.floor(Math.min(sl.x, sr.x)))
    const u1 = Math.min(w - 1, Math.ceil(Math.max(sl.x, sr.x)))
    for (let u = u0; u <= u1; u++) {
      let top = -1
      for (let v = 0; v < h; v++) {
        if (na[v * w + u]! > 0.5) {
          top = v
          break
        }
      }
      if (top < 0) continue
      for (let v = Math.max(0, Math.ceil(mouthV)); v < Math.min(top, hemV); v++) {
        zone.data[v * w + u] = 1
        // An old collar of another colour than the top's (the clothing finder leaves it out, and
        // in the head region protects it): the pixels here below the chin, next to the old top,
        // that are neither skin nor hair (decided below, after the zone's own filters).
        if (v >= mouthV + COLLAR_BELOW_MOUTH * sw) neckline.data[v * w + u] = 1
      }
    }
  }
  // The old bottom's rise that the clothing finder gave to the top (below): taken off with the
  // bottom, though the top stays (returned with the collar, which undress.ts takes off as it is).
  const riseOnTop = plane(w, h)
  if (category !== 'upper') {
    // The old bottom below the hip joints, wherever it is: beside and below the new garment it would
    // show (a shorter hem, a slimmer cut, a dress over trousers), under it it is covered anyway (and
    // where the new garment's own alpha is thin, the legs show rather than the old cloth).
    const hipY = Math.max(hl.y, hr.y)
    // Only the old bottom on the legs: a piece of its colour apart from it (a black bag beside black
    // shorts) is an accessory and stays.
    const thighs = plane(w, h)
    for (const [hp, kn] of [
      [LM.leftHip, LM.leftKnee],
      [LM.rightHip, LM.rightKnee],
    ] as const) {
      drawCapsule(thighs, P(hp), lerp(P(hp), P(kn), 0.5), 0.1 * sw)
    }
    const { labels } = components(c.lowerWork)
    const onLegs = new Set<number>()
    for (let j = 0; j < n; j++) if (labels[j]! > 0 && thighs.data[j]! > 0.5) onLegs.add(labels[j]!)
    const legCloth = plane(w, h)
    for (let j = 0; j < n; j++) if (onLegs.has(labels[j]!)) legCloth.data[j] = 1
    // … with the old cloth's soft edge around it (undress.ts WORN_GROW), never another piece's.
    const near = dilate(legCloth, Math.max(2, 0.03 * sw)).data
    for (let v = Math.ceil(hipY); v < h; v++) {
      for (let u = 0; u < w; u++) {
        const j = v * w + u
        if (near[j]! > 0.5 && (labels[j] === 0 || onLegs.has(labels[j]!))) zone.data[j] = 1
      }
    }
    // … and above the hip joints up to where the old top covers it (its waistband and rise above a
    // low-rise new bottom): the old bottom's cloth on the legs, and below the waist (60 % of the
    // way from the shoulders to the hips) what the finder gave to the top but has the old bottom's
    // colours (within TAKE_OFF_SAME: a waistband under a blouse's hem), connected to the legs. Above
    // the new garment's waistband (its top row, in each column within TAKE_OFF_NEAR beside it) that
    // is not the new garment's fit whatever its colour (`whole`: white jeans above a white skirt
    // come off).
    const hipV0 = Math.ceil(hipY)
    const waistV = Math.floor(lerp(mid(sl, sr), mid(hl, hr), 0.6).y)
    const rise = plane(w, h)
    for (let v = Math.max(0, waistV); v < Math.min(h, hipV0 + 2); v++) {
      for (let u = 0; u < w; u++) {
        const j = v * w + u
        if (onLegs.has(labels[j]!)) rise.data[j] = 1
        else if (v < hipV0 && c.upperWork.data[j]! > 0.5 && c.lowerProtos.length > 0) {
          if (nearestD2(photoAt(j), c.lowerProtos) < TAKE_OFF_SAME ** 2) rise.data[j] = 1
        }
      }
    }
    const riseParts = components(rise)
    const toLegs = new Set<number>()
    for (let v = hipV0; v < Math.min(h, hipV0 + 2); v++) {
      for (let u = 0; u < w; u++) {
        const j = v * w + u
        if (rise.data[j]! > 0.5) toLegs.add(riseParts.labels[j]!)
      }
    }
    const topV = new Int32Array(w).fill(h)
    for (let j = 0; j < n; j++) {
      if (na[j]! > 0.5) topV[j % w] = Math.min(topV[j % w]!, Math.floor(j / w))
    }
    const reach = Math.max(1, Math.round(TAKE_OFF_NEAR * sw))
    const riseCloth = plane(w, h)
    for (let j = 0; j < n; j++) if (toLegs.has(riseParts.labels[j]!)) riseCloth.data[j] = 1
    // … with its soft edge (as below the hips), never into the old top.
    const riseNear = dilate(riseCloth, Math.max(2, 0.03 * sw)).data
    for (let v = Math.max(0, waistV); v < hipV0; v++) {
      for (let u = 0; u < w; u++) {
        const j = v * w + u
        if (riseCloth.data[j]! < 0.5) {
          if (riseNear[j]! < 0.5 || labels[j] !== 0 || c.upperWork.data[j]! > 0.5) continue
        }
        zone.data[j] = 1
        if (c.upperWork.data[j]! > 0.5) riseOnTop.data[j] = 1
        let newTop = h
        for (let d = Math.max(0, u - reach); d <= Math.min(w - 1, u + reach); d++) {
          newTop = Math.min(newTop, topV[d]!)
        }
        if (v < newTop) whole.data[j] = 1
      }
    }
    // Shoes stay: on the feet (capsules ankle → heel → toes, SHOE_REACH × the shoulder width thick,
    // on either leg whatever its pose) only what has the old bottom's colours and not the shoes' is
    // taken off (a trouser hem over the shoe); a shoe of the trousers' colour stays whole.
    const feet = plane(w, h)
    const soles = plane(w, h)
    for (const [an, he, to] of [
      [LM.leftAnkle, LM.leftHeel, LM.leftFootIndex],
      [LM.rightAnkle, LM.rightHeel, LM.rightFootIndex],
    ] as const) {
      const R = SHOE_REACH * sw
      // Past the toe landmark by a third of the foot (a thick sole, a pointed shoe).
      const toe = lerp(P(an), P(to), 1.3)
      drawCapsule(feet, P(an), P(he), R)
      drawCapsule(feet, P(an), toe, R)
      drawCapsule(feet, P(he), toe, R)
      drawCapsule(soles, P(he), P(to), 0.4 * R)
    }
    const lowerCols: Vec3[] = []
    const shoeCols: Vec3[] = []
    const kneeY = Math.max(P(LM.leftKnee).y, P(LM.rightKnee).y)
    for (let j = 0; j < n; j++) {
      if (mask[j]! < 0.5) continue
      const v = Math.floor(j / w)
      if (soles.data[j]! > 0.5) shoeCols.push(photoAt(j))
      else if (v > hipY && v < kneeY && feet.data[j]! < 0.5 && c.lowerWork.data[j]! > 0.5) {
        lowerCols.push(photoAt(j))
      }
    }
    const lowerProtos = kmeans(lowerCols, 4)
    const shoeProtos = kmeans(shoeCols, 4)
    for (let j = 0; j < n; j++) {
      if (zone.data[j]! <= 0 || feet.data[j]! < 0.5) continue
      const col = photoAt(j)
      const dl = lowerProtos.length > 0 ? nearestD2(col, lowerProtos) : Infinity
      const ds = shoeProtos.length > 0 ? nearestD2(col, shoeProtos) : Infinity
      if (!(dl < TAKE_OFF_SAME ** 2 && dl < 0.5 * ds)) zone.data[j] = 0
    }
  }
  // Skin stays skin (bare arms the clothing classes took for the top): a pixel nearer this person's
  // own skin (clothing.ts skinProtos: face, neck, hands) or hair than the old garment's colours, and
  // within TAKE_OFF_SKIN_D of it, is never repainted; a beige, tan or olive garment is nearer its
  // own prototypes and comes off. With no skin found (face cut off, hands covered) every pixel of
  // skin's hue stays (uncertain).
  const oldProtos = [
    ...(category !== 'lower' ? c.upperProtos : []),
    ...(category !== 'upper' ? c.lowerProtos : []),
  ]
  const hairToV = Math.min(hl.y, hr.y)
  for (let j = 0; j < n; j++) {
    if (zone.data[j]! <= 0) continue
    const v = photoAt(j)
    if (c.skinProtos.length > 0) {
      // Hair only above the hips (dark leggings are nearer dark hair than their own shadows are).
      const hairHere = c.hairProtos.length > 0 && Math.floor(j / w) < hairToV
      const ds = Math.min(
        nearestD2(v, c.skinProtos),
        hairHere ? nearestD2(v, c.hairProtos) : Infinity,
      )
      const dg = oldProtos.length > 0 ? nearestD2(v, oldProtos) : Infinity
      if (ds < TAKE_OFF_SKIN_D ** 2 && ds < dg) zone.data[j] = 0
      continue
    }
    const L = v[0] / L_WEIGHT
    const chroma = Math.hypot(v[1], v[2]) * (Math.max(L, 20) / 60)
    const hue = (Math.atan2(v[2], v[1]) * 180) / Math.PI
    if (hue >= 10 && hue <= 90 && chroma >= TAKE_OFF_SKIN_CHROMA && chroma <= 60 && L >= 15) {
      zone.data[j] = 0
    }
  }
  // The old garment that looks like the new one right beside it stays (unless it is another garment:
  // `whole`).
  // On the legs only right beside it: farther than TAKE_OFF_NEAR × the shoulder width from the new
  // garment the old cloth is not the new garment's fit (a black dress below new black shorts is the
  // dress). On the arms anywhere (old sleeves of the new top's colour stay).
  const newCover = plane(w, h)
  for (let j = 0; j < n; j++) newCover.data[j] = na[j]! > 0.5 ? 1 : 0
  const near = Math.max(1, TAKE_OFF_NEAR * sw)
  const beside = dilate(newCover, near).data
  const legsFromV = Math.max(hl.y, hr.y)
  // Below the new garment's hem (its lowest row in each column, and in the columns within
  // TAKE_OFF_NEAR beside it) the old cloth is not the new garment's fit: the legs of white jeans
  // below a white skirt come off.
  const lowest = new Int32Array(w).fill(-1)
  for (let j = 0; j < n; j++) if (newCover.data[j]! > 0) lowest[j % w] = Math.floor(j / w)
  const newHemV = new Int32Array(w).fill(-1)
  for (let u = 0; u < w; u++) {
    for (
      let d = Math.max(0, Math.floor(u - near));
      d <= Math.min(w - 1, Math.ceil(u + near));
      d++
    ) {
      newHemV[u] = Math.max(newHemV[u]!, lowest[d]!)
    }
  }
  for (let j = 0; j < n; j++) {
    if (zone.data[j]! <= 0 || protos.length === 0 || whole.data[j]! > 0) continue
    const v = Math.floor(j / w)
    if (v > legsFromV && (beside[j]! < 0.5 || v > newHemV[j % w]!)) continue
    if (nearestD2(photoAt(j), protos) < TAKE_OFF_SAME ** 2) zone.data[j] = 0
  }
  // Hair (a real hair mask, not a colour alone): pixels within TAKE_OFF_SKIN_D of this person's hair
  // own hair colours (prototypes of the head region above the eyes that is not skin; clothing.ts's
  // also take the sides of the face down to the neck line, where an old collar lies) that are
  // connected through such pixels to the head region above the eyes. A navy collar of dark hair's colour below a
  // short haircut is not hair; long hair over the shoulders is.
  const hair = plane(w, h)
  const hairFront = plane(w, h)
  let hairProtos: Vec3[] = []
  const collarFromV = Math.max(
    0,
    Math.ceil(Math.min(P(LM.mouthLeft).y, P(LM.mouthRight).y) + COLLAR_BELOW_MOUTH * sw),
  )
  const shoulderV = Math.min(h, Math.ceil(Math.max(sl.y, sr.y)) + 2)
  if (category !== 'lower') {
    const head = resizePlane(a.head, w, h).data
    const eyeV = Math.floor(Math.min(P(LM.leftEye).y, P(LM.rightEye).y) - HAIR_ABOVE_EYES * sw)
    // The hair's own colours: prototypes of the head region above the eyes that is not skin.
    const hairSamples: Vec3[] = []
    for (let j = 0; j < Math.max(0, eyeV) * w; j++) {
      if (head[j]! < 0.9 || mask[j]! < 0.9) continue
      const v = photoAt(j)
      if (c.skinProtos.length > 0 && nearestD2(v, c.skinProtos) < TAKE_OFF_SKIN_D ** 2) continue
      hairSamples.push(v)
    }
    hairProtos = hairSamples.length >= HAIR_MIN_SAMPLES ? kmeans(hairSamples, 3) : []
    if (hairProtos.length > 0) {
      const like = plane(w, h)
      for (let j = 0; j < n; j++) {
        if (mask[j]! >= 0.5 && nearestD2(photoAt(j), hairProtos) < TAKE_OFF_SKIN_D ** 2) {
          like.data[j] = 1
        }
      }
      const { labels } = components(like)
      const onHead = new Set<number>()
      for (let j = 0; j < Math.max(0, eyeV) * w; j++) {
        if (labels[j]! > 0 && head[j]! > 0.5) onHead.add(labels[j]!)
      }
      for (let j = 0; j < n; j++) if (onHead.has(labels[j]!)) hair.data[j] = 1
      // Hair in front, as one piece: the hair below the neck line that is nearer the hair's colours
      // than the old top's by HAIR_MARGIN (a print's letters, the top between the strands are not).
      const neckF = neckLine(a.points, a.shoulderWidth)
      for (let j = 0; j < n; j++) {
        if (hair.data[j]! <= 0 || Math.floor(j / w) < neckF.y((j % w) / k) * k) continue
        const v = photoAt(j)
        const du = c.upperProtos.length > 0 ? nearestD2(v, c.upperProtos) : Infinity
        if (Math.sqrt(nearestD2(v, hairProtos)) < Math.sqrt(du) - HAIR_MARGIN) hairFront.data[j] = 1
      }
    }
  }
  const sameLook = look === null || look.same >= TAKE_OFF_OTHER_SAME
  // The old collar: above the new neckline, within COLLAR_REACH × the shoulder width of the old top,
  // neither near this person's skin (within TAKE_OFF_SKIN_D of skinProtos, whatever the old top's
  // colours) nor near the hair, and not the new garment's colour (the zone's filter above). Only
  // when this person's skin was found (else uncertain: nothing).
  const collar = plane(w, h)
  if (c.skinProtos.length > 0) {
    const nearTop = dilate(c.upperWork, Math.max(1, COLLAR_REACH * sw)).data
    for (let j = 0; j < n; j++) {
      if (neckline.data[j]! < 0.5 || nearTop[j]! < 0.5 || mask[j]! < 0.5) continue
      const v = photoAt(j)
      if (nearestD2(v, c.skinProtos) < TAKE_OFF_SKIN_D ** 2) continue
      if (c.hairProtos.length > 0 && nearestD2(v, c.hairProtos) < TAKE_OFF_SKIN_D ** 2) continue
      if (protos.length > 0 && nearestD2(v, protos) < TAKE_OFF_SAME ** 2) continue
      collar.data[j] = 1
    }
  }
  // What of the head region below the chin is cloth under the new garment (`under`): from below
  // the chin down to the shoulder line (the head region's neck ellipse reaches below the neck
  // line), where the new garment is, in the silhouette, whatever is neither this person's lit skin
  // (litSkin: skin's chroma too), shaded skin (shadedSkin) nor hair (the mask above), when the old
  // top is another garment than the new one (below). The neck stays in front, and the new
  // garment's shoulders and collar reach up to it: no flat cut at the neck line, no old rib at the
  // neck's sides. Within UNDER_HAIR_GAP of the hair only what the clothing finder calls the old top
  // counts (a hair outline mixed with the backdrop is neither skin nor hair). The head region gives
  // way to the new garment there (headInFront).
  const under = plane(w, h)
  if (category !== 'lower' && c.skinProtos.length > 0) {
    const onTop = c.upperWork.data
    const nearHair = dilate(hair, Math.max(1, UNDER_HAIR_GAP * sw)).data
    // An old top that looks like the new garment is its own fit (the paired photos, where it is
    // the very garment): there, as before, only the old top itself down to the neck line, neither
    // near skin, hair nor the new garment's colours (its collar stays where it is).
    const neck = neckLine(a.points, a.shoulderWidth)
    const toV = sameLook
      ? Math.min(h, Math.ceil(Math.max(neck.y(0), neck.y(W - 1)) * k) + 2)
      : shoulderV
    for (let j = collarFromV * w; j < toV * w; j++) {
      if (na[j]! <= 0.5 || mask[j]! < 0.5) continue
      const v = photoAt(j)
      if (sameLook) {
        if (onTop[j]! < 0.5 || nearestD2(v, c.skinProtos) < TAKE_OFF_SKIN_D ** 2) continue
        if (c.hairProtos.length > 0 && nearestD2(v, c.hairProtos) < TAKE_OFF_SKIN_D ** 2) continue
        if (protos.length > 0 && nearestD2(v, protos) < TAKE_OFF_SAME ** 2) continue
      } else {
        if (hair.data[j]! > 0 || (onTop[j]! < 0.5 && nearHair[j]! > 0.5)) continue
        if (litSkin(v, c.skinProtos)) continue
      }
      if (!shadedSkin(v)) under.data[j] = 1
    }
  }
  // Hair connected to the head, above the shoulder line, is never repainted (a strand beside the
  // chin over the old top was smeared with skin).
  for (let j = 0; j < shoulderV * w; j++) if (hair.data[j]! > 0) zone.data[j] = 0
  // … with its soft edge against the neck (a blend of the two, nearer the skin, is still collar).
  const collarGrown = dilate(collar, 1)
  for (let j = 0; j < n; j++) {
    collarGrown.data[j] = mask[j]! > 0.5 && neckline.data[j]! > 0.5 ? collarGrown.data[j]! : 0
    if (collarGrown.data[j]! > 0) zone.data[j] = Math.max(zone.data[j]!, collarGrown.data[j]!)
    if (riseOnTop.data[j]! > 0.5 && zone.data[j]! > 0) collarGrown.data[j] = zone.data[j]!
  }
  return {
    zone: upsampleSparse(boxBlur(zone, 1), W, H),
    collar: upsampleSparse(boxBlur(collarGrown, 1), W, H),
    under: upsampleSparse(boxBlur(under, 1), W, H),
    // Hair in front is looked for within HAIR_REACH of it (clothing.ts: strands are finer than the
    // work grid). Not when the old top looks like the new garment: what the clothing finder kept in
    // front of it has the new garment's look anyway, and on the paired photos it is the very garment.
    hair:
      !sameLook && hair.data.some((v) => v > 0)
        ? upsampleSparse(dilate(hair, Math.max(1, HAIR_REACH * sw)), W, H)
        : null,
    hairFront: hairFront.data.some((v) => v > 0)
      ? hairFrontAt(img, hairFront, hairProtos, c)
      : null,
    cover,
    skipped: null,
    same: look === null ? null : look.same,
  }
}

/**
 * The hair in front found on the work grid (takeOffZone) at the photo's size, soft-edged, less the
 * photo pixels that are clearly the old top's (nearer its prototypes than the hair's by HAIR_MARGIN:
 * the navy of person_01's tee between her strands counted as old top left).
 */
function hairFrontAt(img: Rgb, work: Plane, hairProtos: readonly Vec3[], c: Clothing): Plane {
  const out = upsampleSparse(boxBlur(work, 0.5), img.width, img.height)
  if (c.upperProtos.length === 0) return out
  const scratch: Vec3 = [0, 0, 0]
  for (let i = 0; i < out.data.length; i++) {
    if (out.data[i]! <= 0) continue
    const v = labInto(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!, scratch)
    const dh = Math.sqrt(nearestD2(v, hairProtos))
    if (dh > Math.sqrt(nearestD2(v, c.upperProtos)) + HAIR_MARGIN) out.data[i] = 0
  }
  return out
}

/**
 * Whether the old top looks like the new garment, judged on the chest (the torso quad `quad` —
 * shoulders, hips, on the work grid at `k` work px per photo px — between 10 % and 50 % of the way
 * down, its middle 60 %): the share of what the clothing finder calls the top there within
 * TAKE_OFF_LOOK_D of one of the new garment's colour prototypes `protos` (print included), and the
 * share of the new garment's colour samples `newSamples` within TAKE_OFF_LOOK_D of the chest's own
 * prototypes (`chest`); `same` is the smaller. Null when the chest shows too little of the old top
 * to judge (a bare torso, hair over it: under TAKE_OFF_LOOK_MIN work pixels) or the new garment has
 * no colours.
 */
function oldTopLook(
  c: Clothing,
  k: number,
  quad: readonly [Point, Point, Point, Point],
  protos: readonly Vec3[],
  photoAt: (j: number) => Vec3,
  mask: Float32Array,
  newSamples: readonly Vec3[],
): { chest: Vec3[]; same: number } | null {
  const w = c.upperWork.width
  const h = c.upperWork.height
  const [sl, sr, hr, hl] = quad
  const at = (u: number, v: number): Point => lerp(lerp(sl, sr, u), lerp(hl, hr, u), v)
  const zone = plane(w, h)
  fillPolygon(zone, [at(0.2, 0.1), at(0.8, 0.1), at(0.8, 0.5), at(0.2, 0.5)])
  const cols: Vec3[] = []
  let same = 0
  for (let j = 0; j < w * h; j++) {
    if (zone.data[j]! < 0.5 || c.upperWork.data[j]! < 0.5 || mask[j]! < 0.5) continue
    const x = Math.floor(((j % w) + 0.5) / k)
    const y = Math.floor((Math.floor(j / w) + 0.5) / k)
    if (c.hairFront.data[y * c.width + x]! > 0.5) continue
    const col = photoAt(j)
    cols.push(col)
    if (nearestD2(col, protos) < TAKE_OFF_LOOK_D ** 2) same++
  }
  if (protos.length === 0 || newSamples.length === 0 || cols.length < TAKE_OFF_LOOK_MIN) return null
  // … and the other way round: the share of the new garment within TAKE_OFF_LOOK_D of the chest's
  // colours (a grey tee is near the white trims of a navy tee, the navy is near nothing of it).
  const chest = kmeans(cols, 6)
  let back = 0
  for (const v of newSamples) if (nearestD2(v, chest) < TAKE_OFF_LOOK_D ** 2) back++
  return { chest, same: Math.min(same / cols.length, back / newSamples.length) }
}

/**
 * Whether the old top just below the new waistband (a band 0.12 × the shoulder width tall, within
 * a quarter shoulder width of the body axis) has the colour the top has on the chest (0.2–0.5 of
 * the way from the shoulders to the hips): median L* × L_WEIGHT, a*, b* within UNTUCK_SAME.
 */
function sameTopBelow(img: Rgb, a: PersonAnalysis, c: Clothing, waistY: number): boolean {
  const sm = mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!)
  const hm = mid(a.points[LM.leftHip]!, a.points[LM.rightHip]!)
  const sw = a.shoulderWidth
  const axisX = (y: number) => sm.x + ((hm.x - sm.x) * (y - sm.y)) / (hm.y - sm.y || 1)
  const median = (y0: number, y1: number): Vec3 | null => {
    const ch: number[][] = [[], [], []]
    for (let y = Math.max(0, Math.round(y0)); y < Math.min(img.height, Math.round(y1)); y += 2) {
      const cx = axisX(y)
      for (
        let x = Math.max(0, Math.round(cx - 0.25 * sw));
        x <= Math.min(img.width - 1, Math.round(cx + 0.25 * sw));
        x += 2
      ) {
        const i = y * img.width + x
        if (c.upper.data[i]! < 0.5 || a.hands.data[i]! > 0.3) continue
        // Raw Lab chroma here (the lightness-normalised one swells the noise of a dark fabric).
        const v = labOf(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)
        const s = 60 / Math.max(v[0] / L_WEIGHT, 20)
        ch[0]!.push(v[0])
        ch[1]!.push(v[1] / s)
        ch[2]!.push(v[2] / s)
      }
    }
    if (ch[0]!.length < 8) return null
    return ch.map((v) => v.sort((p, q) => p - q)[v.length >> 1]!) as Vec3
  }
  const L = hm.y - sm.y
  const chest = median(sm.y + 0.2 * L, sm.y + 0.5 * L)
  const below = median(waistY, waistY + 0.12 * sw)
  if (chest === null || below === null) return false
  return Math.hypot(chest[0] - below[0], chest[1] - below[1], chest[2] - below[2]) < UNTUCK_SAME
}
