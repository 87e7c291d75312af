// Original file: tailor/v1/tailor_api.proto


export interface CancelJobRequest {
  'jobId'?: (string);
}

export interface CancelJobRequest__Output {
  'jobId': (string);
}
