// Original file: inference/v1/job_events.proto

import type { Long } from '@grpc/proto-loader';

export interface Completed {
  'resultKey'?: (string);
  'contentType'?: (string);
  'bytes'?: (number | string | Long);
  'frames'?: (number);
}

export interface Completed__Output {
  'resultKey': (string);
  'contentType': (string);
  'bytes': (number);
  'frames': (number);
}
