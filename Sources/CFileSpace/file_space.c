#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#endif

#include <errno.h>

#include "file_space.h"

int webcache_file_reserve(int descriptor, long long length) {
#if defined(__linux__)
    return fallocate(descriptor, FALLOC_FL_KEEP_SIZE, 0, (off_t)length);
#else
    (void)descriptor;
    (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
