/**
 * The byte graphs' tail as built by `pnpm models` (models/dist): which full-resolution work the
 * refined rgb graphs do. Their bytes against post.ts's composite are checked by
 * services/inference/src/engine/rvm/composite-graph.test.ts.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DIST_DIR } from '../reference/ort-runner.ts'
import { opCountsOf } from './graph-report.ts'

const ops = (name: string): Record<string, number> =>
  opCountsOf(readFileSync(path.join(DIST_DIR, `${name}.onnx`)))

describe('rvm-rgb / rvm-int8-rgb / rvm-rgba / rvm-int8-rgba (refined): the foreground at the edge pixels only', () => {
  it.each(['rvm-rgb', 'rvm-int8-rgb', 'rvm-rgba', 'rvm-int8-rgba'])(
    '%s upsamples only alpha at full resolution and gathers/scatters the edge pixels',
    (name) => {
      const got = ops(name)
      // edgeOnlyComposite: one NonZero listing the edge pixels, one ScatterND writing their bytes.
      expect(got['NonZero']).toBe(1)
      expect(got['ScatterND']).toBe(1)
      // rvm (planar fgr + pha) upsamples A and b for fgr (3 channels) and alpha (1) to the
      // frame's size; the edge-only graph only alpha's two, the network's own Resizes being the same.
      expect((ops('rvm')['Resize'] ?? 0) - (got['Resize'] ?? 0)).toBe(2)
    },
  )
  it('rvm-rgba lists the alpha-0 pixels beside a visible one too (one 3×3 MaxPool of alpha)', () => {
    // The network's own MaxPools are rvm's; the rgba tail adds one (post.ts compositeRgba's ring).
    expect((ops('rvm-rgba')['MaxPool'] ?? 0) - (ops('rvm')['MaxPool'] ?? 0)).toBe(1)
    expect((ops('rvm-ratio1-rgba')['MaxPool'] ?? 0) - (ops('rvm-ratio1')['MaxPool'] ?? 0)).toBe(1)
  })
})
