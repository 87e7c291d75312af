import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DOC_PATH, LAYERS, renderInputMatrix } from './input-matrix-doc.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

describe('docs/input-matrix.md', () => {
  it('is the table generated from the case lists the tests run (run `pnpm docs:input-matrix` after changing a case)', async () => {
    expect(await readFile(DOC_PATH, 'utf8')).toBe(renderInputMatrix())
  })

  it('has at least 40 cases with unique ids', () => {
    const ids = LAYERS.flatMap((l) => l.cases.map((c) => c.id))
    expect(ids.length).toBeGreaterThanOrEqual(40)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it.each(LAYERS.map((l) => [l.file, l] as const))(
    '%s runs every case of its list under the documented name',
    async (_f, l) => {
      const src = await readFile(`${REPO}${l.file}`, 'utf8')
      // One test per case, named by matrixTitle (the same function that writes the table's last column).
      const runner = new RegExp(
        `it\\.each\\(${l.casesName}\\.map\\(\\(c\\) => \\[matrixTitle\\(c\\), c\\] as const\\)\\)\\(\\s*'%s'`,
      )
      expect(src).toMatch(runner)
    },
  )

  it('is linked from the README and from docs/errors-and-limits.md', async () => {
    expect(await readFile(`${REPO}README.md`, 'utf8')).toContain('(docs/input-matrix.md)')
    expect(await readFile(`${REPO}docs/errors-and-limits.md`, 'utf8')).toContain(
      '(input-matrix.md)',
    )
  })
})
