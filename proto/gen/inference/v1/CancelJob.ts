// Original file: inference/v1/job_events.proto


export interface CancelJob {
  'jobId'?: (string);
}

export interface CancelJob__Output {
  'jobId': (string);
}
