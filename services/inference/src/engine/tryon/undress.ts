/**
 * Takes the old garment off (stage 4, before the new garment is drawn): wherever the person wears
 * clothing of the category being replaced (clothing.ts), the photo is repainted with skin where the
 * body is and with background where it is not, so that whatever the new garment leaves uncovered —
 * shorter sleeves, a shorter hem, a slimmer cut, a sleeveless top, a dress over trousers — shows
 * the body, not the old garment.
 *
 * Contract — in: the person photo, its analysis, the clothing segmentation and which old garments
 * to take off (top, bottom or both). Out: the repainted photo (same size), the repainted region
 * (0..1) and, within it, where background was put (0..1).
 *
 * How (fields on the clothing work grid, upsampled; the blend at full resolution):
 * - The body under the clothes is modelled from the pose: tapered capsules for the upper arms,
 *   forearms, thighs, calves and shins, the torso quadrilateral (shoulders → hips) and the pelvis.
 *   Arms (armShape): shaped by the arm itself where it shows bare — the upper arm's own width
 *   below a short sleeve (else the forearm's), tapering from the deltoid at the shoulder
 *   (ARM_DELTOID) to the elbow, its axis moved to where the bare arm lies beside the joints' line
 *   (at the elbow, to where the bare arm below begins) — with a shoulder cap disc as wide as its
 *   top; each within the silhouette only, so inside an old sleeve the arm is skin and the rest of
 *   the sleeve (its loose part, the slab of a boxy sleeve) background. An arm that shows bare is
 *   painted in its own colour and light across it (armColourAt: the bare arm's cross-profile, a lit
 *   side and a shaded one, read along the painted segment), not the flat skin with a symmetric
 *   cylinder term the other limbs get, fed into the skin beside it over ARM_FEATHER. An arm
 *   nothing of which shows bare (long old sleeves) is painted in the person's own tone (the skin
 *   that shows: neck, hands, else the face), round across it (1 − ARM_ROUND u²) and lit from the
 *   side the old sleeve is lit from (the slope of its luma across the arm, at most ARM_TILT_MAX),
 *   at most ARM_IN_SLEEVE of the sleeve's width (where the sleeve lies against the torso, twice
 *   the bone's distance to its outer edge): an arm, not a flat slab in the sleeve's outline.
 *   Between a hanging upper arm and the torso's side (the armpit) and within SHOULDER_BODY × the
 *   shoulder width of a shoulder joint the silhouette is body, not backdrop. Leg
 *   radii are fractions of the hip-joint distance (THIGH_R, KNEE_R, CALF_R, ANKLE_R), never wider
 *   than 0.95 × the half-width of the person's silhouette across the limb (clothes are never
 *   narrower than the body in them); a bare knee narrower than KNEE_R scales its whole leg down (a
 *   slim leg in wide shorts), so painted legs are leg-shaped, not the old trousers' silhouette. A
 *   knee the landmark model is unsure of (under KNEE_SURE: out of the photo, guessed under wide
 *   trousers) is put straight below its hip along the body's down, at the thigh's length.
 *   Where two capsules overlap (knee, elbow) the lighter cylinder term wins: no seam at the joint.
 * - Above the shoulder line, between the shoulder joints, the person mask is the body (the neck and
 *   the top of the shoulders): an old collar taken off shows skin, not background.
 * - Skin colour: the median tone of the visible skin of the body (the face only when no other skin
 *   shows: hands, arms, the neck's lower half, legs), and within SKIN_NEAR × the shoulder width of
 *   visible skin a push-pull fill (multi-scale weighted average) of it, so a new upper arm continues
 *   the forearm's tone and a bared chest the neck's, while a belly or legs far from any skin get the
 *   person's tone, not whatever shadow is nearest (nor the push-pull's coarse levels, which drew a
 *   darker torso with a curved seam where it met the legs' tone). When no skin shows at all (covered arms, the face cut off) DEFAULT_SKIN_RGB, a medium
 *   tone, is painted and `skin.source` says 'default'.
 *   Shading: the photo's own light carried over as the ratio of the old garment's local luminance
 *   (blurred over 12 % of the shoulder width: light direction and big folds, not print) to its broad
 *   luminance, clamped to [0.85, 1.1], times a cylinder term across each limb (1 − 0.2 (d/r)²):
 *   arms and legs keep their shape and their light. The midriff (half-way shoulders → hips down
 *   to the pelvis: the old top's lower part, a waistband above a low-rise new bottom) is not one
 *   flat tone either (torsoLight): the old garment's light across the body, read in bins across the
 *   torso as a painted arm reads the bare arm's profile, and the torso's roundness
 *   (1 − TORSO_SHADE u²). On the skin, at full resolution, the finer
 *   relief too: the photo's luminance blurred over DETAIL_FINE × the shoulder width (the weave of
 *   the cloth drops out) over its blur at DETAIL_R, clamped to [DETAIL_MIN, DETAIL_MAX]: folds and
 *   fine light of a plain cloth carry over (a mottled one, denim, keeps only its broad light).
 *   Both luminances are taken over the old garments' own fabric only (fabricAlbedo: the main
 *   colours of the top and of the rest, apart), each pixel's luma over its own main colour's (a
 *   print of a main colour — big letters, two-colour stripes — is an albedo, not light), and never
 *   within FABRIC_EDGE of another colour (the mixed pixels at a print's outline, a seam's stitching,
 *   denim's streaks): a print's letters, a logo, a collar, the jeans' pockets and fly leave no ghost
 *   in the skin. Beside
 *   visible skin the shading fades out over SEAM_R × the shoulder width: the fill there is that
 *   skin's own, already lit, colour, and the painted skin meets it without a seam.
 * - Grain (addGrain): the painted skin gets deterministic per-pixel noise so that its fine
 *   high-pass spread matches the person's own visible body skin (robust; the hands only when no
 *   other skin shows), not a mannequin's smooth fill.
 * - An old sleeve's hem over a bare arm (HEM_BOOST): the region repainted, upsampled from the work
 *   grid, ramps off over a few photo pixels, so the hem's light rim and the shadow under it stayed
 *   half painted, a line across the arm. On the arms near visible skin the ramp is moved EDGE_GROW
 *   × the shoulder width on and is HEM_BOOST times higher: the rim is painted with the skin's own
 *   tone beside it. The old sleeve's fine relief
 *   (folds, its hem) is not carried into an arm painted in its own light.
 * - Background: a push-pull fill from the pixels outside the person mask, BG_MARGIN × the shoulder
 *   width off it (the coarse mask's edge holds the old garment's dark rim): exact for plain studio
 *   backdrops, a smooth blend of the surroundings for others, with the backdrop's own fine texture
 *   (grass, leaves) mirrored in from beside the silhouette (backgroundDetail). Where background is painted the
 *   repainted region reaches EDGE_GROW further, so no dark outline of the old garment stays. The
 *   body's edge against it is EDGE_SHARPEN times steeper than the fill grid's ramp upsampled.
 * - A patterned old garment (stripes, a check: lightnessSpread over PATTERN_DL) carries no fine
 *   relief into the skin painted (its pattern would show as stripes on the skin), only the broad
 *   shading.
 * - Faces and hair in front of the body are never repainted; in the hand regions only pixels that
 *   are not skin-hued are (a cuff or a hem behind the fingers), so hands stay as they are.
 */
import type { Clothing, Vec3 } from './clothing.ts'
import {
  kmeans,
  L_WEIGHT,
  labInto,
  labOf,
  mainColours,
  nearestD2,
  nearestIndex,
  upsampleBox,
} from './clothing.ts'
import { LM } from './pose.ts'
import { neckLine, type PersonAnalysis } from './person.ts'
import {
  add,
  boxBlur,
  clamp,
  dilate,
  dist,
  dot,
  drawCapsule,
  fillPolygon,
  lerp,
  median,
  mid,
  nonZeroBox,
  plane,
  resizePlane,
  sub,
  type Plane,
  type Point,
  type Rgb,
} from './raster.ts'

/** Long side of the fill grid, px. */
export const FILL_SIDE = 384
/** Shading ratio clamp. */
export const SHADE_MIN = 0.85
export const SHADE_MAX = 1.1
/** Darkening at a limb's edge (cylinder shading). */
export const LIMB_SHADE = 0.2
/** The repainted region reaches this far (× shoulder width) past the old garment's edge. */
export const WORN_GROW = 0.012
/** … and, where background is painted, this much further (the old garment's dark rim). */
export const EDGE_GROW = 0.015
/**
 * The body's painted edge against painted background is this many times steeper than the fill
 * grid's ramp upsampled (2.7–4 photo px at 1024–1536 px: the painted legs' outline was blurred).
 */
export const EDGE_SHARPEN = 2.5
/** The background fill is taken from this far (× shoulder width) off the silhouette. */
export const BG_MARGIN = 0.02
/**
 * Leg radii under the clothes, × the hip-joint distance: the thigh at the hip, the knee, the calf
 * (a third of the way down the shin) and the ankle.
 */
export const THIGH_R = 0.52
export const KNEE_R = 0.28
export const CALF_R = 0.3
export const ANKLE_R = 0.14
/** A knee landmark scored under this is not trusted: the thigh hangs straight down from its hip. */
export const KNEE_SURE = 0.5
/** The leg radii are scaled down by a bare knee narrower than KNEE_R, at most to this. */
export const LEG_SCALE_MIN = 0.6
/** Added to both luminances of the shading ratio: on a dark fabric a small highlight is not light. */
export const SHADE_OFFSET = 0.12
/**
 * Fine shading on the skin painted: the photo's luminance over its blur at DETAIL_R × the shoulder
 * width, clamped to [DETAIL_MIN, DETAIL_MAX] (folds and fine light carry over, a print does not).
 */
export const DETAIL_R = 0.03
/** … of the luminance blurred over DETAIL_FINE × the shoulder width (the weave is not relief). */
export const DETAIL_FINE = 0.008
export const DETAIL_MIN = 0.9
export const DETAIL_MAX = 1.06
/**
 * A pixel of the old fabric carries light only where no pixel of another colour (another main
 * colour, or not the fabric) is within this distance (× shoulder width, at full resolution; on the
 * fill grid FABRIC_EDGE_CELLS cells): the mixed and JPEG-ringing pixels around a print's outline
 * would draw the print's letters on the skin.
 */
export const FABRIC_EDGE = 0.006
export const FABRIC_EDGE_CELLS = 1

/**
 * The skin tone painted when no skin shows anywhere in the photo (covered arms and a face cut off or
 * turned away): a medium tone (sRGB, between the light and dark ends of human skin), so legs under
 * a new dress read as legs rather than as background; `Undressed.skin.source` says 'default' then.
 */
export const DEFAULT_SKIN_RGB: readonly [number, number, number] = [190, 140, 112]
/** Within this distance (× shoulder width) of visible skin the shading fades out (no seam). */
export const SEAM_R = 0.05
/**
 * The old garment's hem over a bare arm (a sleeve ending on it): the work grid's ramp of the region
 * repainted, upsampled, leaves the hem's light rim and the shadow under it half painted, a line
 * across the arm. On the arms (below HEM_ARM_FROM of the way from shoulder to elbow, within
 * HEM_ARM_R × the shoulder width of the bones), on the body, within HEM_REACH × the shoulder width of
 * visible skin, that ramp is moved EDGE_GROW × the shoulder width on (a grey-scale dilation: its foot,
 * a third painted, was the hem's dark line itself) and is HEM_BOOST times higher (both feathered
 * over HEM_REACH).
 */
export const HEM_REACH = 0.04
export const HEM_ARM_FROM = 0.3
export const HEM_ARM_R = 0.2
export const HEM_BOOST = 2
/** Within this distance (× shoulder width) of visible skin its local tone is continued. */
export const SKIN_NEAR = 0.1
/** The arms' own colour (armShape) fades into the skin painted beside them over this (× shoulder width). */
export const ARM_FEATHER = 0.03

/** Where the skin tone came from: visible body skin, the face alone, or none (DEFAULT_SKIN_RGB). */
export type SkinSource = 'body' | 'face' | 'default'

export interface Undressed {
  rgb: Uint8Array
  /** The skin tone painted and where it came from (null when nothing was repainted). */
  skin: { rgb: [number, number, number]; source: SkinSource } | null
  /** Where the old garment was repainted (0..1). */
  removed: Plane
  /** Where, within `removed`, background was put instead of skin (0..1). */
  background: Plane
}

export function takeOff(
  img: Rgb,
  a: PersonAnalysis,
  c: Clothing,
  which: { upper: boolean; lower: boolean },
  zone?: Plane,
  collar?: Plane,
): Undressed {
  const { width: W, height: H } = img
  // The old garment's own soft edge (a dark line against the background or the skin) goes with it:
  // the region is widened by WORN_GROW × the shoulder width, never into the head or hair in front.
  const worn = plane(W, H)
  // Nothing is worn where the zone lets nothing off: only the zone's box is computed.
  const zb = zone ? nonZeroBox(zone) : { x0: 0, y0: 0, width: W, height: H }
  const rgb = img.data.slice()
  let x0 = W
  let y0 = H
  let x1 = -1
  let y1 = -1
  if (zb !== null) {
    const grown = upsampleBox(
      dilate(
        which.upper && which.lower
          ? maxPlane(c.upperWork, c.lowerWork)
          : which.upper
            ? c.upperWork
            : c.lowerWork,
        Math.max(1, WORN_GROW * a.shoulderWidth * (c.upperWork.width / W)),
      ),
      W,
      H,
      zb,
    ).data
    const b = wornInZone(
      worn.data,
      W,
      zb,
      grown,
      c,
      which,
      zone?.data ?? null,
      collar?.data ?? null,
    )
    if (b !== null) ({ x0, y0, x1, y1 } = b)
  }
  const background = plane(W, H)
  if (x1 < 0) return { rgb, removed: worn, background, skin: null }

  // --- fill grid ---
  const k = Math.min(1, FILL_SIDE / Math.max(W, H))
  const w = Math.max(1, Math.round(W * k))
  const h = Math.max(1, Math.round(H * k))
  const n = w * h
  const small = boxDown(img, w, h)
  const maskW = resizePlane(a.mask, w, h).data
  const headW = resizePlane(a.head, w, h).data
  const skinW = resizePlane(c.skin, w, h).data
  const wornW = resizePlane(worn, w, h).data
  const sw = a.shoulderWidth * k
  const P = a.points.map((p) => ({ x: p.x * k, y: p.y * k, score: p.score }))

  // Body under the clothes and its cylinder shading.
  // What of the arms shows bare (the person's skin, not the old garment): their measured width.
  const upperW = resizePlane(c.upper, w, h).data
  const lowerW = resizePlane(c.lower, w, h).data
  const bare = (j: number) =>
    maskW[j]! > 0.5 && wornW[j]! < 0.5 && upperW[j]! < 0.5 && lowerW[j]! < 0.5
  // Skin: visible body skin (off the head) → push-pull; the face only if nothing else shows.
  const skinKnown = new Float32Array(n)
  let bodySkin = 0
  // The neck counts as body skin (its lower half, between the mouth and the neck line: not the
  // shadow under the chin): a chest or shoulders bared below it continue its tone, no seam.
  const neck = neckLine(P, sw)
  const mouthY = (P[LM.mouthLeft]!.y + P[LM.mouthRight]!.y) / 2
  const isNeck = (j: number) => {
    const ny = neck.y(j % w)
    const y = Math.floor(j / w)
    return y <= ny && y > (mouthY + ny) / 2
  }
  for (let j = 0; j < n; j++) {
    if (skinW[j]! > 0.5 && maskW[j]! > 0.5 && (headW[j]! < 0.5 || isNeck(j)) && wornW[j]! < 0.5) {
      skinKnown[j] = 1
      bodySkin++
    }
  }
  if (bodySkin < 0.02 * sw * sw) {
    for (let j = 0; j < n; j++) {
      if (skinW[j]! > 0.5 && maskW[j]! > 0.5 && wornW[j]! < 0.5) skinKnown[j] = 1
    }
  }
  // The tone: the median of the visible skin (body skin, else the face), or DEFAULT_SKIN_RGB when no
  // skin shows at all. The push-pull fill continues the local tone of the visible skin (a new upper
  // arm continues the forearm) within SKIN_NEAR × the shoulder width of visible skin, farther the
  // tone alone, on the legs and the torso alike (legs under a dress far from the hands must not
  // average whatever skin-hued shadows are nearest; a fill that switched at the legs' capsules drew
  // their tops as a seam across the belly).
  const known: number[] = []
  for (let j = 0; j < n; j++) if (skinKnown[j]! > 0) known.push(j)
  const skinSource: SkinSource =
    known.length === 0 ? 'default' : bodySkin >= 0.02 * sw * sw ? 'body' : 'face'
  const tone: [number, number, number] =
    known.length === 0
      ? [...DEFAULT_SKIN_RGB]
      : ([0, 1, 2].map((ch) => median(known.map((j) => small[j * 3 + ch]!))) as [
          number,
          number,
          number,
        ])
  // The body under the clothes; an arm nothing of which shows bare is painted in this tone.
  const { body, shape, armRgb } = bodyModel(P, maskW, w, h, sw, bare, small, tone)
  const skinField = known.length > 0 ? pushPull(small, skinKnown, w, h) : null
  const nearSkin = boxBlur({ width: w, height: h, data: skinKnown }, Math.max(1, SKIN_NEAR * sw))
  const skinColour = new Float32Array(n * 3)
  mixSkin(skinColour, tone, skinField, nearSkin.data)
  // The arms painted in the bare arm's own colour and light across it (bodyModel, armShape), fed
  // over ARM_FEATHER × the shoulder width into the skin beside them (a shoulder, the torso): no seam.
  const armKnown = new Float32Array(n)
  for (let j = 0; j < n; j++) armKnown[j] = Number.isNaN(armRgb[j * 3]!) ? 0 : 1
  if (armKnown.some((v) => v > 0)) {
    const armField = pushPull(
      armRgb.map((v) => (Number.isNaN(v) ? 0 : v)),
      armKnown,
      w,
      h,
    )
    const armNear = boxBlur(
      { width: w, height: h, data: armKnown },
      Math.max(1, ARM_FEATHER * sw),
    ).data
    for (let j = 0; j < n; j++) {
      const t = armKnown[j]! > 0 ? 1 : clamp(2 * armNear[j]!, 0, 1)
      if (t <= 0) continue
      for (let ch = 0; ch < 3; ch++) {
        const o = j * 3 + ch
        skinColour[o] = skinColour[o]! * (1 - t) + armField[o]! * t
      }
    }
  }
  // Background: outside the person.
  // … known a margin away from the silhouette (BG_MARGIN × the shoulder width): the coarse person
  // mask's edge holds the old garment's own dark rim, which would darken the fill beside it.
  const near = plane(w, h)
  for (let j = 0; j < n; j++) near.data[j] = maskW[j]! >= 0.05 ? 1 : 0
  const nearD = dilate(near, Math.max(1, BG_MARGIN * sw)).data
  const bgKnown = new Float32Array(n)
  for (let j = 0; j < n; j++) bgKnown[j] = nearD[j]! > 0 ? 0 : 1
  if (!bgKnown.some((v) => v > 0)) for (let j = 0; j < n; j++) bgKnown[j] = maskW[j]! < 0.05 ? 1 : 0
  const bgField = bgKnown.some((v) => v > 0) ? pushPull(small, bgKnown, w, h) : null

  // Shading from the old garment's luminance: local / broad, both averaged over the worn region only,
  // and there over its own fabric only, each pixel's luma over its own main colour's (fabricAlbedo:
  // a print of another colour, a logo, a collar is not light, and a print of a main colour — big
  // letters, two-colour stripes — is an albedo, not light), never beside another colour (the mixed
  // cells at a print's outline would draw it). Each old garment's own main colours (the top's and
  // the bottom's apart: a big sweatshirt's grey must not outvote the jeans' blues, which would leave
  // painted legs without relief).
  const albedos = [0, 1].map((g) => {
    const m = new Float32Array(n)
    for (let j = 0; j < n; j++) {
      const inUpper = upperW[j]! > 0.5
      m[j] = wornW[j]! > 0.5 && (g === 0 ? inUpper : !inUpper) ? 1 : 0
    }
    return fabricAlbedo(small, m)
  })
  /** The pixel's light, (luma + SHADE_OFFSET) / (its colour's + SHADE_OFFSET), for label `k`. */
  const light = (l: number, k: number) => {
    const alb = albedos[k >> 3]!.luma[k & 7]!
    return (l + SHADE_OFFSET) / ((Number.isNaN(alb) ? 0 : alb) + SHADE_OFFSET)
  }
  /** Which garment (× 8) and main colour a pixel is, -1 where it is not the fabric. */
  const labelOf = (inUpper: boolean, r: number, g: number, b: number) => {
    const gi = inUpper ? 0 : 1
    const k = albedos[gi]!.label(r, g, b)
    return k < 0 ? -1 : gi * 8 + k
  }
  const labW = new Int16Array(n).fill(-1)
  for (let j = 0; j < n; j++) {
    if (wornW[j]! <= 0.5) continue
    labW[j] = labelOf(upperW[j]! > 0.5, small[j * 3]!, small[j * 3 + 1]!, small[j * 3 + 2]!)
  }
  const lum = plane(w, h)
  const wornOnly = plane(w, h)
  const okW = awayFromOthers(labW, w, h, FABRIC_EDGE_CELLS)
  for (let j = 0; j < n; j++) {
    const k = labW[j]!
    if (okW[j] === 0) continue
    const lj = (0.299 * small[j * 3]! + 0.587 * small[j * 3 + 1]! + 0.114 * small[j * 3 + 2]!) / 255
    lum.data[j] = light(lj, k)
    wornOnly.data[j] = 1
  }
  // Where the old garment is patterned (stripes, a check: measured on the photo's own pixels, the
  // fill grid blurs fine stripes into one colour), its fine relief is the pattern's, not light.
  const patterned = [0, 1].map((g) => {
    const ls: number[] = []
    let k = 0
    for (let y = y0; y <= y1; y++) {
      for (let i = y * W + x0; i <= y * W + x1; i++) {
        if (worn.data[i]! <= 0.5 || c.upper.data[i]! > 0.5 !== (g === 0) || k++ % 7 !== 0) continue
        ls.push(labOf(img.data[i * 3]!, img.data[i * 3 + 1]!, img.data[i * 3 + 2]!)[0] / L_WEIGHT)
      }
    }
    return lightnessSpread(ls) > PATTERN_DL
  })
  const rl = Math.max(1, 0.12 * sw)
  const rb = Math.max(2, 0.3 * sw)
  const lf = boxBlur(lum, rl).data
  const wf = boxBlur(wornOnly, rl).data
  const lb = boxBlur(lum, rb).data
  const wb = boxBlur(wornOnly, rb).data
  const shade = plane(w, h, 1)
  // Beside visible skin the fill is that skin's own colour, already lit: the shading fades out over
  // SEAM_R × the shoulder width towards it, so the painted skin meets the real one without a seam.
  const seam = boxBlur({ width: w, height: h, data: skinKnown }, Math.max(1, SEAM_R * sw)).data
  // The midriff: the old garment's light across the body and its roundness (torsoLight), as an
  // arm's own profile; on a limb there (the thighs' tops) the lighter of the two roundness terms.
  const torso = torsoLight(P, lum, wornOnly, sw)
  for (let j = 0; j < n; j++) {
    if (wf[j]! < 0.05 || wb[j]! < 0.02) continue
    const q = (lf[j]! / wf[j]! / (lb[j]! / wb[j]!)) * torso.light[j]!
    const t = skinField === null ? 0 : clamp(2 * seam[j]!, 0, 1)
    const sh = shape.data[j]!
    const r = torso.round[j]! >= 1 ? sh : sh < 1 ? Math.max(sh, torso.round[j]!) : torso.round[j]!
    const lo = torso.round[j] === 1 ? SHADE_MIN : TORSO_LIGHT_MIN
    shade.data[j] = 1 + (clamp(q, lo, SHADE_MAX) * r - 1) * (1 - t)
  }

  // The old garment's rim where background goes (its soft, dark anti-aliased edge, which the work
  // grid's planes only half cover): the repainted region reaches EDGE_GROW × the shoulder width
  // further wherever it is not the body, never on the head, the hair or the hands.
  const g = Math.max(1, Math.round(EDGE_GROW * a.shoulderWidth))
  x0 = Math.max(0, x0 - g)
  y0 = Math.max(0, y0 - g)
  x1 = Math.min(W - 1, x1 + g)
  y1 = Math.min(H - 1, y1 + g)
  // Fields to full resolution (only the box that is repainted, indexed from its corner), then the
  // blend.
  const fbox = { x0, y0, width: x1 - x0 + 1, height: y1 - y0 + 1 }
  const bodyF = upsampleBox(body, W, H, fbox).data
  const wornBox = plane(fbox.width, fbox.height)
  for (let y = 0; y < fbox.height; y++) {
    const row = (y0 + y) * W + x0
    wornBox.data.set(worn.data.subarray(row, row + fbox.width), y * fbox.width)
  }
  const edge = dilate(wornBox, g).data
  for (let q = 0; q < edge.length; q++) {
    const i = (y0 + Math.floor(q / fbox.width)) * W + x0 + (q % fbox.width)
    if (edge[q]! <= 0 || worn.data[i]! >= 1 || bodyF[q]! >= 0.5) continue
    const keep = Math.max(
      a.head.data[i]!,
      a.hands.data[i]!,
      c.protect.data[i]!,
      c.hairFront.data[i]!,
    )
    worn.data[i] = Math.max(worn.data[i]!, (1 - keep) * (1 - 2 * bodyF[q]!))
  }
  // The old garment's hem over a bare arm: the work grid's ramp, upsampled, leaves its light rim
  // and the shadow under it half painted, a line across the arm. On the body within HEM_REACH × the
  // shoulder width of visible skin, on the arms, the ramp is HEM_BOOST times higher (it ends on the
  // skin, painted there with that skin's own tone, the fill's near visible skin).
  const gh = Math.max(1, Math.round(HEM_REACH * a.shoulderWidth))
  const skinBox = plane(fbox.width, fbox.height)
  for (let q = 0; q < skinBox.data.length; q++) {
    const i = (y0 + Math.floor(q / fbox.width)) * W + x0 + (q % fbox.width)
    skinBox.data[q] = c.skin.data[i]! > 0.5 && wornBox.data[q]! < 0.5 ? 1 : 0
  }
  const nearSkinF = dilate(skinBox, gh).data
  // … on the arms only, below the shoulder (HEM_ARM_FROM of the way to the elbow on), within
  // HEM_ARM_R × the shoulder width of the bones: a neckline or the armpit keeps its own edge.
  const arms = plane(fbox.width, fbox.height)
  const at = (l: number) => ({ x: a.points[l]!.x - x0, y: a.points[l]!.y - y0 })
  for (const [s, e, wr] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist],
  ] as const) {
    const r = HEM_ARM_R * a.shoulderWidth
    drawCapsule(arms, lerp(at(s), at(e), HEM_ARM_FROM), at(e), r)
    drawCapsule(arms, at(e), at(wr), r)
  }
  // The gate is feathered over the same reach: no step in the hem where it ends.
  const gate = plane(fbox.width, fbox.height)
  for (let q = 0; q < gate.data.length; q++) {
    gate.data[q] = nearSkinF[q]! > 0 && bodyF[q]! >= 0.5 && arms.data[q]! >= 0.5 ? 1 : 0
  }
  const gateS = boxBlur(gate, gh).data
  const hemMax = maxFilter(wornBox, g).data
  for (let q = 0; q < gateS.length; q++) {
    // … moved EDGE_GROW × the shoulder width on (the ramp's foot, a third painted, was the hem's
    // dark line itself: README pair, 24 against 130 on the arm).
    const r = wornBox.data[q]! + (hemMax[q]! - wornBox.data[q]!) * gateS[q]!
    if (gateS[q]! <= 0 || r <= 0.01 || wornBox.data[q]! >= 1 || bodyF[q]! < 0.5) continue
    const i = (y0 + Math.floor(q / fbox.width)) * W + x0 + (q % fbox.width)
    const keep = Math.max(
      a.head.data[i]!,
      a.hands.data[i]!,
      c.protect.data[i]!,
      c.hairFront.data[i]!,
      which.lower ? 0 : c.lower.data[i]!,
      which.upper ? 0 : c.upper.data[i]!,
    )
    const boosted = r + (Math.min(1, r * HEM_BOOST) - r) * gateS[q]!
    worn.data[i] = Math.max(worn.data[i]!, (1 - keep) * boosted)
  }
  const shadeF = upsampleBox(shade, W, H, fbox, Infinity).data
  const armF = upsampleBox({ width: w, height: h, data: armKnown }, W, H, fbox).data
  const chan = (field: Float32Array | null, ch: number): Float32Array | null => {
    if (field === null) return null
    const p = new Float32Array(n)
    for (let j = 0; j < n; j++) p[j] = field[j * 3 + ch]!
    return upsampleBox({ width: w, height: h, data: p }, W, H, fbox, Infinity).data
  }
  const skinF = [0, 1, 2].map((ch) => chan(skinColour, ch))
  const bgF = [0, 1, 2].map((ch) => chan(bgField, ch))
  const bgDetail = bgField !== null ? backgroundDetail(img, a.mask, fbox, a.shoulderWidth) : null
  // Fine shading at full resolution (the repainted box only): the photo's luminance over its own
  // blur at DETAIL_R × the shoulder width, both over the worn region only, clamped: the folds and
  // the fine light of the old cloth carry over as skin's relief, its print does not.
  const bw = x1 - x0 + 1
  const bh = y1 - y0 + 1
  const labF = new Int16Array(bw * bh).fill(-1)
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x < x1 + 1; x++) {
      const i = y * W + x
      const up = c.upper.data[i]! > 0.5
      if (worn.data[i]! <= 0.5 || patterned[up ? 0 : 1]) continue
      const o = i * 3
      labF[(y - y0) * bw + (x - x0)] = labelOf(up, img.data[o]!, img.data[o + 1]!, img.data[o + 2]!)
    }
  }
  const lumF = plane(bw, bh)
  const inF = plane(bw, bh)
  const okF = awayFromOthers(labF, bw, bh, Math.max(1, Math.round(FABRIC_EDGE * a.shoulderWidth)))
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x < x1 + 1; x++) {
      const q = (y - y0) * bw + (x - x0)
      const k = labF[q]!
      if (okF[q] === 0) continue
      const o = (y * W + x) * 3
      lumF.data[q] = light(
        (0.299 * img.data[o]! + 0.587 * img.data[o + 1]! + 0.114 * img.data[o + 2]!) / 255,
        k,
      )
      inF.data[q] = 1
    }
  }
  const dR = Math.max(1, DETAIL_R * a.shoulderWidth)
  const lumB = boxBlur(lumF, dR).data
  const inB = boxBlur(inF, dR).data
  // The weave of the cloth (finer than DETAIL_FINE × the shoulder width) is not relief.
  const fR = Math.max(1, DETAIL_FINE * a.shoulderWidth)
  const lumS = boxBlur(lumF, fR).data
  const inS = boxBlur(inF, fR).data
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * W + x
      const r = worn.data[i]!
      if (r <= 0.01) continue
      const q = (y - y0) * bw + (x - x0)
      // The body's edge against the background painted beside it: the work grid's one-cell ramp,
      // upsampled, is EDGE_SHARPEN times steeper (a painted leg's outline as crisp as the photo's).
      const b = bgField === null ? 1 : clamp((bodyF[q]! - 0.5) * EDGE_SHARPEN + 0.5, 0, 1)
      const bg = 1 - b
      background.data[i] = r * bg
      // An arm painted from its bare part has that arm's own light across it: the sleeve's folds
      // and its hem's rim and shadow are not the arm's relief.
      const detail =
        inF.data[q]! > 0 && inB[q]! > 0.05 && inS[q]! > 0.05
          ? 1 +
            (clamp(lumS[q]! / inS[q]! / (lumB[q]! / inB[q]!), DETAIL_MIN, DETAIL_MAX) - 1) *
              (1 - armF[q]!)
          : 1
      for (let ch = 0; ch < 3; ch++) {
        const s = clamp(skinF[ch]![q]! * shadeF[q]! * detail, 0, 255)
        const g = bgField !== null ? clamp(bgF[ch]![q]! + bgDetail![q * 3 + ch]!, 0, 255) : 0
        const v = b * s + bg * g
        rgb[i * 3 + ch] = Math.round(img.data[i * 3 + ch]! * (1 - r) + v * r)
      }
    }
  }
  // Grain measured on the person's own visible body skin (the neck's lower half included, the face
  // not; the hands only when nothing else shows: knuckles and creases are not the skin of an arm),
  // added where skin was painted.
  const neckF = neckLine(a.points, a.shoulderWidth)
  const mouthF = (a.points[LM.mouthLeft]!.y + a.points[LM.mouthRight]!.y) / 2
  const realSkin = plane(W, H)
  const realHands = plane(W, H)
  realSkinOf(realSkin.data, realHands.data, W, c.skin.data, a, worn.data, neckF.y, mouthF)
  const painted = plane(W, H)
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * W + x
      painted.data[i] = Math.min(worn.data[i]!, bodyF[(y - y0) * bw + (x - x0)]!)
    }
  }
  if (!addGrain(img, rgb, realSkin, painted, { x0, y0, x1, y1 })) {
    addGrain(img, rgb, realHands, painted, { x0, y0, x1, y1 })
  }
  return { rgb, removed: worn, background, skin: { rgb: tone, source: skinSource } }
}

/**
 * takeOff's worn region inside the zone's box, written into `worn` (W wide); returns the box of the
 * pixels over 0.01, or null. A function of its own: inside takeOff's long body this loop was
 * optimised late (100 ms a try-on at 768×1024, a few ms here).
 */
function wornInZone(
  worn: Float32Array,
  W: number,
  zb: { x0: number; y0: number; width: number; height: number },
  grown: Float32Array,
  c: Clothing,
  which: { upper: boolean; lower: boolean },
  zone: Float32Array | null,
  collar: Float32Array | null,
): { x0: number; y0: number; x1: number; y1: number } | null {
  const upper = c.upper.data
  const lower = c.lower.data
  const protect = c.protect.data
  const hairFront = c.hairFront.data
  let x0 = W
  let y0 = Infinity
  let x1 = -1
  let y1 = -1
  for (let y = zb.y0; y < zb.y0 + zb.height; y++) {
    for (let x = zb.x0; x < zb.x0 + zb.width; x++) {
      const i = y * W + x
      const v = Math.max(
        which.upper ? upper[i]! : 0,
        which.lower ? lower[i]! : 0,
        grown[(y - zb.y0) * zb.width + x - zb.x0]! * (1 - protect[i]!),
      )
      // An old collar (composite.ts takeOffZone) goes even where the head region protects the neck.
      const col = collar ? collar[i]! : 0
      const r = Math.max(v * (1 - protect[i]!), col) * (1 - hairFront[i]!) * (zone ? zone[i]! : 1)
      worn[i] = r
      if (r <= 0.01) continue
      if (x < x0) x0 = x
      if (x > x1) x1 = x
      if (y < y0) y0 = y
      if (y > y1) y1 = y
    }
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 }
}

/**
 * The person's own visible skin for the grain (takeOff): skin in the mask, not worn, off the head
 * but for the neck's lower half (`neckY`, `mouthY`); `hands` all of it, `skin` without the hands.
 * Functions of their own (this and mixSkin): inside takeOff's long body their loops were optimised
 * late.
 */
function realSkinOf(
  skin: Float32Array,
  hands: Float32Array,
  W: number,
  skinP: Float32Array,
  a: PersonAnalysis,
  worn: Float32Array,
  neckY: (x: number) => number,
  mouthY: number,
): void {
  const mask = a.mask.data
  const head = a.head.data
  const handsP = a.hands.data
  for (let i = 0; i < skinP.length; i++) {
    if (skinP[i]! <= 0.5 || mask[i]! <= 0.5 || worn[i]! >= 0.05) continue
    const y = Math.floor(i / W)
    const ny = neckY(i % W)
    if (head[i]! >= 0.5 && !(y <= ny && y > (mouthY + ny) / 2)) continue
    hands[i] = 1
    if (handsP[i]! < 0.3) skin[i] = 1
  }
}

/** The skin's colour: the tone, and the push-pull fill where visible skin is near (takeOff). */
function mixSkin(
  out: Float32Array,
  tone: readonly number[],
  field: Float32Array | null,
  nearSkin: Float32Array,
): void {
  for (let j = 0; j < nearSkin.length; j++) {
    const t = field === null ? 0 : clamp(nearSkin[j]! * 4, 0, 1)
    for (let ch = 0; ch < 3; ch++) {
      out[j * 3 + ch] = tone[ch]! * (1 - t) + (field?.[j * 3 + ch] ?? 0) * t
    }
  }
}

/**
 * The midriff painted (the torso from MIDRIFF_FROM of the way shoulders → hips down to the pelvis,
 * PELVIS_DOWN × the hip-joint distance below the hips; faded in and out over MIDRIFF_FADE of the
 * shoulder-to-hip length at both ends) is shaded as a painted arm is from the bare arm's profile
 * (armColourAt), not one flat tone: `light`, the old garment's light across the body — across the
 * torso quad's width at each row, in TORSO_BINS bins, the median of the old fabric's light (`lum`:
 * each pixel's luma over its main colour's, on the fabric cells only) over the median of all of
 * them, interpolated between bin centres (1 in a bin with fewer than TORSO_BIN_MIN cells: its
 * nearest neighbour's; 1 everywhere when under half the bins have them); `round`, the torso's
 * roundness, 1 − TORSO_SHADE u² (u: −1..1 across the quad). The caller clamps the light to
 * [TORSO_LIGHT_MIN, SHADE_MAX]. Both 1 outside the band.
 */
export const MIDRIFF_FROM = 0.5
export const PELVIS_DOWN = 0.45
export const MIDRIFF_FADE = 0.15
export const TORSO_BINS = 8
export const TORSO_BIN_MIN = 6
export const TORSO_LIGHT_MIN = 0.75
export const TORSO_SHADE = 0.3

export function torsoLight(
  P: readonly Point[],
  lum: Plane,
  fabric: Plane,
  sw: number,
): { light: Float32Array; round: Float32Array } {
  const { width: w, height: h } = lum
  const light = new Float32Array(w * h).fill(1)
  const round = new Float32Array(w * h).fill(1)
  const side = (p: Point, q: Point) => (p.x <= q.x ? [p, q] : [q, p]) as [Point, Point]
  const [sL, sR] = side(P[LM.leftShoulder]!, P[LM.rightShoulder]!)
  const [hL, hR] = side(P[LM.leftHip]!, P[LM.rightHip]!)
  const hw = Math.max(dist(hL, hR), 0.45 * sw)
  const sm = mid(sL, sR)
  const hm = mid(hL, hR)
  const len = hm.y - sm.y
  if (len < 2) return { light, round }
  const top = lerp(sm, hm, MIDRIFF_FROM).y
  const bottom = hm.y + PELVIS_DOWN * hw
  const y0 = Math.max(0, Math.ceil(top))
  const y1 = Math.min(h - 1, Math.floor(bottom))
  const fade = Math.max(1, MIDRIFF_FADE * len)
  // The torso quad's edges at row y (bodyModel's torso: shoulders → hips, held below the hips).
  const edges = (y: number): [number, number] => {
    const f = clamp((y - sm.y) / len, 0, 1)
    return [
      sL.x - 0.02 * sw + (hL.x - 0.4 * hw - (sL.x - 0.02 * sw)) * f,
      sR.x + 0.02 * sw + (hR.x + 0.4 * hw - (sR.x + 0.02 * sw)) * f,
    ]
  }
  const bins: number[][] = Array.from({ length: TORSO_BINS }, () => [])
  const all: number[] = []
  for (let y = y0; y <= y1; y++) {
    const [xl, xr] = edges(y)
    if (xr - xl < 2) continue
    for (let x = Math.max(0, Math.ceil(xl)); x <= Math.min(w - 1, Math.floor(xr)); x++) {
      const j = y * w + x
      if (fabric.data[j]! < 0.5) continue
      const b = Math.min(TORSO_BINS - 1, Math.floor(((x - xl) / (xr - xl)) * TORSO_BINS))
      bins[b]!.push(lum.data[j]!)
      all.push(lum.data[j]!)
    }
  }
  const m = all.length > 0 ? median(all) : NaN
  const lit = bins.filter((b) => b.length >= TORSO_BIN_MIN).length >= TORSO_BINS / 2 && m > 0
  const raw = bins.map((b) => (lit && b.length >= TORSO_BIN_MIN ? median(b) / m : NaN))
  // A bin without fabric takes its nearest neighbour's.
  const prof = raw.map((_, k) => {
    for (let r = 0; r < TORSO_BINS; r++) {
      const near = [raw[k - r], raw[k + r]].find((x) => x !== undefined && !Number.isNaN(x))
      if (near !== undefined) return near
    }
    return 1
  })
  for (let y = y0; y <= y1; y++) {
    const [xl, xr] = edges(y)
    if (xr - xl < 2) continue
    const a = clamp(Math.min(y - top, bottom - y) / fade, 0, 1)
    for (let x = Math.max(0, Math.ceil(xl)); x <= Math.min(w - 1, Math.floor(xr)); x++) {
      const c = ((x - xl) / (xr - xl)) * TORSO_BINS - 0.5
      const k = clamp(Math.floor(c), 0, TORSO_BINS - 1)
      const k1 = Math.min(TORSO_BINS - 1, k + 1)
      const f = clamp(c - k, 0, 1)
      const u = (2 * (x - xl)) / (xr - xl) - 1
      light[y * w + x] = 1 + (prof[k]! * (1 - f) + prof[k1]! * f - 1) * a
      round[y * w + x] = 1 - TORSO_SHADE * u * u * a
    }
  }
  return { light, round }
}

/**
 * The background's own texture for the background painted in the box (at full resolution, three
 * values a pixel, indexed from the box's corner): the push-pull fill is smooth, exact on a plain
 * studio backdrop but a blurred smear on grass, gravel or leaves. Each pixel of the silhouette takes
 * the fine detail (the photo less its blur over BG_DETAIL_R × the shoulder width, both over the
 * background only) of the background pixel mirrored across the silhouette's nearer edge in its row,
 * BG_MARGIN × the shoulder width further out (the silhouette's rim holds the old garment's edge);
 * nothing where that pixel is not background either.
 */
export const BG_DETAIL_R = 0.03

export function backgroundDetail(
  img: Rgb,
  mask: Plane,
  box: { x0: number; y0: number; width: number; height: number },
  shoulderWidth: number,
): Float32Array {
  const { width: W } = img
  const { x0, y0, width: bw, height: bh } = box
  const out = new Float32Array(bw * bh * 3)
  const m = Math.max(1, Math.round(BG_MARGIN * shoulderWidth))
  // Full rows of the box (the mirrored pixels may lie outside it): background and its blur.
  const known = plane(W, bh)
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < W; x++) known.data[y * W + x] = mask.data[(y0 + y) * W + x]! < 0.05 ? 1 : 0
  }
  const r = Math.max(1, BG_DETAIL_R * shoulderWidth)
  const kb = boxBlur(known, r).data
  const low = [0, 1, 2].map((ch) => {
    const p = plane(W, bh)
    for (let y = 0; y < bh; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x
        p.data[i] = known.data[i]! * img.data[((y0 + y) * W + x) * 3 + ch]!
      }
    }
    return boxBlur(p, r).data
  })
  let row = 0
  const mirrorOk = (s: number): boolean =>
    s >= 0 && s < W && known.data[row + s]! > 0 && kb[row + s]! > 0.5
  for (let y = 0; y < bh; y++) {
    row = y * W
    let x = 0
    while (x < W) {
      if (known.data[row + x]! > 0) {
        x++
        continue
      }
      // A run of silhouette [a, b] in this row.
      const a = x
      while (x < W && known.data[row + x]! === 0) x++
      const b = x - 1
      for (let u = Math.max(a, x0); u <= Math.min(b, x0 + bw - 1); u++) {
        const left = a - 1 - m - (u - a)
        const right = b + 1 + m + (b - u)
        // The nearer side first (no list or closure per pixel: this loop's garbage).
        const near = u - a <= b - u
        const first = near ? left : right
        const second = near ? right : left
        const src = mirrorOk(first) ? first : mirrorOk(second) ? second : -1
        if (src < 0) continue
        const o = (y * bw + u - x0) * 3
        for (let ch = 0; ch < 3; ch++) {
          const v = img.data[((y0 + y) * W + src) * 3 + ch]!
          out[o + ch] = v - low[ch]![row + src]! / kb[row + src]!
        }
      }
    }
  }
  return out
}

/**
 * Whether a colour (0..255) is the old garment's own fabric: within FABRIC_D (features as `labOf`)
 * of one of its main colours, the prototypes (k-means over the worn pixels of the fill grid) that
 * hold at least FABRIC_SHARE of them. A print's letters, a logo or a collar of another colour are
 * not, and carry no light into the skin painted (everything passes when nothing is worn).
 */
export const FABRIC_SHARE = 0.15
export const FABRIC_D = 14

export function fabricTest(
  small: Float32Array,
  wornW: Float32Array,
): (r: number, g: number, b: number) => boolean {
  const f = fabricAlbedo(small, wornW)
  return (r, g, b) => f.label(r, g, b) >= 0
}

/**
 * The old garment's main colours (as fabricTest) with each one's own luma (0..1, the median over the
 * worn cells nearest it): `label` says which main colour a pixel is (-1: none, not the fabric), and
 * the pixel's luma over its colour's is the light on it, whatever the colour: a print of a main
 * colour (big letters, the stripes of a two-colour knit) is one albedo more, not light. With no main
 * colour every pixel is label 0 of luma NaN (the caller falls back to its own luma).
 */
export function fabricAlbedo(
  small: Float32Array,
  wornW: Float32Array,
): { label: (r: number, g: number, b: number) => number; luma: number[] } {
  const samples: Vec3[] = []
  const lumas: number[] = []
  const cells: number[] = []
  for (let j = 0; j < wornW.length; j++) if (wornW[j]! > 0.5) cells.push(j)
  const step = Math.max(1, Math.floor(cells.length / 4000))
  for (let k = 0; k < cells.length; k += step) {
    const j = cells[k]!
    const r = Math.round(small[j * 3]!)
    const g = Math.round(small[j * 3 + 1]!)
    const b = Math.round(small[j * 3 + 2]!)
    samples.push(labOf(r, g, b))
    lumas.push((0.299 * r + 0.587 * g + 0.114 * b) / 255)
  }
  const main = mainColours(samples, kmeans(samples, 6), FABRIC_SHARE)
  if (main.length === 0) return { label: () => 0, luma: [NaN] }
  const nearestMain = (v: Vec3): number => nearestIndex(v, main, FABRIC_D ** 2)
  const per: number[][] = main.map(() => [])
  for (let k = 0; k < samples.length; k++) {
    const m = nearestMain(samples[k]!)
    if (m >= 0) per[m]!.push(lumas[k]!)
  }
  const luma = per.map((v) => (v.length > 0 ? median(v) : NaN))
  const scratch: Vec3 = [0, 0, 0]
  return {
    label: (r, g, b) => nearestMain(labInto(Math.round(r), Math.round(g), Math.round(b), scratch)),
    luma,
  }
}

/**
 * How patterned an old garment is: the spread of its pixels' lightness (L*, 0..100), from the
 * PATTERN_LO to the PATTERN_HI quantile (0 for none). Stripes or a check of light and dark colours
 * (over PATTERN_DL) carry their pattern, not light, into the fine relief: the skin painted in their
 * place gets the broad shading only. A plain fabric's folds and shadows spread less.
 */
export const PATTERN_DL = 35
export const PATTERN_LO = 0.2
export const PATTERN_HI = 0.8

export function lightnessSpread(ls: readonly number[]): number {
  if (ls.length === 0) return 0
  const v = ls.slice().sort((p, q) => p - q)
  const at = (f: number) => v[Math.min(v.length - 1, Math.floor(f * v.length))]!
  return at(PATTERN_HI) - at(PATTERN_LO)
}

/**
 * Skin's fine texture (pores, the photo's grain) on the skin painted: the high-pass of luma (a pixel
 * less the mean of its GRAIN_R neighbourhood) has, on the person's own visible skin (off the face,
 * away from its edges), a spread (robust: 1.4826 × its median absolute value) the smooth fill lacks. Deterministic noise, blurred over one pixel,
 * is added to the painted skin's luma (each channel in proportion, the hue kept) so that the painted
 * skin's high-pass spread matches the real skin's (what the photo's relief already gives is
 * counted). Returns false, adding nothing, when too little of `real` shows (GRAIN_MIN_PX pixels
 * away from its edges) to measure it.
 */
export const GRAIN_R = 2
export const GRAIN_MIN_PX = 400

export function addGrain(
  img: Rgb,
  rgb: Uint8Array,
  real: Plane,
  paint: Plane,
  box: { x0: number; y0: number; x1: number; y1: number },
): boolean {
  const { width: W } = img
  const luma = (d: Uint8Array, i: number) =>
    0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!
  /** High-pass spread of `d`'s luma over the pixels whose whole GRAIN_R neighbourhood is in `m`. */
  const spread = (d: Uint8Array, m: Plane, x0: number, y0: number): number => {
    // Only the box of m's set pixels counts (with the blurs' reach, where m is 0 all round).
    const mb0 = nonZeroBox(m)
    if (mb0 === null) return NaN
    let bx0 = mb0.x0
    let by0 = mb0.y0
    let bx1 = mb0.x0 + mb0.width - 1
    let by1 = mb0.y0 + mb0.height - 1
    const R = GRAIN_R + 2
    bx0 = Math.max(0, bx0 - R)
    by0 = Math.max(0, by0 - R)
    bx1 = Math.min(m.width - 1, bx1 + R)
    by1 = Math.min(m.height - 1, by1 + R)
    const cw = bx1 - bx0 + 1
    const ch = by1 - by0 + 1
    const L = plane(cw, ch)
    const M = plane(cw, ch)
    for (let y = 0; y < ch; y++) {
      M.data.set(m.data.subarray((by0 + y) * m.width + bx0, (by0 + y) * m.width + bx1 + 1), y * cw)
      for (let x = 0; x < cw; x++) {
        L.data[y * cw + x] = luma(d, (y0 + by0 + y) * W + x0 + bx0 + x)
      }
    }
    const Lb = boxBlur(L, GRAIN_R).data
    const mb = boxBlur(M, GRAIN_R + 1).data
    const v = new Float64Array(cw * ch)
    let n = 0
    for (let q = 0; q < v.length; q++) {
      if (M.data[q]! < 0.5 || mb[q]! < 0.99) continue
      v[n++] = Math.abs(L.data[q]! - Lb[q]!)
    }
    if (n < GRAIN_MIN_PX) return NaN
    // Robust (1.4826 × the median absolute value): a knuckle, a nail or a crease is not grain.
    return 1.4826 * median(v, n)
  }
  const realSpread = spread(img.data, real, 0, 0)
  if (!Number.isFinite(realSpread)) return false
  const bw = box.x1 - box.x0 + 1
  const bh = box.y1 - box.y0 + 1
  const skin = plane(bw, bh)
  for (let y = 0; y < bh; y++) {
    const row = (box.y0 + y) * W + box.x0
    skin.data.set(paint.data.subarray(row, row + bw), y * bw)
  }
  const painted = spread(rgb, skin, box.x0, box.y0)
  if (!Number.isFinite(painted) || painted >= realSpread) return true
  // Noise: a hash per pixel (finer than the relief carried over from the photo, which it leaves
  // alone); its own high-pass spread scales it.
  const noise = plane(bw, bh)
  for (let q = 0; q < bw * bh; q++) {
    let v = Math.imul(q + 1, 0x9e3779b1)
    v = Math.imul(v ^ (v >>> 15), 0x85ebca6b)
    v = Math.imul(v ^ (v >>> 13), 0xc2b2ae35)
    noise.data[q] = ((v ^ (v >>> 16)) >>> 0) / 4294967296 - 0.5
  }
  const grain = noise
  const gb = boxBlur(grain, GRAIN_R).data
  // … measured as the skin is (robust), so that the two spreads compare.
  const gv = new Float64Array(Math.ceil((bw * bh) / 7))
  for (let q = 0, n = 0; q < bw * bh; q += 7) gv[n++] = Math.abs(grain.data[q]! - gb[q]!)
  const gSpread = 1.4826 * median(gv) || 1
  const amp = Math.sqrt(realSpread ** 2 - painted ** 2) / gSpread
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < bw; x++) {
      const q = y * bw + x
      const m = skin.data[q]!
      if (m <= 0.01) continue
      const i = (box.y0 + y) * W + box.x0 + x
      const l = Math.max(8, luma(rgb, i))
      const f = 1 + (amp * grain.data[q]! * m) / l
      for (let ch = 0; ch < 3; ch++) {
        rgb[i * 3 + ch] = clamp(Math.round(rgb[i * 3 + ch]! * f), 0, 255)
      }
    }
  }
  return true
}

/**
 * Which pixels of a label grid (w × h; -1: not the fabric) carry light: those of a main colour with
 * no pixel of another label within `e` pixels (a print's letters, another stripe, what is not the
 * fabric): the mixed and ringing pixels around a print's outline would draw it on the skin.
 */
function awayFromOthers(lab: Int16Array, w: number, h: number, e: number): Uint8Array {
  const edge = plane(w, h)
  for (let j = 0; j < w * h; j++) {
    const x = j % w
    const k = lab[j]!
    if ((x + 1 < w && lab[j + 1] !== k) || (j + w < w * h && lab[j + w] !== k)) edge.data[j] = 1
  }
  const near = dilate(edge, e + 1).data
  const ok = new Uint8Array(w * h)
  for (let j = 0; j < w * h; j++) if (lab[j]! >= 0 && near[j]! === 0) ok[j] = 1
  return ok
}

/** Grey-scale dilation: each value the maximum within a square of radius r (separable). */
function maxFilter(src: Plane, r: number): Plane {
  const { width: w, height: h } = src
  const tmp = new Float32Array(w * h)
  const out = new Float32Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let m = 0
      for (let k = Math.max(0, x - r); k <= Math.min(w - 1, x + r); k++) {
        m = Math.max(m, src.data[y * w + k]!)
      }
      tmp[y * w + x] = m
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let m = 0
      for (let k = Math.max(0, y - r); k <= Math.min(h - 1, y + r); k++) {
        m = Math.max(m, tmp[k * w + x]!)
      }
      out[y * w + x] = m
    }
  }
  return { width: w, height: h, data: out }
}

function maxPlane(p: Plane, q: Plane): Plane {
  const d = new Float32Array(p.data.length)
  for (let i = 0; i < d.length; i++) d[i] = Math.max(p.data[i]!, q.data[i]!)
  return { width: p.width, height: p.height, data: d }
}

/** Box-averaged RGB at (w, h), as floats 0..255 (w·h·3). */
function boxDown(img: Rgb, w: number, h: number): Float32Array {
  const out = new Float32Array(w * h * 3)
  const sx = img.width / w
  const sy = img.height / h
  for (let v = 0; v < h; v++) {
    const ya = Math.floor(v * sy)
    const yb = Math.max(ya + 1, Math.floor((v + 1) * sy))
    for (let u = 0; u < w; u++) {
      const xa = Math.floor(u * sx)
      const xb = Math.max(xa + 1, Math.floor((u + 1) * sx))
      let r = 0
      let g = 0
      let b = 0
      let c = 0
      for (let y = ya; y < yb; y++) {
        for (let x = xa; x < xb; x++) {
          const i = (y * img.width + x) * 3
          r += img.data[i]!
          g += img.data[i + 1]!
          b += img.data[i + 2]!
          c++
        }
      }
      const o = (v * w + u) * 3
      out[o] = r / c
      out[o + 1] = g / c
      out[o + 2] = b / c
    }
  }
  return out
}

/**
 * Push-pull fill: every pixel gets the weighted mean of the known pixels near it, from the finest
 * pyramid level that has any (known pixels keep their own colour). `known` is 0..1 per pixel.
 */
export function pushPull(
  rgb: Float32Array,
  known: Float32Array,
  w: number,
  h: number,
): Float32Array {
  const levels: { w: number; h: number; c: Float32Array; a: Float32Array }[] = []
  let c = new Float32Array(w * h * 3)
  let a = new Float32Array(w * h)
  for (let j = 0; j < w * h; j++) {
    const k = known[j]!
    a[j] = k
    c[j * 3] = rgb[j * 3]! * k
    c[j * 3 + 1] = rgb[j * 3 + 1]! * k
    c[j * 3 + 2] = rgb[j * 3 + 2]! * k
  }
  let lw = w
  let lh = h
  levels.push({ w: lw, h: lh, c, a })
  while (lw > 1 || lh > 1) {
    const nw = Math.max(1, (lw + 1) >> 1)
    const nh = Math.max(1, (lh + 1) >> 1)
    const nc = new Float32Array(nw * nh * 3)
    const na = new Float32Array(nw * nh)
    for (let y = 0; y < lh; y++) {
      for (let x = 0; x < lw; x++) {
        const j = y * lw + x
        const q = (y >> 1) * nw + (x >> 1)
        na[q] = na[q]! + a[j]!
        nc[q * 3] = nc[q * 3]! + c[j * 3]!
        nc[q * 3 + 1] = nc[q * 3 + 1]! + c[j * 3 + 1]!
        nc[q * 3 + 2] = nc[q * 3 + 2]! + c[j * 3 + 2]!
      }
    }
    // Premultiplied sums → normalise the weight to at most 1 (colour stays premultiplied).
    for (let q = 0; q < nw * nh; q++) {
      const s = na[q]!
      if (s > 1) {
        na[q] = 1
        nc[q * 3] = nc[q * 3]! / s
        nc[q * 3 + 1] = nc[q * 3 + 1]! / s
        nc[q * 3 + 2] = nc[q * 3 + 2]! / s
      }
    }
    c = nc
    a = na
    lw = nw
    lh = nh
    levels.push({ w: lw, h: lh, c, a })
  }
  // Pull: from the coarsest level down, fill what each level lacks with the level above.
  for (let l = levels.length - 2; l >= 0; l--) {
    const cur = levels[l]!
    const up = levels[l + 1]!
    for (let y = 0; y < cur.h; y++) {
      for (let x = 0; x < cur.w; x++) {
        const j = y * cur.w + x
        const al = cur.a[j]!
        if (al >= 1) continue
        // Bilinear from the level above (the nearest parent cell alone left blocks as large as the
        // coarse cells in a wide hole: a trouser leg's background in a garden).
        const fx = (x + 0.5) / 2 - 0.5
        const fy = (y + 0.5) / 2 - 0.5
        const ux = Math.floor(fx)
        const uy = Math.floor(fy)
        const tx = fx - ux
        const ty = fy - uy
        // The four parents in a fixed order (0,0), (1,0), (0,1), (1,1), summed from 0 as before;
        // unrolled: a per-pixel array of weights was most of this loop's garbage.
        const ya = clamp(uy, 0, up.h - 1) * up.w
        const yb = clamp(uy + 1, 0, up.h - 1) * up.w
        const xa = clamp(ux, 0, up.w - 1)
        const xb = clamp(ux + 1, 0, up.w - 1)
        const w00 = (1 - tx) * (1 - ty)
        const w10 = tx * (1 - ty)
        const w01 = (1 - tx) * ty
        const w11 = tx * ty
        const q00 = ya + xa
        const q10 = ya + xb
        const q01 = yb + xa
        const q11 = yb + xb
        const ua = up.a
        const uc = up.c
        const sa = 0 + w00 * ua[q00]! + w10 * ua[q10]! + w01 * ua[q01]! + w11 * ua[q11]!
        const sr =
          0 + w00 * uc[q00 * 3]! + w10 * uc[q10 * 3]! + w01 * uc[q01 * 3]! + w11 * uc[q11 * 3]!
        const sg =
          0 +
          w00 * uc[q00 * 3 + 1]! +
          w10 * uc[q10 * 3 + 1]! +
          w01 * uc[q01 * 3 + 1]! +
          w11 * uc[q11 * 3 + 1]!
        const sb =
          0 +
          w00 * uc[q00 * 3 + 2]! +
          w10 * uc[q10 * 3 + 2]! +
          w01 * uc[q01 * 3 + 2]! +
          w11 * uc[q11 * 3 + 2]!
        if (sa <= 0) continue
        const f = (1 - al) / sa
        cur.c[j * 3] = cur.c[j * 3]! + sr * f
        cur.c[j * 3 + 1] = cur.c[j * 3 + 1]! + sg * f
        cur.c[j * 3 + 2] = cur.c[j * 3 + 2]! + sb * f
        cur.a[j] = 1
      }
    }
  }
  const base = levels[0]!
  const out = new Float32Array(w * h * 3)
  for (let j = 0; j < w * h; j++) {
    const al = base.a[j]! || 1
    out[j * 3] = base.c[j * 3]! / al
    out[j * 3 + 1] = base.c[j * 3 + 1]! / al
    out[j * 3 + 2] = base.c[j * 3 + 2]! / al
  }
  // Smooth the blocky coarse levels (known pixels are replaced again below).
  for (let ch = 0; ch < 3; ch++) {
    const p = plane(w, h)
    for (let j = 0; j < w * h; j++) p.data[j] = out[j * 3 + ch]!
    const b = boxBlur(p, 2).data
    for (let j = 0; j < w * h; j++) out[j * 3 + ch] = known[j]! >= 0.99 ? rgb[j * 3 + ch]! : b[j]!
  }
  return out
}

/**
 * The body under the clothes from the landmarks (work grid): its coverage (0..1) and a shading
 * factor (cylinder term across each limb, 1 elsewhere).
 */
export function bodyModel(
  P: readonly (Point & { score: number })[],
  mask: Float32Array,
  w: number,
  h: number,
  sw: number,
  bare: (j: number) => boolean,
  rgb?: Float32Array,
  tone?: readonly [number, number, number],
): { body: Plane; shape: Plane; legs: Plane; armRgb: Float32Array } {
  const body = plane(w, h)
  const shape = plane(w, h, 1)
  const legs = plane(w, h)
  // The arms' own colour where they are painted from the bare arm's (NaN elsewhere).
  const armRgb = new Float32Array(w * h * 3).fill(Number.NaN)
  const paintRgb = new Float32Array(3)
  const pt = (i: number) => P[i]!
  /** Half-width of the silhouette across the segment a→b at fraction t (mean of both sides, each capped). */
  const halfWidth = (p: Point, q: Point, t: number, cap: number): number => {
    const c = lerp(p, q, t)
    const len = dist(p, q) || 1
    const nx = -(q.y - p.y) / len
    const ny = (q.x - p.x) / len
    const scan = (sx: number) => {
      let d = 0
      for (; d < cap; d++) {
        const x = Math.round(c.x + nx * d * sx)
        const y = Math.round(c.y + ny * d * sx)
        if (x < 0 || y < 0 || x >= w || y >= h || mask[y * w + x]! < 0.5) break
      }
      return d
    }
    return (scan(1) + scan(-1)) / 2
  }
  // `clip`: only within the silhouette (soft): the arms, whose loose sleeves stand off them.
  // `paint`: an arm's colour from its bare part (armColourAt along the normal `n`), its profile in
  // place of the cylinder term.
  const cone = (
    p: Point,
    q: Point,
    ra: number,
    rb: number,
    clip = false,
    paint: { skin: ArmSkin; n: Point } | null = null,
  ) => {
    const mx = Math.max(ra, rb) + 2
    const xa = Math.max(0, Math.floor(Math.min(p.x, q.x) - mx))
    const xb = Math.min(w - 1, Math.ceil(Math.max(p.x, q.x) + mx))
    const ya = Math.max(0, Math.floor(Math.min(p.y, q.y) - mx))
    const yb = Math.min(h - 1, Math.ceil(Math.max(p.y, q.y) + mx))
    const dx = q.x - p.x
    const dy = q.y - p.y
    const len2 = dx * dx + dy * dy || 1e-9
    for (let y = ya; y <= yb; y++) {
      for (let x = xa; x <= xb; x++) {
        const t = clamp(((x - p.x) * dx + (y - p.y) * dy) / len2, 0, 1)
        const r = ra + (rb - ra) * t
        const d = Math.hypot(x - (p.x + t * dx), y - (p.y + t * dy))
        const j = y * w + x
        const v = clamp(r + 0.5 - d, 0, 1) * (clip ? clamp((mask[j]! - 0.25) / 0.5, 0, 1) : 1)
        const sh = 1 - LIMB_SHADE * clamp(d / Math.max(r, 1e-3), 0, 1) ** 2
        if (paint !== null && v > 0) {
          const u =
            ((x - p.x - t * dx) * paint.n.x + (y - p.y - t * dy) * paint.n.y) / Math.max(r, 1e-3)
          armColourAt(paint.skin, paint.n, clamp(u, -1, 1), paintRgb, 0)
        }
        const lighter =
          paint !== null &&
          !Number.isNaN(armRgb[j * 3]!) &&
          luma3(paintRgb, 0) > luma3(armRgb, j * 3)
        if (v > body.data[j]!) {
          body.data[j] = v
          shape.data[j] = paint !== null ? 1 : sh
          if (paint !== null) armRgb.set(paintRgb, j * 3)
          else armRgb[j * 3] = Number.NaN
        } else if (v >= 1) {
          // Inside two capsules (a knee, an elbow): the lighter term, so the joint shows no seam.
          if (paint === null) shape.data[j] = Math.max(shape.data[j]!, sh)
          else if (lighter || Number.isNaN(armRgb[j * 3]!)) armRgb.set(paintRgb, j * 3)
        }
      }
    }
  }
  const bounded = (p: Point, q: Point, ra: number, rb: number) => {
    const ha = halfWidth(p, q, 0.25, 2 * ra)
    const hb = halfWidth(p, q, 0.75, 2 * rb)
    cone(p, q, Math.max(1, Math.min(ra, 0.95 * ha)), Math.max(1, Math.min(rb, 0.95 * hb)))
  }
  const sl = pt(LM.leftShoulder)
  const sr = pt(LM.rightShoulder)
  const hl = pt(LM.leftHip)
  const hr = pt(LM.rightHip)
  const hw = Math.max(dist(hl, hr), 0.45 * sw)
  // Torso and pelvis (drawn first: the limbs' shading goes over them).
  const side = (p: Point, q: Point) => (p.x <= q.x ? [p, q] : [q, p]) as [Point, Point]
  const [sL, sR] = side(sl, sr)
  const [hL, hR] = side(hl, hr)
  const torso = plane(w, h)
  const hc = mid(hl, hr)
  // From just above the shoulder joints (the trapezius, the upper chest) down to the pelvis.
  fillPolygon(torso, [
    { x: sL.x - 0.02 * sw, y: sL.y },
    { x: sL.x + 0.15 * sw, y: sL.y - 0.1 * sw },
    { x: sR.x - 0.15 * sw, y: sR.y - 0.1 * sw },
    { x: sR.x + 0.02 * sw, y: sR.y },
    { x: hR.x + 0.4 * hw, y: hR.y },
    { x: hc.x, y: hc.y + 0.45 * hw },
    { x: hL.x - 0.4 * hw, y: hL.y },
  ])
  for (let j = 0; j < w * h; j++) {
    if (torso.data[j]! > body.data[j]! && mask[j]! > 0.5) body.data[j] = torso.data[j]!
  }
  // Above the shoulder line, between the shoulder joints, the silhouette is the body: the neck and
  // the top of the shoulders, which a collar or a top's shoulders stand off very little (an old
  // collar taken off shows skin there, not background).
  const slope = (sR.y - sL.y) / (sR.x - sL.x || 1e-6)
  for (let y = 0; y < h; y++) {
    for (let x = Math.max(0, Math.ceil(sL.x)); x <= Math.min(w - 1, Math.floor(sR.x)); x++) {
      const j = y * w + x
      if (y <= sL.y + slope * (x - sL.x) && mask[j]! > 0.5) body.data[j] = 1
    }
  }
  // The neck, from the shoulder line up towards the mouth (an old collar taken off shows the neck).
  const sm = mid(sl, sr)
  const mouth = mid(pt(LM.mouthLeft), pt(LM.mouthRight))
  const up = mouth.y < sm.y - 0.2 * sw ? mouth : { x: sm.x, y: sm.y - 0.45 * sw }
  cone(sm, lerp(sm, up, 0.8), 0.17 * sw, 0.15 * sw)
  for (const [s, e, wr, hp] of [
    [LM.leftShoulder, LM.leftElbow, LM.leftWrist, LM.leftHip],
    [LM.rightShoulder, LM.rightElbow, LM.rightWrist, LM.rightHip],
  ] as const) {
    const covered = tone !== undefined ? { mask, tone } : undefined
    const arm = armShape(P, [s, e, wr], bare, w, h, sw, rgb, covered)
    // The armpit: between a hanging upper arm and the torso's side, the silhouette is the body
    // (the arm against the torso, its shadow), not backdrop; a real gap is outside the mask.
    const down = sub(pt(hp), pt(s))
    const along = sub(pt(e), pt(s))
    const cos = dot(along, down) / (Math.hypot(along.x, along.y) * Math.hypot(down.x, down.y) || 1)
    if (cos > Math.cos(ARMPIT_MAX_ANGLE)) {
      const side = lerp(pt(s), pt(hp), clamp(dot(along, down) / (dot(down, down) || 1), 0, 1))
      const pit = plane(w, h)
      fillPolygon(pit, [pt(s), pt(e), side])
      for (let j = 0; j < w * h; j++) {
        if (pit.data[j]! > body.data[j]! && mask[j]! > 0.5) body.data[j] = pit.data[j]!
      }
    }
    // The shoulder: within SHOULDER_BODY × the shoulder width of its joint the silhouette is the
    // body (a top's shoulder stands off the deltoid very little), not backdrop beside the cap.
    const cap = plane(w, h)
    drawCapsule(cap, pt(s), pt(s), SHOULDER_BODY * sw)
    for (let j = 0; j < w * h; j++) {
      if (cap.data[j]! > body.data[j]! && mask[j]! > 0.5) body.data[j] = cap.data[j]!
    }
    const s0 = add(pt(s), arm.shift)
    const e0 = add(pt(e), arm.elbowShift)
    // The shoulder cap (the deltoid, rounder than the arm below it), then the upper arm, both
    // within the silhouette: inside an old sleeve, skin where the arm is, background only in the
    // sleeve's loose part beside it.
    const nU = { x: -(e0.y - s0.y), y: e0.x - s0.x }
    const nF = { x: -(pt(wr).y - e0.y), y: pt(wr).x - e0.x }
    const unit = (v: Point) => {
      const l = Math.hypot(v.x, v.y) || 1
      return { x: v.x / l, y: v.y / l }
    }
    const paint = (n: Point) => (arm.skin === null ? null : { skin: arm.skin, n: unit(n) })
    cone(s0, s0, arm.top, arm.top, true, paint(nU))
    cone(s0, e0, arm.top, arm.elbow, true, paint(nU))
    if (pt(wr).score > 0.2) cone(e0, pt(wr), arm.elbow, arm.wrist, true, paint(nF))
  }
  // The body's down (shoulders' middle → hips' middle), for a knee the landmark model is unsure of.
  const down = sub(hc, sm)
  const downLen = Math.hypot(down.x, down.y) || 1
  for (const [hp, kn, an] of [
    [LM.leftHip, LM.leftKnee, LM.leftAnkle],
    [LM.rightHip, LM.rightKnee, LM.rightAnkle],
  ] as const) {
    // Leg-shaped, not the old trousers' silhouette: the thigh tapers to the knee, the calf swells
    // a third of the way down the shin and tapers to a slim ankle.
    // A bare knee (below shorts or a skirt) gives the person's own leg width: the silhouette there
    // narrower than KNEE_R scales the whole leg down (a slim leg under wide shorts); under trousers
    // the silhouette is the cloth's, wider, and the proportions stand.
    // A knee under KNEE_SURE (out of the photo, or guessed under wide trousers: person_04's knees
    // 1.4 × the hip-joint distance apart at 0.2) is straight below its hip along the body's down,
    // at the thigh's length: the painted thighs hang down, they do not splay with the guess.
    const th = dist(pt(hp), pt(kn))
    const k =
      pt(kn).score >= KNEE_SURE
        ? pt(kn)
        : add(pt(hp), { x: (down.x / downLen) * th, y: (down.y / downLen) * th })
    const knee =
      k.x >= 0 && k.y >= 0 && k.x < w && k.y < h ? halfWidth(pt(hp), k, 1, 2 * KNEE_R * hw) : 0
    const f = knee >= 1 ? clamp((0.95 * knee) / (KNEE_R * hw), LEG_SCALE_MIN, 1) : 1
    bounded(pt(hp), k, f * THIGH_R * hw, f * KNEE_R * hw)
    if (pt(an).score > 0.2) {
      const calf = lerp(k, pt(an), 0.3)
      bounded(k, calf, f * KNEE_R * hw, f * CALF_R * hw)
      bounded(calf, pt(an), f * CALF_R * hw, f * ANKLE_R * hw)
    }
    drawCapsule(legs, pt(hp), k, 0.6 * hw)
    drawCapsule(legs, k, pt(an), 0.32 * hw)
  }
  return { body, shape, legs, armRgb }
}

const luma3 = (c: Float32Array, o: number): number =>
  0.299 * c[o]! + 0.587 * c[o + 1]! + 0.114 * c[o + 2]!

/**
 * An arm's shape under the clothes (work grid): the radii of the upper arm at the shoulder
 * (`top`), at the elbow and of the forearm at the wrist, the shift of the upper arm's axis off the
 * landmarks' (the landmarks lie on the joints, the arm's middle may lie beside them), and the bare
 * arm's own colour and light across it (`skin`).
 *
 * Measured where the arm shows bare (`bare`: skin, in the silhouette, not the old garment): across
 * the forearm (ARM_SAMPLES of the way elbow → wrist) and across the upper arm below an old short
 * sleeve (ARM_UPPER_SAMPLES shoulder → elbow), the run of bare pixels nearest the bone (within
 * ARM_SEARCH × the shoulder width of it, both ends inside ARM_SPAN: not an arm merged with
 * something skin-hued). The upper arm tapers linearly from the deltoid at the shoulder joint
 * (ARM_DELTOID × its radius at the elbow) to the elbow: its elbow radius is the one that makes that
 * taper pass through the bare upper arm's own widths where it shows (the median over its runs),
 * else the forearm's (half the median width of its runs) × ARM_ELBOW_RATIO, else ARM_FOREARM_R ×
 * the shoulder width × ARM_ELBOW_RATIO (long sleeves: nothing bare); the wrist is ARM_WRIST_RATIO ×
 * the forearm. The forearm's radius is kept within [ARM_FOREARM_MIN, ARM_FOREARM_MAX], the elbow's
 * measured on the upper arm within [ARM_UPPER_MIN, ARM_UPPER_MAX] × the shoulder width (a plus-size
 * or a slim upper arm is measured, not clamped to an average one); the shift is the median offset of the upper arm's bare runs off the
 * bone, at most ARM_SHIFT_MAX × the shoulder width; at the elbow the median offset of the two bare
 * runs nearest it (the upper arm's lowest, else the forearm's highest), at most ARM_ELBOW_SHIFT_MAX.
 *
 * With `rgb` (the work grid's colours, three a cell), `skin` is the bare arm's colour (the median
 * of its runs' middles, |u| ≤ ARM_MIDDLE, u the position across the run, −1..1 along the segment's
 * normal) and its cross-profile: for ARM_PROFILE_BINS bins of u, each channel's median ratio to that
 * colour (the run's outer ARM_RIM dropped: mixed with the backdrop). The upper arm's runs are used
 * when at least two show (under a short sleeve), else the forearm's: the light as it falls on this
 * arm (a side lit, the other in shadow), not a symmetric cylinder. Null when nothing shows bare.
 */
export const ARM_SAMPLES = [0.15, 0.25, 0.35, 0.45, 0.55] as const
export const ARM_UPPER_SAMPLES = [0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95] as const
export const ARM_SEARCH = 0.15
export const ARM_SPAN = 0.3
export const ARM_FOREARM_R = 0.11
/** The upper arm's radius at the shoulder joint over its radius at the elbow (the deltoid). */
export const ARM_DELTOID = 1.3
/** The upper arm's radius just above the elbow over the forearm's (when only the forearm shows). */
export const ARM_ELBOW_RATIO = 1.05
export const ARM_WRIST_RATIO = 0.7
export const ARM_FOREARM_MIN = 0.09
export const ARM_FOREARM_MAX = 0.16
/** The upper arm's elbow radius measured is kept over this (× shoulder width; a slim arm). */
export const ARM_UPPER_MIN = 0.07
/** The upper arm's elbow radius measured is kept under this (× shoulder width). */
export const ARM_UPPER_MAX = 0.2
/** A run narrower than this (× shoulder width) is a part of an arm cut by a shadow or a hair lock. */
export const ARM_RUN_MIN = 0.12
export const ARM_SHIFT_MAX = 0.1
/** … and at the elbow (the elbow's landmark may lie by the arm's inner edge). */
export const ARM_ELBOW_SHIFT_MAX = 0.15
/** Bins of the bare arm's cross-profile, its middle (|u| under this) and the rim dropped (|u| over 1 − this). */
export const ARM_PROFILE_BINS = 9
export const ARM_MIDDLE = 0.35
export const ARM_RIM = 0.12
/** An arm under a long old sleeve is at most this share of the sleeve's width (the cloth stands off it). */
export const ARM_IN_SLEEVE = 0.8
/** … measured on runs across the sleeve at most this wide (× shoulder width; wider: merged with the torso). */
export const ARM_SLEEVE_MAX = 0.4
/** An arm painted without a bare part to copy: 1 − ARM_ROUND u² across it (u −1..1), … */
export const ARM_ROUND = 0.22
/** … plus the old sleeve's own light across it, a slope at most this (its luma over its mean per u). */
export const ARM_TILT_MAX = 0.12
/** Within this (× shoulder width) of a shoulder joint the silhouette is the body. */
export const SHOULDER_BODY = 0.22
/** Up to this angle (radians) off the shoulder → hip line an upper arm hangs: its armpit is body. */
export const ARMPIT_MAX_ANGLE = Math.PI / 4

/** The bare arm's colour (0..255) and its cross-profile (see armShape) along `normal`. */
export interface ArmSkin {
  rgb: [number, number, number]
  /** ARM_PROFILE_BINS × 3 ratios over `rgb`, u from −1 to 1. */
  profile: Float32Array
  /** The normal (unit) along which u runs: the measured segment's. */
  normal: Point
}

export interface ArmShape {
  top: number
  elbow: number
  wrist: number
  shift: Point
  /** The shift of the upper arm's axis at the elbow (`shift`, or the forearm's where only it shows). */
  elbowShift: Point
  /** The forearm radius measured (work px; null: none shows bare, ARM_FOREARM_R used). */
  forearm: number | null
  /** The upper arm's elbow radius measured on its bare part (work px; null: none shows bare). */
  upper: number | null
  skin: ArmSkin | null
}

interface ArmRun {
  t: number
  width: number
  offset: number
  c: Point
  n: Point
  a: number
  b: number
}

export function armShape(
  P: readonly (Point & { score: number })[],
  joints: readonly [number, number, number],
  bare: (j: number) => boolean,
  w: number,
  h: number,
  sw: number,
  rgb?: Float32Array,
  covered?: ArmCovered,
): ArmShape {
  const [s, e, wr] = joints.map((i) => P[i]!) as [
    Point & { score: number },
    Point,
    Point & { score: number },
  ]
  const normalOf = (p: Point, q: Point): Point => {
    const len = dist(p, q) || 1
    return { x: -(q.y - p.y) / len, y: (q.x - p.x) / len }
  }
  /** The bare run across p→q at t nearest the bone (its width, its middle's offset along the normal). */
  const across = (
    p: Point,
    q: Point,
    t: number,
    on0: (j: number) => boolean = bare,
  ): ArmRun | null => {
    if (dist(p, q) < 1) return null
    const c = lerp(p, q, t)
    const n = normalOf(p, q)
    const R = Math.ceil(ARM_SPAN * sw)
    let best: ArmRun | null = null
    let start: number | null = null
    for (let d = -R; d <= R + 1; d++) {
      const x = Math.round(c.x + n.x * d)
      const y = Math.round(c.y + n.y * d)
      const on = d <= R && x >= 0 && y >= 0 && x < w && y < h && on0(y * w + x)
      if (on && start === null) start = d
      if (!on && start !== null) {
        const a = start
        const b = d - 1
        start = null
        // Both ends inside the span (not cut by it), near the bone.
        if (a === -R || b === R) continue
        const gap = a > 0 ? a : b < 0 ? -b : 0
        if (gap > ARM_SEARCH * sw) continue
        const run = { t, width: b - a + 1, offset: (a + b) / 2, c, n, a, b }
        if (best === null || Math.abs(run.offset) < Math.abs(best.offset)) best = run
      }
    }
    return best
  }
  const minW = ARM_RUN_MIN * sw
  const fore: ArmRun[] = []
  if (wr.score > 0.2) {
    for (const t of ARM_SAMPLES) {
      const r = across(e, wr, t)
      if (r !== null && r.width >= minW) fore.push(r)
    }
  }
  const upperRuns: ArmRun[] = []
  for (const t of ARM_UPPER_SAMPLES) {
    const r = across(s, e, t)
    if (r !== null && r.width >= minW) upperRuns.push(r)
  }
  const forearm = fore.length >= 2 ? median(fore.map((r) => r.width)) / 2 : null
  // The elbow radius that makes the taper from the deltoid pass through each bare width.
  const upper =
    upperRuns.length >= 2
      ? median(upperRuns.map((r) => r.width / 2 / (1 + (ARM_DELTOID - 1) * (1 - r.t))))
      : null
  const rf = clamp(
    forearm ?? (upper !== null ? upper / ARM_ELBOW_RATIO : ARM_FOREARM_R * sw),
    ARM_FOREARM_MIN * sw,
    ARM_FOREARM_MAX * sw,
  )
  const elbow =
    upper !== null ? clamp(upper, ARM_UPPER_MIN * sw, ARM_UPPER_MAX * sw) : ARM_ELBOW_RATIO * rf
  let shift: Point = { x: 0, y: 0 }
  let elbowShift: Point = { x: 0, y: 0 }
  const along = (r: ArmRun, o: number): Point => ({ x: r.n.x * o, y: r.n.y * o })
  const maxShift = ARM_SHIFT_MAX * sw
  const maxElbow = ARM_ELBOW_SHIFT_MAX * sw
  if (upperRuns.length >= 2) {
    shift = along(upperRuns[0]!, clamp(median(upperRuns.map((u) => u.offset)), -maxShift, maxShift))
  }
  // At the elbow, the bare runs nearest it: the upper arm's two lowest, else (a sleeve to the
  // elbow) the forearm's two highest: the painted arm ends where the bare one begins.
  const near =
    upperRuns.length >= 2 ? upperRuns.slice(-2) : fore.length >= 2 ? fore.slice(0, 2) : []
  if (near.length > 0) {
    elbowShift = along(near[0]!, clamp(median(near.map((r) => r.offset)), -maxElbow, maxElbow))
  }
  const runs = upperRuns.length >= 2 ? upperRuns : fore.length >= 2 ? fore : []
  const shape: ArmShape = {
    top: ARM_DELTOID * elbow,
    elbow,
    wrist: ARM_WRIST_RATIO * rf,
    shift,
    elbowShift,
    forearm,
    upper,
    skin: rgb !== undefined && runs.length > 0 ? armSkin(runs, rgb, w, h) : null,
  }
  if (runs.length > 0 || covered === undefined || rgb === undefined) return shape
  // Nothing bare (long sleeves): the arm inside the old sleeve, narrower than it, in the person's
  // tone, round and lit as the sleeve is across it.
  const inSleeve = (j: number) => covered.mask[j]! > 0.5
  const ms = mid(P[LM.leftShoulder]!, P[LM.rightShoulder]!)
  /**
   * The sleeve across p→q at t: its run in the silhouette, or where the sleeve lies against the
   * torso (one run with it), the run as wide on the bone's inner side as from the bone to the
   * sleeve's outer edge.
   */
  const sleeveAt = (p: Point, q: Point, t: number): ArmRun | null => {
    const r = across(p, q, t, inSleeve)
    if (r !== null && r.width >= minW && r.width <= ARM_SLEEVE_MAX * sw) return r
    const c = lerp(p, q, t)
    const n = normalOf(p, q)
    const out = dot(n, sub(c, ms)) >= 0 ? 1 : -1
    const R = Math.ceil(ARM_SPAN * sw)
    let d = 0
    for (; d <= R; d++) {
      const x = Math.round(c.x + n.x * d * out)
      const y = Math.round(c.y + n.y * d * out)
      if (x < 0 || y < 0 || x >= w || y >= h || !inSleeve(y * w + x)) break
    }
    if (d > R || 2 * d < minW) return null
    return { t, width: 2 * d, offset: 0, c, n, a: -d, b: d }
  }
  const sleeve: ArmRun[] = []
  for (const t of ARM_UPPER_SAMPLES) {
    const r = sleeveAt(s, e, t)
    if (r !== null) sleeve.push(r)
  }
  const sleeveFore: ArmRun[] = []
  if (wr.score > 0.2) {
    for (const t of ARM_SAMPLES) {
      const r = sleeveAt(e, wr, t)
      if (r !== null) sleeveFore.push(r)
    }
  }
  if (sleeve.length >= 2) {
    // The arm's radius at the elbow within ARM_IN_SLEEVE of the sleeve's half-width (the taper
    // from the deltoid passing through it), centred in the sleeve.
    const cap = median(
      sleeve.map((r) => (ARM_IN_SLEEVE * r.width) / 2 / (1 + (ARM_DELTOID - 1) * (1 - r.t))),
    )
    shape.elbow = Math.max(ARM_UPPER_MIN * sw, Math.min(shape.elbow, cap))
    shape.top = ARM_DELTOID * shape.elbow
    shape.shift = along(sleeve[0]!, clamp(median(sleeve.map((u) => u.offset)), -maxShift, maxShift))
    shape.elbowShift = along(
      sleeve.at(-1)!,
      clamp(median(sleeve.slice(-2).map((u) => u.offset)), -maxElbow, maxElbow),
    )
  }
  if (sleeveFore.length >= 2) {
    const cap = (ARM_IN_SLEEVE * median(sleeveFore.map((r) => r.width))) / 2
    shape.wrist = Math.max(
      ARM_FOREARM_MIN * ARM_WRIST_RATIO * sw,
      Math.min(shape.wrist, cap * ARM_WRIST_RATIO),
    )
  }
  shape.skin = coveredSkin(sleeve.length >= 2 ? sleeve : sleeveFore, rgb, w, h, covered.tone, s, e)
  return shape
}

/** Where an arm is under an old sleeve, what armShape needs to paint it (see ArmCovered). */
export interface ArmCovered {
  /** The silhouette (work grid, 0..1): the sleeve's outline. */
  mask: Float32Array
  /** The person's own skin tone (0..255), from the skin that shows (face, neck, hands). */
  tone: readonly [number, number, number]
}

/**
 * An arm nothing of which shows bare (long old sleeves): the person's tone, round across it (1 −
 * ARM_ROUND u², darker at its edges, as a bare arm is) and lit from the side the old sleeve is lit
 * from (the slope of its luma across the runs' middles, |u| ≤ 1 − ARM_RIM, over its mean, at most
 * ARM_TILT_MAX): not a flat slab.
 */
function coveredSkin(
  runs: readonly ArmRun[],
  rgb: Float32Array,
  w: number,
  h: number,
  tone: readonly [number, number, number],
  s: Point,
  e: Point,
): ArmSkin {
  const slopes: number[] = []
  for (const r of runs) {
    const half = (r.b - r.a + 1) / 2
    const m = (r.a + r.b) / 2
    let su = 0
    let sl = 0
    let suu = 0
    let sul = 0
    let k = 0
    for (let d = r.a; d <= r.b; d++) {
      const u = (d - m) / half
      if (Math.abs(u) > 1 - ARM_RIM) continue
      const x = clamp(Math.round(r.c.x + r.n.x * d), 0, w - 1)
      const y = clamp(Math.round(r.c.y + r.n.y * d), 0, h - 1)
      const l = luma3(rgb, (y * w + x) * 3)
      su += u
      sl += l
      suu += u * u
      sul += u * l
      k++
    }
    const varU = suu / Math.max(k, 1) - (su / Math.max(k, 1)) ** 2
    if (k < 3 || varU <= 1e-6 || sl <= 0) continue
    slopes.push((sul / k - (su / k) * (sl / k)) / varU / (sl / k))
  }
  const tilt = slopes.length > 0 ? clamp(median(slopes), -ARM_TILT_MAX, ARM_TILT_MAX) : 0
  const B = ARM_PROFILE_BINS
  const profile = new Float32Array(B * 3)
  for (let k = 0; k < B; k++) {
    const u = ((k + 0.5) / B) * 2 - 1
    profile.fill(1 - ARM_ROUND * u * u + tilt * u, k * 3, k * 3 + 3)
  }
  const len = dist(s, e) || 1
  const normal = runs.length > 0 ? runs[0]!.n : { x: -(e.y - s.y) / len, y: (e.x - s.x) / len }
  return { rgb: [tone[0], tone[1], tone[2]], profile, normal }
}

/** The bare arm's colour and cross-profile over its runs (see armShape). */
function armSkin(runs: readonly ArmRun[], rgb: Float32Array, w: number, h: number): ArmSkin {
  const B = ARM_PROFILE_BINS
  const middle: number[][] = [[], [], []]
  const samples: { bin: number; j: number }[] = []
  for (const r of runs) {
    const half = (r.b - r.a + 1) / 2
    const m = (r.a + r.b) / 2
    for (let d = r.a; d <= r.b; d++) {
      const u = (d - m) / half
      if (Math.abs(u) > 1 - ARM_RIM) continue
      const x = clamp(Math.round(r.c.x + r.n.x * d), 0, w - 1)
      const y = clamp(Math.round(r.c.y + r.n.y * d), 0, h - 1)
      const j = y * w + x
      samples.push({ bin: clamp(Math.floor(((u + 1) / 2) * B), 0, B - 1), j })
      if (Math.abs(u) > ARM_MIDDLE) continue
      for (let ch = 0; ch < 3; ch++) middle[ch]!.push(rgb[j * 3 + ch]!)
    }
  }
  const tone = [0, 1, 2].map((ch) => Math.max(1, median(middle[ch]!))) as [number, number, number]
  const per: number[][][] = Array.from({ length: B }, () => [[], [], []])
  for (const { bin, j } of samples) {
    for (let ch = 0; ch < 3; ch++) per[bin]![ch]!.push(rgb[j * 3 + ch]! / tone[ch]!)
  }
  const profile = new Float32Array(B * 3).fill(Number.NaN)
  for (let k = 0; k < B; k++) {
    if (per[k]![0]!.length === 0) continue
    for (let ch = 0; ch < 3; ch++) profile[k * 3 + ch] = median(per[k]![ch]!)
  }
  // Bins no sample fell in (a narrow run) take the nearest bin's ratios.
  for (let k = 0; k < B; k++) {
    if (!Number.isNaN(profile[k * 3]!)) continue
    for (let o = 1; o < B; o++) {
      const q = [k - o, k + o].find((i) => i >= 0 && i < B && !Number.isNaN(profile[i * 3]!))
      if (q === undefined) continue
      for (let ch = 0; ch < 3; ch++) profile[k * 3 + ch] = profile[q * 3 + ch]!
      break
    }
    if (Number.isNaN(profile[k * 3]!)) for (let ch = 0; ch < 3; ch++) profile[k * 3 + ch] = 1
  }
  return { rgb: tone, profile, normal: runs[0]!.n }
}

/**
 * The bare arm's colour at position u (−1..1) across a segment of normal `n`: its profile read
 * along n when n is within 45° of the measured one's normal, mirrored when opposite, else (a bent
 * arm: the light fell across the other segment) the profile made symmetric. `out` gets 0..255.
 */
export function armColourAt(
  skin: ArmSkin,
  n: Point,
  u: number,
  out: Float32Array,
  o: number,
): void {
  const B = ARM_PROFILE_BINS
  const c = dot(n, skin.normal)
  const f = clamp(((u + 1) / 2) * B - 0.5, 0, B - 1)
  const k0 = Math.floor(f)
  const k1 = Math.min(B - 1, k0 + 1)
  const tt = f - k0
  for (let ch = 0; ch < 3; ch++) {
    const at = (k: number) => {
      const p = skin.profile
      if (c >= Math.SQRT1_2) return p[k * 3 + ch]!
      if (c <= -Math.SQRT1_2) return p[(B - 1 - k) * 3 + ch]!
      return (p[k * 3 + ch]! + p[(B - 1 - k) * 3 + ch]!) / 2
    }
    out[o + ch] = skin.rgb[ch]! * (at(k0) * (1 - tt) + at(k1) * tt)
  }
}
