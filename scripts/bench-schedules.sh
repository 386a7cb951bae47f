#!/usr/bin/env bash
# Schedules due in the same minute (issue 16; goal: 10,000 fire within 5 s): a `tether-cloud
# serve` process on its real clock, 10 users bound to 100 devices writing --count one-time
# schedules through the API, all due at the same minute; the run log is read until every run is
# there. Prints how long after the due instant the first and the last fired. Release builds, SQLite
# in a temporary directory, and with --database URL (an empty PostgreSQL database) that one too.
#
#   scripts/bench-schedules.sh [--count N] [--database postgres://…]
set -euo pipefail
cd "$(dirname "$0")/.."
count=10000
postgres=""
while [ $# -gt 0 ]; do
    case "$1" in
        --count) count="$2"; shift 2 ;;
        --database) postgres="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
# Both from the Benchmarks package: one release build of the cloud, not two.
swift build -c release --package-path Benchmarks --product tether-cloud-benchmarks >&2
swift build -c release --package-path Benchmarks --product tether-cloud >&2
cloud="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-cloud"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-cloud-benchmarks"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
users=$(( (count + 999) / 1000 ))
echo "$(nproc) cores; $count schedules due at one minute, $users users, 100 devices"
run() {
    local database="$1" label="$2"
    "$bench" setup --database "$database" --product products/lamp-tsl.json --devices 100 --firmware-size 0 --output "$work/setup-$label.json"
    local http
    http=$(free_port)
    "$cloud" serve --http-port "$http" --mqtt-port 0 --metrics-bind none --database "$database" --log-level error &
    local server=$!
    wait_port "$http"
    printf '%-11s ' "$label"
    "$bench" schedules --database "$database" --http "$http" --setup "$work/setup-$label.json" --count "$count" --users "$users"
    kill "$server"
    wait "$server" || true
}
run "sqlite:$work/bench.sqlite" sqlite
if [ -n "$postgres" ]; then run "$postgres" postgresql; fi
