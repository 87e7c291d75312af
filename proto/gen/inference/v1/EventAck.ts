// Original file: inference/v1/job_events.proto

import type { Long } from '@grpc/proto-loader';

export interface EventAck {
  'seq'?: (number | string | Long);
  'cancelled'?: (boolean);
}

export interface EventAck__Output {
  'seq': (number);
  'cancelled': (boolean);
}
