// CRC-32 by folding with carry-less multiplication (Gopal et al., "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009), for the bit-reflected
// polynomial 0x04C11DB7 that zlib uses. The state is the bit-inverted CRC, as inside zlib.
#include "checksum.h"

#include <limits.h>
#include <zlib.h>

static uint32_t zlib_crc32(uint32_t crc, const unsigned char *data, size_t length) {
    while (length > 0) {
        uInt chunk = length > UINT_MAX ? UINT_MAX : (uInt)length;
        crc = (uint32_t)crc32((uLong)crc, data, chunk);
        data += chunk;
        length -= chunk;
    }
    return crc;
}

uint32_t webcache_crc32_zlib(uint32_t crc, const unsigned char *data, size_t length) {
    return zlib_crc32(crc, data, length);
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

// x^(k) mod P(x), bit-reflected, for folding 512 bits (k1, k2), 128 bits (k3, k4), 64 to 32
// bits (k5), and the Barrett reduction's P(x) and floor(x^64 / P(x)).
#define FOLD_512_LOW 0x154442bd4ULL
#define FOLD_512_HIGH 0x1c6e41596ULL
#define FOLD_128_LOW 0x1751997d0ULL
#define FOLD_128_HIGH 0x0ccaa009eULL
#define FOLD_64 0x163cd6124ULL
#define POLYNOMIAL 0x1db710641ULL
#define BARRETT_MU 0x1f7011641ULL

#define TARGET __attribute__((target("pclmul,sse4.1")))

TARGET static inline __m128i fold(__m128i value, __m128i constants, __m128i next) {
    __m128i low = _mm_clmulepi64_si128(value, constants, 0x00);
    __m128i high = _mm_clmulepi64_si128(value, constants, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

/// The state after four accumulators holding 64 consecutive folded bytes (`x[0]` first) and
/// `length` more bytes at `data` (a multiple of 16).
TARGET static uint32_t fold_rest(__m128i x[4], const unsigned char *data, size_t length) {
    __m128i x1 = x[0], x2 = x[1], x3 = x[2], x4 = x[3];
    const __m128i by512 = _mm_set_epi64x((long long)FOLD_512_HIGH, (long long)FOLD_512_LOW);
    while (length >= 64) {
        x1 = fold(x1, by512, _mm_loadu_si128((const __m128i *)data));
        x2 = fold(x2, by512, _mm_loadu_si128((const __m128i *)(data + 16)));
        x3 = fold(x3, by512, _mm_loadu_si128((const __m128i *)(data + 32)));
        x4 = fold(x4, by512, _mm_loadu_si128((const __m128i *)(data + 48)));
        data += 64;
        length -= 64;
    }

    const __m128i by128 = _mm_set_epi64x((long long)FOLD_128_HIGH, (long long)FOLD_128_LOW);
    x1 = fold(x1, by128, x2);
    x1 = fold(x1, by128, x3);
    x1 = fold(x1, by128, x4);
    while (length >= 16) {
        x1 = fold(x1, by128, _mm_loadu_si128((const __m128i *)data));
        data += 16;
        length -= 16;
    }

    // 128 bits to 64: the low half times x^64 mod P, added to the high half.
    __m128i low = _mm_clmulepi64_si128(by128, x1, 0x01);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), low);

    // 64 bits to 32.
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    const __m128i by64 = _mm_set_epi64x(0, (long long)FOLD_64);
    __m128i lowWord = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), by64, 0x00);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 4), lowWord);

    // Barrett reduction to the 32-bit remainder.
    const __m128i barrett = _mm_set_epi64x((long long)BARRETT_MU, (long long)POLYNOMIAL);
    __m128i quotient = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), barrett, 0x10);
    __m128i product = _mm_clmulepi64_si128(_mm_and_si128(quotient, mask32), barrett, 0x00);
    x1 = _mm_xor_si128(x1, product);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

/// The state after `length` bytes (at least 64, a multiple of 16) from `state`, 16 bytes per
/// multiplication.
TARGET static uint32_t fold_blocks(uint32_t state, const unsigned char *data, size_t length) {
    __m128i x[4];
    for (int i = 0; i < 4; i++) x[i] = _mm_loadu_si128((const __m128i *)(data + 16 * i));
    x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)state));
    return fold_rest(x, data + 64, length - 64);
}

// Folding 2048 bits (four 512-bit accumulators, 256 bytes a round), for the wide path.
#define FOLD_2048_LOW 0x11542778aULL
#define FOLD_2048_HIGH 0x1322d1430ULL

#define TARGET_WIDE __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

/// Four 128-bit folds at once, one in each lane.
TARGET_WIDE static inline __m512i fold_wide(__m512i value, __m512i constants, __m512i next) {
    __m512i low = _mm512_clmulepi64_epi128(value, constants, 0x00);
    __m512i high = _mm512_clmulepi64_epi128(value, constants, 0x11);
    return _mm512_ternarylogic_epi64(low, high, next, 0x96);  // low ^ high ^ next
}

/// As `fold_blocks`, for at least 256 bytes, 64 bytes per multiplication (AVX-512 with
/// VPCLMULQDQ): four times the bytes per instruction, the same values.
TARGET_WIDE static uint32_t fold_blocks_wide(uint32_t state, const unsigned char *data, size_t length) {
    __m512i z0 = _mm512_loadu_si512((const void *)data);
    __m512i z1 = _mm512_loadu_si512((const void *)(data + 64));
    __m512i z2 = _mm512_loadu_si512((const void *)(data + 128));
    __m512i z3 = _mm512_loadu_si512((const void *)(data + 192));
    z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)state)));
    data += 256;
    length -= 256;

    const __m512i by2048 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)FOLD_2048_HIGH, (long long)FOLD_2048_LOW));
    while (length >= 256) {
        z0 = fold_wide(z0, by2048, _mm512_loadu_si512((const void *)data));
        z1 = fold_wide(z1, by2048, _mm512_loadu_si512((const void *)(data + 64)));
        z2 = fold_wide(z2, by2048, _mm512_loadu_si512((const void *)(data + 128)));
        z3 = fold_wide(z3, by2048, _mm512_loadu_si512((const void *)(data + 192)));
        data += 256;
        length -= 256;
    }

    // Each lane of an accumulator is 512 bits ahead of the same lane of the one before it.
    const __m512i by512 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)FOLD_512_HIGH, (long long)FOLD_512_LOW));
    z1 = fold_wide(z0, by512, z1);
    z2 = fold_wide(z1, by512, z2);
    z3 = fold_wide(z2, by512, z3);

    __m128i x[4];
    x[0] = _mm512_extracti32x4_epi32(z3, 0);
    x[1] = _mm512_extracti32x4_epi32(z3, 1);
    x[2] = _mm512_extracti32x4_epi32(z3, 2);
    x[3] = _mm512_extracti32x4_epi32(z3, 3);
    return fold_rest(x, data, length);
}

// The processor's features, as the runtime's start-up code found them: two loads, no state here.
static int folding_supported(void) {
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

// AVX-512 (whose registers the operating system saves, which the same check covers) and
// carry-less multiplication of 512-bit registers.
static int wide_folding_supported(void) {
    return folding_supported() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
}

int webcache_crc32_is_folding(void) { return folding_supported(); }

int webcache_crc32_folding_width(void) {
    if (wide_folding_supported()) return 512;
    return folding_supported() ? 128 : 0;
}

uint32_t webcache_crc32(uint32_t crc, const unsigned char *data, size_t length) {
    if (length < 64 || !folding_supported()) return zlib_crc32(crc, data, length);
    size_t folded = length & ~(size_t)15;
    uint32_t state = folded >= 256 && wide_folding_supported() ? fold_blocks_wide(~crc, data, folded)
                                                                : fold_blocks(~crc, data, folded);
    return zlib_crc32(~state, data + folded, length - folded);
}

#else

int webcache_crc32_is_folding(void) { return 0; }

int webcache_crc32_folding_width(void) { return 0; }

uint32_t webcache_crc32(uint32_t crc, const unsigned char *data, size_t length) {
    return zlib_crc32(crc, data, length);
}

#endif
