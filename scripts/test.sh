#!/usr/bin/env bash
# Runs the test suite: installs what it needs, checks the module import graph against STYLE.md
# (scripts/import-graph.sh) and, with NOTESFS_LINT=1, the formatting (scripts/lint.sh), builds with
# warnings as errors, runs swift test.
#
#   scripts/test.sh            every test
#   scripts/test.sh --fast     the quick subset: every test without a tag (.mount, .postgres,
#                              .slow) runs, the tagged ones show as skipped (NOTESFS_TEST_FAST=1)
#   scripts/test.sh ARGS…      one `swift test` run with ARGS as they are (--filter X, …)
#
# With no arguments it runs in two phases: everything else in parallel, then the suites that write
# gigabytes through one open file. Those run alone because every process another test spawns
# inherits the open descriptor and closes it at exec, and each such close is a FUSE flush that saves
# the whole file (correct FUSE behaviour, but it turns a 1 GB write into hundreds of 1 GB saves
# when dozens of tests fork beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [[ ${1:-} == --fast ]]; then
    fast=1
    shift
fi
scripts/deps.sh
# Every test's temporary files (thousands of directories, gigabytes in all) go in one directory of
# this run, removed when the run ends, mounts left behind by a failed test unmounted first. The
# directory is open to all like /tmp: the postgres user and the tests' unprivileged users make
# files in it. NOTESFS_KEEP_TMP=1 keeps it (its path is printed).
# The quick subset's directory is in memory (/dev/shm) when that has 2 GiB free: its ~400 test
# databases make about 110,000 files (700 MB), and on this project's 2-core VM the run took 48-50 s
# on disk, then 10.7 s to remove them, against 38 s and 0.7 s in memory. The whole suite stays on
# disk: it writes gigabytes, and its mounts are tested over a disk filesystem.
tmp_root=/tmp
if ((fast)) && [[ -d /dev/shm && -w /dev/shm ]] && (($(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') > 2 * 1024 * 1024)); then
    tmp_root=/dev/shm
fi
run_tmp=$(mktemp -d "$tmp_root/notesfs-test-run.XXXXXX")
chmod 1777 "$run_tmp"
remove_run_tmp() {
    if [[ ${NOTESFS_KEEP_TMP:-0} == 1 ]]; then
        echo "test files kept in $run_tmp" >&2
        return
    fi
    local mounts
    mounts=$(findmnt -rn -o TARGET | grep "^$run_tmp/" | sort -r || true)
    for m in $mounts; do fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$run_tmp" 2>/dev/null || true
}
trap remove_run_tmp EXIT
export TMPDIR=$run_tmp
scripts/import-graph.sh -q
if [[ ${NOTESFS_LINT:-0} == 1 ]]; then scripts/lint.sh; fi
swift build --build-tests -Xswiftc -warnings-as-errors
if ((fast)); then
    NOTESFS_TEST_FAST=1 swift test --skip-build "$@"
    exit
fi
if (($#)); then
    swift test --skip-build "$@"
    exit
fi
heavy='NotesFSTests\.(LargeFileTests|StallTests)'
swift test --skip-build --skip "$heavy"
swift test --skip-build --filter "$heavy"
