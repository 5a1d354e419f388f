#!/usr/bin/env bash
# Benchmark of sync through PostgreSQL (issue 10), printed beside a physical reference, never
# asserted: a throwaway cluster (initdb into a temp directory, Unix socket only, as the postgres
# user when run as root), NOTES notes of 1-4 KB in 200 folders imported into database A, then
#   - initial upload (`notesfs sync` of A) and download (`notesfs sync` of an empty B), notes/s,
#     beside `psql \copy` of the same rows out of and into the server;
#   - server rows and bytes per note;
#   - the delay of one edit written through A's mount until B's mount shows it (both syncing in
#     the background), over EDITS edits: median and p99.
#
# Usage: scripts/bench-sync.sh [NOTES] [EDITS]   (default 10000 200; WORKDIR=/var/tmp by default)
set -euo pipefail

notes=${1:-10000}
edits=${2:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
workdir=${WORKDIR:-/var/tmp}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

echo "building release..." >&2
(cd "$root" && scripts/release-build.sh .build notesfs >/dev/null 2>&1)
bin=$root/.build/release/notesfs

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
for db in a b; do "$bin" --db "$tmp/$db" -q sync init "$server"; done

seconds() { local start=$(date +%s.%N); "$@" >/dev/null 2>&1; echo "$(date +%s.%N) - $start" | bc -l; }
rate() { python3 -c "import sys; n, s = int(sys.argv[1]), float(sys.argv[2]); print(f'{s:8.2f} s {n / s:10.0f} records/s')" "$@"; }
up=$(seconds "$bin" --db "$tmp/a" sync)
records=$(psql -d bench -At -c "SELECT count(*) FROM notesfs_records")
down=$(seconds "$bin" --db "$tmp/b" sync)
copy_out=$(seconds psql -d bench -c "\\copy notesfs_records TO '$tmp/records.copy'")
psql -d bench -c "CREATE TABLE copy_ref (LIKE notesfs_records INCLUDING ALL)"
copy_in=$(seconds psql -d bench -c "\\copy copy_ref FROM '$tmp/records.copy'")
echo "== initial sync of $notes notes ($records server records: notes and folders)"
echo "notesfs sync, upload (A)    $(rate "$records" "$up")"
echo "notesfs sync, download (B)  $(rate "$records" "$down")"
echo "psql \\copy out, same rows   $(rate "$records" "$copy_out")"
echo "psql \\copy in, same rows    $(rate "$records" "$copy_in")"
psql -d bench -At -F ' ' -c "SELECT count(*), pg_total_relation_size('notesfs_records'), pg_total_relation_size('copy_ref'),
    sum(octet_length(payload::text)) FROM notesfs_records" |
    awk -v n="$notes" '{printf "server: %.3f rows per note; notesfs_records %.0f bytes per row with indexes and TOAST (copy_ref %.0f); payload text %.0f bytes per row\n", $1/n, $2/$1, $3/$1, $4/$1}'
for db in a b; do "$bin" --db "$tmp/$db" -q export "$tmp/export-$db"; done
diff -r "$tmp/export-a" "$tmp/export-b" >/dev/null && echo "notesfs export of A and of B: identical (diff -r)" || echo "notesfs export of A and of B DIFFER"

echo "== propagation of one edit through two live mounts ($edits edits)"
for db in a b; do
    mkdir "$tmp/mnt-$db"
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
