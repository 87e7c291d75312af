// Original file: tailor/v1/tailor_api.proto


export interface WatchJobRequest {
  'jobId'?: (string);
}

export interface WatchJobRequest__Output {
  'jobId': (string);
}
