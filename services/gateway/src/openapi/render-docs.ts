/**
 * /docs: the API reference as one self-contained HTML page rendered from the OpenAPI document
 * (no script, no external style sheet or font: it works offline and behind any proxy). Pure.
 */
type Json = Record<string, unknown>

const esc = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')

/** The small Markdown subset the document's descriptions use: `code`, **bold**, [links](…), "- " lists, paragraphs. */
export function markdown(text: string | undefined): string {
  if (text === undefined || text === '') return ''
  const inline = (s: string): string =>
    esc(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      .replace(/\[([^\]]+)\]\(((?:https?:\/\/|\/|#)[^)\s]*)\)/g, '<a href="$2">$1</a>')
  const out: string[] = []
  for (const block of text.split(/\n{2,}/)) {
    const lines = block.split('\n')
    if (lines.every((l) => l.startsWith('- '))) {
      out.push(`<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join('')}</ul>`)
    } else {
      out.push(`<p>${lines.map(inline).join(' ')}</p>`)
    }
  }
  return out.join('')
}

const refName = (ref: string): string => ref.replace(/^#\/components\/schemas\//, '')
const schemaLink = (name: string): string =>
  `<a href="#schema-${esc(name)}"><code>${esc(name)}</code></a>`

/** A one-line type label for a schema: `string`, `array of X`, `Error`, `"a" | "b"`, … */
export function typeLabel(s: Json | undefined): string {
  if (s === undefined) return 'any'
  if (typeof s.$ref === 'string') return schemaLink(refName(s.$ref))
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`
  if (Array.isArray(s.enum) && s.oneOf === undefined) {
    return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ')
  }
  const alts = (s.anyOf ?? s.oneOf ?? s.allOf) as Json[] | undefined
  if (Array.isArray(alts)) {
    const nonNull = alts.filter((a) => a.type !== 'null')
    const labels = (s.allOf !== undefined ? [typeLabel(alts[0])] : nonNull.map(typeLabel)).join(
      ' or ',
    )
    return nonNull.length < alts.length ? `${labels} or <code>null</code>` : labels
  }
  const type = Array.isArray(s.type)
    ? s.type.join(' or ')
    : typeof s.type === 'string'
      ? s.type
      : 'any'
  if (type === 'array') return `array of ${typeLabel(s.items as Json | undefined)}`
  const fmt =
    typeof s.format === 'string'
      ? ` (${esc(s.format)})`
      : typeof s.contentMediaType === 'string'
        ? ` (${esc(s.contentMediaType)} bytes)`
        : ''
  return `${esc(type)}${fmt}`
}

/** Default, bounds, pattern: the constraints of a field, as short text. */
function constraints(s: Json): string {
  const parts: string[] = []
  if (s.default !== undefined) parts.push(`default <code>${esc(JSON.stringify(s.default))}</code>`)
  if (typeof s.minimum === 'number') parts.push(`≥ ${s.minimum}`)
  if (typeof s.maximum === 'number') parts.push(`≤ ${s.maximum}`)
  if (typeof s.pattern === 'string') parts.push(`pattern <code>${esc(s.pattern)}</code>`)
  if (s.deprecated === true) parts.push('<span class="dep">deprecated</span>')
  return parts.join(', ')
}

/** A table of an object schema's fields (nested objects flattened as `a.b`); other schemas as one type line. */
function schemaTable(s: Json | undefined): string {
  if (s === undefined) return ''
  const props = s.properties as Record<string, Json> | undefined
  if (props === undefined) {
    const c = constraints(s)
    return `<p class="type">${typeLabel(s)}${c ? ` — ${c}` : ''}</p>${markdown(s.description as string | undefined)}`
  }
  const rows: string[] = []
  const walk = (
    p: Record<string, Json>,
    required: string[],
    prefix: string,
    depth: number,
  ): void => {
    for (const [name, f] of Object.entries(p)) {
      const inner = ((f.anyOf as Json[] | undefined)?.find((a) => a.properties !== undefined) ??
        f) as Json
      rows.push(
        `<tr><td><code>${esc(prefix + name)}</code>${required.includes(name) ? ' <span class="req">required</span>' : ''}</td>` +
          `<td>${typeLabel(f)}</td><td>${markdown(f.description as string | undefined)}${constraints(f) ? `<p class="c">${constraints(f)}</p>` : ''}</td></tr>`,
      )
      if (inner.properties !== undefined && depth < 3) {
        walk(
          inner.properties as Record<string, Json>,
          (inner.required as string[] | undefined) ?? [],
          `${prefix}${name}.`,
          depth + 1,
        )
      }
    }
  }
  walk(props, (s.required as string[] | undefined) ?? [], '', 0)
  return `<table class="fields"><thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function mediaBlock(
  content: Json | undefined,
  schemas: Record<string, Json> = {},
  inline = false,
): string {
  if (content === undefined) return ''
  const entries = Object.entries(content as Record<string, Json>)
  const types = entries.map(([t]) => `<code>${esc(t)}</code>`).join(', ')
  const [first] = entries
  if (first === undefined) return ''
  const [, media] = first
  const schema = media.schema as Json | undefined
  const example =
    media.example === undefined
      ? ''
      : `<pre class="example">${esc(JSON.stringify(media.example, null, 2))}</pre>`
  const target = typeof schema?.$ref === 'string' ? schemas[refName(schema.$ref)] : undefined
  const body =
    schema?.$ref !== undefined
      ? `<p class="type">${typeLabel(schema)}</p>${inline && target !== undefined ? schemaTable(target) : ''}`
      : schema?.allOf !== undefined
        ? errorLabel(schema)
        : schemaTable(schema)
  return `<p class="media">${types}</p>${entries.length === 1 ? body : ''}${example}`
}

/** `allOf: [Error, {error_code: enum}]` → "Error with error_code one of …". */
function errorLabel(s: Json): string {
  const [base, narrow] = s.allOf as Json[]
  const codes =
    ((narrow?.properties as Record<string, Json> | undefined)?.error_code?.enum as
      string[] | undefined) ?? []
  return `<p class="type">${typeLabel(base)} with <code>error_code</code> ${codes.map((c) => `<a href="#code-${esc(c)}"><code>${esc(c)}</code></a>`).join(', ')}</p>`
}

function parametersTable(params: Json[]): string {
  if (params.length === 0) return ''
  const rows = params.map(
    (p) =>
      `<tr><td><code>${esc(String(p.name))}</code>${p.required === true ? ' <span class="req">required</span>' : ''}</td><td>${esc(String(p.in))}</td>` +
      `<td>${typeLabel(p.schema as Json | undefined)}</td><td>${markdown(p.description as string | undefined)}</td></tr>`,
  )
  return `<h4>Parameters</h4><table class="fields"><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function responsesBlock(responses: Record<string, Json>): string {
  return Object.entries(responses)
    .map(([status, r]) => {
      const headers = Object.keys((r.headers as Json | undefined) ?? {})
      // Error answers: the status text here, the codes (linked) from the schema below.
      const isError = Number(status) >= 400 && JSON.stringify(r.content ?? {}).includes('"allOf"')
      return (
        `<div class="resp"><p><span class="status s${status[0]}">${esc(status)}</span> ${isError ? esc(String(r.description).split(':')[0]!) : markdown(r.description as string).replace(/^<p>|<\/p>$/g, '')}</p>` +
        (headers.length > 0
          ? `<p class="hdrs">Headers: ${headers.map((h) => `<code>${esc(h)}</code>`).join(', ')}</p>`
          : '') +
        `${mediaBlock(r.content as Json | undefined)}</div>`
      )
    })
    .join('')
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const
interface Op {
  method: string
  path: string
  op: Json
}

/** The reference page for `doc`. */
export function renderDocs(doc: Json): string {
  const info = doc.info as Json
  const paths = doc.paths as Record<string, Record<string, Json>>
  const tags = (doc.tags as Json[] | undefined) ?? []
  const ops: Op[] = []
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (op !== undefined) ops.push({ method, path, op })
    }
  }
  const tagNames = [
    ...new Set([
      ...tags.map((t) => String(t.name)),
      ...ops.flatMap((o) => (o.op.tags as string[] | undefined) ?? ['other']),
    ]),
  ]
  const opId = (o: Op): string => `op-${esc(String(o.op.operationId ?? `${o.method}-${o.path}`))}`
  const byTag = (tag: string): Op[] =>
    ops.filter((o) => ((o.op.tags as string[] | undefined) ?? ['other'])[0] === tag)
  const components = (doc.components ?? {}) as Json
  const schemes = (components.securitySchemes ?? {}) as Record<string, Json>
  const schemas = (components.schemas ?? {}) as Record<string, Json>
  const codes = ((schemas.ErrorCode?.oneOf as Json[] | undefined) ?? []).map((c) => ({
    code: String(c.const),
    status: Number(c['x-http-status']),
    text: c.description as string | undefined,
  }))

  const nav = tagNames
    .map((tag) => {
      const list = byTag(tag)
      if (list.length === 0) return ''
      return `<h3>${esc(tag)}</h3><ul>${list.map((o) => `<li><a href="#${opId(o)}"><span class="m ${o.method}">${o.method.toUpperCase()}</span> ${esc(o.path)}</a></li>`).join('')}</ul>`
    })
    .join('')

  const sections = tagNames
    .map((tag) => {
      const list = byTag(tag)
      if (list.length === 0) return ''
      const t = tags.find((x) => x.name === tag)
      return (
        `<section class="tag"><h2 id="tag-${esc(tag)}">${esc(tag)}</h2>${markdown(t?.description as string | undefined)}` +
        list
          .map((o) => {
            const secured = Array.isArray(o.op.security)
              ? (o.op.security as Json[]).length > 0
              : Array.isArray(doc.security) && (doc.security as Json[]).length > 0
            const body = o.op.requestBody as Json | undefined
            return (
              `<article class="op" id="${opId(o)}"><h3><span class="m ${o.method}">${o.method.toUpperCase()}</span> <code class="path">${esc(o.path)}</code></h3>` +
              `<p class="summary">${esc(String(o.op.summary ?? ''))}${o.op.deprecated === true ? ' <span class="dep">deprecated</span>' : ''}</p>` +
              (secured
                ? `<p class="auth">Needs the <code>${esc(String(Object.values(schemes)[0]?.name ?? 'API key'))}</code> header.</p>`
                : '<p class="auth open">No API key.</p>') +
              markdown(o.op.description as string | undefined) +
              parametersTable((o.op.parameters as Json[] | undefined) ?? []) +
              (body !== undefined
                ? `<h4>Request body${body.required === true ? '' : ' (optional)'}</h4>${mediaBlock(body.content as Json, schemas, true)}`
                : '') +
              `<h4>Responses</h4>${responsesBlock(o.op.responses as Record<string, Json>)}</article>`
            )
          })
          .join('') +
        '</section>'
      )
    })
    .join('')

  const schemaSection = Object.entries(schemas)
    .filter(([name]) => name !== 'ErrorCode')
    .map(
      ([name, s]) =>
        `<article class="schema" id="schema-${esc(name)}"><h3><code>${esc(name)}</code></h3>${markdown(s.description as string | undefined)}${schemaTable(s)}</article>`,
    )
    .join('')
  const codeRows = codes
    .map(
      (c) =>
        `<tr id="code-${esc(c.code)}"><td><code>${esc(c.code)}</code></td><td>${c.status}</td><td>${markdown(c.text)}</td></tr>`,
    )
    .join('')
  const auth = Object.entries(schemes)
    .map(
      ([name, s]) =>
        `<p><strong>${esc(name)}</strong>: ${esc(String(s.type))} in ${esc(String(s.in))} <code>${esc(String(s.name))}</code>. ${markdown(s.description as string | undefined).replace(/^<p>|<\/p>$/g, '')}</p>`,
    )
    .join('')

  const title = `${String(info.title)} ${String(info.version)}`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — reference</title><link rel="icon" href="data:,"><style>${CSS}</style></head>
<body><nav><p class="brand"><a href="#top">${esc(String(info.title))}</a> <span>${esc(String(info.version))}</span></p>
<p class="links"><a href="/">Playground</a> · <a href="/openapi.json">openapi.json</a></p>${nav}
<h3>reference</h3><ul><li><a href="#errors">Error codes</a></li><li><a href="#schemas">Schemas</a></li></ul></nav>
<main id="top"><header><h1>${esc(title)}</h1><p class="lead">${esc(String(info.summary ?? ''))}</p>${markdown(info.description as string | undefined)}
<h2 id="auth">Authentication</h2>${auth}</header>${sections}
<section><h2 id="errors">Error codes</h2><p>Every error answers <code>{"error": "…", "error_code": "…"}</code>. A failed job carries the code in its status document's <code>error</code>.</p>
<table class="fields"><thead><tr><th>Code</th><th>HTTP</th><th>When</th></tr></thead><tbody>${codeRows}</tbody></table></section>
<section><h2 id="schemas">Schemas</h2>${schemaSection}</section>
<footer><p>Generated from <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(String(doc.openapi))}).</p></footer></main></body></html>`
}

const CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#fafbfc;display:flex}
nav{position:sticky;top:0;height:100vh;overflow:auto;width:300px;flex:none;padding:18px 16px;background:#1d2330;color:#cfd6e4;font-size:13px}
nav a{color:#cfd6e4;text-decoration:none}nav a:hover{color:#fff}nav h3{margin:18px 0 6px;font-size:11px;text-transform:uppercase;letter-spacing:.08em;color:#8a93a6}
nav ul{list-style:none;margin:0;padding:0}nav li{margin:4px 0;overflow-wrap:anywhere;text-indent:-8px;padding-left:8px}
.brand{font-size:18px;font-weight:700;margin:0}.brand span{font-size:12px;color:#8a93a6;font-weight:400}.links{margin:6px 0 0}
main{flex:1;min-width:0;padding:28px 40px;max-width:1100px}h1{margin:0 0 4px;font-size:28px}.lead{font-size:17px;color:#4a5468;margin:0 0 8px}
h2{margin:36px 0 10px;padding-bottom:6px;border-bottom:2px solid #e3e7ee;text-transform:capitalize}h4{margin:16px 0 6px;font-size:13px;text-transform:uppercase;letter-spacing:.05em;color:#4a5468}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef1f6;padding:1px 4px;border-radius:4px}
a{color:#2456c9}.op,.schema{background:#fff;border:1px solid #e3e7ee;border-radius:10px;padding:16px 20px;margin:16px 0}
.op h3{margin:0;font-size:17px}.op h3 code.path{background:none;font-size:16px;padding:0}.summary{margin:4px 0;font-weight:600}
.m{display:inline-block;min-width:44px;text-align:center;font:700 11px/18px ui-monospace,monospace;border-radius:4px;color:#fff;padding:0 5px;vertical-align:1px}
.m.get{background:#2f8f5b}.m.post{background:#2456c9}.m.head{background:#7a5bc7}.m.delete{background:#c93a3a}.m.put,.m.patch{background:#b7791f}
.auth{font-size:13px;color:#7a4b00;background:#fff6e0;display:inline-block;padding:1px 8px;border-radius:4px;margin:4px 0}.auth.open{color:#2f6b47;background:#e7f5ec}
table.fields{border-collapse:collapse;width:100%;font-size:14px;margin:6px 0}table.fields th{text-align:left;font-size:12px;color:#4a5468;border-bottom:1px solid #d5dbe5;padding:4px 8px}
table.fields td{border-bottom:1px solid #eef1f6;padding:6px 8px;vertical-align:top}table.fields td p{margin:0}table.fields td p.c{color:#4a5468;font-size:13px;margin-top:2px}
.req{font-size:11px;color:#c93a3a}.dep{font-size:11px;color:#fff;background:#8a93a6;padding:0 5px;border-radius:3px}
.resp{border-left:3px solid #e3e7ee;padding:2px 0 2px 12px;margin:8px 0}.resp p{margin:2px 0}.media{font-size:12px;color:#4a5468}.hdrs{font-size:13px}
.status{font:700 13px ui-monospace,monospace;padding:0 6px;border-radius:4px;background:#eef1f6}.status.s2{background:#e7f5ec;color:#2f6b47}.status.s4{background:#fff6e0;color:#7a4b00}.status.s5{background:#fde8e8;color:#a12626}
pre.example{background:#1d2330;color:#e6ebf3;padding:10px 12px;border-radius:8px;overflow:auto;font-size:13px}pre.example code{background:none}
footer{margin:40px 0 10px;color:#8a93a6;font-size:13px}
@media (max-width:800px){body{display:block}nav{position:static;width:auto;height:auto}main{padding:16px}.op,.schema{padding:12px}
main{overflow-wrap:anywhere}pre.example{white-space:pre-wrap}
table.fields,table.fields tbody,table.fields tr,table.fields td{display:block;width:auto}table.fields thead{display:none}
table.fields tr{border-bottom:1px solid #d5dbe5;padding:6px 0}table.fields td{border:0;padding:2px 4px}}
`
