// Original file: tailor/v1/tailor_api.proto


export interface GetJobRequest {
  'jobId'?: (string);
}

export interface GetJobRequest__Output {
  'jobId': (string);
}
