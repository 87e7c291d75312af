#!/usr/bin/env bash
# Makes the two base images the image build uses where no registry can be reached, from Debian's
# own packages: `mmdebstrap` (bookworm, minbase) plus this machine's Node.js binary.
#   localhost/tailor-base/node:bookworm         Node.js, npm, corepack, ca-certificates   (build stage, gateway runtime)
#   localhost/tailor-base/node-ffmpeg:bookworm  the same + ffmpeg                          (CPU inference runtime)
# Usage: sudo bash scripts/images/make-base.sh      (needs mmdebstrap, buildah; run as root)
# Environment: MIRROR (default http://deb.debian.org/debian), BASE_WORK (default /var/tmp/tailor-base).
# Debs already in /var/cache/apt/archives are reused (nothing is downloaded twice).
set -euo pipefail
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=${BASE_WORK:-/var/tmp/tailor-base}
NODE_BIN=$(readlink -f "$(command -v node)")
NODE_MODULES=$(dirname "$(dirname "$NODE_BIN")")/lib/node_modules
mkdir -p "$WORK"

make_rootfs() { # name, extra packages
  local out="$WORK/$1.tar"
  if [[ -s "$out" ]]; then echo "make-base: $out exists (delete it to rebuild)"; return; fi
  mmdebstrap --variant=minbase --format=tar --include="ca-certificates${2:+,$2}" \
    --aptopt='Acquire::Retries "5"' --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives/"' \
    --setup-hook='find /var/cache/apt/archives -maxdepth 1 -name "*.deb" -exec cp -l -t "$1/var/cache/apt/archives/" {} +' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb' \
    bookworm "$out.partial" "$MIRROR"
  mv "$out.partial" "$out"
}

commit_image() { # tarball name, image name
  local ctr
  ctr=$(buildah from scratch)
  buildah add "$ctr" "$WORK/$1.tar" / >/dev/null
  buildah copy "$ctr" "$NODE_BIN" /usr/local/bin/node >/dev/null
  buildah copy "$ctr" "$NODE_MODULES/npm" /usr/local/lib/node_modules/npm >/dev/null
  buildah copy "$ctr" "$NODE_MODULES/corepack" /usr/local/lib/node_modules/corepack >/dev/null
  buildah run --isolation chroot "$ctr" -- sh -c 'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && ln -sf ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack && node --version'
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
  buildah commit --rm "$ctr" "$2" >/dev/null
  echo "make-base: $2 ($(buildah images --format '{{.Size}}' "$2"))"
}

make_rootfs node ''
make_rootfs node-ffmpeg ffmpeg
commit_image node localhost/tailor-base/node:bookworm
commit_image node-ffmpeg localhost/tailor-base/node-ffmpeg:bookworm
