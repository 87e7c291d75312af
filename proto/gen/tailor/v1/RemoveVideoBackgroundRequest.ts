// Original file: tailor/v1/tailor_api.proto


export interface RemoveVideoBackgroundRequest {
  'videoUrl'?: (string);
  'backgroundColor'?: (string);
  'outputFormat'?: (string);
  '_backgroundColor'?: "backgroundColor";
  '_outputFormat'?: "outputFormat";
}

export interface RemoveVideoBackgroundRequest__Output {
  'videoUrl': (string);
  'backgroundColor'?: (string);
  'outputFormat'?: (string);
  '_backgroundColor'?: "backgroundColor";
  '_outputFormat'?: "outputFormat";
}
