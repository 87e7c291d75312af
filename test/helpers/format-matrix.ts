import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { ALPHA_FORMATS, OUTPUT_FORMATS, type OutputFormat } from '@tailor/proto'
import type { ApiClient, JobStatusDoc } from './api.ts'
import { cornerRgba, EXPECTED, expectVideoResult } from './expect-output.ts'
import type { Probe } from './media.ts'

/**
 * Submits one job per output format (alpha formats transparent, the others on green), alternating
 * the two short clips, and checks every result through the public result_url.
 */
export async function runFormatMatrix(o: {
  api: ApiClient
  baseUrl: string
  sources: Record<string, Probe>
  timeoutMs: number
}): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), 'tailor-out-'))
  try {
    const jobs = OUTPUT_FORMATS.map((format, i) => {
      const source = i % 2 === 0 ? 'short_01.mp4' : 'short_02.mp4'
      const transparent = ALPHA_FORMATS.includes(format)
      return { format, source, transparent, color: transparent ? 'transparent' : '#00ff00' }
    })
    const ids: string[] = []
    for (const j of jobs) {
      ids.push(
        await o.api.start({
          video_url: `${o.baseUrl}/${j.source}`,
          background_color: j.color,
          output_format: j.format,
        }),
      )
    }
    for (const [i, j] of jobs.entries()) {
      const seen: JobStatusDoc[] = []
      const s = await o.api.wait(ids[i]!, o.timeoutMs, seen)
      expect(s, `${j.format}: ${JSON.stringify(s)}`).toMatchObject({
        status: 'completed',
        progress: 1,
        error: null,
      })
      expect(seen.every((x, k) => k === 0 || x.progress >= seen[k - 1]!.progress)).toBe(true)
      const file = join(out, `${j.format}.${EXPECTED[j.format].formatName}`)
      const r = await fetch(s.result_url!)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toBe(EXPECTED[j.format].contentType)
      const bytes = Buffer.from(await r.arrayBuffer())
      expect(r.headers.get('content-length')).toBe(String(bytes.length))
      await writeFile(file, bytes)
      const source = o.sources[j.source]!
      await expectVideoResult(file, j.format, source, j.transparent)
      if (j.format === 'webm_vp9' || j.format === 'mkv_h264') {
        const frames = Number(source.streams.find((x) => x.codec_type === 'video')!.nb_read_frames)
        const [red, green, blue, alpha] = await cornerRgba(file, j.format as OutputFormat, frames)
        if (j.transparent) expect(alpha).toBeLessThan(20)
        else {
          expect(red).toBeLessThan(30)
          expect(green).toBeGreaterThan(225)
          expect(blue).toBeLessThan(30)
        }
      }
    }
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}
