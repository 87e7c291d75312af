/**
 * Taking the old garment off (clothing.ts, undress.ts, composite.ts) on real photos of the tuning
 * split (../shared/media/tryon, TRYON.md) with the real networks: the regions below were labelled
 * by hand on each photo with a 5 % grid (fractions of width and height, [x0, y0, x1, y1]); every
 * assertion reads pixels of the result inside them. The garment category is forced
 * (`garmentMode`), so these tests check the compositor whatever the category detector says.
 */
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GarmentMode } from '../../jobs/try-on.ts'
import { decodeImage, type RasterImage } from '../../media/image.ts'
import {
  compositeGarment,
  NECK_COLUMN,
  NECK_COLUMN_FADE,
  TAKE_OFF_MIN_COVER,
  TAKE_OFF_OTHER_SAME,
} from './composite.ts'
import { neckLine } from './person.ts'
import { LM } from './pose.ts'
import { mid, resizePlane } from './raster.ts'
import type { Plane } from './raster.ts'
import { openTryOnEngine, type TryOnEngineWithDetails } from './tryon-engine.ts'
import { armShape, FILL_SIDE, SHOULDER_BODY, takeOff } from './undress.ts'
import type { WarpedPart } from './warp.ts'

const ROOT = resolve(fileURLToPath(new URL('../../../../..', import.meta.url)))
const MEDIA = resolve(ROOT, '../shared/media/tryon')
const MODELS = join(ROOT, 'models', 'dist')
const ENGINE_TIMEOUT_MS = 300_000
const CASE_TIMEOUT_MS = 180_000

type Box = readonly [number, number, number, number]

/** Hand-labelled regions (see the file comment). */
const P11 = {
  chest: [0.4, 0.22, 0.6, 0.38],
  sleeveLeft: [0.3, 0.28, 0.34, 0.38],
  sleeveRight: [0.64, 0.26, 0.69, 0.38],
  thighLeft: [0.37, 0.5, 0.47, 0.6],
  thighRight: [0.52, 0.5, 0.6, 0.6],
  shinLeft: [0.37, 0.72, 0.46, 0.85],
  shinRight: [0.52, 0.72, 0.6, 0.85],
  shoes: [0.36, 0.93, 0.58, 0.96],
  /** The front of his red collar (the rib below the neck's middle). */
  collar: [0.46, 0.06, 0.52, 0.075],
  /** The grey sweatshirt just below the collar, above the one-shoulder neckline of full_01. */
  chestTop: [0.47, 0.09, 0.52, 0.125],
  /** His neck's skin just above the collar. */
  neck: [0.47, 0.045, 0.51, 0.055],
  /** The sweatshirt's print, the coloured letters "Versace" across his chest. */
  letters: [0.33, 0.1, 0.58, 0.19],
  /** The jeans' fly, front pockets and their seams. */
  jeansFront: [0.38, 0.42, 0.6, 0.5],
} as const satisfies Record<string, Box>
const P01 = {
  /** Long hair falling over her left shoulder and chest, in front of the tee. */
  hair: [0.61, 0.32, 0.66, 0.42],
  /** The short sleeve of her tee (image left), arm inside. */
  sleeve: [0.16, 0.45, 0.26, 0.53],
  /** The tee just above its hem, over the hips (untucked). */
  teeAboveHem: [0.35, 0.64, 0.6, 0.7],
} as const satisfies Record<string, Box>

const P12 = {
  /** His navy-and-white striped polo over the belly, below where a new tee ends, above its hem band. */
  poloBelly: [0.35, 0.61, 0.7, 0.67],
  /** The polo's navy and white stripes across his chest and belly (under every new top). */
  stripes: [0.36, 0.3, 0.64, 0.6],
} as const satisfies Record<string, Box>

const P02 = {
  /** Her blue track trousers' gathered waistband at her right hip (image left), below a new tee's hem. */
  hipLeft: [0.26, 0.67, 0.32, 0.73],
} as const satisfies Record<string, Box>

const P06 = {
  /** Her raised left upper arm (image right) beside her head, against sunlit trees. */
  raisedUpperArm: [0.43, 0.18, 0.46, 0.2],
  /** The pale background just past her raised elbow (the forearm turns back to her head). */
  pastElbow: [0.515, 0.12, 0.53, 0.13],
} as const satisfies Record<string, Box>

const P03 = {
  /** Her fingertips pinching her blouse's hem between her hands, and her black skirt between and below them (no blouse). */
  fingers: [0.57, 0.6, 0.675, 0.635],
} as const satisfies Record<string, Box>

const P13 = {
  /** Her black slip dress over the hips, where a new bottom's front goes. */
  hips: [0.42, 0.42, 0.58, 0.5],
  /** The dress just above its hem (mid-calf): both legs and the gap between them. */
  aboveHem: [0.42, 0.68, 0.58, 0.71],
} as const satisfies Record<string, Box>

const P09 = {
  /** The shin of the leg she kicks up to the image right (bare skin). */
  kickedShin: [0.55, 0.655, 0.62, 0.7],
  /** The white sneaker on that foot. */
  kickedShoe: [0.68, 0.76, 0.93, 0.88],
  /** The black bag hanging from her hand beside the standing leg (the colour of her shorts). */
  bag: [0.06, 0.6, 0.19, 0.68],
} as const satisfies Record<string, Box>

const P15 = {
  /** The front of his beige shorts just below the waistband (the tee ends at the waistband). */
  shortsFront: [0.42, 0.44, 0.58, 0.5],
  /** Both legs of his beige shorts, above their hem (skin-hued cloth: Lab hue ~60°, chroma ~12). */
  shortsLegs: [0.41, 0.55, 0.59, 0.63],
  /** The back of his right hand (image left), hanging beside the shorts. */
  hand: [0.35, 0.475, 0.38, 0.505],
  /** His right shin (image left), bare below the shorts. */
  shin: [0.43, 0.7, 0.46, 0.76],
  /** His light grey tee's short sleeves, below where a new tee's sleeves end (image left, right). */
  sleeveLeft: [0.36, 0.27, 0.39, 0.31],
  sleeveRight: [0.62, 0.27, 0.66, 0.3],
  /** Across his grey sleeve's hem on his left upper arm (image right): sleeve above, bare arm below. */
  hemRight: [0.6, 0.285, 0.64, 0.315],
  /** His left shin (image right), bare below the shorts. */
  shinOther: [0.55, 0.7, 0.59, 0.76],
  /** A detail on his shorts’ waistband right of his right hand (image left), below his tee’s hem. */
  waistbandLeft: [0.39, 0.43, 0.41, 0.455],
} as const satisfies Record<string, Box>

/**
 * Most of a pale shin below beige shorts is grouped as clothing by the finder at most this share
 * (clothing.ts compares each pixel with the person's own skin prototypes and the garments'): before,
 * with the skin test a chroma disc around the face's tone, 0.62 and 0.67 of his shins; with it 0.25
 * and 0.28.
 */
const SHIN_AS_CLOTHING = 0.4

/**
 * The painted shins' texture (see the test): its spread (luma 0..255) at least SHIN_TEXTURE_SD (not
 * a flat column: the grain and the light), its correlation with the photo's at most
 * SHIN_TEXTURE_CORR (the jeans' weave, fades and seams are the old garment, not skin). Before the
 * fine shading (dd37b62) 0.85 and −0.001 on the left shin; with it 1.94 and 0.585 (left), 2.14 and
 * 0.571 (right): the denim's streaks showed on the legs. With the light taken over each main
 * colour's own albedo and nothing beside another colour (undress.ts fabricAlbedo, FABRIC_EDGE)
 * 0.97 and 0.164 (left), with every pixel within FABRIC_EDGE checked 0.86 and −0.012 (left), 1.07
 * and 0.008 (right): on denim only the broad light and the grain stay.
 */
const SHIN_TEXTURE_SD = 0.8
const SHIN_TEXTURE_CORR = 0.15
/**
 * The painted shin's share of the old trouser leg's silhouette (a shin is narrower than jeans).
 * Counted where less than 0.1 of the blend is background, so it moves with the edge's softness: at
 * the same leg radii 0.823 and 0.883 with the fill grid’s soft ramp (3.6 px an edge), 0.856 and
 * 0.910 with undress.ts EDGE_SHARPEN (1.2 px); jeans-wide legs give 1.
 */
const SHIN_WIDTH_SHARE = 0.95

/**
 * The skin painted where the old collar was against the neck just above it (Lab ΔE76 of the
 * medians): the neck counts as body skin for the tone and the shading fades out beside it
 * (undress.ts SEAM_R), so the painted skin continues the neck without a seam.
 */
const NECKLINE_SKIN_DE = 8
/**
 * person_02's white rib collar around her neck (head region below the chin) left white under a
 * black tee, at most this share: 0.48 on main at ac3a936, 0.13 with the head region giving way to
 * the new garment over whatever is neither lit skin (with skin's chroma), shaded skin nor hair.
 */
const NECK_RIB_LEFT = 0.25

/**
 * The old garment's print and seams do not show in the skin painted over it: the correlation of
 * the painted skin's band-pass luma (3 × 3 mean less 15 × 15 mean) with the photo's, at most these,
 * over the letters printed on person_11's sweatshirt and over his jeans' fly and pockets (the whole
 * old garment taken off, undress.ts takeOff with no zone). Before fabricAlbedo / FABRIC_EDGE
 * (light from each main colour's own albedo, nothing beside another colour): 0.42 and 0.61; with
 * them 0.25 and 0.07 with the edge test on four pixels FABRIC_EDGE away, 0.20 and 0.02 with every
 * pixel within FABRIC_EDGE checked (the letters' faint rest: the lilac "e", near enough the grey to
 * count as the fabric).
 */
const GHOST_CORR_LETTERS = 0.25
/**
 * The skin painted over person_02's whole tee (undress.ts takeOff, the top only): Lab ΔE76 of the
 * medians of the painted chest (25–60 % of the way from the shoulders to the hips) and belly
 * (75–105 %), and of the chest against her own visible body skin, at most these. Before the tone
 * far from visible skin was the person's on the torso too, the push-pull's coarse levels painted
 * the chest darker and the legs' tone began at the top of their capsules in a curved seam across
 * the belly: 13.6 and 12.5; after 2.3 and 1.1 (0.7 and 1.1 with FABRIC_EDGE's whole neighbourhood).
 */
const TORSO_SEAM_DE = 5
const TORSO_TONE_DE = 5
const GHOST_CORR_JEANS = 0.05

/**
 * The painted legs' outline (blended px per edge; 3.6 before EDGE_SHARPEN, 1.2 with it) and the
 * dress's luma just below the old top's hem over just above it (0.878 before shadeField, 0.994).
 */
const LEG_EDGE_PX = 2
/** Fine texture (luma sd) of background painted on a plain studio backdrop: 0.03 before, 0.18 with backgroundDetail. */
const BG_PLAIN_SD = 0.5
const DRESS_HEM_LUMA = 0.95

/**
 * The upper arm painted where an old sleeve was (acrossHem, just above and below the old hem): its
 * outer edge stands past the bare arm's below by at most ARM_OUTER_MAX × the bare arm's width, and
 * its luma spread across it is at least ARM_FLAT_MIN × the bare arm's. Before armShape measured the
 * bare upper arm and armColourAt painted its own light across it (radii from the forearm × 1.4 at
 * the shoulder plus a cap, the skin flat with a symmetric cylinder term): person_15's right arm
 * 0.49 and 0.18 (the old sleeve's slab, flat), person_12's 0.04 and 0.27 (0.11 with main's
 * shadeField at 0423972), dev person_02's 0.10 and 0.41; with them 0.07 and 0.80, −0.03 and 0.64,
 * 0.05 and 0.81.
 */
const ARM_OUTER_MAX = 0.2
const ARM_FLAT_MIN = 0.55
/** An arm painted under a long old sleeve is at least this round (luma's u² term over its mean, see roundness). */
const ARM_ROUND_MIN = -0.04

let engine: TryOnEngineWithDetails
const cache = new Map<string, RasterImage>()

beforeAll(async () => {
  engine = await openTryOnEngine({ modelsDir: MODELS, takeOffOldGarment: true })
}, ENGINE_TIMEOUT_MS)

afterAll(async () => {
  await engine?.close()
})

async function load(name: string, maxWorkSidePx?: number): Promise<RasterImage> {
  const hit = cache.get(name)
  if (hit) return hit
  const img = await decodeImage(join(MEDIA, `${name}.jpg`), {
    what: name,
    ...(maxWorkSidePx ? { maxWorkSidePx } : {}),
  })
  cache.set(name, img)
  return img
}

const results = new Map<string, Awaited<ReturnType<TryOnEngineWithDetails['tryOnDetailed']>>>()

/** One engine run per pair (the engine is deterministic; several tests read the same result). */
async function dress(person: string, garment: string, garmentMode: GarmentMode) {
  const p = await load(person)
  const key = `${person}|${garment}|${garmentMode}`
  let r = results.get(key)
  if (!r) {
    r = await engine.tryOnDetailed(p, await load(garment, 1024), {
      preprocessGarment: true,
      garmentMode,
      removeBackground: false,
    })
    results.set(key, r)
  }
  return { person: p, r }
}

function pixels(img: { width: number; height: number }, box: Box): number[] {
  const out: number[] = []
  const x0 = Math.round(box[0] * img.width)
  const x1 = Math.round(box[2] * img.width)
  const y0 = Math.round(box[1] * img.height)
  const y1 = Math.round(box[3] * img.height)
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) out.push(y * img.width + x)
  return out
}

const meanIn = (p: Plane, box: Box): number => {
  const px = pixels(p, box)
  return px.reduce((s, i) => s + p.data[i]!, 0) / px.length
}

function lab(rgb: Uint8Array, i: number): { L: number; a: number; b: number } {
  const lin = (c: number) => {
    const v = c / 255
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
  }
  const r = lin(rgb[i * 3]!)
  const g = lin(rgb[i * 3 + 1]!)
  const bl = lin(rgb[i * 3 + 2]!)
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)
  const fx = f((0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.9505)
  const fy = f(0.2126 * r + 0.7152 * g + 0.0722 * bl)
  const fz = f((0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.089)
  return { L: 116 * fy - 16, a: 500 * (fx - fy), b: 200 * (fy - fz) }
}

/** Share of the box's pixels that pass `test`. */
function share(
  img: { width: number; height: number; rgb: Uint8Array },
  box: Box,
  test: (c: { L: number; a: number; b: number }, i: number) => boolean,
): number {
  const px = pixels(img, box)
  return px.filter((i) => test(lab(img.rgb, i), i)).length / px.length
}

/** Skin of any tone: Lab hue 15°–85°, chroma ≥ 8. */
const skinHued = (c: { L: number; a: number; b: number }) => {
  const hue = (Math.atan2(c.b, c.a) * 180) / Math.PI
  return Math.hypot(c.a, c.b) >= 8 && hue >= 15 && hue <= 85 && c.L > 15
}
/** Denim blue: clearly blue chroma. */
const blue = (c: { L: number; b: number }) => c.b < -8
/** Within 25 (RGB, max channel) of a reference colour. */
const near = (rgb: Uint8Array, ref: readonly number[]) => (_: unknown, i: number) =>
  Math.max(...[0, 1, 2].map((k) => Math.abs(rgb[i * 3 + k]! - ref[k]!))) < 25

function median(img: { width: number; height: number; rgb: Uint8Array }, box: Box): number[] {
  const px = pixels(img, box)
  return [0, 1, 2].map(
    (k) => px.map((i) => img.rgb[i * 3 + k]!).sort((p, q) => p - q)[px.length >> 1]!,
  )
}

function mae(
  a: Uint8Array,
  b: Uint8Array,
  img: { width: number; height: number },
  box: Box,
): number {
  const px = pixels(img, box)
  let s = 0
  for (const i of px) for (let k = 0; k < 3; k++) s += Math.abs(a[i * 3 + k]! - b[i * 3 + k]!)
  return s / (3 * px.length)
}

describe('what the person wears (clothing.ts)', () => {
  it(
    'person_11: the sweatshirt is the top, the jeans the bottom, the shoes neither',
    async () => {
      const { r } = await dress('person_11', 'garment_upper_07', 'upper')
      const c = r.details.composite.clothing!
      expect(meanIn(c.upper, P11.chest)).toBeGreaterThan(0.9)
      expect(meanIn(c.upper, P11.sleeveLeft)).toBeGreaterThan(0.8)
      expect(meanIn(c.upper, P11.sleeveRight)).toBeGreaterThan(0.8)
      for (const b of [P11.thighLeft, P11.thighRight, P11.shinLeft, P11.shinRight]) {
        expect(meanIn(c.lower, b)).toBeGreaterThan(0.85)
        expect(meanIn(c.upper, b)).toBeLessThan(0.1)
      }
      expect(meanIn(c.lower, P11.chest)).toBeLessThan(0.05)
      expect(meanIn(c.upper, P11.shoes) + meanIn(c.lower, P11.shoes)).toBeLessThan(0.2)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the old garment does not show through (undress.ts)', () => {
  it(
    'person_11 × a short-sleeve tee: below its sleeves the grey sweatshirt sleeves mostly give way to arms',
    async () => {
      const { person, r } = await dress('person_11', 'garment_upper_01', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      expect(r.details.composite.takeOff?.skipped).toBeNull()
      const shares: number[][] = []
      for (const box of [P11.sleeveLeft, P11.sleeveRight]) {
        const sleeve = median(person, box)
        const before = share(person, box, near(person.rgb, sleeve))
        const after = share(out, box, near(r.rgb, sleeve))
        shares.push([before, after, share(out, box, skinHued)])
        expect(before).toBeGreaterThan(0.6)
        expect(after).toBeLessThan(0.5 * before)
      }
      console.log(
        'person_11 × upper_01 sleeve boxes [grey before, grey after, skin-hued after]:',
        shares.map((s) => s.map((v) => v.toFixed(2))),
      )
      // The jeans stay: a top replaces the top only.
      expect(mae(r.rgb, person.rgb, person, P11.shinLeft)).toBeLessThan(1)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × a short-sleeve tee: his sweatshirt’s cuffs at the wrists, below the hip joints, come off too (composite.ts TAKE_OFF_CUFF)',
    async () => {
      const { person, r } = await dress('person_11', 'garment_upper_01', 'upper')
      const a = r.details.person
      const W = person.width
      const grey = near(person.rgb, median(person, P11.sleeveLeft))
      const greyAfter = near(r.rgb, median(person, P11.sleeveLeft))
      const found = [LM.rightWrist, LM.leftWrist].map((l) => {
        // Within 0.12 × the shoulder width of the wrist: the cuff's grey, before and after.
        const p = a.points[l]!
        const R = 0.12 * a.shoulderWidth
        let n = 0
        let before = 0
        let after = 0
        for (let y = Math.floor(p.y - R); y <= p.y + R; y++) {
          for (let x = Math.floor(p.x - R); x <= p.x + R; x++) {
            if (Math.hypot(x - p.x, y - p.y) > R) continue
            const i = y * W + x
            n++
            if (grey(null, i)) before++
            if (greyAfter(null, i)) after++
          }
        }
        return [before / n, after / n] as const
      })
      console.log('person_11 × upper_01 cuffs [grey before, after] (right, left):', found)
      for (const [before, after] of found) {
        expect(before).toBeGreaterThan(0.2)
        expect(after).toBeLessThan(0.3 * before)
      }
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_15 × a navy tee with white trims: no line is left across the arm where his old sleeve ended (undress.ts HEM_BOOST)',
    async () => {
      const { person, r } = await dress('person_15', 'garment_upper_02', 'upper')
      // Mean |vertical luma step| across the old hem (its light rim and the shadow under it, half
      // painted by the work grid's ramp: a pale line with a dark one under it). The photo: 6.81;
      // before HEM_BOOST 4.98; with HEM_BOOST 2: 3.63.
      const step = (rgb: Uint8Array) => {
        const L = (i: number) =>
          0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
        const px = pixels(person, P15.hemRight)
        return px.reduce((s, i) => s + Math.abs(L(i + person.width) - L(i)), 0) / px.length
      }
      const before = step(person.rgb)
      const after = step(r.rgb)
      console.log(
        'person_15 × upper_02 hem step [photo, result]:',
        before.toFixed(2),
        after.toFixed(2),
      )
      expect(before).toBeGreaterThan(5)
      expect(after).toBeLessThan(4.2)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_15 × a navy tee with white trims: beside the new sleeve his shoulder is painted as skin, not as a sliver of backdrop (undress.ts SHOULDER_BODY)',
    async () => {
      const { r } = await dress('person_15', 'garment_upper_02', 'upper')
      const a = r.details.person
      const c = r.details.composite
      const W = a.width
      // Within SHOULDER_BODY × the shoulder width of his right shoulder joint (image left), in his
      // silhouette and not under the new tee: how much was painted as background.
      const s = a.points[LM.rightShoulder]!
      const R = SHOULDER_BODY * a.shoulderWidth
      let n = 0
      let bg = 0
      for (let y = Math.floor(s.y - R); y <= s.y + R; y++) {
        for (let x = Math.floor(s.x - R); x <= s.x + R; x++) {
          const i = y * W + x
          if (Math.hypot(x - s.x, y - s.y) > R || a.mask.data[i]! < 0.5) continue
          if (c.garment.data[i]! > 0.5) continue
          n++
          if (c.background!.data[i]! > 0.5) bg++
        }
      }
      console.log('person_15 × upper_02 right shoulder beside the sleeve [px, background]:', n, bg)
      // Before: all 163 such pixels background (the old sleeve's part beyond the shoulder cap, a
      // white sliver between the new sleeve and the arm); with SHOULDER_BODY 9.
      expect(n).toBeGreaterThan(50)
      expect(bg / n).toBeLessThan(0.2)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_15 × a navy tee with white trims: his light grey sleeves come off too (a trim is not the new garment’s colour)',
    async () => {
      const { person, r } = await dress('person_15', 'garment_upper_02', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      expect(r.details.composite.takeOff?.skipped).toBeNull()
      for (const box of [P15.sleeveLeft, P15.sleeveRight]) {
        const sleeve = median(person, box)
        const before = share(person, box, near(person.rgb, sleeve))
        const after = share(out, box, near(r.rgb, sleeve))
        expect(before).toBeGreaterThan(0.6)
        // Before TAKE_OFF_SAME_SHARE the grey was within TAKE_OFF_SAME of the trims' white: nothing
        // was taken off and both boxes stayed as they were.
        expect(after).toBeLessThan(0.2 * before)
      }
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × a top fitted only as a patch at the collar: nothing is taken off (not trusted)',
    async () => {
      // No garment of the set is fitted as a collar patch any more (0183709 fixed the landmarks
      // that made upper_07 one), so the patch is drawn here: a navy rectangle over the neck and
      // the top of the chest, handed to the compositor with the person's real analysis.
      const { person, r } = await dress('person_11', 'garment_upper_01', 'upper')
      const a = r.details.person
      const sl = a.points[LM.leftShoulder]!
      const sr = a.points[LM.rightShoulder]!
      const x0 = Math.round(Math.min(sl.x, sr.x) + 0.3 * Math.abs(sr.x - sl.x))
      const width = Math.round(0.4 * Math.abs(sr.x - sl.x))
      const y0 = Math.round(Math.min(sl.y, sr.y) - 0.1 * a.shoulderWidth)
      const height = Math.round(0.3 * a.shoulderWidth)
      const n = width * height
      const rgba = new Float32Array(4 * n)
      rgba.fill(0.1, 0, n)
      rgba.fill(0.12, n, 2 * n)
      rgba.fill(0.35, 2 * n, 3 * n)
      rgba.fill(1, 3 * n, 4 * n)
      const patch: WarpedPart = {
        part: { name: 'torso', mask: a.mask, targets: [], sources: [], layer: 'body' },
        x0,
        y0,
        width,
        height,
        rgba,
      }
      const c = compositeGarment(
        { width: person.width, height: person.height, data: person.rgb },
        a,
        [patch],
        { removeBackground: false, category: 'upper' },
      )
      const t = c.takeOff!
      expect(t.cover).toBeLessThan(TAKE_OFF_MIN_COVER)
      expect(t.skipped).toMatch(/covers \d+ % of the body part it replaces/)
      for (const box of [P11.sleeveLeft, P11.sleeveRight, P11.thighLeft]) {
        expect(mae(c.rgb, person.rgb, person, box)).toBeLessThan(1)
      }
      // … while the real tee, which covers the torso, is trusted and takes his grey sleeves off.
      expect(r.details.composite.takeOff!.skipped).toBeNull()
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × a mini dress: no denim below the hem, legs instead; the shoes untouched',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      for (const box of [P11.shinLeft, P11.shinRight]) {
        expect(share(person, box, blue)).toBeGreaterThan(0.8)
        expect(share(out, box, blue)).toBeLessThan(0.05)
        expect(share(out, box, skinHued)).toBeGreaterThan(0.5)
      }
      expect(mae(r.rgb, person.rgb, person, P11.shoes)).toBeLessThan(4)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('another old top comes off whole (composite.ts oldTopLook)', () => {
  it(
    'person_12 × a navy tee over his striped polo: the polo below the tee comes off, stripes of both colours',
    async () => {
      const { person, r } = await dress('person_12', 'garment_upper_01', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      const t = r.details.composite.takeOff!
      expect(t.skipped).toBeNull()
      expect(t.same).not.toBeNull()
      expect(t.same!).toBeLessThan(TAKE_OFF_OTHER_SAME)
      const white = (c: { L: number; a: number; b: number }) =>
        c.L > 75 && Math.hypot(c.a, c.b) < 10
      const navy = (c: { L: number; a: number; b: number }) => c.L < 30 && c.b < -3
      // The new tee (navy too) covers part of the box since tops are sized from the body: what it
      // does not cover is measured.
      const garment = r.details.composite.garment.data
      const bare =
        (test: (c: { L: number; a: number; b: number }) => boolean) =>
        (c: { L: number; a: number; b: number }, i: number) =>
          garment[i]! <= 0.5 && test(c)
      const before = [share(person, P12.poloBelly, white), share(person, P12.poloBelly, navy)]
      const after = [share(out, P12.poloBelly, bare(white)), share(out, P12.poloBelly, bare(navy))]
      console.log(
        'person_12 × upper_01 polo below the tee [white, navy] before → after:',
        before,
        after,
      )
      // Before (only the sleeves came off, and only colours unlike the tee's) it stayed as it was.
      expect(before[0]).toBeGreaterThan(0.3)
      expect(before[1]).toBeGreaterThan(0.2)
      expect(after[0]).toBeLessThan(0.05)
      expect(after[1]).toBeLessThan(0.05)
      expect(share(out, P12.poloBelly, (c, i) => skinHued(c) || garment[i]! > 0.5)).toBeGreaterThan(
        0.8,
      )
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_15 × a grey tank over his grey tee: the tank has no sleeves, so his grey sleeves come off',
    async () => {
      const { person, r } = await dress('person_15', 'garment_upper_07', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      expect(r.details.composite.takeOff?.skipped).toBeNull()
      expect(r.details.parts.some((p) => p.layer === 'sleeve')).toBe(false)
      const shares: number[][] = []
      for (const box of [P15.sleeveLeft, P15.sleeveRight]) {
        const sleeve = median(person, box)
        const before = share(person, box, near(person.rgb, sleeve))
        const after = share(out, box, near(r.rgb, sleeve))
        shares.push([before, after])
        expect(before).toBeGreaterThan(0.6)
        // Before, grey near the tank's own grey stayed on the arms as if the tank had sleeves.
        expect(after).toBeLessThan(0.2 * before)
      }
      console.log('person_15 × upper_07 sleeve boxes [grey before, after]:', shares)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_01 × her own tee: the old top looks like the new one, so only its sleeves may come off',
    async () => {
      const { r } = await dress('person_01', 'garment_upper_01', 'upper')
      const t = r.details.composite.takeOff!
      expect(t.skipped).toBeNull()
      expect(t.same).not.toBeNull()
      expect(t.same!).toBeGreaterThanOrEqual(TAKE_OFF_OTHER_SAME)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('a skin-hued old garment (undress.ts, composite.ts takeOffZone)', () => {
  it(
    "person_15 × a mini dress: his beige shorts are found as the bottom and taken off (his own skin's colours tell them apart, not a hue gate)",
    async () => {
      const { person, r } = await dress('person_15', 'garment_full_01', 'full')
      const c = r.details.composite
      const shorts = median(person, P15.shortsLegs)
      const hue = lab(Uint8Array.from(shorts), 0)
      const found = meanIn(c.clothing!.lower, P15.shortsLegs)
      const removed = meanIn(c.removed!, P15.shortsLegs)
      console.log(
        'person_15 × full_01 shorts [Lab of the shorts, found as the bottom, taken off]:',
        [hue.L, hue.a, hue.b].map((v) => v.toFixed(1)),
        found.toFixed(3),
        removed.toFixed(3),
      )
      // The shorts are of skin's hue (the old gate kept every such pixel: 0 taken off) …
      expect(skinHued(hue)).toBe(true)
      // … found as the bottom and taken off, now.
      expect(found).toBeGreaterThan(0.9)
      expect(removed).toBeGreaterThan(0.8)
      // His hand beside the shorts (bare skin of nearly the shorts' colour) is not taken off.
      const hand = meanIn(c.removed!, P15.hand)
      console.log(
        'person_15 × full_01 [hand taken off, shin taken off]:',
        hand,
        meanIn(c.removed!, P15.shin),
      )
      expect(hand).toBeLessThan(0.05)
    },
    CASE_TIMEOUT_MS,
  )
  it(
    "person_15 × a mini dress: his pale shins are not grouped with his beige shorts (clothing.ts, the person's own skin prototypes)",
    async () => {
      const { r } = await dress('person_15', 'garment_full_01', 'full')
      const c = r.details.composite.clothing!
      const asCloth = (box: Box) => meanIn(c.lower, box) + meanIn(c.upper, box)
      const shins = [asCloth(P15.shin), asCloth(P15.shinOther)]
      const shorts = meanIn(c.lower, P15.shortsLegs)
      console.log(
        'person_15 shins grouped as clothing, shorts found as the bottom:',
        shins.map((v) => v.toFixed(3)),
        shorts.toFixed(3),
      )
      for (const v of shins) expect(v).toBeLessThan(SHIN_AS_CLOTHING)
      expect(shorts).toBeGreaterThan(0.9)
      expect(c.skinProtos.length).toBeGreaterThan(0)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('no ghost of the old garment in the skin painted (undress.ts fabricAlbedo)', () => {
  it(
    'person_11, sweatshirt and jeans taken off whole: his print’s letters and the jeans’ fly and pockets leave no trace in the painted skin',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const img = { width: person.width, height: person.height, data: person.rgb }
      const u = takeOff(img, r.details.person, r.details.composite.clothing!, {
        upper: true,
        lower: true,
      })
      const W = person.width
      const luma = (rgb: Uint8Array, i: number) =>
        0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
      const boxMean = (rgb: Uint8Array, i: number, k: number) => {
        let sum = 0
        for (let dy = -k; dy <= k; dy++) {
          for (let dx = -k; dx <= k; dx++) sum += luma(rgb, i + dy * W + dx)
        }
        return sum / (2 * k + 1) ** 2
      }
      const band = (rgb: Uint8Array, i: number) => boxMean(rgb, i, 1) - boxMean(rgb, i, 7)
      const corr = (box: Box) => {
        const px = pixels(person, box).filter(
          (i) => u.removed.data[i]! > 0.9 && u.background.data[i]! < 0.1,
        )
        expect(px.length).toBeGreaterThan(0.5 * pixels(person, box).length)
        const p = px.map((i) => band(u.rgb, i))
        const o = px.map((i) => band(person.rgb, i))
        const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length
        const [mp, mo] = [mean(p), mean(o)]
        let cov = 0
        let vp = 0
        let vo = 0
        for (let k = 0; k < px.length; k++) {
          cov += (p[k]! - mp) * (o[k]! - mo)
          vp += (p[k]! - mp) ** 2
          vo += (o[k]! - mo) ** 2
        }
        return cov / Math.sqrt(vp * vo)
      }
      const [letters, jeans] = [corr(P11.letters), corr(P11.jeansFront)]
      console.log(
        'person_11 whole take-off, band-pass correlation painted vs photo [letters, jeans front]:',
        [letters, jeans].map((v) => v.toFixed(3)),
      )
      expect(letters).toBeLessThan(GHOST_CORR_LETTERS)
      expect(jeans).toBeLessThan(GHOST_CORR_JEANS)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the painted torso continues the person’s own skin (undress.ts skin colour)', () => {
  it(
    'person_02, her tee taken off whole: the painted belly has the tone of the painted chest and of her own skin, no seam where the legs begin',
    async () => {
      const { person, r } = await dress('person_02', 'garment_upper_07', 'upper')
      const a = r.details.person
      const c = r.details.composite.clothing!
      const img = { width: person.width, height: person.height, data: person.rgb }
      const u = takeOff(img, a, c, { upper: true, lower: false })
      const W = person.width
      const sy = (a.points[LM.leftShoulder]!.y + a.points[LM.rightShoulder]!.y) / 2
      const hy = (a.points[LM.leftHip]!.y + a.points[LM.rightHip]!.y) / 2
      const L = hy - sy
      const xs = [a.points[LM.leftHip]!.x, a.points[LM.rightHip]!.x].sort((p, q) => p - q)
      /** Median Lab of the painted skin between y0 and y1 (× the torso length from the shoulders). */
      const band = (f0: number, f1: number) => {
        const px: number[] = []
        for (let y = Math.round(sy + f0 * L); y < Math.round(sy + f1 * L); y++) {
          for (let x = Math.round(xs[0]!); x < Math.round(xs[1]!); x++) {
            const i = y * W + x
            if (u.removed.data[i]! > 0.9 && u.background.data[i]! < 0.1) px.push(i)
          }
        }
        expect(px.length).toBeGreaterThan(1000)
        const m = [0, 1, 2].map(
          (k) => px.map((i) => u.rgb[i * 3 + k]!).sort((p, q) => p - q)[px.length >> 1]!,
        )
        return lab(Uint8Array.from(m), 0)
      }
      const own: number[] = []
      for (let i = 0; i < W * person.height; i++) {
        if (
          c.skin.data[i]! > 0.5 &&
          a.mask.data[i]! > 0.5 &&
          a.head.data[i]! < 0.5 &&
          u.removed.data[i]! < 0.05
        ) {
          own.push(i)
        }
      }
      const ownLab = lab(
        Uint8Array.from(
          [0, 1, 2].map(
            (k) => own.map((i) => person.rgb[i * 3 + k]!).sort((p, q) => p - q)[own.length >> 1]!,
          ),
        ),
        0,
      )
      const dE = (p: { L: number; a: number; b: number }, q: { L: number; a: number; b: number }) =>
        Math.hypot(p.L - q.L, p.a - q.a, p.b - q.b)
      const chest = band(0.25, 0.6)
      const belly = band(0.75, 1.05)
      const figures = [dE(chest, belly), dE(chest, ownLab)]
      console.log(
        'person_02 whole tee taken off, Lab ΔE76 [painted chest vs belly, chest vs her own skin]:',
        figures.map((v) => v.toFixed(1)),
      )
      expect(figures[0]).toBeLessThan(TORSO_SEAM_DE)
      expect(figures[1]).toBeLessThan(TORSO_TONE_DE)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('above a lower neckline (composite.ts takeOffZone, undress.ts)', () => {
  it(
    'person_11 × a one-shoulder dress: his red collar and the grey sweatshirt above the neckline give way to skin of his neck’s tone, with grain',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      const red = (c: { L: number; a: number; b: number }) =>
        c.a > 30 && Math.abs((Math.atan2(c.b, c.a) * 180) / Math.PI) < 45
      const collar = [share(person, P11.collar, red), share(out, P11.collar, red)]
      const chest = [share(person, P11.chestTop, skinHued), share(out, P11.chestTop, skinHued)]
      // No seam: the skin painted where the collar was against his neck just above it (Lab ΔE76
      // of the medians).
      const neck = median(person, P11.neck)
      const painted = median(out, P11.collar)
      const at = (c: number[]) => lab(Uint8Array.from(c), 0)
      const [n, q] = [at(neck), at(painted)]
      const dE = Math.hypot(n.L - q.L, n.a - q.a, n.b - q.b)
      // Grain: the robust spread (1.4826 × median |luma − its 5 × 5 mean|) of the painted chest
      // against his neck's skin.
      const W = person.width
      const luma = (rgb: Uint8Array, i: number) =>
        0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
      const spread = (rgb: Uint8Array, box: Box) => {
        const v = pixels(person, box).map((i) => {
          let sum = 0
          for (let dy = -2; dy <= 2; dy++) {
            for (let dx = -2; dx <= 2; dx++) sum += luma(rgb, i + dy * W + dx)
          }
          return Math.abs(luma(rgb, i) - sum / 25)
        })
        return 1.4826 * v.sort((p, q) => p - q)[v.length >> 1]!
      }
      const grain = [spread(person.rgb, P11.neck), spread(r.rgb, P11.chestTop)]
      console.log(
        'person_11 × full_01 [red collar before, after], [chest skin-hued before, after], ΔE to the neck, [grain neck, painted]:',
        collar.map((v) => v.toFixed(2)),
        chest.map((v) => v.toFixed(2)),
        dE.toFixed(1),
        grain.map((v) => v.toFixed(2)),
      )
      expect(collar[0]).toBeGreaterThan(0.3)
      expect(collar[1]).toBeLessThan(0.05)
      expect(chest[0]).toBeLessThan(0.1)
      expect(chest[1]).toBeGreaterThan(0.9)
      expect(dE).toBeLessThan(NECKLINE_SKIN_DE)
      expect(grain[1]).toBeGreaterThan(0.5 * grain[0]!)
      expect(grain[1]).toBeLessThan(2 * grain[0]!)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('an old collar under the new garment’s collar (composite.ts takeOffZone `under`, headInFront)', () => {
  it(
    'person_11 × a grey tank whose back neckline stands above his red collar: the collar is covered, the neck above stays skin',
    async () => {
      const { person, r } = await dress('person_11', 'garment_upper_07', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      const red = (c: { L: number; a: number; b: number }) =>
        c.a > 30 && Math.abs((Math.atan2(c.b, c.a) * 180) / Math.PI) < 45
      const collar = [share(person, P11.collar, red), share(out, P11.collar, red)]
      const neck = [share(person, P11.neck, skinHued), share(out, P11.neck, skinHued)]
      console.log(
        'person_11 × upper_07 [red collar before, after], [neck skin-hued before, after]:',
        collar.map((v) => v.toFixed(2)),
        neck.map((v) => v.toFixed(2)),
      )
      // 0.59 → 0.57 before this change (the head region kept the collar in front of the tank's back
      // neckline), 0.57 → 0.00 with it; the neck above: 1.00 → 1.00.
      expect(collar[0]).toBeGreaterThan(0.3)
      expect(collar[1]).toBeLessThan(0.05)
      expect(neck[1]).toBeGreaterThan(0.95)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('legs painted below a shorter garment (undress.ts)', () => {
  it(
    'person_11 × a mini dress over his jeans: the painted shins are leg-shaped, textured like skin (grain and light), not with the jeans’ streaks',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const c = r.details.composite
      const luma = (rgb: Uint8Array, i: number) =>
        0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
      for (const box of [P11.shinLeft, P11.shinRight]) {
        // The skin painted there (not background, not the new garment).
        const px = pixels(person, box).filter(
          (i) =>
            c.removed!.data[i]! > 0.9 && c.background!.data[i]! < 0.1 && c.garment.data[i]! < 0.1,
        )
        // Leg-shaped: a shin is narrower than the straight jeans leg it was in (the person mask).
        const cloth = pixels(person, box).filter((i) => r.details.person.mask.data[i]! > 0.5).length
        const narrower = px.length / cloth
        // Texture: the luminance's 3 × 3 mean less its 9 × 9 mean (the weave finer than that, the
        // cylinder shading across the leg and the broad light drop out; what is left is relief).
        const W = person.width
        const boxMean = (rgb: Uint8Array, i: number, r: number) => {
          let sum = 0
          for (let dy = -r; dy <= r; dy++) {
            for (let dx = -r; dx <= r; dx++) sum += luma(rgb, i + dy * W + dx)
          }
          return sum / (2 * r + 1) ** 2
        }
        const fine = (rgb: Uint8Array, i: number) => boxMean(rgb, i, 1) - boxMean(rgb, i, 4)
        // Inside the painted leg only (the leg's own outline against the background is not texture).
        const isPainted = new Set(px)
        const inner = px.filter((i) => {
          for (let dy = -4; dy <= 4; dy++) {
            for (let dx = -4; dx <= 4; dx++) if (!isPainted.has(i + dy * W + dx)) return false
          }
          return true
        })
        const painted = inner.map((i) => fine(r.rgb, i))
        const orig = inner.map((i) => fine(person.rgb, i))
        const mean = (v: number[]) => v.reduce((p, q) => p + q, 0) / v.length
        const mp = mean(painted)
        const mo = mean(orig)
        let cov = 0
        let vp = 0
        let vo = 0
        for (let k = 0; k < inner.length; k++) {
          cov += (painted[k]! - mp) * (orig[k]! - mo)
          vp += (painted[k]! - mp) ** 2
          vo += (orig[k]! - mo) ** 2
        }
        const sd = Math.sqrt(vp / inner.length)
        const corr = cov / Math.sqrt(vp * vo)
        console.log(
          `person_11 × full_01 shin ${box.join(',')} [inner painted px, painted / silhouette, texture sd, its corr with the photo's]:`,
          inner.length,
          narrower.toFixed(3),
          sd.toFixed(2),
          corr.toFixed(3),
        )
        expect(inner.length).toBeGreaterThan(0.2 * pixels(person, box).length)
        expect(narrower).toBeLessThan(SHIN_WIDTH_SHARE)
        expect(sd).toBeGreaterThan(SHIN_TEXTURE_SD)
        expect(corr).toBeLessThan(SHIN_TEXTURE_CORR)
      }
    },
    CASE_TIMEOUT_MS,
  )
})

describe('under a new dress or bottom (composite.ts, undress.ts)', () => {
  it(
    'person_11 × a mini dress: the painted legs’ outline against the background is as crisp as a photo’s (undress.ts EDGE_SHARPEN)',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const c = r.details.composite
      const W = person.width
      // Per row across both shins: the pixels blended between painted skin and painted background
      // (four edges a row). The fill grid's ramp upsampled was 3.6 px an edge (2.7 photo px a cell).
      let ramp = 0
      let rows = 0
      const [x0, y0, x1, y1] = [0.3, 0.72, 0.7, 0.85].map((f, k) =>
        Math.round(f * (k % 2 === 0 ? W : person.height)),
      ) as [number, number, number, number]
      for (let y = y0; y < y1; y++, rows++) {
        for (let x = x0; x < x1; x++) {
          const i = y * W + x
          if (c.removed!.data[i]! < 0.9) continue
          const b = c.background!.data[i]! / c.removed!.data[i]!
          if (b > 0.1 && b < 0.9) ramp++
        }
      }
      const perEdge = ramp / (4 * rows)
      console.log('person_11 × full_01 [blended px per leg edge]:', perEdge.toFixed(2))
      expect(perEdge).toBeGreaterThan(0.5)
      expect(perEdge).toBeLessThan(LEG_EDGE_PX)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × a mini dress: the dress is as light below his old sweatshirt’s hem as above it (composite.ts shadeField: the dark jeans do not show through)',
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_01', 'full')
      const c = r.details.composite
      const a = r.details.person
      const W = person.width
      const hem = Math.round(c.clothing!.topHemY!)
      const d = Math.round(0.1 * a.shoulderWidth)
      // Mean luma of the opaque dress (not the arms or hands in front of it) in a band of rows.
      const band = (ya: number, yb: number) => {
        let sum = 0
        let n = 0
        for (let y = ya; y < yb; y++) {
          for (let x = 0; x < W; x++) {
            const i = y * W + x
            if (c.garment.data[i]! < 0.95 || a.arms.data[i]! > 0.05 || a.hands.data[i]! > 0.05) {
              continue
            }
            sum += 0.299 * r.rgb[i * 3]! + 0.587 * r.rgb[i * 3 + 1]! + 0.114 * r.rgb[i * 3 + 2]!
            n++
          }
        }
        return sum / n
      }
      const ratio = band(hem + 4, hem + 4 + d) / band(hem - 4 - d, hem - 4)
      console.log(
        'person_11 × full_01 [dress luma below / above the old top’s hem]:',
        ratio.toFixed(3),
      )
      expect(ratio).toBeGreaterThan(DRESS_HEM_LUMA)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'background painted where old trousers were has the backdrop’s own fine texture: grass on person_06, none on person_11’s white studio (undress.ts backgroundDetail)',
    async () => {
      for (const [name, garment, plain] of [
        ['person_06', 'garment_full_01', false],
        ['person_11', 'garment_full_01', true],
      ] as const) {
        const { person, r } = await dress(name, garment, 'full')
        const c = r.details.composite
        const W = person.width
        const H = person.height
        const luma = (rgb: Uint8Array, i: number) =>
          0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
        // A pixel less its 5 × 5 mean: the fine texture (blades of grass, leaves), not the light.
        const fine = (rgb: Uint8Array, i: number) => {
          let sum = 0
          for (let dy = -2; dy <= 2; dy++) {
            for (let dx = -2; dx <= 2; dx++) sum += luma(rgb, i + dy * W + dx)
          }
          return luma(rgb, i) - sum / 25
        }
        const sd = (v: number[]) => {
          const m = v.reduce((p, q) => p + q, 0) / v.length
          return Math.sqrt(v.reduce((p, q) => p + (q - m) ** 2, 0) / v.length)
        }
        // Painted background with painted background all round (not the edge of a leg or the
        // dress), and the real backdrop in the same rows.
        const painted: number[] = []
        const real: number[] = []
        let ya = H
        let yb = 0
        const bg = (j: number) => c.background!.data[j]! > 0.95 && c.garment.data[j]! < 0.05
        for (let y = 3; y < H - 3; y++) {
          for (let x = 3; x < W - 3; x++) {
            const i = y * W + x
            let all = true
            for (let dy = -3; dy <= 3 && all; dy++) {
              for (let dx = -3; dx <= 3 && all; dx++) all = bg(i + dy * W + dx)
            }
            if (!all) continue
            painted.push(fine(r.rgb, i))
            ya = Math.min(ya, y)
            yb = Math.max(yb, y)
          }
        }
        for (let y = ya; y <= yb; y++) {
          for (let x = 3; x < W - 3; x++) {
            const i = y * W + x
            if (r.details.person.mask.data[i]! < 0.02 && c.removed!.data[i]! < 0.01) {
              real.push(fine(person.rgb, i))
            }
          }
        }
        const [p, q] = [sd(painted), sd(real)]
        console.log(
          `${name} × ${garment} [painted background px, its fine sd, the backdrop's]:`,
          painted.length,
          p.toFixed(2),
          q.toFixed(2),
        )
        expect(painted.length).toBeGreaterThan(5000)
        if (plain) {
          expect(p).toBeLessThan(BG_PLAIN_SD)
        } else {
          // Was 0.20 (the push-pull fill alone: a smooth green smear), the grass 3.9.
          expect(p).toBeGreaterThan(0.6 * q)
          expect(p).toBeLessThan(1.6 * q)
        }
      }
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_06 × navy shorts over navy leggings: below the shorts’ hem the leggings come off (composite.ts takeOffZone)',
    async () => {
      const { person, r } = await dress('person_06', 'garment_lower_03', 'lower')
      const c = r.details.composite
      const W = person.width
      const depth = Math.round(0.1 * r.details.person.shoulderWidth)
      // In each column the new garment reaches, the old bottom in the band just below its lowest row.
      let band = 0
      let kept = 0
      for (let x = 0; x < W; x++) {
        let last = -1
        for (let y = 0; y < person.height; y++) if (c.garment.data[y * W + x]! > 0.5) last = y
        if (last < 0) continue
        for (let y = last + 3; y < Math.min(person.height, last + 3 + depth); y++) {
          const i = y * W + x
          if (c.clothing!.lower.data[i]! <= 0.5) continue
          band++
          const diff = Math.max(
            ...[0, 1, 2].map((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!)),
          )
          if (diff < 12) kept++
        }
      }
      console.log(
        'person_06 × lower_03 [old bottom px below the hem, share unchanged]:',
        band,
        (kept / band).toFixed(3),
      )
      expect(band).toBeGreaterThan(500)
      // Was 0.38: the leggings, of the shorts' navy, stayed within TAKE_OFF_NEAR of them.
      expect(kept / band).toBeLessThan(0.2)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('hair in front of a new top', () => {
  it(
    'person_01 × a black tee: the hair over her shoulder keeps its pixels',
    async () => {
      const { person, r } = await dress('person_01', 'garment_upper_05', 'upper')
      // The new top does reach that box (otherwise the test proves nothing) …
      const reach = r.details.warpedCoverage.some((w) => {
        const cx = Math.round(((P01.hair[0] + P01.hair[2]) / 2) * person.width) - w.x0
        const cy = Math.round(((P01.hair[1] + P01.hair[3]) / 2) * person.height) - w.y0
        return (
          cx >= 0 && cy >= 0 && cx < w.width && cy < w.height && w.alpha[cy * w.width + cx]! > 0.5
        )
      })
      expect(reach).toBe(true)
      // … and the hair pixels (warm dark brown; her tee is navy) keep their values in front of it.
      const hairPx = pixels(person, P01.hair).filter((i) => {
        const c = lab(person.rgb, i)
        return c.L < 40 && c.b > 4
      })
      expect(hairPx.length).toBeGreaterThan(0.3 * pixels(person, P01.hair).length)
      const same = (i: number) =>
        [0, 1, 2].every((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!) < 12)
      const kept = hairPx.filter(same)
      // Was 0.405 kept at 84d78dc (a regression from 0.8 once the fit followed the torso). Now the
      // hair mask is hard-edged (a soft edge let the top through on thin strands) and strands finer
      // than the work grid are looked for within HAIR_REACH of the hair found there: 0.64 found, all
      // of it kept, 0.74 kept overall. Floors just under; the rest is dark hair over her navy tee
      // that is nearer the tee's colour than the hair's.
      const front = r.details.composite.clothing!.hairFront
      const found = hairPx.filter((i) => front.data[i]! > 0.5)
      console.log(
        'hair in front [found, kept where found, kept]:',
        [
          found.length / hairPx.length,
          found.filter(same).length / found.length,
          kept.length / hairPx.length,
        ].map((v) => v.toFixed(3)),
      )
      expect(found.length / hairPx.length).toBeGreaterThan(0.62)
      expect(found.filter(same).length / found.length).toBeGreaterThan(0.95)
      // Until 0183709 this test dressed her in the tank upper_07, which leaves more of the shoulder
      // bare (0.74 kept); with its landmarks fixed the tank no longer reaches this box, so a tee
      // does: what is found is kept (0.64 of the hair, nearly all of the rest is over the tee).
      expect(kept.length / hairPx.length).toBeGreaterThan(0.62)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('what stays in front of the new garment', () => {
  it(
    'person_01 × her own tee: nothing of the new garment is drawn above the neck line but over the old top (the hair outline and the background beside the neck stay)',
    async () => {
      const { person, r } = await dress('person_01', 'garment_upper_01', 'upper')
      const a = r.details.person
      const c = r.details.composite
      const neck = neckLine(a.points, a.shoulderWidth)
      let above = 0
      let changed = 0
      let garmentThere = 0
      for (let y = 0; y < person.height; y++) {
        for (let x = 0; x < person.width; x++) {
          const i = y * person.width + x
          if (neck.above(x, y) < 1 || c.envelope.data[i]! < 0.5) continue
          if (c.clothing!.upper.data[i]! > 0.02 || (c.removed?.data[i] ?? 0) > 0) continue
          above++
          if (c.garment.data[i]! > 0.01) garmentThere++
          if ([0, 1, 2].some((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!) > 2)) {
            changed++
          }
        }
      }
      console.log('person_01 × upper_01 above the neck line [pixels, changed, garment]:', [
        above,
        changed,
        garmentThere,
      ])
      // The envelope reaches there (a hair outline the garment could cover) …
      expect(above).toBeGreaterThan(1000)
      // … but nothing changed (a few pixels at the soft edge of the old top's mask; with the tee sized
      // from the body, 24 changed and 36 of the garment's of 17 553).
      expect(changed / above).toBeLessThan(0.004)
      expect(garmentThere / above).toBeLessThan(0.004)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the top of the shoulders beside the neck', () => {
  it(
    'person_12 (torso from the mouth down, polo) × a tee: the old polo above the neck line outside the neck column is covered by the new tee',
    async () => {
      const name = 'person_12'
      const { r } = await dress(name, 'garment_upper_01', 'upper')
      const a = r.details.person
      const c = r.details.composite
      const sm = mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!)
      const mouth = mid(a.points[LM.mouthLeft]!, a.points[LM.mouthRight]!)
      const out = (NECK_COLUMN + NECK_COLUMN_FADE) * a.shoulderWidth
      let n = 0
      let covered = 0
      for (let y = Math.max(0, Math.ceil(mouth.y)); y < a.height; y++) {
        const axisX = mouth.x + ((sm.x - mouth.x) * (y - mouth.y)) / (sm.y - mouth.y || 1)
        for (let x = 0; x < a.width; x++) {
          const i = y * a.width + x
          if (a.head.data[i]! < 0.99 || Math.abs(x - axisX) <= out) continue
          if (c.clothing!.upper.data[i]! < 0.99) continue
          n++
          if (c.garment.data[i]! > 0.9) covered++
        }
      }
      console.log(
        `${name} old top in the head region beside the neck [pixels, covered]:`,
        n,
        covered,
      )
      // 3762 such pixels, 3556 covered; none before (the head region kept them in front, so the
      // old polo's shoulders showed above the new tee).
      expect(n).toBeGreaterThan(1000)
      expect(covered / n).toBeGreaterThan(0.8)
    },
    CASE_TIMEOUT_MS,
  )
})

/**
 * The head region below the chin (a.head ≥ 0.99, from 0.1 × the shoulder width below the mouth)
 * as pixel indices, within `half` × the shoulder width of the neck's axis (mouth → shoulders'
 * middle).
 */
function belowChin(
  a: {
    width: number
    height: number
    points: readonly { x: number; y: number }[]
    shoulderWidth: number
    head: Plane
  },
  half: number,
): number[] {
  const sm = mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!)
  const mouth = mid(a.points[LM.mouthLeft]!, a.points[LM.mouthRight]!)
  const out: number[] = []
  for (let y = Math.max(0, Math.ceil(mouth.y + 0.1 * a.shoulderWidth)); y < a.height; y++) {
    const axisX = mouth.x + ((sm.x - mouth.x) * (y - mouth.y)) / (sm.y - mouth.y || 1)
    for (let x = 0; x < a.width; x++) {
      const i = y * a.width + x
      if (a.head.data[i]! >= 0.99 && Math.abs(x - axisX) <= half * a.shoulderWidth) out.push(i)
    }
  }
  return out
}

describe('the new neckline at the neck (composite.ts takeOffZone `under`, headInFront; issue 10)', () => {
  it(
    'person_02 × a black tee: her old white rib around the neck is covered, her neck stays as it was',
    async () => {
      const { person, r } = await dress('person_02', 'garment_upper_01', 'upper')
      const region = belowChin(r.details.person, 0.45)
      const white = (c: { L: number; a: number; b: number }) =>
        c.L > 75 && Math.hypot(c.a, c.b) < 12
      const rib = region.filter((i) => white(lab(person.rgb, i)))
      const left = rib.filter((i) => white(lab(r.rgb, i))).length / rib.length
      const skin = region.filter((i) => skinHued(lab(person.rgb, i)))
      const same = (i: number) =>
        [0, 1, 2].every((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!) < 3)
      const kept = skin.filter(same).length / skin.length
      console.log('person_02 × upper_01 below the chin [rib px, rib left, neck px, neck kept]:', [
        rib.length,
        left.toFixed(3),
        skin.length,
        kept.toFixed(3),
      ])
      // 0.48 of the rib left on main at ac3a936 (the head region kept it in front at the sides of
      // her neck, where the clothing finder did not call it top or it matched her light skin at a
      // low L* weight), 0.13 now; her neck 0.996 → 0.985 unchanged (the new collar's soft edge).
      expect(rib.length).toBeGreaterThan(300)
      expect(left).toBeLessThan(NECK_RIB_LEFT)
      expect(kept).toBeGreaterThan(0.95)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_12 and person_11 × a tee: the old top in the neck column of the head region is under the new tee, not cut flat at the neck line',
    async () => {
      for (const [name, floor] of [
        ['person_12', 0.8],
        ['person_11', 0.5],
      ] as const) {
        const { person, r } = await dress(name, 'garment_upper_01', 'upper')
        const c = r.details.composite
        const region = belowChin(r.details.person, NECK_COLUMN)
        const top = region.filter(
          (i) => c.clothing!.upper.data[i]! >= 0.99 && !skinHued(lab(person.rgb, i)),
        )
        const covered = top.filter((i) => c.garment.data[i]! > 0.9).length / top.length
        console.log(`${name} × upper_01 old top in the neck column [px, covered]:`, [
          top.length,
          covered.toFixed(3),
        ])
        // main at ac3a936: person_12 0.141, person_11 0.000 (the head region stayed in front down
        // to the neck line and the neck ellipse below it); now 0.993 and 0.648.
        expect(top.length).toBeGreaterThan(500)
        expect(covered).toBeGreaterThan(floor)
      }
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_01 × a grey tank: the hair beside her chin and over her shoulders is not repainted (head MAE), the hair in front is one piece',
    async () => {
      const { person, r } = await dress('person_01', 'garment_upper_07', 'upper')
      const a = r.details.person
      let s = 0
      let n = 0
      for (let i = 0; i < a.head.data.length; i++) {
        if (a.head.data[i]! < 0.99) continue
        for (let k = 0; k < 3; k++) s += Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!)
        n += 3
      }
      // Hair in front: warm dark pixels below the neck line, in the upper half of the photo, where
      // the tank is drawn; the share that keeps its pixels.
      const neck = neckLine(a.points, a.shoulderWidth)
      const wa = new Float32Array(a.width * a.height)
      for (const w of r.details.warpedCoverage) {
        for (let yy = 0; yy < w.height; yy++) {
          for (let xx = 0; xx < w.width; xx++) {
            const X = w.x0 + xx
            const Y = w.y0 + yy
            if (X < 0 || Y < 0 || X >= a.width || Y >= a.height) continue
            const j = Y * a.width + X
            wa[j] = Math.max(wa[j]!, w.alpha[yy * w.width + xx]!)
          }
        }
      }
      let hair = 0
      let kept = 0
      for (let y = 0; y < a.height / 2; y++) {
        for (let x = 0; x < a.width; x++) {
          const i = y * a.width + x
          if (neck.above(x, y) > 0 || wa[i]! < 0.5 || a.mask.data[i]! < 0.5) continue
          const c = lab(person.rgb, i)
          if (!(c.L < 40 && c.b > 4)) continue
          hair++
          if ([0, 1, 2].every((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!) < 12)) {
            kept++
          }
        }
      }
      console.log('person_01 × upper_07 [head MAE, hair in front px, kept]:', [
        (s / n).toFixed(2),
        hair,
        (kept / hair).toFixed(3),
      ])
      // main at ac3a936: head MAE 3.49 (the hair beside her chin painted over with skin as part of
      // the old top above the new neckline), hair kept 0.388 (broken strands); now 1.65 and 0.419.
      expect(s / n).toBeLessThan(2.5)
      expect(hair).toBeGreaterThan(5000)
      expect(kept / hair).toBeGreaterThan(0.405)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('tucked or untucked', () => {
  it(
    'person_15 × shorts: his tee ends at the waistband of his beige shorts (tucked), so the new shorts are drawn in front, not his old ones',
    async () => {
      const { person, r } = await dress('person_15', 'garment_lower_03', 'lower')
      expect(r.details.composite.tucked).toBe(true)
      expect(r.details.composite.inFront ?? null).toBeNull()
      // The new garment covers more than half of the old shorts' front below the waistband (it starts
      // a little low: the fit puts its waistband near the hip joints, 0.59 of the box at ca.1cea88a+).
      console.log(
        'person_15 × lower_03 shorts front [coverage, mae]:',
        meanIn(r.details.composite.garment, P15.shortsFront).toFixed(3),
        mae(r.rgb, person.rgb, person, P15.shortsFront).toFixed(1),
      )
      expect(meanIn(r.details.composite.garment, P15.shortsFront)).toBeGreaterThan(0.5)
      expect(mae(r.rgb, person.rgb, person, P15.shortsFront)).toBeGreaterThan(8)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × shorts: his sweatshirt hangs over the waistband (untucked, the same grey below it), so it stays in front of the new shorts',
    async () => {
      const { r } = await dress('person_11', 'garment_lower_03', 'lower')
      expect(r.details.composite.tucked).toBe(false)
      const front = r.details.composite.inFront!
      expect(front.data.some((v) => v > 0.5)).toBe(true)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_01 × jeans: her tee hangs over the hips and stays visible above the new jeans',
    async () => {
      const { person, r } = await dress('person_01', 'garment_lower_01', 'lower')
      // The new jeans' waistband sits below her tee's hem and, below that waistband, what the
      // clothing finder took for more tee is her beige corduroy (not the tee's navy): the tee is judged
      // to end there, so the jeans are drawn in front from their waistband down, and the tee above
      // them keeps its pixels.
      console.log(
        'person_01 × lower_01: tucked',
        r.details.composite.tucked,
        'tee box mae',
        mae(r.rgb, person.rgb, person, P01.teeAboveHem).toFixed(2),
      )
      expect(mae(r.rgb, person.rgb, person, P01.teeAboveHem)).toBeLessThan(3)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('bottoms and dresses', () => {
  it(
    'person_13 (slip dress) × shorts: the dress is no untucked top; the shorts are drawn in front and legs show below them',
    async () => {
      const { person, r } = await dress('person_13', 'garment_lower_03', 'lower')
      const c = r.details.composite
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      const dark = (p: { L: number }) => p.L < 20
      const cover = meanIn(c.garment, P13.hips)
      const before = share(person, P13.aboveHem, dark)
      const after = share(out, P13.aboveHem, dark)
      console.log(
        'person_13 × lower_03 [hips covered, dark above the old hem before/after, skin-hued after]:',
        [cover, before, after, share(out, P13.aboveHem, skinHued)].map((v) => v.toFixed(2)),
      )
      expect(c.clothing!.dress).toBe(true)
      expect(c.tucked).toBe(true)
      // Was 0.04 of the garment box changed before the dress was told from a top (the dress was
      // drawn in front of the shorts).
      expect(cover).toBeGreaterThan(0.8)
      expect(before).toBeGreaterThan(0.8)
      expect(after).toBeLessThan(0.2)
      expect(share(out, P13.aboveHem, skinHued)).toBeGreaterThan(0.3)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_11 × shorts: his sweatshirt is a top, not a dress',
    async () => {
      const { r } = await dress('person_11', 'garment_lower_03', 'lower')
      expect(r.details.composite.clothing!.dress).toBe(false)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_09 (leg kicked up) × trousers: a trouser leg follows the kicked leg; the shoe and the bag stay',
    async () => {
      const { person, r } = await dress('person_09', 'garment_lower_02', 'lower')
      const c = r.details.composite
      const shin = meanIn(c.garment, P09.kickedShin)
      // What was taken off there (the new trousers may be drawn over the top of the shoe and, hanging
      // wide, over the bag: that is the garment, not the old one taken off).
      const shoe = meanIn(c.removed!, P09.kickedShoe)
      const bag = meanIn(c.removed!, P09.bag)
      console.log(
        'person_09 × lower_02 [kicked shin covered, shoe taken off, bag taken off]:',
        [shin, shoe, bag].map((v) => v.toFixed(3)),
      )
      // The landmark model pairs her hips with the other leg's knee (the thighs cross): the trousers
      // went across both legs before fitBottom untangled them.
      expect(shin).toBeGreaterThan(0.8)
      expect(shoe).toBeLessThan(0.05)
      expect(bag).toBeLessThan(0.05)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    "person_11 × a sleeveless knee dress: below the hem the legs have his hands' tone, no denim beside or below it, the shoes untouched",
    async () => {
      const { person, r } = await dress('person_11', 'garment_full_02', 'full')
      const c = r.details.composite
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      expect(c.skin?.source).toBe('body')
      const tone = lab(Uint8Array.from(c.skin!.rgb), 0)
      const hands = lab(Uint8Array.from(c.clothing!.skinRgb!), 0)
      for (const box of [P11.shinLeft, P11.shinRight]) {
        expect(share(out, box, blue)).toBeLessThan(0.05)
        expect(share(out, box, skinHued)).toBeGreaterThan(0.5)
      }
      const shin = median(out, P11.shinLeft)
      const shinLab = lab(Uint8Array.from(shin), 0)
      console.log(
        'person_11 × full_02 [tone, hands, shin]:',
        c.skin!.rgb,
        c.clothing!.skinRgb,
        shin,
      )
      expect(Math.abs(tone.L - hands.L)).toBeLessThan(12)
      expect(Math.abs(shinLab.L - hands.L)).toBeLessThan(20)
      // The jeans' whole lower leg area (both legs, below the dress's lowest hem): no denim left.
      expect(share(out, [0.34, 0.72, 0.62, 0.88], blue)).toBeLessThan(0.03)
      expect(mae(r.rgb, person.rgb, person, P11.shoes)).toBeLessThan(4)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('a sleeve on an arm raised beside the head (composite.ts armReach)', () => {
  /** Near the black garments' colour (upper_05, upper_09: RGB ≤ 40; her skin there is ~230, 195, 165). */
  const dark = (rgb: Uint8Array) => (_: unknown, i: number) =>
    Math.max(rgb[i * 3]!, rgb[i * 3 + 1]!, rgb[i * 3 + 2]!) < 70
  it(
    'person_06 × a black tee: the short sleeve turned up her raised upper arm is drawn whole, not the arm seen through it',
    async () => {
      const { person, r } = await dress('person_06', 'garment_upper_05', 'upper')
      const shown = share({ ...person, rgb: r.rgb }, P06.raisedUpperArm, dark(r.rgb))
      const covered = meanIn(r.details.composite.garment, P06.raisedUpperArm)
      console.log('person_06 × upper_05 raised upper arm [dark, coverage]:', [shown, covered])
      // The photo's arm is skin there …
      expect(share(person, P06.raisedUpperArm, dark(person.rgb))).toBe(0)
      // … and the sleeve covers it: 0.82 dark, coverage 0.82 (before, 0.51 and 0.57: the
      // segmentation holds the arm at 0.0–0.45 and the sleeve was clipped or drawn half transparent
      // there; 1.0 before 6a62910 trimmed a short sleeve's mask below its armpit edge).
      expect(shown).toBeGreaterThan(0.75)
      expect(covered).toBeGreaterThan(0.75)
    },
    CASE_TIMEOUT_MS,
  )
  it(
    'person_06 × a black long-sleeve polo: the sleeve covers the raised upper arm and no block of it sticks out past the elbow into the background',
    async () => {
      const { person, r } = await dress('person_06', 'garment_upper_09', 'upper')
      const shown = share({ ...person, rgb: r.rgb }, P06.raisedUpperArm, dark(r.rgb))
      const changedPast = share({ ...person, rgb: r.rgb }, P06.pastElbow, (_, i) =>
        [0, 1, 2].some((k) => Math.abs(r.rgb[i * 3 + k]! - person.rgb[i * 3 + k]!) > 24),
      )
      console.log('person_06 × upper_09 [raised upper arm dark, changed past the elbow]:', [
        shown,
        changedPast,
      ])
      // Before: 0.51 of the upper arm dark (stripes of sleeve and skin), and 0.53 of the background
      // past the elbow changed (the sleeve went on straight past the elbow and filled the reach
      // capsule's round end). Now 1.0 and 0.
      expect(shown).toBeGreaterThan(0.9)
      expect(changedPast).toBeLessThan(0.05)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('arms under an old sleeve (undress.ts armShape)', () => {
  /** The old dev set (../shared/media): person_02, a man in a black short-sleeve tee, the README's example. */
  const DEV = resolve(ROOT, '../shared/media')
  /**
   * His upper arms under the old sleeves, just above their hems, where the bare arm below spans
   * the sleeve (labelled on the photo, 768 × 1024): his right (image left) and his left.
   */
  const P02_UPPER_ARMS = [
    [0.31, 0.19, 0.35, 0.245],
    [0.64, 0.21, 0.68, 0.245],
  ] as const satisfies readonly Box[]
  /**
   * His right forearm (image left), bare against the white backdrop and the black tee, read on the
   * photo: 53 px wide below the elbow, 42 px above the wrist, with shoulders 184 px apart — a
   * radius of 0.115–0.145 × the shoulder width.
   */
  const P02_FOREARM_R = [0.11, 0.15] as const
  /** Across the hems of his old sleeves on both upper arms (the bare arm below, the new sleeve above). */
  const P02_HEMS = [
    [0.29, 0.24, 0.4, 0.28],
    [0.6, 0.24, 0.7, 0.29],
  ] as const satisfies readonly Box[]
  /** The mean over both arms of the median column's dip at the old hem (luma levels), at most. */
  const HEM_LINE_MAX = 12

  let pair: ReturnType<typeof runPair> | null = null
  /** One engine run for both tests. */
  const devPair = () => (pair ??= runPair())
  async function runPair() {
    const person = await decodeImage(join(DEV, 'person_02.jpg'), { what: 'person' })
    const garment = await decodeImage(join(DEV, 'garment_upper_01.jpg'), {
      what: 'garment',
      maxWorkSidePx: 1024,
    })
    const r = await engine.tryOnDetailed(person, garment, {
      preprocessGarment: true,
      garmentMode: 'upper',
      removeBackground: false,
    })
    return { person, r }
  }

  it(
    'dev person_02: his bare forearm is measured as wide as it is on the photo',
    async () => {
      const { r } = await devPair()
      const a = r.details.person
      const c = r.details.composite.clothing!
      // The fill grid and what shows bare, as takeOff builds them (the worn region is the old top).
      const k = Math.min(1, FILL_SIDE / Math.max(a.width, a.height))
      const w = Math.round(a.width * k)
      const h = Math.round(a.height * k)
      const mask = resizePlane(a.mask, w, h).data
      const upper = resizePlane(c.upper, w, h).data
      const lower = resizePlane(c.lower, w, h).data
      const bare = (j: number) => mask[j]! > 0.5 && upper[j]! < 0.5 && lower[j]! < 0.5
      const P = a.points.map((p) => ({ x: p.x * k, y: p.y * k, score: p.score }))
      const sw = a.shoulderWidth * k
      const right = armShape(P, [LM.rightShoulder, LM.rightElbow, LM.rightWrist], bare, w, h, sw)
      console.log('dev person_02 right arm (× shoulder width):', {
        forearm: right.forearm! / sw,
        top: right.top / sw,
        elbow: right.elbow / sw,
      })
      expect(right.forearm).not.toBeNull()
      expect(right.forearm! / sw).toBeGreaterThan(P02_FOREARM_R[0])
      expect(right.forearm! / sw).toBeLessThan(P02_FOREARM_R[1])
      // The upper arm is wider than the forearm, most at the shoulder.
      expect(right.top).toBeGreaterThan(right.elbow)
      expect(right.elbow).toBeGreaterThan(right.forearm!)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'dev person_02 × dev upper_01 (the README’s pair): his painted right upper arm is lit across as his bare arm is, not flat',
    async () => {
      const { person, r } = await devPair()
      const f = acrossHem(person, r, 'right')
      console.log('dev person_02 × upper_01 right upper arm [hem, outer, flat]:', f)
      expect(f.outer).toBeLessThan(ARM_OUTER_MAX)
      expect(f.flat).toBeGreaterThan(ARM_FLAT_MIN)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'dev person_02 × dev upper_01 (the README’s pair): no dark line is left across his arms where the old sleeves ended (undress.ts HEM_BOOST, EDGE_GROW)',
    async () => {
      const { person, r } = await devPair()
      const c = r.details.composite
      const W = person.width
      const H = person.height
      const L = (i: number) =>
        0.299 * r.rgb[i * 3]! + 0.587 * r.rgb[i * 3 + 1]! + 0.114 * r.rgb[i * 3 + 2]!
      // In each column across the old hem (arm pixels only: not the new garment, not background),
      // how far the darkest row falls below the column's median: a line is a dip of a few rows.
      const depth = (box: Box) => {
        const d: number[] = []
        for (let x = Math.round(box[0] * W); x < Math.round(box[2] * W); x++) {
          const col: number[] = []
          let all = 0
          for (let y = Math.round(box[1] * H); y < Math.round(box[3] * H); y++) {
            const i = y * W + x
            all++
            const arm =
              c.garment.data[i]! <= 0.05 &&
              c.background!.data[i]! <= 0.5 &&
              r.details.person.mask.data[i]! >= 0.5
            if (arm) col.push(L(i))
          }
          if (col.length < 0.8 * all) continue
          col.sort((p, q) => p - q)
          d.push(col[col.length >> 1]! - col[0]!)
        }
        expect(d.length).toBeGreaterThan(20)
        return d.sort((p, q) => p - q)[d.length >> 1]!
      }
      const found = P02_HEMS.map(depth)
      console.log('dev person_02 × upper_01 hem line depth [right, left]:', found)
      // Before (the work grid's ramp upsampled: the hem's black rows a third painted) 30.4 and
      // 16.6; with the ramp moved EDGE_GROW on over the arms 6.5 and 11.3.
      expect((found[0]! + found[1]!) / 2).toBeLessThan(HEM_LINE_MAX)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'dev person_02 × dev upper_01: his upper arms under the old sleeves are painted skin, not backdrop',
    async () => {
      const { person, r } = await devPair()
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      // What is not the new garment's sleeve (drawn there since tops are sized from the body) is skin.
      const garment = r.details.composite.garment.data
      const skinOrGarment = (c: { L: number; a: number; b: number }, i: number) =>
        skinHued(c) || garment[i]! > 0.5
      const found = P02_UPPER_ARMS.map((box) => [
        meanIn(r.details.composite.background!, box),
        share(out, box, skinOrGarment),
      ])
      console.log('dev person_02 × upper_01 upper arms [background, skin-hued]:', found)
      for (const box of P02_UPPER_ARMS) {
        // The photo's sleeve is black there …
        expect(share(person, box, skinHued)).toBeLessThan(0.05)
        // … and the arm is painted in it: 0.04 and 0.00 background, 0.97 and 0.90 skin-hued (before,
        // with thin capsules from 30 % of the way down: 0.55 and 0.54 background, 0.47 and 0.45
        // skin-hued: white halos on both sides); the new tee's sleeves now cover part of it.
        expect(meanIn(r.details.composite.background!, box)).toBeLessThan(0.15)
        expect(share(out, box, skinOrGarment)).toBeGreaterThan(0.8)
      }
    },
    CASE_TIMEOUT_MS,
  )
})

describe('arms under long old sleeves (undress.ts armShape, ARM_ROUND)', () => {
  /**
   * The painted upper arm's cross-profile: across the bone at `t` of the way shoulder → elbow, the
   * run of painted skin (taken off, not background, not the new garment) through it, its luma fitted
   * as a + b u + c u² (u −1..1 across the run); c / a. A bare arm is round, darker at its edges:
   * person_15's bare upper arms −0.05 to −0.26, dev person_02's −0.15.
   */
  function roundness(
    r: Awaited<ReturnType<TryOnEngineWithDetails['tryOnDetailed']>>,
    W: number,
    side: 'right' | 'left',
    t: number,
  ): number {
    const a = r.details.person
    const c = r.details.composite
    const [s, e] =
      side === 'right'
        ? [a.points[LM.rightShoulder]!, a.points[LM.rightElbow]!]
        : [a.points[LM.leftShoulder]!, a.points[LM.leftElbow]!]
    const len = Math.hypot(e.x - s.x, e.y - s.y)
    const n = { x: -(e.y - s.y) / len, y: (e.x - s.x) / len }
    const o = { x: s.x + (e.x - s.x) * t, y: s.y + (e.y - s.y) * t }
    const R = Math.round(0.35 * a.shoulderWidth)
    let best: number[] = []
    let cur: number[] = []
    for (let d = -R; d <= R + 1; d++) {
      const i = Math.round(o.y + n.y * d) * W + Math.round(o.x + n.x * d)
      const ok =
        d <= R &&
        c.removed!.data[i]! > 0.5 &&
        c.background!.data[i]! < 0.5 &&
        c.garment.data[i]! < 0.05
      if (ok) cur.push(i)
      else {
        if (cur.length > best.length) best = cur
        cur = []
      }
    }
    expect(best.length).toBeGreaterThan(0.1 * a.shoulderWidth)
    // Least squares on 1, u, u² (normal equations, Cramer's rule).
    const A = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]
    const v = [0, 0, 0]
    const m = best.length
    best.forEach((i, q) => {
      const u = (q - (m - 1) / 2) / ((m - 1) / 2)
      const f = [1, u, u * u]
      const l = 0.299 * r.rgb[i * 3]! + 0.587 * r.rgb[i * 3 + 1]! + 0.114 * r.rgb[i * 3 + 2]!
      for (let j = 0; j < 3; j++) {
        v[j] = v[j]! + f[j]! * l
        for (let k = 0; k < 3; k++) A[j]![k] = A[j]![k]! + f[j]! * f[k]!
      }
    })
    const det = (M: number[][]) =>
      M[0]![0]! * (M[1]![1]! * M[2]![2]! - M[1]![2]! * M[2]![1]!) -
      M[0]![1]! * (M[1]![0]! * M[2]![2]! - M[1]![2]! * M[2]![0]!) +
      M[0]![2]! * (M[1]![0]! * M[2]![1]! - M[1]![1]! * M[2]![0]!)
    const D = det(A)
    const coef = [0, 2].map(
      (k) => det(A.map((row, j) => row.map((x, q) => (q === k ? v[j]! : x)))) / D,
    )
    return coef[1]! / coef[0]!
  }

  it(
    'person_11 × a sleeveless tank: his arms painted where his sweatshirt sleeves were are round, darker at their edges, not flat slabs',
    async () => {
      const { person, r } = await dress('person_11', 'garment_upper_07', 'upper')
      const found = (['right', 'left'] as const).map((side) =>
        [0.7, 0.85].map((t) => roundness(r, person.width, side, t)),
      )
      console.log(
        'person_11 × upper_07 painted upper arms, c / a [right, left] at t 0.7, 0.85:',
        found,
      )
      // Before (nothing bare to copy: the flat tone with a cylinder term the torso's and the
      // armpit's coverage overrode) −0.007, 0.006, −0.002, 0.001; with ARM_ROUND −0.13, −0.08,
      // −0.10, −0.07.
      for (const c of found.flat()) expect(c).toBeLessThan(ARM_ROUND_MIN)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the old bottom above a low-rise new bottom (composite.ts takeOffZone)', () => {
  it(
    'person_04 × garment_lower_05 (white mini skirt, low on the hips, over white jeans): the jeans’ waistband between the blouse and the skirt comes off',
    async () => {
      const { person, r } = await dress('person_04', 'garment_lower_05', 'auto')
      expect(r.category).toBe('lower')
      const c = r.details.composite
      const p = r.details.person.points
      const W = person.width
      // From the labelled waist (labels.json lower box top, 0.57) down to just above the skirt's
      // waistband (its top row in the middle column, less 0.02 of the height), between the hip
      // joints, outside the new skirt: the jeans' white (light, nearly without chroma) that is left.
      const y0 = Math.round(0.57 * person.height)
      const xm = Math.round((p[LM.leftHip]!.x + p[LM.rightHip]!.x) / 2)
      let skirtTop = 0
      while (skirtTop < person.height && c.garment.data[skirtTop * W + xm]! < 0.5) skirtTop++
      const y1 = skirtTop - Math.round(0.02 * person.height)
      const x0 = Math.round(Math.min(p[LM.leftHip]!.x, p[LM.rightHip]!.x))
      const x1 = Math.round(Math.max(p[LM.leftHip]!.x, p[LM.rightHip]!.x))
      let all = 0
      let white = 0
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x <= x1; x++) {
          const i = y * W + x
          if (c.garment.data[i]! > 0.1) continue
          all++
          const q = lab(r.rgb, i)
          if (q.L > 80 && Math.hypot(q.a, q.b) < 8) white++
        }
      }
      console.log(
        'person_04 × lower_05: jeans white left above the skirt',
        (white / all).toFixed(3),
        all,
      )
      expect(all).toBeGreaterThan(1000)
      expect(white / all).toBeLessThan(0.1)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the midriff painted above a new bottom is shaded (undress.ts torsoLight)', () => {
  it(
    'person_15 × garment_lower_04 (the skirt sits below his shorts’ waistband): the skin painted over it has the light and roundness of a body, not one flat tone',
    async () => {
      const { person, r } = await dress('person_15', 'garment_lower_04', 'auto')
      const c = r.details.composite
      const a = r.details.person
      const W = person.width
      const sy = (a.points[LM.leftShoulder]!.y + a.points[LM.rightShoulder]!.y) / 2
      const hy = (a.points[LM.leftHip]!.y + a.points[LM.rightHip]!.y) / 2
      const luma = (d: Uint8Array, i: number) =>
        0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!
      // Rows from half-way shoulders → hips to below the hips: skin painted where the old clothes
      // came off and the skirt does not cover, and his own skin there (his forearms), off the
      // hands and arm capsules.
      const painted: number[] = []
      const real: number[] = []
      for (let y = Math.round((sy + hy) / 2); y < Math.round(hy + 0.3 * (hy - sy)); y++) {
        for (let x = 0; x < W; x++) {
          const i = y * W + x
          if (a.hands.data[i]! > 0.3 || a.arms.data[i]! > 0.5 || a.head.data[i]! > 0.5) continue
          const off = c.removed!.data[i]!
          if (off > 0.9 && c.background!.data[i]! < 0.1 && c.garment.data[i]! < 0.1) {
            painted.push(luma(r.rgb, i))
          }
          if (c.clothing!.skin.data[i]! > 0.5 && off < 0.05 && a.mask.data[i]! > 0.5) {
            real.push(luma(person.rgb, i))
          }
        }
      }
      /** (p90 − p10) / p50 of the luma. */
      const spread = (v: number[]) => {
        const s = v.slice().sort((p, q) => p - q)
        const at = (f: number) => s[Math.floor(f * (s.length - 1))]!
        return (at(0.9) - at(0.1)) / at(0.5)
      }
      console.log(
        'person_15 × lower_04 midriff [painted px, luma spread painted, real skin]:',
        painted.length,
        spread(painted).toFixed(3),
        spread(real).toFixed(3),
      )
      expect(painted.length).toBeGreaterThan(3000)
      expect(real.length).toBeGreaterThan(1000)
      // One flat tone with grain: 0.091 against his skin's 0.290 before.
      expect(spread(painted)).toBeGreaterThan(0.45 * spread(real))
    },
    CASE_TIMEOUT_MS,
  )
})

/**
 * How much of the old top's print the shading carries into the new garment: over the rows of a box
 * (the pixels the new garment covers), the regression of the result's band-pass row luma (a row's
 * mean less the mean of the rows within 2 % of the photo's height) on the photo's, times the
 * photo's spread: the luma levels (0..255) of the old stripes drawn into the new garment.
 */
function carriedStripes(
  person: { width: number; height: number; rgb: Uint8Array },
  rgb: Uint8Array,
  garment: Plane,
  box: Box,
): number {
  const W = person.width
  const L = (d: Uint8Array, i: number) =>
    0.299 * d[i * 3]! + 0.587 * d[i * 3 + 1]! + 0.114 * d[i * 3 + 2]!
  const x0 = Math.round(box[0] * W)
  const x1 = Math.round(box[2] * W)
  const rows: [number, number][] = []
  for (let y = Math.round(box[1] * person.height); y < Math.round(box[3] * person.height); y++) {
    let p = 0
    let q = 0
    let n = 0
    for (let x = x0; x < x1; x++) {
      const i = y * W + x
      if (garment.data[i]! < 0.9) continue
      p += L(person.rgb, i)
      q += L(rgb, i)
      n++
    }
    rows.push(n > 20 ? [p / n, q / n] : [NaN, NaN])
  }
  const R = Math.max(3, Math.round(0.02 * person.height))
  const bp = (k: 0 | 1) =>
    rows.map((v, r) => {
      let s = 0
      let n = 0
      for (let j = Math.max(0, r - R); j <= Math.min(rows.length - 1, r + R); j++) {
        if (!Number.isNaN(rows[j]![k])) ((s += rows[j]![k]), n++)
      }
      return v[k] - s / n
    })
  const a = bp(0)
  const b = bp(1)
  let saa = 0
  let sab = 0
  let n = 0
  for (let r = 0; r < a.length; r++) {
    if (Number.isNaN(a[r]!) || Number.isNaN(b[r]!)) continue
    saa += a[r]! ** 2
    sab += a[r]! * b[r]!
    n++
  }
  expect(n).toBeGreaterThan(100)
  return (sab / saa) * Math.sqrt(saa / n)
}

/**
 * The old top's stripes carried into a new top by the shading, at most (luma levels, see
 * carriedStripes). Before (the shading a ratio of the photo's blurred luma, its print included;
 * the box blur's negative lobe drew them inverted) person_12's polo put −0.74 into a navy tee with
 * orange letters and −3.67 into a grey tank; with the light over each main colour's own luma
 * (composite.ts shadeField, undress.ts fabricAlbedo) −0.02 and 0.24.
 */
const STRIPES_CARRIED = 0.5

describe('the shading carries the old clothes’ light, not their print (composite.ts shadeField)', () => {
  it(
    'person_12 × a navy tee and a grey tank: his polo’s navy and white stripes do not show through the new top (composite.ts shadeField)',
    async () => {
      const found: number[] = []
      for (const g of ['garment_upper_01', 'garment_upper_07']) {
        const { person, r } = await dress('person_12', g, 'upper')
        found.push(carriedStripes(person, r.rgb, r.details.composite.garment, P12.stripes))
      }
      console.log(
        'person_12 stripes carried [upper_01, upper_07]:',
        found.map((v) => v.toFixed(2)),
      )
      for (const v of found) expect(Math.abs(v)).toBeLessThan(STRIPES_CARRIED)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('below the waist the old bottom stays (composite.ts takeOffZone)', () => {
  it(
    'person_02 × a grey tank: her blue waistband at the hip beside the new hem stays, not painted over with skin (composite.ts takeOffZone)',
    async () => {
      const { person, r } = await dress('person_02', 'garment_upper_07', 'upper')
      const out = { width: person.width, height: person.height, rgb: r.rgb }
      const trousers = (c: { b: number }) => c.b < -20
      const before = share(person, P02.hipLeft, trousers)
      const after = share(out, P02.hipLeft, trousers)
      console.log('person_02 × upper_07 waistband at the hip [photo, result]:', before, after)
      expect(before).toBeGreaterThan(0.8)
      // Before, the sleeve capsule around her forearm took off what the finder gave the top there
      // (her waistband's shaded folds, near the navy tee's colours), painted as skin: a tan block.
      expect(after).toBeGreaterThan(0.8)
    },
    CASE_TIMEOUT_MS,
  )
})

describe('the old bottom in front of a new top, with what it encloses (tuck.ts)', () => {
  it(
    'person_15 × a navy tee: a detail on his shorts below the old hem stays in front, no block of the new tee in it (tuck.ts fillEnclosed)',
    async () => {
      const { r } = await dress('person_15', 'garment_upper_02', 'upper')
      const g = meanIn(r.details.composite.garment, P15.waistbandLeft)
      console.log('person_15 × upper_02 new tee over the waistband detail:', g)
      // Before, a hole in the old bottom's front (the detail is not of the shorts' colours, larger
      // than the front's closing): 0.22 of the box was the new navy tee, a dark block.
      expect(g).toBeLessThan(0.05)
    },
    CASE_TIMEOUT_MS,
  )
})

/**
 * Across an arm just above the old sleeve's hem (4–10 % of the way shoulder → elbow above it,
 * where the painted skin is) and just below it (5–11 %, the bare arm on the photo), along the
 * normal of the shoulder → elbow landmarks: the run of painted skin (repainted, not background,
 * not the new garment) and of bare skin (the person, skin, not the old garment) nearest the bone.
 * `outer`: how far the painted arm's outer edge (away from the body's middle) stands past the
 * bare arm's, over the bare arm's width; `flat`: the painted arm's luma spread across its middle
 * 80 % over the bare arm's.
 */
function acrossHem(
  p: RasterImage,
  r: Awaited<ReturnType<TryOnEngineWithDetails['tryOnDetailed']>>,
  side: 'right' | 'left',
) {
  const a = r.details.person
  const comp = r.details.composite
  const c = comp.clothing!
  const W = p.width
  const sw = a.shoulderWidth
  const at = (pl: Plane, x: number, y: number) => {
    const xi = Math.round(x)
    const yi = Math.round(y)
    return xi < 0 || yi < 0 || xi >= W || yi >= p.height ? 0 : pl.data[yi * W + xi]!
  }
  const [si, ei] =
    side === 'right' ? [LM.rightShoulder, LM.rightElbow] : [LM.leftShoulder, LM.leftElbow]
  const s = a.points[si]!
  const e = a.points[ei]!
  const len = Math.hypot(e.x - s.x, e.y - s.y)
  const n = { x: -(e.y - s.y) / len, y: (e.x - s.x) / len }
  const out = n.x * (s.x - mid(a.points[LM.leftShoulder]!, a.points[LM.rightShoulder]!).x) > 0
  const pt = (t: number) => ({ x: s.x + (e.x - s.x) * t, y: s.y + (e.y - s.y) * t })
  const painted = (x: number, y: number) =>
    at(comp.removed!, x, y) > 0.5 &&
    at(comp.background!, x, y) < 0.5 &&
    at(comp.garment, x, y) < 0.5
  const bare = (x: number, y: number) =>
    at(a.mask, x, y) > 0.5 && at(c.upper, x, y) < 0.5 && at(c.skin, x, y) > 0.5
  const run = (t: number, ok: (x: number, y: number) => boolean) => {
    const o = pt(t)
    const on = (d: number) => ok(o.x + n.x * d, o.y + n.y * d)
    let d0 = NaN
    for (let d = 0; d < 0.15 * sw && Number.isNaN(d0); d += 0.5) d0 = on(d) ? d : on(-d) ? -d : NaN
    if (Number.isNaN(d0)) return null
    let lo = d0
    let hi = d0
    while (on(lo - 0.5) && lo > -0.6 * sw) lo -= 0.5
    while (on(hi + 0.5) && hi < 0.6 * sw) hi += 0.5
    return { o, lo, hi }
  }
  // The hem: going up the bone from the elbow, the first point on the old sleeve.
  let hem = NaN
  for (let t = 0.98; t > 0.3 && Number.isNaN(hem); t -= 0.01) {
    const o = pt(t)
    if (at(c.upper, o.x, o.y) > 0.5) hem = t
  }
  const above = [0.04, 0.06, 0.08, 0.1].map((d) => run(hem - d, painted))
  const below = [0.05, 0.07, 0.09, 0.11].map((d) => run(hem + d, bare))
  const med = (v: (number | null)[]) => {
    const f = v.filter((x): x is number => x !== null).sort((x, y) => x - y)
    return f.length > 0 ? f[Math.floor(f.length / 2)]! : NaN
  }
  type Run = ReturnType<typeof run>
  const edge = (v: Run[]) => med(v.map((q) => (q ? (out ? q.hi : -q.lo) : null)))
  const width = (v: Run[]) => med(v.map((q) => (q ? q.hi - q.lo : null)))
  const spread = (v: Run[], rgb: Uint8Array) =>
    med(
      v.map((q) => {
        if (!q) return null
        const ls: number[] = []
        const m = 0.1 * (q.hi - q.lo)
        for (let d = q.lo + m; d <= q.hi - m; d += 1) {
          const i = Math.round(q.o.y + n.y * d) * W + Math.round(q.o.x + n.x * d)
          ls.push(0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!)
        }
        if (ls.length < 5) return null
        const mu = ls.reduce((x, y) => x + y, 0) / ls.length
        return Math.sqrt(ls.reduce((x, y) => x + (y - mu) ** 2, 0) / ls.length)
      }),
    )
  return {
    hem,
    outer: (edge(above) - edge(below)) / width(below),
    flat: spread(above, r.rgb) / spread(below, p.rgb),
  }
}

describe('the upper arm painted under an old sleeve (undress.ts armShape, armColourAt)', () => {
  it(
    'person_15 × a grey tank top: his right upper arm is painted as wide as his bare arm, not his old sleeve’s slab',
    async () => {
      const { person, r } = await dress('person_15', 'garment_upper_07', 'upper')
      const f = acrossHem(person, r, 'right')
      console.log('person_15 × upper_07 right upper arm [hem, outer, flat]:', f)
      expect(f.hem).toBeGreaterThan(0.5)
      expect(f.outer).toBeLessThan(ARM_OUTER_MAX)
      expect(f.flat).toBeGreaterThan(ARM_FLAT_MIN)
    },
    CASE_TIMEOUT_MS,
  )

  it(
    'person_12 × a grey tank top: his dark upper arm painted is lit across as his bare arm is, not flat',
    async () => {
      const { person, r } = await dress('person_12', 'garment_upper_07', 'upper')
      const f = acrossHem(person, r, 'right')
      console.log('person_12 × upper_07 right upper arm [hem, outer, flat]:', f)
      expect(f.outer).toBeLessThan(ARM_OUTER_MAX)
      expect(f.flat).toBeGreaterThan(ARM_FLAT_MIN)
    },
    CASE_TIMEOUT_MS,
  )
})

// person_03 is a holdout person: this pair is the paired photo the issue names (its defect, the
// new top over her fingers, is the brief); nothing was tuned on it beyond anatomy (HAND_REACH).
describe('the fingers in front of a new top (composite.ts handsFront)', () => {
  it(
    'person_03 × the flared blouse: her fingers held together in front, past the hand capsules, are not drawn over',
    async () => {
      const { r } = await dress('person_03', 'garment_upper_03', 'upper')
      const g = meanIn(r.details.composite.garment, P03.fingers)
      console.log('person_03 × upper_03 new top over her fingers:', g)
      // Before, with only the capsules to 1.25 × the knuckle landmarks in front, 0.80 of the box
      // was the new blouse (a green patch between her hands); with handsFront 0.11.
      expect(g).toBeLessThan(0.25)
    },
    CASE_TIMEOUT_MS,
  )
})
