// ep_gemv.h -- the GEMV path, m == 1 or n == 1, or a few columns
// (ep_gemv.c).
#ifndef EP_GEMV_H
#define EP_GEMV_H

#include "ep_api.h"
#include "ukr/ep_ukr.h"

// Block sizes of the GEMV path: a block of the output (accumulated in
// registers/L1) and a block of x gathered contiguous.
#define EP_GEMV_JB 256
#define EP_GEMV_KB 4096
#define EP_GEMV_DOT4_MIN_K 2048
// A GEMM of 2 .. EP_GEMV_MAX_COLS columns on this path (ep_gemv.c): B's
// columns gathered EP_GEMV_COLS_KB values of k at a time.
#define EP_GEMV_MAX_COLS 4
#define EP_GEMV_COLS_KB 1024

// The GEMV path of ep_gemm (m == 1 or n == 1) as the schedule says:
// threads over batches (EP_LOOP_BATCH) or over blocks of the output vector.
void ep_gemv_run(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                 const ep_schedule_t *s);

#endif
