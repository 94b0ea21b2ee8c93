// ep_smm.h -- the small in-place GEMM path (ep_smm.c).
#ifndef EP_SMM_H
#define EP_SMM_H

#include "ep_api.h"
#include "ukr/ep_ukr.h"

// The smm path of ep_gemm as the schedule says: A, B and C read in place by
// the kernel set's smm kernel (a 1m call packs B, and A when its k is not
// unit-stride, per batch index), threads over batches (EP_LOOP_BATCH) or
// over ranges of rows (EP_LOOP_M).  Fails only on allocation (1m).
ep_status_t ep_smm_run(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_schedule_t *s);

// Whether A's columns lie a page or more apart (k stride csa, elements of
// es bytes): the smm path then runs k in blocks of a few columns.
int ep_smm_far_apart(ep_inc_t csa, size_t es);

#endif
