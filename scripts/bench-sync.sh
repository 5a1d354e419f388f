#!/usr/bin/env bash
# Benchmark of sync through PostgreSQL (issue 10), printed beside a physical reference, never
# asserted: a throwaway cluster (initdb into a temp directory, Unix socket only, as the postgres
# user when run as root), NOTES notes of 1-4 KB in 200 folders imported into database A, then
#   - initial upload (`notesfs sync` of A) and download (`notesfs sync` of an empty B), notes/s,
#     beside `psql \copy` of the same rows out of and into the server;
#   - server rows and bytes per note: each table's rows and pg_total_relation_size (indexes and
#     TOAST included) after the upload, divided by the notes;
#   - pushing 1,000 changed notes: 1,000 of A's notes edited through A's mount (-o nosync, then
#     unmounted), then one `notesfs sync` of A pushes them (and one of B fetches them), notes/s;
#     before that A syncs once more (timed apart): its first sync after the upload takes the
#     upload back from the server;
#   - the delay of one edit written through A's mount until B's mount shows it (both syncing in
#     the background), over EDITS edits: median and p99.
#
# Usage: scripts/bench-sync.sh [NOTES] [EDITS] [CHANGED]   (default 10000 200 1000; WORKDIR=/var/tmp by
# default; NOTESFS_BENCH_BUILD=DIR builds in DIR instead of .build, as scripts/bench.sh does;
# SYNC_ENCRYPTION=1: the server end-to-end encrypted, as `sync init` makes it by default, else
# --no-encryption)
set -euo pipefail

notes=${1:-10000}
edits=${2:-200}
changed=${3:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
workdir=${WORKDIR:-/var/tmp}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

echo "building release..." >&2
scratch=${NOTESFS_BENCH_BUILD:-$root/.build}
(cd "$root" && scripts/release-build.sh "$scratch" notesfs >/dev/null 2>&1)
bin=$scratch/release/notesfs

tmp=$(mktemp -d "$workdir/notesfs-bench-sync.XXXXXX")
chmod 755 "$tmp"
mounts=()
cleanup() {
    for m in "${mounts[@]}"; do fusermount3 -uz "$m" 2>/dev/null || true; done
    as_server "$pgbin/pg_ctl" -D "$tmp/pg/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
as_server() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

mkdir "$tmp/pg"
[[ $(id -u) == 0 ]] && chown postgres: "$tmp/pg"
as_server "$pgbin/initdb" -D "$tmp/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_server "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w -o "-c listen_addresses= -k $tmp/pg" start >/dev/null
server="host=$tmp/pg user=postgres dbname=bench"
psql() { command psql -X -q -h "$tmp/pg" -U postgres "$@"; }
psql -d postgres -c "CREATE DATABASE bench"
echo "server: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') in $tmp/pg (fsync on, $(stat -f -c %T "$tmp"))"

python3 "$root/Benchmarks/note_tree.py" "$tmp/tree" "$notes"
"$bin" --db "$tmp/a" -q import "$tmp/tree"
if [[ ${SYNC_ENCRYPTION:-0} == 1 ]]; then
    echo "encryption: end-to-end (AES-256-GCM rows, keyed hashes; scrypt N=2^17 at each sync init)"
    printf 'bench passphrase\n' >"$tmp/passphrase"
    for db in a b; do "$bin" --db "$tmp/$db" -q sync init "$server" --passphrase-file "$tmp/passphrase" >/dev/null; done
else
    echo "encryption: none (--no-encryption)"
    for db in a b; do "$bin" --db "$tmp/$db" -q sync init "$server" --no-encryption; done
fi

seconds() { local start=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(date +%s.%N) - $start" | bc -l; }
rate() { python3 -c "import sys; n, s = int(sys.argv[1]), float(sys.argv[2]); print(f'{s:8.2f} s {n / s:10.0f} records/s')" "$@"; }
up=$(seconds "$bin" --db "$tmp/a" sync)
records=$(psql -d bench -At -c "SELECT count(*) FROM notesfs_records")
down=$(seconds "$bin" --db "$tmp/b" sync)
# A's next sync fetches nothing new, but takes its own upload back from the server (a push does not
# move A's server change token past its own changes): timed apart, so that the push below is only that.
again=$(seconds "$bin" --db "$tmp/a" sync)
copy_out=$(seconds psql -d bench -c "\\copy notesfs_records TO '$tmp/records.copy'")
psql -d bench -c "CREATE TABLE copy_ref (LIKE notesfs_records INCLUDING ALL)"
copy_in=$(seconds psql -d bench -c "\\copy copy_ref FROM '$tmp/records.copy'")
echo "== initial sync of $notes notes ($records server records: notes and folders)"
echo "notesfs sync, upload (A)    $(rate "$records" "$up")"
echo "notesfs sync, download (B)  $(rate "$records" "$down")"
echo "notesfs sync, A again       $(rate "$records" "$again") (nothing new: its own upload comes back)"
echo "psql \\copy out, same rows   $(rate "$records" "$copy_out")"
echo "psql \\copy in, same rows    $(rate "$records" "$copy_in")"
echo "== server rows and bytes per note after the upload (pg_total_relation_size: indexes and TOAST included)"
psql -d bench -At -F ' ' -c "SELECT c.relname, CASE c.relkind WHEN 'S' THEN 1 ELSE c.reltuples::bigint END,
    pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relname LIKE 'notesfs_%' AND c.relkind IN ('r', 'S') ORDER BY c.relname" >"$tmp/sizes"
# reltuples is an estimate: the exact counts replace it for the tables.
while read -r table _ bytes; do
    [[ $table == notesfs_seq ]] && rows=1 || rows=$(psql -d bench -At -c "SELECT count(*) FROM $table")
    echo "$table $rows $bytes"
done <"$tmp/sizes" | awk -v n="$notes" '
    { printf "%-16s %8d rows %12d bytes   %.3f rows per note %8.0f bytes per note\n", $1, $2, $3, $2/n, $3/n; rows += $2; bytes += $3 }
    END { printf "%-16s %8d rows %12d bytes   %.3f rows per note %8.0f bytes per note\n", "all", rows, bytes, rows/n, bytes/n }'
psql -d bench -At -F ' ' -c "SELECT count(*), sum(coalesce(octet_length(payload::text), octet_length(sealed))) FROM notesfs_records" |
    awk '{printf "payload (jsonb as text, or sealed bytes): %.0f bytes per row (the notes: 1-4 KB of text each)\n", $2/$1}'
psql -d bench -At -c "SELECT pg_total_relation_size('copy_ref')" |
    awk -v r="$records" '{printf "copy_ref (psql \\copy of notesfs_records): %.0f bytes per row\n", $1/r}'
for db in a b; do "$bin" --db "$tmp/$db" -q export "$tmp/export-$db"; done
diff -r "$tmp/export-a" "$tmp/export-b" >/dev/null && echo "notesfs export of A and of B: identical (diff -r)" || echo "notesfs export of A and of B DIFFER"

echo "== pushing $changed changed notes of $notes"
# Edited through a mount of A that does not sync (-o nosync), so that the push is one timed sync.
mkdir "$tmp/mnt-a"
"$bin" "$tmp/a" "$tmp/mnt-a" -f -o nosync 2>"$tmp/mnt-a-nosync.log" &
nosync_pid=$!
mounts+=("$tmp/mnt-a")
for _ in $(seq 100); do mountpoint -q "$tmp/mnt-a" && break; sleep 0.1; done
python3 - "$tmp/mnt-a" "$changed" <<'PY'
import os, sys
root, count = sys.argv[1], int(sys.argv[2])
paths = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".md"))
for i, path in enumerate(paths[:: max(1, len(paths) // count)][:count]):
    with open(path, "a") as f:
        f.write(f"edited for the push benchmark {i}\n")
PY
fusermount3 -u "$tmp/mnt-a"
wait "$nosync_pid"
pending=$("$bin" --db "$tmp/a" sync status | awk -F': ' '/^pending changes/ {print $2}')
push=$(seconds "$bin" --db "$tmp/a" sync)
fetch=$(seconds "$bin" --db "$tmp/b" sync)
echo "pending changes in A before the push: $pending"
echo "notesfs sync, push (A)      $(rate "$pending" "$push")"
echo "notesfs sync, fetch (B)     $(rate "$pending" "$fetch")"
for db in a b; do rm -rf "$tmp/export-$db"; "$bin" --db "$tmp/$db" -q export "$tmp/export-$db"; done
diff -r "$tmp/export-a" "$tmp/export-b" >/dev/null && echo "notesfs export of A and of B after the push: identical (diff -r)" || echo "notesfs export of A and of B DIFFER after the push"
echo "notes of B's export holding an edit: $(grep -rl "edited for the push benchmark" "$tmp/export-b" | wc -l)"

echo "== propagation of one edit through two live mounts ($edits edits)"
for db in a b; do
    mkdir -p "$tmp/mnt-$db"
    "$bin" "$tmp/$db" "$tmp/mnt-$db" -f 2>"$tmp/mnt-$db.log" &
    mounts+=("$tmp/mnt-$db")
done
for db in a b; do
    for _ in $(seq 100); do mountpoint -q "$tmp/mnt-$db" && break; sleep 0.1; done
done
python3 - "$tmp/mnt-a" "$tmp/mnt-b" "$edits" <<'PY'
import os, statistics, sys, time
a, b, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
def read(path):
    try:
        with open(path) as f: return f.read()
    except OSError: return None
def write(path, text):
    with open(path, "w") as f: f.write(text)
write(a + "/Probe.md", "start\n")
deadline = time.monotonic() + 60
while read(b + "/Probe.md") != "start\n":
    if time.monotonic() > deadline: sys.exit("the probe never reached B")
    time.sleep(0.01)
delays = []
for i in range(count):
    text = f"edit {i}\n"
    start = time.monotonic()
    write(a + "/Probe.md", text)
    while read(b + "/Probe.md") != text:
        if time.monotonic() - start > 60: sys.exit(f"edit {i} never reached B")
        time.sleep(0.005)
    delays.append(time.monotonic() - start)
delays.sort()
p99 = delays[min(len(delays) - 1, int(round(0.99 * len(delays))) - 1)]
print(f"edit in A's mount until B's mount reads it: median {statistics.median(delays):.3f} s, p99 {p99:.3f} s, "
      f"min {delays[0]:.3f} s, max {delays[-1]:.3f} s ({count} edits, one after another)")
PY
