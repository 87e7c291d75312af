// Original file: tailor/v1/tailor_api.proto


export interface SubmitJobResponse {
  'jobId'?: (string);
}

export interface SubmitJobResponse__Output {
  'jobId': (string);
}
