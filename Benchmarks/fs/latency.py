#!/usr/bin/env python3
"""Each write's own time on a notesfs mount (scripts/bench.sh latency): NOTES creates, appends to a
third of them, renames of a fifteenth each right after an append to it (the rename alone timed: the
text index has not taken the edit yet), then unlinks, each timed alone, the index settled between
the phases. Per phase:
median, mean, p99 and the slowest write, and the writes over 5 ms with their share of the phase,
split by whether the store checkpointed during them (its journal got shorter).

Usage: latency.py NOTESFS WORK SHM NOTES
"""
import os
import shutil
import sys
import time

import mounts
from corpus import body, folder, note_path
from tables import print_table

notesfs_bin, work, shm = sys.argv[1:4]
notes, folders = int(sys.argv[4]), 20
SLOW = 0.005
SETTLE = 8  # seconds between phases: the text index catches up, a quiet journal is checkpointed

db, mnt = os.path.join(shm, "db"), os.path.join(work, "mnt-latency")
shutil.rmtree(db, ignore_errors=True)
daemon = mounts.notesfs(notesfs_bin, db, mnt, os.path.join(work, "latency.log"))
daemon.mount()
journal = os.path.join(db, "journal.jsonl")
names = {i: note_path(mnt, i, folders) for i in range(notes)}


def create(i):
    fd = os.open(names[i], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, body(i))
    os.close(fd)


def append(i):
    fd = os.open(names[i], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"\nappended line\n")
    os.close(fd)


def rename(i):
    new = os.path.join(os.path.dirname(names[i]), f"renamed {i}.md")
    os.rename(names[i], new)
    names[i] = new


def timed(label, write, numbers, before=None):
    times, checkpointed = [], []
    size = os.stat(journal).st_size
    for i in numbers:
        if before:
            before(i)
        start = time.perf_counter()
        write(i)
        times.append(time.perf_counter() - start)
        now = os.stat(journal).st_size
        checkpointed.append(now < size)
        size = now
    ordered = sorted(times)
    n, total = len(times), sum(times)
    slow = [(t, c) for t, c in zip(times, checkpointed) if t > SLOW]
    in_checkpoints = sum(t for t, c in slow if c)
    return [label, str(n), f"{ordered[n // 2] * 1e6:.0f}", f"{total / n * 1e6:.0f}", f"{ordered[min(n - 1, int(n * 0.99))] * 1e6:.0f}",
            f"{ordered[-1] * 1e3:.1f}", f"{len(slow)} ({sum(1 for _, c in slow if c)})",
            f"{sum(t for t, _ in slow) * 1e3:.0f} ({in_checkpoints * 1e3:.0f}) of {total * 1e3:.0f}"]


try:
    for f in range(folders):
        os.mkdir(folder(mnt, f))
    rows = [timed("create", create, range(notes))]
    time.sleep(SETTLE)
    rows.append(timed("append", append, range(0, notes, 3)))
    time.sleep(SETTLE)
    rows.append(timed("rename after an append", rename, range(1, notes, 15), before=append))
    time.sleep(SETTLE)
    rows.append(timed("unlink", lambda i: os.unlink(names[i]), range(notes)))
finally:
    daemon.unmount()
    shutil.rmtree(db, ignore_errors=True)
print_table(["write", "count", "median µs", "mean µs", "p99 µs", "slowest ms", "over 5 ms (checkpoints)",
             "ms over 5 ms (in checkpoints) of the phase's"], rows)
