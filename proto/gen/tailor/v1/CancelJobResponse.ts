// Original file: tailor/v1/tailor_api.proto


export interface CancelJobResponse {
  'message'?: (string);
}

export interface CancelJobResponse__Output {
  'message': (string);
}
