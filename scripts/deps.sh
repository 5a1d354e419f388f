#!/usr/bin/env bash
# Installs the Debian packages notesfs builds with and the tools its tests drive. Idempotent:
# apt-get runs only when something is missing.
set -euo pipefail
packages=(libfuse3-dev acl e2fsprogs libssl-dev libpq-dev libsqlite3-dev sqlite3 postgresql fuse3 pkg-config python3 rsync vim emacs-nox jq attr psmisc util-linux findutils grep sed coreutils procps bc time gcc strace git)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
