import { AppError } from '@tailor/proto'

/**
 * Fetches one input and names its field in a failure's message ("person_image_url: The URL points
 * at a loopback address, …"): the download guard speaks of "the URL", the user sent several.
 */
export async function fetchField(field: string, fetch: () => Promise<unknown>): Promise<void> {
  try {
    await fetch()
  } catch (err) {
    if (err instanceof AppError && err.code !== 'job_cancelled') {
      throw new AppError(err.code, `${field}: ${err.message}`, {
        cause: err,
        retryable: err.retryable,
      })
    }
    throw err
  }
}
