#!/usr/bin/env bash
# Runs every test: unit tests, bounded fuzzing, SDK ↔ agent integration over loopback, the CLI
# executables, and broadcast discovery in network namespaces (when run as root with iproute2;
# skipped with a message otherwise). This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build "$@"
