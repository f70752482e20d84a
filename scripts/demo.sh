#!/usr/bin/env bash
# The README's first command: install, build, and plan the order/payment example.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "${JOBS:-2}" --target kdesched
./build/kdesched plan --snapshot examples/order-payment/snapshot.json \
  --policy-config-file examples/order-payment/policy.yaml
