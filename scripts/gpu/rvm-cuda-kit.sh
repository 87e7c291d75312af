#!/usr/bin/env bash
# Builds a self-contained kit that measures rvm on onnxruntime's CUDA provider on a GPU machine that has
# CUDA 13 + cuDNN 9 but no network and no Node.js project: the npm-only CUDA route of docs/deployment.md
# (onnxruntime-node 1.29.0 + the CUDA provider from com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9),
# this repo's rvm.onnx (pnpm models), two real 1280x720 frames of ../shared/media/video_02.mp4 and this
# machine's node binary. Usage:
#   bash scripts/gpu/rvm-cuda-kit.sh /tmp/kit          # here (needs the npm registry, ffmpeg, pnpm models done)
#   # copy /tmp/kit to the GPU machine, then there:
#   LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu \
#     PROVIDERS=cuda,cpu RATIOS=0.25,0.375 ./node bench-rvm-cuda.mjs
set -euo pipefail
out=${1:?usage: rvm-cuda-kit.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
media=${TAILOR_MEDIA_DIR:-$root/../shared/media}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
(cd "$tmp" && npm pack --silent onnxruntime-node@1.29.0 onnxruntime-common@1.29.0 \
  com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 >/dev/null)
for p in onnxruntime-node-1.29.0 onnxruntime-common-1.29.0 com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9; do
  mkdir -p "$tmp/$p" && tar xzf "$tmp/$p.tgz" -C "$tmp/$p"
done
bin=bin/napi-v6/linux/x64
rm -rf "$out/ort" && mkdir -p "$out/ort/$bin" "$out/ort/node_modules"
cp -r "$tmp/onnxruntime-node-1.29.0/package/"{dist,lib,package.json} "$out/ort/"
cp "$tmp/onnxruntime-node-1.29.0/package/$bin/"{libonnxruntime.so.1,onnxruntime_binding.node} "$out/ort/$bin/"
cp "$tmp/com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9/package/Plugins/Linux/x64/"libonnxruntime_providers_{cuda,shared}.so "$out/ort/$bin/"
cp -r "$tmp/onnxruntime-common-1.29.0/package" "$out/ort/node_modules/onnxruntime-common"
cp "$root/models/dist/rvm.onnx" "$root/scripts/gpu/bench-rvm-cuda.mjs" "$out/"
ffmpeg -loglevel error -y -i "$media/video_02.mp4" -vf scale=1280:720 -frames:v 2 -f rawvideo -pix_fmt rgb24 "$out/frames.rgb"
cp "$(readlink -f "$(command -v node)")" "$out/node"
du -sh "$out"
