// float64 AVX2+FMA micro-kernel and level-1 kernels, tile 6 x 8 (2 ymm per row of C): 12
// accumulators + 2 rows of B + 1 broadcast of the 16 ymm registers (the
// BLIS haswell/zen3 shape).
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include "ep_ukr_kernels.h"

#define UKR_NAME ep_dgemm_ukr_avx2_6x8
#define UKR_T double
#define UKR_MR 6
#define UKR_NV 2
#define VEC __m256d
#define VL 4
#define V_ZERO() _mm256_setzero_pd()
#define V_SET1(x) _mm256_set1_pd(x)
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_STOREU(p, v) _mm256_storeu_pd(p, v)
#define V_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define V_MUL(a, b) _mm256_mul_pd(a, b)
#define V_ADD(a, b) _mm256_add_pd(a, b)
// the k loop over a packed B in assembly (ep_ukr_avx2_group.h says why)
#define EP_UKR_AVX2_BCAST "vbroadcastsd"
#define EP_UKR_AVX2_FMA "vfmadd231pd"
#define EP_UKR_AVX2_LOAD "vmovupd"
#define EP_UKR_AVX2_ES 8
#include "ep_ukr_template.h"

// the GEMV and smm paths' kernels for the same ISA and dtype; the smm
// kernel masks the last vector of a row of B and C with vmaskmov (defined
// here, after the micro-kernel, which stores its fringe through a tile)
#define EP_MASK_T __m256i
#define V_MASK_FIRST(t) _mm256_cmpgt_epi64(_mm256_set1_epi64x(t), _mm256_setr_epi64x(0, 1, 2, 3))
#define V_MASK_LOADU(p, k) _mm256_maskload_pd(p, k)
#define V_MASK_STOREU(p, k, v) _mm256_maskstore_pd(p, k, v)
#define EP_SMM_VREGS 16
#define EP_SMM_MASK_VREGS 1
#define EP_SMM_BLOCKV 3
#define EP_L1(x) ep_d##x##_avx2
#include "ep_l1_template.h"
