#!/usr/bin/env bash
# Requests per second of the cloud on this machine (release build, over loopback, load from wrk
# in a second process): login (bcrypt-bound, at the server's default cost), the bound-device
# list of a user with 20 devices, and GET /status as the floor of the HTTP stack.
#
#   scripts/bench-cloud.sh [--duration S] [--connections N] [--database URL]
#
# The default database is SQLite in a temporary directory; pass a postgres:// URL of an empty
# database to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=10
connections=16
database=""
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --database) database="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk is needed (apt install wrk)" >&2; exit 1; }
swift build -c release --package-path Cloud --product tether-cloud >&2
cloud="$(swift build -c release --package-path Cloud --show-bin-path)/tether-cloud"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
database=${database:-sqlite:$work/bench.sqlite}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
app=$("$cloud" admin app create --name bench --database "$database" --json | json_field appId)
product=$("$cloud" admin product create --name bench --datapoints products/pet-house.json --unsigned-registration --database "$database" --json | json_field productKey)
"$cloud" serve --http-port "$port" --mqtt-port 0 --metrics-bind none --database "$database" --log-level warning &
server=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"
token=$(curl -sf -X POST -H "X-Gizwits-Application-Id: $app" -H 'Content-Type: application/json' \
    -d '{"username":"bench","password":"Passw0rd!"}' "$base/app/users" | json_field token)
devices='{"devices":['
for i in $(seq 20); do
    did=$(curl -sf -X POST -d "mac=0000000000$(printf %02x "$i")&product_key=$product&passcode=BENCHBENCH" "$base/dev/devices" | cut -d= -f2)
    devices+="{\"did\":\"$did\",\"passcode\":\"BENCHBENCH\"},"
done
devices="${devices%,}]}"
curl -sf -X POST -H "X-Gizwits-Application-Id: $app" -H "X-Gizwits-User-token: $token" \
    -H 'Content-Type: application/json' -d "$devices" "$base/app/bindings" >/dev/null

cat >"$work/login.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"username":"bench","password":"Passw0rd!"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Gizwits-Application-Id"] = "$app"
LUA
cat >"$work/list.lua" <<LUA
wrk.headers["X-Gizwits-Application-Id"] = "$app"
wrk.headers["X-Gizwits-User-token"] = "$token"
LUA

measure() { # name, lua, path
    local output rate p50 p99 errors
    output=$(wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$2" "$base$3")
    rate=$(awk '/Requests\/sec/ {print $2}' <<<"$output")
    p50=$(awk '$1 == "50%" {print $2}' <<<"$output")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$output")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$output")
    printf '%-28s %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$1" "$rate" "$p50" "$p99" "${errors:-0}"
}
echo "tether-cloud, $(nproc) cores, ${connections} connections, ${duration} s each, database ${database%%:*}"
measure "POST /app/login (bcrypt)" "$work/login.lua" /app/login
measure "GET /app/bindings (20)" "$work/list.lua" "/app/bindings?limit=20"
measure "GET /status (floor)" "$work/list.lua" /status
