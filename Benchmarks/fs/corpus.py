"""The notes every filesystem benchmark writes: names, bodies, and the clock that times a phase.

A note is 1-4 KB of words in lines; every 997th note holds the rare word "Zanzibar", nearly every
note the common word "the". Bodies are cut from 64 fixed paragraphs, chosen per note by a seeded
generator, so that 100,000 of them are made in about a second and are the same in every run.
"""
import os
import random
import time

RARE, COMMON = "Zanzibar", "the"
WORDS = "alpha note linux swift record folder journal kernel markdown editor rsync grep the".split()


def _paragraphs():
    rng = random.Random(0)
    out = []
    for _ in range(64):
        line = [rng.choice(WORDS) + ("\n" if rng.randrange(9) == 0 else " ") for _ in range(48)]
        out.append("".join(line))
    return out


PARAGRAPHS = _paragraphs()


def body(i):
    """Note i's bytes: 1,024-4,095 bytes of text (plus " Zanzibar" for every 997th note)."""
    rng = random.Random(i)
    target = 1024 + rng.randrange(3072)
    parts, size = [f"# Note {i}\n\n"], 0
    while size < target:
        p = PARAGRAPHS[rng.randrange(len(PARAGRAPHS))]
        parts.append(p)
        size += len(p)
    text = "".join(parts)[:target]
    if i % 997 == 0:
        text += " " + RARE
    return text.encode()


def folder(root, f):
    return os.path.join(root, f"folder{f}")


def note_path(root, i, folders):
    """Where note i lives at first: folder i % FOLDERS, named "note i.md"."""
    return os.path.join(folder(root, i % folders), f"note {i}.md")


def timed(name, fn, out=None):
    """Runs fn, prints "NAME SECONDS" (or appends (name, seconds) to out), returns the seconds."""
    start = time.perf_counter()
    fn()
    secs = time.perf_counter() - start
    if out is None:
        print(f"{name} {secs:.4f}", flush=True)
    else:
        out.append((name, secs))
    return secs
