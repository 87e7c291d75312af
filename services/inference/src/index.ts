/**
 * @tailor/inference's public surface (package.json `exports` "."): what a composition root outside
 * the package (services/embedded) may use. `@tailor/inference/src/*` is for the repository's
 * tests only (lint refuses it in services/embedded and cli).
 */
export { start } from './start.ts'
export { loadConfig, type Config } from './config.ts'
export type { JobDelivery } from './consumer/job-source.ts'
export { createFileResultStore } from './results/result-store-files.ts'
export { createFileUploadSource } from './uploads/upload-source-files.ts'
