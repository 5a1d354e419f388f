#!/usr/bin/env python3
"""One round of the filesystem benchmark's phases on one directory (scripts/bench.sh fs).

Usage: phases.py ROOT NOTES FOLDERS   prints "phase seconds cpu-seconds" lines: the wall time, and
the time on a CPU of this process and of the daemon whose pid is in PHASES_DAEMON_PID (every live
thread's /proc schedstat, in ns: a thread that ends during a phase takes its time with it, so this
can only be short). The same driver runs on tmpfs,
passthrough_ll and notesfs, so its own overhead is the same everywhere. Phases, in order:
create (+ write + close), ls -lR, read all, grep -r rare / common, append to 10% of the notes,
rename 5% within their folder and another 5% into the next folder, 200 editor saves (temp file +
fsync + rename over the note), unlink every note, then mkdir and rmdir 200 directories.
"""
import os
import sys
import time

import operations as op
from corpus import body, folder, note_path

MKDIRS, EDITOR_SAVES = 200, 200
DAEMON = int(os.environ.get("PHASES_DAEMON_PID", "0"))


def on_cpu(pid):
    """Seconds the live threads of process PID have run."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def cpu():
    return on_cpu(os.getpid()) + (on_cpu(DAEMON) if DAEMON else 0.0)


def timed(name, fn):
    start_cpu, start = cpu(), time.perf_counter()
    fn()
    secs, busy = time.perf_counter() - start, cpu() - start_cpu
    print(f"{name} {secs:.4f} {busy:.4f}", flush=True)


root, notes, folders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
contents = {i: body(i) for i in range(notes)}
names = {i: note_path(root, i, folders) for i in range(notes)}
for f in range(folders):
    os.mkdir(folder(root, f))
dirs = [os.path.join(root, f"dir {d}") for d in range(MKDIRS)]

timed("create", lambda: op.create(names, contents))
timed("ls-lR", lambda: op.ls_lR(root))
timed("read", lambda: op.read_all(names))
timed("grep-rare", lambda: op.grep_rare(root))
timed("grep-common", lambda: op.grep_common(root))
timed("append", lambda: op.append(names, 10))
timed("rename-same", lambda: op.rename(names, range(5, notes, 20), root, folders, across=False))
timed("rename-across", lambda: op.rename(names, range(15, notes, 20), root, folders, across=True))
timed("editor-save", lambda: op.editor_saves(names, contents, EDITOR_SAVES))
timed("unlink", lambda: op.unlink(names))
timed("mkdir", lambda: [os.mkdir(d) for d in dirs])
timed("rmdir", lambda: [os.rmdir(d) for d in dirs])
for f in range(folders):
    os.rmdir(folder(root, f))
