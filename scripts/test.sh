#!/usr/bin/env bash
# Runs the whole test suite: installs what it needs, builds with warnings as errors, runs swift test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build "$@"
