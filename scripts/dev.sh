#!/usr/bin/env bash
# The local stack in one command: builds the CLI (`tether`) and the cloud, then runs
# `tether-cloud dev`: the cloud on SQLite, a demo user, virtual devices on loopback. It prints the
# two lines that make `tether` ready in another terminal. Arguments go to `tether-cloud dev`
# (--devices N, --http-port …); state stays in .tether-dev/ and is reused on the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product tether
swift build --package-path Cloud --product tether-cloud
TETHER_CLI_BIN_DIR="$(swift build --show-bin-path)"
export TETHER_CLI_BIN_DIR
exec "$(swift build --package-path Cloud --show-bin-path)/tether-cloud" dev "$@"
