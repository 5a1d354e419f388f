#!/usr/bin/env bash
# Benchmarks: prints figures side by side with baselines run in the same invocation. Asserts nothing.
#
#   scripts/bench.sh store [--million]   record store at 100,000 notes (and 1,000,000 with --million)
#   scripts/bench.sh fs [ROUNDS]         filesystem phases: tmpfs vs passthrough_ll vs notesfs, then bigfile
#   scripts/bench.sh bigfile [MIB]       one 1 GiB file written and read: MB/s and daemons' peak RSS
#   scripts/bench.sh cli                 notesfs import of 10,000 notes vs cp -r
#   scripts/bench.sh all
#
# NOTESFS_BENCH_BUILD=DIR builds in DIR instead of .build (so a running `swift test` does not block it).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${NOTESFS_BENCH_BUILD:-.build}
scripts/deps.sh
what=${1:-all}
work=$(mktemp -d /var/tmp/notesfs-bench.XXXXXX)
mounts=()
cleanup() {
    for m in "${mounts[@]}"; do fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

build() { swift build -c release --scratch-path "$scratch" --product "$1" >&2; }

peak_rss_mb() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

bench_store() {
    build store-bench
    local bin=$scratch/release/store-bench db="$work/store-100k"
    echo "== record store: 100,000 notes of 1-4 KB in 100 folders (release build, $db)"
    $bin generate "$db" 100000 100
    sync
    $bin open "$db"
    $bin open "$db"
    $bin ops "$db"
    if [[ "${1:-}" == "--million" ]]; then
        echo "== record store: 1,000,000 notes"
        $bin generate "$work/store-1m" 1000000 1000
        sync
        $bin open "$work/store-1m"
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

bench_fs() {
    local rounds=${1:-3} notes=10000 folders=20
    build notesfs
    local pt
    pt=$(passthrough_ll)
    local shm=/dev/shm/notesfs-bench-$$
    echo "== filesystem phases: $notes notes of 1-4 KB in $folders folders, $rounds alternating rounds (seconds, median)"
    echo "   tmpfs; passthrough_ll over tmpfs; notesfs with its database on tmpfs (editor-save fsyncs: the store's sync())"
    local results="$work/fs-results.txt"
    : >"$results"
    for round in $(seq "$rounds"); do
        # tmpfs
        rm -rf "$shm" && mkdir -p "$shm/t"
        python3 Benchmarks/fs/phases.py "$shm/t" $notes $folders | sed "s/^/tmpfs /" >>"$results"
        # passthrough_ll over tmpfs
        rm -rf "$shm" && mkdir -p "$shm/src" "$work/pt"
        # -o xattr: serve xattrs as notesfs does (ls -l asks for two per file); without it
        # passthrough_ll answers ENOSYS once and the kernel stops asking.
        "$pt" -o source="$shm/src",xattr "$work/pt" && mounts+=("$work/pt") && wait_mounted "$work/pt"
        python3 Benchmarks/fs/phases.py "$work/pt" $notes $folders | sed "s/^/passthrough_ll /" >>"$results"
        fusermount3 -u "$work/pt"
        # notesfs, its database on tmpfs like passthrough_ll's source (same backing store)
        rm -rf "$shm" && mkdir -p "$shm/db" "$work/nfs"
        $scratch/release/notesfs "$shm/db" "$work/nfs" && mounts+=("$work/nfs") && wait_mounted "$work/nfs"
        python3 Benchmarks/fs/phases.py "$work/nfs" $notes $folders | sed "s/^/notesfs /" >>"$results"
        fusermount3 -u "$work/nfs"
        rm -rf "$shm"
        echo "round $round done" >&2
    done
    python3 - "$results" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    fs, phase, secs = line.split()
    if phase not in order: order.append(phase)
    rows[(fs, phase)].append(float(secs))
med = {k: statistics.median(v) for k, v in rows.items()}
print(f"{'phase':<13}{'tmpfs':>10}{'passthrough_ll':>16}{'notesfs':>10}{'notesfs/pt':>12}{'pt/tmpfs':>10}")
for p in order:
    t, pt, n = med[("tmpfs", p)], med[("passthrough_ll", p)], med[("notesfs", p)]
    print(f"{p:<13}{t:>10.3f}{pt:>16.3f}{n:>10.3f}{n/pt:>12.2f}{pt/t:>10.1f}")
PY
    echo "== notesfs at 100,000 notes: mount + first ls -lR, daemon peak RSS"
    build store-bench
    $scratch/release/store-bench generate "$work/db100k" 100000 100 >/dev/null
    sync
    mkdir -p "$work/big"
    local start end pid
    start=$(date +%s.%N)
    $scratch/release/notesfs "$work/db100k" "$work/big" -f &
    pid=$!
    mounts+=("$work/big")
    wait_mounted "$work/big"
    ls -lR "$work/big" >/dev/null
    end=$(date +%s.%N)
    printf "mount + first ls -lR (100,000 notes)        %.2f s\n" "$(echo "$end - $start" | bc)"
    start=$(date +%s.%N)
    ls -lR "$work/big" >/dev/null
    end=$(date +%s.%N)
    printf "second ls -lR                               %.2f s\n" "$(echo "$end - $start" | bc)"
    start=$(date +%s.%N)
    grep -r Zanzibar "$work/big" | wc -l >/dev/null
    end=$(date +%s.%N)
    printf "grep -r over 100,000 notes                  %.2f s\n" "$(echo "$end - $start" | bc)"
    echo "daemon peak RSS                             $(peak_rss_mb $pid) MB"
    fusermount3 -u "$work/big"
    wait $pid || true
    bench_bigfile
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
    if [ -x scripts/bench-cli.sh ]; then scripts/bench-cli.sh; else echo "cli benchmark: scripts/bench-cli.sh missing"; fi
}

case "$what" in
store) bench_store "${2:-}" ;;
fs) bench_fs "${2:-3}" ;;
bigfile) bench_bigfile "${2:-1024}" ;;
cli) bench_cli ;;
all) bench_store; bench_fs 3; bench_cli ;;
*) echo "usage: scripts/bench.sh store [--million] | fs [ROUNDS] | bigfile [MIB] | cli | all" >&2; exit 2 ;;
esac
