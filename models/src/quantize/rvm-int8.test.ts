/** The grouping of rvm's convolutions that the int8 sensitivity measurement and candidate use. */
import { describe, expect, it } from 'vitest'
import { rvmConvGroup, rvmInt8Selects } from './rvm-int8.ts'

const P = 'StatefulPartitionedCall/matting_network_wrapper/StatefulPartitionedCall/'

describe('rvm int8 groups', () => {
  it('groups convolutions by block and never quantizes the refiner', () => {
    expect(rvmConvGroup(`${P}mobile_net_v3_encoder/conv_bn_activation/batch_normalization/x`)).toBe(
      'encoder/stem',
    )
    expect(rvmConvGroup(`${P}mobile_net_v3_encoder/conv_bn_activation_45/bn/x`)).toBe(
      'encoder/last',
    )
    expect(rvmConvGroup(`${P}mobile_net_v3_encoder/inverted_residual_3/sequential_3/c/x`)).toBe(
      'encoder/inverted_residual_3',
    )
    expect(rvmConvGroup(`${P}recurrent_decoder/upsampling_block_1/conv_gru_2/conv2d_55/x`)).toBe(
      'decoder/upsampling_block_1/gru',
    )
    expect(rvmConvGroup(`${P}recurrent_decoder/output_block/sequential_19/c/x`)).toBe(
      'decoder/output_block',
    )
    expect(rvmConvGroup(`${P}cond_1/else/_663/cond_1/fast_guided_filter_refiner/box/x`)).toBeNull()
    expect(
      rvmInt8Selects(`${P}mobile_net_v3_encoder/conv_bn_activation/batch_normalization/x`),
    ).toBe(false)
    expect(rvmInt8Selects(`${P}recurrent_decoder/output_block/sequential_19/c/x`)).toBe(true)
  })
})
