#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds with warnings as errors, runs swift test.
# With no arguments it runs in two phases: everything else in parallel, then the suites that write
# gigabytes through one open file. Those run alone because every process another test spawns
# inherits the open descriptor and closes it at exec, and each such close is a FUSE flush that saves
# the whole file (correct FUSE behaviour, but it turns a 1 GB write into hundreds of 1 GB saves
# when dozens of tests fork beside it). Arguments go to a single `swift test` run as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
if (($#)); then
    exec swift test --skip-build "$@"
fi
heavy='NotesFSTests\.(LargeFileTests|StallTests)'
swift test --skip-build --skip "$heavy"
swift test --skip-build --filter "$heavy"
