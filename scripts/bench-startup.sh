#!/usr/bin/env bash
# Start-up of the release `notesfs` (issue 24: `notesfs --version` in 5 ms or less, median), beside
# `/bin/true`, `sqlite3 :memory: .quit` and a hello-world Swift program with the static Swift
# runtime (about the platform's floor; its libstdc++ stays shared), in the same run. Also
# `notesfs --help`, and `notesfs ls` and `note cat` on a small database (300 notes, on disk), which
# pay for opening it.
#
# Benchmarks/startup/spawn_times.c times each run: posix_spawn + waitpid, wall clock, standard
# output and error to /dev/null, the commands taking turns run by run (so they share the
# machine's load); two warm-up runs each are not counted. The spawn's own cost is in every row
# alike: /bin/true's row is it. Prints median, p90 and minimum in milliseconds.
#
# Usage: scripts/bench-startup.sh [RUNS]   (default 200; WORKDIR=/var/tmp by default)
set -euo pipefail

runs=${1:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${NOTESFS_BENCH_BUILD:-.build}
workdir=${WORKDIR:-/var/tmp}
for tool in gcc sqlite3 swiftc; do
    command -v "$tool" >/dev/null || { echo "bench-startup: $tool is missing (scripts/deps.sh installs gcc and sqlite3)" >&2; exit 1; }
done

echo "building release..." >&2
(cd "$root" && scripts/release-build.sh "$scratch" notesfs >/dev/null 2>&1)
bin=$(cd "$root" && cd "$scratch/release" && pwd)/notesfs

tmp=$(mktemp -d "$workdir/notesfs-bench-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/spawn_times" "$root/Benchmarks/startup/spawn_times.c"
echo 'print("hello")' >"$tmp/hello.swift"
swiftc -O -static-stdlib -o "$tmp/hello-swift" "$tmp/hello.swift" 2>/dev/null
python3 "$root/Benchmarks/note_tree.py" "$tmp/tree" 300
"$bin" --db "$tmp/db" -q import "$tmp/tree"
note=$("$bin" --db "$tmp/db" ls | grep "\.md$" | head -1)
sync

echo "== start-up: $runs runs of each, taking turns (release build; notesfs $("$bin" --version | cut -d' ' -f2), ldd lists $(ldd "$bin" | wc -l) objects; target: --version ≤ 5 ms median)"
"$tmp/spawn_times" "$runs" \
    /bin/true -- /bin/true -- \
    "sqlite3 :memory: .quit" -- sqlite3 :memory: .quit -- \
    "hello.swift (static stdlib)" -- "$tmp/hello-swift" -- \
    "notesfs --version" -- "$bin" --version -- \
    "notesfs --help" -- "$bin" --help -- \
    "notesfs ls (300 notes)" -- "$bin" --db "$tmp/db" ls -- \
    "notesfs note cat" -- "$bin" --db "$tmp/db" note cat "$note"
