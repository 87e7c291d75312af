// Original file: inference/v1/job_events.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GatewayMessage as _inference_v1_GatewayMessage, GatewayMessage__Output as _inference_v1_GatewayMessage__Output } from '../../inference/v1/GatewayMessage.ts';
import type { JobEvent as _inference_v1_JobEvent, JobEvent__Output as _inference_v1_JobEvent__Output } from '../../inference/v1/JobEvent.ts';

export interface JobEventsClient extends grpc.Client {
  Connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_inference_v1_JobEvent, _inference_v1_GatewayMessage__Output>;
  Connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_inference_v1_JobEvent, _inference_v1_GatewayMessage__Output>;
  connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_inference_v1_JobEvent, _inference_v1_GatewayMessage__Output>;
  connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_inference_v1_JobEvent, _inference_v1_GatewayMessage__Output>;
  
}

export interface JobEventsHandlers extends grpc.UntypedServiceImplementation {
  Connect: grpc.handleBidiStreamingCall<_inference_v1_JobEvent__Output, _inference_v1_GatewayMessage>;
  
}

export interface JobEventsDefinition extends grpc.ServiceDefinition {
  Connect: MethodDefinition<_inference_v1_JobEvent, _inference_v1_GatewayMessage, _inference_v1_JobEvent__Output, _inference_v1_GatewayMessage__Output>
}
