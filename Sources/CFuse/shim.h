#ifndef NOTESFS_CFUSE_SHIM_H
#define NOTESFS_CFUSE_SHIM_H
// CFuse: libfuse3's low-level API for Swift, plus static inline shims for what Swift cannot import
// (macros, variadic functions). The one place FUSE_USE_VERSION is defined (see FUSE-NOTES.md).
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <fuse_opt.h>
#include <syslog.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/falloc.h>

/// utimensat(2)'s special nanosecond values (macros Swift does not import).
static inline long notesfs_utime_now(void) { return UTIME_NOW; }
static inline long notesfs_utime_omit(void) { return UTIME_OMIT; }

/// syslog(3) is variadic: log one preformatted message.
static inline void notesfs_syslog(int priority, const char *message) {
    syslog(priority, "%s", message);
}

/// umount2(2) flags as plain ints (MNT_DETACH and MNT_FORCE are enum constants in glibc).
static inline int notesfs_mnt_detach(void) { return MNT_DETACH; }
static inline int notesfs_mnt_force(void) { return MNT_FORCE; }

/// renameat2(2) through syscall(2), which is variadic; returns -1 and sets errno on failure.
static inline int notesfs_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                                    const char *newpath, unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

/// The C `errno` of the calling thread.
static inline int notesfs_errno(void) { return errno; }

#endif
