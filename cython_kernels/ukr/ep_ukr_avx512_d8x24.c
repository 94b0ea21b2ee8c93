// float64 AVX-512F micro-kernel and level-1 kernels, tile 8 x 24 (3 zmm per row of C).
// Zen 4 runs a zmm FMA as two 256-bit halves: 24 FMAs per k step cover the
// 4-cycle FMA latency with room to spare; 3 loads + 8 broadcasts per step
// fit the two load ports.  The tile shape was chosen by measurement (a C
// harness timing candidate tiles, AMD EPYC Zen 4, 2026-11-21).
#pragma GCC target("avx512f,fma")
// B's micro-panel streams from L2 (ep_ukr_template.h: EP_UKR_PREFETCH_B)
#define EP_UKR_PREFETCH_B 8
#include <immintrin.h>
#include "ep_ukr_kernels.h"

#define UKR_NAME ep_dgemm_ukr_avx512_8x24
#define UKR_T double
#define UKR_MR 8
#define UKR_NV 3
#define VEC __m512d
#define VL 8
#define V_ZERO() _mm512_setzero_pd()
#define V_SET1(x) _mm512_set1_pd(x)
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_STOREU(p, v) _mm512_storeu_pd(p, v)
#define V_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define EP_MASK_T __mmask8
#define V_MASK_LOADU(p, k) _mm512_maskz_loadu_pd(k, p)
#define V_MASK_STOREU(p, k, v) _mm512_mask_storeu_pd(p, k, v)
#define V_MASK_FIRST(t) ((__mmask8)((t) >= 8 ? 0xFFu : (1u << (t)) - 1))
#define EP_SMM_VREGS 32
#define EP_SMM_BLOCKV 4
#define V_MUL(a, b) _mm512_mul_pd(a, b)
#define V_ADD(a, b) _mm512_add_pd(a, b)
#include "ep_ukr_template.h"

// narrow variants for the last, partial NR panel of n (n = 256 with NR = 48
// would otherwise compute 288 columns): the same body with fewer vectors
#undef UKR_NAME
#undef UKR_NV
#define UKR_NAME ep_dgemm_ukr_avx512_8x8
#define UKR_NV 1
#include "ep_ukr_template.h"
#undef UKR_NAME
#undef UKR_NV
#define UKR_NAME ep_dgemm_ukr_avx512_8x16
#define UKR_NV 2
#include "ep_ukr_template.h"

// the GEMV path's level-1 kernels for the same ISA and dtype
#define EP_L1(x) ep_d##x##_avx512
#include "ep_l1_template.h"
