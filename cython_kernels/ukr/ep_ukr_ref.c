// Portable C micro-kernels: the fallback on CPUs without AVX2 (and on other
// architectures) and the test oracle for the SIMD kernels.  Plain loops; the
// compiler vectorizes them with whatever the baseline ISA offers.
#include "ep_ukr.h"

#define EP_REF_UKR(NAME, T, MR, NR)                                           \
    void NAME(int m, int n, ep_dim_t k, const T *restrict a,                  \
              const T *restrict b,                                            \
              ep_inc_t ldb, T *restrict c, ep_inc_t rs_c, ep_inc_t cs_c, T alpha,      \
              T beta, const void *b_next)                                     \
    {                                                                         \
        (void)b_next;                                                         \
        T acc[MR][NR] = {{0}};                                                \
        for (ep_dim_t p = 0; p < k; p++, a += MR, b += ldb)                   \
            for (int i = 0; i < MR; i++)                                      \
                for (int j = 0; j < NR; j++)                                  \
                    acc[i][j] += a[i] * b[j];                                 \
        for (int i = 0; i < m; i++)                                           \
            for (int j = 0; j < n; j++) {                                     \
                T *cij = c + i * rs_c + j * cs_c;                             \
                /* beta == 0 never reads C */                                 \
                *cij = beta == 0 ? alpha * acc[i][j]                          \
                                 : alpha * acc[i][j] + beta * *cij;           \
            }                                                                 \
    }

EP_REF_UKR(ep_sgemm_ukr_ref_4x16, float, 4, 16)
EP_REF_UKR(ep_dgemm_ukr_ref_4x8, double, 4, 8)

// Level-1 kernels of the GEMV path: ep_l1_template.h on scalar "vectors".
#define VEC UKR_T
#define VL 1
#define V_ZERO() ((UKR_T)0)
#define V_SET1(x) (x)
#define V_LOADU(p) (*(p))
#define V_STOREU(p, v) (*(p) = (v))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_ADD(a, b) ((a) + (b))
#define UKR_T float
#define EP_L1(x) ep_s##x##_ref
#include "ep_l1_template.h"
#undef UKR_T
#undef EP_L1
#define UKR_T double
#define EP_L1(x) ep_d##x##_ref
#include "ep_l1_template.h"

void ep_sgemm_ukr_avx512_8x48(int, int, ep_dim_t, const float *, const float *, ep_inc_t, float *,
                              ep_inc_t, ep_inc_t, float, float, const void *);
void ep_dgemm_ukr_avx512_8x24(int, int, ep_dim_t, const double *, const double *, ep_inc_t,
                              double *, ep_inc_t, ep_inc_t, double, double, const void *);
void ep_sgemm_ukr_avx2_6x16(int, int, ep_dim_t, const float *, const float *, ep_inc_t, float *,
                            ep_inc_t, ep_inc_t, float, float, const void *);
void ep_dgemm_ukr_avx2_6x8(int, int, ep_dim_t, const double *, const double *, ep_inc_t, double *,
                           ep_inc_t, ep_inc_t, double, double, const void *);

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
void ep_sgemm_ukr_avx512_8x16(int, int, ep_dim_t, const float *, const float *,
                              ep_inc_t, float *, ep_inc_t, ep_inc_t, float, float,
                              const void *);
void ep_sgemm_ukr_avx512_8x32(int, int, ep_dim_t, const float *, const float *,
                              ep_inc_t, float *, ep_inc_t, ep_inc_t, float, float,
                              const void *);
void ep_dgemm_ukr_avx512_8x8(int, int, ep_dim_t, const double *, const double *,
                             ep_inc_t, double *, ep_inc_t, ep_inc_t, double, double,
                             const void *);
void ep_dgemm_ukr_avx512_8x16(int, int, ep_dim_t, const double *, const double *,
                              ep_inc_t, double *, ep_inc_t, ep_inc_t, double, double,
                             const void *);
void ep_ssmm_avx512(int, int, ep_dim_t, const float *, ep_inc_t, ep_inc_t,
                    const float *, ep_inc_t, float *, ep_inc_t, float, float);
void ep_dsmm_avx512(int, int, ep_dim_t, const double *, ep_inc_t, ep_inc_t,
                    const double *, ep_inc_t, double *, ep_inc_t, double, double);
void ep_ssmm_avx2(int, int, ep_dim_t, const float *, ep_inc_t, ep_inc_t,
                  const float *, ep_inc_t, float *, ep_inc_t, float, float);
void ep_dsmm_avx2(int, int, ep_dim_t, const double *, ep_inc_t, ep_inc_t,
                  const double *, ep_inc_t, double *, ep_inc_t, double, double);
EP_L1_DECL(ref)
EP_L1_DECL(avx2)
EP_L1_DECL(avx512)
#define EP_L1_FNS(ISA) ep_sdot4_##ISA, ep_ddot4_##ISA, ep_sdot1_##ISA, \
    ep_ddot1_##ISA, ep_saxpy_##ISA, ep_daxpy_##ISA

// The registry: one entry per ISA (ep_dispatch.c picks one at import).
const ep_ukr_set_t ep_ukr_set_generic = {
    EP_ISA_GENERIC, "generic", 4, 16, 4, 8,
    ep_sgemm_ukr_ref_4x16, ep_dgemm_ukr_ref_4x8, EP_L1_FNS(ref), NULL, NULL, 0, 0,
    {0, 0}, {0, 0}, {NULL, NULL}, {NULL, NULL}, 0, 0, 256, 256};
#if defined(__x86_64__) || defined(_M_X64)
const ep_ukr_set_t ep_ukr_set_avx2 = {
    EP_ISA_AVX2, "avx2", 6, 16, 6, 8,
    ep_sgemm_ukr_avx2_6x16, ep_dgemm_ukr_avx2_6x8, EP_L1_FNS(avx2),
    ep_ssmm_avx2, ep_dsmm_avx2, 64, 32,
    {0, 0}, {0, 0}, {NULL, NULL}, {NULL, NULL}, 24, 12, 16, 6};
const ep_ukr_set_t ep_ukr_set_avx512 = {
    EP_ISA_AVX512, "avx512", 8, 48, 8, 24,
    ep_sgemm_ukr_avx512_8x48, ep_dgemm_ukr_avx512_8x24, EP_L1_FNS(avx512),
    ep_ssmm_avx512, ep_dsmm_avx512, 128, 64,
    {16, 32}, {8, 16},
    {ep_sgemm_ukr_avx512_8x16, ep_sgemm_ukr_avx512_8x32},
    {ep_dgemm_ukr_avx512_8x8, ep_dgemm_ukr_avx512_8x16}, 0, 0, 256, 256};
#endif
