#!/usr/bin/env bash
# Tether's MQTT broker against mosquitto, in one run, on this machine: the same load generator
# (`tether mqtt bench`, release build) and the same settings for both; neither broker is pinned
# or given more of the machine than the other. Prints both results and the ratio
# (tether / mosquitto), and each broker's CPU use during the run (100 % = one core).
# Memory per idle connection is also measured for a bare SwiftNIO server with the broker's
# channel options (Benchmarks' mqtt-idle-floor): the part of Tether's figure that is SwiftNIO's.
#
#   scripts/bench-mqtt.sh [--duration S] [--idle N]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=10
idle=5000
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration="$2"; shift 2 ;;
        --idle) idle="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

command -v mosquitto >/dev/null || { echo "mosquitto is needed (apt install mosquitto)" >&2; exit 1; }
swift build -c release --product tether >&2
tether="$(swift build -c release --show-bin-path)/tether"
swift build -c release --package-path Benchmarks --product mqtt-idle-floor >&2
floor="$(swift build -c release --package-path Benchmarks --show-bin-path)/mqtt-idle-floor"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
ticks_per_second=$(getconf CLK_TCK)

start_broker() { # name → sets pid and port
    port=$(free_port)
    if [ "$1" = floor ]; then
        "$floor" "$port" >/dev/null 2>&1 &
    elif [ "$1" = mosquitto ]; then
        # The same limits as Tether's defaults: 64 in flight, 1,000 queued, no persistence.
        printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 64\nmax_queued_messages 1000\nmax_connections -1\n' "$port" > "$work/mosquitto.conf"
        mosquitto -c "$work/mosquitto.conf" >/dev/null 2>&1 &
    else
        "$tether" mqtt broker --bind 127.0.0.1 --port "$port" >/dev/null 2>&1 &
    fi
    pid=$!
    wait_port "$port"
}

# Runs one bench against the broker at $port, printing "messagesPerSecond p50 p99 cpu%".
measure() {
    local before after elapsed out
    before=$(cpu_ticks "$pid")
    local start=$(date +%s.%N)
    out=$("$tether" mqtt bench -p "$port" --duration "$duration" --json "$@")
    local end=$(date +%s.%N)
    after=$(cpu_ticks "$pid")
    python3 - "$out" "$before" "$after" "$start" "$end" "$ticks_per_second" <<'PY'
import json, sys
report = json.loads(sys.argv[1])
before, after, start, end, hz = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
cpu = 100.0 * (after - before) / hz / (end - start)
lat = report["latencyMicroseconds"]
print(report["messagesPerSecond"], lat["p50"], lat["p99"], round(cpu), report["errors"])
PY
}

idle_memory() { # KiB per idle connection
    local before after
    sleep 1
    before=$(rss_kib "$pid")
    "$tether" mqtt bench -p "$port" --idle "$idle" --hold 0 > "$work/idle.out" 2>&1 &
    local holder=$!
    for _ in $(seq 600); do grep -q ready "$work/idle.out" 2>/dev/null && break; sleep 0.1; done
    sleep 2
    after=$(rss_kib "$pid")
    kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null || true
    python3 -c "print(round(($after - $before) / $idle, 2))"
}

declare -A result
start_broker floor
echo "== SwiftNIO floor (pid $pid, port $port)" >&2
floor_memory=$(idle_memory)
kill "$pid"; wait "$pid" 2>/dev/null || true

for broker in mosquitto tether; do
    start_broker "$broker"
    echo "== $broker (pid $pid, port $port)" >&2
    # Memory first, on the fresh broker: after load, freed heap is reused and hides the cost.
    result[$broker,memory]=$(idle_memory)
    result[$broker,qos0]=$(measure --mode fan-in --publishers 50 -q 0 --size 64)
    result[$broker,qos1]=$(measure --mode fan-in --publishers 50 -q 1 --size 64)
    result[$broker,latency]=$(measure --mode fan-in --publishers 10 -q 0 --size 64 --rate 10000)
    result[$broker,fanout]=$(measure --mode fan-out --subscribers 20 -q 0 --size 64 --rate 2000)
    kill "$pid"; wait "$pid" 2>/dev/null || true
done

python3 - "$duration" "$idle" \
    "${result[mosquitto,qos0]}" "${result[tether,qos0]}" "${result[mosquitto,qos1]}" "${result[tether,qos1]}" \
    "${result[mosquitto,latency]}" "${result[tether,latency]}" "${result[mosquitto,fanout]}" "${result[tether,fanout]}" \
    "${result[mosquitto,memory]}" "${result[tether,memory]}" "$floor_memory" <<'PY'
import sys
duration, idle = sys.argv[1], sys.argv[2]
runs = [a.split() for a in sys.argv[3:11]]
mem = [float(sys.argv[11]), float(sys.argv[12])]
def ratio(a, b): return f"{float(b) / float(a):.2f}" if float(a) else "n/a"
rows = [
    ("fan-in QoS 0, 50→1, 64 B (msg/s)", runs[0][0], runs[1][0], runs[0][3], runs[1][3]),
    ("fan-in QoS 1, 50→1, 64 B (msg/s)", runs[2][0], runs[3][0], runs[2][3], runs[3][3]),
    ("latency p50 at 10k msg/s, QoS 0 (µs)", runs[4][1], runs[5][1], runs[4][3], runs[5][3]),
    ("latency p99 at 10k msg/s, QoS 0 (µs)", runs[4][2], runs[5][2], "", ""),
    ("fan-out QoS 0, 1→20 at 2k msg/s (deliveries/s)", runs[6][0], runs[7][0], runs[6][3], runs[7][3]),
    (f"memory per idle connection, {idle} clients (KiB)", mem[0], mem[1], "", ""),
]
print(f"| measurement ({duration} s runs) | mosquitto | tether | tether / mosquitto | CPU mosquitto | CPU tether |")
print("|---|---|---|---|---|---|")
for name, m, t, cm, ct in rows:
    print(f"| {name} | {m} | {t} | {ratio(m, t)} | {cm}{'%' if cm != '' else ''} | {ct}{'%' if ct != '' else ''} |")
print(f"\nmemory per idle connection of a bare SwiftNIO server (same channel options, one handler that answers CONNECT and PINGREQ): {sys.argv[13]} KiB ({float(sys.argv[13]) / mem[0]:.1f}× mosquitto)")
errors = sum(int(r[4]) for r in runs)
print(f"\nerrors reported by the load generator: {errors}")
PY
