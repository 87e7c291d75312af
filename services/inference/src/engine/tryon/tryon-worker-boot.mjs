// The try-on worker thread's entry (tryon-worker.ts starts it). Node 20 does not carry the main
// thread's module hooks (`node --import tsx`) into worker threads, so the worker registers tsx
// itself before it loads the TypeScript engine.
import { register } from 'tsx/esm/api'

register()
await import('./tryon-worker-main.ts')
