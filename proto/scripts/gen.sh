#!/usr/bin/env bash
# Regenerates gen/ (TypeScript types for the .proto files) with proto-loader-gen-types, then adds
# the .ts extension to relative imports (NodeNext resolution). Commit the result; CI checks drift
# with `pnpm proto:gen && git diff --exit-code proto/gen`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf gen
proto-loader-gen-types --longs=Number --enums=String --defaults --oneofs --grpcLib=@grpc/grpc-js \
  --outDir=gen inference/v1/*.proto tailor/v1/*.proto
find gen -name '*.ts' -print0 | xargs -0 sed -i -E "s#(from '\.{1,2}/[^']*)';#\1.ts';#"
