#!/usr/bin/env bash
# Memory of the syncing process (issue 10) over NOTES notes: `notesfs sync --watch` of A (upload) and of an
# empty B (download); VmRSS and VmHWM from /proc/PID/status once its first sync has printed.
# Also: state.json size and the sync directory's size on both; then the daemon of A's mount, with
# -o nosync and syncing in the background, after `ls -lR` (and, syncing, its first push of a new note).
# Usage: scripts/bench-sync-memory.sh [BIN] [NOTES]   (default: .build/release/notesfs, 10000; WORKDIR=/var/tmp)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.build/release/notesfs}; notes=${2:-10000}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
tmp=$(mktemp -d "${WORKDIR:-/var/tmp}/notesfs-mem.XXXXXX"); chmod 755 "$tmp"
pids=()
as_server() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() { fusermount3 -uz "$tmp/mnt" 2>/dev/null || true; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; as_server "$pgbin/pg_ctl" -D "$tmp/pg/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir "$tmp/pg"; [[ $(id -u) == 0 ]] && chown postgres: "$tmp/pg"
as_server "$pgbin/initdb" -D "$tmp/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_server "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w -o "-c listen_addresses= -k $tmp/pg" start >/dev/null
server="host=$tmp/pg user=postgres dbname=bench"
command psql -X -q -h "$tmp/pg" -U postgres -d postgres -c "CREATE DATABASE bench"
python3 "$root/Benchmarks/note_tree.py" "$tmp/tree" "$notes"
"$bin" --db "$tmp/a" -q import "$tmp/tree"
for db in a b; do "$bin" --db "$tmp/$db" -q sync init "$server" --no-encryption; done
# `sync --watch` of database $1 until its first sync has printed; prints LABEL, that line and its memory.
watch_once() {
    local db=$1 label=$2
    "$bin" --db "$tmp/$db" sync --watch >"$tmp/$db.out" 2>&1 &
    local pid=$!; pids+=("$pid")
    for _ in $(seq 6000); do grep -q 'synced:' "$tmp/$db.out" 2>/dev/null && break; sleep 0.1; done
    sleep 1
    echo "$label: $(head -1 "$tmp/$db.out"); $(grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ' ')"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
for db in a b; do
    watch_once "$db" "$db ($( [[ $db == a ]] && echo upload || echo download ))"
    echo "$db: state.json $(stat -c %s "$tmp/$db/sync/state.json") bytes; sync dir $(du -sk "$tmp/$db/sync" | cut -f1) KiB; files in sync/records: $(ls "$tmp/$db/sync/records" 2>/dev/null | wc -l)"
done
mkdir "$tmp/mnt"
for opts in "-o nosync" ""; do
    "$bin" "$tmp/a" "$tmp/mnt" -f $opts 2>"$tmp/mount.log" &
    pid=$!; pids+=("$pid")
    for _ in $(seq 100); do mountpoint -q "$tmp/mnt" && break; sleep 0.1; done
    ls -lR "$tmp/mnt" >/dev/null
    if [[ -z "$opts" ]]; then
        echo "new" >"$tmp/mnt/Pushed by the mount.md"
        for _ in $(seq 1200); do "$bin" --db "$tmp/a" sync status 2>/dev/null | grep -q "pending changes: 0" && break; sleep 0.5; done
    fi
    echo "mount of A ${opts:-syncing in the background}: $(grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ' ')"
    fusermount3 -u "$tmp/mnt"; wait "$pid" 2>/dev/null || true
done
# One big note (BIG_MIB, default 200 MiB, kept as its content asset): `notesfs sync --watch` of a
# new database C that uploads it, then of an empty D that downloads it; their VmHWM, and the bytes
# compared. The memory a note's size must not drive.
big=${BIG_MIB:-200}
command psql -X -q -h "$tmp/pg" -U postgres -d postgres -c "CREATE DATABASE bigbench"
bigserver="host=$tmp/pg user=postgres dbname=bigbench"
python3 -c "import base64, os, sys; n = $big << 20; sys.stdout.write(base64.encodebytes(os.urandom(n * 3 // 4 + 3)).decode()[:n])" >"$tmp/big.txt"
"$bin" --db "$tmp/c" note new "Big" <"$tmp/big.txt"
for db in c d; do
    "$bin" --db "$tmp/$db" -q sync init "$bigserver" --no-encryption
    watch_once "$db" "one ${big} MiB note, $db ($( [[ $db == c ]] && echo upload || echo download ))"
done
"$bin" --db "$tmp/d" note cat Big | cmp - "$tmp/big.txt" && echo "one ${big} MiB note: the downloaded bytes are identical"
