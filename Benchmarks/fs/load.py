#!/usr/bin/env python3
"""The three load patterns of the kernel's filesystem tests, side by side on tmpfs, libfuse's
passthrough_ll over tmpfs and notesfs (database on tmpfs), ROUNDS alternating rounds (scripts/bench.sh load):

- append:   6 processes each appending APPENDS integers to one shared file, one small O_APPEND write each
- seekrw:   SEEKS iterations over one 1 MiB file: pread 8 KiB, pwrite 8 KiB at random offsets, and every
            100th iteration ftruncate to a random size (then grown back to 1 MiB)
- fsstress: STRESS random operations (fixed seed) in a tree: create+write, append, read, rename, unlink,
            mkdir, rmdir, hard link, symlink, truncate, chmod, stat, fsync

Usage: load.py NOTESFS PASSTHROUGH_LL WORK SHM ROUNDS APPENDS SEEKS STRESS
Prints the median wall time of each pattern per filesystem and the notesfs/passthrough_ll ratio, and
the daemons' CPU seconds. Asserts nothing.
"""
import os
import random
import shutil
import sys
import time

import mounts
from tables import median, print_table, seconds

notesfs_bin, passthrough_bin, work, shm = (sys.argv[1:5] + [""] * 4)[:4]
rounds, appends, seeks, stress = (int(x) for x in (sys.argv[5:9] + ["0"] * 4)[:4])
WRITERS = 6


def append(root):
    path = os.path.join(root, "shared.log")
    open(path, "w").close()
    children = []
    for w in range(WRITERS):
        pid = os.fork()
        if pid == 0:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            for i in range(appends):
                os.write(fd, b"%d\n" % (w * appends + i))
            os.close(fd)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    with open(path, "rb") as f:
        lines = f.read().count(b"\n")
    if lines != WRITERS * appends:
        raise RuntimeError(f"append: {lines} lines, expected {WRITERS * appends}")


def seekrw(root):
    size, block = 1 << 20, 8192
    rng = random.Random(7)
    fd = os.open(os.path.join(root, "blocks.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    os.ftruncate(fd, size)
    data = bytes(rng.randrange(256) for _ in range(block))
    for i in range(seeks):
        offset = rng.randrange(0, size - block)
        os.pread(fd, block, offset)
        os.pwrite(fd, data, offset)
        if i % 100 == 99:
            os.ftruncate(fd, rng.randrange(0, size))
            os.ftruncate(fd, size)
    os.close(fd)


def fsstress(root):
    rng = random.Random(11)
    base = os.path.join(root, "stress")
    os.mkdir(base)
    dirs, files = [base], []

    def pick(items):
        return items[rng.randrange(len(items))] if items else None

    for n in range(stress):
        op = rng.randrange(13)
        try:
            if op <= 2 or not files:
                path = os.path.join(pick(dirs), f"f{n}")
                with open(path, "wb") as f:
                    f.write(os.urandom(rng.randrange(1, 8192)))
                files.append(path)
            elif op == 3:
                with open(pick(files), "ab") as f:
                    f.write(b"x" * rng.randrange(1, 512))
            elif op == 4:
                with open(pick(files), "rb") as f:
                    f.read()
            elif op == 5:
                old = pick(files)
                new = os.path.join(pick(dirs), f"r{n}")
                os.rename(old, new)
                files[files.index(old)] = new
            elif op == 6:
                victim = pick(files)
                os.unlink(victim)
                files.remove(victim)
            elif op == 7:
                path = os.path.join(pick(dirs), f"d{n}")
                os.mkdir(path)
                dirs.append(path)
            elif op == 8 and len(dirs) > 1:
                path = dirs[rng.randrange(1, len(dirs))]
                os.rmdir(path)  # only when empty; else ENOTEMPTY, counted as done
                dirs.remove(path)
            elif op == 9:
                path = os.path.join(pick(dirs), f"l{n}")
                os.link(pick(files), path)
                files.append(path)
            elif op == 10:
                os.symlink(pick(files), os.path.join(pick(dirs), f"s{n}"))
            elif op == 11:
                path = pick(files)
                os.truncate(path, rng.randrange(0, 4096))
                os.chmod(path, 0o600 | rng.randrange(0o100))
            else:
                path = pick(files)
                os.stat(path)
                fd = os.open(path, os.O_WRONLY)
                os.fsync(fd)
                os.close(fd)
        except (FileNotFoundError, OSError):
            pass  # an operation on a name another one removed, a non-empty rmdir: as fsstress, go on


def main():
    patterns = [("append", append), ("seekrw", seekrw), ("fsstress", fsstress)]
    kinds = ["tmpfs", "passthrough_ll", "notesfs"]
    times = {(k, p): [] for k in kinds for p, _ in patterns}
    cpu = {k: [] for k in kinds}
    for r in range(rounds):
        for kind in kinds:
            data = os.path.join(shm, f"{kind}-{r}")
            mnt = os.path.join(work, f"{kind}-{r}")
            daemon = None
            if kind == "tmpfs":
                os.makedirs(data)
                root = data
            elif kind == "passthrough_ll":
                daemon = mounts.passthrough_ll(passthrough_bin, data, mnt, os.path.join(work, "passthrough.log"))
            else:
                daemon = mounts.notesfs(notesfs_bin, data, mnt, os.path.join(work, "notesfs.log"))
            if daemon:
                daemon.mount()
                root = mnt
            before = daemon.cpu_seconds() if daemon else 0
            for name, fn in patterns:
                start = time.perf_counter()
                fn(root)
                times[(kind, name)].append(time.perf_counter() - start)
            if daemon:
                cpu[kind].append(daemon.cpu_seconds() - before)
                daemon.unmount()
            shutil.rmtree(data, ignore_errors=True)

    rows = []
    for name, _ in patterns:
        t, p, n = (median(times[(k, name)]) for k in kinds)
        rows.append([name, seconds(t), seconds(p), seconds(n), f"{n / p:.2f}x", f"{n / t:.1f}x"])
    rows.append(["daemon CPU (all three)", "", seconds(median(cpu["passthrough_ll"])), seconds(median(cpu["notesfs"])), "", ""])
    print(f"{WRITERS} x {appends} appends; {seeks} seek/read/write iterations; {stress} fsstress operations; {rounds} rounds, medians")
    print_table(["pattern", "tmpfs", "passthrough_ll", "notesfs", "notesfs/passthrough", "notesfs/tmpfs"], rows)


if __name__ == "__main__":
    main()
