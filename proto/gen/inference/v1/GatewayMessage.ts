// Original file: inference/v1/job_events.proto

import type { EventAck as _inference_v1_EventAck, EventAck__Output as _inference_v1_EventAck__Output } from '../../inference/v1/EventAck.ts';
import type { CancelJob as _inference_v1_CancelJob, CancelJob__Output as _inference_v1_CancelJob__Output } from '../../inference/v1/CancelJob.ts';

export interface GatewayMessage {
  'ack'?: (_inference_v1_EventAck | null);
  'cancel'?: (_inference_v1_CancelJob | null);
  'message'?: "ack"|"cancel";
}

export interface GatewayMessage__Output {
  'ack'?: (_inference_v1_EventAck__Output | null);
  'cancel'?: (_inference_v1_CancelJob__Output | null);
  'message'?: "ack"|"cancel";
}
