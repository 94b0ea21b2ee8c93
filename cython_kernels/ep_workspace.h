// ep_workspace.h -- the packed GEMM's buffers (ep_workspace.c): what the
// threads of one GEMM share and what each has for itself, carved from a
// per-thread workspace that lives as long as the thread.
#ifndef EP_WORKSPACE_H
#define EP_WORKSPACE_H

#include "ep_api.h"

// One counter of claimed MC blocks per thread, up to this many threads.
#define EP_MBLOCK_COUNTERS 64

// What the threads of one GEMM share: the packed B panel and the n and k
// scatter vectors (written by thread 0, read by all after a barrier).
typedef struct {
    ep_dim_t M, N, K;
    void *bpack;
    ep_inc_t *noff_b, *noff_c, *nbs_b, *nbs_c, *koff_a, *koff_b;
    ep_inc_t ks_a, ks_b;
    int direct_b;        // m is small: read full B panels in place
    int b_by_panel;      // m small: EP_B_BY_PANEL_REAL, or 1m's EP_CPLX_* flags of a B packed
                         // one panel at a time in the macro-kernel; else 0
    ep_dim_t packed_b_per;   // elements per batch index of prepacked B
    // the jc / pc whose offsets noff_* / koff_* hold (-1: none yet): the
    // GEMMs of a batch share them, so each is scattered once per call
    ep_dim_t n_at, k_at;
    // MC blocks of m taken so far from each thread's own range (one cache
    // line each): see ep_claim_mblock in ep_gemm.c
    struct { ep_dim_t taken; char pad[64 - sizeof(ep_dim_t)]; }
        mblocks[EP_MBLOCK_COUNTERS];
} ep_shared_t;

// What each thread has for itself: its packed A block, m scatter vectors.
typedef struct {
    void *apack;
    ep_inc_t *moff_a, *moff_c, *mbs_a, *mbs_c;
    ep_dim_t m_at;       // the ic whose offsets moff_* / mbs_* hold (-1: none)
} ep_thread_bufs_t;

// This thread's workspace as one buffer of at least `bytes` (64-byte
// aligned), or NULL on allocation failure: for paths with buffers of their
// own shape (the complex smm path's packed B).  The next ep_carve or
// ep_scratch call on the thread reuses it.
void *ep_scratch(size_t bytes);

// Carve this thread's workspace for blocks of mc x kc (A) and kc x nc (B):
// always its private part, and the shared part when `sh` is given.
// Returns 0 on allocation failure.
int ep_carve(const ep_blocking_t *bk, size_t esize, ep_dim_t mc, ep_dim_t kc,
             ep_dim_t nc, ep_thread_bufs_t *tb, ep_shared_t *sh);

#endif
