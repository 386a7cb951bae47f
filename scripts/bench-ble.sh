#!/usr/bin/env bash
# Bluetooth LE, in one run:
#  - LW003-V3 storage frames through the parser: records decoded (and encoded) per second;
#  - notification-to-app latency on bluezoo (scripts/ble-test-bus.sh): one clock peripheral
#    (Benchmarks/BLE/ble_clock_peripheral.py, stamping CLOCK_MONOTONIC) on hci1, timed through
#    Tether's BlueZCentral and through bleak on hci0, one after the other on the same bus.
# Release build; bluezoo, dbus-fast and bleak from .venv-test (Tests/Interop/requirements.txt).
# Both centrals' figures include bluezoo (Python) and two D-Bus hops: compare them, not BlueZ.
#
#   scripts/bench-ble.sh [--notifications N] [--records N]
set -euo pipefail
cd "$(dirname "$0")/.."
notifications=1000
records=10000
while [ $# -gt 0 ]; do
    case "$1" in
        --notifications) notifications="$2"; shift 2 ;;
        --records) records="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
python=$(pwd)/.venv-test/bin/python
[ -x "$python" ] || { echo "needs .venv-test with bluezoo and bleak (python3 -m venv .venv-test && .venv-test/bin/pip install -r Tests/Interop/requirements.txt)" >&2; exit 1; }
swift build -c release --package-path Benchmarks --product tether-benchmarks >&2
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-benchmarks"
work=$(mktemp -d)
peripheral=00:11:22:33:44:02
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    scripts/ble-test-bus.sh stop "$work/bus" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "$(nproc) cores" >&2
"$bench" lw003-parse --records "$records"

mkdir -p "$work/bus"
eval "$(scripts/ble-test-bus.sh start "$work/bus" "$python")"
export DBUS_SYSTEM_BUS_ADDRESS
"$python" Benchmarks/BLE/ble_clock_peripheral.py --adapter hci1 > "$work/peripheral" 2>"$work/peripheral.err" &
for _ in $(seq 100); do grep -q ready "$work/peripheral" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$work/peripheral" || { cat "$work/peripheral.err" >&2; exit 1; }
ours=$("$bench" ble-latency --adapter hci0 --address "$peripheral" --count "$notifications" --format json)
theirs=$("$python" Benchmarks/BLE/ble_latency_bleak.py --adapter hci0 --address "$peripheral" --count "$notifications")
python3 - "$ours" "$theirs" <<'PY'
import json, sys
ours, theirs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("Notification to app on bluezoo (µs), %d notifications each:" % ours["count"])
print("  %-22s p50 %6d   p99 %6d   max %6d" % ("Tether BlueZCentral", ours["p50"], ours["p99"], ours["max"]))
print("  %-22s p50 %6d   p99 %6d   max %6d" % ("bleak", theirs["p50"], theirs["p99"], theirs["max"]))
print("  Tether/bleak: p50 %.2f   p99 %.2f" % (ours["p50"] / theirs["p50"], ours["p99"] / theirs["p99"]))
PY
