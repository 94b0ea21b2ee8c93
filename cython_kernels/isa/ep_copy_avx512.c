// ep_copy_avx512.c -- AVX-512F: the permutation copy's
// non-temporal run copy and its in-register transposes (ep_copy.c plans
// which runs; isa/ep_copy_simd.h has the transposes, written once).
// Compiled for this ISA in this file only; ep_copy.c calls these when the
// kernel set in use has it.
#pragma GCC target("avx512f")
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "../ep_copy.h"

void ep_stream_copy_avx512(char *d, const char *s, size_t n)
{
    size_t head = (size_t)(-(uintptr_t)d) & 63;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64)
        _mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
    memcpy(d, s, n);
}

// AVX-512F, 16 x 4 bytes
#define EP_CS(x) ep_cs512s_##x
#define T float
#define VEC __m512
#define VL 16
#define CS_MASK(n) ((__mmask16)((1u << (n)) - 1))
#define CS_LOADU(p) _mm512_loadu_ps(p)
#define CS_LOADN(p, n) _mm512_maskz_loadu_ps(CS_MASK(n), p)
#define CS_STOREU(p, v) _mm512_storeu_ps(p, v)
#define CS_STOREN(p, v, n) _mm512_mask_storeu_ps(p, CS_MASK(n), v)
#define CS_STREAM(p, v) _mm512_stream_ps(p, v)
#define CS_ZERO() _mm512_setzero_ps()
#define CS_IL2(a, b, lo, hi) do {                                              \
        const __m512i il_lo_ = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19,   \
                                                 4, 20, 5, 21, 6, 22, 7, 23);  \
        const __m512i il_hi_ = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, \
                                                 12, 28, 13, 29, 14, 30, 15, 31); \
        VEC a_ = (a), b_ = (b);                                                \
        (lo) = _mm512_permutex2var_ps(a_, il_lo_, b_);                         \
        (hi) = _mm512_permutex2var_ps(a_, il_hi_, b_);                         \
    } while (0)
#include "ep_copy_simd.h"      // undefines its parameters

// AVX-512F, 8 x 8 bytes
#define EP_CS(x) ep_cs512d_##x
#define T double
#define VEC __m512d
#define VL 8
#define CS_MASK(n) ((__mmask8)((1u << (n)) - 1))
#define CS_LOADU(p) _mm512_loadu_pd(p)
#define CS_LOADN(p, n) _mm512_maskz_loadu_pd(CS_MASK(n), p)
#define CS_STOREU(p, v) _mm512_storeu_pd(p, v)
#define CS_STOREN(p, v, n) _mm512_mask_storeu_pd(p, CS_MASK(n), v)
#define CS_STREAM(p, v) _mm512_stream_pd(p, v)
#define CS_ZERO() _mm512_setzero_pd()
#define CS_IL2(a, b, lo, hi) do {                                              \
        const __m512i il_lo_ = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);    \
        const __m512i il_hi_ = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);  \
        VEC a_ = (a), b_ = (b);                                                \
        (lo) = _mm512_permutex2var_pd(a_, il_lo_, b_);                         \
        (hi) = _mm512_permutex2var_pd(a_, il_hi_, b_);                         \
    } while (0)
#include "ep_copy_simd.h"      // undefines its parameters
