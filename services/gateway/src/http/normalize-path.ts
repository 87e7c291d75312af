import { getPath } from 'hono/utils/url'

/**
 * The request path with doubled slashes collapsed and a trailing slash dropped, so that a base
 * URL configured with a trailing `/` (`https://host/` + `/v1/try-on` → `//v1/try-on`) or a path
 * written `/v1/try-on/` reaches its route. Used as the app's `getPath`: routes, middleware
 * patterns and `c.req.path` all see the normalized form. The common case costs one scan.
 */
export function normalizedPath(request: Request): string {
  const path = getPath(request)
  if (!path.includes('//') && (path.length === 1 || !path.endsWith('/'))) return path
  const collapsed = path.replace(/\/{2,}/g, '/')
  return collapsed.length > 1 && collapsed.endsWith('/') ? collapsed.slice(0, -1) : collapsed
}
