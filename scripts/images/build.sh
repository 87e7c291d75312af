#!/usr/bin/env bash
# `pnpm images:build`: builds the gateway image and the CPU inference image with buildah from the
# local Debian bases of make-base.sh (made first when missing), where no registry image can be pulled:
#   localhost/tailor-gateway:dev        services/gateway/Dockerfile
#   localhost/tailor-inference-cpu:dev  services/inference/Dockerfile (ORT_CUDA=none, ORT_EP=cpu)
# `buildah bud --isolation chroot` (no daemon, no user namespaces needed), layers cached between
# builds (and the pnpm store in a cache mount), so a second run without changes takes seconds.
# Needs root (installs buildah and mmdebstrap with apt when missing) and the npm registry.
# Environment:
#   BUILD_CA_FILE  a PEM bundle trusted for HTTPS during the build only (a build secret, never in a
#                  layer); default: this machine's bundle /etc/ssl/certs/ca-certificates.crt, so a
#                  TLS-inspecting proxy whose CA the host trusts works inside the build too
#   IMAGE_TAG      default dev
#   IMAGES         which to build: "gateway inference" (default) or one of them, or
#                  inference-npm-cuda13 (the npm-only CUDA 13 route, ORT_CUDA=npm-cuda13)
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/images/make-base.sh
TAG=${IMAGE_TAG:-dev}
CA=${BUILD_CA_FILE-/etc/ssl/certs/ca-certificates.crt}
secret=()
[[ -n "$CA" && -s "$CA" ]] && secret=(--secret "id=build_ca,src=$CA")

bud() { # name, dockerfile, build args...
  local name=$1 file=$2
  shift 2
  local t0=$SECONDS
  nice buildah bud --isolation chroot --format docker --layers --pull=never \
    "${secret[@]}" -f "$file" -t "localhost/$name:$TAG" "$@" . 2>&1 | sed -u "s/^/[$name] /"
  echo "images: localhost/$name:$TAG $(buildah images --format '{{.Size}}' "localhost/$name:$TAG") in $((SECONDS - t0)) s"
}

for what in ${IMAGES:-gateway inference}; do
  case $what in
    gateway)
      bud tailor-gateway services/gateway/Dockerfile \
        --build-arg NODE_IMAGE=localhost/tailor-base/node:bookworm \
        --build-arg RUNTIME_IMAGE=localhost/tailor-base/debian:bookworm ;;
    inference)
      bud tailor-inference-cpu services/inference/Dockerfile \
        --build-arg NODE_IMAGE=localhost/tailor-base/node:bookworm \
        --build-arg RUNTIME_IMAGE=localhost/tailor-base/ffmpeg:bookworm \
        --build-arg ORT_CUDA=none --build-arg ORT_EP=cpu ;;
    inference-npm-cuda13)
      # The npm-only CUDA route (ORT_CUDA=npm-cuda13) built on the local ffmpeg base: checks that the
      # build gets onnxruntime 1.29 and its CUDA provider from the npm registry alone. The base has no
      # CUDA libraries, so the image runs on the CPU here; on a GPU node use a CUDA 13 cuDNN base.
      bud tailor-inference-npm-cuda13 services/inference/Dockerfile \
        --build-arg NODE_IMAGE=localhost/tailor-base/node:bookworm \
        --build-arg RUNTIME_IMAGE=localhost/tailor-base/ffmpeg:bookworm \
        --build-arg ORT_CUDA=npm-cuda13 --build-arg ORT_EP=cpu ;;
    *) echo "images: unknown image '$what' (gateway, inference, inference-npm-cuda13)" >&2; exit 2 ;;
  esac
done
