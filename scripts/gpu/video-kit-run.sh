#!/usr/bin/env bash
# Runs on the GPU machine, inside the kit that scripts/gpu/video-kit.sh builds (copied there as run.sh), with the
# CUDA provider library already unpacked beside the binding. Writes its logs to $OUT (default /tmp/kit-out).
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/kit-out}
mkdir -p "$out"
# CUDA 13 and cuDNN 9 user-space libraries: the system's first (as on the 2026-11-25 run), else any copy found.
dirs=/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
for n in libcublasLt.so.13 libcudnn.so.9 libcudart.so.13 libcurand.so.10 libcufft.so.12; do
  if ! (IFS=:; for d in $dirs; do [ -e "$d/$n" ] && exit 0; done; exit 1); then
    f=$(find /usr/local /usr/lib /opt -name "$n" 2>/dev/null | head -1)
    [ -n "$f" ] && dirs=$dirs:$(dirname "$f")
  fi
done
export LD_LIBRARY_PATH=$dirs:$PWD/ort/bin/napi-v6/linux/x64
export PATH=$PWD/ff:$PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
./node --version
ffmpeg -hide_banner -version | head -1
ffprobe -hide_banner -version | head -1
echo "== graphs alone (bench-rvm-cuda.mjs): float rvm (bench:models' graph) and rvm-rgb (the engine's)"
MODELS=rvm,rvm-rgb PROVIDERS=cuda,cpu RATIOS=0.25,0.3 FRAMES=${FRAMES:-100} ORT_DIR=ort MODELS_DIR=models \
  FRAMES_FILE=media/frames.rgb ./node bench-rvm-cuda.mjs 2>&1 | tee "$out/graphs.txt"
echo "== bench:video, CUDA provider, engine on its worker thread and on the job's thread"
nvidia-smi dmon -s u -o T -d 1 >"$out/dmon.txt" 2>&1 &
dmon=$!
./node app/bench-video.js --input "$PWD/media/video_02.mp4" --models models --formats mp4_h264,webm_vp9 \
  --threads worker,main --providers cuda --model-frames 200 2>&1 | tee "$out/video-cuda.txt"
kill "$dmon" 2>/dev/null
echo "== bench:video, CPU provider (all cores of this machine), worker thread"
./node app/bench-video.js --input "$PWD/media/video_02.mp4" --models models --formats mp4_h264 \
  --threads worker --providers cpu --model-frames 60 2>&1 | tee "$out/video-cpu.txt"
