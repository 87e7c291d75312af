#!/usr/bin/env bash
# Makes the base images the image build uses where no registry can be reached, from Debian's own
# packages: `mmdebstrap` (bookworm, minbase) plus this machine's Node.js binary.
#   localhost/tailor-base/debian:bookworm  minbase, ca-certificates               (gateway runtime; like debian:bookworm-slim)
#   localhost/tailor-base/node:bookworm    the same + Node.js, npm, corepack      (build stage; like node:20-bookworm-slim)
#   localhost/tailor-base/ffmpeg:bookworm  minbase, ca-certificates, ffmpeg       (CPU inference runtime)
# The runtime images get the node binary alone from the build stage's base (no npm).
# Usage: bash scripts/images/make-base.sh      (root; installs mmdebstrap and buildah when missing)
# Environment: MIRROR (default http://deb.debian.org/debian), BASE_WORK (default /var/tmp/tailor-base).
# Debs already in /var/cache/apt/archives are reused (nothing is downloaded twice); an image or root
# file system that exists is kept (delete it to rebuild: buildah rmi NAME, rm $BASE_WORK/NAME.tar).
set -euo pipefail
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=${BASE_WORK:-/var/tmp/tailor-base}
need=()
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
command -v buildah >/dev/null 2>&1 || need+=(buildah)
if [[ ${#need[@]} -gt 0 ]]; then
  echo "make-base: installing ${need[*]} (apt)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
NODE_BIN=$(readlink -f "$(command -v node)")
NODE_MODULES=$(dirname "$(dirname "$NODE_BIN")")/lib/node_modules
mkdir -p "$WORK"

make_rootfs() { # name, extra packages
  local out="$WORK/$1.tar"
  if [[ -s "$out" ]]; then echo "make-base: $out exists"; return; fi
  mmdebstrap --variant=minbase --format=tar --include="ca-certificates${2:+,$2}" \
    --aptopt='Acquire::Retries "5"' --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives/"' \
    --setup-hook='find /var/cache/apt/archives -maxdepth 1 -name "*.deb" -exec cp -l -t "$1/var/cache/apt/archives/" {} +' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb' \
    bookworm "$out.partial" "$MIRROR"
  mv "$out.partial" "$out"
}

commit_image() { # root file system name, image name, with-node (1/0)
  if buildah inspect --type image "$2" >/dev/null 2>&1; then echo "make-base: $2 exists"; return; fi
  local ctr
  ctr=$(buildah from scratch)
  buildah add "$ctr" "$WORK/$1.tar" / >/dev/null
  if [[ $3 == 1 ]]; then
    buildah copy "$ctr" "$NODE_BIN" /usr/local/bin/node >/dev/null
    buildah copy "$ctr" "$NODE_MODULES/npm" /usr/local/lib/node_modules/npm >/dev/null
    buildah copy "$ctr" "$NODE_MODULES/corepack" /usr/local/lib/node_modules/corepack >/dev/null
    buildah run --isolation chroot "$ctr" -- sh -c 'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && ln -sf ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack && node --version'
    buildah config --cmd node "$ctr"
  else
    buildah config --cmd bash "$ctr"
  fi
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  buildah commit --rm "$ctr" "$2" >/dev/null
  echo "make-base: $2 ($(buildah images --format '{{.Size}}' "$2"))"
}

make_rootfs bookworm ''
make_rootfs bookworm-ffmpeg ffmpeg
commit_image bookworm localhost/tailor-base/debian:bookworm 0
commit_image bookworm localhost/tailor-base/node:bookworm 1
commit_image bookworm-ffmpeg localhost/tailor-base/ffmpeg:bookworm 0
