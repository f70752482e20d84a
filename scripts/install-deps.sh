#!/usr/bin/env bash
# Installs everything kdesched needs to build and test on a fresh Debian 12 machine.
# Idempotent: packages already present are left alone.
# prometheus: its promtool checks and unit-tests the chart's alert rules and dashboard queries
# (test/helm/run.sh), and the server is the Prometheus usage source of test/e2e/usage.sh.
# nginx-light: the bearer-token front of that Prometheus (Prometheus cannot require a token itself).
# clang + libclang-rt-14-dev: the libFuzzer targets (scripts/fuzz.sh); the runtime package holds
# libFuzzer and clang's sanitizer runtimes, which the clang package alone does not install.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates openssl
  libcpprest-dev libssl-dev libboost-system-dev
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  prometheus-cpp-dev libsimdjson-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-yaml curl jq procps time
  clang-format ccache clang libclang-rt-14-dev
  prometheus nginx-light
)

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
