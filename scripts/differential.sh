#!/usr/bin/env bash
# kdesched against upstream descheduler v0.36's real plugin code on seeded random clusters; see
# test/differential/README.md. Example: scripts/differential.sh --plugin existing --seeds 500
exec "$(dirname "${BASH_SOURCE[0]}")/../test/differential/run.sh" "$@"
