// ep_ukr_kernels.h -- the prototype of every kernel of every set, in one
// place: the files under ukr/ define them (each ISA file compiled with its
// own target pragma) and include this header, so a definition that drifts
// from its prototype fails to compile; the registry (ep_ukr_registry.c)
// takes their addresses.
#ifndef EP_UKR_KERNELS_H
#define EP_UKR_KERNELS_H

#include "ep_ukr.h"

// Micro-kernels (ep_ukr.h has the contract), named by ISA and MR x NR tile.
#define EP_UKR_DECL(NAME, T)                                                  \
    void NAME(int m, int n, ep_dim_t k, const T *a, const T *b, ep_inc_t ldb, \
              T *c, ep_inc_t rs_c, ep_inc_t cs_c, T alpha, T beta,            \
              const void *b_next);
EP_UKR_DECL(ep_sgemm_ukr_ref_4x16, float)
EP_UKR_DECL(ep_dgemm_ukr_ref_4x8, double)
EP_UKR_DECL(ep_sgemm_ukr_avx2_6x16, float)
EP_UKR_DECL(ep_dgemm_ukr_avx2_6x8, double)
EP_UKR_DECL(ep_sgemm_ukr_avx512_8x48, float)
EP_UKR_DECL(ep_dgemm_ukr_avx512_8x24, double)
// AVX-512's narrower kernels for a partial last panel of n
EP_UKR_DECL(ep_sgemm_ukr_avx512_8x16, float)
EP_UKR_DECL(ep_sgemm_ukr_avx512_8x32, float)
EP_UKR_DECL(ep_dgemm_ukr_avx512_8x8, double)
EP_UKR_DECL(ep_dgemm_ukr_avx512_8x16, double)
#undef EP_UKR_DECL

// Level-1 kernels of the GEMV path and the small in-place GEMM (smm) of
// each set (ep_l1_template.h has the contracts); the portable set has no smm.
#define EP_L1_DECL(ISA)                                                       \
    void ep_sdot4_##ISA(ep_dim_t, const float *, const float *, const float *, \
                        const float *, const float *, float *);                \
    void ep_ddot4_##ISA(ep_dim_t, const double *, const double *,              \
                        const double *, const double *, const double *,        \
                        double *);                                             \
    float ep_sdot1_##ISA(ep_dim_t, const float *, const float *);              \
    double ep_ddot1_##ISA(ep_dim_t, const double *, const double *);           \
    void ep_saxpy_##ISA(ep_dim_t, float, const float *, float *);              \
    void ep_daxpy_##ISA(ep_dim_t, double, const double *, double *);
#define EP_SMM_DECL(ISA)                                                      \
    void ep_ssmm_##ISA(int, int, ep_dim_t, const float *, ep_inc_t, ep_inc_t,  \
                       const float *, ep_inc_t, float *, ep_inc_t, float,      \
                       float);                                                 \
    void ep_dsmm_##ISA(int, int, ep_dim_t, const double *, ep_inc_t, ep_inc_t, \
                       const double *, ep_inc_t, double *, ep_inc_t, double,   \
                       double);                                                \
    ep_dim_t ep_ssmm_b_passes_##ISA(ep_dim_t, ep_dim_t);                      \
    ep_dim_t ep_dsmm_b_passes_##ISA(ep_dim_t, ep_dim_t);
EP_L1_DECL(ref)
EP_L1_DECL(avx2)
EP_L1_DECL(avx512)
EP_SMM_DECL(avx2)
EP_SMM_DECL(avx512)
#undef EP_L1_DECL
#undef EP_SMM_DECL

#endif
