// ep_pack.c -- scatter vectors, block strides, packing of A and B, and B
// packed once ahead of the calls (ep_pack.h and ep_api.h have the contracts).
#include <stdlib.h>
#include "ep_pack.h"
#include "ep_blocking.h"
#include "ukr/ep_ukr.h"

void ep_scatter(const ep_group_t *g, int op, ep_dim_t start, ep_dim_t len,
                ep_inc_t *off)
{
    if (len <= 0) return;
    int nd = g->ndim;
    if (nd == 0) {                       // empty group: extent 1, offset 0
        for (ep_dim_t t = 0; t < len; t++) off[t] = 0;
        return;
    }
    // multi-index of `start` (last axis fastest) and its offset
    ep_dim_t idx[EP_MAXDIM];
    ep_inc_t base = 0;
    ep_dim_t rest = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rest % g->extent[d];
        rest /= g->extent[d];
        base += idx[d] * g->stride[op][d];
    }
    const ep_dim_t inner_ext = g->extent[nd - 1];
    const ep_inc_t inner_st = g->stride[op][nd - 1];
    ep_dim_t t = 0;
    while (t < len) {
        // run along the innermost axis, then carry into the outer ones
        ep_dim_t run = inner_ext - idx[nd - 1];
        if (run > len - t) run = len - t;
        for (ep_dim_t r = 0; r < run; r++) off[t + r] = base + r * inner_st;
        t += run;
        if (t >= len) break;
        base += (run - 1) * inner_st;
        idx[nd - 1] += run - 1;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < g->extent[d]) { base += g->stride[op][d]; break; }
            base -= (g->extent[d] - 1) * g->stride[op][d];
            idx[d] = 0;
        }
    }
}

int ep_affine(const ep_group_t *g, int op, ep_dim_t start, ep_dim_t len,
              ep_inc_t *base, ep_inc_t *stride)
{
    int nd = g->ndim;
    if (nd == 0) { *base = 0; *stride = 0; return 1; }
    ep_inc_t b = 0;
    ep_dim_t rest = start, inner = 0;
    for (int d = nd - 1; d >= 0; d--) {
        ep_dim_t i = rest % g->extent[d];
        rest /= g->extent[d];
        b += i * g->stride[op][d];
        if (d == nd - 1) inner = i;
    }
    if (inner + len > g->extent[nd - 1]) return 0;
    *base = b;
    *stride = g->stride[op][nd - 1];
    return 1;
}

ep_inc_t ep_regular_stride(const ep_inc_t *off, ep_dim_t len)
{
    if (len <= 1) return 1;
    ep_inc_t s = off[1] - off[0];
    for (ep_dim_t t = 2; t < len; t++)
        if (off[t] - off[t - 1] != s) return EP_IRREGULAR;
    return s;
}

void ep_block_strides(const ep_inc_t *off, ep_dim_t len, int width,
                      ep_inc_t *bs)
{
    for (ep_dim_t i0 = 0, ib = 0; i0 < len; i0 += width, ib++)
        bs[ib] = ep_regular_stride(off + i0, len - i0 < width ? len - i0 : width);
}

// Rows contiguous along k go through the AVX2 transposes when the kernel
// set in use has AVX2 (EINPLAN_ISA=generic keeps the element loop).
#if defined(__x86_64__) || defined(_M_X64)
#define EP_PACK_SIMD() (ep_isa() >= EP_ISA_AVX2)
#else
#define EP_PACK_SIMD() 0
#endif

// 16-byte vectors of the compiler's vector extension for 1m packing: N
// elements, a vector of two values repeated pairwise, complex pairs swapped
typedef float ep_v4sf __attribute__((vector_size(16)));
typedef int ep_v4si __attribute__((vector_size(16)));
typedef double ep_v2df __attribute__((vector_size(16)));
typedef long long ep_v2di __attribute__((vector_size(16)));

#define T float
#define EP_PFX(x) ep_s##x
#define EP_V16 ep_v4sf
#define EP_V16_N 4
#define EP_V16_PAIRS(a, b) ((ep_v4sf){(a), (b), (a), (b)})
#define EP_V16_SWAP(v) __builtin_shuffle((v), (ep_v4si){1, 0, 3, 2})
#define EP_TGROUP 8
#define EP_TPACK ep_spack_t8_avx2
#define EP_TPACK6 ep_spack_t6_avx2
#include "ep_pack_template.h"
#undef T
#undef EP_PFX
#undef EP_TGROUP
#undef EP_TPACK
#undef EP_TPACK6
#undef EP_V16
#undef EP_V16_N
#undef EP_V16_PAIRS
#undef EP_V16_SWAP

#define T double
#define EP_PFX(x) ep_d##x
#define EP_V16 ep_v2df
#define EP_V16_N 2
#define EP_V16_PAIRS(a, b) ((ep_v2df){(a), (b)})
#define EP_V16_SWAP(v) __builtin_shuffle((v), (ep_v2di){1, 0})
#define EP_TGROUP 4
#define EP_TPACK ep_dpack_t4_avx2
#define EP_TPACK6 ep_dpack_t6_avx2
#include "ep_pack_template.h"
#undef T
#undef EP_PFX
#undef EP_TGROUP
#undef EP_TPACK
#undef EP_TPACK6
#undef EP_V16
#undef EP_V16_N
#undef EP_V16_PAIRS
#undef EP_V16_SWAP

// ------------------------------------------------------------ prepacked B
ep_dim_t ep_packed_b_size(const ep_gemm_desc_t *d)
{
    ep_blocking_t bk = ep_blocking(d->dtype);
    ep_dim_t K = ep_group_size(&d->g->k), N = ep_group_size(&d->g->n);
    ep_kn_blocks(&bk, K, N, d->cplx);
    return ep_group_size(&d->g->batch) * ep_packed_b_batch_elems(&bk, K, N);
}

ep_status_t ep_pack_b_all(const ep_gemm_desc_t *d, void *buf)
{
    ep_blocking_t bk = ep_blocking(d->dtype);
    ep_dim_t K = ep_group_size(&d->g->k), N = ep_group_size(&d->g->n);
    ep_dim_t NB = ep_group_size(&d->g->batch);
    if (K == 0 || N == 0 || NB == 0) return EP_OK;
    ep_kn_blocks(&bk, K, N, d->cplx);
    ep_dim_t per = ep_packed_b_batch_elems(&bk, K, N);
    ep_inc_t *noff = malloc(sizeof(ep_inc_t) * (size_t)(2 * bk.nc + 1 + bk.kc));
    if (!noff) return EP_ERR_NOMEM;
    ep_inc_t *nbs = noff + bk.nc, *koff = nbs + bk.nc + 1;
    for (ep_dim_t bi = 0; bi < NB; bi++) {
        ep_inc_t oa, ob, oc;
        ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
        if (d->dtype == EP_FLOAT32)
            ep_spack_b_all(d, bk.nr, K, N, bk.kc, bk.nc, (const float *)d->b + ob,
                           (float *)buf + bi * per, noff, nbs, koff);
        else
            ep_dpack_b_all(d, bk.nr, K, N, bk.kc, bk.nc, (const double *)d->b + ob,
                           (double *)buf + bi * per, noff, nbs, koff);
    }
    free(noff);
    return EP_OK;
}
