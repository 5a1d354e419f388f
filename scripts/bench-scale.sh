#!/usr/bin/env bash
# scripts/bench.sh scale [NOTES]: what a command and a mount cost at NOTES notes (default
# 1,000,000) beside the same at SMALL notes (1,000), in one run, with the targets of a store whose
# cost follows the work and not the size. Release build; prints, asserts nothing.
#
#   build    each database: Benchmarks/note_tree.py writes NOTES notes of 1-4 KB in folders F0, F1,
#            ... of 1,000, `notesfs import` reads them in, `notesfs reindex` builds the full-text
#            index (as a first `search` would); the tree is then deleted. Wall time and peak RSS.
#   commands `ls F0`, `note cat`, `query 'folder == F0'` (sorted by date) and `query 'text
#            CONTAINS[c] "zanzibar"'` (a word in one note of 997), process start included:
#            Benchmarks/startup/spawn_times.c, RUNS runs each, both sizes and /bin/true taking
#            turns; median, p90 and the ratio NOTES / SMALL
#   search   Benchmarks/search/scale_search.py: the 100 queries of `scripts/bench.sh search`, with the
#            tree's words (common words in nearly every note), at both sizes: median, p90, p99
#   mount    Benchmarks/fs/size_targets.py: the mount's time to appear, `ls -l F0` (first, then the
#            median of 5), the daemon's VmRSS after it, SAVES saves of one note through the mount
#
# Databases are cached, one per size, in $WORKDIR/notesfs-scale/db-N (WORKDIR=/var/tmp): a run
# builds them anew unless NOTESFS_BENCH_REUSE=1, which takes the one of that size a former run
# finished building (db-N.built holds its build figures). They are kept after the run (1,000,000
# notes: several GB); `rm -rf $WORKDIR/notesfs-scale` frees them. Everything else is removed.
#
# Usage: scripts/bench-scale.sh [NOTES]   (SMALL=1000, RUNS=50, SAVES=200, WORKDIR=/var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-1000000}
small=${SMALL:-1000}
runs=${RUNS:-50}
saves=${SAVES:-200}
per_folder=1000
cache=${WORKDIR:-/var/tmp}/notesfs-scale
scratch=${NOTESFS_BENCH_BUILD:-.build}
export PYTHONDONTWRITEBYTECODE=1

scripts/release-build.sh "$scratch" notesfs >/dev/null
bin=$(cd "$scratch/release" && pwd)/notesfs
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/run.XXXXXX")
trap 'fusermount3 -uz "$tmp/mnt" 2>/dev/null || true; rm -rf "$tmp" "$cache"/tree-*' EXIT
gcc -O2 -o "$tmp/spawn_times" Benchmarks/startup/spawn_times.c

seconds_since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }

# build_db N: the database of N notes in $cache/db-N, built unless NOTESFS_BENCH_REUSE=1 finds one
# whose build finished; db-N.built gets "tree S", "import S RSS_MB", "reindex S RSS_MB" lines.
build_db() {
    local n=$1 db=$cache/db-$1 tree=$cache/tree-$1 start
    if [[ "${NOTESFS_BENCH_REUSE:-}" == 1 && -f "$db.built" ]]; then
        echo "reusing $db (built $(date -r "$db.built" '+%F %T'); NOTESFS_BENCH_REUSE=1)" >&2
        return
    fi
    rm -rf "$db" "$db.built" "$tree"
    echo "building $db: $n notes (tree, import, reindex)..." >&2
    start=$(date +%s.%N)
    python3 Benchmarks/note_tree.py "$tree" "$n" "$per_folder"
    echo "tree $(seconds_since "$start")" >"$tmp/built"
    for step in import reindex; do
        start=$(date +%s.%N)
        if [[ $step == import ]]; then
            /usr/bin/time -f %M -o "$tmp/rss" "$bin" --db "$db" -q import "$tree"
        else
            /usr/bin/time -f %M -o "$tmp/rss" "$bin" --db "$db" -q reindex
        fi
        echo "$step $(seconds_since "$start") $(($(tail -1 "$tmp/rss") / 1024))" >>"$tmp/built"
    done
    rm -rf "$tree"
    sync
    mv "$tmp/built" "$db.built"
}

build_db "$small"
build_db "$notes"
small_db=$cache/db-$small
big_db=$cache/db-$notes

# F0's record name (the reference `folder ==` compares with) and a note of F0, in each database.
folder_name() { "$bin" --db "$1" query 'name == "F0"' --type Folder | cut -f1; }
note="F0/Note 500.md"

echo "== a store at $notes notes beside $small (folders of $per_folder, notes of 1-4 KB, on disk: $cache), release build"
echo "   $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M UTC'), $(git rev-parse --short HEAD)"
echo "-- commands, process start included: $runs runs each, taking turns"
args=(/bin/true -- /bin/true)
for size in "$small" "$notes"; do
    db=$cache/db-$size
    args+=(-- "ls F0 @$size" -- "$bin" --db "$db" ls F0)
    args+=(-- "note cat @$size" -- "$bin" --db "$db" note cat "$note")
    args+=(-- "query folder @$size" -- "$bin" --db "$db" query "folder == \"$(folder_name "$db")\"" --sort -modificationDate)
    args+=(-- "query CONTAINS[c] @$size" -- "$bin" --db "$db" query 'text CONTAINS[c] "zanzibar"')
done
"$tmp/spawn_times" "$runs" "${args[@]}" | tee "$tmp/commands"

echo "-- search: the 100 queries of scripts/bench.sh search with the tree's words, one process each, the sizes taking turns"
python3 Benchmarks/search/scale_search.py "$bin" "$small_db" "$small" "$big_db" "$notes"

echo "-- mounts: time to appear, ls -l F0, daemon VmRSS, $saves saves through the mount"
python3 Benchmarks/fs/size_targets.py "$bin" "$tmp" "$saves" "$small_db" "$big_db" "$tmp/commands" "$small_db.built" "$big_db.built"
echo "cached databases (kept; NOTESFS_BENCH_REUSE=1 reuses them): $(du -sh "$small_db" "$big_db" | tr '\t\n' ': ')"
