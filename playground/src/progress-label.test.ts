import { describe, expect, it } from 'vitest'
import { progressLabel } from './progress-label.ts'

describe('playground progress label', () => {
  it('shows the percentage while running, the status otherwise, and names a retry', () => {
    expect(progressLabel({ status: 'pending', progress: 0, attempt: 0 })).toBe('pending')
    expect(progressLabel({ status: 'running', progress: 0.404, attempt: 1 })).toBe('40 %')
    expect(progressLabel({ status: 'running', progress: 0, attempt: 2 })).toBe(
      '0 % (attempt 2: started again)',
    )
    expect(progressLabel({ status: 'completed', progress: 1, attempt: 2 })).toBe(
      'completed (attempt 2: started again)',
    )
  })
})
