#!/usr/bin/env python3
"""System calls a write costs each daemon (scripts/bench.sh syscalls): passthrough_ll -o
xattr,default_permissions over tmpfs and notesfs with its database on tmpfs, under `strace -f`
while one kind of operation runs COUNT times. Per operation: the daemon's calls outside the FUSE
transport (its reads of /dev/fuse and its replies), by thread kind (request threads, background
threads), and the request threads' most frequent calls. Counts, not times: strace slows every call.

Usage: syscalls.py NOTESFS PASSTHROUGH_LL WORK SHM COUNT
"""
import collections
import os
import re
import signal
import subprocess
import sys
import time

import mounts
import operations
from corpus import body, folder, note_path
from tables import print_table

notesfs_bin, pt_bin, work, shm = sys.argv[1:5]
count = int(sys.argv[5])
folders = 2
BACKGROUND = {"notesfs-index", "notesfs.store", "notesfs.invalid", "notesfs.prune"}
LINE = re.compile(r"^(\d+)\s+(\w+)\(")


def fuse_descriptors(pid):
    fds = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/fuse":
                fds.add(fd)
        except OSError:
            pass
    return fds


def traced(pid, action):
    """Runs ACTION under strace -f -p PID; returns {(thread kind, call): count}."""
    out = os.path.join(work, "strace.out")
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", out, "-p", str(pid)], stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # attached to every thread
    names = {t: open(f"/proc/{pid}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{pid}/task")}
    action()
    time.sleep(1.0)  # the background threads' work after the last request (the indexer waits 200 ms)
    tracer.send_signal(signal.SIGINT)
    tracer.wait()
    fuse = fuse_descriptors(pid)
    counts = collections.Counter()
    with open(out, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m or " resumed>" in line:  # signals, exits; a call's second half (counted at its start)
                continue
            tid, call = m.groups()
            args = line[m.end():]
            if call in ("read", "writev", "write") and args.split(",")[0].strip() in fuse:
                call = "(fuse reply)" if call != "read" else "(fuse transport)"
            kind = "background" if names.get(tid, "") in BACKGROUND else "request"
            counts[(kind, call)] += 1
    os.remove(out)
    return counts


def run(fs):
    daemon = mounts.daemon_for(fs, notesfs_bin, pt_bin, work, shm)
    daemon.mount()
    mnt = daemon.mnt
    results = {}
    try:
        for f in range(folders):
            os.makedirs(folder(mnt, f), exist_ok=True)
        names = {i: note_path(mnt, i, folders) for i in range(count)}
        contents = {i: body(i) for i in range(count)}
        results["create"] = traced(daemon.pid, lambda: operations.create(names, contents))
        time.sleep(1)
        results["append"] = traced(daemon.pid, lambda: operations.append(names, 1))
        results["rename"] = traced(daemon.pid, lambda: operations.rename(names, range(count), mnt, folders, across=False))
        results["editor save"] = traced(daemon.pid, lambda: operations.editor_saves(names, contents, count))
        results["unlink"] = traced(daemon.pid, lambda: operations.unlink(names))
    finally:
        daemon.unmount()
    return results


def per_op(counts, kind, call=None):
    """Calls a write of KIND's threads outside the transport (or only CALL's)."""
    return sum(n for (k, c), n in counts.items() if k == kind and (c == call if call else not c.startswith("(fuse"))) / count


pt, nf = run("passthrough_ll"), run("notesfs")
rows = []
for op in pt:
    calls = collections.Counter({c: n for (k, c), n in nf[op].items() if k == "request" and not c.startswith("(fuse")})
    top = ", ".join(f"{c} {n / count:.1f}" for c, n in calls.most_common(6))
    replies = f"{per_op(pt[op], 'request', '(fuse reply)'):.1f} / {per_op(nf[op], 'request', '(fuse reply)'):.1f}"
    rows.append([op, replies, f"{per_op(pt[op], 'request'):.1f}", f"{per_op(nf[op], 'request'):.1f}", f"{per_op(nf[op], 'background'):.1f}", top])
print_table(["operation", "replies: passthrough_ll / notesfs", "passthrough_ll", "notesfs requests", "notesfs background",
             "notesfs requests' calls a write"], rows)
print(f"(system calls a write, {count} writes each, outside the FUSE transport (its reads of /dev/fuse and replies);"
      " replies: the requests answered a write)")
