#!/usr/bin/env python3
"""Do reads scale with cores? (scripts/bench.sh parallel-grep) Four `grep -r` processes over four
different folders at once, against the same four one after another and against two one after
another, on notesfs (database on tmpfs) and on tmpfs for reference.

Usage: parallel_grep.py NOTESFS WORK SHM NOTES FOLDERS ROUNDS
The notes are written once through the mount. Before every notesfs measurement the daemon is
unmounted and mounted again, so no page is cached and every grep reads through the daemon, and
`ls -lR` of the four folders (untimed) makes the mount's first-listing work and the kernel's entries
warm: what is timed is reading. Medians over ROUNDS rounds; the daemon's CPU seconds show how many
cores it kept busy.
"""
import collections
import os
import shutil
import subprocess
import sys
import time

import mounts
import operations as op
from corpus import RARE, body, folder, note_path
from tables import median, print_table

notesfs_bin, work, shm = sys.argv[1:4]
notes, folders, rounds = (int(a) for a in sys.argv[4:7])
CONFIGS = {"two greps, one after another": (2, False), "four greps, one after another": (4, False),
           "four greps at once": (4, True)}


def greps(root, count, parallel):
    """Wall seconds for COUNT `grep -r` over folders 0..COUNT-1, at once or one after another."""
    argv = [["grep", "-r", RARE, folder(root, f)] for f in range(count)]
    start = time.perf_counter()
    if parallel:
        procs = [subprocess.Popen(a, stdout=subprocess.DEVNULL) for a in argv]
        for p in procs:
            p.wait()
    else:
        for a in argv:
            subprocess.run(a, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def populate(root):
    names = {i: note_path(root, i, folders) for i in range(notes)}
    for f in range(folders):
        os.mkdir(folder(root, f))
    op.create(names, {i: body(i) for i in range(notes)})


tmpfs_root = os.path.join(shm, "tmpfs")
shutil.rmtree(tmpfs_root, ignore_errors=True)
os.makedirs(tmpfs_root)
populate(tmpfs_root)
db = os.path.join(shm, "db")
shutil.rmtree(db, ignore_errors=True)
daemon = mounts.notesfs(notesfs_bin, db, os.path.join(work, "pgrep"), os.path.join(work, "pgrep.log"))
daemon.mount()
populate(daemon.mnt)
daemon.unmount()
print("notes written", file=sys.stderr, flush=True)

wall, cpu = collections.defaultdict(list), collections.defaultdict(list)
for r in range(rounds):
    for label, (count, parallel) in CONFIGS.items():
        wall[("tmpfs", label)].append(greps(tmpfs_root, count, parallel))
        daemon.mount()
        subprocess.run(["ls", "-lR"] + [folder(daemon.mnt, f) for f in range(4)], stdout=subprocess.DEVNULL, check=True)
        before = daemon.cpu_seconds()
        wall[("notesfs", label)].append(greps(daemon.mnt, count, parallel))
        cpu[label].append(daemon.cpu_seconds() - before)
        daemon.unmount()
    print(f"round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
shutil.rmtree(tmpfs_root)
shutil.rmtree(db)

per = notes // folders
print(f"\n`grep -r` over folders of {per:,} notes ({notes:,} in all), {os.cpu_count()} cores, "
      f"medians of {rounds} rounds; notesfs from a fresh mount each time (no page cached, folders listed)")
rows = [[label, f"{median(wall[('tmpfs', label)]):.3f} s", f"{median(wall[('notesfs', label)]):.3f} s",
         f"{median(cpu[label]):.2f} s"] for label in CONFIGS]
print_table(["", "tmpfs", "notesfs", "notesfs daemon CPU"], rows)
m = {label: median(wall[("notesfs", label)]) for label in CONFIGS}
print(f"notesfs: four at once / two one after another = {m['four greps at once'] / m['two greps, one after another']:.2f}"
      f" (target: about 1.0), four at once / four one after another = "
      f"{m['four greps at once'] / m['four greps, one after another']:.2f} (1.0: no gain from a second core)")
