import { z } from 'zod'

const Tensor = z.object({
  name: z.string(),
  dtype: z.enum(['float32', 'int32', 'uint8']),
  dims: z.array(z.union([z.number().int(), z.string()])),
  layout: z.enum(['NHWC', 'NCHW']).optional(),
})

export const ManifestModel = z.object({
  name: z.string(),
  file: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().positive(),
  buildKey: z.string(),
  source: z.object({
    package: z.string(),
    version: z.string(),
    integrity: z.string().nullable(),
    files: z.array(z.string()),
  }),
  origin: z.string(),
  licence: z.string(),
  inputs: z.array(
    Tensor.extend({
      normalization: z.string(),
      range: z.tuple([z.number(), z.number()]).optional(),
    }),
  ),
  outputs: z.array(
    Tensor.extend({
      meaning: z.string(),
      tolerance: z.number().positive().optional(),
      meanTolerance: z.number().positive().optional(),
      toleranceWhy: z.string().optional(),
    }),
  ),
  onnxNodeCount: z.number().int(),
  onnxOpCounts: z.record(z.string(), z.number().int()),
  /** onnxruntime's graph after its own optimisation ('extended' level) */
  ortOptimized: z.object({
    level: z.literal('extended'),
    nodeCount: z.number().int(),
    opCounts: z.record(z.string(), z.number().int()),
    transposePairs: z.number().int(),
    transposeSandwichedConvs: z.number().int(),
    transposes: z.number().int(),
  }),
})
export type ManifestModel = z.infer<typeof ManifestModel>

export const Manifest = z.object({
  schemaVersion: z.literal(1),
  opset: z.number().int(),
  source: z.object({ name: z.string(), version: z.string(), integrity: z.string().nullable() }),
  models: z.array(ManifestModel),
})
export type Manifest = z.infer<typeof Manifest>
