#ifndef WEBCACHE_MEMORY_FILE_H
#define WEBCACHE_MEMORY_FILE_H

/// Creates an anonymous file in memory that can be sealed (Linux `memfd_create`, close-on-exec),
/// named `name` for `/proc/<pid>/fd`; -1 with `errno` set where it fails or the platform has none.
int webcache_memory_file_create(const char *name);

/// Seals a file from `webcache_memory_file_create` against any further write, growth or shrinking;
/// 0 on success, -1 with `errno` set otherwise.
int webcache_memory_file_seal(int descriptor);

#endif
