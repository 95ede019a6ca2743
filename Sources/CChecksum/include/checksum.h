#ifndef WEBCACHE_CHECKSUM_H
#define WEBCACHE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32 (IEEE 802.3, zlib's and PNG's) of `length` bytes at `data`, continuing `crc` (0 to
/// start): the same value as zlib's `crc32`. Where the processor multiplies without carries
/// (x86-64 with PCLMULQDQ), 64-byte blocks are folded with it, several times faster than zlib's
/// tables; elsewhere, and for the last few bytes, zlib computes it.
uint32_t webcache_crc32(uint32_t crc, const unsigned char *data, size_t length);

/// Whether `webcache_crc32` folds with carry-less multiplication on this processor.
int webcache_crc32_is_folding(void);

/// How many bits `webcache_crc32` folds per multiplication on this processor: 512 with AVX-512
/// and VPCLMULQDQ (for 256 bytes and more), 128 with PCLMULQDQ alone, 0 where zlib computes it.
int webcache_crc32_folding_width(void);

/// zlib's CRC-32 only, for tests that compare the two.
uint32_t webcache_crc32_zlib(uint32_t crc, const unsigned char *data, size_t length);

#endif
