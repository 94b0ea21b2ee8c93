// ep_nest_rows_avx512.c -- the loop-nest row kernels for AVX-512F, by target
// attribute, never -march.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>
#include "ep_api.h"
#include "ep_copy.h"
#include "ep_nest.h"
#include "ep_nest_rows.h"
#include "ep_omp.h"
#include "ep_workspace.h"
#include "ukr/ep_ukr.h"

#define EP_NT512 __attribute__((target("avx512f")))
#define NT(x) ep_nest_xs_##x
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs512s_transpose(x, s1, nr, nc, d, d0)
#define T float
#define IT int32_t
#define CPX 0
#define VL 16
#define NT_TGT EP_NT512
#define NT_HALVES 1     // stream_prod (64-byte vectors)
#include "ep_nest_template.h"
#define NT(x) ep_nest_xd_##x
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs512d_transpose(x, s1, nr, nc, d, d0)
#define T double
#define IT int64_t
#define CPX 0
#define VL 8
#define NT_TGT EP_NT512
#define NT_HALVES 1     // stream_prod (64-byte vectors)
#include "ep_nest_template.h"
#define NT(x) ep_nest_xc_##x
#define NT_REAL(x) ep_nest_xs_##x   // the real kernels of the same element type
#define NT_WHOLE8(x) ep_nest_xd_##x  // the real kernels of 8-byte elements
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs512d_transpose((const double *)(x), s1, nr, nc, (double *)(d), d0)
#define T float
#define IT int32_t
#define CPX 1
#define VL 16
#define NT_TGT EP_NT512
#define NT_HALVES 1     // stream_sum (64-byte vectors)
#include "ep_nest_template.h"
#define NT(x) ep_nest_xz_##x
#define NT_REAL(x) ep_nest_xd_##x   // the real kernels of the same element type
#define T double
#define IT int64_t
#define CPX 1
#define VL 8
#define NT_TGT EP_NT512
#define NT_HALVES 1     // stream_sum (64-byte vectors)
#include "ep_nest_template.h"

const ep_rows_t ep_nest_rows_avx512[4] = {
    EP_RROWS_HALVES(ep_nest_xs_), EP_RROWS_HALVES(ep_nest_xd_),
    EP_CROWS_HALVES(ep_nest_xc_), EP_CROWS_HALVES(ep_nest_xz_)};
