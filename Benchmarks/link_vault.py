#!/usr/bin/env python3
"""A linked markdown vault for scripts/bench-links.sh.

Usage: link_vault.py ROOT COUNT   COUNT notes (`Note N.md`, 300-1,500 bytes) in folders of 1,000
(`F0`, `F1`, ...), each with front matter (status, priority, due), two tags (#tN, #proj/aN) and
5 wiki links on average to random notes; plus `Hub.md` (1,000 backlinks, from notes 0-999),
`Ten.md` (10 backlinks) and `Lonely.md` (none) in F0. Seeded: the same vault every time.
"""
import os
import random
import sys

root, count = sys.argv[1], int(sys.argv[2])
random.seed(7)
words = "alpha beta gamma delta notes plan idea todo meeting draft swift fuse record folder".split()
folders = max(1, (count + 999) // 1000)
for f in range(folders):
    os.makedirs(os.path.join(root, f"F{f}"), exist_ok=True)
for name in ["Hub", "Ten", "Lonely"]:
    with open(os.path.join(root, "F0", f"{name}.md"), "w") as out:
        out.write(f"# {name}\n")
for i in range(count):
    links = [f"[[Note {random.randrange(count)}]]" for _ in range(random.randint(3, 7))]
    if i < 1000:
        links.append("[[Hub]]")
    if i < 10:
        links.append("[[Ten]]")
    text = (
        f"---\nstatus: {random.choice(['active', 'done', 'waiting'])}\npriority: {random.randint(1, 5)}\n"
        f"due: 2026-{random.randint(1, 12):02d}-{random.randint(1, 28):02d}\n---\n"
        f"# Note {i}\n#t{i % 50} #proj/a{i % 5}\n"
    )
    for link in links:
        text += " ".join(random.choice(words) for _ in range(random.randint(4, 20))) + f" {link}\n"
    with open(os.path.join(root, f"F{i // 1000}", f"Note {i}.md"), "w") as out:
        out.write(text)
