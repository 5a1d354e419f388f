#!/usr/bin/env bash
# The fsx-style random operation tester at full length, outside CI (CI runs a few thousand).
#
#   scripts/fsx.sh [OPS] [SEED]    OPS operations in all (default 100,000), split evenly over the
#                                  four cases; SEED is added to each case's seed (default 0) to run
#                                  other sequences.
#
# Four cases, run side by side: a .md note and an attachment, each with and without mmap reads and
# writes, every operation checked byte for byte against a shadow copy (Tests/NotesFSTests/
# RandomOperationTests.swift). On a failure the seed and the last operations are printed.
# NOTESFS_FSX_OPS=N swift test --filter RandomOperationTests runs N operations per case.
set -euo pipefail
cd "$(dirname "$0")/.."
ops=${1:-100000}
seed=${2:-0}
cases=4
per_case=$(((ops + cases - 1) / cases))
scripts/deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
start=$(date +%s)
status=0
NOTESFS_REQUIRE_FUSE=1 NOTESFS_FSX_OPS=$per_case NOTESFS_FSX_SEED=$seed \
    swift test --skip-build --filter 'NotesFSTests.RandomOperationTests' || status=$?
echo "fsx: $((per_case * cases)) operations ($cases cases of $per_case), seed offset $seed: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start )) s"
exit $status
