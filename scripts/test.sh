#!/usr/bin/env bash
# Runs every test. This is the command CI runs (.ci/run).
#  0. What the tests need beyond the toolchain (scripts/prerequisites.sh: installed with apt when
#     this machine lets us, or the exact command to run printed), and the style lint
#     (swift format, configured by .swift-format).
#  1. Swift Testing: unit tests, bounded fuzzing, SDK ↔ agent over loopback, the executables,
#     broadcast discovery in network namespaces (root and iproute2; skipped otherwise), the MQTT
#     client against mosquitto (when mosquitto is installed; skipped otherwise).
#  2. The cloud package (Cloud/): every storage test against SQLite and against a throwaway
#     PostgreSQL server started here on loopback (scripts/postgres-test-server.sh).
#  3. pytest: the MQTT broker against the real peers paho-mqtt and mosquitto_pub/mosquitto_sub,
#     and the cloud against pygizwits, in a virtual environment created here (.venv-test/,
#     pinned by Tests/Interop/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/prerequisites.sh
swift format lint --recursive --strict Sources Cloud/Sources

swift build --build-tests
swift test --skip-build "$@"

postgres_dir="${TMPDIR:-/tmp}/tether-test-postgres-$$"
postgres_port=${TETHER_TEST_POSTGRES_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
# Assigned first, so that a server that does not start stops the run here (set -e).
postgres_env=$(scripts/postgres-test-server.sh start "$postgres_dir" "$postgres_port")
eval "$postgres_env"
trap 'scripts/postgres-test-server.sh stop "$postgres_dir"' EXIT
swift build --package-path Cloud --build-tests
# One test at a time, for now: run in parallel on two cores, the tests that drive the SDK's cloud
# client intermittently stall until their 60 s limits (a storm of failed HTTP connections into a
# node; see the stop-34 note). Serial, the suite takes about 3.5 minutes instead of 1.5, and
# passes. Go back to parallel once the stall is found.
swift test --package-path Cloud --skip-build --no-parallel

if [ ! -x .venv-test/bin/python ]; then
    python3 -m venv .venv-test
fi
.venv-test/bin/pip install --quiet --disable-pip-version-check -r Tests/Interop/requirements.txt
TETHER_BIN_DIR="$(swift build --show-bin-path)" \
TETHER_CLOUD_BIN_DIR="$(swift build --package-path Cloud --show-bin-path)" \
    .venv-test/bin/python -m pytest -q Tests/Interop
