# Sourced by the benchmarks that mount a release notesfs over a scratch database
# (bench-search.sh, bench-history.sh): `bench_mount_setup NAME` builds the release notesfs and
# sets `bin`, `work` (under /var/tmp), `shm` (under /dev/shm), `mnt` and `db`, with a trap that
# unmounts and removes them at exit; `bench_wait_mounted` waits for the mount at `$mnt` (5 s).
bench_mount_setup() {
    scratch=${NOTESFS_BENCH_BUILD:-.build}
    scripts/release-build.sh "$scratch" notesfs >/dev/null
    bin=$scratch/release/notesfs
    work=$(mktemp -d "/var/tmp/notesfs-$1.XXXXXX")
    shm=/dev/shm/notesfs-$1-$$
    mnt=$work/mnt
    db=$work/db
    trap 'fusermount3 -uz "$mnt" 2>/dev/null || true; rm -rf "$work" "$shm"' EXIT
}

bench_wait_mounted() {
    for _ in $(seq 100); do [ "$(stat -c %d "$mnt")" != "$(stat -c %d "$mnt/..")" ] && break; sleep 0.05; done
}
