import { AppError } from '@tailor/proto'

export const uploadMissing = (id: string): AppError =>
  new AppError(
    'input_fetch_failed',
    `Upload ${id} does not exist or has expired (uploads are kept 1 hour): upload the file again.`,
  )

export const uploadTooLarge = (maxBytes: number): AppError =>
  new AppError(
    'file_size_too_large',
    `The uploaded file is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MB limit for this input.`,
  )
