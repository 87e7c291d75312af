import { defineConfig } from 'vitest/config'

/** `pnpm test:full`: the slow suites on full-length media, kept out of `pnpm test`. */
export default defineConfig({
  test: {
    include: ['**/*.full.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
