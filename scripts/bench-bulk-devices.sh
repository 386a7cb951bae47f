#!/usr/bin/env bash
# Bulk registration (issue 21): `tether-cloud admin device create --count N --name-prefix P --json`
# and `admin device import --csv FILE --json`, timed end to end as an operator runs them (the
# process, the database, and N JSON lines written to a file), on SQLite and, with --database URL,
# on PostgreSQL too. Release build. Goal: 100,000 devices in under a minute on SQLite.
#
#   scripts/bench-bulk-devices.sh [--count N] [--database postgres://…]
set -euo pipefail
cd "$(dirname "$0")/.."
count=100000
postgres=""
while [ $# -gt 0 ]; do
    case "$1" in
        --count) count="$2"; shift 2 ;;
        --database) postgres="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
swift build -c release --package-path Cloud --product tether-cloud >&2
cloud="$(swift build -c release --package-path Cloud --show-bin-path)/tether-cloud"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$(nproc) cores; $count devices per run"
# One result line; every device printed once.
report() {
    python3 - "$1" "$2" "$3" "$4" "$5" "$count" <<'PY'
import sys
label, what, start, end, path, count = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], int(sys.argv[6])
lines = sum(1 for _ in open(path))
assert lines == count, f"{lines} lines for {count} devices"
print(f"{label:<11} {what:<16} {end - start:7.2f} s   {count / (end - start):9.0f} devices/s")
PY
}
run() {
    local database="$1" label="$2"
    local product
    product=$("$cloud" admin product create --name "Bulk $label $RANDOM" --datapoints products/pet-house.json --database "$database" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["productKey"])')
    local start end
    start=$(date +%s.%N)
    "$cloud" admin device create --product "$product" --count "$count" --name-prefix "bulk-" --database "$database" --json > "$work/created.jsonl"
    end=$(date +%s.%N)
    report "$label" "create --count" "$start" "$end" "$work/created.jsonl"
    python3 -c "
import sys
pk = sys.argv[1]
with open(sys.argv[2], 'w') as f:
    f.write('productKey,deviceName,mac,deviceSecret\n')
    for i in range(int(sys.argv[3])):
        f.write(f'{pk},imported-{i},02{i:010x},Secret{i:026d}\n')
" "$product" "$work/fleet.csv" "$count"
    start=$(date +%s.%N)
    "$cloud" admin device import --csv "$work/fleet.csv" --database "$database" --json > "$work/imported.jsonl"
    end=$(date +%s.%N)
    report "$label" "import --csv" "$start" "$end" "$work/imported.jsonl"
}
run "sqlite:$work/cloud.sqlite" sqlite
if [ -n "$postgres" ]; then run "$postgres" postgresql; fi
