#!/usr/bin/env python3
"""Two notesfs builds' searches over one database, side by side (scripts/bench-search-ranking.sh).

Usage: compare_ranking.py OLD_NOTESFS NEW_NOTESFS DB [ROUNDS] [OLD_DB]
(OLD_DB: a copy of DB the old build searches, so builds of two index formats never rebuild each
other's index; default DB.)

Quality: for each of the 100 queries (search_bench.py), the top 20 and top 5 record names of each build
(`search --limit 20`); prints the overlap of the sets (shared names / the old one's count), the mean
and the minimum, the queries whose lists differ (with the mean BM25 score of the new top 20 as a
fraction of the old one's: 1 is as good by BM25's own measure), and whether every query found as
many hits.
With FULL_SETS=1 also compares every hit (`--limit 0`) of each distinct query as sets.
Speed: ROUNDS (3) rounds of the 100 queries, one process each, the two builds taking turns query by
query (which goes first alternates by round), beside /bin/true run the same way: median, p90, p99 of
wall time and of each process's CPU time.
Prints; asserts nothing."""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_bench import queries, summary, timed, timed_cpu  # noqa: E402

old_bin, new_bin, db = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
dbs = {old_bin: sys.argv[5] if len(sys.argv) > 5 else db, new_bin: db}
qs = queries()


def hits(binary, query, limit):
    """(record name, rank) of each hit, best first."""
    out = subprocess.run([binary, "--db", dbs[binary], "--json", "search", "--limit", str(limit), "--", query],
                         capture_output=True, text=True)
    return [(hit["recordName"], hit["rank"]) for hit in json.loads(out.stdout or "[]")]


def names(binary, query, limit):
    return [name for name, _ in hits(binary, query, limit)]


print("== quality: the new ranking's top 20 and top 5 against the old one's, 100 queries")
top20, top5, differing, counts = [], [], [], []
for q in qs:
    old_hits, new_hits = hits(old_bin, q, 20), hits(new_bin, q, 20)
    old, new = [n for n, _ in old_hits], [n for n, _ in new_hits]
    # BM25 (lower is better) of what each shows: the new build's scores are the ones an
    # exhaustive ranking gives those notes, so the two means compare.
    score = (statistics.mean(r for _, r in new_hits) / statistics.mean(r for _, r in old_hits)
             if old_hits and new_hits and statistics.mean(r for _, r in old_hits) != 0 else 1.0)
    if len(old) != len(new):
        counts.append(f"{q}: {len(old)} old, {len(new)} new")
    a = len(set(old) & set(new)) / len(old) if old else 1.0
    b = len(set(old[:5]) & set(new[:5])) / len(old[:5]) if old else 1.0
    top20.append(a)
    top5.append(b)
    if old != new:
        differing.append((q, a, b, len(old), score))
print(f"{'top-20 overlap':<44} mean {statistics.mean(top20):.3f}  min {min(top20):.3f}")
print(f"{'top-5 overlap':<44} mean {statistics.mean(top5):.3f}  min {min(top5):.3f}")
print(f"{'queries with the same list, in the same order':<44} {100 - len(differing)} of 100")
print(f"{'queries whose hit counts differ':<44} {len(counts)}" + "".join(f"\n  {c}" for c in counts))
for q, a, b, n, score in sorted(set(differing), key=lambda d: (d[1], d[0])):
    print(f"  differs: {q!r:<28} top-20 overlap {a:.2f}  top-5 {b:.2f}  ({n} hits)  "
          f"mean BM25 of the top 20: {score:.3f} of the old one's")
if os.environ.get("FULL_SETS") == "1":
    unequal = [q for q in sorted(set(qs)) if set(names(old_bin, q, 0)) != set(names(new_bin, q, 0))]
    print(f"{'every hit (--limit 0), as sets: queries unequal':<44} {len(unequal)} of {len(set(qs))} {unequal}")

print(f"== speed: {rounds} rounds of the 100 queries, one process each, start included, builds taking turns")
for q in qs[:5]:
    timed([old_bin, "--db", dbs[old_bin], "search", q])
    timed([new_bin, "--db", db, "search", q])
true, wall, cpu = [], {"old": [], "new": []}, {"old": [], "new": []}
common = {"old": [], "new": []}
for r in range(rounds):
    for q in qs:
        true.append(timed(["/bin/true"]))
        pair = [("old", old_bin), ("new", new_bin)]
        for label, binary in pair if r % 2 == 0 else reversed(pair):
            ms, cpu_ms = timed_cpu([binary, "--db", dbs[binary], "search", q])
            wall[label].append(ms)
            cpu[label].append(cpu_ms)
            if q in ("kernel", "edi*"):
                common[label].append(ms)
print(f"{'/bin/true':<44} {summary(true)}")
for label in ("old", "new"):
    print(f"{'notesfs search, ' + label + ' ranking':<44} {summary(wall[label])}")
    print(f"{'  its CPU (user + system)':<44} {summary(cpu[label])}")
for label in ("old", "new"):
    print(f"{'  a common word or prefix (kernel, edi*), ' + label:<44} median {statistics.median(common[label]):6.1f} ms")
