#!/usr/bin/env python3
"""A markdown tree for the import and sync benchmarks (scripts/bench-cli.sh, scripts/bench-sync.sh).

Usage: note_tree.py ROOT COUNT   COUNT notes of 1-4 KB in 200 nested folders under ROOT (seeded:
the same tree every time).
"""
import os
import random
import sys

root, count = sys.argv[1], int(sys.argv[2])
random.seed(42)
words = "alpha beta gamma delta notes plan idea todo meeting draft swift fuse record folder".split()
dirs = [root]
os.makedirs(root)
for i in range(200):
    path = os.path.join(random.choice(dirs), f"{random.choice(words).title()} {i}")
    os.mkdir(path)
    dirs.append(path)
for i in range(count):
    size = random.randint(1024, 4096)
    text = f"# Note {i}\n\n"
    while len(text) < size:
        text += " ".join(random.choice(words) for _ in range(12)) + "\n"
    with open(os.path.join(random.choice(dirs), f"Note {i}.md"), "w") as f:
        f.write(text[:size])
