// Original file: inference/v1/job_events.proto


export interface Running {
  'attempt'?: (number);
}

export interface Running__Output {
  'attempt': (number);
}
