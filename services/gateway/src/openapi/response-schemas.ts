/**
 * Answers that are not part of `@tailor/proto`'s api.ts (which holds the job and error shapes the
 * client and the gRPC API share): uploads, health and the playground's sample list. Zod, so the
 * OpenAPI document is generated the same way; openapi-document.test.ts checks real answers of the
 * app against the document.
 */
import { z } from 'zod'

export const UploadResultSchema = z.object({
  upload_id: z.string(),
  url: z.string(),
  expires_at: z.string(),
})

/** GET /v1/credits (Pixelcut's shape); a key without a budget answers null and `unlimited: true`. */
export const CreditsSchema = z.object({
  credits_remaining: z.number().int().min(0).nullable(),
  unlimited: z.boolean(),
})

export const HealthSchema = z.looseObject({ status: z.enum(['ok', 'unavailable']) })

export const ReadinessSchema = z.looseObject({ status: z.enum(['ready', 'unavailable']) })

export const SampleListSchema = z.object({
  images: z.array(z.string()),
  videos: z.array(z.string()),
})
