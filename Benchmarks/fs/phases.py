#!/usr/bin/env python3
"""One round of the filesystem benchmark phases on one directory (scripts/bench.sh fs).

Usage: phases.py ROOT NOTES FOLDERS   prints "phase seconds" lines. The same driver runs on tmpfs,
passthrough_ll and notesfs, so its own overhead is the same everywhere.
"""
import os
import random
import subprocess
import sys
import time

root, notes, folders = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = "alpha note linux swift record folder journal kernel markdown editor rsync grep the".split()


def body(i):
    rng = random.Random(i)
    target = 1024 + rng.randrange(3072)
    parts, size = [f"# Note {i}\n\n"], 0
    while size < target:
        w = rng.choice(words) + ("\n" if rng.randrange(9) == 0 else " ")
        parts.append(w)
        size += len(w)
    if i % 997 == 0:
        parts.append(" Zanzibar")
    return "".join(parts).encode()


def path(i, folder=None):
    return os.path.join(root, f"folder{(i if folder is None else folder) % folders}", f"note {i}.md")


def timed(name, fn):
    start = time.perf_counter()
    fn()
    print(f"{name} {time.perf_counter() - start:.4f}", flush=True)


def run(cmd):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)


contents = [body(i) for i in range(notes)]
names = {i: path(i) for i in range(notes)}


def mkdirs():
    for f in range(folders):
        os.mkdir(os.path.join(root, f"folder{f}"))


def create():
    for i in range(notes):
        fd = os.open(names[i], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, contents[i])
        os.close(fd)


def read_all():
    for i in range(notes):
        with open(names[i], "rb") as f:
            f.read()


def append():
    for i in range(0, notes, 10):
        fd = os.open(names[i], os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"\nappended line\n")
        os.close(fd)


def rename():
    for n, i in enumerate(range(5, notes, 10)):
        new_folder = (i % folders) if n % 2 == 0 else (i + 1) % folders
        new = os.path.join(root, f"folder{new_folder}", f"renamed {i}.md")
        os.rename(names[i], new)
        names[i] = new


def editor_saves():
    for i in range(0, 200 * 7, 7):
        target = names[i % notes]
        tmp = target + ".tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, contents[i % notes] + b"\nsaved by an editor\n")
        os.fsync(fd)
        os.close(fd)
        os.rename(tmp, target)


def unlink_all():
    for i in range(notes):
        os.unlink(names[i])
    for f in range(folders):
        os.rmdir(os.path.join(root, f"folder{f}"))


timed("mkdir", mkdirs)
timed("create", create)
timed("ls-lR", lambda: run(["ls", "-lR", root]))
timed("read", read_all)
timed("grep-rare", lambda: run(["grep", "-r", "Zanzibar", root]))
timed("grep-common", lambda: run(["grep", "-rc", "the", root]))
timed("append", append)
timed("rename", rename)
timed("editor-save", editor_saves)
timed("unlink", unlink_all)
