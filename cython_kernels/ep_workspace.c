// ep_workspace.c -- packing buffers of the GEMM, per thread.
#include <stdlib.h>
#include "ep_workspace.h"

// Packing buffers live as long as the thread (OpenMP keeps its pool), grown
// on demand: no allocation, page fault or memset on the hot path.
static _Thread_local void *ep_ws_ptr = NULL;
static _Thread_local size_t ep_ws_size = 0;

static void *ep_workspace(size_t bytes)
{
    if (bytes <= ep_ws_size) return ep_ws_ptr;
    free(ep_ws_ptr);
    size_t sz = (bytes + 4095) & ~(size_t)4095;
    ep_ws_ptr = aligned_alloc(64, sz);
    ep_ws_size = ep_ws_ptr ? sz : 0;
    return ep_ws_ptr;
}

void *ep_scratch(size_t bytes)
{
    return ep_workspace(bytes);
}

#define EP_ALIGN(x) (((x) + 63) & ~(size_t)63)

int ep_carve(const ep_blocking_t *bk, size_t esize, ep_dim_t mc, ep_dim_t kc,
             ep_dim_t nc, ep_thread_bufs_t *tb, ep_shared_t *sh)
{
    size_t nmp = (size_t)(mc / bk->mr + 1), nnp = (size_t)(nc / bk->nr + 1);
    size_t a_bytes = EP_ALIGN((size_t)(mc + bk->mr) * kc * esize);
    size_t m_bytes = EP_ALIGN((size_t)mc * 2 * sizeof(ep_inc_t)) +
                     EP_ALIGN(nmp * 2 * sizeof(ep_inc_t));
    size_t b_bytes = sh ? EP_ALIGN((size_t)(nc + bk->nr) * kc * esize) : 0;
    size_t n_bytes = sh ? EP_ALIGN((size_t)nc * 2 * sizeof(ep_inc_t)) +
                          EP_ALIGN(nnp * 2 * sizeof(ep_inc_t)) +
                          EP_ALIGN((size_t)kc * 2 * sizeof(ep_inc_t)) : 0;
    char *w = ep_workspace(a_bytes + m_bytes + b_bytes + n_bytes);
    if (!w) return 0;
    tb->apack = w;                      w += a_bytes;
    tb->moff_a = (ep_inc_t *)w;         tb->moff_c = tb->moff_a + mc;
    w += EP_ALIGN((size_t)mc * 2 * sizeof(ep_inc_t));
    tb->mbs_a = (ep_inc_t *)w;          tb->mbs_c = tb->mbs_a + nmp;
    tb->m_at = -1;
    w += EP_ALIGN(nmp * 2 * sizeof(ep_inc_t));
    if (sh) {
        sh->bpack = w;                  w += b_bytes;
        sh->noff_b = (ep_inc_t *)w;     sh->noff_c = sh->noff_b + nc;
        w += EP_ALIGN((size_t)nc * 2 * sizeof(ep_inc_t));
        sh->nbs_b = (ep_inc_t *)w;      sh->nbs_c = sh->nbs_b + nnp;
        w += EP_ALIGN(nnp * 2 * sizeof(ep_inc_t));
        sh->koff_a = (ep_inc_t *)w;     sh->koff_b = sh->koff_a + kc;
        sh->n_at = sh->k_at = -1;
    }
    return 1;
}
