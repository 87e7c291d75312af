#!/usr/bin/env bash
# The run command: installs what is missing, then starts Tailor in embedded mode (gateway and one
# inference worker in one process, local data directory, no NATS needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec pnpm --silent start
