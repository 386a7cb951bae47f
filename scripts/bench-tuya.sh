#!/usr/bin/env bash
# The SDK's Tuya write round trip (TuyaConnection.set → the device's answer, one connection) to
# the agent's Tuya device and to tuyamock, side by side per version in one run, on loopback, and
# the codec's cost per frame. Release builds; tuyamock from .venv-test (Tests/Interop/requirements.txt).
#
#   scripts/bench-tuya.sh [--writes N]
set -euo pipefail
cd "$(dirname "$0")/.."
writes=1000
while [ $# -gt 0 ]; do
    case "$1" in
        --writes) writes="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
python=.venv-test/bin/python
[ -x "$python" ] || { echo "needs .venv-test with tuyamock (python3 -m venv .venv-test && .venv-test/bin/pip install -r Tests/Interop/requirements.txt)" >&2; exit 1; }
swift build -c release --product tether-agent >&2
swift build -c release --package-path Benchmarks --product tether-benchmarks >&2
agent="$(swift build -c release --show-bin-path)/tether-agent"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-benchmarks"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
key=thisisarealkey00
id=eb0123456789abcdefghij
product=products/pet-house.json
echo "$(nproc) cores; client, agent and tuyamock on loopback; $writes writes each" >&2
printf '%-8s %-28s %-28s %s\n' version "agent p50 / p99 (µs)" "tuyamock p50 / p99 (µs)" "agent/tuyamock p50"
for version in 3.1 3.3 3.4 3.5; do
    "$agent" simulate --protocol tuya --version "$version" --bind 127.0.0.1 --tuya-port 0 --tuya-id "$id" --local-key "$key" \
        --product "$product" --json --interval 0 --announce none > "$work/agent-$version" 2>/dev/null &
    "$python" -m tuyamock --port 0 --version "$version" --local-key "$key" --gw-id "$id" --dps '{"1": true}' > "$work/mock-$version" 2>/dev/null &
    for _ in $(seq 100); do [ -s "$work/agent-$version" ] && [ -s "$work/mock-$version" ] && break; sleep 0.1; done
    agent_port=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['port'])" "$work/agent-$version")
    mock_port=$(head -1 "$work/mock-$version")
    # The pet house's data point 0 is a bool; tuyamock's 1 is.
    ours=$("$bench" tuya-round-trip --port "$agent_port" --id "$id" --local-key "$key" --version "$version" --dp 0 --round-trips "$writes" --format json)
    theirs=$("$bench" tuya-round-trip --port "$mock_port" --id "$id" --local-key "$key" --version "$version" --dp 1 --round-trips "$writes" --format json)
    python3 - "$version" "$ours" "$theirs" <<'PY'
import json, sys
version, ours, theirs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
a, m = ours["writeRoundTripMicroseconds"], theirs["writeRoundTripMicroseconds"]
print(f"{version:<8} {a['p50']:>8} / {a['p99']:<17} {m['p50']:>8} / {m['p99']:<17} {a['p50'] / m['p50']:.2f}"
      f"   codec: encode {ours['encodeStatusNanoseconds']:.0f} ns, decode {ours['decodeStatusNanoseconds']:.0f} ns per status frame")
PY
    kill %1 %2 2>/dev/null || true
    wait 2>/dev/null || true
done
