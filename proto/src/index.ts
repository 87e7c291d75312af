export * from './errors.ts'
export * from './jobs.ts'
