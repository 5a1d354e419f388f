#!/usr/bin/env python3
"""Reading every note of a fresh mount, default and `-o noatime` (scripts/bench.sh cold-reads).

Usage: cold_reads.py NOTESFS WORK SHM NOTES FOLDERS ROUNDS
The notes are written once through a mount. Each round mounts the database once as it is and once
with `-o noatime` (alternating), lists it (`ls -lR`, untimed: the kernel knows every entry and its
attributes), then reads every note twice in a row with each of two loops: system calls only
(`os.open`, `os.read`, `os.close`) and Python's `open(path, "rb").read()`, which also `fstat`s
the file and asks for its terminal attributes (`TCGETS`). The first pass is cold (no page cached);
the second finds the pages the first left. With noatime a note's first open fills its pages (no
`read` round trip); without it the kernel marks a file's atime stale after each `read`, so the
next `fstat` of it is a `getattr` round trip. Medians over ROUNDS rounds.
"""
import os
import shutil
import sys

import mounts
import operations as op
from corpus import body, folder, note_path, timed
from tables import median, print_table

notesfs_bin, work, shm = sys.argv[1:4]
notes, folders, rounds = (int(a) for a in sys.argv[4:7])


def read_with_syscalls(paths):
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        while os.read(fd, 1 << 16):
            pass
        os.close(fd)


def read_with_open(paths):
    for path in paths:
        with open(path, "rb") as f:
            f.read()


LOOPS = {"os.open + os.read + os.close": read_with_syscalls, 'open(path, "rb").read()': read_with_open}
MODES = {"default mount": [], "-o noatime": ["-o", "noatime"]}

db = os.path.join(shm, "db")
shutil.rmtree(db, ignore_errors=True)
mnt = os.path.join(work, "cold")
log = os.path.join(work, "cold.log")
writer = mounts.notesfs(notesfs_bin, db, mnt, log)
writer.mount()
for f in range(folders):
    os.mkdir(folder(mnt, f))
op.create({i: note_path(mnt, i, folders) for i in range(notes)}, {i: body(i) for i in range(notes)})
writer.unmount()
paths = [note_path(mnt, i, folders) for i in range(notes)]

times = {(mode, loop, p): [] for mode in MODES for loop in LOOPS for p in ("first", "second")}
for r in range(rounds):
    for mode, extra in MODES.items():
        for loop, read in LOOPS.items():
            daemon = mounts.notesfs(notesfs_bin, db, mnt, log)
            daemon.argv += extra
            daemon.mount()
            op.ls_lR(mnt)
            times[(mode, loop, "first")].append(timed("first", lambda: read(paths), []))
            times[(mode, loop, "second")].append(timed("second", lambda: read(paths), []))
            daemon.unmount()
    print(f"round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
shutil.rmtree(db)

print(f"\n{notes:,} notes of 1-4 KB in {folders} folders, read after a fresh mount and `ls -lR`; "
      f"medians of {rounds} rounds (min-max)")
rows = []
for loop in LOOPS:
    for p in ("first", "second"):
        cells = []
        for mode in MODES:
            t = times[(mode, loop, p)]
            cells.append(f"{median(t):.3f} s ({min(t):.3f}-{max(t):.3f})")
        rows.append([f"{loop}, {p} pass", *cells])
print_table(["read loop", *MODES], rows)
