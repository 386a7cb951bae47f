#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on loopback for the cloud's storage tests and prints
# the URL to reach it. Usage: eval "$(scripts/postgres-test-server.sh start DIR PORT)";
# scripts/postgres-test-server.sh stop DIR.
# initdb refuses to run as root, so as root the server runs as the `postgres` user.
set -euo pipefail

command=$1
directory=$2
bin_dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin_dir" ]; then
    echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2
    exit 1
fi

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
start)
    port=$3
    rm -rf "$directory"
    mkdir -p "$directory"
    [ "$(id -u)" = 0 ] && chown postgres "$directory"
    as_owner "$bin_dir/initdb" -D "$directory/data" -A trust -U postgres --no-sync >"$directory/initdb.log" 2>&1
    # fsync off: a test server's data is thrown away, and the tests run faster.
    as_owner "$bin_dir/pg_ctl" -D "$directory/data" -l "$directory/server.log" -w \
        -o "-h 127.0.0.1 -p $port -k $directory -F -c max_connections=800" start >/dev/null
    echo "export TETHER_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    as_owner "$bin_dir/pg_ctl" -D "$directory/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$directory"
    ;;
esac
