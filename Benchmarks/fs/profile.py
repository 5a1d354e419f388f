#!/usr/bin/env python3
"""Where one kind of request spends the daemon's time (scripts/profile.sh).

Usage: profile.py OP NOTESFS WORK SHM NOTES FOLDERS   OP: create | rename | read | append | unlink | editor | version
(editor: every note saved once as an editor saves it: a temp file beside it, fsync, rename over it;
version: an append to every note, where the first half were appended to a moment before, untimed, so
their saves are coalesced (no version), and the second half's each keep a version: note history's
cost, the daemon's CPU per save of each half printed side by side)
Mounts notesfs (database on tmpfs), prepares NOTES notes in FOLDERS folders (none for create; for
read the daemon is mounted afresh so nothing is cached), then runs OP over every note while
`perf record -e cpu-clock -c 250000 -g -p DAEMON` samples the daemon (a sample per 250 µs of CPU,
every thread; this machine's VM has no hardware counters). Prints the wall time, the daemon's CPU
seconds per operation (from /proc and from the samples), and the top Swift frames by inclusive
share (demangled by `swift demangle --simplified`), then the top frames by self time (any code).
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import mounts
import operations as op
from corpus import body, folder, note_path
from tables import print_table

PERIOD_NS = 250_000
what, notesfs_bin, work, shm = sys.argv[1:5]
notes, folders = int(sys.argv[5]), int(sys.argv[6])
db, mnt = os.path.join(shm, "db"), os.path.join(work, "profile")
shutil.rmtree(db, ignore_errors=True)
daemon = mounts.notesfs(notesfs_bin, db, mnt, os.path.join(work, "profile.log"))
daemon.mount()
names = {i: note_path(mnt, i, folders) for i in range(notes)}
contents = {i: body(i) for i in range(notes)}
for f in range(folders):
    os.mkdir(folder(mnt, f))
if what != "create":
    op.create(names, contents)
if what == "read":
    daemon.unmount()
    daemon.mount()
half = list(range(notes // 2))
if what == "version":
    op.append({i: names[i] for i in half}, 1)  # a version each now; the timed appends coalesce
halves = {}


def versions_half(label, numbers):
    before = daemon.cpu_seconds()
    op.append({i: names[i] for i in numbers}, 1)
    halves[label] = (daemon.cpu_seconds() - before) / len(numbers)


operations = {
    "create": lambda: op.create(names, contents),
    "rename": lambda: (op.rename(names, range(0, notes, 2), mnt, folders, across=False),
                       op.rename(names, range(1, notes, 2), mnt, folders, across=True)),
    "read": lambda: op.read_all(names),
    "append": lambda: op.append(names, 1),
    "unlink": lambda: op.unlink(names),
    "editor": lambda: op.editor_saves(names, contents, notes),
    "version": lambda: (versions_half("no version (coalesced)", half),
                        versions_half("keeps a version", range(notes // 2, notes))),
}
data = os.path.join(work, f"perf-{what}.data")
# PERF_CALL_GRAPH=dwarf: stacks unwound from DWARF, through libraries built without frame pointers
# (SQLite, whose frames are otherwise [unknown]); larger data, slower report. perf copies 8 KiB of
# each thread's stack by default, too little for a request's Swift frames: most request samples then
# lost the FileSystem method (the table by request gave an unlink 68 µs; 273 µs with 64 KiB; the
# request thread's CPU clock, read around each request in a build made to measure, 171-200 µs). So
# the copy is the most perf allows (64 KiB) unless a size is given (PERF_CALL_GRAPH=dwarf,SIZE).
graph = os.environ.get("PERF_CALL_GRAPH")
if graph == "dwarf":
    graph = "dwarf,65528"
call_graph = ["--call-graph", graph] if graph else ["-g"]
perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-c", str(PERIOD_NS), *call_graph,
                         "-p", str(daemon.pid), "-o", data], stdout=subprocess.DEVNULL)
time.sleep(1.0)  # perf attaches to every thread before the operation starts
cpu_before = daemon.cpu_seconds()
start = time.perf_counter()
operations[what]()
wall = time.perf_counter() - start
cpu = daemon.cpu_seconds() - cpu_before
time.sleep(0.2)  # the daemon's replies and background thread settle before perf stops
perf.send_signal(signal.SIGINT)
perf.wait()
if what != "unlink":
    op.unlink(names)
daemon.unmount()
shutil.rmtree(db)


def report(*options):
    """perf report rows (children %, self %, [k] or [.], symbol), symbols still mangled; without
    --children both shares are the self share."""
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-demangle", "-g", "none",
                          "--sort", "symbol", "--percent-limit", "0.5", *options],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        shares = [float(p[:-1]) for p in parts[:2] if p.endswith("%")]
        if line.startswith("#") or not shares or len(parts) < len(shares) + 2:
            continue
        while parts[-1] == "-":  # the IPC columns perf prints without hardware counters
            parts.pop()
        kind, symbol = parts[len(shares)], " ".join(parts[len(shares) + 1:])
        rows.append((shares[0], shares[-1], kind, symbol))
    return rows


def demangled(symbols):
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols), stdout=subprocess.PIPE,
                         text=True, check=True).stdout.splitlines()
    return dict(zip(symbols, out))


samples = int(subprocess.run(["perf", "script", "-i", data, "-F", "tid"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout.count("\n"))
rows = report("--children")
names_of = demangled([s for _, _, _, s in rows])
short = lambda s: (names_of.get(s, s)[:110] + "…") if len(names_of.get(s, s)) > 111 else names_of.get(s, s)
print(f"\n{what} of {notes:,} notes in {folders} folders through notesfs (database on tmpfs)")
print(f"wall {wall:.3f} s ({wall / notes * 1e6:.0f} µs an operation); daemon CPU {cpu:.2f} s by /proc "
      f"({cpu / notes * 1e6:.0f} µs an operation); {samples:,} samples of 250 µs = {samples * PERIOD_NS / 1e9:.2f} s sampled")
swift = [(c, s, sym) for c, s, _, sym in rows if sym.startswith("$s")]
print("\ntop Swift frames by inclusive share of the daemon's samples")
print_table(["inclusive", "self", "frame"], [[f"{c:.1f}%", f"{s:.1f}%", short(sym)] for c, s, sym in swift[:20]])
witness = "protocol witness for FileSystem."
requests = {}  # request -> its witness's inclusive share (the larger, should perf list one twice)
for c, _, sym in swift:
    if names_of.get(sym, sym).startswith(witness):
        request = names_of[sym][len(witness):].split("(")[0]
        requests[request] = max(c, requests.get(request, 0.0))
sampled = samples * PERIOD_NS / 1e9
print("\nby request (the FileSystem method's inclusive share; µs of daemon CPU per note, from the samples)")
print_table(["request", "inclusive", "µs a note"],
            [[r, f"{c:.1f}%", f"{c / 100 * sampled / notes * 1e6:.0f}"] for r, c in requests.items()])
if halves:
    base = halves["no version (coalesced)"]
    print("\nnote history: the daemon's CPU per append (open, write, close), by /proc")
    print_table(["save", "µs", "ratio"], [[k, f"{v * 1e6:.0f}", f"{v / base:.2f}x"] for k, v in halves.items()])
print("\ntop frames by self share (any code: [k] kernel, [.] user)")
selfs = sorted(report("--no-children"), key=lambda r: -r[0])[:12]
print_table(["self", "frame"], [[f"{c:.1f}%", f"{kind} {short(sym)}"] for c, _, kind, sym in selfs])
