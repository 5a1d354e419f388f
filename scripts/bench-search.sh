#!/usr/bin/env bash
# scripts/bench.sh search [NOTES]: the full-text index at NOTES notes of 1-4 KB (default 100,000),
# beside `grep -rl` over the same notes exported to tmpfs, in one run. Prints; asserts nothing.
#   build: `notesfs reindex` wall time and the index's size against the notes' text
#   search: 100 queries (common and rare words, AND, phrases, prefixes), one process each,
#           median / p90 / p99 wall time, process start included, beside /bin/true run the same way
#   mount: `ls .search/QUERY` for 20 of them; query 'text CONTAINS[c] "word"' with and without the index
set -euo pipefail
cd "$(dirname "$0")/.."
notes=${1:-100000}
. scripts/bench-mount-common.sh
bench_mount_setup search
scripts/release-build.sh "$scratch" store-bench >/dev/null
echo "== full-text search: $notes notes of 1-4 KB in 100 folders ($db), $(nproc) cores, $(uname -r)"
"$scratch/release/store-bench" generate "$db" "$notes" 100 >/dev/null
mkdir -p "$shm"
"$bin" --db "$db" export "$shm/tree" >/dev/null
text_bytes=$(du -sb --apparent-size "$shm/tree" | cut -f1)
sync
start=$(date +%s.%N)
"$bin" --db "$db" reindex -q
end=$(date +%s.%N)
index_bytes=$(du -sb --apparent-size "$db/indexes" | cut -f1)
printf "%-44s %10.2f s\n" "build the index (notesfs reindex)" "$(echo "$end - $start" | bc)"
printf "%-44s %10.1f MB  (notes' text %.1f MB: %.2fx)\n" "index size" "$(echo "$index_bytes / 1000000" | bc -l)" \
    "$(echo "$text_bytes / 1000000" | bc -l)" "$(echo "$index_bytes / $text_bytes" | bc -l)"
python3 - "$bin" "$db" "$shm/tree" <<'PY'
import sys, statistics
sys.path.insert(0, "Benchmarks/search")
from search_bench import queries as make_queries, summary, timed  # common and rare words, AND, phrases, prefixes
bin, db, tree = sys.argv[1:4]
queries = make_queries()
for q in queries[:5]: timed([bin, "--db", db, "search", q])  # warm the page cache
true = [timed(["/bin/true"]) for _ in queries]
search = [timed([bin, "--db", db, "search", q]) for q in queries]
version = [timed([bin, "--version"]) for _ in queries]
grep = [timed(["grep", "-rl", w, tree]) for w in ["zanzibar", "kernel", "Note 4242"]]
print(f"{'/bin/true (100 runs)':<44} {summary(true)}")
print(f"{'notesfs --version (100 runs)':<44} {summary(version)}")
print(f"{'notesfs search, 100 queries':<44} {summary(search)}")
print(f"{'grep -rl over the notes on tmpfs (3 words)':<44} {summary(grep)}")
for label, q in [("common word", "kernel"), ("rare word", "zanzibar"), ("phrase", '"note 4242"'), ("prefix", "zanz*")]:
    print(f"  search {label:<36} {statistics.median([timed([bin, '--db', db, 'search', q]) for _ in range(5)]):6.1f} ms")
PY
query_ms() { local s e; s=$(date +%s%N); "$bin" --db "$db" query 'text CONTAINS[c] "zanzibar"' >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
printf "%-44s %6s ms (index) / " "query 'text CONTAINS[c] \"zanzibar\"'" "$(query_ms)"
# Only the full-text index is set aside: the metadata index (indexes/records.sqlite) stays, or the
# query would time its rebuild, and moving the directory back would nest it in the rebuilt one.
mkdir -p "$work/text.aside"
mv "$db"/indexes/text.sqlite* "$work/text.aside/"
printf "%s ms (no index: every record file read)\n" "$(query_ms)"
rm -f "$db"/indexes/text.sqlite*
mv "$work/text.aside"/* "$db/indexes/"
mkdir -p "$mnt"
"$bin" "$db" "$mnt"
bench_wait_mounted
python3 - "$mnt" <<'PY'
import os, sys, time, statistics
mnt = sys.argv[1]
ms = []
for i, q in enumerate(["zanzibar", "kernel", "zanz*", '"note 4242"', "zanzibar grep"] * 4):
    t = time.perf_counter()
    os.listdir(os.path.join(mnt, ".search", q + ("" if i < 5 else " " * (i // 5))))
    ms.append((time.perf_counter() - t) * 1000)
print(f"{'ls .search/QUERY through the mount (20)':<44} median {statistics.median(ms):6.1f} ms  max {max(ms):6.1f}")
PY
fusermount3 -u "$mnt"
