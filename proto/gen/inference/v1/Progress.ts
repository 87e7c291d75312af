// Original file: inference/v1/job_events.proto


export interface Progress {
  'framesDone'?: (number);
  'framesTotal'?: (number);
  'attempt'?: (number);
}

export interface Progress__Output {
  'framesDone': (number);
  'framesTotal': (number);
  'attempt': (number);
}
