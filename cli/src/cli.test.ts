import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { KEYS_HELP } from './commands/keys.ts'
import { formatFor, REMOVE_BG_HELP, removeBgCommand } from './commands/remove-bg.ts'
import { TRY_ON_HELP, tryOnCommand } from './commands/try-on.ts'
import { mediaTypeOf, sniffMediaType } from './media-type.ts'
import { createProgressBar } from './progress-bar.ts'
import { didYouMean, serviceUrl, type CliIO } from './service.ts'

const capture = (isTTY: boolean) => {
  let text = ''
  return { sink: { isTTY, write: (s: string) => (text += s) }, text: () => text }
}

describe('progress bar', () => {
  it('on a terminal redraws one line in place', () => {
    const c = capture(true)
    const bar = createProgressBar(c.sink, 'remove-bg')
    bar.update('running', 0.25)
    bar.update('running', 0.25) // unchanged: not redrawn
    bar.update('completed', 1)
    bar.done()
    const draws = c
      .text()
      .split('\r')
      .filter((s) => s.length > 0)
    expect(draws).toHaveLength(2) // the repeat is not drawn again
    expect(draws[0]).toContain(`[${'#'.repeat(8)}${'.'.repeat(22)}]  25% running`)
    expect(c.text().endsWith('100% completed\n')).toBe(true)
  })
  it('elsewhere prints plain lines, one per status change or 10 % step', () => {
    const c = capture(false)
    const bar = createProgressBar(c.sink, 'remove-bg')
    for (const p of [0, 0.01, 0.05, 0.12, 0.13, 0.5]) bar.update('running', p)
    bar.update('completed', 1)
    bar.done()
    expect(c.text()).toBe(
      'remove-bg: running 0%\nremove-bg: running 12%\nremove-bg: running 50%\nremove-bg: completed 100%\n',
    )
  })

  it('a retried job says so: the attempt is named when progress starts again', () => {
    const c = capture(false)
    const bar = createProgressBar(c.sink, 'remove-bg')
    bar.update('running', 0.4, 1)
    bar.update('running', 0, 2)
    bar.update('running', 0.05, 2)
    bar.update('completed', 1, 2)
    expect(c.text()).toBe(
      'remove-bg: running 40%\nremove-bg: running (attempt 2) 0%\nremove-bg: completed (attempt 2) 100%\n',
    )
  })
})

describe('media types of local files', () => {
  it('by magic bytes first, extension second', async () => {
    expect(sniffMediaType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg')
    expect(sniffMediaType(new TextEncoder().encode('\x00\x00\x00\x18ftypisom'))).toBe('video/mp4')
    expect(sniffMediaType(new TextEncoder().encode('\x00\x00\x00\x14ftypqt  '))).toBe(
      'video/quicktime',
    )
    expect(sniffMediaType(new TextEncoder().encode('RIFF\x00\x00\x00\x00WEBPVP8 '))).toBe(
      'image/webp',
    )
    const dir = await mkdtemp(join(tmpdir(), 'tailor-cli-mt-'))
    try {
      await writeFile(join(dir, 'a.mov'), 'no magic here')
      await writeFile(join(dir, 'notes.txt'), 'plain text')
      await writeFile(join(dir, 'photo.txt'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]))
      expect(await mediaTypeOf(join(dir, 'a.mov'))).toBe('video/quicktime')
      expect(await mediaTypeOf(join(dir, 'notes.txt'))).toBeNull()
      expect(await mediaTypeOf(join(dir, 'photo.txt'))).toBe('image/png')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('command lines (refused before any request)', () => {
  const io = (env: Record<string, string> = {}) => {
    const out = capture(false)
    const err = capture(false)
    return {
      io: {
        stdout: out.sink,
        stderr: err.sink,
        env: { TAILOR_API_KEY: 'k', TAILOR_URL: 'http://127.0.0.1:9', ...env },
      } satisfies CliIO,
      out: out.text,
      err: err.text,
    }
  }
  it('remove-bg: the output extension picks the format; an unknown --format or a missing -o exits 2', async () => {
    expect(formatFor('o.webm', undefined)).toBe('webm_vp9')
    expect(formatFor('o.MOV', 'transparent')).toBe('mov_proresks')
    expect(formatFor('o.mov', '#fff')).toBe('mov_h265')
    expect(formatFor('o.gif', undefined)).toBe('gif')
    expect(formatFor('o.bin', undefined)).toBe('mp4_h264')
    const a = io()
    expect(await removeBgCommand(['v.mp4', '-o', 'o.avi', '--format', 'avi'], a.io)).toBe(2)
    expect(a.err()).toMatch(/--format must be one of mp4_h264, .*; got avi/)
    const b = io()
    expect(await removeBgCommand(['v.mp4'], b.io)).toBe(2)
  })
  it('try-on: two inputs, a known --category, a key; a missing local file is named', async () => {
    const a = io()
    expect(await tryOnCommand(['p.jpg', '-o', 'o.jpg'], a.io)).toBe(2)
    expect(a.err()).toContain('expected PERSON and GARMENT')
    const b = io()
    expect(await tryOnCommand(['p.jpg', 'g.jpg', '-o', 'o.jpg', '--category', 'hat'], b.io)).toBe(2)
    expect(b.err()).toContain('--category must be one of auto, upper, lower, full')
    const e = io()
    expect(
      await tryOnCommand(['p.jpg', 'g.jpg', '-o', 'o.jpg', '--photo-type', 'mannequin'], e.io),
    ).toBe(2)
    expect(e.err()).toContain('--photo-type must be one of auto, flat-lay, model')
    const c = io({ TAILOR_API_KEY: '' })
    expect(await tryOnCommand(['p.jpg', 'g.jpg', '-o', 'o.jpg'], c.io)).toBe(2)
    expect(c.err()).toContain('no API key')
    const d = io()
    expect(
      await tryOnCommand(['/nonexistent/p.jpg', 'https://e.com/g.jpg', '-o', 'o.jpg'], d.io),
    ).toBe(2)
    expect(d.err()).toContain('PERSON: /nonexistent/p.jpg is not a file')
  })
})

describe('usage mistakes, said before any upload', () => {
  const io = (env: Record<string, string> = {}) => {
    const out = capture(false)
    const err = capture(false)
    return {
      io: {
        stdout: out.sink,
        stderr: err.sink,
        env: { TAILOR_API_KEY: 'k', TAILOR_URL: 'http://127.0.0.1:9', ...env },
      } satisfies CliIO,
      err: err.text,
    }
  }
  it('remove-bg: --background transparent with an .mp4 OUT, and --format webm_vp9 with an .mp4 OUT, exit 2 naming the fix (the input is never read)', async () => {
    const a = io()
    expect(
      await removeBgCommand(
        ['/nonexistent/v.mp4', '--background', 'transparent', '-o', 'x.mp4'],
        a.io,
      ),
    ).toBe(2)
    expect(a.err()).toContain(
      "--background transparent needs --format webm_vp9, mov_proresks, gif (formats that carry alpha); got mp4_h264 (from OUT's extension): name OUT .webm, .mov or .gif, or pass --format",
    )
    const b = io()
    expect(
      await removeBgCommand(
        ['/nonexistent/v.mp4', '--format', 'webm_vp9', '-o', 'out/x.mp4'],
        b.io,
      ),
    ).toBe(2)
    expect(b.err()).toContain(
      '--format webm_vp9 writes .webm files, but OUT is out/x.mp4: name it out/x.webm',
    )
    const c = io()
    expect(
      await removeBgCommand(['/nonexistent/v.mp4', '--background', 'red', '-o', 'x.webm'], c.io),
    ).toBe(2)
    expect(c.err()).toContain(
      '--background must be "transparent" or a hex colour #RGB or #RRGGBB; got "red"',
    )
    const n = io()
    expect(
      await removeBgCommand(
        ['/nonexistent/v.mp4', '--background', 'transparent', '-o', 'cutout'],
        n.io,
      ),
    ).toBe(2)
    expect(n.err()).toContain(
      'got mp4_h264 (the default for an OUT without a video extension): name OUT .webm, .mov or .gif, or pass --format',
    )
    for (const e of [a, b, c, n]) expect(e.err()).not.toContain('is not a file') // refused before the input was looked at
    const d = io()
    expect(
      await removeBgCommand(['/nonexistent/v.mp4', '--format', 'mp4_h265', '-o', 'x.m4v'], d.io),
    ).toBe(2)
    expect(d.err()).toContain('VIDEO: /nonexistent/v.mp4 is not a file') // a matching extension passes the checks
  })
  it('try-on: a JPEG result is not written under another image or video extension', async () => {
    const a = io()
    expect(await tryOnCommand(['/nonexistent/p.jpg', 'g.jpg', '-o', 'dressed.png'], a.io)).toBe(2)
    expect(a.err()).toContain('the result is a JPEG, but OUT is dressed.png: name it dressed.jpg')
  })
  it('an unknown option names the closest one; an unknown command too', async () => {
    const a = io()
    expect(await removeBgCommand(['v.mp4', '-o', 'x.webm', '--fromat', 'webm_vp9'], a.io)).toBe(2)
    expect(a.err()).toBe(
      "tailor remove-bg: unknown option --fromat (did you mean --format?)\nRun 'tailor remove-bg --help' for usage.\n",
    )
    const b = io()
    expect(await tryOnCommand(['p.jpg', 'g.jpg', '-o', 'x.jpg', '--remove-bg'], b.io)).toBe(2)
    expect(b.err()).toContain('unknown option --remove-bg (did you mean --remove-background?)')
    const c = io()
    expect(await tryOnCommand(['p.jpg', 'g.jpg', '-o'], c.io)).toBe(2)
    expect(c.err()).toContain('-o, --output needs a value')
    expect(didYouMean('remov-bg', ['try-on', 'remove-bg', 'keys'])).toBe('remove-bg')
    expect(didYouMean('--ke', ['--key', '--url'])).toBe('--key')
    expect(didYouMean('--zzzzzz', ['--format', '--output'])).toBeNull()
  })
  it("--help texts: every option's description starts in one column, no line past 100 characters", () => {
    for (const [name, text] of Object.entries({ REMOVE_BG_HELP, TRY_ON_HELP })) {
      const opts = text.slice(
        text.indexOf('Options:\n') + 9,
        text.indexOf('\n\n', text.indexOf('Options:\n')),
      )
      const lines = opts.split('\n')
      const cols = new Set(
        lines.map((l) =>
          l.search(/\S/) === 2 ? /^ {2}\S.*?\s{2,}(?=\S)/.exec(l)![0].length : l.search(/\S/),
        ),
      )
      expect(cols.size, `${name}:\n${opts}`).toBe(1)
      expect(lines.length).toBeGreaterThan(5)
    }
    for (const text of [REMOVE_BG_HELP, TRY_ON_HELP, KEYS_HELP]) {
      for (const l of text.split('\n')) expect(l.length, l).toBeLessThanOrEqual(100)
    }
  })
  it('the service address: --url, else TAILOR_URL, else the URL the embedded service wrote in its data dir, else localhost:8080', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tailor-cli-url-'))
    try {
      const env = (e: Record<string, string>): CliIO => ({
        stdout: capture(false).sink,
        stderr: capture(false).sink,
        env: { TAILOR_DATA_DIR: dir, ...e },
      })
      expect(serviceUrl({}, env({}))).toEqual({ url: 'http://localhost:8080', from: 'the default' })
      await writeFile(join(dir, 'service-url'), 'http://localhost:9123\n')
      expect(serviceUrl({}, env({}))).toEqual({
        url: 'http://localhost:9123',
        from: join(dir, 'service-url'),
      })
      expect(serviceUrl({}, env({ TAILOR_URL: 'http://h:1' }))).toEqual({
        url: 'http://h:1',
        from: 'TAILOR_URL',
      })
      expect(serviceUrl({ url: 'http://u:2' }, env({ TAILOR_URL: 'http://h:1' }))).toEqual({
        url: 'http://u:2',
        from: '--url',
      })
      await writeFile(join(dir, 'service-url'), 'garbage')
      expect(serviceUrl({}, env({})).url).toBe('http://localhost:8080')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
