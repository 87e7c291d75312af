/**
 * Which methods a path is served with, from the app's own route table: a request whose path
 * exists under another method answers 405 with `Allow` (RFC 9110 §15.5.6) instead of 404.
 */
export interface RouteEntry {
  method: string
  path: string
}

/** A hono route pattern (`/v1/try-on/job/:id`, `/results/*`, `:name{regex}`) as an anchored RegExp. */
function patternRegExp(pattern: string): RegExp {
  let re = ''
  for (const part of pattern.split('/').slice(1)) {
    if (part === '*') {
      re += '(?:/.*)?'
      continue
    }
    const param = /^:\w+(?:\{(.+)\})?(\?)?$/.exec(part)
    if (param !== null) {
      re += param[2] === '?' ? `(?:/${param[1] ?? '[^/]+'})?` : `/(?:${param[1] ?? '[^/]+'})`
    } else re += `/${part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`
  }
  return new RegExp(`^${re === '' ? '/' : re}/?$`)
}

/** `allowed(path)`: the methods of the routes matching `path` (HEAD beside GET), empty when none. */
export function allowedMethods(routes: readonly RouteEntry[]): (path: string) => string[] {
  const table = routes
    .filter((r) => r.method !== 'ALL')
    .map((r) => ({ method: r.method, re: patternRegExp(r.path) }))
  return (path) => {
    const methods = new Set(table.filter((r) => r.re.test(path)).map((r) => r.method))
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods].sort()
  }
}
