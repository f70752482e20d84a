#!/usr/bin/env bash
# Builds the kdesched container image from the repository's Dockerfile with buildah: no Docker
# engine, no registry. The Dockerfile's base images are made here from Debian's own packages
# (mmdebstrap, this machine's apt mirror) and imported under the names buildah resolves
# `FROM debian:...` to; nothing is ever pulled.
#
#   scripts/image.sh [--tag NAME] [--out FILE] [--refresh-bases]
#     --tag NAME        image name (default ghcr.io/kdesched/kdesched:v<appVersion of helm/kdesched>,
#                       the chart's default image)
#     --out FILE        the OCI archive (default $KDESCHED_CACHE/images/kdesched.oci.tar)
#     --refresh-bases   make the base images again (new security updates); otherwise they are
#                       reused for as long as the mmdebstrap command line that made them is the same
#   KDESCHED_CACHE          cache root (default ~/.cache/kdesched)
#   KDESCHED_IMAGE_DRIVER   buildah storage driver (default: overlay when this kernel mounts it, else vfs)
#   KDESCHED_DEBIAN_MIRROR  Debian mirror (default http://deb.debian.org)
#
# Prints the image's name, digest, uncompressed size (its layers unpacked, as tar streams),
# compressed size (the OCI archive, gzip'ed layers) and the wall time.
# Caches, all under $KDESCHED_CACHE/containers: storage-<driver>/ (buildah's image store, with
# the --layers cache), bases/<name>-<key>.tar (the mmdebstrap output, keyed by a hash of its
# command line), tmp/buildah-cache/kdesched-ccache/ (the compiler cache the Dockerfile's build
# stage mounts, a link to this machine's ccache directory: share_ccache; tmp/ is buildah's
# TMPDIR), run/ (locks, buildah's run root).
# Installs buildah, mmdebstrap and jq when missing (as root, with apt-get).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${KDESCHED_CACHE:-${HOME}/.cache/kdesched}"
CONTAINERS="${CACHE}/containers"
MIRROR="${KDESCHED_DEBIAN_MIRROR:-http://deb.debian.org}"
APP_VERSION="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "${ROOT}/helm/kdesched/Chart.yaml")"
TAG="ghcr.io/kdesched/kdesched:v${APP_VERSION}"
OUT="${CACHE}/images/kdesched.oci.tar"
REFRESH=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --refresh-bases) REFRESH=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "image: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "${APP_VERSION}" ] || { echo "image: no appVersion in helm/kdesched/Chart.yaml" >&2; exit 1; }

T0="$(date +%s)"
say() { printf '== %s [%ss]\n' "$*" "$(($(date +%s) - T0))"; }

# ---- tools --------------------------------------------------------------------------------
ensure_tools() {
  local need=() c
  for c in buildah:buildah mmdebstrap:mmdebstrap jq:jq gzip:gzip; do
    command -v "${c%%:*}" >/dev/null 2>&1 || need+=("${c#*:}")
  done
  [ "${#need[@]}" -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "image: missing ${need[*]}; run as root (apt-get install ${need[*]})" >&2
    exit 1
  fi
  say "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt-get (a developer's install-deps) may hold the lock for a while: wait for it.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# ---- buildah with the cache's storage --------------------------------------------------------
# overlay when the kernel mounts it here (buildah's own check, run against a store of its own),
# else vfs (a full copy of the tree per layer: slower and bigger, but works everywhere).
pick_driver() {
  if [ -n "${KDESCHED_IMAGE_DRIVER:-}" ]; then DRIVER="${KDESCHED_IMAGE_DRIVER}"; return; fi
  DRIVER=overlay
  if ! buildah --root "${CONTAINERS}/storage-overlay" --runroot "${CONTAINERS}/run/overlay" \
      --storage-driver overlay info >/dev/null 2>&1; then
    echo "image: the overlay storage driver does not work here; using vfs" >&2
    DRIVER=vfs
  fi
}

# TMPDIR: buildah's temporary files, and where buildah 1.28 keeps RUN --mount=type=cache
# directories (buildah-cache/<id>) across builds: the Dockerfile's compiler cache lives there.
bah() {
  TMPDIR="${CONTAINERS}/tmp" CONTAINERS_REGISTRIES_CONF="${CONTAINERS}/registries.conf" \
    buildah --root "${CONTAINERS}/storage-${DRIVER}" --runroot "${CONTAINERS}/run/${DRIVER}" \
    --storage-driver "${DRIVER}" "$@"
}

# Short names resolve as Docker resolves them (docker.io, library/), whatever /etc/containers says;
# with --pull=never that only chooses the local name.
write_registries_conf() {
  printf '%s\n' 'unqualified-search-registries = ["docker.io"]' 'short-name-mode = "permissive"' \
    >"${CONTAINERS}/registries.conf"
}

# ---- base images -------------------------------------------------------------------------------
# make_base NAME [mmdebstrap option...]: NAME (docker.io/library/debian:TAG) in buildah's store,
# made by mmdebstrap from bookworm, bookworm-updates and bookworm-security (main). Its key is a hash
# of mmdebstrap's version and command line, kept as a label: the same key in the store is reused,
# else the cached tarball is imported, else mmdebstrap runs.
make_base() {
  local name="$1"; shift
  local args=(--mode=root --variant=minbase --format=tar "$@" bookworm -
    "deb ${MIRROR}/debian bookworm main"
    "deb ${MIRROR}/debian bookworm-updates main"
    "deb ${MIRROR}/debian-security bookworm-security main")
  local key tar have
  key="$( (mmdebstrap --version; printf '%s\n' "${args[@]}") | sha256sum | cut -c1-16)"
  tar="${CONTAINERS}/bases/${name##*/}-${key}.tar"
  tar="${tar/:/-}"
  have="$(bah inspect --type image --format '{{index .OCIv1.Config.Labels "org.kdesched.base-key"}}' \
    "${name}" 2>/dev/null || true)"
  if [ "${REFRESH}" = 0 ] && [ "${have}" = "${key}" ]; then
    say "base ${name}: in the store (key ${key})"
    return 0
  fi
  if [ "${REFRESH}" = 1 ] || [ ! -s "${tar}" ]; then
    say "base ${name}: mmdebstrap ${args[*]}"
    mkdir -p "${CONTAINERS}/bases"
    # Device nodes stay out of the layer: the container runtime provides /dev.
    if ! mmdebstrap --quiet "${args[@]}" | tar --delete --wildcards './dev/?*' >"${tar}.part"; then
      rm -f "${tar}.part"
      echo "image: mmdebstrap failed for ${name}" >&2
      exit 1
    fi
    mv "${tar}.part" "${tar}"
  fi
  say "base ${name}: importing ${tar}"
  local ctr
  ctr="$(bah from --pull=never scratch)"
  bah add --quiet "${ctr}" "${tar}" / >/dev/null
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --label "org.kdesched.base-key=${key}" "${ctr}"
  bah commit --quiet --rm --identity-label=false "${ctr}" "${name}" >/dev/null
}

# A slim variant as Docker's -slim images are: dpkg leaves out documentation, manual pages and
# translations (copyright files stay).
SLIM_EXCLUDES=(
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*'
)

# ---- build, export, report ---------------------------------------------------------------------
# share_ccache: the Dockerfile's compiler cache mount (buildah keeps it in
# $TMPDIR/buildah-cache/kdesched-ccache) becomes a link to this machine's ccache directory, so the
# build stage, which compiles as scripts/test.sh does, finds what the host compiled. Without ccache
# on the host, or with KDESCHED_IMAGE_SHARE_CCACHE=0, the mount keeps a cache of its own.
share_ccache() {
  local mount="${CONTAINERS}/tmp/buildah-cache/kdesched-ccache" dir
  [ "${KDESCHED_IMAGE_SHARE_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null || return 0
  dir="$(ccache --get-config cache_dir 2>/dev/null)" && [ -n "${dir}" ] || return 0
  mkdir -p "${dir}" "$(dirname "${mount}")"
  [ "$(readlink "${mount}" 2>/dev/null)" = "${dir}" ] && return 0
  rm -rf "${mount}"
  ln -s "${dir}" "${mount}"
  say "compiler cache: the build stage's is this machine's (${dir})"
}

build_image() {
  share_ccache
  say "buildah build ${TAG}"
  # chroot isolation needs no OCI runtime (runc/crun) and no user namespaces.
  bah build --layers --pull=never --isolation chroot --identity-label=false --force-rm \
    --file "${ROOT}/Dockerfile" --tag "${TAG}" "${ROOT}"
}

export_image() {
  say "buildah push ${TAG} oci-archive:${OUT}"
  mkdir -p "$(dirname "${OUT}")"
  rm -f "${OUT}"
  bah push --quiet --digestfile "${CONTAINERS}/run/digest" "${TAG}" "oci-archive:${OUT}:${TAG}"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

# report: the archive's layers, unpacked (tar stream bytes), against the archive itself.
report() {
  local dir manifest layers=0 blob d
  dir="$(mktemp -d)"
  tar -xf "${OUT}" -C "${dir}" index.json
  manifest="$(jq -r '.manifests[0].digest' "${dir}/index.json")"
  tar -xf "${OUT}" -C "${dir}" "blobs/sha256/${manifest#sha256:}"
  for d in $(jq -r '.layers[].digest' "${dir}/blobs/sha256/${manifest#sha256:}"); do
    blob="$(tar -xOf "${OUT}" "blobs/sha256/${d#sha256:}" | gzip -dc | wc -c)"
    layers=$((layers + blob))
  done
  rm -rf "${dir}"
  local packed; packed="$(stat -c %s "${OUT}")"
  echo "image:        ${TAG}"
  echo "digest:       ${manifest}"
  echo "archive:      ${OUT}"
  echo "uncompressed: ${layers} bytes ($(mib "${layers}"), the layers unpacked)"
  echo "compressed:   ${packed} bytes ($(mib "${packed}"), the OCI archive of gzip'ed layers)"
  echo "wall time:    $(($(date +%s) - T0)) s"
}

cleanup() {
  # Working containers a failed or interrupted build left (buildah build removes its own on
  # success): nothing else uses this store while the lock is held.
  [ -z "${DRIVER:-}" ] || bah rm --all >/dev/null 2>&1 || true
}

main() {
  ensure_tools
  mkdir -p "${CONTAINERS}/run" "${CONTAINERS}/tmp"
  exec 9>"${CONTAINERS}/run/lock"
  flock -w 1800 9 || { echo "image: another scripts/image.sh holds ${CONTAINERS}/run/lock" >&2; exit 1; }
  trap cleanup EXIT
  pick_driver
  write_registries_conf
  say "storage: ${DRIVER} in ${CONTAINERS}/storage-${DRIVER}"
  make_base docker.io/library/debian:bookworm
  make_base docker.io/library/debian:bookworm-slim "${SLIM_EXCLUDES[@]}"
  build_image
  export_image
  report
}

main
