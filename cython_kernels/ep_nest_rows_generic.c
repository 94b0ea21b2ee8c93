// ep_nest_rows_generic.c -- the loop-nest row kernels without an ISA target
// (GCC vector extensions lowered to the baseline: SSE2 on x86-64).
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

#define NT(x) ep_nest_gs_##x
#define T float
#define IT int32_t
#define CPX 0
#define VL 4
#define NT_TGT
#include "ep_nest_template.h"
#define NT(x) ep_nest_gd_##x
#define T double
#define IT int64_t
#define CPX 0
#define VL 2
#define NT_TGT
#include "ep_nest_template.h"
#define NT(x) ep_nest_gc_##x
#define NT_REAL(x) ep_nest_gs_##x   // the real kernels of the same element type
#define NT_WHOLE8(x) ep_nest_gd_##x  // the real kernels of 8-byte elements
#define T float
#define IT int32_t
#define CPX 1
#define VL 4
#define NT_TGT
#include "ep_nest_template.h"
#define NT(x) ep_nest_gz_##x
#define NT_REAL(x) ep_nest_gd_##x   // the real kernels of the same element type
#define T double
#define IT int64_t
#define CPX 1
#define VL 2
#define NT_TGT
#include "ep_nest_template.h"


const ep_rows_t ep_nest_rows_generic[4] = {
    EP_RROWS(ep_nest_gs_), EP_RROWS(ep_nest_gd_),
    EP_CROWS(ep_nest_gc_), EP_CROWS(ep_nest_gz_)};
