import { status } from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'
import { AppError, ERROR_CODES } from '@tailor/proto'
import { encodeStatusDetails, GRPC_STATUS, toServiceError } from './api-grpc-errors.ts'

describe('gRPC error edge', () => {
  it('maps every public error code to a gRPC status (never OK or UNKNOWN)', () => {
    for (const code of ERROR_CODES) {
      expect(GRPC_STATUS[code], code).toBeGreaterThan(status.OK)
      expect(GRPC_STATUS[code], code).not.toBe(status.UNKNOWN)
    }
    expect(GRPC_STATUS).toMatchObject({
      invalid_parameter: status.INVALID_ARGUMENT,
      missing_parameter: status.INVALID_ARGUMENT,
      invalid_auth_token: status.UNAUTHENTICATED,
      not_found: status.NOT_FOUND,
      job_finished: status.FAILED_PRECONDITION,
      rate_limit_exceeded: status.RESOURCE_EXHAUSTED,
      service_unavailable: status.UNAVAILABLE,
      unexpected_error: status.INTERNAL,
    })
  })

  it('answers the status, the sentence and the code in metadata; hides unexpected errors as HTTP does', () => {
    const { error } = toServiceError(new AppError('job_finished', 'Job x has already finished.'), {
      jobId: 'x',
    })
    expect(error.code).toBe(status.FAILED_PRECONDITION)
    expect(error.details).toBe('Job x has already finished.')
    expect(error.metadata?.get('error-code')).toEqual(['job_finished'])
    expect(error.metadata?.get('job-id')).toEqual(['x'])
    const hidden = toServiceError(new Error('ECONNRESET at 10.1.2.3')).error
    expect(hidden).toMatchObject({
      code: status.INTERNAL,
      details: 'An unexpected error occurred; try again later.',
    })
    const limited = toServiceError(new AppError('rate_limit_exceeded', 'slow down'), {
      retryAfterS: 1.2,
    }).error
    expect(limited.code).toBe(status.RESOURCE_EXHAUSTED)
    expect(limited.metadata?.get('retry-after')).toEqual(['2'])
  })

  it('encodes google.rpc.Status with an ErrorInfo (wire bytes checked by hand)', () => {
    const b = encodeStatusDetails(status.NOT_FOUND, 'no', 'not_found')
    const typeUrl = 'type.googleapis.com/google.rpc.ErrorInfo'
    const info = Buffer.concat([
      Buffer.from([0x0a, 9]),
      Buffer.from('not_found'),
      Buffer.from([0x12, 6]),
      Buffer.from('tailor'),
    ])
    const any = Buffer.concat([
      Buffer.from([0x0a, typeUrl.length]),
      Buffer.from(typeUrl),
      Buffer.from([0x12, info.length]),
      info,
    ])
    const expected = Buffer.concat([
      Buffer.from([0x08, 5, 0x12, 2]),
      Buffer.from('no'),
      Buffer.from([0x1a, any.length]),
      any,
    ])
    expect(b.toString('hex')).toBe(expected.toString('hex'))
  })
})
