/**
 * `pnpm build:playground`: bundles src/main.ts (with @tailor/client) for browsers into
 * dist/playground.js and copies the page and its style sheet beside it. The gateway serves dist/
 * (PLAYGROUND_DIR). Run by scripts/setup.sh; the browser test runs it before starting the service.
 */
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'

export const PLAYGROUND_SRC = join(import.meta.dirname, 'src')
export const PLAYGROUND_DIST = join(import.meta.dirname, 'dist')

export async function buildPlayground(outDir: string = PLAYGROUND_DIST): Promise<void> {
  await mkdir(outDir, { recursive: true })
  await build({
    entryPoints: [join(PLAYGROUND_SRC, 'main.ts')],
    outfile: join(outDir, 'playground.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    sourcemap: 'inline',
    legalComments: 'none',
    logLevel: 'warning',
  })
  await copyFile(join(PLAYGROUND_SRC, 'index.html'), join(outDir, 'index.html'))
  await copyFile(join(PLAYGROUND_SRC, 'playground.css'), join(outDir, 'playground.css'))
}

if (import.meta.filename === process.argv[1]) {
  await buildPlayground(process.argv[2])
  console.log(`playground built into ${process.argv[2] ?? PLAYGROUND_DIST}`)
}
