// Original file: inference/v1/job_events.proto

import type { Running as _inference_v1_Running, Running__Output as _inference_v1_Running__Output } from '../../inference/v1/Running.ts';
import type { Progress as _inference_v1_Progress, Progress__Output as _inference_v1_Progress__Output } from '../../inference/v1/Progress.ts';
import type { Completed as _inference_v1_Completed, Completed__Output as _inference_v1_Completed__Output } from '../../inference/v1/Completed.ts';
import type { Failed as _inference_v1_Failed, Failed__Output as _inference_v1_Failed__Output } from '../../inference/v1/Failed.ts';
import type { Long } from '@grpc/proto-loader';

export interface JobEvent {
  'seq'?: (number | string | Long);
  'jobId'?: (string);
  'workerId'?: (string);
  'running'?: (_inference_v1_Running | null);
  'progress'?: (_inference_v1_Progress | null);
  'completed'?: (_inference_v1_Completed | null);
  'failed'?: (_inference_v1_Failed | null);
  'event'?: "running"|"progress"|"completed"|"failed";
}

export interface JobEvent__Output {
  'seq': (number);
  'jobId': (string);
  'workerId': (string);
  'running'?: (_inference_v1_Running__Output | null);
  'progress'?: (_inference_v1_Progress__Output | null);
  'completed'?: (_inference_v1_Completed__Output | null);
  'failed'?: (_inference_v1_Failed__Output | null);
  'event'?: "running"|"progress"|"completed"|"failed";
}
