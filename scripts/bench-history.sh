#!/usr/bin/env bash
# scripts/bench.sh history [VERSIONS]: the mount's `.history/` for a note of VERSIONS versions
# (default 1,000; issue 25's target: a listing in <= 20 ms), made by saves through the mount
# (NOTESFS_HISTORY_INTERVAL=0: every save keeps one), beside a tmpfs directory of as many files, in
# one run. Prints; asserts nothing.
#   listdir: readdir in one process (os.listdir), median / max of 20, cached and after a save
#            (the listing made again); ls: one process each, start included, beside /bin/true;
#   ls -l:   a stat of every version too (attributes have timeout 0: each is asked again).
set -euo pipefail
cd "$(dirname "$0")/.."
versions=${1:-1000}
. scripts/bench-mount-common.sh
bench_mount_setup history
echo "== .history/ of a note with $versions versions ($db), $(nproc) cores, $(uname -r)"
"$bin" --db "$db" note new Plan --text "v0" >/dev/null
mkdir -p "$mnt" "$shm/tree"
for i in $(seq "$versions"); do : >"$shm/tree/2026-12-03T08-00-$i.md"; done
NOTESFS_HISTORY_INTERVAL=0 "$bin" "$db" "$mnt"
bench_wait_mounted
python3 - "$mnt" "$shm/tree" "$versions" <<'PY'
import os, subprocess, sys, time, statistics
mnt, tree, versions = sys.argv[1], sys.argv[2], int(sys.argv[3])
plan, history = os.path.join(mnt, "Plan.md"), os.path.join(mnt, ".history", "Plan.md")
t = time.perf_counter()
for i in range(versions):
    with open(plan, "w") as f: f.write(f"version {i}\n")
print(f"{'saves through the mount (each keeps a version)':<48} {(time.perf_counter() - t) / versions * 1000:6.2f} ms a save")
listed = len(os.listdir(history))
print(f"{'versions listed':<48} {listed}")
def timed(f):
    t = time.perf_counter(); f(); return (time.perf_counter() - t) * 1000
def show(label, ms):
    print(f"{label:<48} median {statistics.median(ms):6.1f} ms  max {max(ms):6.1f}")
show(f"listdir .history/Plan.md/ ({listed})", [timed(lambda: os.listdir(history)) for _ in range(20)])
show(f"listdir tmpfs, {versions} files", [timed(lambda: os.listdir(tree)) for _ in range(20)])
after = []
for i in range(10):
    with open(plan, "w") as f: f.write(f"more {i}\n")
    after.append(timed(lambda: os.listdir(history)))
show("listdir .history/Plan.md/ after a save", after)
run = lambda argv: subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
show("/bin/true (20 runs)", [timed(lambda: run(["/bin/true"])) for _ in range(20)])
show("ls .history/Plan.md/ (20 runs)", [timed(lambda: run(["ls", history])) for _ in range(20)])
show("ls tmpfs (20 runs)", [timed(lambda: run(["ls", tree])) for _ in range(20)])
show("ls -l .history/Plan.md/ (5 runs)", [timed(lambda: run(["ls", "-l", history])) for _ in range(5)])
show("ls -l tmpfs (5 runs)", [timed(lambda: run(["ls", "-l", tree])) for _ in range(5)])
PY
fusermount3 -u "$mnt"
