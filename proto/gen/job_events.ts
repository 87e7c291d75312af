import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CancelJob as _inference_v1_CancelJob, CancelJob__Output as _inference_v1_CancelJob__Output } from './inference/v1/CancelJob.ts';
import type { Completed as _inference_v1_Completed, Completed__Output as _inference_v1_Completed__Output } from './inference/v1/Completed.ts';
import type { EventAck as _inference_v1_EventAck, EventAck__Output as _inference_v1_EventAck__Output } from './inference/v1/EventAck.ts';
import type { Failed as _inference_v1_Failed, Failed__Output as _inference_v1_Failed__Output } from './inference/v1/Failed.ts';
import type { GatewayMessage as _inference_v1_GatewayMessage, GatewayMessage__Output as _inference_v1_GatewayMessage__Output } from './inference/v1/GatewayMessage.ts';
import type { JobEvent as _inference_v1_JobEvent, JobEvent__Output as _inference_v1_JobEvent__Output } from './inference/v1/JobEvent.ts';
import type { JobEventsClient as _inference_v1_JobEventsClient, JobEventsDefinition as _inference_v1_JobEventsDefinition } from './inference/v1/JobEvents.ts';
import type { Progress as _inference_v1_Progress, Progress__Output as _inference_v1_Progress__Output } from './inference/v1/Progress.ts';
import type { Running as _inference_v1_Running, Running__Output as _inference_v1_Running__Output } from './inference/v1/Running.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  inference: {
    v1: {
      CancelJob: MessageTypeDefinition<_inference_v1_CancelJob, _inference_v1_CancelJob__Output>
      Completed: MessageTypeDefinition<_inference_v1_Completed, _inference_v1_Completed__Output>
      EventAck: MessageTypeDefinition<_inference_v1_EventAck, _inference_v1_EventAck__Output>
      Failed: MessageTypeDefinition<_inference_v1_Failed, _inference_v1_Failed__Output>
      GatewayMessage: MessageTypeDefinition<_inference_v1_GatewayMessage, _inference_v1_GatewayMessage__Output>
      JobEvent: MessageTypeDefinition<_inference_v1_JobEvent, _inference_v1_JobEvent__Output>
      JobEvents: SubtypeConstructor<typeof grpc.Client, _inference_v1_JobEventsClient> & { service: _inference_v1_JobEventsDefinition }
      Progress: MessageTypeDefinition<_inference_v1_Progress, _inference_v1_Progress__Output>
      Running: MessageTypeDefinition<_inference_v1_Running, _inference_v1_Running__Output>
    }
  }
}

