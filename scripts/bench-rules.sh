#!/usr/bin/env bash
# What linkage rules cost the gateway (issue 16: the evaluation cost per report at 1,000 rules):
# a `tether-cloud serve` process, --posters devices posting property reports as fast as their
# replies come back for --duration seconds, first with no rule, then with --rules data rules
# spread over those devices (conditions read from the latest status, never true). Prints both
# rates, their ratio and the difference per report. Release builds, SQLite in a temporary
# directory, and with --database URL (an empty PostgreSQL database) that one too.
#
#   scripts/bench-rules.sh [--rules N] [--posters N] [--duration S] [--database postgres://…]
set -euo pipefail
cd "$(dirname "$0")/.."
rules=1000
posters=100
duration=10
postgres=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rules) rules="$2"; shift 2 ;;
        --posters) posters="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --database) postgres="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
ulimit -n "$(ulimit -Hn)"
# Both from the Benchmarks package: one release build of the cloud, not two.
swift build -c release --package-path Benchmarks --product tether-cloud-benchmarks >&2
swift build -c release --package-path Benchmarks --product tether-cloud >&2
cloud="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-cloud"
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/tether-cloud-benchmarks"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
echo "$(nproc) cores; $rules rules over $posters posting devices, $duration s a phase"
run() {
    local database="$1" label="$2"
    "$bench" setup --database "$database" --product products/lamp-tsl.json --devices "$posters" --firmware-size 0 --output "$work/setup-$label.json"
    local http mqtt
    http=$(free_port)
    mqtt=$(free_port)
    "$cloud" serve --http-port "$http" --mqtt-port "$mqtt" --metrics-bind none --database "$database" --log-level error &
    local server=$!
    wait_port "$http"
    wait_port "$mqtt"
    echo "$label"
    "$bench" rules --setup "$work/setup-$label.json" --http "$http" --mqtt "$mqtt" --rules "$rules" --posters "$posters" --duration "$duration"
    kill "$server"
    wait "$server" || true
}
run "sqlite:$work/bench.sqlite" sqlite
if [ -n "$postgres" ]; then run "$postgres" postgresql; fi
