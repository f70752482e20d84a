#!/usr/bin/env bash
# Installs everything kdesched needs to build and test on a fresh Debian 12 machine.
# Idempotent: packages already present are left alone.
#   scripts/install-deps.sh           the build, test, fuzz and end-to-end tools
#   scripts/install-deps.sh --build   only what compiling the kdesched target needs (the
#                                     Dockerfile's build stage): compiler, CMake, Ninja, the -dev
#                                     libraries and ccache
# prometheus: its promtool checks and unit-tests the chart's alert rules and dashboard queries
# (test/helm/run.sh), and the server is the Prometheus usage source of test/e2e/usage.sh.
# nginx-light: the bearer-token front of that Prometheus (Prometheus cannot require a token itself).
# libhowardhinnant-date-dev (and tzdata): disruption budgets' time zones (pkg/policy/budgets.cpp);
# libstdc++ 12 has no std::chrono time-zone database, this library reads the system's.
# libprotobuf-dev: pods are read in protobuf (pkg/api/pod_proto.cpp); only its lite library is linked.
# clang + libclang-rt-14-dev: the libFuzzer targets (scripts/fuzz.sh); the runtime package holds
# libFuzzer and clang's sanitizer runtimes, which the clang package alone does not install.
set -euo pipefail

build_packages=(
  g++ cmake ninja-build pkg-config ccache
  libcpprest-dev libssl-dev libboost-system-dev
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  prometheus-cpp-dev libsimdjson-dev libcli11-dev libprotobuf-dev
  libhowardhinnant-date-dev tzdata
)
packages=(
  "${build_packages[@]}"
  build-essential git ca-certificates openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-yaml curl jq procps time
  clang-format clang libclang-rt-14-dev
  prometheus nginx-light
)
case "${1:-}" in
  --build) packages=("${build_packages[@]}") ;;
  "") ;;
  *) echo "install-deps: unknown argument $1 (--build, or none)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: all packages present"
fi
