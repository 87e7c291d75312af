/**
 * `pnpm --filter @tailor/client build` (run by `pnpm pack` through prepack): the client as an
 * installable package with no dependencies, in dist/:
 *
 *   dist/esm/index.js + *.d.ts   ES module (import), one bundled file + its declarations
 *   dist/cjs/index.js + *.d.ts   CommonJS (require), with dist/cjs/package.json {"type":"commonjs"}
 *
 * esbuild bundles src/index.ts (the only runtime it takes from the workspace is
 * @tailor/proto/errors, a dependency-free table). The declarations come from tsc; the request and
 * response types, which the workspace derives from proto's zod schemas, are written out as plain
 * types (the TypeScript checker expands them), so the .d.ts files need neither zod nor proto.
 * In the workspace, `@tailor/client` still resolves to src/ (package.json `exports`); the packed
 * package.json points at dist/ (`publishConfig`).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'
import ts from 'typescript'

export const CLIENT_DIR = import.meta.dirname
export const CLIENT_DIST = join(CLIENT_DIR, 'dist')
const SRC = join(CLIENT_DIR, 'src')
const BANNER =
  '/* @tailor/client: built from the Tailor repository (client/build.ts); Apache-2.0. */'

/** The declarations of src/ (one .d.ts per module), with types.d.ts written out in full. */
function declarations(): Map<string, string> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    declaration: true,
    emitDeclarationOnly: true,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    skipLibCheck: true,
    verbatimModuleSyntax: true,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    outDir: '/dts',
    rootDir: SRC,
  }
  const program = ts.createProgram([join(SRC, 'index.ts')], options)
  const diagnostics = ts.getPreEmitDiagnostics(program)
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => CLIENT_DIR,
        getNewLine: () => '\n',
      }),
    )
  }
  const out = new Map<string, string>()
  // tsc keeps the sources' `./x.ts` specifiers in declarations: point them at the emitted `./x.js`.
  program.emit(undefined, (file, text) =>
    out.set(file.replace(/^\/dts\//, ''), text.replace(/(from\s+'\.\/[^']+)\.ts'/g, "$1.js'")),
  )
  out.set('types.d.ts', expandedTypes(program))
  return out
}

/** types.ts's exports as plain type aliases: what the checker sees, not the zod-derived names. */
function expandedTypes(program: ts.Program): string {
  const checker = program.getTypeChecker()
  const file = program.getSourceFile(join(SRC, 'types.ts'))!
  const moduleSymbol = checker.getSymbolAtLocation(file)!
  const flags =
    ts.TypeFormatFlags.NoTruncation |
    ts.TypeFormatFlags.InTypeAlias |
    ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType
  const lines = [
    "/** The request and response shapes of the Tailor HTTP API (written out from the service's schemas by client/build.ts). */",
  ]
  for (const sym of checker.getExportsOfModule(moduleSymbol)) {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym
    const decl = target.declarations?.find(
      (d) => ts.isTypeAliasDeclaration(d) || ts.isInterfaceDeclaration(d),
    )
    if (decl === undefined) continue
    if (ts.isInterfaceDeclaration(decl) && decl.getSourceFile() === file) {
      lines.push(decl.getFullText().trim()) // declared here, in plain TypeScript: as written
      continue
    }
    const doc =
      ts.displayPartsToString(sym.getDocumentationComment(checker)) ||
      ts.displayPartsToString(target.getDocumentationComment(checker))
    const type = checker.getDeclaredTypeOfSymbol(target)
    // Expanded one level at a time: an object type prints its members' types in full.
    let text = checker.typeToString(type, undefined, flags)
    if (text === sym.name || text === target.name) {
      text = checker.typeToString(checker.getApparentType(type), undefined, flags)
    }
    if (doc) lines.push(`/** ${doc.replace(/\*\//g, '*\\/')} */`)
    lines.push(`export type ${sym.name} = ${text}`)
  }
  return `${lines.join('\n')}\n`
}

export async function buildClient(outDir: string = CLIENT_DIST): Promise<void> {
  await rm(outDir, { recursive: true, force: true })
  const dts = declarations()
  for (const [format, dir] of [
    ['esm', join(outDir, 'esm')],
    ['cjs', join(outDir, 'cjs')],
  ] as const) {
    await mkdir(dir, { recursive: true })
    await build({
      entryPoints: [join(SRC, 'index.ts')],
      outfile: join(dir, 'index.js'),
      bundle: true,
      format,
      platform: 'neutral',
      target: ['es2022'],
      banner: { js: BANNER },
      legalComments: 'none',
      logLevel: 'warning',
    })
    for (const [name, text] of dts) await writeFile(join(dir, name), text)
    await writeFile(
      join(dir, 'package.json'),
      `${JSON.stringify({ type: format === 'esm' ? 'module' : 'commonjs' })}\n`,
    )
  }
}

if (import.meta.filename === process.argv[1]) {
  await buildClient(process.argv[2])
  console.log(`@tailor/client built into ${process.argv[2] ?? CLIENT_DIST}`)
}
