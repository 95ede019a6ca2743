#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#endif

#include <errno.h>

#include "unnamed_files.h"

int webcache_unnamed_file_create(const char *directory) {
#if defined(__linux__)
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#else
    (void)directory;
    errno = ENOSYS;
    return -1;
#endif
}

int webcache_memory_file_create(const char *name) {
#if defined(__linux__)
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
#else
    (void)name;
    errno = ENOSYS;
    return -1;
#endif
}

int webcache_memory_file_seal(int descriptor) {
#if defined(__linux__)
    return fcntl(descriptor, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK);
#else
    (void)descriptor;
    errno = ENOSYS;
    return -1;
#endif
}
