#!/usr/bin/env bash
# scripts/bench.sh links [NOTES]: links, backlinks and tags at NOTES notes (default 100,000) with 5
# links each on average (Benchmarks/link_vault.py), in one run. Prints; asserts nothing.
#   build:     `notesfs reindex` (words, links, tags and properties from scratch)
#   backlinks: `notesfs backlinks` (process start included) beside /bin/true and `grep -rl` of the
#              vault on tmpfs; `ls .backlinks/PATH` and `ls .tags/T` through the mount
#   rename:    `mv` through the mount of a note with no, 10 and 1,000 backlinks, beside the same
#              renames in a mount with -o nolinks (the rename without rewriting)
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-100000}
. scripts/bench-mount-common.sh
bench_mount_setup links
echo "== links: $notes notes, 5 links each on average, in folders of 1,000 ($db), $(nproc) cores, $(uname -r)"
mkdir -p "$shm"
python3 Benchmarks/link_vault.py "$shm/vault" "$notes"
"$bin" --db "$db" -q import "$shm/vault" >/dev/null
rm -rf "$db/indexes"
sync
start=$(date +%s.%N)
"$bin" --db "$db" reindex -q
end=$(date +%s.%N)
printf "%-52s %10.2f s  (target 60 s)\n" "build the index from scratch (notesfs reindex)" "$(echo "$end - $start" | bc)"
python3 - "$bin" "$db" "$shm/vault" <<'PY'
import sys, statistics
sys.path.insert(0, "Benchmarks/search")
from search_bench import timed
bin, db, vault = sys.argv[1:4]
def summary(ms):
    ms = sorted(ms)
    return f"median {statistics.median(ms):7.1f} ms  p90 {ms[int(len(ms) * 0.9)]:7.1f}"
targets = ["F0/Hub.md", "F0/Ten.md", "F0/Lonely.md"] + [f"F{i % 10}/Note {i * 7}.md" for i in range(17)]
for t in targets[:3]: timed([bin, "--db", db, "backlinks", t])  # warm the page cache
print(f"{'/bin/true (20 runs)':<52} {summary([timed(['/bin/true']) for _ in targets])}")
print(f"{'notesfs backlinks, 20 notes (target 10 ms)':<52} {summary([timed([bin, '--db', db, 'backlinks', t]) for t in targets])}")
print(f"{'  of which Hub (1,000 backlinks)':<52} {summary([timed([bin, '--db', db, 'backlinks', 'F0/Hub.md']) for _ in range(5)])}")
print(f"{'notesfs tags':<52} {summary([timed([bin, '--db', db, 'tags']) for _ in range(5)])}")
print(f"{'grep -rl of a title over the vault on tmpfs':<52} {summary([timed(['grep', '-rlF', '[[Note 4242]]', vault]) for _ in range(3)])}")
PY
mkdir -p "$mnt"
mount_and_time() { # OPTIONS LABEL
    "$bin" "$db" "$mnt" $1
    bench_wait_mounted
    python3 - "$mnt" "$2" <<'PY'
import os, sys, time, statistics
mnt, label = sys.argv[1:3]
def ms(f):
    t = time.perf_counter(); f(); return (time.perf_counter() - t) * 1000
os.listdir(os.path.join(mnt, ".search", "warm"))  # the index caught up, as a first search would
if label == "links":
    bl = [ms(lambda i=i: os.listdir(os.path.join(mnt, ".backlinks", f"F{i % 10}", f"Note {i * 7}.md"))) for i in range(20)]
    print(f"{'ls .backlinks/PATH (20 notes; target 10 ms)':<52} median {statistics.median(bl):7.1f} ms  max {max(bl):7.1f}")
    tg = [ms(lambda i=i: os.listdir(os.path.join(mnt, ".tags", f"t{i}"))) for i in range(10)]
    print(f"{'ls .tags/T (10 tags of 2,000 notes; target 20 ms)':<52} median {statistics.median(tg):7.1f} ms  max {max(tg):7.1f}")
for name, rounds in [("Lonely", 20), ("Ten", 20), ("Hub", 4)]:
    times = []
    a, b = os.path.join(mnt, "F0", f"{name}.md"), os.path.join(mnt, "F0", f"{name} renamed.md")
    for r in range(rounds):
        times.append(ms(lambda: os.rename(a, b)))
        times.append(ms(lambda: os.rename(b, a)))
    print(f"  mv, {name:<7} ({label:<8}) {'':<28} median {statistics.median(times):7.2f} ms  max {max(times):7.2f}")
PY
    fusermount3 -u "$mnt"
}
echo "rename through the mount (os.rename there and back; -o nolinks is the rename without rewriting):"
mount_and_time "" links
mount_and_time "-o nolinks" nolinks
