#!/usr/bin/env bash
# A fault soak of the cloud (minutes; not part of CI). Two `tether-cloud serve` nodes share one
# PostgreSQL database; simulated devices spread over both post properties and answer property
# sets while they suffer faults (dropped links, half-open connections, slow answers, reboots,
# duplicate client ids); apps write and read through both nodes' REST API; and a node is killed
# with `kill -9` at random moments and restarted (devices reconnect, possibly to the other
# node). Then `tether-cloud-benchmarks soak` checks that
#   - every write the cloud acknowledged reached its device, or ended in the ledger in a final
#     state that does not contradict the device;
#   - every property post answered 200 is in the database;
#   - no device was shown online (sampled every 5 s, and once more at the end) more than
#     1.5 × its keep-alive (30 s) after the cloud last heard from it,
# prints the counts as JSON and a one-line verdict, and exits 1 on a violation. A node that dies
# on its own or does not come back after a kill fails the run too. On any failure the nodes' logs
# are kept.
#
#   scripts/soak.sh [--devices N] [--duration S] [--kills N] [--seed N] [--database URL]
#
# --duration is the chaos phase; connecting, settling and the last presence check add about two
# minutes. --seed fixes the devices' and apps' draws and the kills' moments, but a run is not a
# replay (tasks interleave as they will). Without --database a throwaway PostgreSQL server is started
# (scripts/postgres-test-server.sh); otherwise pass a postgres:// URL of an empty database.
# SOAK_SCRATCH=DIR builds in DIR/cloud and DIR/bench instead of the packages' .build directories.
set -euo pipefail
cd "$(dirname "$0")/.."
devices=2000
duration=180
kills=6
seed=$((RANDOM * 32768 + RANDOM))
database=""
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --kills) kills="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --database) database="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
# The kills' moments follow the seed too.
RANDOM=$seed
# Every connection is a file descriptor on both sides. An unlimited hard limit cannot be the
# soft one: take the kernel's ceiling then.
hard_files=$(ulimit -Hn)
if [ "$hard_files" = unlimited ]; then hard_files=$(cat /proc/sys/fs/nr_open 2>/dev/null || echo 1048576); fi
ulimit -n "$hard_files" 2>/dev/null || echo "soak: could not raise the open files limit to $hard_files; it stays $(ulimit -n)" >&2

cloud_scratch=()
bench_scratch=()
if [ -n "${SOAK_SCRATCH:-}" ]; then
    cloud_scratch=(--scratch-path "$SOAK_SCRATCH/cloud")
    bench_scratch=(--scratch-path "$SOAK_SCRATCH/bench")
fi
swift build -c release --package-path Cloud "${cloud_scratch[@]}" --product tether-cloud >&2
swift build -c release --package-path Benchmarks "${bench_scratch[@]}" --product tether-cloud-benchmarks >&2
cloud="$(swift build -c release --package-path Cloud "${cloud_scratch[@]}" --show-bin-path)/tether-cloud"
bench="$(swift build -c release --package-path Benchmarks "${bench_scratch[@]}" --show-bin-path)/tether-cloud-benchmarks"

work=$(mktemp -d)
postgres_dir=""
keep_work=0
# Any failure, an interruption included, keeps the logs. The processes left get SIGTERM, and
# SIGKILL after 15 s (a node wedged in shutdown must not hold the script).
cleanup() {
    local code=$? running alive
    if [ "$code" != 0 ]; then keep_work=1; fi
    running=$(jobs -p)
    if [ -n "$running" ]; then
        kill $running 2>/dev/null || true
        for _ in $(seq 150); do
            alive=0
            for pid in $running; do if kill -0 "$pid" 2>/dev/null; then alive=1; fi; done
            if [ "$alive" = 0 ]; then break; fi
            sleep 0.1
        done
        kill -9 $running 2>/dev/null || true
        wait 2>/dev/null || true
    fi
    if [ -n "$postgres_dir" ]; then scripts/postgres-test-server.sh stop "$postgres_dir" || true; fi
    if [ "$keep_work" = 1 ]; then echo "soak: the nodes' logs and the setup are kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Ports bound at once, so that they differ.
free_ports() {
    python3 -c '
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))' "$1"
}
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
now_ms() { date +%s%3N; }

if [ -z "$database" ]; then
    postgres_dir="${TMPDIR:-/tmp}/tether-soak-postgres-$$"
    postgres_env=$(scripts/postgres-test-server.sh start "$postgres_dir" "$(free_ports 1)")
    eval "$postgres_env"
    database=$TETHER_TEST_POSTGRES_URL
fi

"$bench" setup --database "$database" --product products/lamp-tsl.json --devices "$devices" --output "$work/setup.json" --firmware-size 0

read -r http_a http_b mqtt_a mqtt_b < <(free_ports 4)
names=(node-a node-b)
http=("$http_a" "$http_b")
mqtt=("$mqtt_a" "$mqtt_b")
pids=(0 0)
# A fixed node id, as an operator names the nodes of a cluster: a restarted node is the same node.
start_node() {
    "$cloud" serve --bind 127.0.0.1 --http-port "${http[$1]}" --mqtt-port "${mqtt[$1]}" --metrics-bind none --database "$database" \
        --node-id "${names[$1]}" --log-level warning >>"$work/${names[$1]}.log" 2>&1 &
    pids[$1]=$!
    wait_port "${http[$1]}" && wait_port "${mqtt[$1]}"
}
start_node 0
start_node 1
echo "soak: $devices devices, ${duration}s of chaos, up to $kills kills, seed $seed, $(nproc) cores, $(ulimit -n) open files; work in $work" >&2

"$bench" soak --setup "$work/setup.json" --database "$database" --http "$http_a" --http "$http_b" --mqtt "$mqtt_a" --mqtt "$mqtt_b" \
    --node-name "${names[0]}" --node-name "${names[1]}" \
    --duration "$duration" --seed "$seed" --ready "$work/ready" --events "$work/events" &
soak=$!

# Kills only during the chaos, each node back within seconds, the last restart well before
# the chaos ends (so that the settling phase sees a whole cluster). A node found dead before its
# kill, or not back after it, is logged (the soak's report counts it) and fails the run.
status=0
: >"$work/events"
# Connecting 2000 devices and registering the apps take well under this.
ready_by=$(( $(date +%s) + 200 ))
while [ ! -f "$work/ready" ] && kill -0 "$soak" 2>/dev/null; do
    if [ "$(date +%s)" -ge "$ready_by" ]; then
        echo "soak: the soak did not start its chaos within 200 s" >&2
        exit 1
    fi
    sleep 0.5
done
chaos_end=$(( $(date +%s) + ${duration%.*} ))
killed=0
while [ "$killed" -lt "$kills" ] && kill -0 "$soak" 2>/dev/null; do
    pause=$(( 20 + RANDOM % 21 ))
    [ $(( $(date +%s) + pause + 15 )) -le "$chaos_end" ] || break
    sleep "$pause"
    node=$(( RANDOM % 2 ))
    if kill -0 "${pids[$node]}" 2>/dev/null; then
        kill -9 "${pids[$node]}"
        wait "${pids[$node]}" 2>/dev/null || true
        echo "$(now_ms) kill ${names[$node]}" >>"$work/events"
        killed=$(( killed + 1 ))
    else
        wait "${pids[$node]}" 2>/dev/null || true
        echo "$(now_ms) died ${names[$node]}" >>"$work/events"
        echo "soak: ${names[$node]} had died on its own (see its log)" >&2
        status=1
    fi
    sleep $(( 1 + RANDOM % 5 ))
    if start_node "$node"; then
        echo "$(now_ms) restart ${names[$node]}" >>"$work/events"
    else
        echo "$(now_ms) restart-failed ${names[$node]}" >>"$work/events"
        echo "soak: ${names[$node]} did not come back (see its log)" >&2
        status=1
    fi
done

soak_status=0
wait "$soak" || soak_status=$?
if [ "$soak_status" != 0 ]; then status=$soak_status; fi
for node in 0 1; do
    if ! kill -0 "${pids[$node]}" 2>/dev/null; then
        echo "soak: ${names[$node]} was not running at the end (see its log)" >&2
        status=1
    fi
done
exit "$status"
