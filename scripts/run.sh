#!/usr/bin/env bash
# The README's first command: installs what is missing, builds release, installs the notesfs
# command (with its man page and bash completion), mounts the embedded default database at
# MOUNTPOINT and prints how to unmount.
#
#   scripts/run.sh MOUNTPOINT [notesfs mount options, e.g. -o allow_other]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    echo "usage: scripts/run.sh MOUNTPOINT [-o opt,...]" >&2
    exit 2
fi
mountpoint=$1
shift
scripts/deps.sh
scripts/release-build.sh .build notesfs
binary=$PWD/.build/release/notesfs
if [ "$(id -u)" -eq 0 ]; then
    # On PATH so that mount.fuse3 (an fstab line "DB MOUNTPOINT fuse.notesfs defaults 0 0") finds it.
    install -m 0755 "$binary" /usr/local/bin/notesfs
    install -D -m 0644 docs/notesfs.1 /usr/local/share/man/man1/notesfs.1
    install -D -m 0644 completions/notesfs.bash /usr/share/bash-completion/completions/notesfs
    binary=/usr/local/bin/notesfs
else
    echo "note: not root, so notesfs, its man page and completion are not installed; using $binary" >&2
fi
mkdir -p "$mountpoint"
"$binary" "$mountpoint" "$@"
database=${XDG_DATA_HOME:-$HOME/.local/share}/notesfs
echo "notesfs: mounted $database at $mountpoint"
echo "unmount with: fusermount3 -u $mountpoint"
