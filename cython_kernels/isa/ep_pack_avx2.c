// ep_pack_avx2.c -- the transposing inner loop of packing, in AVX2.
//
// Packing A from rows contiguous along k (row-major A, "bik") and B from
// columns contiguous along k ("bjk", B^T in memory) is a transpose: each
// k step of a micro-panel takes one value from each of 8 (or 4) rows.  An
// element at a time that costs a load and a store per element; in 8 x 8
// (float) / 4 x 4 (double) register transposes it is two vector memory
// operations per 8 (4) elements.  Zen 4, 2026-11-21, 'bik,bjk->bij' b=64,
// 128^3 f32, 1 thread: see the figures next to EP_PACK_SIMD in ep_pack.c.
// Compiled with AVX2 for this file only; ep_pack.c calls it when the kernel
// set in use is AVX2 or wider (EINPLAN_ISA=generic keeps the C loop).
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include "../ep_pack.h"

// dst[p * ld + i] = r[i][p] for i < 8, p < kc.
void ep_spack_t8_avx2(const float *const *r, ep_dim_t kc, float *dst,
                      ep_inc_t ld)
{
    ep_dim_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        __m256 x0 = _mm256_loadu_ps(r[0] + p), x1 = _mm256_loadu_ps(r[1] + p);
        __m256 x2 = _mm256_loadu_ps(r[2] + p), x3 = _mm256_loadu_ps(r[3] + p);
        __m256 x4 = _mm256_loadu_ps(r[4] + p), x5 = _mm256_loadu_ps(r[5] + p);
        __m256 x6 = _mm256_loadu_ps(r[6] + p), x7 = _mm256_loadu_ps(r[7] + p);
        // pairs of rows interleaved, then quads, then the 128-bit halves
        __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
        __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
        __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
        __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
        float *d = dst + p * ld;
        _mm256_storeu_ps(d + 0 * ld, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(d + 1 * ld, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(d + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(d + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(d + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(d + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(d + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
        _mm256_storeu_ps(d + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (; p < kc; p++)
        for (int i = 0; i < 8; i++) dst[p * ld + i] = r[i][p];
}

// dst[p * ld + i] = r[i][p] for i < 4, p < kc.
void ep_dpack_t4_avx2(const double *const *r, ep_dim_t kc, double *dst,
                      ep_inc_t ld)
{
    ep_dim_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        __m256d x0 = _mm256_loadu_pd(r[0] + p), x1 = _mm256_loadu_pd(r[1] + p);
        __m256d x2 = _mm256_loadu_pd(r[2] + p), x3 = _mm256_loadu_pd(r[3] + p);
        __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1);
        __m256d t2 = _mm256_unpacklo_pd(x2, x3), t3 = _mm256_unpackhi_pd(x2, x3);
        double *d = dst + p * ld;
        _mm256_storeu_pd(d + 0 * ld, _mm256_permute2f128_pd(t0, t2, 0x20));
        _mm256_storeu_pd(d + 1 * ld, _mm256_permute2f128_pd(t1, t3, 0x20));
        _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(t0, t2, 0x31));
        _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
    for (; p < kc; p++)
        for (int i = 0; i < 4; i++) dst[p * ld + i] = r[i][p];
}

// dst[p * 6 + i] = r[i][p] for i < 6, p < kc: an AVX2 micro-panel of A.
// The 8 x 8 transpose above with two zero rows; each transposed row is
// stored whole, 8 floats at dst + 6 q, and its last two (zeros) are
// overwritten by the next row's store.  The 8th row's overrun lands on step
// p + 8, so the loop stops while one more step follows.
void ep_spack_t6_avx2(const float *const *r, ep_dim_t kc, float *dst)
{
    ep_dim_t p = 0;
    const __m256 z = _mm256_setzero_ps();
    for (; p + 8 < kc; p += 8) {
        __m256 x0 = _mm256_loadu_ps(r[0] + p), x1 = _mm256_loadu_ps(r[1] + p);
        __m256 x2 = _mm256_loadu_ps(r[2] + p), x3 = _mm256_loadu_ps(r[3] + p);
        __m256 x4 = _mm256_loadu_ps(r[4] + p), x5 = _mm256_loadu_ps(r[5] + p);
        __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
        __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
        __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u4 = _mm256_shuffle_ps(t4, z, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u5 = _mm256_shuffle_ps(t4, z, _MM_SHUFFLE(3, 2, 3, 2));
        __m256 u6 = _mm256_shuffle_ps(t5, z, _MM_SHUFFLE(1, 0, 1, 0));
        __m256 u7 = _mm256_shuffle_ps(t5, z, _MM_SHUFFLE(3, 2, 3, 2));
        float *d = dst + p * 6;
        _mm256_storeu_ps(d + 0 * 6, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(d + 1 * 6, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(d + 2 * 6, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(d + 3 * 6, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(d + 4 * 6, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(d + 5 * 6, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(d + 6 * 6, _mm256_permute2f128_ps(u2, u6, 0x31));
        _mm256_storeu_ps(d + 7 * 6, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (; p < kc; p++)
        for (int i = 0; i < 6; i++) dst[p * 6 + i] = r[i][p];
}

// dst[p * 6 + i] = r[i][p] for i < 6, p < kc: rows 0-3 by the 4 x 4
// transpose above, rows 4 and 5 as pairs (128-bit stores).
void ep_dpack_t6_avx2(const double *const *r, ep_dim_t kc, double *dst)
{
    ep_dim_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        __m256d x0 = _mm256_loadu_pd(r[0] + p), x1 = _mm256_loadu_pd(r[1] + p);
        __m256d x2 = _mm256_loadu_pd(r[2] + p), x3 = _mm256_loadu_pd(r[3] + p);
        __m256d x4 = _mm256_loadu_pd(r[4] + p), x5 = _mm256_loadu_pd(r[5] + p);
        __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1);
        __m256d t2 = _mm256_unpacklo_pd(x2, x3), t3 = _mm256_unpackhi_pd(x2, x3);
        __m256d t4 = _mm256_unpacklo_pd(x4, x5), t5 = _mm256_unpackhi_pd(x4, x5);
        double *d = dst + p * 6;
        _mm256_storeu_pd(d + 0 * 6, _mm256_permute2f128_pd(t0, t2, 0x20));
        _mm_storeu_pd(d + 0 * 6 + 4, _mm256_castpd256_pd128(t4));
        _mm256_storeu_pd(d + 1 * 6, _mm256_permute2f128_pd(t1, t3, 0x20));
        _mm_storeu_pd(d + 1 * 6 + 4, _mm256_castpd256_pd128(t5));
        _mm256_storeu_pd(d + 2 * 6, _mm256_permute2f128_pd(t0, t2, 0x31));
        _mm_storeu_pd(d + 2 * 6 + 4, _mm256_extractf128_pd(t4, 1));
        _mm256_storeu_pd(d + 3 * 6, _mm256_permute2f128_pd(t1, t3, 0x31));
        _mm_storeu_pd(d + 3 * 6 + 4, _mm256_extractf128_pd(t5, 1));
    }
    for (; p < kc; p++)
        for (int i = 0; i < 6; i++) dst[p * 6 + i] = r[i][p];
}
