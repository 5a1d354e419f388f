#!/usr/bin/env bash
# Prints the module import graph of Sources/ (from the `import` lines of each target's files) and
# fails when a module imports one that the table in STYLE.md ("The layers, one way down") does not
# allow it. Only the project's own modules are checked: the toolchain's (Foundation, Glibc,
# Dispatch, Synchronization) are allowed everywhere.
#
#   scripts/import-graph.sh        the graph, then every forbidden import; exit 1 if there is one
#   scripts/import-graph.sh -q     only the forbidden imports
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=0
[[ ${1:-} == -q ]] && quiet=1

# What each module may import (STYLE.md's table). The C modules are system libraries: each is
# imported by the one Swift module that is its boundary. POSIX, the one layer of system calls
# (EINTR retries, whole reads and writes, atomic durable files, the record-file name encoding),
# sits under every Swift module and imports nothing of the project.
declare -A allowed=(
    [POSIX]=""
    [SQLite]="CSQLite"
    [RecordStore]="SQLite"
    [Index]="RecordStore SQLite CSQLite"
    [Notes]="RecordStore Index"
    [FUSE]="CFuse"
    [NotesFS]="Notes FUSE RecordStore"
    [Postgres]="CPostgres"
    [Sync]="Notes RecordStore Postgres"
    [NotesCLI]="Notes Sync Index RecordStore"
    [notesfs]="NotesCLI"
)

# Imports the table does not allow that the code has today, one per line: FILE MODULE, and a
# comment that says why. The list only shrinks: delete a line once its import is gone (a line
# whose import is gone is reported, so that it is not forgotten).
exceptions=$(
    cat <<'EOF'
# The mount command is the CLI's one way into the filesystem (STYLE.md: NotesFS only there); it
# also parses FUSE's own command-line options and starts the session.
Sources/NotesCLI/MountCommand.swift NotesFS
Sources/NotesCLI/MountCommand.swift FUSE
Sources/NotesCLI/MountSync.swift NotesFS
Sources/NotesCLI/MountSync.swift FUSE
# C boundaries the table does not name: SHA-256 of assets (libcrypto), the ciphers of encrypted
# sync (libcrypto, loaded by the one file LibCrypto.swift), extended attributes for import and
# export (<sys/xattr.h>).
Sources/RecordStore/Storage/SHA256.swift CCrypto
Sources/Sync/Encryption/LibCrypto.swift CCrypto
Sources/NotesCLI/FileSystem+Xattr.swift CXattr
EOF
)

modules=()
for directory in Sources/*/; do modules+=("$(basename "$directory")"); done
is_module() { local m; for m in "${modules[@]}"; do [[ $m == "$1" ]] && return 0; done; return 1; }
is_excepted() { grep -v '^#' <<<"$exceptions" | grep -qxF "$1 $2"; }

# FILE MODULE for every import of a project module in Sources/ (`@testable`, `@preconcurrency`
# and `import struct X.Y` forms included).
edges=$(
    grep -rHE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*import[[:space:]]+((struct|class|enum|protocol|typealias|func|var|let)[[:space:]]+)?[A-Za-z_]+' \
        --include='*.swift' Sources |
        sed -E 's/^([^:]+):.*import[[:space:]]+((struct|class|enum|protocol|typealias|func|var|let)[[:space:]]+)?([A-Za-z_]+).*/\1 \4/' |
        sort -u
)

status=0
declare -A graph=()
used_exceptions=""
while read -r file imported; do
    [[ -n $file ]] || continue
    is_module "$imported" || continue
    module=$(cut -d/ -f2 <<<"$file")
    [[ $module != "$imported" ]] || continue
    graph[$module]+=" $imported"
    if [[ -z ${allowed[$module]+set} ]]; then
        # A C system-library target: it imports nothing of the project.
        echo "forbidden: $file imports $imported (module $module is not in the table)" >&2
        status=1
    elif [[ $imported == POSIX && $module != POSIX ]]; then
        :
    elif ! grep -qw -- "$imported" <<<"${allowed[$module]}"; then
        if is_excepted "$file" "$imported"; then
            used_exceptions+="$file $imported"$'\n'
        else
            echo "forbidden: $file imports $imported ($module may import: ${allowed[$module]:-no project module})" >&2
            status=1
        fi
    fi
done <<<"$edges"

while read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    grep -qxF "$line" <<<"$used_exceptions" || echo "note: the exception '$line' is no longer needed: delete it from $0" >&2
done <<<"$exceptions"

if ((!quiet)); then
    for module in "${modules[@]}"; do
        dependencies=$(tr ' ' '\n' <<<"${graph[$module]:-}" | sort -u | grep -v '^$' | paste -sd' ' - || true)
        printf '%-12s -> %s\n' "$module" "${dependencies:-(nothing of the project)}"
    done
    if [[ -n $used_exceptions ]]; then
        echo "allowed for now (the exceptions in $0):"
        sed 's/^/  /' <<<"${used_exceptions%$'\n'}"
    fi
fi
exit $status
