// float32 AVX-512F micro-kernel and level-1 kernels, tile 8 x 48 (3 zmm per row of C).
// Same register map as the f64 8x24 kernel with 16 lanes per zmm.
#pragma GCC target("avx512f,fma")
// B's micro-panel streams from L2 (ep_ukr_template.h: EP_UKR_PREFETCH_B)
#define EP_UKR_PREFETCH_B 8
#include <immintrin.h>
#include "ep_ukr_kernels.h"

#define UKR_NAME ep_sgemm_ukr_avx512_8x48
#define UKR_T float
#define UKR_MR 8
#define UKR_NV 3
#define VEC __m512
#define VL 16
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_STOREU(p, v) _mm512_storeu_ps(p, v)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define EP_MASK_T __mmask16
#define V_MASK_LOADU(p, k) _mm512_maskz_loadu_ps(k, p)
#define V_MASK_STOREU(p, k, v) _mm512_mask_storeu_ps(p, k, v)
#define V_MASK_FIRST(t) ((__mmask16)((t) >= 16 ? 0xFFFFu : (1u << (t)) - 1))
#define EP_SMM_VREGS 32
#define EP_SMM_BLOCKV 4
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#include "ep_ukr_template.h"

// narrow variants for the last, partial NR panel of n (n = 256 with NR = 48
// would otherwise compute 288 columns): the same body with fewer vectors
#undef UKR_NAME
#undef UKR_NV
#define UKR_NAME ep_sgemm_ukr_avx512_8x16
#define UKR_NV 1
#include "ep_ukr_template.h"
#undef UKR_NAME
#undef UKR_NV
#define UKR_NAME ep_sgemm_ukr_avx512_8x32
#define UKR_NV 2
#include "ep_ukr_template.h"

// the GEMV path's level-1 kernels for the same ISA and dtype
#define EP_L1(x) ep_s##x##_avx512
#include "ep_l1_template.h"
