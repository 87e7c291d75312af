/**
 * GET /openapi.json (the OpenAPI 3.1 document) and GET /docs (the reference page rendered from it).
 * Both are built once, when the app is created; no API key needed.
 */
import { Hono } from 'hono'
import type { AppEnv, GatewayDeps } from '../app.ts'
import { buildOpenApiDocument } from '../openapi/openapi-document.ts'
import { renderDocs } from '../openapi/render-docs.ts'

/** The page loads nothing from anywhere: inline styles only, no script. */
const DOCS_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'"

export function docsRoutes(deps: Pick<GatewayDeps, 'config'>) {
  const doc = buildOpenApiDocument({ publicBaseUrl: deps.config.publicBaseUrl })
  const json = JSON.stringify(doc, null, 2)
  const html = renderDocs(doc)
  return new Hono<AppEnv>()
    .get('/openapi.json', (c) =>
      c.body(json, 200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Cache-Control': 'public, max-age=300',
      }),
    )
    .get('/docs', (c) =>
      c.html(html, 200, {
        'Content-Security-Policy': DOCS_CSP,
        'Cache-Control': 'public, max-age=300',
      }),
    )
}
