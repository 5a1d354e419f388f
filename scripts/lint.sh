#!/usr/bin/env bash
# Checks the formatting of Sources and Tests against .swift-format (`swift format lint --strict`,
# which ships with the toolchain); fails on any finding. `swift format -i -r Sources Tests`
# rewrites the files to match.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift format lint --strict --parallel -r Sources Tests
