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
scripts/import-graph.sh -q
if [[ ${NOTESFS_LINT:-0} == 1 ]]; then scripts/lint.sh; fi
swift build --build-tests -Xswiftc -warnings-as-errors
if ((fast)); then
    NOTESFS_TEST_FAST=1 exec swift test --skip-build "$@"
fi
if (($#)); then
    exec swift test --skip-build "$@"
fi
heavy='NotesFSTests\.(LargeFileTests|StallTests)'
swift test --skip-build --skip "$heavy"
swift test --skip-build --filter "$heavy"
