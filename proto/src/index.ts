export * from './errors.ts'
export * from './jobs.ts'
export * from './events.ts'
export * from './job-id.ts'
