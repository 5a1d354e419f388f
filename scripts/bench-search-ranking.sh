#!/usr/bin/env bash
# scripts/bench.sh ranking [NOTES] [REV]: this tree's search beside the search of git revision REV
# (default: b199f00, the ranking that scores every match), over one database of NOTES notes of 1-4 KB
# (default 100,000; `store-bench generate`), in one run. Prints; asserts nothing.
#   quality: each of the 100 queries of Benchmarks/search/search_bench.py, top 20 and top 5 of the two
#            builds: overlap (mean, minimum), the queries whose lists differ (FULL_SETS=1: every hit
#            of each query compared as sets too)
#   speed:   ROUNDS (3) rounds of the 100 queries, one process each, the builds taking turns,
#            beside /bin/true: median, p90, p99
# OLD_NOTESFS=PATH uses that binary as REV's instead of building it (a release build from a clean
# tree, some minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-100000}
rev=${2:-b199f00}
scratch=${NOTESFS_BENCH_BUILD:-.build}
work=$(mktemp -d /var/tmp/notesfs-ranking.XXXXXX)
trap 'git worktree remove --force "$work/old" 2>/dev/null || true; rm -rf "$work"' EXIT
scripts/release-build.sh "$scratch" notesfs store-bench >/dev/null
new=$scratch/release/notesfs
old=${OLD_NOTESFS:-}
if [ -z "$old" ]; then
    git worktree add --detach "$work/old" "$rev" >/dev/null
    (cd "$work/old" && scripts/release-build.sh "$work/old-build" notesfs >/dev/null)
    old=$work/old-build/release/notesfs
fi
echo "== search ranking: this tree against $rev, $notes notes of 1-4 KB in 100 folders, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$scratch/release/store-bench" generate "$work/db" "$notes" 100 >/dev/null
# Each build searches its own copy, indexed by itself: one of another index format would rebuild
# the other's index at every turn.
cp -a "$work/db" "$work/db-old"
"$new" --db "$work/db" reindex -q
"$old" --db "$work/db-old" reindex -q
python3 Benchmarks/search/compare_ranking.py "$old" "$new" "$work/db" "${ROUNDS:-3}" "$work/db-old"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
