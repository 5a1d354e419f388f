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
# Start-up (docs/benchmarks.md, "Start-up"): --static-swift-stdlib links the Swift runtime and
# Foundation into the executable instead of loading them as fourteen shared libraries whose symbols
# the dynamic loader looks up at every start, and GCC's libstdc++.a (the runtime's C++ library)
# is linked in too, which saves resolving libstdc++.so's 1,700 symbols: the toolchain's link asks
# for `-lstdc++`, and a directory holding only the archive, first in the library path
# (`-Xswiftc -L` comes before the compiler's own directories), makes that the archive.
mkdir -p "$scratch/static-libstdc++"
cxx=$(cd "$scratch/static-libstdc++" && pwd)
archive=$(gcc -print-file-name=libstdc++.a)
flags=(--static-swift-stdlib)
if [ -f "$archive" ]; then
    ln -sf "$archive" "$cxx/libstdc++.a"
    flags+=(-Xswiftc "-L$cxx")
fi
for product in "$@"; do
    swift build -c release "${flags[@]}" --scratch-path "$scratch" --product "$product" >&2
done
mkdir -p "$scratch"
echo "$sources" >"$stamp"
