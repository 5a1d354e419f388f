#!/usr/bin/env python3
"""The first table of issue 9 (scripts/bench.sh fs): tmpfs, passthrough_ll -o
xattr,default_permissions over tmpfs (issue 33's fair peer) and notesfs with its database on tmpfs,
ROUNDS alternating rounds of phases.py on each.

Usage: fs_table.py NOTESFS PASSTHROUGH_LL WORK SHM ROUNDS NOTES FOLDERS
Prints per phase the medians in seconds and the median of the per-round ratios notesfs /
passthrough_ll, beside the issue's target. Then, when `store-bench` sits beside NOTESFS, the floor
of each write phase: passthrough_ll's time an operation, or, when larger, its CPU an operation (the
driver's and the daemon's) and the text index's own CPU an operation (`store-bench index`, the
same bodies and writes on the index code alone) spread over the cores; then the write phases
together, each phase's operations summed, beside their floor. WORK holds mountpoints and
logs, SHM (on tmpfs) the tmpfs directory, passthrough_ll's source and notesfs's database; each is
made empty per run.
"""
import collections
import os
import shutil
import subprocess
import sys

import mounts
from corpus import body
from tables import median, print_table

notesfs_bin, pt_bin, work, shm = sys.argv[1:5]
rounds, notes, folders = (int(a) for a in sys.argv[5:8])
store_bench = os.path.join(os.path.dirname(notesfs_bin), "store-bench")
here = os.path.dirname(os.path.abspath(__file__))

TARGETS = {"create": 1.5, "ls-lR": 1.0, "read": 0.5, "grep-rare": 0.5, "grep-common": 0.5, "append": 1.5,
           "rename-same": 1.5, "rename-across": 1.5, "editor-save": 1.5, "unlink": 1.5, "mkdir": 1.5}
# Operations a write phase makes (Benchmarks/fs/phases.py, operations.py).
COUNTS = {"create": notes, "append": len(range(0, notes, 10)), "rename-same": len(range(5, notes, 20)),
          "rename-across": len(range(15, notes, 20)), "editor-save": 200, "unlink": notes}
LABELS = {"create": "create + write + close", "ls-lR": "`ls -lR`", "read": "read all",
          "grep-rare": "`grep -r` rare word", "grep-common": "`grep -rc` common word", "append": "append 10%",
          "rename-same": "rename 5%, same folder", "rename-across": "rename 5%, across folders",
          "editor-save": "200 editor saves (temp + fsync + rename)", "unlink": "unlink all notes",
          "mkdir": "mkdir 200", "rmdir": "rmdir 200"}


def phases(root, fs, daemon=None):
    """{phase: seconds} of one round of FS on ROOT; the CPU seconds of the driver and DAEMON go to `cpu`."""
    env = dict(os.environ, PHASES_DAEMON_PID=str(daemon.pid if daemon else 0))
    out = subprocess.run([sys.executable, os.path.join(here, "phases.py"), root, str(notes), str(folders)],
                         stdout=subprocess.PIPE, text=True, check=True, env=env).stdout
    got = {}
    for name, secs, busy in (line.split() for line in out.splitlines()):
        got[name] = float(secs)
        if daemon:
            cpu[(fs, name)].append(float(busy))
    return got


def run(fs):
    """One run of the phases on FS; returns ({phase: seconds}, daemon peak RSS MB or None)."""
    if fs == "tmpfs":
        return phases(mounts.fresh(os.path.join(shm, "tmpfs")), fs), None
    daemon = mounts.daemon_for(fs, notesfs_bin, pt_bin, work, shm)
    daemon.mount()
    try:
        times = phases(daemon.mnt, fs, daemon)
        peak = daemon.status_mb("VmHWM")
    finally:
        daemon.unmount()
    return times, peak


names = ["tmpfs", "passthrough_ll", "notesfs"]
times = collections.defaultdict(list)  # (fs, phase) -> seconds per round
ratios = collections.defaultdict(list)  # phase -> notesfs / passthrough_ll per round
peaks = collections.defaultdict(list)
cpu = collections.defaultdict(list)  # (fs, phase) -> CPU seconds of the driver and the daemon per round
order = []
for r in range(rounds):
    got = {}
    for fs in names[r % 3:] + names[:r % 3]:  # a different filesystem goes first each round
        got[fs], peak = run(fs)
        if peak is not None:
            peaks[fs].append(peak)
    for phase, secs in got["notesfs"].items():
        if phase not in order:
            order.append(phase)
        for fs in names:
            times[(fs, phase)].append(got[fs][phase])
        ratios[phase].append(secs / got["passthrough_ll"][phase])
    shutil.rmtree(shm, ignore_errors=True)
    print(f"round {r + 1} of {rounds} done", file=sys.stderr, flush=True)

print(f"\n{notes} notes of 1-4 KB in {folders} folders, {rounds} alternating rounds, medians in seconds")
rows = []
for p in order:
    t, pt, n = (median(times[(fs, p)]) for fs in names)
    target = f"≤ {TARGETS[p]}" if p in TARGETS else ""
    rows.append([LABELS.get(p, p), f"{t:.4f}", f"{pt:.4f}", f"{n:.4f}", f"{median(ratios[p]):.2f}",
                 f"{min(ratios[p]):.2f}-{max(ratios[p]):.2f}", target])
print_table(["phase", "tmpfs", "passthrough_ll", "notesfs", "notesfs / passthrough_ll", "rounds' range", "target"], rows)
print("(notesfs / passthrough_ll is the median of the per-round ratios; the range is their lowest and highest)")
for fs in ["passthrough_ll", "notesfs"]:
    print(f"{fs} daemon peak RSS (VmHWM), median over rounds: {median(peaks[fs]):.1f} MB")


def index_floor():
    """{phase: (operations, CPU µs an operation)} of `store-bench index` on this run's bodies."""
    corpus = os.path.join(shm, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for i in range(notes):
        with open(os.path.join(corpus, str(i)), "wb") as f:
            f.write(body(i))
    out = subprocess.run([store_bench, "index", os.path.join(shm, "index"), corpus], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    shutil.rmtree(shm, ignore_errors=True)
    return {p: (int(n), float(us)) for p, n, us in (line.split() for line in out.splitlines())}


if os.path.exists(store_bench):
    floor = index_floor()
    cores = os.cpu_count()
    print(f"""
The floor of the write phases, µs an operation. Every FUSE daemon is asked what passthrough_ll is asked, so
it waits as long for its round trips, and the machine spends at least passthrough_ll's CPU on them (the
driver's and the daemon's time on a CPU). A daemon that keeps the text index also spends the index's own
work (store-bench index: these bodies and writes on the index code alone, transactions of 100). On
{cores} cores a phase takes at least the larger of passthrough_ll's time and that CPU spread over them.""")
    rows = []
    total = collections.Counter()  # µs over every write phase: a phase's work left to the next counts once
    for p in order:
        if p not in floor or p not in COUNTS:
            continue
        per_op = lambda secs: secs / COUNTS[p] * 1e6
        pt, pt_cpu = per_op(median(times[("passthrough_ll", p)])), per_op(median(cpu[("passthrough_ll", p)]))
        n, n_cpu = per_op(median(times[("notesfs", p)])), per_op(median(cpu[("notesfs", p)]))
        index_us = floor[p][1]
        least = max(pt, (pt_cpu + index_us) / cores)
        rows.append([LABELS.get(p, p), f"{pt:.0f}", f"{1.5 * pt:.0f}", f"{pt_cpu:.0f}", f"{index_us:.0f}", f"{least:.0f}",
                     f"{least / pt:.2f}", f"{n:.0f}", f"{n_cpu:.0f}"])
        for key, us in [("pt", pt), ("pt_cpu", pt_cpu), ("index", index_us), ("notesfs", n)]:
            total[key] += us * COUNTS[p]
    print_table(["phase", "passthrough_ll", "1.5x", "passthrough_ll's CPU", "index CPU", "floor",
                 "floor / passthrough_ll", "notesfs", "notesfs's CPU"], rows)
    if total["pt"] > 0:
        least = max(total["pt"], (total["pt_cpu"] + total["index"]) / cores)
        print(f"""The write phases together (each phase's operations, in order): passthrough_ll {total["pt"] / 1e3:.0f} ms, \
the floor {least / 1e3:.0f} ms ({least / total["pt"]:.2f}x passthrough_ll), notesfs {total["notesfs"] / 1e3:.0f} ms \
({total["notesfs"] / total["pt"]:.2f}x passthrough_ll, {total["notesfs"] / least:.2f}x the floor). Here the index's work a phase \
leaves to the next (the first rename after the appends catches them up) counts once.""")
