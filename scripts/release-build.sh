#!/usr/bin/env bash
# Builds release products for run.sh and the benchmarks, from a clean release tree whenever the
# sources changed since the last release build here.
#
#   scripts/release-build.sh SCRATCH PRODUCT...
#
# Why: an incremental release build after a change to a type's stored properties (RecordStore's
# RecordDatabase, say) was seen to keep the old object size inlined in a module that was not
# recompiled, and the `notesfs` it linked corrupted its heap at mount ("corrupted size vs.
# prev_size", an 8-byte write past the object in valgrind). Debug builds (the tests) were not
# affected; a clean release build was fine. So a release build starts clean after any change.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$1
shift
stamp="$scratch/release-sources.stamp"
sources=$( (git ls-files -s -- Package.swift Sources Benchmarks Tests/Support 2>/dev/null; git diff HEAD -- Package.swift Sources Benchmarks Tests/Support 2>/dev/null; git ls-files --others --exclude-standard -- Sources Benchmarks 2>/dev/null) | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sources" ]; then
    rm -rf "$scratch/release" "$scratch"/*-unknown-linux-gnu/release
fi
# --static-swift-stdlib: the Swift runtime and Foundation are linked into the executable, not
# loaded as fifteen shared libraries whose symbols the dynamic loader looks up at every start
# (`notesfs --version` took 17 ms instead of 10 with them; docs/benchmarks.md, "Start-up").
for product in "$@"; do
    swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product "$product" >&2
done
mkdir -p "$scratch"
echo "$sources" >"$stamp"
