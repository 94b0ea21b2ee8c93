// Portable C micro-kernels: the fallback on CPUs without AVX2 (and on other
// architectures) and the test oracle for the SIMD kernels.  Plain loops; the
// compiler vectorizes them with whatever the baseline ISA offers.
#include "ep_ukr.h"

#define EP_REF_UKR(NAME, T, MR, NR)                                           \
    void NAME(ep_dim_t k, const T *restrict a, const T *restrict b,           \
              T *restrict c, ep_inc_t rs_c, ep_inc_t cs_c, T alpha, T beta)   \
    {                                                                         \
        T acc[MR][NR] = {{0}};                                                \
        for (ep_dim_t p = 0; p < k; p++, a += MR, b += NR)                    \
            for (int i = 0; i < MR; i++)                                      \
                for (int j = 0; j < NR; j++)                                  \
                    acc[i][j] += a[i] * b[j];                                 \
        for (int i = 0; i < MR; i++)                                          \
            for (int j = 0; j < NR; j++) {                                    \
                T *cij = c + i * rs_c + j * cs_c;                             \
                /* beta == 0 never reads C */                                 \
                *cij = beta == 0 ? alpha * acc[i][j]                          \
                                 : alpha * acc[i][j] + beta * *cij;           \
            }                                                                 \
    }

EP_REF_UKR(ep_sgemm_ukr_ref_4x16, float, 4, 16)
EP_REF_UKR(ep_dgemm_ukr_ref_4x8, double, 4, 8)

void ep_sgemm_ukr_avx512_8x48(ep_dim_t, const float *, const float *, float *,
                              ep_inc_t, ep_inc_t, float, float);
void ep_dgemm_ukr_avx512_8x24(ep_dim_t, const double *, const double *,
                              double *, ep_inc_t, ep_inc_t, double, double);
void ep_sgemm_ukr_avx2_6x16(ep_dim_t, const float *, const float *, float *,
                            ep_inc_t, ep_inc_t, float, float);
void ep_dgemm_ukr_avx2_6x8(ep_dim_t, const double *, const double *, double *,
                           ep_inc_t, ep_inc_t, double, double);

// The registry: one entry per ISA (ep_dispatch.c picks one at import).
const ep_ukr_set_t ep_ukr_set_generic = {
    EP_ISA_GENERIC, "generic", 4, 16, 4, 8,
    ep_sgemm_ukr_ref_4x16, ep_dgemm_ukr_ref_4x8};
#if defined(__x86_64__) || defined(_M_X64)
const ep_ukr_set_t ep_ukr_set_avx2 = {
    EP_ISA_AVX2, "avx2", 6, 16, 6, 8,
    ep_sgemm_ukr_avx2_6x16, ep_dgemm_ukr_avx2_6x8};
const ep_ukr_set_t ep_ukr_set_avx512 = {
    EP_ISA_AVX512, "avx512", 8, 48, 8, 24,
    ep_sgemm_ukr_avx512_8x48, ep_dgemm_ukr_avx512_8x24};
#endif
