#ifndef WEBCACHE_FILE_SPACE_H
#define WEBCACHE_FILE_SPACE_H

/// Gives the file `descriptor` its blocks for bytes 0 up to `length` at once, without changing its
/// size (Linux `fallocate` with `FALLOC_FL_KEEP_SIZE`): bytes written there later need no block
/// found for them page by page, and a disk without room says so now. 0 on success, -1 with
/// `errno` set otherwise (`ENOSPC`, or `EOPNOTSUPP` where the file system cannot, `ENOSYS` where the
/// platform has no such call).
int webcache_file_reserve(int descriptor, long long length);

#endif
