// ep_pack.h -- scatter vectors and packing (ep_pack.c).
//
// A block of a role group is described by its scatter vector: the element
// offset of each of its indices in one operand.  Per micro-panel (MR or NR
// indices) a block stride says whether those offsets are regular: then
// packing reads with one stride; otherwise it gathers (TBLIS's
// block-scatter layout).  Nothing is ever copied outside the packed buffers.
#ifndef EP_PACK_H
#define EP_PACK_H

#include "ep_api.h"

#define EP_ROUND_UP(x, r) (((x) + (r) - 1) / (r) * (r))
// Start of the (jc, pc) block in one batch index of prepacked B (jc a
// multiple of nc): jc blocks of K x round_up(nc, NR), each pc-major.
#define EP_PACKED_B_BLOCK(jc, pc, nc, npanel, K, NR) \
    ((jc) / (nc) * (K) * EP_ROUND_UP(nc, NR) + (pc) * (npanel) * (NR))

// The block stride of an irregular micro-panel.
#define EP_IRREGULAR INT64_MIN

// Number of indices of a role group (1 for an empty group).
static inline ep_dim_t ep_group_size(const ep_group_t *g)
{
    ep_dim_t n = 1;
    for (int i = 0; i < g->ndim; i++) n *= g->extent[i];
    return n;
}

// Offsets of batch index `bi` in A, B, C.
static inline void ep_batch_offsets(const ep_group_t *g, ep_dim_t bi,
                                    ep_inc_t *oa, ep_inc_t *ob, ep_inc_t *oc)
{
    if (g->ndim == 1) {      // the common merged batch: no division per GEMM
        *oa = (ep_inc_t)bi * g->stride[EP_BATCH_A][0];
        *ob = (ep_inc_t)bi * g->stride[EP_BATCH_B][0];
        *oc = (ep_inc_t)bi * g->stride[EP_BATCH_C][0];
        return;
    }
    *oa = *ob = *oc = 0;
    for (int x = g->ndim - 1; x >= 0; x--) {
        ep_dim_t i = bi % g->extent[x];
        bi /= g->extent[x];
        *oa += i * g->stride[EP_BATCH_A][x];
        *ob += i * g->stride[EP_BATCH_B][x];
        *oc += i * g->stride[EP_BATCH_C][x];
    }
}

// off[t] = offset of linear index start + t of group g in operand op,
// for 0 <= t < len (the last axis of the group varies fastest).
void ep_scatter(const ep_group_t *g, int op, ep_dim_t start, ep_dim_t len,
                ep_inc_t *off);

// If the offsets of indices [start, start + len) of group g in operand op
// are base + t * stride (the block lies in one run of the innermost axis),
// set *base and *stride and return 1; else return 0 (use ep_scatter).
int ep_affine(const ep_group_t *g, int op, ep_dim_t start, ep_dim_t len,
              ep_inc_t *base, ep_inc_t *stride);

// For each micro-panel of `width` indices in off[0:len): its single stride,
// or EP_IRREGULAR.  A panel of one index is regular with stride 1.
void ep_block_strides(const ep_inc_t *off, ep_dim_t len, int width,
                      ep_inc_t *bs);

// Single stride of the whole of off[0:len), or EP_IRREGULAR.
ep_inc_t ep_regular_stride(const ep_inc_t *off, ep_dim_t len);

// Pack micro-panels [p0, p1) of an mc x kc block of A into MR-wide
// micro-panels (column p of panel ip at ap + ip*MR*kc + p*MR).
void ep_spack_a(int MR, ep_dim_t mc, ep_dim_t kc, const float *a,
                const ep_inc_t *moff, const ep_inc_t *mbs,
                const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0, ep_dim_t p1,
                float *ap);
void ep_dpack_a(int MR, ep_dim_t mc, ep_dim_t kc, const double *a,
                const ep_inc_t *moff, const ep_inc_t *mbs,
                const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0, ep_dim_t p1,
                double *ap);
// Pack micro-panels [p0, p1) of a kc x nc panel of B into NR-wide
// micro-panels (row p of panel jp at bp + jp*NR*kc + p*NR).
void ep_spack_b(int NR, ep_dim_t nc, ep_dim_t kc, const float *b,
                const ep_inc_t *noff, const ep_inc_t *nbs,
                const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0, ep_dim_t p1,
                float *bp);
void ep_dpack_b(int NR, ep_dim_t nc, ep_dim_t kc, const double *b,
                const ep_inc_t *noff, const ep_inc_t *nbs,
                const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0, ep_dim_t p1,
                double *bp);

// 1m (ep_api.h): micro-panels [p0, p1) of a kc x nc real panel of complex
// B as 2x2 blocks; noff / koff are the real offsets of the panel's columns /
// rows (both pairs of one complex element point at it), kc and nc are even.
void ep_spack_b_1m(int NR, ep_dim_t nc, ep_dim_t kc, const float *b,
                   const ep_inc_t *noff, const ep_inc_t *koff, int cplx,
                   ep_dim_t p0, ep_dim_t p1, float *bp);
void ep_dpack_b_1m(int NR, ep_dim_t nc, ep_dim_t kc, const double *b,
                   const ep_inc_t *noff, const ep_inc_t *koff, int cplx,
                   ep_dim_t p0, ep_dim_t p1, double *bp);

// B of the in-place small GEMM (ep_smm.c) whose n is not unit-stride
// ('bik,bjk->bij'): its K x N block as rows of N, dst[p * N + j] =
// b[j * sn + p * sk], through the packing transposes when k is contiguous.
void ep_sgather_kn(ep_dim_t N, ep_dim_t K, const float *b, ep_inc_t sn,
                   ep_inc_t sk, float *dst);
void ep_dgather_kn(ep_dim_t N, ep_dim_t K, const double *b, ep_inc_t sn,
                   ep_inc_t sk, double *dst);

// The transposing inner loop (isa/ep_pack_avx2.c, x86 only): dst[p * ld + i] =
// r[i][p] for the 8 (float) / 4 (double) rows r, each contiguous along k.
void ep_spack_t8_avx2(const float *const *r, ep_dim_t kc, float *dst,
                      ep_inc_t ld);
void ep_dpack_t4_avx2(const double *const *r, ep_dim_t kc, double *dst,
                      ep_inc_t ld);
// The same for the 6 rows of an AVX2 micro-panel of A (MR = 6), into a
// panel 6 wide: dst[p * 6 + i] = r[i][p] for i < 6.
void ep_spack_t6_avx2(const float *const *r, ep_dim_t kc, float *dst);
void ep_dpack_t6_avx2(const double *const *r, ep_dim_t kc, double *dst);

#endif
