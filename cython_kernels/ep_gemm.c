// ep_gemm.c -- the GEMM driver: ep_gemm runs the path its schedule chose
// (ep_schedule.c).  The packed path is BLIS's five loops over role groups,
// inside a batch loop, with OpenMP threads: the blocked driver (jc, pc, ic:
// ep_gemm_template.h) around the macro-kernel (jr, ir:
// ep_macro_kernel_template.h) around the micro-kernel (ukr/).
#include "ep_api.h"
#include "ep_blocking.h"
#include "ep_gemv.h"
#include "ep_omp.h"
#include "ep_pack.h"
#include "ep_schedule.h"
#include "ep_smm.h"
#include "ep_workspace.h"
#include "ukr/ep_ukr.h"
#ifdef _OPENMP
#define EP_BARRIER(nt) do { if ((nt) > 1) { _Pragma("omp barrier") } } while (0)
#else
#define EP_BARRIER(nt) do { (void)(nt); } while (0)
#endif

// The next MC block of m for thread tid, or -1 when none is left.  Each
// thread owns an equal range of the nblk blocks and takes its own first, in
// order, so equally fast threads compute the same rows call after call (the
// C rows stay in their caches); a thread done early takes blocks from the
// front of the others' ranges, so one slowed down (its core lent to another
// process a while) does not hold the other up at the barrier.  Every block
// is claimed once, by an atomic add; which thread computes it does not
// change its result.
static ep_dim_t ep_claim_mblock(ep_shared_t *sh, int tid, int nt,
                                ep_dim_t nblk)
{
    int nr = nt < EP_MBLOCK_COUNTERS ? nt : EP_MBLOCK_COUNTERS;
    for (int s = 0; s < nr; s++) {
        int owner = (tid + s) % nr;
        ep_dim_t lo = nblk * owner / nr, hi = nblk * (owner + 1) / nr;
        if (lo + __atomic_load_n(&sh->mblocks[owner].taken, __ATOMIC_RELAXED) >= hi)
            continue;                               // spent: no atomic add
        ep_dim_t i = __atomic_fetch_add(&sh->mblocks[owner].taken, 1,
                                        __ATOMIC_RELAXED);
        if (lo + i < hi) return lo + i;
    }
    return -1;
}

// Panel jp of B is read in place: the schedule chose it for this call
// (small m), and the panel is full, with unit n stride and a regular k
// stride.
#define EP_DIRECT_B(sh, jp, nc, NR)                                          \
    ((sh)->direct_b && (sh)->nbs_b[jp] == 1 && (sh)->ks_b != EP_IRREGULAR && \
     ((jp) + 1) * (NR) <= (nc))

// The next GEMM of a batch a thread runs, fetched into L2 while this one
// computes: its A and B blocks as byte ranges, a few lines asked for before
// each C tile.  The hardware prefetchers do not follow the packing from one
// batch index's blocks to the next, so packing them waited on L3 or memory:
// Zen 4 guest, 1 thread, 'bij,bjk->bik' (64,96,96) c64, 5.28 ms, of which
// the micro-kernel (~120 GFLOP/s) 71%, packing B 8.9% and A 8.6%; fetched
// ahead, 4.55-4.78 ms (packing 7%), c128 10.35 -> 9.0-9.35 ms.
typedef struct {
    const char *next[2], *end[2];   // A's range, B's range
    ep_dim_t per_tile;              // lines per C tile
} ep_ahead_t;

// Blocks up to half of L2 in all are fetched ahead (the packed blocks of
// the GEMM in flight stay beside them), and only blocks whose span is at
// most twice their elements' bytes (dense, not a strided walk of lines
// mostly not read).
static size_t ep_ahead_max_bytes(void)
{
    ep_dim_t l1, l2, l3;               // read once per process (ep_cpu.c)
    ep_cache_sizes(&l1, &l2, &l3);
    return (size_t)(l2 > 0 ? l2 : 512 << 10) / 2;
}

static inline void ep_ahead_step(ep_ahead_t *ah)
{
    if (!ah) return;
    ep_dim_t n = ah->per_tile;
    for (int r = 0; r < 2; r++)
        for (; n > 0 && ah->next[r] < ah->end[r]; n--, ah->next[r] += 64)
            __builtin_prefetch(ah->next[r], 0, 2);
}

// [lo, hi) in elements of the block one operand's two role groups (x, y)
// span from offset `off`; returns the number of elements in the block.
static ep_dim_t ep_block_span(const ep_group_t *x, int ox, const ep_group_t *y,
                              int oy, ep_inc_t off, ep_inc_t *lo, ep_inc_t *hi)
{
    ep_dim_t n = 1;
    *lo = *hi = off;
    const ep_group_t *g[2] = {x, y};
    int op[2] = {ox, oy};
    for (int q = 0; q < 2; q++)
        for (int a = 0; a < g[q]->ndim; a++) {
            ep_inc_t r = (ep_inc_t)(g[q]->extent[a] - 1) * g[q]->stride[op[q]][a];
            if (r < 0) *lo += r; else *hi += r;
            n *= g[q]->extent[a];
        }
    *hi += 1;
    return n;
}

// Sets *ah to fetch batch index bi's A and B over the GEMM's C tiles, or
// returns NULL when there is none or its blocks are not worth it.
static ep_ahead_t *ep_ahead_plan(const ep_gemm_desc_t *d, const ep_schedule_t *sc,
                                 ep_dim_t bi, ep_ahead_t *ah)
{
    if (bi < 0 || bi >= sc->NB || d->b_packed) return NULL;
    const ep_groups_t *g = d->g;
    size_t es = d->dtype == EP_FLOAT32 ? 4 : 8;
    ep_inc_t oa, ob, oc, alo, ahi, blo, bhi;
    ep_batch_offsets(&g->batch, bi, &oa, &ob, &oc);
    ep_dim_t na = ep_block_span(&g->m, EP_M_A, &g->k, EP_K_A, oa, &alo, &ahi);
    ep_dim_t nb = ep_block_span(&g->n, EP_N_B, &g->k, EP_K_B, ob, &blo, &bhi);
    if (ahi - alo > 2 * na || bhi - blo > 2 * nb ||
        (size_t)(ahi - alo + bhi - blo) * es > ep_ahead_max_bytes())
        return NULL;
    ah->next[0] = (const char *)d->a + alo * (ep_inc_t)es;
    ah->end[0] = (const char *)d->a + ahi * (ep_inc_t)es;
    ah->next[1] = (const char *)d->b + blo * (ep_inc_t)es;
    ah->end[1] = (const char *)d->b + bhi * (ep_inc_t)es;
    ep_dim_t lines = (ep_dim_t)((size_t)(ahi - alo + bhi - blo) * es / 64) + 2;
    ep_dim_t tiles = (sc->M + sc->bk.mr - 1) / sc->bk.mr * ((sc->N + sc->bk.nr - 1) / sc->bk.nr) *
                     ((sc->K + sc->bk.kc - 1) / (sc->bk.kc > 0 ? sc->bk.kc : 1));
    ah->per_tile = lines / (tiles > 0 ? tiles : 1) + 1;
    return ah;
}

#define T float
#define EP_PFX(x) ep_s##x
#define UKR_FIELD sgemm
#define EP_UKR_T ep_sgemm_ukr_fn
#define NARROW_NR s_narrow_nr
#define NARROW_FN s_narrow
#include "ep_macro_kernel_template.h"
#include "ep_gemm_template.h"
#undef T
#undef EP_PFX
#undef UKR_FIELD
#undef EP_UKR_T
#undef NARROW_NR
#undef NARROW_FN

#define T double
#define EP_PFX(x) ep_d##x
#define UKR_FIELD dgemm
#define EP_UKR_T ep_dgemm_ukr_fn
#define NARROW_NR d_narrow_nr
#define NARROW_FN d_narrow
#include "ep_macro_kernel_template.h"
#include "ep_gemm_template.h"
#undef T
#undef EP_PFX
#undef UKR_FIELD
#undef EP_UKR_T
#undef NARROW_NR
#undef NARROW_FN

// One batch index: the GEMM on the matrices at offsets (oa, ob, oc).
// `ah`: the next GEMM's blocks to fetch meanwhile, or NULL.
static void ep_gemm_at(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_blocking_t *bk, ep_shared_t *sh,
                       ep_thread_bufs_t *tb, ep_dim_t bi, ep_inc_t oa,
                       ep_inc_t ob, ep_inc_t oc, int tid, int nt, int split_m,
                       ep_ahead_t *ah)
{
    if (d->dtype == EP_FLOAT32) {
        float *c = (float *)d->c + oc;
        if (sh->K == 0) { if (tid == 0) ep_sscale_c(d, sh, tb, c); return; }
        const float *bpre = d->b_packed ? (const float *)d->b_packed + sh->packed_b_per * bi : NULL;
        ep_sgemm_blocked(d, u, bk, sh, tb, (const float *)d->a + oa,
                         (const float *)d->b + ob, bpre, c, tid, nt, split_m, ah);
    } else {
        double *c = (double *)d->c + oc;
        if (sh->K == 0) { if (tid == 0) ep_dscale_c(d, sh, tb, c); return; }
        const double *bpre = d->b_packed ? (const double *)d->b_packed + sh->packed_b_per * bi : NULL;
        ep_dgemm_blocked(d, u, bk, sh, tb, (const double *)d->a + oa,
                         (const double *)d->b + ob, bpre, c, tid, nt, split_m, ah);
    }
}

// The packed path: every batch index through the blocked driver, by one
// thread, by whole GEMMs per thread (EP_LOOP_BATCH), or by all threads
// together on each GEMM (EP_LOOP_M / EP_LOOP_N).  direct_b: the full
// panels of B are read in place (EP_B_IN_PLACE), not packed.
static ep_status_t ep_gemm_packed(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                                  const ep_schedule_t *sc, int direct_b)
{
    ep_blocking_t bk = sc->bk;
    ep_dim_t M = sc->M, N = sc->N, K = sc->K, NB = sc->NB;
    ep_dim_t kc = bk.kc, nc = bk.nc;
    int nt = sc->nthreads, by_batch = sc->loop == EP_LOOP_BATCH;
    int split_m = sc->loop == EP_LOOP_M;
    size_t esize = d->dtype == EP_FLOAT32 ? 4 : 8;

    int failed = 0;
    ep_dim_t next_batch = 0;      // EP_LOOP_BATCH: the first GEMM no thread has claimed
    ep_shared_t sh_all = {M, N, K, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    sh_all.direct_b = direct_b == EP_B_IN_PLACE;
    sh_all.b_by_panel = !sc->b_by_panel ? 0 : d->cplx ? d->cplx
                        : direct_b == EP_B_IN_PLACE ? 0 : EP_B_BY_PANEL_REAL;
    if (d->b_packed) sh_all.packed_b_per = ep_packed_b_batch_elems(&bk, K, N);
    if (nt == 1) {           // no parallel region at all: small calls stay cheap
        ep_thread_bufs_t tb;
        if (!ep_carve(&bk, esize, bk.mc, kc, nc, &tb, &sh_all)) return EP_ERR_NOMEM;
        for (ep_dim_t bi = 0; bi < NB; bi++) {
            ep_inc_t oa, ob, oc;
            ep_ahead_t ah;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_gemm_at(d, u, &bk, &sh_all, &tb, bi, oa, ob, oc, 0, 1, 0,
                       ep_ahead_plan(d, sc, bi + 1, &ah));
        }
        return EP_OK;
    }
    ep_team_map_t *team = ep_team_prepare(nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) shared(failed, sh_all, next_batch)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        ep_thread_bufs_t tb;
        if (by_batch || ntr == 1) {
            // every thread runs whole GEMMs with its own shared part
            ep_shared_t sh = sh_all;
            if (!ep_carve(&bk, esize, bk.mc, kc, nc, &tb, &sh)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            } else {
                // GEMMs are claimed one at a time, so a thread that shares
                // its CPU with another busy thread runs fewer of them; each
                // GEMM is one thread's whole, so results do not depend on
                // which thread ran it.  A thread claims its next GEMM before
                // it runs one, to fetch that one's blocks meanwhile.
                ep_dim_t bi;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
                bi = next_batch++;
                while (bi < NB) {
                    ep_dim_t nxt;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
                    nxt = next_batch++;
                    ep_inc_t oa, ob, oc;
                    ep_ahead_t ah;
                    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
                    ep_gemm_at(d, u, &bk, &sh, &tb, bi, oa, ob, oc, 0, 1, 0,
                               ep_ahead_plan(d, sc, nxt, &ah));
                    bi = nxt;
                }
            }
        } else {
            int ok = ep_carve(&bk, esize, bk.mc, kc, nc, &tb,
                              tid == 0 ? &sh_all : NULL);
            if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            }
#ifdef _OPENMP
#pragma omp barrier
#endif
            int bad;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            bad = failed;
            if (!bad) {
                for (ep_dim_t bi = 0; bi < NB; bi++) {
                    ep_inc_t oa, ob, oc;
                    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
                    ep_gemm_at(d, u, &bk, &sh_all, &tb, bi, oa, ob, oc, tid, ntr,
                               split_m, NULL);
                    EP_BARRIER(ntr);
                }
            }
        }
    }
    return failed ? EP_ERR_NOMEM : EP_OK;
}

const ep_schedule_t *ep_call_schedule(const ep_gemm_desc_t *d, ep_schedule_t *now)
{
    if (d->sched != NULL && ep_schedule_holds(d->sched, d)) return d->sched;
    ep_gemm_schedule(d, now);
    return now;
}

ep_status_t ep_gemm(const ep_gemm_desc_t *d)
{
    const ep_ukr_set_t *u = ep_ukr_set();
    ep_schedule_t now;
    const ep_schedule_t *sc = ep_call_schedule(d, &now);
    switch (sc->path) {
    case EP_PATH_EMPTY: return EP_OK;
    case EP_PATH_GEMV: ep_gemv_run(d, u, sc); return EP_OK;
    case EP_PATH_SMM: return ep_smm_run(d, u, sc);
    case EP_PATH_GEMM: break;
    }
    ep_measured_t *m;
    int way = ep_b_way_turn(sc, d->dtype, &m);
    if (!m) return ep_gemm_packed(d, u, sc, way);
    int64_t t0 = ep_clock_ns();
    ep_status_t st = ep_gemm_packed(d, u, sc, way);
    if (st == EP_OK) ep_b_way_sample(m, way, sc, ep_clock_ns() - t0);
    return st;
}
