// Original file: tailor/v1/tailor_api.proto


export interface TryOnRequest {
  'personImageUrl'?: (string);
  'garmentImageUrl'?: (string);
  'garmentMode'?: (string);
  'preprocessGarment'?: (boolean);
  'removeBackground'?: (boolean);
  'waitForResult'?: (boolean);
  'webhookUrl'?: (string);
  'garmentPhotoType'?: (string);
  '_garmentMode'?: "garmentMode";
  '_preprocessGarment'?: "preprocessGarment";
  '_removeBackground'?: "removeBackground";
  '_waitForResult'?: "waitForResult";
  '_webhookUrl'?: "webhookUrl";
  '_garmentPhotoType'?: "garmentPhotoType";
}

export interface TryOnRequest__Output {
  'personImageUrl': (string);
  'garmentImageUrl': (string);
  'garmentMode'?: (string);
  'preprocessGarment'?: (boolean);
  'removeBackground'?: (boolean);
  'waitForResult'?: (boolean);
  'webhookUrl'?: (string);
  'garmentPhotoType'?: (string);
  '_garmentMode'?: "garmentMode";
  '_preprocessGarment'?: "preprocessGarment";
  '_removeBackground'?: "removeBackground";
  '_waitForResult'?: "waitForResult";
  '_webhookUrl'?: "webhookUrl";
  '_garmentPhotoType'?: "garmentPhotoType";
}
