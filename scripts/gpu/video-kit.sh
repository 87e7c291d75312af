#!/usr/bin/env bash
# Builds a self-contained kit that runs `pnpm bench:video` (the remove-background pipeline: ffmpeg decode →
# the matting engine's session worker → ffmpeg encode) and scripts/gpu/bench-rvm-cuda.mjs on onnxruntime's CUDA
# provider, on a GPU machine that has CUDA 13 + cuDNN 9 but no network, no Node.js and no ffmpeg:
#   - this machine's node binary;
#   - onnxruntime-node 1.29.0 + the CUDA provider of com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 (the npm-only
#     CUDA route of docs/deployment.md); the CUDA provider library (230 MB) is written apart, xz-compressed, as
#     OUTDIR/providers_cuda.so.xz, so that the kit can travel in pieces;
#   - bench/bench-video.ts and the session worker bundled by esbuild (onnxruntime-node left external);
#   - the matting graphs of models/dist (pnpm models) and video_02 of ../shared/media (measurement only; the kit is
#     never committed or put in an image);
#   - ffmpeg and ffprobe: static builds from npm (@ffmpeg-installer/linux-x64@4.1.0, @ffprobe-installer/linux-x64@5.2.0),
#     because Debian's ffmpeg needs ~210 shared libraries (246 MB). ffmpeg 4.1 names `-fps_mode` `-vsync`: the kit's
#     `ffmpeg` is a wrapper that renames that one option.
# Usage:
#   bash scripts/gpu/video-kit.sh /tmp/kit     # here (needs the npm registry, pnpm models done)
#   # on the GPU machine: unpack OUTDIR/kit.tar.xz, xz -d providers_cuda.so.xz into
#   # ort/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so, then bash run.sh (scripts/gpu/video-kit-run.sh)
set -euo pipefail
out=${1:?usage: video-kit.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
media=${TAILOR_MEDIA_DIR:-$root/../shared/media}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
k=$tmp/kit
(cd "$tmp" && npm pack --silent onnxruntime-node@1.29.0 onnxruntime-common@1.29.0 \
  com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 @ffmpeg-installer/linux-x64@4.1.0 \
  @ffprobe-installer/linux-x64@5.2.0 >/dev/null)
for p in onnxruntime-node-1.29.0 onnxruntime-common-1.29.0 com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9 \
  ffmpeg-installer-linux-x64-4.1.0 ffprobe-installer-linux-x64-5.2.0; do
  mkdir -p "$tmp/$p" && tar xzf "$tmp/$p.tgz" -C "$tmp/$p"
done
bin=bin/napi-v6/linux/x64
mkdir -p "$k/ort/$bin" "$k/ort/node_modules" "$k/app/node_modules" "$k/ff" "$k/models" "$k/media"
cp -r "$tmp/onnxruntime-node-1.29.0/package/"{dist,lib,package.json} "$k/ort/"
cp "$tmp/onnxruntime-node-1.29.0/package/$bin/"{libonnxruntime.so.1,onnxruntime_binding.node} "$k/ort/$bin/"
plugins=$tmp/com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9/package/Plugins/Linux/x64
cp "$plugins/libonnxruntime_providers_shared.so" "$k/ort/$bin/"
cp -r "$tmp/onnxruntime-common-1.29.0/package" "$k/ort/node_modules/onnxruntime-common"
ln -s ../../ort "$k/app/node_modules/onnxruntime-node"
(cd "$root/services/inference" && node -e "
require('esbuild').build({
  entryPoints: { 'bench-video': 'bench/bench-video.ts', 'session-worker-main': 'src/engine/session-worker-main.ts' },
  outdir: process.argv[1], bundle: true, platform: 'node', format: 'esm', target: 'node20',
  external: ['onnxruntime-node'], logLevel: 'warning',
  banner: { js: \"import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);\" },
})" "$k/app")
install -m 755 "$tmp/ffmpeg-installer-linux-x64-4.1.0/package/ffmpeg" "$k/ff/ffmpeg.bin"
install -m 755 "$tmp/ffprobe-installer-linux-x64-5.2.0/package/ffprobe" "$k/ff/ffprobe"
cat >"$k/ff/ffmpeg" <<'EOF'
#!/bin/sh
# ffmpeg 4.1 has -vsync where 5.1+ has -fps_mode, the one option Tailor passes that it lacks.
d=$(dirname "$0")
n=$#
for a in "$@"; do
  [ "$a" = "-fps_mode" ] && a=-vsync
  set -- "$@" "$a"
done
shift "$n"
exec "$d/ffmpeg.bin" "$@"
EOF
chmod 755 "$k/ff/ffmpeg"
# The engine's four graphs, then the float graph: adjacent in the tar, so xz's window shares their weights.
for m in rvm-rgb rvm-rgba rvm-ratio1-rgb rvm-ratio1-rgba rvm; do cp "$root/models/dist/$m.onnx" "$k/models/"; done
cp "$root/models/dist/manifest.json" "$k/models/"
cp "$media/video_02.mp4" "$k/media/"
ffmpeg -loglevel error -y -i "$media/video_02.mp4" -vf scale=1280:720 -frames:v 2 -f rawvideo -pix_fmt rgb24 \
  "$k/media/frames.rgb"
cp "$root/scripts/gpu/bench-rvm-cuda.mjs" "$k/"
cp "$root/scripts/gpu/video-kit-run.sh" "$k/run.sh"
cp "$(readlink -f "$(command -v node)")" "$k/node"
(cd "$tmp" && tar cf - kit | xz -T2 -9 >"$out/kit.tar.xz")
# 13 minutes on the 2-core VM: kept when OUTDIR already holds it.
[ -s "$out/providers_cuda.so.xz" ] || xz -T2 -6 -c "$plugins/libonnxruntime_providers_cuda.so" >"$out/providers_cuda.so.xz"
ls -la "$out"
