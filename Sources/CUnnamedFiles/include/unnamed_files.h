#ifndef WEBCACHE_UNNAMED_FILES_H
#define WEBCACHE_UNNAMED_FILES_H

/// Creates a file without a name in `directory` (Linux `O_TMPFILE`, read-write, close-on-exec):
/// it never appears in the directory and is gone once closed, even after a crash. -1 with
/// `errno` set where it fails, the file system cannot, or the platform has no such files.
int webcache_unnamed_file_create(const char *directory);

/// Creates an anonymous file in memory that can be sealed (Linux `memfd_create`, close-on-exec),
/// named `name` for `/proc/<pid>/fd`; -1 with `errno` set where it fails or the platform has none.
int webcache_memory_file_create(const char *name);

/// Seals a file from `webcache_memory_file_create` against any further write, growth or shrinking;
/// 0 on success, -1 with `errno` set otherwise.
int webcache_memory_file_seal(int descriptor);

#endif
