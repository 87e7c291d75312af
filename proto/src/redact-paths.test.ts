import { describe, expect, it } from 'vitest'
import { redactPaths } from './errors.ts'

describe('redactPaths', () => {
  it.each([
    [
      'the file could not be read as a video: /srv/tailor/data/work/0193-ab/input: Invalid argument',
      'the file could not be read as a video: input: Invalid argument',
    ],
    [
      "ENOENT: no such file or directory, open '/tmp/tailor-x/uploads/5f0c.json'",
      "ENOENT: no such file or directory, open '5f0c.json'",
    ],
    ['C:\\tailor\\data\\work\\job\\input: Invalid data', 'input: Invalid data'],
    ['written to /var/lib/tailor/', 'written to tailor'],
  ])('%s', (input, out) => expect(redactPaths(input)).toBe(out))

  it.each([
    'video_url: http://127.0.0.1:18999/media/video_01.mp4 answered 404',
    'person_image_url names upload tailor://uploads/5f0c-1, which does not exist',
    'Content-Type "image/jpeg" for an upload: send one of image/png, video/mp4',
    'frames 1/2/3 and ratio 16/9, background_color #RRGGBB',
    'https://cdn.example.com/a/b/c.jpg?x=/y/z',
  ])('leaves %s alone', (s) => expect(redactPaths(s)).toBe(s))
})
