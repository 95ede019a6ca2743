#ifndef WEBCACHE_ALLOCATOR_TUNING_H
#define WEBCACHE_ALLOCATOR_TUNING_H

/// Keeps blocks up to `mmap_threshold` bytes in the C allocator's heap (glibc `mallopt`
/// M_MMAP_THRESHOLD) and trims the heap only past `trim_threshold` bytes free at its top.
/// Returns 1 when applied, 0 where the allocator has no such knobs.
int webcache_tune_allocator(int mmap_threshold, int trim_threshold);

#endif
