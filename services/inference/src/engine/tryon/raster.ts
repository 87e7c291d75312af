/**
 * Small raster helpers on plain typed arrays (no sharp, no onnxruntime): single-channel planes,
 * separable box blur, bilinear sampling, morphology and connected components. Every plane is
 * row-major, `width * height` long.
 */

export interface Plane {
  width: number
  height: number
  data: Float32Array
}

export interface Rgb {
  width: number
  height: number
  /** w·h·3 bytes, RGB. */
  data: Uint8Array
}

export interface Point {
  x: number
  y: number
}

export const plane = (width: number, height: number, fill = 0): Plane => {
  const data = new Float32Array(width * height)
  if (fill !== 0) data.fill(fill)
  return { width, height, data }
}

export const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v)
export const lerp = (a: Point, b: Point, t: number): Point => ({
  x: a.x + (b.x - a.x) * t,
  y: a.y + (b.y - a.y) * t,
})
export const dist = (a: Point, b: Point): number => Math.hypot(a.x - b.x, a.y - b.y)
export const mid = (a: Point, b: Point): Point => lerp(a, b, 0.5)
export const sub = (a: Point, b: Point): Point => ({ x: a.x - b.x, y: a.y - b.y })
export const add = (a: Point, b: Point): Point => ({ x: a.x + b.x, y: a.y + b.y })
export const mul = (a: Point, k: number): Point => ({ x: a.x * k, y: a.y * k })
export const dot = (a: Point, b: Point): number => a.x * b.x + a.y * b.y
export const norm = (a: Point): Point => {
  const l = Math.hypot(a.x, a.y) || 1
  return { x: a.x / l, y: a.y / l }
}
/** Perpendicular pointing "down" when a points right (image coordinates). */
export const perp = (a: Point): Point => ({ x: -a.y, y: a.x })

/**
 * Separable box blur of radius r (window 2r+1), edges clamped. Returns a new plane. Both passes run
 * along rows (the vertical one keeps a running sum per column), so memory is read in order.
 */
export function boxBlur(src: Plane, r: number): Plane {
  const { width: w, height: h } = src
  const ri = Math.max(0, Math.round(r))
  if (ri === 0) return { width: w, height: h, data: src.data.slice() }
  const s = src.data
  const tmp = new Float32Array(w * h)
  const out = new Float32Array(w * h)
  const norm = 1 / (2 * ri + 1)
  for (let y = 0; y < h; y++) {
    const row = y * w
    let acc = 0
    for (let k = -ri; k <= ri; k++) acc += s[row + (k < 0 ? 0 : k > w - 1 ? w - 1 : k)]!
    // Interior columns need no clamping.
    const xa = Math.min(w, ri)
    const xb = Math.max(xa, w - ri - 1)
    let x = 0
    for (; x < xa; x++) {
      tmp[row + x] = acc * norm
      acc += s[row + Math.min(x + ri + 1, w - 1)]! - s[row + Math.max(x - ri, 0)]!
    }
    for (; x < xb; x++) {
      tmp[row + x] = acc * norm
      acc += s[row + x + ri + 1]! - s[row + x - ri]!
    }
    for (; x < w; x++) {
      tmp[row + x] = acc * norm
      acc += s[row + Math.min(x + ri + 1, w - 1)]! - s[row + Math.max(x - ri, 0)]!
    }
  }
  // Vertical: one running sum per column (doubles, added in the same order as column by column).
  const acc = new Float64Array(w)
  for (let k = -ri; k <= ri; k++) {
    const row = (k < 0 ? 0 : k > h - 1 ? h - 1 : k) * w
    for (let x = 0; x < w; x++) acc[x] = acc[x]! + tmp[row + x]!
  }
  for (let y = 0; y < h; y++) {
    const row = y * w
    const add = Math.min(y + ri + 1, h - 1) * w
    const drop = Math.max(y - ri, 0) * w
    for (let x = 0; x < w; x++) {
      const a = acc[x]!
      out[row + x] = a * norm
      acc[x] = a + (tmp[add + x]! - tmp[drop + x]!)
    }
  }
  return { width: w, height: h, data: out }
}

/** The box of a plane's non-zero pixels, or null when it is all zero. */
export function nonZeroBox(
  p: Plane,
): { x0: number; y0: number; width: number; height: number } | null {
  const { width: w, height: h, data } = p
  let x0 = w
  let y0 = -1
  let x1 = -1
  let y1 = -1
  for (let y = 0; y < h; y++) {
    const row = y * w
    let a = -1
    for (let x = 0; x < w; x++) {
      if (data[row + x] !== 0) {
        a = x
        break
      }
    }
    if (a < 0) continue
    let b = a
    for (let x = w - 1; x > a; x--) {
      if (data[row + x] !== 0) {
        b = x
        break
      }
    }
    if (y0 < 0) y0 = y
    y1 = y
    if (a < x0) x0 = a
    if (b > x1) x1 = b
  }
  return y0 < 0 ? null : { x0, y0, width: x1 - x0 + 1, height: y1 - y0 + 1 }
}

/** Binary dilation by a square of radius r (via a box blur): values > 0.5 count as set. */
export function dilate(src: Plane, r: number): Plane {
  const b = boxBlur(threshold(src, 0.5), r)
  const eps = 0.5 / (2 * Math.round(r) + 1) ** 2
  for (let i = 0; i < b.data.length; i++) b.data[i] = b.data[i]! > eps ? 1 : 0
  return b
}

/** Binary erosion by a square of radius r. */
export function erode(src: Plane, r: number): Plane {
  const b = boxBlur(threshold(src, 0.5), r)
  const eps = 1 - 0.5 / (2 * Math.round(r) + 1) ** 2
  for (let i = 0; i < b.data.length; i++) b.data[i] = b.data[i]! >= eps ? 1 : 0
  return b
}

export function threshold(src: Plane, t: number): Plane {
  const out = new Float32Array(src.data.length)
  for (let i = 0; i < out.length; i++) out[i] = src.data[i]! > t ? 1 : 0
  return { width: src.width, height: src.height, data: out }
}

/** Bilinear sample of a plane at (x, y) in pixel-centre coordinates; outside → edge value. */
export function sample(p: Plane, x: number, y: number): number {
  const fx = clamp(x, 0, p.width - 1)
  const fy = clamp(y, 0, p.height - 1)
  const x0 = Math.floor(fx)
  const y0 = Math.floor(fy)
  const x1 = Math.min(x0 + 1, p.width - 1)
  const y1 = Math.min(y0 + 1, p.height - 1)
  const ax = fx - x0
  const ay = fy - y0
  const d = p.data
  const w = p.width
  const top = d[y0 * w + x0]! * (1 - ax) + d[y0 * w + x1]! * ax
  const bot = d[y1 * w + x0]! * (1 - ax) + d[y1 * w + x1]! * ax
  return top * (1 - ay) + bot * ay
}

/** Bilinear resize of a plane (align-corners false, like tf.image.resizeBilinear with half pixels). */
export function resizePlane(src: Plane, width: number, height: number): Plane {
  const out = new Float32Array(width * height)
  const sx = src.width / width
  const sy = src.height / height
  const { width: w, height: h, data: d } = src
  // `sample` at each pixel, with the per-column terms computed once.
  const xi0 = new Int32Array(width)
  const xi1 = new Int32Array(width)
  const xa = new Float64Array(width)
  for (let x = 0; x < width; x++) {
    const fx = clamp((x + 0.5) * sx - 0.5, 0, w - 1)
    xi0[x] = Math.floor(fx)
    xi1[x] = Math.min(xi0[x]! + 1, w - 1)
    xa[x] = fx - xi0[x]!
  }
  for (let y = 0; y < height; y++) {
    const fy = clamp((y + 0.5) * sy - 0.5, 0, h - 1)
    const y0 = Math.floor(fy)
    const r0 = y0 * w
    const r1 = Math.min(y0 + 1, h - 1) * w
    const ay = fy - y0
    const row = y * width
    for (let x = 0; x < width; x++) {
      const x0 = xi0[x]!
      const x1 = xi1[x]!
      const ax = xa[x]!
      const top = d[r0 + x0]! * (1 - ax) + d[r0 + x1]! * ax
      const bot = d[r1 + x0]! * (1 - ax) + d[r1 + x1]! * ax
      out[row + x] = top * (1 - ay) + bot * ay
    }
  }
  return { width, height, data: out }
}

/**
 * 4-connected components of the set pixels (> 0.5). Returns per-pixel labels (0 = unset, 1…n)
 * and each label's pixel count (index 0 unused).
 */
export function components(src: Plane): { labels: Int32Array; sizes: number[] } {
  const { width: w, height: h } = src
  const labels = new Int32Array(w * h)
  const sizes = [0]
  const stack = new Int32Array(w * h)
  let next = 1
  for (let i = 0; i < w * h; i++) {
    if (labels[i] !== 0 || src.data[i]! <= 0.5) continue
    let sp = 0
    stack[sp++] = i
    labels[i] = next
    let count = 0
    while (sp > 0) {
      const p = stack[--sp]!
      count++
      const x = p % w
      const y = (p - x) / w
      if (x > 0 && labels[p - 1] === 0 && src.data[p - 1]! > 0.5) {
        ;((labels[p - 1] = next), (stack[sp++] = p - 1))
      }
      if (x < w - 1 && labels[p + 1] === 0 && src.data[p + 1]! > 0.5) {
        ;((labels[p + 1] = next), (stack[sp++] = p + 1))
      }
      if (y > 0 && labels[p - w] === 0 && src.data[p - w]! > 0.5) {
        ;((labels[p - w] = next), (stack[sp++] = p - w))
      }
      if (y < h - 1 && labels[p + w] === 0 && src.data[p + w]! > 0.5) {
        ;((labels[p + w] = next), (stack[sp++] = p + w))
      }
    }
    sizes.push(count)
    next++
  }
  return { labels, sizes }
}

/** Luma (0..1) of an RGB image. */
export function luma(img: Rgb): Plane {
  const n = img.width * img.height
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    out[i] =
      (0.299 * img.data[i * 3]! + 0.587 * img.data[i * 3 + 1]! + 0.114 * img.data[i * 3 + 2]!) / 255
  }
  return { width: img.width, height: img.height, data: out }
}

/** Adds a filled capsule (segment a–b with radius r) to a plane, max-combined, with a 1 px soft edge. */
export function drawCapsule(p: Plane, a: Point, b: Point, r: number, value = 1): void {
  const x0 = Math.max(0, Math.floor(Math.min(a.x, b.x) - r - 1))
  const x1 = Math.min(p.width - 1, Math.ceil(Math.max(a.x, b.x) + r + 1))
  const y0 = Math.max(0, Math.floor(Math.min(a.y, b.y) - r - 1))
  const y1 = Math.min(p.height - 1, Math.ceil(Math.max(a.y, b.y) + r + 1))
  const dx = b.x - a.x
  const dy = b.y - a.y
  const len2 = dx * dx + dy * dy || 1e-9
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const t = clamp(((x - a.x) * dx + (y - a.y) * dy) / len2, 0, 1)
      const d = Math.hypot(x - (a.x + t * dx), y - (a.y + t * dy))
      const v = clamp(r + 0.5 - d, 0, 1) * value
      const i = y * p.width + x
      if (v > p.data[i]!) p.data[i] = v
    }
  }
}

/** Adds a filled ellipse (axis-aligned) to a plane, max-combined, with a 1 px soft edge. */
export function drawEllipse(p: Plane, c: Point, rx: number, ry: number, value = 1): void {
  const x0 = Math.max(0, Math.floor(c.x - rx - 1))
  const x1 = Math.min(p.width - 1, Math.ceil(c.x + rx + 1))
  const y0 = Math.max(0, Math.floor(c.y - ry - 1))
  const y1 = Math.min(p.height - 1, Math.ceil(c.y + ry + 1))
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const d = Math.hypot((x - c.x) / rx, (y - c.y) / ry)
      const v = clamp((1 - d) * Math.min(rx, ry) + 0.5, 0, 1) * value
      const i = y * p.width + x
      if (v > p.data[i]!) p.data[i] = v
    }
  }
}

/** Fills a convex or simple polygon (even-odd rule), max-combined. */
export function fillPolygon(p: Plane, pts: readonly Point[], value = 1): void {
  if (pts.length < 3) return
  const y0 = Math.max(0, Math.floor(Math.min(...pts.map((q) => q.y))))
  const y1 = Math.min(p.height - 1, Math.ceil(Math.max(...pts.map((q) => q.y))))
  const xs: number[] = []
  for (let y = y0; y <= y1; y++) {
    const yc = y + 0.5
    xs.length = 0
    for (let i = 0; i < pts.length; i++) {
      const a = pts[i]!
      const b = pts[(i + 1) % pts.length]!
      if ((a.y <= yc && b.y > yc) || (b.y <= yc && a.y > yc)) {
        xs.push(a.x + ((yc - a.y) / (b.y - a.y)) * (b.x - a.x))
      }
    }
    xs.sort((u, v) => u - v)
    for (let k = 0; k + 1 < xs.length; k += 2) {
      const xa = Math.max(0, Math.ceil(xs[k]! - 0.5))
      const xb = Math.min(p.width - 1, Math.floor(xs[k + 1]! - 0.5))
      for (let x = xa; x <= xb; x++) {
        const i = y * p.width + x
        if (value > p.data[i]!) p.data[i] = value
      }
    }
  }
}

/**
 * The upper median of `v` (the value a numeric sort puts at index `v.length >> 1`), by quickselect
 * in O(n) over a Float64Array copy (`v` is left as it is). NaN for an empty list.
 */
export function median(v: ArrayLike<number>, n = v.length): number {
  if (n === 0) return NaN
  const a = new Float64Array(n)
  for (let i = 0; i < n; i++) a[i] = v[i]!
  return selectInPlace(a, n >> 1)
}

/** The k-th smallest of `a` (0-based), reordering `a` (Hoare's quickselect, middle pivot). */
export function selectInPlace(a: Float64Array, k: number): number {
  let lo = 0
  let hi = a.length - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!
    let i = lo
    let j = hi
    while (i <= j) {
      while (a[i]! < pivot) i++
      while (a[j]! > pivot) j--
      if (i <= j) {
        const t = a[i]!
        a[i] = a[j]!
        a[j] = t
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return a[k]!
  }
  return a[k]!
}
