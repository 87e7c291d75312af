// The session worker thread's entry (session-worker.ts starts it). Node 20 does not carry the main
// thread's module hooks (`node --import tsx`) into worker threads, so the worker registers tsx
// itself before it loads the TypeScript runner.
import { register } from 'tsx/esm/api'

register()
await import('./session-worker-main.ts')
