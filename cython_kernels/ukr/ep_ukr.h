// ep_ukr.h -- THE micro-kernel contract (cf. BLIS docs/KernelsHowTo.md).
//
//   void ukr(m, n, k, a, b, ldb, c, rs_c, cs_c, alpha, beta, b_next)
//
//   c(i, j) = alpha * sum_p a[p*MR + i] * b[p*ldb + j] + beta * c(i, j)
//   for 0 <= i < m <= MR, 0 <= j < n <= NR, where c(i, j) = c[i*rs_c + j*cs_c].
//
// - a: packed micro-panel of A, k columns of MR values (column p at a + p*MR,
//   64-byte aligned, fringe zero-padded by the packing routine).
// - b: k rows of NR values, row p at b + p*ldb: a packed micro-panel
//   (ldb == NR) or, when m is too small to repay packing, B itself where its
//   n stride is 1 (ldb = B's k stride; no alignment assumed).
// - The kernel always computes a full MR x NR tile in registers (the packed
//   panels are zero-padded) and stores only its m x n corner: with masked
//   vector stores where the ISA has them (AVX-512), else through a private
//   tile.  No element of C outside the m x n corner is read or written.
//   Tiles whose C offsets are not regular (scattered multi-axis groups) are
//   handled by the caller through a private tile.
// - beta == 0 never reads C: C may hold NaN or garbage.
// - k may be 0 (then c = beta * c, or 0 when beta == 0).
// - b_next (may be NULL) is a prefetch hint, never read for the result.  With
//   a packed b (ldb == NR) the kernel fetches one cache line from it every 8
//   k steps, kc/8 lines in all (the caller hands each call its slice of the
//   next micro-panel of B).  With B read in place (ldb != NR) it is the next
//   NR panel of the same rows, row p at b_next + p*ldb, and the kernel fetches
//   that row's NR values at every k step.
// - The vectors run along n (j): the kernel is fastest with cs_c == 1, so the
//   planner orients each step to put C's unit stride in the n group.
#ifndef EP_UKR_H
#define EP_UKR_H

#include "../ep_types.h"

// Asks for the lines of `bytes` bytes from p, a run that need not start on
// a line: each 64 bytes on, and the line of its last byte.  The prefetch a
// B read in place needs one panel ahead (the micro-kernels' b_next, and a
// panel packed alone, ep_pack_template.h).
static inline void ep_prefetch_run(const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch(c + o, 0, 3);
    __builtin_prefetch(c + bytes - 1, 0, 3);
}

typedef void (*ep_sgemm_ukr_fn)(int m, int n, ep_dim_t k, const float *a, const float *b,
                                ep_inc_t ldb, float *c, ep_inc_t rs_c, ep_inc_t cs_c,
                                float alpha, float beta, const void *b_next);
typedef void (*ep_dgemm_ukr_fn)(int m, int n, ep_dim_t k, const double *a, const double *b,
                                ep_inc_t ldb, double *c, ep_inc_t rs_c, ep_inc_t cs_c,
                                double alpha, double beta, const void *b_next);

// Level-1 kernels of the GEMV path (ep_l1_template.h has the contract).
typedef void (*ep_sdot4_fn)(ep_dim_t k, const float *x, const float *a0,
                            const float *a1, const float *a2, const float *a3,
                            float *out);
typedef void (*ep_ddot4_fn)(ep_dim_t k, const double *x, const double *a0,
                            const double *a1, const double *a2,
                            const double *a3, double *out);
typedef float (*ep_sdot1_fn)(ep_dim_t k, const float *x, const float *a);
typedef double (*ep_ddot1_fn)(ep_dim_t k, const double *x, const double *a);
// Small in-place GEMM (ep_l1_template.h); NULL where the ISA has none.
typedef void (*ep_ssmm_fn)(int m, int n, ep_dim_t k, const float *a,
                           ep_inc_t rsa, ep_inc_t csa, const float *b,
                           ep_inc_t rsb, float *c, ep_inc_t rsc, float alpha,
                           float beta);
typedef void (*ep_dsmm_fn)(int m, int n, ep_dim_t k, const double *a,
                           ep_inc_t rsa, ep_inc_t csa, const double *b,
                           ep_inc_t rsb, double *c, ep_inc_t rsc, double alpha,
                           double beta);
// Passes the smm kernel makes over B for m rows of n columns.
typedef ep_dim_t (*ep_smm_passes_fn)(ep_dim_t m, ep_dim_t n);
typedef void (*ep_saxpy_fn)(ep_dim_t n, float alpha, const float *a, float *y);
typedef void (*ep_daxpy_fn)(ep_dim_t n, double alpha, const double *a,
                            double *y);

#define EP_NARROW 2

typedef enum { EP_ISA_GENERIC = 0, EP_ISA_AVX2 = 1, EP_ISA_AVX512 = 2,
               EP_ISA_COUNT = 3 } ep_isa_t;

// One entry per ISA: the tile shapes and kernels for both dtypes.
typedef struct {
    ep_isa_t isa;
    const char *name;
    int s_mr, s_nr;          // float32 tile
    int d_mr, d_nr;          // float64 tile
    ep_sgemm_ukr_fn sgemm;
    ep_dgemm_ukr_fn dgemm;
    ep_sdot4_fn sdot4;
    ep_ddot4_fn ddot4;
    ep_sdot1_fn sdot1;
    ep_ddot1_fn ddot1;
    ep_saxpy_fn saxpy;
    ep_daxpy_fn daxpy;
    ep_ssmm_fn ssmm;
    ep_dsmm_fn dsmm;
    int smm_max_n_s, smm_max_n_d;   // largest n the smm kernels take
    ep_smm_passes_fn ssmm_passes, dsmm_passes;   // NULL with ssmm / dsmm
    // narrower kernels for a partial last panel of n: widths ascending,
    // 0 = none (the full kernel then stores the n columns it is given)
    int s_narrow_nr[EP_NARROW], d_narrow_nr[EP_NARROW];
    ep_sgemm_ukr_fn s_narrow[EP_NARROW];
    ep_dgemm_ukr_fn d_narrow[EP_NARROW];
    // columns of B one block of the smm kernel reads per k step, where that
    // block must stay in L1d for smm to beat packing (k is then bounded by
    // the L1d size); 0 where B streaming from L2 keeps up (any k)
    int smm_l1_cols_s, smm_l1_cols_d;
    // the most rows of C for which the packed path reads full B panels in
    // place instead of packing them (ep_schedule.c has the measurements)
    int direct_b_max_m_s, direct_b_max_m_d;
} ep_ukr_set_t;

// Largest tile any kernel uses, for the stack tile of edge cases.
#define EP_MAX_MR 16
#define EP_MAX_NR 64

extern const ep_ukr_set_t ep_ukr_set_generic;
extern const ep_ukr_set_t ep_ukr_set_avx2;
extern const ep_ukr_set_t ep_ukr_set_avx512;

// The set in use (ep_dispatch.c): the best the CPU runs, or EINPLAN_ISA's.
const ep_ukr_set_t *ep_ukr_set(void);

#endif
