// ep_nest_rows_avx2.c -- the loop-nest row kernels for AVX2 (+FMA in the
// complex register-tile kernel), by target attribute, never -march.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ep_api.h"
#include "ep_copy.h"
#include "ep_nest.h"
#include "ep_nest_rows.h"
#include "ep_omp.h"
#include "ep_workspace.h"
#include "ukr/ep_ukr.h"

#define EP_NT256 __attribute__((target("avx2")))
#define NT(x) ep_nest_as_##x
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs256s_transpose(x, s1, nr, nc, d, d0)
#define T float
#define IT int32_t
#define CPX 0
#define VL 8
#define NT_TGT EP_NT256
#define NT_FMA 1        // the small-edge and register-tile kernels may use FMA (ep_cpu.c)
#include "ep_nest_template.h"
#define NT(x) ep_nest_ad_##x
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs256d_transpose(x, s1, nr, nc, d, d0)
#define T double
#define IT int64_t
#define CPX 0
#define VL 4
#define NT_TGT EP_NT256
#define NT_FMA 1        // the small-edge and register-tile kernels may use FMA (ep_cpu.c)
#include "ep_nest_template.h"
#define NT(x) ep_nest_ac_##x
#define NT_REAL(x) ep_nest_as_##x   // the real kernels of the same element type
#define NT_WHOLE8(x) ep_nest_ad_##x  // the real kernels of 8-byte elements
#define NT_TRANSPOSE(x, s1, nr, nc, d, d0) ep_cs256d_transpose((const double *)(x), s1, nr, nc, (double *)(d), d0)
#define T float
#define IT int32_t
#define CPX 1
#define VL 8
#define NT_TGT EP_NT256
#define NT_FMA 1        // the small-edge and register-tile kernels may use FMA (ep_cpu.c)
#include "ep_nest_template.h"
#define NT(x) ep_nest_az_##x
#define NT_REAL(x) ep_nest_ad_##x   // the real kernels of the same element type
#define T double
#define IT int64_t
#define CPX 1
#define VL 4
#define NT_TGT EP_NT256
#define NT_FMA 1        // the small-edge and register-tile kernels may use FMA (ep_cpu.c)
#include "ep_nest_template.h"

const ep_rows_t ep_nest_rows_avx2[4] = {
    EP_RROWS(ep_nest_as_), EP_RROWS(ep_nest_ad_),
    EP_CROWS(ep_nest_ac_), EP_CROWS(ep_nest_az_)};
