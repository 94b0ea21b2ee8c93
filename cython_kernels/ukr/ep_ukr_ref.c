// Portable C micro-kernels: the fallback on CPUs without AVX2 (and on other
// architectures) and the test oracle for the SIMD kernels.  Plain loops; the
// compiler vectorizes them with whatever the baseline ISA offers.
#include "ep_ukr_kernels.h"

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
