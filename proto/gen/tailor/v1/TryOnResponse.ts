// Original file: tailor/v1/tailor_api.proto


export interface TryOnResponse {
  'jobId'?: (string);
  'resultUrl'?: (string);
  '_resultUrl'?: "resultUrl";
}

export interface TryOnResponse__Output {
  'jobId': (string);
  'resultUrl'?: (string);
  '_resultUrl'?: "resultUrl";
}
