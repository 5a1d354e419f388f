#!/usr/bin/env python3
"""The mounts of scripts/bench-scale.sh, and its table: a small and a big database side by side,
each figure beside the target of a store whose cost follows the work and not the size.

Usage: size_targets.py NOTESFS WORK SAVES SMALL_DB BIG_DB COMMANDS SMALL_BUILT BIG_BUILT
  COMMANDS     spawn_times's output for /bin/true and "LABEL @N" rows of both sizes
  *_BUILT      the build figures of each database ("tree S", "import S RSS_MB", "reindex S RSS_MB")
Per database, mounted in WORK/mnt (notesfs DB MNT -f): seconds from exec until the mountpoint's
st_dev changes; `ls -l F0` (1,000 notes) once right after (cold: the daemon has looked nothing up),
then 5 more (median); the daemon's VmRSS after them; then SAVES saves of one note through the mount
(open with O_TRUNC, write 2 KB, close: the daemon commits the note at close), median, p99, max and
mean, whether a checkpoint replaced the snapshot (index.jsonl) meanwhile, and the daemon's peak RSS
(VmHWM) at the end. The note is created before and removed after.
"""
import os
import statistics
import subprocess
import sys
import time

import mounts
from tables import print_table

notesfs_bin, work, saves = sys.argv[1], sys.argv[2], int(sys.argv[3])
small_db, big_db, commands_file = sys.argv[4:7]
built_files = sys.argv[7:9]


def ms_of(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * (len(values) - 1) + 0.5))]


def notes_in(db):
    """The note count a database was built with: its name is db-N."""
    return int(os.path.basename(db).rsplit("-", 1)[1])


def snapshot_stamp(db):
    """The store's snapshot file's identity and time (a checkpoint replaces it), or None without one."""
    try:
        st = os.stat(os.path.join(db, "index.jsonl"))
        return (st.st_ino, st.st_mtime_ns)
    except FileNotFoundError:
        return None


def mount_figures(db):
    mnt = os.path.join(work, "mnt")
    daemon = mounts.notesfs(notesfs_bin, db, mnt, os.path.join(work, "daemon.log"))
    figures = {"mount": daemon.mount()}
    try:
        listing = ["ls", "-l", os.path.join(mnt, "F0")]
        figures["ls cold"] = ms_of(listing)
        figures["ls"] = statistics.median(ms_of(listing) for _ in range(5))
        figures["rss"] = daemon.status_mb("VmRSS")
        snapshot = snapshot_stamp(db)
        path = os.path.join(mnt, "bench-save.md")
        with open(path, "w") as f:
            f.write("a note saved over and over\n")
        times = []
        for i in range(saves):
            text = f"# Save {i}\n\n" + "saved again and again " * 90
            start = time.perf_counter()
            with open(path, "w") as f:
                f.write(text)
            times.append((time.perf_counter() - start) * 1000)
        os.unlink(path)
        figures["save"] = statistics.median(times)
        figures["save p99"] = percentile(times, 0.99)
        figures["save max"] = max(times)
        figures["save mean"] = statistics.mean(times)
        figures["checkpoint"] = "none" if snapshot is None else "yes" if snapshot != snapshot_stamp(db) else "no"
        figures["peak"] = daemon.status_mb("VmHWM")
    finally:
        daemon.unmount()
    return figures


def spawn_rows(path):
    """spawn_times's rows: label -> (median, p90, min) in ms."""
    rows = {}
    for line in open(path):
        parts = line.rsplit(None, 3)
        if len(parts) == 4 and not line.startswith("command"):
            rows[parts[0].strip()] = tuple(float(x) for x in parts[1:])
    return rows


def built(path):
    out = {}
    for line in open(path):
        step, *values = line.split()
        out[step] = [float(v) for v in values]
    return out


small, big = notes_in(small_db), notes_in(big_db)
mounted = {}
for db in (small_db, big_db):
    mounted[db] = mount_figures(db)
    m = mounted[db]
    print(
        f"{notes_in(db):>9} notes: mount {m['mount']:.3f} s, ls -l F0 {m['ls cold']:.1f} ms first, {m['ls']:.1f} ms median,"
        f" VmRSS {m['rss']:.1f} MB; {saves} saves median {m['save']:.2f} ms, p99 {m['save p99']:.2f}, max {m['save max']:.1f}, mean {m['save mean']:.2f}"
        f" (snapshot index.jsonl rewritten meanwhile: {m['checkpoint']});"
        f" VmHWM {m['peak']:.1f} MB",
        flush=True,
    )

commands = spawn_rows(commands_file)
builds = [built(path) for path in built_files]
rows = []


for step, label in [("tree", "build: note_tree.py writes the tree"), ("import", "build: notesfs import"), ("reindex", "build: notesfs reindex")]:
    a, b = builds[0][step], builds[1][step]
    rss = f" ({a[1]:.0f} / {b[1]:.0f} MB peak)" if len(a) > 1 else ""
    rows.append([label + rss, f"{a[0]:.1f} s", f"{b[0]:.1f} s", f"{b[0] / max(a[0], 0.05):.0f}x", "first index build of 1,000,000 ≤ 5 min" if step == "reindex" else ""])
true = commands["/bin/true"]
rows.append(["/bin/true (the floor; the machine's load)", f"{true[0]:.2f} ms", "", "", ""])
for label, what, target in [
    ("ls F0", "notesfs ls F0 (1,000 notes)", "≤ 15 ms, ≤ 1.5x"),
    ("note cat", "notesfs note cat F0/Note 500.md", "≤ 15 ms, ≤ 1.5x"),
    ("query folder", "notesfs query 'folder == F0' --sort -modificationDate", "≤ 15 ms, ≤ 1.5x"),
    ("query CONTAINS[c]", "notesfs query 'text CONTAINS[c] \"zanzibar\"'", "≤ 50 ms at 100,000"),
]:
    a, b = commands[f"{label} @{small}"], commands[f"{label} @{big}"]
    rows.append([what + ", median (p90)", f"{a[0]:.1f} ms ({a[1]:.1f})", f"{b[0]:.1f} ms ({b[1]:.1f})", f"{b[0] / a[0]:.1f}x", target])
m_small, m_big = mounted[small_db], mounted[big_db]
for key, what, unit, target in [
    ("mount", "mount: exec until the mountpoint answers", "{:.3f} s", "≤ 0.3 s"),
    ("ls cold", "ls -l F0 through the mount, first", "{:.1f} ms", "≤ 20 ms"),
    ("ls", "ls -l F0 through the mount, median of 5 more", "{:.1f} ms", "≤ 20 ms"),
    ("rss", "daemon VmRSS after ls -l F0", "{:.1f} MB", "≤ 80 MB"),
    ("save", f"save one note through the mount, median of {saves}", "{:.2f} ms", "the same at both sizes"),
    ("save p99", f"save one note through the mount, p99 of {saves}", "{:.2f} ms", "the same at both sizes"),
    ("peak", "daemon VmHWM after the saves", "{:.1f} MB", ""),
]:
    a, b = m_small[key], m_big[key]
    rows.append([what, unit.format(a), unit.format(b), f"{b / a:.1f}x" if a > 0 else "-", target])
print()
print_table(["", f"{small:,} notes", f"{big:,} notes", "ratio", "target"], rows)
