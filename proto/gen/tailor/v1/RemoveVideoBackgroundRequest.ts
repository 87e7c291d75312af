// Original file: tailor/v1/tailor_api.proto


export interface RemoveVideoBackgroundRequest {
  'videoUrl'?: (string);
  'backgroundColor'?: (string);
  'outputFormat'?: (string);
  'webhookUrl'?: (string);
  '_backgroundColor'?: "backgroundColor";
  '_outputFormat'?: "outputFormat";
  '_webhookUrl'?: "webhookUrl";
}

export interface RemoveVideoBackgroundRequest__Output {
  'videoUrl': (string);
  'backgroundColor'?: (string);
  'outputFormat'?: (string);
  'webhookUrl'?: (string);
  '_backgroundColor'?: "backgroundColor";
  '_outputFormat'?: "outputFormat";
  '_webhookUrl'?: "webhookUrl";
}
