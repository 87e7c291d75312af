import { expect } from 'vitest'

export interface JobStatusDoc {
  job_id: string
  status: 'pending' | 'running' | 'completed' | 'failed'
  progress: number
  attempt: number
  result_url: string | null
  error: { message: string; error_code: string } | null
  created_at: string
  updated_at: string
}

const POLL_MS = 250

/** A tiny client for the public API, as a user would call it. */
export function apiClient(baseUrl: string, apiKey: string) {
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKey }
  return {
    async submit(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
      const r = await fetch(`${baseUrl}/v1/video/remove-background`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      })
      return { status: r.status, body: (await r.json()) as Record<string, unknown> }
    },
    async start(body: unknown): Promise<string> {
      const r = await this.submit(body)
      expect(r.status, JSON.stringify(r.body)).toBe(202)
      return r.body.job_id as string
    },
    async status(id: string): Promise<JobStatusDoc> {
      const r = await fetch(`${baseUrl}/v1/video/remove-background/job/${id}`, { headers })
      expect(r.status).toBe(200)
      return (await r.json()) as JobStatusDoc
    },
    async cancel(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
      const r = await fetch(`${baseUrl}/v1/video/remove-background/job/${id}/cancel`, {
        method: 'POST',
        headers,
      })
      return { status: r.status, body: (await r.json()) as Record<string, unknown> }
    },
    /** Polls until the job is completed or failed; records every status seen. */
    async wait(id: string, timeoutMs: number, seen: JobStatusDoc[] = []): Promise<JobStatusDoc> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const s = await this.status(id).catch((err: unknown) => {
          if (Date.now() > deadline) throw err
          return null // gateway restarting
        })
        if (s !== null) {
          seen.push(s)
          if (s.status === 'completed' || s.status === 'failed') return s
        }
        if (Date.now() > deadline) {
          throw new Error(`job ${id} not finished within ${timeoutMs} ms: ${JSON.stringify(s)}`)
        }
        await new Promise((r) => setTimeout(r, POLL_MS))
      }
    },
    async waitUntil(
      id: string,
      pred: (s: JobStatusDoc) => boolean,
      timeoutMs: number,
    ): Promise<JobStatusDoc> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const s = await this.status(id)
        if (pred(s)) return s
        if (Date.now() > deadline) {
          throw new Error(
            `job ${id}: condition not met within ${timeoutMs} ms: ${JSON.stringify(s)}`,
          )
        }
        await new Promise((r) => setTimeout(r, POLL_MS))
      }
    },
  }
}
export type ApiClient = ReturnType<typeof apiClient>
