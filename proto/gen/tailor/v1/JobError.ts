// Original file: tailor/v1/tailor_api.proto


export interface JobError {
  'errorCode'?: (string);
  'message'?: (string);
}

export interface JobError__Output {
  'errorCode': (string);
  'message': (string);
}
