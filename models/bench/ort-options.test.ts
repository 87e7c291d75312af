import { describe, expect, it } from 'vitest'
import { describeOptions, parseOrtOptions } from './ort-options.ts'

describe('parseOrtOptions', () => {
  it('reads every tunable key', () => {
    expect(
      parseOrtOptions(
        'intraOpNumThreads=2, interOpNumThreads=1,graphOptimizationLevel=extended,enableCpuMemArena=false,enableMemPattern=true,executionMode=parallel,allowSpinning=false',
      ),
    ).toEqual({
      intraOpNumThreads: 2,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'extended',
      enableCpuMemArena: false,
      enableMemPattern: true,
      executionMode: 'parallel',
      allowSpinning: false,
    })
  })
  it('treats an empty spec as the defaults', () => {
    expect(parseOrtOptions('')).toEqual({})
    expect(describeOptions({})).toBe('defaults')
  })
  it('rejects unknown keys and bad values, naming them', () => {
    expect(() => parseOrtOptions('threads=2')).toThrow(/unknown option threads/)
    expect(() => parseOrtOptions('graphOptimizationLevel=max')).toThrow(
      /disabled\|basic\|extended\|all/,
    )
    expect(() => parseOrtOptions('enableCpuMemArena=no')).toThrow(/true or false/)
    expect(() => parseOrtOptions('intraOpNumThreads=-1')).toThrow(/non-negative integer/)
  })
  it('describes a set the way it is written', () => {
    expect(describeOptions({ intraOpNumThreads: 2, enableMemPattern: false })).toBe(
      'intraOpNumThreads=2,enableMemPattern=false',
    )
  })
})
