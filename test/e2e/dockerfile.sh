#!/usr/bin/env bash
# Checks the Dockerfile, and with --image the image it built (scripts/image.sh), without a
# container engine. Statically (20-50 s: dpkg -S and apt-cache per library):
#   - three stages: build on debian:bookworm (scripts/install-deps.sh --build, only build
#     packages; the kdesched target, no tests, ccache in a cache mount, stripped; built as
#     scripts/test.sh builds: the same build type and -Werror, at build/, LANG=C.UTF-8), rootfs
#     on debian:bookworm-slim (scripts/image-rootfs.sh collects the image's files into /out), and
#     the image FROM scratch with only /out, USER 65532:65532, ENTRYPOINT /bin/kdesched;
#   - the library contract: the rootfs stage's apt-get install list, read from the Dockerfile,
#     holds the package of every shared library the binary loads (ldd, then dpkg -S on the file)
#     and nothing else: each listed package provides at least one of them (ca-certificates: the CA
#     bundle); every listed package exists in this machine's apt sources (bookworm: this machine
#     must be Debian 12 too, so its packages are the image's);
#   - /bin/descheduler, the chart's command; .dockerignore keeps build trees and .git out.
# With --image ARCHIVE (or KDESCHED_IMAGE_ARCHIVE), an OCI archive: its layers are unpacked into a
# scratch rootfs (jq over index.json and the manifest, tar) and checked there, as root (chroot):
# the loader resolves every library, /bin/kdesched and /bin/descheduler run (also as 65532) and
# plan the example, no shell, apt or dpkg, only the libraries the binary loads, passwd/group with
# 65532, the CA bundle and OpenSSL's default paths to it, the merged-/usr symlinks, the config's
# User/Entrypoint/port, at most 26 MiB unpacked; and the library contract again, on the image's
# own libraries (the loader's list inside the image).
#
#   test/e2e/dockerfile.sh [--image ARCHIVE] [KDESCHED_BINARY]
#     KDESCHED_BINARY: default $KDESCHED_BIN, else build-helm/kdesched; with --image it may be
#     left out (the contract is then checked on the image's binary only)
#
# A failed check is reported and the test goes on; the last line is "dockerfile: N passed, N failed"
# (test/e2e/lib.sh).
# shellcheck disable=SC2016  # awk and jq programs are single-quoted on purpose
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin dockerfile
DOCKERFILE="${ROOT}/Dockerfile"
IMAGE="${KDESCHED_IMAGE_ARCHIVE:-}"
BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --image) IMAGE="$2"; shift 2 ;;
    --image=*) IMAGE="${1#--image=}"; shift ;;
    *) BIN="$1"; shift ;;
  esac
done
if [ -z "${BIN}" ]; then
  BIN="${KDESCHED_BIN:-${ROOT}/build-helm/kdesched}"
  [ -x "${BIN}" ] || [ -z "${IMAGE}" ] || BIN=""
fi
[ -z "${BIN}" ] || [ -x "${BIN}" ] || die "no kdesched binary at ${BIN} (build it, or pass its path)"
[ -z "${IMAGE}" ] || [ -s "${IMAGE}" ] || die "no image archive at ${IMAGE} (scripts/image.sh makes one)"
# Packages the rootfs stage installs for a file other than a library, and that file in the image.
declare -A NON_LIBRARY=([ca-certificates]=/etc/ssl/certs/ca-certificates.crt [tzdata]=/usr/share/zoneinfo)
# A third of upstream's image (FROM scratch + go-runner + a static 78 MiB binary).
SIZE_BUDGET=$((26 * 1024 * 1024))

# The stages: "FROM image AS name" lines split the file.
stage_of() {  # stage_of N: the text of stage N (1-based)
  awk -v n="$1" '/^FROM[[:space:]]/{s++} s==n' "${DOCKERFILE}"
}
# joined TEXT: continuation lines joined, so a RUN is one line.
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' <<<"$1"; }
nstages="$(grep -c '^FROM[[:space:]]' "${DOCKERFILE}")"
build_stage="$(joined "$(stage_of 1)")"
rootfs_stage="$(joined "$(stage_of 2)")"
image_stage="$(stage_of "${nstages}")"

check_stages() {
  phase "stages"
  check "three stages" test "${nstages}" -eq 3
  check "build stage: FROM debian:bookworm AS build" grep -Eq '^FROM debian:bookworm AS build$' <<<"${build_stage}"
  check "build stage: scripts/install-deps.sh --build" grep -q 'scripts/install-deps.sh --build' <<<"${build_stage}"
  check "build stage: cmake build of the kdesched target" grep -Eq 'ninja -C [^ ]+ kdesched' <<<"${build_stage}"
  # The same compile as scripts/test.sh's (scripts/image.sh shares the host's ccache with it): build
  # type, -Werror, the tree at build/ (ccache's paths are relative to it), the locale ccache hashes.
  local ci_type
  ci_type="$(sed -n 's/^cmake -S \. -B build .*-DCMAKE_BUILD_TYPE=\([A-Za-z]*\) -DKDESCHED_WERROR=ON.*/\1/p' "${ROOT}/scripts/test.sh")"
  check "build stage: scripts/test.sh's build type (${ci_type:-none found}) and -Werror, at build/, without the unit tests" \
    grep -Eq "cmake -S \. -B build .*-DCMAKE_BUILD_TYPE=${ci_type:-none} -DKDESCHED_WERROR=ON .*-DKDESCHED_TESTS=OFF" <<<"${build_stage}"
  check "build stage: LANG=C.UTF-8, as scripts/test.sh compiles" \
    bash -c "grep -q '^ENV LANG=C.UTF-8$' <<<\"\$1\" && grep -q 'LANG=C.UTF-8' '${ROOT}/scripts/test.sh'" _ "${build_stage}"
  check "build stage: ccache through the kdesched-ccache cache mount" \
    grep -Eq 'RUN --mount=type=cache,id=kdesched-ccache,target=[^ ]+ .*-DCMAKE_CXX_COMPILER_LAUNCHER=ccache' <<<"${build_stage}"
  check "build stage: strips and runs the binary" grep -Eq 'strip .*&& .*kdesched version' <<<"${build_stage}"
  check "rootfs stage: FROM debian:bookworm-slim AS rootfs" grep -Eq '^FROM debian:bookworm-slim AS rootfs$' <<<"${rootfs_stage}"
  check "rootfs stage: the binary from the build stage" grep -Eq '^COPY --from=build [^ ]+kdesched ' <<<"${rootfs_stage}"
  check "rootfs stage: scripts/image-rootfs.sh collects /out" grep -Eq '^RUN image-rootfs.sh [^ ]+ /out$' <<<"${rootfs_stage}"
  check "image: FROM scratch" grep -Eq '^FROM scratch$' <<<"${image_stage}"
  check "image: /out of the rootfs stage and nothing else" \
    test "$(grep -Ec '^(COPY|ADD|RUN)' <<<"${image_stage}")" = 1 -a -n "$(grep -x 'COPY --from=rootfs /out/ /' <<<"${image_stage}")"
  check "image: USER 65532:65532 (non-root)" grep -Eq '^USER 65532:65532$' <<<"${image_stage}"
  check "image: EXPOSE 10258" grep -Eq '^EXPOSE 10258$' <<<"${image_stage}"
  check "image: ENTRYPOINT /bin/kdesched" grep -q '^ENTRYPOINT \["/bin/kdesched"\]$' <<<"${image_stage}"
  # shellcheck disable=SC2016  # ${OUT} is image-rootfs.sh's text
  check "image-rootfs.sh: /usr/bin/descheduler symlink to kdesched" \
    grep -q 'ln -s kdesched "${OUT}/usr/bin/descheduler"' "${ROOT}/scripts/image-rootfs.sh"
  check "the chart's command is one of the image's paths" grep -Eq '^  - "/bin/(descheduler|kdesched)"$' "${ROOT}/helm/kdesched/values.yaml"
  check "this machine is Debian 12 (bookworm), like the image" grep -q '^12\.' /etc/debian_version
  local p
  for p in .git build 'build-*'; do
    check ".dockerignore excludes ${p}" grep -qxF "${p}" "${ROOT}/.dockerignore"
  done
  for p in scripts/install-deps.sh scripts/image-rootfs.sh; do
    check ".dockerignore keeps ${p} (a stage copies it)" context_keeps "${p}"
  done
  # install-deps.sh --build: the build_packages array, none of the test-only tools.
  local build_pkgs
  build_pkgs="$(sed -n '/^build_packages=(/,/^)/p' "${ROOT}/scripts/install-deps.sh" | sed '1d;$d' | tr -s ' \n' '\n' | sed '/^$/d')"
  note "install-deps.sh --build: $(tr '\n' ' ' <<<"${build_pkgs}")"
  check "install-deps.sh --build installs the compiler, CMake, Ninja and ccache" \
    lines_have "${build_pkgs}" g++ cmake ninja-build ccache
  check "install-deps.sh --build installs no test tools (prometheus, nginx, clang, gtest, python)" \
    lines_lack "${build_pkgs}" '^(prometheus|nginx-light|clang|clang-format|libgtest-dev|libgmock-dev|libbenchmark-dev|python3.*)$'
}

# Predicates for check.
lines_have() { local text="$1" w; shift; for w in "$@"; do grep -qxF -- "${w}" <<<"${text}" || return 1; done; }
lines_lack() { ! grep -Eq -- "$2" <<<"$1"; }
prints() { local want="$1"; shift; [ "$("$@" 2>&1)" = "${want}" ]; }
# resolved_list OUTPUT: ld.so --list output with libraries and no "not found".
resolved_list() { [ -n "$1" ] && ! grep -q 'not found' <<<"$1" && grep -q '=> /' <<<"$1"; }
# context_keeps PATH: .dockerignore does not drop PATH (scripts/ is dropped but for its exceptions).
context_keeps() {
  ! grep -qxE 'scripts|scripts/\*' "${ROOT}/.dockerignore" || grep -qxF "!$1" "${ROOT}/.dockerignore"
}

# owner FILE: the Debian package that ships FILE (tries the path as given, its target and the
# /usr-merged spellings, since dpkg records the path the package shipped). Remembered per path.
declare -A OWNER_OF=()
owner() {
  local f="$1" cands=() c r
  if [ -n "${OWNER_OF[${f}]+x}" ]; then echo "${OWNER_OF[${f}]}"; [ -n "${OWNER_OF[${f}]}" ]; return; fi
  r="$(readlink -f "${f}")"
  for c in "${f}" "${r}"; do
    cands+=("${c}")
    case "${c}" in /usr/*) cands+=("${c#/usr}") ;; *) cands+=("/usr${c}") ;; esac
  done
  for c in "${cands[@]}"; do
    r="$(dpkg -S "${c}" 2>/dev/null | head -n1)" && [ -n "${r}" ] && {
      r="${r%%:*}"; OWNER_OF["${f}"]="${r}"; echo "${r}"; return 0
    }
  done
  OWNER_OF["${f}"]=""
  return 1
}

# The words after "apt-get install" up to "&&", minus options, in the rootfs stage.
mapfile -t LISTED < <(grep -o 'apt-get install[^&]*' <<<"${rootfs_stage}" | tr -s ' \t' '\n' |
  grep -v -e '^apt-get$' -e '^install$' -e '^-' -e '^$' | sort -u)

# library_contract WHERE LIB...: each library's package is listed; each listed package provides
# one of them, or is a NON_LIBRARY package whose file is there (IN_IMAGE: the unpacked image).
library_contract() {
  local where="$1" lib pkg; shift
  local -A needed=()
  check "${where}: the binary loads libraries ($#)" test "$#" -gt 3
  for lib in "$@"; do
    pkg="$(owner "${lib}")" || { fail "${where}: ${lib}: no Debian package ships it (dpkg -S)"; continue; }
    needed["${pkg}"]+="$(basename "${lib}") "
    # Not printf | grep -q: under pipefail grep's early exit can fail printf's write (SIGPIPE).
    if grep -qxF "${pkg}" <<<"$(printf '%s\n' "${LISTED[@]}")"; then
      pass "${where}: $(basename "${lib}") <- ${pkg} (listed)"
    else
      fail "${where}: $(basename "${lib}") <- ${pkg}, which the rootfs stage does not install"
    fi
  done
  for pkg in "${LISTED[@]}"; do
    if [ -n "${needed[${pkg}]+x}" ]; then
      pass "${where}: listed ${pkg} provides ${needed[${pkg}]% }"
    elif [ -n "${NON_LIBRARY[${pkg}]+x}" ] && [ -n "${IN_IMAGE:-}" ]; then
      check "${where}: listed ${pkg} provides ${NON_LIBRARY[${pkg}]}" test -s "${IN_IMAGE}${NON_LIBRARY[${pkg}]}"
    elif [ -n "${NON_LIBRARY[${pkg}]+x}" ]; then
      check "${where}: listed ${pkg} for ${NON_LIBRARY[${pkg}]}, which image-rootfs.sh copies" \
        grep -qF "${NON_LIBRARY[${pkg}]}" "${ROOT}/scripts/image-rootfs.sh"
    else
      fail "${where}: listed ${pkg} provides none of the binary's libraries (not needed)"
    fi
  done
}

# ldd_paths: the library paths in ldd / ld.so --list output on stdin (the loader included).
ldd_paths() { awk '$2 == "=>" && $3 ~ /^\// {print $3} $2 != "=>" && $1 ~ /^\// {print $1}' | sort -u; }

check_packages() {
  phase "rootfs packages vs. the binary's shared libraries"
  note "rootfs stage installs: ${LISTED[*]}"
  check "the rootfs stage lists packages" test "${#LISTED[@]}" -gt 0
  local pkg cand libs
  if [ -n "${BIN}" ]; then
    mapfile -t libs < <(ldd "${BIN}" | ldd_paths)
    library_contract "host ldd" "${libs[@]}"
  fi
  for pkg in "${LISTED[@]}"; do
    cand="$(apt-cache policy "${pkg}" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    check "${pkg} is installable from this machine's apt sources (candidate ${cand:-none})" \
      test -n "${cand}" -a "${cand}" != "(none)"
  done
}

# ---- the image ---------------------------------------------------------------------------------
# blob DIGEST: the path of a blob of the unpacked archive.
blob() { echo "${WORK}/oci/blobs/${1%%:*}/${1#*:}"; }

# unpack_image: the archive into WORK/oci, its layers in order into ROOTFS (whiteouts applied);
# MANIFEST and CONFIG are the JSON files.
unpack_image() {
  mkdir -p "${WORK}/oci" "${ROOTFS}"
  tar -xf "${IMAGE}" -C "${WORK}/oci"
  must "the archive has an OCI index with one image" test "$(jq '.manifests | length' "${WORK}/oci/index.json")" = 1
  MANIFEST="$(blob "$(jq -r '.manifests[0].digest' "${WORK}/oci/index.json")")"
  CONFIG="$(blob "$(jq -r '.config.digest' "${MANIFEST}")")"
  note "image: $(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"] // "(no name)"' "${WORK}/oci/index.json")" \
    "$(jq -r '.manifests[0].digest' "${WORK}/oci/index.json")"
  local d type w unpacked=0 n=0
  while read -r d type; do
    # The layer's tar stream (what "unpacked" counts); GNU tar finds the compression itself.
    case "${type}" in
      *+gzip) unpacked=$((unpacked + $(gzip -dc "$(blob "${d}")" | wc -c))) ;;
      *.tar) unpacked=$((unpacked + $(stat -c %s "$(blob "${d}")"))) ;;
      *) fail "layer ${d}: media type ${type} (gzip or plain tar expected)" ;;
    esac
    tar -xf "$(blob "${d}")" -C "${ROOTFS}" --numeric-owner
    while IFS= read -r w; do
      if [ "$(basename "${w}")" = .wh..wh..opq ]; then
        find "$(dirname "${w}")" -mindepth 1 -maxdepth 1 ! -name .wh..wh..opq -exec rm -rf {} +
      else
        local dir gone; dir="$(dirname "${w}")"; gone="$(basename "${w}")"
        rm -rf "${dir:?}/${gone#.wh.}"
      fi
      rm -f "${w}"
    done < <(find "${ROOTFS}" -name '.wh.*')
    n=$((n + 1))
  done < <(jq -r '.layers[] | "\(.digest) \(.mediaType)"' "${MANIFEST}")
  must "the image has layers (${n})" test "${n}" -gt 0
  IMAGE_FILE_BYTES="${unpacked}"
}

check_image_files() {
  phase "the image: files"
  local interp
  interp="$(readelf -l "${ROOTFS}/usr/bin/kdesched" 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')"
  INTERP="${interp:-/lib64/ld-linux-x86-64.so.2}"
  check "/usr/bin/kdesched is an executable file" test -f "${ROOTFS}/usr/bin/kdesched" -a -x "${ROOTFS}/usr/bin/kdesched"
  check "/usr/bin/descheduler -> kdesched" test "$(readlink "${ROOTFS}/usr/bin/descheduler")" = kdesched
  check "the binary is stripped (no .symtab)" lines_lack "$(readelf -S "${ROOTFS}/usr/bin/kdesched")" '\.symtab'
  local d
  for d in bin lib lib64; do
    check "/${d} -> usr/${d} (merged /usr)" test "$(readlink "${ROOTFS}/${d}")" = "usr/${d}"
  done
  check "the loader is at the binary's PT_INTERP ${INTERP}, a real file" \
    test -f "${ROOTFS}${INTERP}" -a ! -L "${ROOTFS}${INTERP}"
  for d in bin/sh usr/bin/sh usr/bin/bash usr/bin/dash usr/bin/busybox; do
    check "no ${d}" test ! -e "${ROOTFS}/${d}" -a ! -L "${ROOTFS}/${d}"
  done
  for d in usr/bin/apt usr/bin/apt-get usr/bin/dpkg var/lib/dpkg var/lib/apt etc/apt; do
    check "no ${d} (no package manager, no dpkg database)" test ! -e "${ROOTFS}/${d}"
  done
  check "/etc/passwd has nonroot, uid and gid 65532" awk -F: '$3 == 65532 && $4 == 65532 {f=1} END {exit !f}' "${ROOTFS}/etc/passwd"
  check "/etc/passwd has root (uid 0)" awk -F: '$1 == "root" && $3 == 0 {f=1} END {exit !f}' "${ROOTFS}/etc/passwd"
  check "/etc/group has gid 65532" awk -F: '$3 == 65532 {f=1} END {exit !f}' "${ROOTFS}/etc/group"
  local certs
  certs="$(grep -c 'BEGIN CERTIFICATE' "${ROOTFS}/etc/ssl/certs/ca-certificates.crt" 2>/dev/null || true)"
  check "the CA bundle /etc/ssl/certs/ca-certificates.crt (${certs:-0} certificates)" test "${certs:-0}" -gt 50
  check "OpenSSL's default file /usr/lib/ssl/cert.pem -> the bundle" \
    test "$(readlink "${ROOTFS}/usr/lib/ssl/cert.pem")" = /etc/ssl/certs/ca-certificates.crt
  check "OpenSSL's default directory /usr/lib/ssl/certs -> /etc/ssl/certs" \
    test "$(readlink "${ROOTFS}/usr/lib/ssl/certs")" = /etc/ssl/certs
  check "/etc/nsswitch.conf: hosts from files, then dns" grep -qx 'hosts: files dns' "${ROOTFS}/etc/nsswitch.conf"
  local files
  files="$(cd "${ROOTFS}" && find . -type f | sed 's|^\.||' | sort | tr '\n' ' ')"
  note "files: ${files}"
  note "unpacked: ${IMAGE_FILE_BYTES} bytes of layers, $(du -sb "${ROOTFS}" | cut -f1) bytes of files"
  check "the image is at most 26 MiB unpacked (${IMAGE_FILE_BYTES} bytes; upstream's is 78+ MiB)" \
    test "${IMAGE_FILE_BYTES}" -le "${SIZE_BUDGET}"
}

check_image_runs() {
  phase "the image: runs"
  local out libs lib extra=()
  out="$(chroot "${ROOTFS}" "${INTERP}" --list /usr/bin/kdesched 2>&1)" || true
  check "chroot: ${INTERP} --list /usr/bin/kdesched resolves every library" \
    resolved_list "${out}"
  if grep -q 'not found' <<<"${out}"; then note "$(grep 'not found' <<<"${out}")"; fi
  mapfile -t libs < <(ldd_paths <<<"${out}")
  # Only the libraries the binary loads: every other .so file in the image is one too many.
  while IFS= read -r lib; do
    local hit=0 l
    for l in "${libs[@]}"; do [ "$(readlink -f "${ROOTFS}${l}")" = "$(readlink -f "${ROOTFS}${lib}")" ] && hit=1; done
    [ "${hit}" = 1 ] || extra+=("${lib}")
  done < <(cd "${ROOTFS}" && find . -name '*.so*' -type f | sed 's|^\.||')
  check "the image holds only the libraries the binary loads (extra: ${extra[*]:-none})" test "${#extra[@]}" -eq 0
  local want
  want="kdesched $(sed -n 's/^project(kdesched VERSION \([0-9.]*\).*/\1/p' "${ROOT}/CMakeLists.txt")"
  check "chroot: /bin/kdesched version prints ${want}" prints "${want}" chroot "${ROOTFS}" /bin/kdesched version
  check "chroot: /bin/descheduler version prints ${want}" prints "${want}" chroot "${ROOTFS}" /bin/descheduler version
  check "chroot as 65532: /bin/kdesched version prints ${want}" \
    prints "${want}" chroot --userspec=65532:65532 "${ROOTFS}" /bin/kdesched version
  # The order/payment example, planned offline by the image's binary as the image's user.
  mkdir -p "${ROOTFS}/kdesched-test"
  cp "${ROOT}/examples/order-payment/snapshot.json" "${ROOT}/examples/order-payment/policy.yaml" "${ROOTFS}/kdesched-test/"
  chroot --userspec=65532:65532 "${ROOTFS}" /bin/kdesched plan --snapshot /kdesched-test/snapshot.json \
    --policy-config-file /kdesched-test/policy.yaml >"${WORK}/plan.txt" 2>&1 || true
  check "chroot as 65532: kdesched plan on the order/payment example evicts payment" \
    grep -Eq '^default +payment-.*RemovePodsViolatingInterPodAntiAffinity' "${WORK}/plan.txt"
  rm -rf "${ROOTFS}/kdesched-test"
  IN_IMAGE="${ROOTFS}" library_contract "image" "${libs[@]}"
}

check_image_config() {
  phase "the image: config"
  note "config: $(jq -c '.config' "${CONFIG}")"
  check "config: User 65532:65532" test "$(jq -r '.config.User' "${CONFIG}")" = 65532:65532
  check "config: Entrypoint [\"/bin/kdesched\"]" test "$(jq -c '.config.Entrypoint' "${CONFIG}")" = '["/bin/kdesched"]'
  check "config: no Cmd (the chart's args are kdesched's)" test "$(jq -c '.config.Cmd // []' "${CONFIG}")" = '[]'
  check "config: exposes 10258/tcp" test "$(jq -r '.config.ExposedPorts | has("10258/tcp")' "${CONFIG}")" = true
  check "config: linux/amd64 or linux/arm64" lines_have "$(jq -r '"\(.os)/\(.architecture)"' "${CONFIG}")" "linux/$(dpkg --print-architecture)"
  check "config: the layers' diff_ids match the manifest's layers" \
    test "$(jq '.rootfs.diff_ids | length' "${CONFIG}")" = "$(jq '.layers | length' "${MANIFEST}")"
}

check_stages
check_packages
if [ -n "${IMAGE}" ]; then
  [ "$(id -u)" -eq 0 ] || die "the image checks chroot into the unpacked image: run as root"
  command -v jq >/dev/null || die "the image checks need jq"
  ROOTFS="${WORK}/rootfs"
  phase "the image: unpack ${IMAGE}"
  unpack_image
  check_image_files
  check_image_runs
  check_image_config
fi
end_phase
