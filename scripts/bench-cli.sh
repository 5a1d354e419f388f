#!/usr/bin/env bash
# Benchmark of `notesfs import`: 10,000 notes of 1-4 KB in nested folders, on disk (not tmpfs),
# beside `cp -r` of the same tree. Reports notes/s and peak RSS (GNU time, package `time`).
#
# Usage: scripts/bench-cli.sh [NOTES]   (default 10000; WORKDIR=/var/tmp by default)
set -euo pipefail

notes=${1:-10000}
root=$(cd "$(dirname "$0")/.." && pwd)
workdir=${WORKDIR:-/var/tmp}
[[ -x /usr/bin/time ]] || { echo "bench-cli: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

echo "building release..." >&2
(cd "$root" && scripts/release-build.sh .build notesfs >/dev/null 2>&1)
bin=$root/.build/release/notesfs

tmp=$(mktemp -d "$workdir/notesfs-bench-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fstype=$(stat -f -c %T "$tmp")
echo "generating $notes notes under $tmp ($fstype)..." >&2
python3 "$root/Benchmarks/note_tree.py" "$tmp/tree" "$notes"
bytes=$(du -sb "$tmp/tree" | cut -f1)
sync

measure() { # label command...: prints seconds and peak RSS (KB)
    local label=$1 log=$tmp/time-$1.txt
    shift
    /usr/bin/time -v -o "$log" "$@" >/dev/null
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    local seconds
    seconds=$(python3 -c "import sys; p=sys.argv[1].split(':'); print(sum(float(x)*60**i for i,x in enumerate(reversed(p))))" "$wall")
    printf '%-22s %8.2f s  %10.0f notes/s  peak RSS %7.1f MB\n' "$label" "$seconds" \
        "$(python3 -c "print($notes/max($seconds,1e-9))")" "$(python3 -c "print($rss/1024)")"
}

echo "tree: $notes notes, $((bytes / 1024)) KB, $(find "$tmp/tree" -type d | wc -l) directories" >&2
measure "cp -r" cp -r "$tmp/tree" "$tmp/copy"
measure "notesfs import" "$bin" --db "$tmp/db" -q import "$tmp/tree"
measure "notesfs export" "$bin" --db "$tmp/db" -q export "$tmp/export"
diff -r "$tmp/tree" "$tmp/export" >/dev/null && echo "export matches the tree (diff -r)" >&2
echo "database: $(du -sh "$tmp/db" | cut -f1)" >&2
