#!/usr/bin/env bash
# Checks the Dockerfile without a container engine (20-50 s: dpkg -S and apt-cache per library):
#   - a build stage on debian:bookworm that runs scripts/install-deps.sh and builds the kdesched
#     target; a runtime stage on debian:bookworm-slim (this machine must be Debian 12 too, so its
#     packages are the ones the image gets);
#   - the runtime stage's apt-get install list, read from the Dockerfile, holds the package of
#     every shared library the built binary loads (ldd, then dpkg -S on the file), and nothing
#     else: each listed package provides at least one of those libraries;
#   - every listed package exists in this machine's apt sources (bookworm);
#   - non-root USER 65532, /bin/kdesched plus a /bin/descheduler symlink, the chart's command;
#   - .dockerignore keeps build trees and .git out of the context.
#
#   test/e2e/dockerfile.sh [KDESCHED_BINARY]   (default: $KDESCHED_BIN, else build-helm/kdesched)
#
# A failed check is reported and the test goes on; the last line is "dockerfile: N passed, N failed"
# (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin dockerfile
DOCKERFILE="${ROOT}/Dockerfile"
BIN="${1:-${KDESCHED_BIN:-${ROOT}/build-helm/kdesched}}"

[ -x "${BIN}" ] || die "no kdesched binary at ${BIN} (build it, or pass its path)"

# The stages: "FROM image AS name" lines split the file.
stage_of() {  # stage_of N: the text of stage N (1-based)
  awk -v n="$1" '/^FROM[[:space:]]/{s++} s==n' "${DOCKERFILE}"
}
nstages="$(grep -c '^FROM[[:space:]]' "${DOCKERFILE}")"
build_stage="$(stage_of 1)"
runtime_stage="$(stage_of "${nstages}")"

phase "stages"
check "two stages" test "${nstages}" -eq 2
check "build stage: FROM debian:bookworm" grep -Eq '^FROM debian:bookworm AS build$' <<<"${build_stage}"
check "build stage: scripts/install-deps.sh" grep -q 'scripts/install-deps.sh' <<<"${build_stage}"
check "build stage: cmake build of the kdesched target" grep -Eq 'ninja -C [^ ]+ kdesched' <<<"${build_stage}"
check "runtime stage: FROM debian:bookworm-slim" grep -Eq '^FROM debian:bookworm-slim$' <<<"${runtime_stage}"
check "runtime stage: USER 65532 (non-root)" grep -Eq '^USER 65532(:65532)?$' <<<"${runtime_stage}"
check "runtime stage: binary copied from the build stage to /usr/bin/kdesched (/bin is /usr/bin on bookworm)" \
  grep -Eq '^COPY --from=build [^ ]+/kdesched /usr/bin/kdesched$' <<<"${runtime_stage}"
check "runtime stage: /bin/descheduler symlink to kdesched" grep -q 'ln -s kdesched /usr/bin/descheduler' <<<"${runtime_stage}"
check "runtime stage: ENTRYPOINT /bin/kdesched" grep -q '^ENTRYPOINT \["/bin/kdesched"\]$' <<<"${runtime_stage}"
check "the chart's command is one of the image's paths" grep -Eq '^  - "/bin/(descheduler|kdesched)"$' "${ROOT}/helm/kdesched/values.yaml"
check "this machine is Debian 12 (bookworm), like the image" grep -q '^12\.' /etc/debian_version
for p in .git build 'build-*'; do
  check ".dockerignore excludes ${p}" grep -qxF "${p}" "${ROOT}/.dockerignore"
done

phase "runtime packages vs. the binary's shared libraries"
# The words after "apt-get install" up to "&&", minus options, in the runtime stage.
mapfile -t LISTED < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' <<<"${runtime_stage}" |
  grep -o 'apt-get install[^&]*' | tr -s ' \t' '\n' | grep -v -e '^apt-get$' -e '^install$' -e '^-' -e '^$' | sort -u)
note "runtime stage installs: ${LISTED[*]}"
check "the runtime stage lists packages" test "${#LISTED[@]}" -gt 0

# owner FILE: the Debian package that ships FILE (tries the path as given, its target and the
# /usr-merged spellings, since dpkg records the path the package shipped).
owner() {
  local f="$1" cands=() c r
  r="$(readlink -f "${f}")"
  for c in "${f}" "${r}"; do
    cands+=("${c}")
    case "${c}" in /usr/*) cands+=("${c#/usr}") ;; *) cands+=("/usr${c}") ;; esac
  done
  for c in "${cands[@]}"; do
    r="$(dpkg -S "${c}" 2>/dev/null | head -n1)" && [ -n "${r}" ] && { echo "${r%%:*}"; return 0; }
  done
  return 1
}

declare -A NEEDED=()
mapfile -t LIBS < <(ldd "${BIN}" | awk '/=>/ {print $3} !/=>/ && $1 ~ /^\// {print $1}' | sort -u)
check "ldd found the binary's libraries (${#LIBS[@]})" test "${#LIBS[@]}" -gt 3
for lib in "${LIBS[@]}"; do
  pkg="$(owner "${lib}")" || { fail "${lib}: no Debian package ships it (dpkg -S)"; continue; }
  pkg="${pkg%:amd64}"; pkg="${pkg%:arm64}"
  NEEDED["${pkg}"]+="$(basename "${lib}") "
  if printf '%s\n' "${LISTED[@]}" | grep -qxF "${pkg}"; then
    pass "$(basename "${lib}") <- ${pkg} (listed)"
  else
    fail "$(basename "${lib}") <- ${pkg}, which the runtime stage does not install"
  fi
done
for pkg in "${LISTED[@]}"; do
  if [ -n "${NEEDED[${pkg}]+x}" ]; then
    pass "listed ${pkg} provides ${NEEDED[${pkg}]% }"
  else
    fail "listed ${pkg} provides none of the binary's libraries (not needed)"
  fi
  cand="$(apt-cache policy "${pkg}" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  check "${pkg} is installable from this machine's apt sources (candidate ${cand:-none})" \
    test -n "${cand}" -a "${cand}" != "(none)"
done

end_phase
