#ifndef NOTESFS_CFUSE_SHIM_H
#define NOTESFS_CFUSE_SHIM_H
// The one place FUSE_USE_VERSION is defined (see FUSE-NOTES.md).
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <fuse_opt.h>
#endif
