// ep_blocking.h -- block sizes of the packed GEMM (ep_blocking.c): the
// machine's MC/KC/NC (ep_blocking in ep_api.h) and their fit to one GEMM.
#ifndef EP_BLOCKING_H
#define EP_BLOCKING_H

#include "ep_api.h"

// KC and NC for one GEMM: KC split evenly over k (no thin last block), NC
// no larger than n.  Depends only on (dtype, ISA, K, N): prepacked B relies
// on it being the same at pack time and at every call.
void ep_kn_blocks(ep_blocking_t *bk, ep_dim_t K, ep_dim_t N, int cplx);

// Elements of one batch index of prepacked B: every jc block holds K rows
// of its n extent rounded up to NR (EP_PACKED_B_BLOCK gives where one starts).
ep_dim_t ep_packed_b_batch_elems(const ep_blocking_t *bk, ep_dim_t K, ep_dim_t N);

#endif
