/**
 * undress.ts helpers on small synthetic images (no models): the skin grain (addGrain), which
 * colours of the old garment carry its light (fabricTest), when it is patterned (lightnessSpread)
 * and the arms' shape under it (armShape; on a real photo in composite.test.ts). The whole take-off on real photos is in
 * composite.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { LM } from './pose.ts'
import { plane, type Plane } from './raster.ts'
import {
  addGrain,
  ARM_DELTOID,
  ARM_ELBOW_RATIO,
  ARM_ELBOW_SHIFT_MAX,
  ARM_FOREARM_R,
  ARM_PROFILE_BINS,
  ARM_SHIFT_MAX,
  ARM_WRIST_RATIO,
  armColourAt,
  armShape,
  backgroundDetail,
  bodyModel,
  fabricAlbedo,
  fabricTest,
  GRAIN_R,
  KNEE_R,
  KNEE_SURE,
  lightnessSpread,
  PATTERN_DL,
  TORSO_SHADE,
  torsoLight,
} from './undress.ts'

const W = 96
const H = 48

/** Robust high-pass spread of luma (as addGrain measures it) over x0..x1 of every row inside. */
function spread(rgb: Uint8Array, x0: number, x1: number): number {
  const l = (i: number) => 0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!
  const r = GRAIN_R
  const v: number[] = []
  for (let y = r + 1; y < H - r - 1; y++) {
    for (let x = x0 + r + 1; x <= x1 - r - 1; x++) {
      let s = 0
      for (let dy = -r; dy <= r; dy++) {
        for (let dx = -r; dx <= r; dx++) s += l((y + dy) * W + x + dx)
      }
      v.push(Math.abs(l(y * W + x) - s / (2 * r + 1) ** 2))
    }
  }
  return 1.4826 * v.sort((p, q) => p - q)[v.length >> 1]!
}

/** A skin tone; the left half textured (± `amp` per pixel, a fixed pattern), the right half flat. */
function skinImage(amp: number): Uint8Array {
  const rgb = new Uint8Array(W * H * 3)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x
      const d = x < W / 2 ? (amp * (((x * 7 + y * 13) % 5) - 2)) / 2 : 0
      rgb[i * 3] = 200 + d
      rgb[i * 3 + 1] = 150 + d
      rgb[i * 3 + 2] = 120 + d
    }
  }
  return rgb
}

const half = (left: boolean): Plane => {
  const p = plane(W, H)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) p.data[y * W + x] = x < W / 2 === left ? 1 : 0
  }
  return p
}

describe('addGrain', () => {
  it('gives flat painted skin the high-pass spread of the real skin, keeping its colour', () => {
    const data = skinImage(6)
    const img = { width: W, height: H, data }
    const out = data.slice()
    const real = spread(data, 0, W / 2 - 1)
    expect(spread(out, W / 2, W - 1)).toBeLessThan(1e-6)
    expect(
      addGrain(img, out, half(true), half(false), { x0: W / 2, y0: 0, x1: W - 1, y1: H - 1 }),
    ).toBe(true)
    const painted = spread(out, W / 2, W - 1)
    expect(painted).toBeGreaterThan(0.75 * real)
    expect(painted).toBeLessThan(1.25 * real)
    // The mean colour and the hue stay (the grain scales all three channels alike).
    const mean = [0, 1, 2].map((ch) => {
      let s = 0
      for (let y = 0; y < H; y++) for (let x = W / 2; x < W; x++) s += out[(y * W + x) * 3 + ch]!
      return s / ((H * W) / 2)
    })
    expect(Math.abs(mean[0]! - 200)).toBeLessThan(1)
    expect(Math.abs(mean[1]! - 150)).toBeLessThan(1)
    expect(Math.abs(mean[2]! - 120)).toBeLessThan(1)
    // The real skin is untouched.
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W / 2; x++) expect(out[(y * W + x) * 3]).toBe(data[(y * W + x) * 3])
    }
  })

  it('adds nothing to skin already as textured as the real one, nor without real skin to measure', () => {
    const data = skinImage(6)
    const img = { width: W, height: H, data }
    // Painted = the textured half itself: nothing to add.
    const same = data.slice()
    expect(
      addGrain(img, same, half(true), half(true), { x0: 0, y0: 0, x1: W / 2 - 1, y1: H - 1 }),
    ).toBe(true)
    expect(same).toEqual(data)
    // No real skin: false, nothing added.
    const none = data.slice()
    expect(
      addGrain(img, none, plane(W, H), half(false), { x0: W / 2, y0: 0, x1: W - 1, y1: H - 1 }),
    ).toBe(false)
    expect(none).toEqual(data)
  })
})

describe('fabricTest', () => {
  /** A fill grid of `n` cells: grey, with every `every`-th cell blue (a print's letters). */
  function grid(n: number, every: number, other: readonly number[]): Float32Array {
    const c = new Float32Array(n * 3)
    for (let j = 0; j < n; j++) {
      const v = j % every === 0 ? other : [170, 170, 172]
      c.set(v, j * 3)
    }
    return c
  }

  it('a print of a few per cent is not the fabric; the garment’s own colour is', () => {
    const n = 2000
    const fabric = fabricTest(grid(n, 20, [40, 80, 200]), new Float32Array(n).fill(1))
    expect(fabric(170, 170, 172)).toBe(true)
    // Its own shading (a fold) is still the fabric.
    expect(fabric(140, 140, 142)).toBe(true)
    expect(fabric(40, 80, 200)).toBe(false)
    expect(fabric(200, 40, 40)).toBe(false)
  })

  it('both colours of an even stripe are the fabric', () => {
    const n = 2000
    const fabric = fabricTest(grid(n, 2, [30, 40, 90]), new Float32Array(n).fill(1))
    expect(fabric(170, 170, 172)).toBe(true)
    expect(fabric(30, 40, 90)).toBe(true)
  })
})

describe('fabricAlbedo', () => {
  it('big letters of a main colour are one albedo more: each colour’s own luma, its folds within it', () => {
    // 2000 cells: navy, every third one orange (big letters: a main colour, a third of the tee).
    const n = 2000
    const c = new Float32Array(n * 3)
    for (let j = 0; j < n; j++) c.set(j % 3 === 0 ? [240, 100, 20] : [30, 35, 70], j * 3)
    const f = fabricAlbedo(c, new Float32Array(n).fill(1))
    const navy = f.label(30, 35, 70)
    const orange = f.label(240, 100, 20)
    expect(navy).toBeGreaterThanOrEqual(0)
    expect(orange).toBeGreaterThanOrEqual(0)
    expect(orange).not.toBe(navy)
    const luma = (r: number, g: number, b: number) => (0.299 * r + 0.587 * g + 0.114 * b) / 255
    expect(f.luma[navy]!).toBeCloseTo(luma(30, 35, 70), 3)
    expect(f.luma[orange]!).toBeCloseTo(luma(240, 100, 20), 3)
    // A fold's shadow on the orange is still the orange (its light is its luma over the orange's).
    expect(f.label(215, 88, 16)).toBe(orange)
    // Another colour (a small logo) is not the fabric.
    expect(f.label(250, 250, 250)).toBe(-1)
  })
})

describe('lightnessSpread', () => {
  /** L* samples: `dark` share at `lo`, the rest around `hi` (± 3, a fold's shading). */
  const samples = (n: number, dark: number, lo: number, hi: number) =>
    Array.from({ length: n }, (_, i) => (i < dark * n ? lo : hi + ((i % 7) - 3)))

  it('navy and white stripes are a pattern; a plain fabric with folds is not', () => {
    expect(lightnessSpread(samples(1000, 0.4, 20, 90))).toBeGreaterThan(PATTERN_DL)
    expect(lightnessSpread(samples(1000, 0, 20, 60))).toBeLessThan(10)
    // A thin dark stripe under PATTERN_LO of the fabric is not.
    expect(lightnessSpread(samples(1000, 0.1, 20, 90))).toBeLessThan(10)
    expect(lightnessSpread([])).toBe(0)
  })
})

describe('armShape', () => {
  // A vertical arm on a 200 × 300 grid: shoulder (100, 50), elbow (100, 150), wrist (100, 250);
  // shoulder width 100 px.
  const w = 200
  const h = 300
  const sw = 100
  const P = Array.from({ length: 33 }, () => ({ x: 0, y: 0, score: 1 }))
  P[LM.rightShoulder] = { x: 100, y: 50, score: 1 }
  P[LM.rightElbow] = { x: 100, y: 150, score: 1 }
  P[LM.rightWrist] = { x: 100, y: 250, score: 1 }
  const joints = [LM.rightShoulder, LM.rightElbow, LM.rightWrist] as const
  /** Bare where |x − cx| ≤ half, below `from` (a sleeve above it). */
  const bareArm = (cx: number, half: number, from: number) => (j: number) =>
    Math.abs((j % w) - cx) <= half && Math.floor(j / w) >= from

  it('measures a bare forearm and widens the upper arm above it, most at the shoulder', () => {
    // Bare below 160 (a sleeve to the elbow): only the forearm shows.
    const arm = armShape(P, joints, bareArm(100, 13, 160), w, h, sw)
    // 27 px wide: radius 13.5.
    expect(arm.forearm).toBeCloseTo(13.5, 0)
    expect(arm.upper).toBeNull()
    expect(arm.elbow).toBeCloseTo(ARM_ELBOW_RATIO * 13.5, 0)
    expect(arm.top).toBeCloseTo(ARM_DELTOID * ARM_ELBOW_RATIO * 13.5, 0)
    expect(arm.wrist).toBeCloseTo(ARM_WRIST_RATIO * 13.5, 0)
    expect(Math.hypot(arm.shift.x, arm.shift.y)).toBeLessThan(0.5)
  })

  it('below a short sleeve the upper arm is as wide as it shows, tapering from the deltoid', () => {
    // Bare from 120 (70 % of the way to the elbow) down: a plus-size upper arm, 41 px wide, over a
    // forearm 27 px wide: the upper arm's own width, not the forearm's times a ratio.
    const upperArm = (j: number) => {
      const x = j % w
      const y = Math.floor(j / w)
      return y >= 120 && Math.abs(x - 100) <= (y < 150 ? 20 : 13)
    }
    const arm = armShape(P, joints, upperArm, w, h, sw)
    // The taper through the runs at 75, 85 and 95 % (radius 20.5): the elbow's radius is the one
    // whose taper is 20.5 there.
    const at = (t: number) => 20.5 / (1 + (ARM_DELTOID - 1) * (1 - t))
    expect(arm.upper).toBeCloseTo(at(0.85), 0)
    expect(arm.elbow).toBeCloseTo(at(0.85), 0)
    expect(arm.top).toBeCloseTo(ARM_DELTOID * at(0.85), 0)
    expect(arm.forearm).toBeCloseTo(13.5, 0)
  })

  it('shifts the upper arm to where the bare arm is beside the bone, at most ARM_SHIFT_MAX', () => {
    const arm = armShape(P, joints, bareArm(106, 13, 120), w, h, sw)
    expect(arm.shift.x).toBeCloseTo(6, 0)
    expect(Math.abs(arm.shift.y)).toBeLessThan(0.5)
    expect(arm.elbowShift.x).toBeCloseTo(6, 0)
    const far = armShape(P, joints, bareArm(114, 13, 120), w, h, sw)
    expect(far.shift.x).toBeCloseTo(ARM_SHIFT_MAX * sw, 0)
    // At the elbow the bare arm's own offset, up to ARM_ELBOW_SHIFT_MAX.
    expect(far.elbowShift.x).toBeCloseTo(14, 0)
    const farther = armShape(P, joints, bareArm(116, 13, 120), w, h, sw)
    expect(farther.elbowShift.x).toBeCloseTo(ARM_ELBOW_SHIFT_MAX * sw, 0)
  })

  it('with nothing bare (long sleeves), the anthropometric radii; a too thin run is not an arm', () => {
    const none = armShape(P, joints, () => false, w, h, sw)
    expect(none.forearm).toBeNull()
    expect(none.skin).toBeNull()
    expect(none.top).toBeCloseTo(ARM_DELTOID * ARM_ELBOW_RATIO * ARM_FOREARM_R * sw, 5)
    // A strip 5 px wide (a shadow, a hair lock) is below ARM_RUN_MIN: not measured.
    expect(armShape(P, joints, bareArm(100, 2, 120), w, h, sw).forearm).toBeNull()
    // A run merged with something as wide as the span is not measured either.
    expect(armShape(P, joints, bareArm(100, 60, 120), w, h, sw).forearm).toBeNull()
  })

  it('takes the bare arm’s colour and its light across it, a lit side and a shaded one', () => {
    // The arm lit from the image right: its luma rises across it (x 87..113), from 0.7 to 1.1 × its
    // colour; the backdrop and the sleeve are grey.
    const rgb = new Float32Array(w * h * 3).fill(128)
    const bare = bareArm(100, 13, 120)
    for (let j = 0; j < w * h; j++) {
      if (!bare(j)) continue
      const f = 0.7 + (0.4 * ((j % w) - 87)) / 26
      rgb.set([200 * f, 150 * f, 120 * f], j * 3)
    }
    const arm = armShape(P, joints, bare, w, h, sw, rgb)
    expect(arm.skin).not.toBeNull()
    const skin = arm.skin!
    // The middle's colour (200 × 0.9 at x 100) …
    expect(skin.rgb[0]).toBeGreaterThan(170)
    expect(skin.rgb[0]).toBeLessThan(190)
    // … and the profile along the upper arm's normal (for a vertical arm drawn downwards, −x):
    // darker on the image left, lighter on the right, not a symmetric cylinder.
    const out = new Float32Array(3)
    const colourAt = (u: number, n = skin.normal) => {
      armColourAt(skin, n, u, out, 0)
      return out[0]!
    }
    const left = skin.normal.x < 0 ? 1 : -1
    expect(colourAt(left * 0.8)).toBeLessThan(0.85 * colourAt(-left * 0.8))
    expect(skin.profile.length).toBe(ARM_PROFILE_BINS * 3)
    // Read across a segment at a right angle to it (a bent arm) the profile is symmetric.
    const across = { x: skin.normal.y, y: -skin.normal.x }
    expect(colourAt(0.8, across)).toBeCloseTo(colourAt(-0.8, across), 3)
  })
})

describe('bodyModel legs', () => {
  // A person in wide trousers (the silhouette covers both legs and the gap between them), hips 40
  // px apart, knees guessed 120 px apart.
  const w = 200
  const h = 300
  const mask = new Float32Array(w * h)
  for (let y = 30; y < h; y++) for (let x = 30; x < 170; x++) mask[y * w + x] = 1
  const pose = (kneeScore: number) => {
    const P = Array.from({ length: 33 }, () => ({ x: 100, y: 60, score: 0 }))
    const set = (i: number, x: number, y: number, score = 0.9) => (P[i] = { x, y, score })
    set(LM.leftShoulder, 70, 60)
    set(LM.rightShoulder, 130, 60)
    set(LM.mouthLeft, 95, 40)
    set(LM.mouthRight, 105, 40)
    set(LM.leftElbow, 60, 100)
    set(LM.rightElbow, 140, 100)
    set(LM.leftWrist, 60, 140)
    set(LM.rightWrist, 140, 140)
    set(LM.leftHip, 80, 140)
    set(LM.rightHip, 120, 140)
    set(LM.leftKnee, 40, 230, kneeScore)
    set(LM.rightKnee, 160, 230, kneeScore)
    return P
  }
  /** The middle and the width of the body's run at row y on one side of x = 100. */
  const run = (body: Plane, y: number, left: boolean) => {
    const xs: number[] = []
    for (let x = left ? 0 : 100; x < (left ? 100 : w); x++) {
      if (body.data[y * w + x]! > 0.5) xs.push(x)
    }
    return { mid: (xs[0]! + xs[xs.length - 1]!) / 2, width: xs.length }
  }

  it('a knee the landmark model is unsure of: the thigh hangs straight down from its hip', () => {
    const { body } = bodyModel(pose(KNEE_SURE - 0.3), mask, w, h, 60, () => false)
    for (const left of [true, false]) {
      const r = run(body, 200, left)
      // Straight below the hip (x 80 / 120), not on the line to the guessed knee (x 53 / 147).
      expect(Math.abs(r.mid - (left ? 80 : 120))).toBeLessThan(4)
      // Leg-shaped: at two thirds of the way down the thigh narrower than the trousers' half.
      expect(r.width).toBeLessThan(2 * (0.52 - (0.52 - KNEE_R) * 0.67) * 40 + 3)
    }
  })

  it('a sure knee is followed', () => {
    const { body } = bodyModel(pose(KNEE_SURE + 0.3), mask, w, h, 60, () => false)
    expect(Math.abs(run(body, 200, true).mid - 53)).toBeLessThan(4)
    expect(Math.abs(run(body, 200, false).mid - 147)).toBeLessThan(4)
  })
})

describe('backgroundDetail', () => {
  // A backdrop of 1 px stripes (grass-like fine detail) or a plain one, a silhouette at x 40..59.
  const w = 100
  const h = 20
  const mask = plane(w, h)
  for (let y = 0; y < h; y++) for (let x = 40; x < 60; x++) mask.data[y * w + x] = 1
  const backdrop = (amp: number) => {
    const data = new Uint8Array(w * h * 3)
    for (let i = 0; i < w * h; i++) {
      const v = 120 + (((i % w) % 2) * 2 - 1) * amp
      data.set([v, v + 10, v - 10], i * 3)
    }
    return { width: w, height: h, data }
  }
  const box = { x0: 30, y0: 0, width: 40, height: h }
  /** Spread of the red channel's detail inside the silhouette, and its mean size outside. */
  const measure = (d: Float32Array) => {
    const inside: number[] = []
    let outside = 0
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < box.width; x++) {
        const v = d[(y * box.width + x) * 3]!
        if (x + box.x0 >= 40 && x + box.x0 < 60) inside.push(v)
        else outside += Math.abs(v)
      }
    }
    const mean = inside.reduce((p, q) => p + q, 0) / inside.length
    const sd = Math.sqrt(inside.reduce((p, q) => p + (q - mean) ** 2, 0) / inside.length)
    return { sd, mean, outside }
  }

  it('carries the backdrop’s fine texture into the silhouette, mirrored from beside it', () => {
    const m = measure(backgroundDetail(backdrop(20), mask, box, 100))
    // The stripes are ±20 about their blur: the painted background gets that texture, unbiased.
    expect(m.sd).toBeGreaterThan(15)
    expect(Math.abs(m.mean)).toBeLessThan(3)
    expect(m.outside).toBe(0)
  })

  it('adds nothing on a plain backdrop', () => {
    const m = measure(backgroundDetail(backdrop(0), mask, box, 100))
    expect(m.sd).toBeLessThan(0.01)
    expect(Math.abs(m.mean)).toBeLessThan(0.01)
  })
})

describe('torsoLight', () => {
  // Shoulders (60, 40)–(140, 40), hips (75, 140)–(125, 140) on a 200 × 220 grid; the old garment lit
  // from the image left: its light falls from 1.2 to 0.8 across the torso.
  const w = 200
  const h = 220
  const P = Array.from({ length: 33 }, () => ({ x: 100, y: 100 }))
  P[LM.leftShoulder] = { x: 60, y: 40 }
  P[LM.rightShoulder] = { x: 140, y: 40 }
  P[LM.leftHip] = { x: 75, y: 140 }
  P[LM.rightHip] = { x: 125, y: 140 }
  const lum = plane(w, h)
  const fabric = plane(w, h)
  for (let y = 0; y < h; y++) {
    for (let x = 40; x < 160; x++) {
      lum.data[y * w + x] = 1.2 - (0.4 * (x - 40)) / 120
      fabric.data[y * w + x] = 1
    }
  }
  it('carries the old garment’s light across the midriff and rounds it at the sides', () => {
    const t = torsoLight(P, lum, fabric, 80)
    const at = (x: number, y: number) => y * w + x
    // In the band (half-way shoulders → hips, 90, down to the pelvis), lit side lighter.
    expect(t.light[at(70, 120)]!).toBeGreaterThan(1.05)
    expect(t.light[at(130, 120)]!).toBeLessThan(0.95)
    expect(t.round[at(100, 120)]!).toBeCloseTo(1, 2)
    expect(t.round[at(60, 120)]!).toBeLessThan(1 - 0.5 * TORSO_SHADE)
    // The chest above the band and the legs below it: untouched.
    expect(t.light[at(70, 60)]!).toBe(1)
    expect(t.round[at(60, 60)]!).toBe(1)
    expect(t.round[at(100, 200)]!).toBe(1)
    // No fabric in the band: the roundness alone.
    const none = torsoLight(P, lum, plane(w, h), 80)
    expect(none.light[at(70, 120)]!).toBe(1)
    expect(none.round[at(60, 120)]!).toBeLessThan(1)
  })
})
