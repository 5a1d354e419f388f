#!/usr/bin/env bash
# Where one kind of request spends the notesfs daemon's time: runs OP over NOTES notes (default 3,000
# in 20 folders) on a notesfs mount (database on tmpfs) under `perf record -e cpu-clock -g -p DAEMON`
# and prints the samples, the daemon's CPU seconds per operation and the top Swift frames by
# inclusive share (Benchmarks/fs/profile.py). Installs Debian's linux-perf when it is missing. Only
# the cpu-clock event is used: this machine's VM has no hardware counters.
#
#   scripts/profile.sh create|rename|read|append|unlink|editor|version [NOTES]
#   (version: note history's cost, a save that keeps a version beside one that does not)
#
# NOTESFS_BENCH_BUILD=DIR builds in DIR instead of .build. PERF_KEEP=DIR keeps perf.data there.
# PERF_CALL_GRAPH=dwarf unwinds through SQLite and libc (no frame pointers there), copying 64 KiB of
# stack a sample (a request's Swift frames need more than perf's default 8 KiB).
set -euo pipefail
cd "$(dirname "$0")/.."
op=${1:-}
case "$op" in
create | rename | read | append | unlink | editor | version) ;;
*) echo "usage: scripts/profile.sh create|rename|read|append|unlink|editor|version [NOTES]" >&2; exit 2 ;;
esac
notes=${2:-3000}
scratch=${NOTESFS_BENCH_BUILD:-.build}
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ beside Benchmarks/fs
scripts/deps.sh
if ! dpkg-query -W -f='${Status}' linux-perf 2>/dev/null | grep -q "install ok installed"; then
    echo "installing: linux-perf" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq linux-perf >/dev/null
fi
scripts/release-build.sh "$scratch" notesfs
work=$(mktemp -d /var/tmp/notesfs-profile.XXXXXX)
shm=/dev/shm/notesfs-profile-$$
cleanup() {
    for m in $(findmnt -rn -o TARGET | grep "^$work/" || true); do fusermount3 -uz "$m" 2>/dev/null || true; done
    if [ -n "${PERF_KEEP:-}" ]; then mkdir -p "$PERF_KEEP" && cp "$work"/perf-*.data "$PERF_KEEP"/ 2>/dev/null || true; fi
    rm -rf "$work" "$shm"
}
trap cleanup EXIT
mkdir -p "$shm"
python3 Benchmarks/fs/profile.py "$op" "$scratch/release/notesfs" "$work" "$shm" "$notes" 20
[ -z "${PERF_KEEP:-}" ] || echo "perf data kept in $PERF_KEEP (perf report -i $PERF_KEEP/perf-$op.data)"
