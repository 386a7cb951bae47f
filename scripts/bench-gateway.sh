#!/usr/bin/env bash
# The cloud's real-time side on this machine (release builds; the server and the load generator
# are separate processes on loopback): an app's write round trip through the cloud (WebSocket
# c2s_write → gateway → device → set_reply and report → s2c_noti with res_sn), property posts per
# second stored and answered from many devices, the server's resident memory per connected
# idle device, an app's RRPC round trip (REST → device → REST) and the IoT channel's invoke round
# trip (TetherChannel.invoke of a property post → the gateway's _reply), and firmware downloads by
# signed URL (one device, then --ota-devices at once; a 4 MiB package).
#
#   scripts/bench-gateway.sh [--posters N] [--duration S] [--idle N] [--round-trips N] [--database URL]
#
# The default database is SQLite in a temporary directory; pass a postgres:// URL of an empty
# database to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
posters=1000
duration=10
idle=10000
round_trips=500
database=""
while [ $# -gt 0 ]; do
    case "$1" in
        --posters) posters="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --idle) idle="$2"; shift 2 ;;
        --round-trips) round_trips="$2"; shift 2 ;;
        --database) database="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
# Every connection is a file descriptor on both sides.
ulimit -n "$(ulimit -Hn)"
swift build -c release --package-path Cloud --product tether-cloud >&2
swift build -c release --package-path Benchmarks --product tether-cloud-benchmarks >&2
cloud="$(swift build -c release --package-path Cloud --show-bin-path)/tether-cloud"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-cloud-benchmarks"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
database=${database:-sqlite:$work/bench.sqlite}
devices=$(( idle > posters + 1 ? idle : posters + 1 ))

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

"$bench" setup --database "$database" --product products/lamp-tsl.json --devices "$devices" --output "$work/setup.json"
http=$(free_port)
mqtt=$(free_port)
"$cloud" serve --http-port "$http" --mqtt-port "$mqtt" --metrics-bind none --database "$database" --log-level error &
server=$!
wait_port "$http"
wait_port "$mqtt"
echo "tether-cloud, $(nproc) cores, database ${database%%:*}" >&2
"$bench" run --setup "$work/setup.json" --http "$http" --mqtt "$mqtt" --server-pid "$server" \
    --round-trips "$round_trips" --posters "$posters" --duration "$duration" --idle "$idle" --json
