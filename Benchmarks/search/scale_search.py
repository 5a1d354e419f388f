"""The search phase of scripts/bench-scale.sh: the 100 queries of scripts/bench.sh search, with the
words of Benchmarks/note_tree.py (so the common words are in nearly every note), one process each,
over two databases, the sizes taking turns query by query. Prints median / p90 / p99 per size and the
median of each kind of query.

Usage: scale_search.py NOTESFS SMALL_DB SMALL_SIZE BIG_DB BIG_SIZE"""
import statistics
import sys

from search_bench import KINDS, TREE_WORDS, queries, summary, timed

bin, small_db, small, big_db, big = sys.argv[1:6]
qs = queries(TREE_WORDS)
for q in qs[:5]:  # the first search of a cold database reads its index from disk
    for db in (small_db, big_db):
        timed([bin, "--db", db, "search", q])
times = {small_db: [], big_db: []}
for q in qs:
    for db in (small_db, big_db):
        times[db].append(timed([bin, "--db", db, "search", q]))
for db, size in ((small_db, small), (big_db, big)):
    print(f"{'notesfs search, 100 queries @' + size:<44} {summary(times[db])}")
for k, kind in enumerate(KINDS):
    cells = "  ".join(f"@{size} {statistics.median(times[db][k::5]):6.1f} ms" for db, size in ((small_db, small), (big_db, big)))
    print(f"  {kind + ' (20)':<42} {cells}")
