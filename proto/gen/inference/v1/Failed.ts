// Original file: inference/v1/job_events.proto


export interface Failed {
  'errorCode'?: (string);
  'message'?: (string);
}

export interface Failed__Output {
  'errorCode': (string);
  'message': (string);
}
