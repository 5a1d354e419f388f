// glibc's extended attribute calls (<sys/xattr.h>), which Swift's Glibc module does not export.
#include <sys/xattr.h>
