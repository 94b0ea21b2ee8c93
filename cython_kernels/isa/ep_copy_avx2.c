// ep_copy_avx2.c -- AVX2: the permutation copy's
// non-temporal run copy and its in-register transposes (ep_copy.c plans
// which runs; isa/ep_copy_simd.h has the transposes, written once).
// Compiled for this ISA in this file only; ep_copy.c calls these when the
// kernel set in use has it.
#pragma GCC target("avx2")
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "../ep_copy.h"

void ep_stream_copy_avx2(char *d, const char *s, size_t n)
{
    size_t head = (size_t)(-(uintptr_t)d) & 63;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
        _mm256_stream_si256((__m256i *)(d + 32),
                            _mm256_loadu_si256((const __m256i *)(s + 32)));
    }
    memcpy(d, s, n);
}

// AVX2, 8 x 4 bytes
#define EP_CS(x) ep_cs256s_##x
#define T float
#define VEC __m256
#define VL 8
#define CS_MASK(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n),                   \
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define CS_LOADU(p) _mm256_loadu_ps(p)
#define CS_LOADN(p, n) _mm256_maskload_ps(p, CS_MASK(n))
#define CS_STOREU(p, v) _mm256_storeu_ps(p, v)
#define CS_STOREN(p, v, n) _mm256_maskstore_ps(p, CS_MASK(n), v)
#define CS_STREAM(p, v) _mm256_stream_ps(p, v)
#define CS_ZERO() _mm256_setzero_ps()
#define CS_IL2(a, b, lo, hi) do {                                              \
        VEC a_ = (a), b_ = (b);                                                \
        VEC l_ = _mm256_unpacklo_ps(a_, b_), h_ = _mm256_unpackhi_ps(a_, b_);  \
        (lo) = _mm256_permute2f128_ps(l_, h_, 0x20);                           \
        (hi) = _mm256_permute2f128_ps(l_, h_, 0x31);                           \
    } while (0)
#include "ep_copy_simd.h"      // undefines its parameters

// AVX2, 4 x 8 bytes
#define EP_CS(x) ep_cs256d_##x
#define T double
#define VEC __m256d
#define VL 4
#define CS_MASK(n) _mm256_cmpgt_epi64(_mm256_set1_epi64x(n),                  \
                                      _mm256_setr_epi64x(0, 1, 2, 3))
#define CS_LOADU(p) _mm256_loadu_pd(p)
#define CS_LOADN(p, n) _mm256_maskload_pd(p, CS_MASK(n))
#define CS_STOREU(p, v) _mm256_storeu_pd(p, v)
#define CS_STOREN(p, v, n) _mm256_maskstore_pd(p, CS_MASK(n), v)
#define CS_STREAM(p, v) _mm256_stream_pd(p, v)
#define CS_ZERO() _mm256_setzero_pd()
#define CS_IL2(a, b, lo, hi) do {                                              \
        VEC a_ = (a), b_ = (b);                                                \
        VEC l_ = _mm256_unpacklo_pd(a_, b_), h_ = _mm256_unpackhi_pd(a_, b_);  \
        (lo) = _mm256_permute2f128_pd(l_, h_, 0x20);                           \
        (hi) = _mm256_permute2f128_pd(l_, h_, 0x31);                           \
    } while (0)
#include "ep_copy_simd.h"      // undefines its parameters
