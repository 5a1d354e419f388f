#!/usr/bin/env bash
# Benchmarks: prints figures side by side with baselines run in the same invocation. Asserts nothing.
# The tables of issue 9, one command each (release builds; the figures vary with the machine's load):
#
#   scripts/bench.sh fs [ROUNDS]          3,000 notes: tmpfs vs passthrough_ll -o xattr,default_permissions (issue
#                                         33's fair peer) vs notesfs, ROUNDS (3) alternating rounds, medians
#                                         and the median notesfs/passthrough_ll ratio
#   scripts/bench.sh syscalls [COUNT]     system calls per create, append, rename, editor save and unlink
#                                         (300 each) of passthrough_ll and of notesfs's request and background
#                                         threads, under strace -f
#   scripts/bench.sh latency [NOTES]      each create, append, rename after an append and unlink timed alone on notesfs (3,000 notes):
#                                         median, mean, p99, and the writes over 5 ms, those the store checkpointed in
#   scripts/bench.sh fs-scale [NOTES]     100,000 notes in 20 folders: tmpfs vs notesfs, daemon VmRSS per phase;
#                                         passthrough_ll too when the open-file limit lets it hold NOTES files
#   scripts/bench.sh scale [NOTES]        commands and a mount at 1,000,000 notes (folders of 1,000) beside the
#                                         same at 1,000: ls, note cat, query with start-up, mount, ls -l, RSS,
#                                         saves (scripts/bench-scale.sh; RUNS=50, NOTESFS_BENCH_REUSE=1)
#   scripts/bench.sh store [--million]    record store at 1,000 and 100,000 notes (and 1,000,000 with --million)
#   scripts/bench.sh parallel-grep [NOTES] four grep -r at once vs one after another (ROUNDS=3 rounds)
#   scripts/bench.sh cold-reads [NOTES]   every note read twice after a fresh mount, default vs -o noatime
#                                         (20,000 notes, ROUNDS=3 rounds)
#   scripts/bench.sh bigfile [MIB]        one 1 GiB file written and read: MB/s and daemons' peak RSS
#   scripts/bench.sh cli [RUNS]           start-up: notesfs --version, --help, ls and note cat vs /bin/true,
#                                         sqlite3 and a Swift hello world, RUNS (200) runs each (median, p90);
#                                         then notesfs import of 10,000 notes vs cp -r
#   scripts/bench.sh sync [NOTES] [EDITS] sync through PostgreSQL, readable then encrypted: 10,000 notes up and down vs psql \copy,
#                                         rows and bytes per note, 1,000 changed notes pushed, one
#                                         edit's delay mount to mount (200)
#   scripts/bench.sh search [NOTES]       full-text index at 100,000 notes: build time and size, 100 searches
#                                         (process start included) beside /bin/true and grep -rl on tmpfs, .search/
#   scripts/bench.sh ranking [NOTES] [REV] the search's ranking beside REV's (default b199f00, which scores
#                                         every match): top-20/top-5 overlap on the 100 queries, and
#                                         their median/p99 with the two builds taking turns
#   scripts/bench.sh links [NOTES]        links at 100,000 notes (5 each): index build, backlinks and tags
#                                         (start included) and .backlinks/.tags, mv of notes with 0, 10 and
#                                         1,000 backlinks beside -o nolinks
#   scripts/bench.sh history [VERSIONS]   .history/ of a note with 1,000 versions: readdir, ls, ls -l beside tmpfs;
#                                         then store-bench history and history-year (HISTORY_NOTES=N, default 1,000)
#   scripts/bench.sh load [ROUNDS]        the kernel test suite's load patterns (6 processes appending small
#                                         O_APPEND writes, 8 KiB seek/read/write with truncates, fsstress-style
#                                         mixed operations): tmpfs vs passthrough_ll vs notesfs (APPENDS=20000,
#                                         SEEKS=10000, STRESS=3000)
#   scripts/bench.sh all                  store, fs, fs-scale, parallel-grep, cold-reads, bigfile, cli and load, once
#   scripts/profile.sh create|rename|read|append|unlink|editor|version   where a request spends the daemon's time (perf)
#
# NOTES=N changes fs's note count. NOTESFS_BENCH_BUILD=DIR builds in DIR instead of .build (so a
# running `swift test` does not block it).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${NOTESFS_BENCH_BUILD:-.build}
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ beside Benchmarks/fs
scripts/deps.sh
what=${1:-all}
work=$(mktemp -d /var/tmp/notesfs-bench.XXXXXX)
shm=/dev/shm/notesfs-bench-$$
mounts=()
cleanup() {
    # Whatever is still mounted below $work (a benchmark that failed half-way), then the data.
    for m in "${mounts[@]}" $(findmnt -rn -o TARGET | grep "^$work/" || true); do
        fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$work" "$shm"
}
trap cleanup EXIT

build() { scripts/release-build.sh "$scratch" "$1"; }

peak_rss_mb() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

# Record store figures: store-bench prints each beside issue 9's target. The databases are on disk
# ($work, under /var/tmp), as a user's would be.
bench_store() {
    build store-bench
    local bin=$scratch/release/store-bench db="$work/store-100k" small="$work/store-1k"
    echo "== record store: 100,000 notes of 1-4 KB in 100 folders of 1,000 (release build, $db)"
    $bin generate "$db" 100000 100
    $bin generate "$small" 1000 1 >/dev/null
    sync
    $bin open "$db"
    $bin open "$db"
    $bin ops "$db"
    echo "== the cost of one save: 2,000 saves, one note per modify, at 1,000 and 100,000 notes"
    $bin save "$small"
    $bin save "$db"
    rm -rf "$db" "$small"
    if [[ "${1:-}" == "--million" ]]; then
        echo "== record store: 1,000,000 notes in 1,000 folders"
        $bin generate "$work/store-1m" 1000000 1000
        sync
        $bin open "$work/store-1m"
        $bin save "$work/store-1m"
        rm -rf "$work/store-1m"
    fi
}

wait_mounted() {
    local m=$1
    for _ in $(seq 200); do
        if [ "$(stat -c %d "$m")" != "$(stat -c %d "$m/..")" ]; then return 0; fi
        sleep 0.05
    done
    echo "mount at $m did not appear" >&2
    return 1
}

passthrough_ll() {
    local bin="$work/passthrough_ll"
    if [ ! -x "$bin" ]; then
        gcc -O2 -o "$bin" /usr/share/doc/libfuse3-dev/examples/passthrough_ll.c $(pkg-config --cflags --libs fuse3)
    fi
    echo "$bin"
}

# The fs, fs-scale and parallel-grep tables: Benchmarks/fs/*.py mount the daemons themselves (in the
# foreground, so their pid is known); WORK holds the mountpoints and logs, SHM (tmpfs) the data.
fs_python() { # SCRIPT ARGS...
    local script=$1
    shift
    mkdir -p "$shm"
    python3 "Benchmarks/fs/$script" "$@"
}

bench_fs() {
    local rounds=${1:-3} notes=${NOTES:-3000} folders=20
    build notesfs
    build store-bench # the floor under the write phases: the text index's own work (store-bench index)
    echo "== filesystem phases (issue 9's first table): $notes notes of 1-4 KB in $folders folders, $rounds alternating rounds"
    echo "   tmpfs; passthrough_ll -o xattr,default_permissions over tmpfs; notesfs with its database on tmpfs (editor saves fsync: the store's sync())"
    fs_python fs_table.py "$scratch/release/notesfs" "$(passthrough_ll)" "$work" "$shm" "$rounds" "$notes" "$folders"
}

bench_syscalls() {
    local count=${1:-300}
    build notesfs
    echo "== system calls a write costs each daemon: $count writes of each kind under strace -f (counts: strace slows every call)"
    echo "   passthrough_ll -o xattr,default_permissions over tmpfs; notesfs with its database on tmpfs"
    fs_python syscalls.py "$scratch/release/notesfs" "$(passthrough_ll)" "$work" "$shm" "$count"
}

bench_latency() {
    local notes=${1:-3000}
    build notesfs
    echo "== each write's own time on notesfs (database on tmpfs): $notes creates, appends to a third, renames of a fifteenth right after an append to each, unlinks"
    fs_python latency.py "$scratch/release/notesfs" "$work" "$shm" "$notes"
}

bench_fs_scale() {
    local notes=${1:-100000} folders=20
    build notesfs
    echo "== filesystem at scale (issue 9's second table): $notes notes of 1-4 KB in $folders folders"
    fs_python scale.py "$scratch/release/notesfs" "$work" "$shm" "$notes" "$folders" "$(passthrough_ll)"
}

bench_parallel_grep() {
    local notes=${1:-100000} folders=20 rounds=${ROUNDS:-3}
    build notesfs
    echo "== parallel reads: four grep -r over four folders at once vs one after another ($notes notes in $folders folders)"
    fs_python parallel_grep.py "$scratch/release/notesfs" "$work" "$shm" "$notes" "$folders" "$rounds"
}

bench_load() {
    local rounds=${1:-3}
    build notesfs
    echo "== load patterns of the kernel's filesystem tests, $rounds alternating rounds (databases and passthrough_ll's source on tmpfs)"
    fs_python load.py "$scratch/release/notesfs" "$(passthrough_ll)" "$work" "$shm" "$rounds" "${APPENDS:-20000}" "${SEEKS:-10000}" "${STRESS:-3000}"
}

bench_cold_reads() {
    local notes=${1:-20000} folders=4 rounds=${ROUNDS:-3}
    build notesfs
    echo "== reads after a fresh mount, default and -o noatime ($notes notes in $folders folders)"
    fs_python cold_reads.py "$scratch/release/notesfs" "$work" "$shm" "$notes" "$folders" "$rounds"
}

drop_caches() {
    sync
    echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "(cannot drop caches: reads may come from the page cache)" >&2
}

# One MIB-MiB file (default 1 GiB) written (write + fsync + close) and read back with a cold page
# cache, on tmpfs, on passthrough_ll over tmpfs and on notesfs with its database on tmpfs: between
# write and read the caches are dropped and the FUSE file systems are unmounted and mounted again
# (so no page of the file is cached). The bytes read are checked by CRC against those written. Peak
# RSS is the daemon's VmHWM (the larger of the write and the read mount).
bench_bigfile() {
    local mib=${1:-1024}
    build notesfs
    local pt
    pt=$(passthrough_ll)
    local shm=/dev/shm/notesfs-bigfile-$$ results="$work/bigfile-results.txt" mnt="$work/bigmnt" pid rss
    : >"$results"
    echo "== one ${mib} MiB file: write (+ fsync, close), then read with a cold cache (remount); MB/s (10^6 bytes/s), daemon peak RSS"
    echo "   tmpfs; passthrough_ll over tmpfs; notesfs with its database on tmpfs"
    bigfile() { python3 Benchmarks/fs/bigfile.py "$2" "$mnt/big.bin" ${3:-} | sed "s/^/$1 /" >>"$results"; }
    start_fs() { # FS: mounts it at $mnt, sets pid
        case $1 in
        passthrough_ll) "$pt" -f -o source="$shm/src" "$mnt" 2>/dev/null & ;;
        notesfs) "$scratch/release/notesfs" "$shm/db" "$mnt" -f 2>/dev/null & ;;
        esac
        pid=$!
        mounts+=("$mnt")
        wait_mounted "$mnt"
    }
    stop_fs() { # records the daemon's peak RSS, unmounts
        local now
        now=$(peak_rss_mb "$pid")
        rss=$(python3 -c "print(max(${rss:-0}, $now))")
        fusermount3 -u "$mnt"
        wait "$pid" || true
    }
    rm -rf "$shm" "$mnt" && mkdir -p "$shm" && ln -s "$shm" "$mnt"
    bigfile tmpfs write "$mib"
    drop_caches
    bigfile tmpfs read
    rm -f "$mnt" && rm -rf "$shm"
    for fs in passthrough_ll notesfs; do
        mkdir -p "$shm/src" "$shm/db" "$mnt"
        rss=0
        start_fs $fs
        bigfile $fs write "$mib"
        stop_fs
        drop_caches
        start_fs $fs
        bigfile $fs read
        stop_fs
        echo "$fs rss $rss" >>"$results"
        rm -rf "$shm"
    done
    python3 - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    fs, what, *rest = line.split()
    rows[(fs, what)] = rest
names = ["tmpfs", "passthrough_ll", "notesfs"]
print(f"{'':<16}" + "".join(f"{n:>16}" for n in names))
for what in ["write", "read"]:
    cells = []
    for n in names:
        secs, size, _ = rows[(n, what)]
        cells.append(f"{int(size) / float(secs) / 1e6:>16.0f}")
    print(f"{what + ' MB/s':<16}" + "".join(cells))
print(f"{'seconds w/r':<16}" + "".join(f"{float(rows[(n, 'write')][0]):>7.2f} /{float(rows[(n, 'read')][0]):>6.2f}" for n in names))
print(f"{'peak RSS MiB':<16}" + "".join(f"{rows[(n, 'rss')][0] if (n, 'rss') in rows else '-':>16}" for n in names))
bad = [n for n in names if rows[(n, "write")][1:] != rows[(n, "read")][1:]]
print("bytes read back: " + ("all match (size and CRC32)" if not bad else "MISMATCH on " + ", ".join(bad)))
PY
}

bench_cli() {
    scripts/bench-startup.sh "${1:-200}"
    if [ -x scripts/bench-cli.sh ]; then scripts/bench-cli.sh; else echo "cli benchmark: scripts/bench-cli.sh missing"; fi
}

# Note history in the store (issue 25): a save with and without a version, `note log`'s read and
# compaction at 1,000 versions; then a simulated year of daily edits of HISTORY_NOTES notes (1,000;
# the issue's figure is 10,000: about ten times as long) against the budget. On tmpfs.
bench_history_store() {
    build store-bench
    local bin=$scratch/release/store-bench
    mkdir -p "$shm"
    echo "== note history in the store (release build, tmpfs)"
    $bin history "$shm/history"
    echo "== a year of daily edits of ${HISTORY_NOTES:-1000} notes, retention each day (NOTESFS_HISTORY_BUDGET=${NOTESFS_HISTORY_BUDGET:-20})"
    $bin history-year "$shm/history-year" "${HISTORY_NOTES:-1000}" 365
}

case "$what" in
store) bench_store "${2:-}" ;;
fs) bench_fs "${2:-3}" ;;
fs-scale) bench_fs_scale "${2:-100000}" ;;
syscalls) bench_syscalls "${2:-300}" ;;
latency) bench_latency "${2:-3000}" ;;
scale) scripts/bench-scale.sh "${2:-1000000}" ;;
parallel-grep) bench_parallel_grep "${2:-100000}" ;;
cold-reads) bench_cold_reads "${2:-20000}" ;;
bigfile) bench_bigfile "${2:-1024}" ;;
cli) bench_cli "${2:-200}" ;;
search) scripts/bench-search.sh "${2:-100000}" ;;
ranking) scripts/bench-search-ranking.sh "${2:-100000}" "${3:-b199f00}" ;;
links) scripts/bench-links.sh "${2:-100000}" ;;
history) scripts/bench-history.sh "${2:-1000}" && bench_history_store ;;
load) bench_load "${2:-3}" ;;
sync)
    # Readable and encrypted servers one after the other, in the same invocation.
    scripts/bench-sync.sh "${2:-10000}" "${3:-200}" && SYNC_ENCRYPTION=1 scripts/bench-sync.sh "${2:-10000}" "${3:-200}" &&
        scripts/bench-sync-memory.sh "$scratch/release/notesfs" "${2:-10000}" ;;
all) bench_store; bench_fs 3; bench_fs_scale; bench_parallel_grep; bench_cold_reads; bench_bigfile; bench_cli; bench_load 3 ;;
*) echo "usage: scripts/bench.sh store [--million] | fs [ROUNDS] | syscalls [COUNT] | latency [NOTES] | fs-scale [NOTES] | scale [NOTES] | parallel-grep [NOTES] | cold-reads [NOTES] | bigfile [MIB] | cli [RUNS] | search [NOTES] | ranking [NOTES] [REV] | links [NOTES] | history [VERSIONS] | load [ROUNDS] | sync [NOTES] [EDITS] | all" >&2; exit 2 ;;
esac
