import { spawnSync } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'

/**
 * What is left under a TAILOR_WORK_DIR besides the workers' own (empty) directories: each
 * inference process works in `w-<host>-<pid>-XXXXXX` (services/inference/src/work-dir.ts), each
 * job in a subdirectory of it. Lists those job directories (as `<worker dir>/<job dir>`) and any
 * other entry; [] when no job left anything behind.
 */
export async function workLeft(root: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory() && e.name.startsWith('w-')) {
      out.push(...(await readdir(join(root, e.name))).map((n) => `${e.name}/${n}`))
    } else out.push(e.name)
  }
  return out
}

/** The directory a worker of this host that has died would have left in `root` (not created). */
export function deadWorkerDir(root: string): string {
  const host = hostname()
    .replace(/[^A-Za-z0-9.]/g, '_')
    .slice(0, 64)
  return join(root, `w-${host}-${spawnSync('true').pid}-Dead00`)
}
