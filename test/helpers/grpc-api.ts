/**
 * A real @grpc/grpc-js client of the gateway's internal gRPC API (proto/tailor/v1/tailor_api.proto),
 * and an independent decoder (protobufjs, from the published google.rpc definitions) of the
 * error details the gateway sends in `grpc-status-details-bin`.
 */
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import protobuf from 'protobufjs'
import { JOB_EVENTS_PROTO_INCLUDE_DIR, TAILOR_API_PROTO_PATH } from '@tailor/proto'
import type { ProtoGrpcType } from '@tailor/proto/gen/tailor_api.ts'
import type { CancelJobRequest } from '@tailor/proto/gen/tailor/v1/CancelJobRequest.ts'
import type { CancelJobResponse__Output } from '@tailor/proto/gen/tailor/v1/CancelJobResponse.ts'
import type { GetJobRequest } from '@tailor/proto/gen/tailor/v1/GetJobRequest.ts'
import type { Job__Output } from '@tailor/proto/gen/tailor/v1/Job.ts'
import type { RemoveVideoBackgroundRequest } from '@tailor/proto/gen/tailor/v1/RemoveVideoBackgroundRequest.ts'
import type { SubmitJobResponse__Output } from '@tailor/proto/gen/tailor/v1/SubmitJobResponse.ts'
import type { TryOnRequest } from '@tailor/proto/gen/tailor/v1/TryOnRequest.ts'
import type { TryOnResponse__Output } from '@tailor/proto/gen/tailor/v1/TryOnResponse.ts'
import type { TailorApiClient } from '@tailor/proto/gen/tailor/v1/TailorApi.ts'

export type WireJob = Job__Output

export async function openGrpcApiClient(addr: string): Promise<TailorApiClient> {
  const def = await protoLoader.load(TAILOR_API_PROTO_PATH, {
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [JOB_EVENTS_PROTO_INCLUDE_DIR],
  })
  const pkg = grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType
  return new pkg.tailor.v1.TailorApi(addr, grpc.credentials.createInsecure())
}

export const keyMetadata = (key: string | null): grpc.Metadata => {
  const md = new grpc.Metadata()
  if (key !== null) md.set('x-api-key', key)
  return md
}

/** The unary methods: request and answer types. */
interface Unary {
  TryOn: [TryOnRequest, TryOnResponse__Output]
  RemoveVideoBackground: [RemoveVideoBackgroundRequest, SubmitJobResponse__Output]
  GetJob: [GetJobRequest, Job__Output]
  CancelJob: [CancelJobRequest, CancelJobResponse__Output]
}

/** Calls a unary method with `key` in the metadata (none when null); rejects with the ServiceError. */
export function unary<M extends keyof Unary>(
  client: TailorApiClient,
  method: M,
  req: Unary[M][0],
  key: string | null,
): Promise<Unary[M][1]> {
  const fn = client[method] as unknown as (
    req: Unary[M][0],
    md: grpc.Metadata,
    cb: (err: grpc.ServiceError | null, res?: Unary[M][1]) => void,
  ) => unknown
  return new Promise((resolve, reject) => {
    fn.call(client, req, keyMetadata(key), (err, res) => (err ? reject(err) : resolve(res!)))
  })
}

/** The error a promise rejected with (fails the test when it resolved). */
export async function rejection(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    const v = await p
    throw new Error(`expected a gRPC error, got ${JSON.stringify(v)}`)
  } catch (err) {
    if ((err as grpc.ServiceError).code === undefined) throw err
    return err as grpc.ServiceError
  }
}

/** Follows WatchJob to its end: every Job message, then the final status. */
export function watchAll(
  client: TailorApiClient,
  jobId: string,
  key: string | null,
): Promise<{ jobs: WireJob[]; status: grpc.StatusObject }> {
  return new Promise((resolve) => {
    const jobs: WireJob[] = []
    const call = client.WatchJob({ jobId }, keyMetadata(key))
    call.on('data', (j: WireJob) => jobs.push(j))
    call.on('error', () => undefined) // the status arrives as 'status' too
    call.on('status', (status: grpc.StatusObject) => resolve({ jobs, status }))
  })
}

// The published google.rpc / google.protobuf messages the details use (field numbers as upstream).
const RPC_PROTO = `
syntax = "proto3";
package google.rpc;
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
message Duration { int64 seconds = 1; int32 nanos = 2; }
message RetryInfo { Duration retry_delay = 1; }
`
const rpc = protobuf.parse(RPC_PROTO).root

export interface DecodedDetails {
  code: number
  message: string
  errorInfo: { reason: string; domain: string; metadata: Record<string, string> } | null
  retryDelayS: number | null
  typeUrls: string[]
}

/** google.rpc.Status from an error's `grpc-status-details-bin`. */
export function decodeDetails(err: grpc.ServiceError): DecodedDetails {
  const bin = err.metadata.get('grpc-status-details-bin')[0]
  if (!(bin instanceof Buffer)) throw new Error('no grpc-status-details-bin in the error metadata')
  const st = rpc
    .lookupType('google.rpc.Status')
    .toObject(rpc.lookupType('google.rpc.Status').decode(bin), {
      longs: Number,
      defaults: true,
    }) as {
    code: number
    message: string
    details: { typeUrl: string; value: Uint8Array }[]
  }
  let errorInfo: DecodedDetails['errorInfo'] = null
  let retryDelayS: number | null = null
  for (const d of st.details) {
    if (d.typeUrl === 'type.googleapis.com/google.rpc.ErrorInfo') {
      const T = rpc.lookupType('google.rpc.ErrorInfo')
      errorInfo = T.toObject(T.decode(d.value), { defaults: true }) as NonNullable<
        DecodedDetails['errorInfo']
      >
    }
    if (d.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo') {
      const T = rpc.lookupType('google.rpc.RetryInfo')
      retryDelayS = (
        T.toObject(T.decode(d.value), { longs: Number, defaults: true }) as {
          retryDelay: { seconds: number }
        }
      ).retryDelay.seconds
    }
  }
  return {
    code: st.code,
    message: st.message,
    errorInfo,
    retryDelayS,
    typeUrls: st.details.map((d) => d.typeUrl),
  }
}

/** What a client reads of an error: status, sentence, `error-code` metadata and the ErrorInfo reason. */
export function describeError(err: grpc.ServiceError): {
  code: grpc.status
  details: string
  errorCode: unknown
  reason: string | undefined
  domain: string | undefined
} {
  const d = decodeDetails(err)
  return {
    code: err.code,
    details: err.details,
    errorCode: err.metadata.get('error-code')[0],
    reason: d.errorInfo?.reason,
    domain: d.errorInfo?.domain,
  }
}
