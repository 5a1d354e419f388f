#!/usr/bin/env python3
"""The second table of issue 9 (scripts/bench.sh fs-scale): NOTES notes (100,000) in FOLDERS folders (20
of 5,000) on tmpfs, the reference, on libfuse's passthrough_ll -o xattr,default_permissions over
tmpfs (the floor of a FUSE daemon here) when the open-file limit lets it hold that many (it keeps
a descriptor per file: the hard limit on the machine this was written on is 20,000), and on
notesfs with its database on tmpfs.

Usage: scale.py NOTESFS WORK SHM NOTES FOLDERS [PASSTHROUGH_LL]
Phases: create (+ write + close); notesfs is then unmounted and mounted again (the mount time
includes opening the database) before the first ls -lR; read all; grep -r rare / grep -rc common;
notesfs only: mounted again with -o noatime, ls -lR and read all again (a note's first open then
fills the page cache: no read round trip); append to 10% of the notes; rename 10% (half within
their folder, half into the next one); unlink all (and rmdir the folders). After each notesfs
phase the daemon's VmRSS is read, and each daemon's peak (VmHWM) before it is unmounted. Time
targets are the issue's for 100,000 notes, scaled by NOTES / 100,000 for smaller runs.
"""
import os
import resource
import shutil
import sys

import mounts
import operations as op
from corpus import body, folder, note_path, timed
from tables import print_table, seconds

notesfs_bin, work, shm = sys.argv[1:4]
notes, folders = int(sys.argv[4]), int(sys.argv[5])
passthrough_bin = sys.argv[6] if len(sys.argv) > 6 else None
scale = notes / 100_000
contents = {i: body(i) for i in range(notes)}


def run(root, daemon=None, noatime_row=False):
    """Times the phases on ROOT; with a daemon, remounts it after create and records its VmRSS;
    with noatime_row, also reads all again after a remount with -o noatime."""
    names = {i: note_path(root, i, folders) for i in range(notes)}
    results, rss, peaks = [], {}, []

    def after(phase):
        if daemon:
            rss[phase] = daemon.status_mb("VmRSS")

    if daemon:
        daemon.mount()
        after("start")
    for f in range(folders):
        os.mkdir(folder(root, f))
    timed("create", lambda: op.create(names, contents), results)
    after("create")
    if daemon:
        peaks.append(("create", daemon.status_mb("VmHWM")))
        daemon.unmount()
        results.append(("mount", daemon.mount()))
        after("mount")
    timed("ls-lR", lambda: op.ls_lR(root), results)
    after("ls-lR")
    timed("read", lambda: op.read_all(names), results)
    after("read")
    timed("grep-rare", lambda: op.grep_rare(root), results)
    after("grep-rare")
    timed("grep-common", lambda: op.grep_common(root), results)
    after("grep-common")
    if noatime_row:
        peaks.append(("ls, read, grep", daemon.status_mb("VmHWM")))
        daemon.unmount()
        daemon.argv += ["-o", "noatime"]
        daemon.mount()
        op.ls_lR(root)
        timed("read-noatime", lambda: op.read_all(names), results)
        after("read-noatime")
    timed("append", lambda: op.append(names, 10), results)
    after("append")

    def rename():
        op.rename(names, range(5, notes, 20), root, folders, across=False)
        op.rename(names, range(15, notes, 20), root, folders, across=True)

    timed("rename", rename, results)
    after("rename")

    def unlink():
        op.unlink(names)
        for f in range(folders):
            os.rmdir(folder(root, f))

    timed("unlink", unlink, results)
    after("unlink")
    if daemon:
        label = "noatime: ls, read, append, rename, unlink" if noatime_row else "the rest"
        peaks.append((label, daemon.status_mb("VmHWM")))
        daemon.unmount()
    return dict(results), rss, peaks


tmpfs_root = os.path.join(shm, "tmpfs")
shutil.rmtree(tmpfs_root, ignore_errors=True)
os.makedirs(tmpfs_root)
tmp, _, _ = run(tmpfs_root)
shutil.rmtree(tmpfs_root)
print("tmpfs done", file=sys.stderr, flush=True)
ptl = None
if passthrough_bin:
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if limit == resource.RLIM_INFINITY or notes + folders + 1000 <= limit:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))  # inherited by passthrough_ll
        source = os.path.join(shm, "passthrough")
        shutil.rmtree(source, ignore_errors=True)
        pt = mounts.passthrough_ll(passthrough_bin, source, os.path.join(work, "pt"), os.path.join(work, "pt.log"))
        ptl, _, _ = run(pt.mnt, pt)
        shutil.rmtree(source)
        print("passthrough_ll done", file=sys.stderr, flush=True)
    else:
        print(f"passthrough_ll skipped: it keeps a descriptor per file and the open-file limit is {limit:,}",
              file=sys.stderr, flush=True)
db = os.path.join(shm, "db")
shutil.rmtree(db, ignore_errors=True)
daemon = mounts.notesfs(notesfs_bin, db, os.path.join(work, "scale"), os.path.join(work, "scale.log"))
nfs, rss, peaks = run(daemon.mnt, daemon, noatime_row=True)
shutil.rmtree(db)

n10 = len(range(0, notes, 10))
with_pt = ", passthrough_ll over tmpfs" if ptl else ""
print(f"\n{notes:,} notes of 1-4 KB in {folders} folders of {notes // folders:,}; tmpfs{with_pt}, and notesfs with its database on tmpfs")
if notes != 100_000:
    print(f"(time targets scaled from 100,000 notes by {scale:g})")
mb = lambda phase: f"{rss[phase]:.0f} MB"
t = lambda secs: seconds(secs * scale)
pt = lambda phase: seconds(ptl[phase]) if ptl else "–"
rows = [
    ["create + write + close", seconds(tmp["create"]), pt("create"),
     f"{seconds(nfs['create'])} ({nfs['create'] / notes * 1e6:.0f} µs a note)", f"≤ {t(10)}", mb("create")],
    ["unmount, mount, first `ls -lR`", f"{seconds(tmp['ls-lR'])} (ls only)",
     f"{pt('mount')} + {pt('ls-lR')}" if ptl else "–",
     f"{seconds(nfs['mount'])} + {seconds(nfs['ls-lR'])} = {seconds(nfs['mount'] + nfs['ls-lR'])}",
     f"≤ {t(2)} together", f"{mb('mount')} after mount, {mb('ls-lR')} after ls"],
    ["read all", seconds(tmp["read"]), pt("read"), seconds(nfs["read"]), f"≤ {t(2)}", mb("read")],
    ["read all, remounted `-o noatime` (after `ls -lR`)", "–", "–", seconds(nfs["read-noatime"]), f"≤ {t(2)}",
     mb("read-noatime")],
    ["`grep -r` rare / `grep -rc` common", f"{seconds(tmp['grep-rare'])} / {seconds(tmp['grep-common'])}",
     f"{pt('grep-rare')} / {pt('grep-common')}" if ptl else "–",
     f"{seconds(nfs['grep-rare'])} / {seconds(nfs['grep-common'])} "
     f"({nfs['grep-rare'] / tmp['grep-rare']:.1f}x / {nfs['grep-common'] / tmp['grep-common']:.1f}x tmpfs)",
     "≤ 1.5x tmpfs", f"{mb('grep-rare')} / {mb('grep-common')}"],
    [f"append to {n10:,} notes", seconds(tmp["append"]), pt("append"), seconds(nfs["append"]), f"≤ {t(1)}", mb("append")],
    [f"rename {2 * len(range(5, notes, 20)):,} notes (half across folders)", seconds(tmp["rename"]), pt("rename"),
     seconds(nfs["rename"]), f"≤ {t(1)}", mb("rename")],
    ["unlink all", seconds(tmp["unlink"]), pt("unlink"), seconds(nfs["unlink"]), f"≤ {t(3)}", mb("unlink")],
    ["daemon peak RSS (VmHWM)", "–", "–", f"{max(p for _, p in peaks):.0f} MB ({rss['mount']:.0f} MB after mount)",
     "≤ 150 MB throughout", "; ".join(f"{label}: {p:.0f} MB" for label, p in peaks)],
]
print_table(["phase", "tmpfs", "passthrough_ll", "notesfs", "target", "daemon VmRSS after"], rows)
