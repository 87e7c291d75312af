import { buildModels } from '../build.ts'

const only = process.argv.slice(2).filter((a) => !a.startsWith('-'))
const t0 = performance.now()
try {
  const reports = await buildModels({
    only: only.length > 0 ? only : undefined,
    log: (s) => console.log(s),
  })
  console.log(
    `models: ${reports.filter((r) => r.status === 'built').length} built, ${reports.filter((r) => r.status === 'up-to-date').length} up to date in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e)
  process.exitCode = 1
}
