#!/usr/bin/env bash
# Distributed mode on this machine in one command: installs what is missing (as scripts/run.sh
# does; --no-setup skips that), then starts `nats-server -js` with a data dir, the gateway and N
# inference workers (--workers N, default 2), each worker with its own work dir, and prints the
# start-up banner once every worker is ready. Ctrl-C stops them all. docs/distributed.md.
set -euo pipefail
cd "$(dirname "$0")/.."
setup=1
for a in "$@"; do [ "$a" = "--no-setup" ] && setup=0; done
if [ "$setup" -eq 1 ]; then bash scripts/setup.sh; fi
exec node --import tsx scripts/run-distributed.ts "$@"
