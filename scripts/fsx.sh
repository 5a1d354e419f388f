#!/usr/bin/env bash
# The fsx-style random operation tester at full length, outside CI (CI runs a few thousand).
#
#   scripts/fsx.sh [OPS] [SEED]    OPS operations per case (default 100,000); SEED is added to each
#                                  case's seed (default 0) to run other sequences.
#
# Four cases, run side by side: a .md note and an attachment, each with and without mmap reads and
# writes, every operation checked byte for byte against a shadow copy (Tests/NotesFSTests/
# RandomOperationTests.swift). On a failure the seed and the last operations are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
ops=${1:-100000}
seed=${2:-0}
scripts/deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
start=$(date +%s)
status=0
NOTESFS_REQUIRE_FUSE=1 NOTESFS_FSX_OPS=$ops NOTESFS_FSX_SEED=$seed \
    swift test --skip-build --filter 'NotesFSTests.RandomOperationTests' || status=$?
echo "fsx: $ops operations per case, seed offset $seed: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
exit $status
