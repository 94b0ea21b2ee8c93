// ep_gemv.h -- the GEMV path, m == 1 or n == 1 (ep_gemv.c).
#ifndef EP_GEMV_H
#define EP_GEMV_H

#include "ep_api.h"
#include "ukr/ep_ukr.h"

// Block sizes of the GEMV path: a block of the output (accumulated in
// registers/L1) and a block of x gathered contiguous.
#define EP_GEMV_JB 256
#define EP_GEMV_KB 4096
#define EP_GEMV_DOT4_MIN_K 2048

void ep_gemv_at(const ep_gemm_desc_t *d, const ep_ukr_set_t *u, int n_is_one,
                ep_inc_t oa, ep_inc_t ob, ep_inc_t oc, ep_dim_t j_begin,
                ep_dim_t j_end);

#endif
