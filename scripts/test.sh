#!/usr/bin/env bash
# The test command: installs what is missing, type-checks, and runs every test (unit, golden,
# integration) on the real models, ffmpeg, NATS and media in ../shared/media.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
pnpm typecheck
pnpm lint
pnpm test
