// Original file: tailor/v1/tailor_api.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CancelJobRequest as _tailor_v1_CancelJobRequest, CancelJobRequest__Output as _tailor_v1_CancelJobRequest__Output } from '../../tailor/v1/CancelJobRequest.ts';
import type { CancelJobResponse as _tailor_v1_CancelJobResponse, CancelJobResponse__Output as _tailor_v1_CancelJobResponse__Output } from '../../tailor/v1/CancelJobResponse.ts';
import type { GetJobRequest as _tailor_v1_GetJobRequest, GetJobRequest__Output as _tailor_v1_GetJobRequest__Output } from '../../tailor/v1/GetJobRequest.ts';
import type { Job as _tailor_v1_Job, Job__Output as _tailor_v1_Job__Output } from '../../tailor/v1/Job.ts';
import type { RemoveVideoBackgroundRequest as _tailor_v1_RemoveVideoBackgroundRequest, RemoveVideoBackgroundRequest__Output as _tailor_v1_RemoveVideoBackgroundRequest__Output } from '../../tailor/v1/RemoveVideoBackgroundRequest.ts';
import type { SubmitJobResponse as _tailor_v1_SubmitJobResponse, SubmitJobResponse__Output as _tailor_v1_SubmitJobResponse__Output } from '../../tailor/v1/SubmitJobResponse.ts';
import type { TryOnRequest as _tailor_v1_TryOnRequest, TryOnRequest__Output as _tailor_v1_TryOnRequest__Output } from '../../tailor/v1/TryOnRequest.ts';
import type { TryOnResponse as _tailor_v1_TryOnResponse, TryOnResponse__Output as _tailor_v1_TryOnResponse__Output } from '../../tailor/v1/TryOnResponse.ts';
import type { WatchJobRequest as _tailor_v1_WatchJobRequest, WatchJobRequest__Output as _tailor_v1_WatchJobRequest__Output } from '../../tailor/v1/WatchJobRequest.ts';

export interface TailorApiClient extends grpc.Client {
  CancelJob(argument: _tailor_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _tailor_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _tailor_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _tailor_v1_CancelJobRequest, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _tailor_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _tailor_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _tailor_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _tailor_v1_CancelJobRequest, callback: grpc.requestCallback<_tailor_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  
  GetJob(argument: _tailor_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _tailor_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _tailor_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _tailor_v1_GetJobRequest, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  getJob(argument: _tailor_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  getJob(argument: _tailor_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  getJob(argument: _tailor_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  getJob(argument: _tailor_v1_GetJobRequest, callback: grpc.requestCallback<_tailor_v1_Job__Output>): grpc.ClientUnaryCall;
  
  RemoveVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  RemoveVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  RemoveVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  RemoveVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  removeVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  removeVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  removeVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  removeVideoBackground(argument: _tailor_v1_RemoveVideoBackgroundRequest, callback: grpc.requestCallback<_tailor_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  
  TryOn(argument: _tailor_v1_TryOnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  TryOn(argument: _tailor_v1_TryOnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  TryOn(argument: _tailor_v1_TryOnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  TryOn(argument: _tailor_v1_TryOnRequest, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  tryOn(argument: _tailor_v1_TryOnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  tryOn(argument: _tailor_v1_TryOnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  tryOn(argument: _tailor_v1_TryOnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  tryOn(argument: _tailor_v1_TryOnRequest, callback: grpc.requestCallback<_tailor_v1_TryOnResponse__Output>): grpc.ClientUnaryCall;
  
  WatchJob(argument: _tailor_v1_WatchJobRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_tailor_v1_Job__Output>;
  WatchJob(argument: _tailor_v1_WatchJobRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_tailor_v1_Job__Output>;
  watchJob(argument: _tailor_v1_WatchJobRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_tailor_v1_Job__Output>;
  watchJob(argument: _tailor_v1_WatchJobRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_tailor_v1_Job__Output>;
  
}

export interface TailorApiHandlers extends grpc.UntypedServiceImplementation {
  CancelJob: grpc.handleUnaryCall<_tailor_v1_CancelJobRequest__Output, _tailor_v1_CancelJobResponse>;
  
  GetJob: grpc.handleUnaryCall<_tailor_v1_GetJobRequest__Output, _tailor_v1_Job>;
  
  RemoveVideoBackground: grpc.handleUnaryCall<_tailor_v1_RemoveVideoBackgroundRequest__Output, _tailor_v1_SubmitJobResponse>;
  
  TryOn: grpc.handleUnaryCall<_tailor_v1_TryOnRequest__Output, _tailor_v1_TryOnResponse>;
  
  WatchJob: grpc.handleServerStreamingCall<_tailor_v1_WatchJobRequest__Output, _tailor_v1_Job>;
  
}

export interface TailorApiDefinition extends grpc.ServiceDefinition {
  CancelJob: MethodDefinition<_tailor_v1_CancelJobRequest, _tailor_v1_CancelJobResponse, _tailor_v1_CancelJobRequest__Output, _tailor_v1_CancelJobResponse__Output>
  GetJob: MethodDefinition<_tailor_v1_GetJobRequest, _tailor_v1_Job, _tailor_v1_GetJobRequest__Output, _tailor_v1_Job__Output>
  RemoveVideoBackground: MethodDefinition<_tailor_v1_RemoveVideoBackgroundRequest, _tailor_v1_SubmitJobResponse, _tailor_v1_RemoveVideoBackgroundRequest__Output, _tailor_v1_SubmitJobResponse__Output>
  TryOn: MethodDefinition<_tailor_v1_TryOnRequest, _tailor_v1_TryOnResponse, _tailor_v1_TryOnRequest__Output, _tailor_v1_TryOnResponse__Output>
  WatchJob: MethodDefinition<_tailor_v1_WatchJobRequest, _tailor_v1_Job, _tailor_v1_WatchJobRequest__Output, _tailor_v1_Job__Output>
}
