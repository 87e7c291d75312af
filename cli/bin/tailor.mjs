#!/usr/bin/env node
// Runs the TypeScript entry through tsx (the workspace runs TypeScript directly, no build step).
import { register } from 'tsx/esm/api'

register()
await import('../src/main.ts')
