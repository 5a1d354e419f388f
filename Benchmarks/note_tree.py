#!/usr/bin/env python3
"""A markdown tree for the import, sync and scale benchmarks (scripts/bench-cli.sh,
scripts/bench-sync.sh, scripts/bench-scale.sh).

Usage: note_tree.py ROOT COUNT              COUNT notes of 1-4 KB in 200 nested folders under ROOT
       note_tree.py ROOT COUNT PER_FOLDER   COUNT notes of 1-4 KB in flat folders F0, F1, ... of
                                            PER_FOLDER notes each (F0 holds Note 0 to Note
                                            PER_FOLDER-1); every 997th note (Note 0, Note 997, ...)
                                            also holds the word "zanzibar", which no other note has
Both are seeded: the same tree every time.
"""
import os
import random
import sys

root, count = sys.argv[1], int(sys.argv[2])
per_folder = int(sys.argv[3]) if len(sys.argv) > 3 else None
random.seed(42)
words = "alpha beta gamma delta notes plan idea todo meeting draft swift fuse record folder".split()


def nested():
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


def flat():
    # Words drawn a note at a time (random.choices): a million notes take minutes, not tens of them.
    os.makedirs(root)
    for i in range(count):
        if i % per_folder == 0:
            folder = os.path.join(root, f"F{i // per_folder}")
            os.mkdir(folder)
        size = random.randint(1024, 4096)
        lines = [f"# Note {i}\n"]
        drawn = random.choices(words, k=size // 6 + 12)
        lines += (" ".join(drawn[j : j + 12]) for j in range(0, len(drawn), 12))
        text = "\n".join(lines)[: size - 9] + ("\nzanzibar" if i % 997 == 0 else "")
        with open(os.path.join(folder, f"Note {i}.md"), "w") as f:
            f.write(text)


nested() if per_folder is None else flat()
