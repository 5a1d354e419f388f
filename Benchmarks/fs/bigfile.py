#!/usr/bin/env python3
"""One big file written or read in 1 MiB chunks (scripts/bench.sh bigfile).

Usage: bigfile.py write PATH MIB   writes MIB MiB of pseudo-random bytes, fsync, close
       bigfile.py read PATH        reads the whole file
Prints "write|read SECONDS BYTES CRC32": the time covers open to close (for a write, the fsync and
the close, where notesfs saves), the CRC lets the caller check that the bytes read back are the
bytes written.
"""
import os
import random
import sys
import time
import zlib

CHUNK = 1 << 20


def write(path, mib):
    # 16 distinct random MiB, cycled: no two neighbouring chunks alike, no time spent generating.
    rng = random.Random(7)
    blocks = [rng.randbytes(CHUNK) for _ in range(16)]
    crc = 0
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for i in range(mib):
        block = blocks[i % len(blocks)]
        view = memoryview(block)
        while view:
            view = view[os.write(fd, view):]
        crc = zlib.crc32(block, crc)
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - start, mib * CHUNK, crc


def read(path):
    crc, total = 0, 0
    start = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    while True:
        block = os.read(fd, CHUNK)
        if not block:
            break
        crc = zlib.crc32(block, crc)
        total += len(block)
    os.close(fd)
    return time.perf_counter() - start, total, crc


if __name__ == "__main__":
    what = sys.argv[1]
    secs, size, crc = write(sys.argv[2], int(sys.argv[3])) if what == "write" else read(sys.argv[2])
    print(f"{what} {secs:.4f} {size} {crc:08x}", flush=True)
