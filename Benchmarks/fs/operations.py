"""The file operations the benchmark phases time, the same on every filesystem (plain system calls).

`names` maps a note's number to its current path; renames update it.
"""
import os
import subprocess

from corpus import COMMON, RARE, folder


def create(names, contents):
    """open(O_CREAT|O_TRUNC) + one write + close for every note."""
    for i, path in names.items():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, contents[i])
        os.close(fd)


def read_all(names):
    for path in names.values():
        with open(path, "rb") as f:
            f.read()


def append(names, every):
    """Appends a line to every EVERY-th note (open O_APPEND, write, close)."""
    for i in list(names)[::every]:
        fd = os.open(names[i], os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"\nappended line\n")
        os.close(fd)


def rename(names, numbers, root, folders, across):
    """Renames each note in NUMBERS to "renamed N.md", in its own folder or in the next one."""
    for i in numbers:
        old = names[i]
        f = int(os.path.basename(os.path.dirname(old))[len("folder"):])
        new = os.path.join(folder(root, (f + 1) % folders if across else f), f"renamed {i}.md")
        os.rename(old, new)
        names[i] = new


def editor_saves(names, contents, count):
    """COUNT editor-style saves: write a temp file beside the note, fsync it, rename it over the note."""
    numbers = list(names)
    for n in range(count):
        i = numbers[(n * 7) % len(numbers)]
        target = names[i]
        tmp = target + ".tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, contents[i] + b"\nsaved by an editor\n")
        os.fsync(fd)
        os.close(fd)
        os.rename(tmp, target)


def unlink(names):
    for path in names.values():
        os.unlink(path)


def ls_lR(root):
    subprocess.run(["ls", "-lR", root], stdout=subprocess.DEVNULL, check=True)


def grep_rare(root):
    """grep -r for a word in one note of 997: reads every byte, prints little."""
    subprocess.run(["grep", "-r", RARE, root], stdout=subprocess.DEVNULL, check=False)


def grep_common(root):
    """grep -rc for a word in nearly every note: reads every byte, counts matching lines."""
    subprocess.run(["grep", "-rc", COMMON, root], stdout=subprocess.DEVNULL, check=False)
