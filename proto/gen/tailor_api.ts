import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CancelJobRequest as _tailor_v1_CancelJobRequest, CancelJobRequest__Output as _tailor_v1_CancelJobRequest__Output } from './tailor/v1/CancelJobRequest.ts';
import type { CancelJobResponse as _tailor_v1_CancelJobResponse, CancelJobResponse__Output as _tailor_v1_CancelJobResponse__Output } from './tailor/v1/CancelJobResponse.ts';
import type { GetJobRequest as _tailor_v1_GetJobRequest, GetJobRequest__Output as _tailor_v1_GetJobRequest__Output } from './tailor/v1/GetJobRequest.ts';
import type { Job as _tailor_v1_Job, Job__Output as _tailor_v1_Job__Output } from './tailor/v1/Job.ts';
import type { JobError as _tailor_v1_JobError, JobError__Output as _tailor_v1_JobError__Output } from './tailor/v1/JobError.ts';
import type { RemoveVideoBackgroundRequest as _tailor_v1_RemoveVideoBackgroundRequest, RemoveVideoBackgroundRequest__Output as _tailor_v1_RemoveVideoBackgroundRequest__Output } from './tailor/v1/RemoveVideoBackgroundRequest.ts';
import type { SubmitJobResponse as _tailor_v1_SubmitJobResponse, SubmitJobResponse__Output as _tailor_v1_SubmitJobResponse__Output } from './tailor/v1/SubmitJobResponse.ts';
import type { TailorApiClient as _tailor_v1_TailorApiClient, TailorApiDefinition as _tailor_v1_TailorApiDefinition } from './tailor/v1/TailorApi.ts';
import type { TryOnRequest as _tailor_v1_TryOnRequest, TryOnRequest__Output as _tailor_v1_TryOnRequest__Output } from './tailor/v1/TryOnRequest.ts';
import type { TryOnResponse as _tailor_v1_TryOnResponse, TryOnResponse__Output as _tailor_v1_TryOnResponse__Output } from './tailor/v1/TryOnResponse.ts';
import type { WatchJobRequest as _tailor_v1_WatchJobRequest, WatchJobRequest__Output as _tailor_v1_WatchJobRequest__Output } from './tailor/v1/WatchJobRequest.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  tailor: {
    v1: {
      CancelJobRequest: MessageTypeDefinition<_tailor_v1_CancelJobRequest, _tailor_v1_CancelJobRequest__Output>
      CancelJobResponse: MessageTypeDefinition<_tailor_v1_CancelJobResponse, _tailor_v1_CancelJobResponse__Output>
      GetJobRequest: MessageTypeDefinition<_tailor_v1_GetJobRequest, _tailor_v1_GetJobRequest__Output>
      Job: MessageTypeDefinition<_tailor_v1_Job, _tailor_v1_Job__Output>
      JobError: MessageTypeDefinition<_tailor_v1_JobError, _tailor_v1_JobError__Output>
      JobKind: EnumTypeDefinition
      JobStatus: EnumTypeDefinition
      RemoveVideoBackgroundRequest: MessageTypeDefinition<_tailor_v1_RemoveVideoBackgroundRequest, _tailor_v1_RemoveVideoBackgroundRequest__Output>
      SubmitJobResponse: MessageTypeDefinition<_tailor_v1_SubmitJobResponse, _tailor_v1_SubmitJobResponse__Output>
      TailorApi: SubtypeConstructor<typeof grpc.Client, _tailor_v1_TailorApiClient> & { service: _tailor_v1_TailorApiDefinition }
      TryOnRequest: MessageTypeDefinition<_tailor_v1_TryOnRequest, _tailor_v1_TryOnRequest__Output>
      TryOnResponse: MessageTypeDefinition<_tailor_v1_TryOnResponse, _tailor_v1_TryOnResponse__Output>
      WatchJobRequest: MessageTypeDefinition<_tailor_v1_WatchJobRequest, _tailor_v1_WatchJobRequest__Output>
    }
  }
}

