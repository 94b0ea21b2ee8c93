// float32 AVX2+FMA micro-kernel and level-1 kernels, tile 6 x 16 (2 ymm per row of C), the
// BLIS haswell/zen3 shape.
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include "ep_ukr_kernels.h"

#define UKR_NAME ep_sgemm_ukr_avx2_6x16
#define UKR_T float
#define UKR_MR 6
#define UKR_NV 2
#define VEC __m256
#define VL 8
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STOREU(p, v) _mm256_storeu_ps(p, v)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_ADD(a, b) _mm256_add_ps(a, b)
// the k loop over a packed B in assembly (ep_ukr_avx2_group.h says why)
#define EP_UKR_AVX2_BCAST "vbroadcastss"
#define EP_UKR_AVX2_FMA "vfmadd231ps"
#define EP_UKR_AVX2_LOAD "vmovups"
#define EP_UKR_AVX2_ES 4
#include "ep_ukr_template.h"

// the GEMV and smm paths' kernels for the same ISA and dtype; the smm
// kernel masks the last vector of a row of B and C with vmaskmov (defined
// here, after the micro-kernel, which stores its fringe through a tile)
#define EP_MASK_T __m256i
#define V_MASK_FIRST(t) \
    _mm256_cmpgt_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define V_MASK_LOADU(p, k) _mm256_maskload_ps(p, k)
#define V_MASK_STOREU(p, k, v) _mm256_maskstore_ps(p, k, v)
#define EP_SMM_VREGS 16
#define EP_SMM_MASK_VREGS 1
#define EP_SMM_BLOCKV 3
#define EP_L1(x) ep_s##x##_avx2
#include "ep_l1_template.h"
