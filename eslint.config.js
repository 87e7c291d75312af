// Lint enforces the module boundaries of STYLE.md §3.2: each native or network library is
// imported by exactly one adapter module (or the composition roots), never by use cases.
import tseslint from 'typescript-eslint'

const owned = [
  {
    name: 'onnxruntime-node',
    owners: ['services/inference/src/engine/session.ts'],
    why: 'only engine/session.ts touches onnxruntime-node',
  },
  {
    name: 'sharp',
    owners: ['services/inference/src/media/image.ts'],
    why: 'only media/image.ts touches sharp',
  },
  {
    name: 'node:child_process',
    owners: [
      'services/inference/src/media/video.ts',
      'services/inference/src/media/video.test-support.ts',
    ],
    why: 'only media/video.ts runs ffmpeg',
  },
  { name: 'child_process', owners: [], why: 'use node:child_process, only in media/video.ts' },
  {
    name: 'prom-client',
    owners: [
      'services/gateway/src/metrics.ts',
      'services/inference/src/metrics.ts',
      'proto/src/metrics/registry.ts',
    ],
    why: "metrics are defined in each service's metrics.ts; others report through its functions",
  },
  {
    group: '@nats-io/*',
    owners: [
      'services/gateway/src/jobs/publisher-jetstream.ts',
      'services/gateway/src/jobs/queue-depth-jetstream.ts',
      'services/gateway/src/jobs/job-store-kv.ts',
      'services/gateway/src/results/result-reader-object-store.ts',
      'services/gateway/src/nats-ports.ts',
      'services/gateway/src/jetstream-replicas.ts',
      'services/gateway/src/jetstream-byte-caps.ts',
      'services/gateway/src/uploads/upload-store-object-store.ts',
      'services/gateway/src/webhooks/webhook-queue-jetstream.ts',
      'services/gateway/src/idempotency/idempotency-store-kv.ts',
      'services/gateway/src/access/key-store-kv.ts',
      'services/gateway/src/access/rate-budget-kv.ts',
      'services/gateway/src/access/job-slots-kv.ts',
      'services/gateway/src/access/open-key-store.ts',
      'services/inference/src/uploads/upload-source-object-store.ts',
      'services/inference/src/consumer/job-source-jetstream.ts',
      'services/inference/src/results/result-store-object-store.ts',
      'services/inference/src/nats-ports.ts',
      'proto/src/jetstream/jobs-stream.ts',
    ],
    why: 'NATS is reached only through the JetStream adapters and the composition roots',
  },
  {
    group: '@grpc/*',
    owners: [
      'services/gateway/src/events/grpc-server.ts',
      'services/gateway/src/events/api-grpc-server.ts',
      'services/gateway/src/events/api-grpc-errors.ts',
      'services/inference/src/events/event-stream.ts',
    ],
    why: 'gRPC lives in events/ only',
  },
]

const restriction = (except, extraPatterns = []) => {
  const rules = owned.filter((o) => o !== except)
  return [
    'error',
    {
      paths: rules.filter((o) => o.name).map((o) => ({ name: o.name, message: o.why })),
      patterns: rules
        .filter((o) => o.group)
        .map((o) => ({ group: [o.group], message: o.why }))
        .concat(extraPatterns),
    },
  ]
}

// A service package's public surface is its package.json `exports` ('.', '@tailor/gateway/keys');
// `@tailor/<service>/src/*` is exported for the repository's tests only.
const PUBLIC_EXPORTS_ONLY = {
  group: ['@tailor/gateway/src/*', '@tailor/inference/src/*', '@tailor/embedded/src/*'],
  message:
    "import the package's public exports (@tailor/gateway, @tailor/gateway/keys, @tailor/inference), not its files",
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'proto/gen/**', '**/*.tmp.*'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // What bites in async TypeScript: a promise nobody awaits or catches, a promise where a
      // callback's return is ignored, a switch over a union that misses a member.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      curly: ['error', 'multi-line'],
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['services/**/*.ts', 'proto/src/**/*.ts'],
    rules: { 'no-restricted-imports': restriction(undefined) },
  },
  ...owned
    .map((o) => ({ files: o.owners, rules: { 'no-restricted-imports': restriction(o) } }))
    .filter((c) => c.files.length > 0),
  {
    files: ['services/embedded/src/**/*.ts', 'cli/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': restriction(undefined, [PUBLIC_EXPORTS_ONLY]) },
  },
  {
    // Tests may reach the world directly to check results (ffprobe, real NATS), never to fake it.
    files: ['services/**/*.test.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
)
