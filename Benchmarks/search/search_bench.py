"""What the search benchmarks share (scripts/bench-search.sh, scripts/bench-search-ranking.sh): their
100 queries, for a database `store-bench generate` made (twelve words in every note, every note's
number, "Zanzibar" in one note of 997): common and rare words, AND, phrases, prefixes, 30 of them
matching every note; and the timing of one process run."""
import resource
import statistics
import subprocess
import time

WORDS = ["alpha", "note", "linux", "swift", "record", "folder", "journal", "kernel", "markdown", "editor", "rsync", "grep"]
# Benchmarks/note_tree.py's words (the scale benchmark's databases): each is in nearly every note.
TREE_WORDS = ["alpha", "beta", "gamma", "delta", "notes", "plan", "idea", "todo", "meeting", "draft", "swift", "fuse"]
KINDS = ["common word", "number", "zanzibar AND word", "phrase", "prefix"]


def queries(words=WORDS):
    """The 100 queries; query i is of kind KINDS[i % 5]."""
    out = []
    for i in range(100):
        kind = i % 5
        if kind == 0:
            out.append(words[i % len(words)])  # common word
        elif kind == 1:
            out.append(str(997 * (i + 1)))  # rare: a note's number
        elif kind == 2:
            out.append(f"zanzibar {words[i % len(words)]}")  # two words, AND
        elif kind == 3:
            out.append(f'"note {997 * i + 1}"')  # phrase
        else:
            out.append(words[i % len(words)][:3] + "*" if i % 2 else "zanz*")  # prefix
    return out


def timed(argv):
    """Milliseconds `argv` takes to run, start included, its output discarded."""
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def timed_cpu(argv):
    """(wall, CPU) milliseconds `argv` takes, start included: CPU (user + system) is less moved by
    other work on a shared machine than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(argv)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def summary(ms):
    ms = sorted(ms)
    return (f"median {statistics.median(ms):6.1f} ms  p90 {ms[int(len(ms) * 0.9)]:6.1f}  "
            f"p99 {ms[min(len(ms) - 1, int(len(ms) * 0.99))]:6.1f}")
