#!/usr/bin/env bash
# The SDK's write → report round trip over the LAN and through the cloud, in one run: a local
# stack (`tether-cloud dev`, one virtual device on 127.0.0.1, release build) and the benchmark
# client as separate processes on loopback. Prints p50/p99/max for both paths and their ratio.
#
#   scripts/bench-sdk.sh [--writes N]
set -euo pipefail
cd "$(dirname "$0")/.."
writes=1000
while [ $# -gt 0 ]; do
    case "$1" in
        --writes) writes="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
swift build -c release --package-path Cloud --product tether-cloud >&2
swift build -c release --package-path Benchmarks --product tether-benchmarks >&2
cloud="$(swift build -c release --package-path Cloud --show-bin-path)/tether-cloud"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-benchmarks"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
http=$(free_port); mqtt=$(free_port); udp=$(free_port); tcp=$(free_port)
"$cloud" dev --state "$work/stack" --http-port "$http" --mqtt-port "$mqtt" --udp-port "$udp" --tcp-port "$tcp" \
    --devices 1 --interval 0 > "$work/stack.log" 2>&1 &
wait_port "$http"
wait_port "$tcp"
sleep 1   # the device's cloud connection
echo "$(nproc) cores; cloud on SQLite; device and client on loopback" >&2
"$bench" sdk-round-trip --state "$work/stack" --cloud "http://127.0.0.1:$http" --udp-port "$udp" --tcp-port "$tcp" --round-trips "$writes"
