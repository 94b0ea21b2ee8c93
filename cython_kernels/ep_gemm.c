// ep_gemm.c -- the packed GEMM over role groups: the five loops of BLIS
// (jc -> pc -> ic -> jr -> ir) around the micro-kernel, a batch loop around
// them, OpenMP threads, and blocking sizes from the cache sizes.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ep_api.h"
#include "ep_pack.h"
#include "ep_gemv.h"
#include "ukr/ep_ukr.h"
#include "ep_omp.h"
#ifdef _OPENMP
#define EP_BARRIER(nt) do { if ((nt) > 1) { _Pragma("omp barrier") } } while (0)
#else
#define EP_BARRIER(nt) do { (void)(nt); } while (0)
#endif

const ep_ukr_set_t *ep_ukr_set(void);   // ep_dispatch.c

#define EP_SCALE_BLOCK 256

// Threads split m (each packs its own rows of A) when every thread gets at
// least this many MR panels; below, they split n and share A's packing.
// Zen 4, 2 threads, 2026-11-21: tract m = 462 (58 panels of 8) split by m
// (imbalanced MC blocks) 0.82x, split by equal panel ranges 1.04x of
// numpy's merged reshape@; m = 77 split by n 1.03-1.23x.
#define EP_SPLIT_M_MIN_PANELS 8

// Below this many flops in a call, threads cost more than they save: a
// fork/join of the OpenMP team and its barriers take ~10-15 us here (Zen 4,
// libgomp).  Measured 2026-11-21, f64 square GEMM, 1 vs 2 threads: 64^3
// (5e5 flops) 28 vs 43 us; 128^3 (4e6 flops) 108 vs 77 us.
#define EP_MIN_PARALLEL_FLOPS 2e6

// Batched GEMMs up to this many flops each run whole per thread when the
// batches share out evenly (NB a multiple of the threads, or many): no
// barriers and no shared B panel per GEMM.  Zen 4, 2026-11-21, 2 threads,
// 64 batches, split inside each GEMM / whole GEMMs per thread:
// 'bik,bjk->bij' 128^3 f32 1.81 / 1.52 ms; 'acb,cd->adb' 256^3 12.1 / 11.5 ms.
#ifndef EP_BY_BATCH_FLOPS
#define EP_BY_BATCH_FLOPS 1e8
#endif


// ------------------------------------------------------------ blocking
// Linux sysfs first (glibc's sysconf misreports some virtual CPUs' L3 by
// 10x, seen on this project's AMD EPYC VMs), then sysconf, else 0.
static ep_dim_t ep_sysfs_cache(int level)
{
    char path[96], buf[64];
    for (int i = 0; i < 10; i++) {
        int lvl = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &lvl) != 1) lvl = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(path, "r");
        if (!f) continue;
        int is_insn = fgets(buf, sizeof buf, f) && buf[0] == 'I';
        fclose(f);
        if (lvl != level || is_insn) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) continue;
        long v = 0;
        char unit = 0;
        int got = fscanf(f, "%ld%c", &v, &unit);
        fclose(f);
        if (got >= 1 && v > 0)
            return (ep_dim_t)v * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : 1);
    }
    return 0;
}

void ep_cache_sizes(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
{
    ep_dim_t v[3] = {ep_sysfs_cache(1), ep_sysfs_cache(2), ep_sysfs_cache(3)};
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const int names[3] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
                          _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < 3; i++)
        if (v[i] <= 0) { long s = sysconf(names[i]); v[i] = s > 0 ? s : 0; }
#endif
    *l1d = v[0];
    *l2 = v[1];
    *l3 = v[2];
}

// Analytical blocking (after Low et al., "Analytical modeling is enough for
// high-performance BLIS", 2016), with the fractions set by measurement:
//  KC: an MR x KC micro-panel of A fills EP_KC_L1 of L1d;
//  MC: the MC x KC block of A takes EP_MC_L2 of L2;
//  NC: the KC x NC panel of B takes EP_NC_L3 of this core's share of L3.
// Measured on AMD EPYC Zen 4 (L1d 32 KiB, L2 1 MiB, L3 32 MiB / 2 cores),
// 2026-11-21, n = 2048, 1 thread, ratio to OpenBLAS (f64):
//   MC,KC,NC = 384,168,6240: 0.85;  192,256,4080: 0.94;  144,384,4080: 0.97;
//   192,384,4080: 0.985 (1.00 with the C/A prefetches);  72,512,4080: 0.94.
// The fractions below give 192,384,3984 (f64) and 96,768,1968 (f32).
// Unknown caches fall back to 32 KiB / 512 KiB / 2 MiB per core.
#define EP_KC_L1 0.75
#define EP_MC_L2 0.5625
#define EP_NC_L3 0.75

static ep_blocking_t ep_blocking_compute(ep_dtype_t dtype)
{
    ep_blocking_t bk;
    ep_isa_tile(ep_isa(), dtype, &bk.mr, &bk.nr);
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (l1 <= 0) l1 = 32 << 10;
    if (l2 <= 0) l2 = 512 << 10;
    l3 = l3 > 0 ? l3 / (ncpu > 0 ? ncpu : 1) : 2 << 20;
    ep_dim_t s = dtype == EP_FLOAT32 ? 4 : 8;
    bk.kc = (ep_dim_t)(EP_KC_L1 * l1 / (bk.mr * s)) / 8 * 8;
    if (bk.kc < 64) bk.kc = 64;
    bk.mc = (ep_dim_t)(EP_MC_L2 * l2 / (bk.kc * s)) / bk.mr * bk.mr;
    if (bk.mc < bk.mr) bk.mc = bk.mr;
    bk.nc = (ep_dim_t)(EP_NC_L3 * l3 / (bk.kc * s)) / bk.nr * bk.nr;
    if (bk.nc < bk.nr) bk.nc = bk.nr;
    // EINPLAN_BLOCKING="MC,KC,NC" overrides, for tuning experiments
    const char *env = getenv("EINPLAN_BLOCKING");
    long mc, kc, nc;
    if (env && sscanf(env, "%ld,%ld,%ld", &mc, &kc, &nc) == 3 && mc > 0 &&
        kc > 0 && nc > 0) {
        bk.mc = (mc + bk.mr - 1) / bk.mr * bk.mr;
        bk.kc = kc;
        bk.nc = (nc + bk.nr - 1) / bk.nr * bk.nr;
    }
    return bk;
}

// Computed once per (ISA, dtype): reading the caches costs file I/O.
ep_blocking_t ep_blocking(ep_dtype_t dtype)
{
    static ep_blocking_t cache[EP_ISA_COUNT][2];
    static int done[EP_ISA_COUNT][2];
    int isa = ep_isa(), dt = dtype == EP_FLOAT32 ? 0 : 1;
    if (!done[isa][dt]) {          // a benign race: both threads agree
        cache[isa][dt] = ep_blocking_compute(dtype);
        done[isa][dt] = 1;
    }
    return cache[isa][dt];
}

// ------------------------------------------------------------ workspace
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

#define EP_MBLOCK_COUNTERS 64

// What the threads of one GEMM share: the packed B panel and the n and k
// scatter vectors (written by thread 0, read by all after a barrier).
typedef struct {
    ep_dim_t M, N, K;
    void *bpack;
    ep_inc_t *noff_b, *noff_c, *nbs_b, *nbs_c, *koff_a, *koff_b;
    ep_inc_t ks_a, ks_b;
    int direct_b;        // m is small: read full B panels in place
    ep_dim_t packed_b_per;   // elements per batch index of prepacked B
    // MC blocks of m taken so far from each thread's own range (one cache
    // line each): see ep_claim_mblock
    struct { ep_dim_t taken; char pad[64 - sizeof(ep_dim_t)]; }
        mblocks[EP_MBLOCK_COUNTERS];
} ep_shared_t;

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

// When m has at most the kernel set's direct_b_max_m_s/_d rows, each element of
// B is used by so few micro-tiles that packing it costs more than it saves:
// full NR-wide panels with unit n stride and a regular k stride are read in
// place.  Measured for 'bij,jk->bik' shapes (k = 512, n = 1536), 1 thread,
// ratio to numpy's merged reshape@ with B read in place / packed:
//   AVX-512, Zen 4, 2026-11-21, f32: m = 77: 1.13 / 1.02; m = 231: 1.08 /
//   0.95; m = 462: 0.94 / 1.00; m = 1232: 1.02 / 1.02  -> 256 rows;
//   AVX2, Zen 3, 2026-11-23: m = 6: f32 2.0 / 0.85, f64 1.5 / 1.4; m = 16:
//   f32 1.05 / 0.66, f64 0.62 / 0.84; m = 77: f32 0.89 / 0.94, f64 0.57 /
//   1.04; m = 231: f64 0.49 / 1.08; 256^3 f64 0.77 / 1.00  -> 16 rows f32,
//   6 f64 (B's rows are pages apart: a panel read in place thrashes the
//   L1 TLB once several row panels reuse it).
#define EP_DIRECT_B(sh, jp, nc, NR)                                          \
    ((sh)->direct_b && (sh)->nbs_b[jp] == 1 && (sh)->ks_b != EP_IRREGULAR && \
     ((jp) + 1) * (NR) <= (nc))

// What each thread has for itself: its packed A block, m scatter vectors.
typedef struct {
    void *apack;
    ep_inc_t *moff_a, *moff_c, *mbs_a, *mbs_c;
} ep_thread_bufs_t;

#define EP_ALIGN(x) (((x) + 63) & ~(size_t)63)

// Carve this thread's workspace: always its private part, and the shared
// part when `sh` is given.  Returns 0 on allocation failure.
static int ep_carve(const ep_blocking_t *bk, size_t esize, ep_dim_t mc,
                    ep_dim_t kc, ep_dim_t nc, ep_thread_bufs_t *tb,
                    ep_shared_t *sh)
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
    w += EP_ALIGN(nmp * 2 * sizeof(ep_inc_t));
    if (sh) {
        sh->bpack = w;                  w += b_bytes;
        sh->noff_b = (ep_inc_t *)w;     sh->noff_c = sh->noff_b + nc;
        w += EP_ALIGN((size_t)nc * 2 * sizeof(ep_inc_t));
        sh->nbs_b = (ep_inc_t *)w;      sh->nbs_c = sh->nbs_b + nnp;
        w += EP_ALIGN(nnp * 2 * sizeof(ep_inc_t));
        sh->koff_a = (ep_inc_t *)w;     sh->koff_b = sh->koff_a + kc;
    }
    return 1;
}

// ------------------------------------------------------------ the loops
#define T float
#define EP_PFX(x) ep_s##x
#define UKR_FIELD sgemm
#define EP_UKR_T ep_sgemm_ukr_fn
#define NARROW_NR s_narrow_nr
#define NARROW_FN s_narrow
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
#include "ep_gemm_template.h"
#undef T
#undef EP_PFX
#undef UKR_FIELD
#undef EP_UKR_T
#undef NARROW_NR
#undef NARROW_FN

static ep_dim_t ep_group_size(const ep_group_t *g)
{
    ep_dim_t n = 1;
    for (int i = 0; i < g->ndim; i++) n *= g->extent[i];
    return n;
}

static void ep_batch_offsets(const ep_group_t *g, ep_dim_t bi, ep_inc_t *oa,
                             ep_inc_t *ob, ep_inc_t *oc);

// KC and NC for one GEMM: KC split evenly over k (no thin last block), NC
// no larger than n.  Depends only on (dtype, ISA, K, N): prepacked B relies
// on it being the same at pack time and at every call.
static void ep_kn_blocks(ep_blocking_t *bk, ep_dim_t K, ep_dim_t N, int cplx)
{
    // k up to 1.25 KC stays one block: a second pass over C costs more than
    // the slightly larger panels (jax case 'ab,...b->...a', k = 821, KC = 768,
    // f32, Zen 4: 0.94x -> 0.98x of OpenBLAS)
    ep_dim_t kc = K <= bk->kc + bk->kc / 4 ? (K ? K : 1) : bk->kc;
    if (K > bk->kc + bk->kc / 4) {
        ep_dim_t nkb = (K + bk->kc - 1) / bk->kc;
        kc = (K + nkb - 1) / nkb;
    }
    // 1m: k blocks start on whole complex elements (K is even; n panels
    // are too, as every kernel set's NR is even)
    if (cplx) kc += kc & 1;
    bk->kc = kc;
    bk->nc = N < bk->nc ? N : bk->nc;
}

// Elements of one batch index of prepacked B: every jc block holds K rows
// of its n extent rounded up to NR (EP_PACKED_B_BLOCK gives where one starts).
static ep_dim_t ep_packed_b_batch_elems(const ep_blocking_t *bk, ep_dim_t K,
                                        ep_dim_t N)
{
    ep_dim_t full = N / bk->nc, last = N % bk->nc;
    return K * (full * EP_ROUND_UP(bk->nc, bk->nr) + EP_ROUND_UP(last, bk->nr));
}

ep_dim_t ep_packed_b_size(const ep_gemm_desc_t *d)
{
    ep_blocking_t bk = ep_blocking(d->dtype);
    ep_dim_t K = ep_group_size(&d->g->k), N = ep_group_size(&d->g->n);
    ep_kn_blocks(&bk, K, N, d->cplx);
    return ep_group_size(&d->g->batch) * ep_packed_b_batch_elems(&bk, K, N);
}

ep_status_t ep_pack_b_all(const ep_gemm_desc_t *d, void *buf)
{
    ep_blocking_t bk = ep_blocking(d->dtype);
    ep_dim_t K = ep_group_size(&d->g->k), N = ep_group_size(&d->g->n);
    ep_dim_t NB = ep_group_size(&d->g->batch);
    if (K == 0 || N == 0 || NB == 0) return EP_OK;
    ep_kn_blocks(&bk, K, N, d->cplx);
    ep_dim_t per = ep_packed_b_batch_elems(&bk, K, N);
    ep_inc_t *noff = malloc(sizeof(ep_inc_t) * (size_t)(2 * bk.nc + 1 + bk.kc));
    if (!noff) return EP_ERR_NOMEM;
    ep_inc_t *nbs = noff + bk.nc, *koff = nbs + bk.nc + 1;
    for (ep_dim_t bi = 0; bi < NB; bi++) {
        ep_inc_t oa, ob, oc;
        ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
        if (d->dtype == EP_FLOAT32)
            ep_spack_b_all(d, bk.nr, K, N, bk.kc, bk.nc, (const float *)d->b + ob,
                           (float *)buf + bi * per, noff, nbs, koff);
        else
            ep_dpack_b_all(d, bk.nr, K, N, bk.kc, bk.nc, (const double *)d->b + ob,
                           (double *)buf + bi * per, noff, nbs, koff);
    }
    free(noff);
    return EP_OK;
}

// One batch index: the GEMM on the matrices at offsets (oa, ob, oc).
static void ep_gemm_at(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_blocking_t *bk, ep_shared_t *sh,
                       ep_thread_bufs_t *tb, ep_dim_t bi, ep_inc_t oa,
                       ep_inc_t ob, ep_inc_t oc, int tid, int nt)
{
    if (d->dtype == EP_FLOAT32) {
        float *c = (float *)d->c + oc;
        if (sh->K == 0) { if (tid == 0) ep_sscale_c(d, sh, tb, c); return; }
        const float *bpre = d->b_packed ? (const float *)d->b_packed + sh->packed_b_per * bi : NULL;
        ep_sgemm_one(d, u, bk, sh, tb, (const float *)d->a + oa,
                     (const float *)d->b + ob, bpre, c, tid, nt);
    } else {
        double *c = (double *)d->c + oc;
        if (sh->K == 0) { if (tid == 0) ep_dscale_c(d, sh, tb, c); return; }
        const double *bpre = d->b_packed ? (const double *)d->b_packed + sh->packed_b_per * bi : NULL;
        ep_dgemm_one(d, u, bk, sh, tb, (const double *)d->a + oa,
                     (const double *)d->b + ob, bpre, c, tid, nt);
    }
}

// Offsets of batch index `bi` in A, B, C.
static void ep_batch_offsets(const ep_group_t *g, ep_dim_t bi, ep_inc_t *oa,
                             ep_inc_t *ob, ep_inc_t *oc)
{
    if (g->ndim == 1) {      // the common merged batch: no division per GEMM
        *oa = (ep_inc_t)bi * g->stride[EP_BATCH_A][0];
        *ob = (ep_inc_t)bi * g->stride[EP_BATCH_B][0];
        *oc = (ep_inc_t)bi * g->stride[EP_BATCH_C][0];
        return;
    }
    *oa = *ob = *oc = 0;
    for (int x = g->ndim - 1; x >= 0; x--) {
        ep_dim_t i = bi % g->extent[x];
        bi /= g->extent[x];
        *oa += i * g->stride[EP_BATCH_A][x];
        *ob += i * g->stride[EP_BATCH_B][x];
        *oc += i * g->stride[EP_BATCH_C][x];
    }
}

// EINPLAN_ALWAYS_PACK=1 sends every call through the packed five loops
// (no GEMV path, no in-place B): tests compare the paths with it.
static int ep_always_pack(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("EINPLAN_ALWAYS_PACK");
        v = e && *e && *e != '0';
    }
    return v;
}

// m == 1 or n == 1: the GEMV path, threads over batches when they are many
// and small, else over blocks of the output vector.
static void ep_gemv_all(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                        const ep_schedule_t *s)
{
    ep_dim_t M = s->M, N = s->N, NB = s->NB;
    int nt = s->nthreads, by_batch = s->loop == EP_LOOP_BATCH;
    int n_is_one = N == 1;
    ep_dim_t J = n_is_one ? M : N;
    if (nt == 1) {
        for (ep_dim_t bi = 0; bi < NB; bi++) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_gemv_at(d, u, n_is_one, oa, ob, oc, 0, J);
        }
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr);
        for (ep_dim_t bi = by_batch ? tid : 0; bi < NB; bi += by_batch ? ntr : 1) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_dim_t j0 = 0, j1 = J;
            if (!by_batch) {                 // slices of whole JB blocks
                ep_dim_t nblk = (J + EP_GEMV_JB - 1) / EP_GEMV_JB;
                j0 = nblk * tid / ntr * EP_GEMV_JB;
                j1 = nblk * (tid + 1) / ntr * EP_GEMV_JB;
                if (j1 > J) j1 = J;
            }
            if (j0 < j1) ep_gemv_at(d, u, n_is_one, oa, ob, oc, j0, j1);
        }
    }
}

// Narrow GEMMs -- n up to 8 vectors (128 f32 / 64 f64 with AVX-512), any m
// and k; "bij,bjk->bik" with 4x4 .. 64x64 blocks is the case that asked for
// it -- read A, B and C in place through the ISA's smm kernel.  With n that
// narrow, packing A costs as much as the arithmetic it feeds (each element
// of A meets at most n / NR + 1 panels) and an 8 x NR tile is mostly fringe.
// Zen 4, 2026-11-21, 1 thread, ratio to numpy.matmul smm / packed path
// (f32 unless said): 30 x 64^3 0.98 / 0.78; 15 x 80^3 0.97 / 0.65;
// 8 x 128^3 1.15 / 0.99; 2000x128x128 1.09 / 0.96; 256x128x4096 1.13 / 0.88;
// 2000x128x2000 1.16 / 0.85; f64 10000x32x512 1.91 / 0.90; f64
// 2000x64x2000 1.38 / 0.93.  Needs single-axis m, n, k groups with unit n
// stride in B and C.  Returns 0 when the call does not qualify.
static int ep_small_ok(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       ep_dim_t M, ep_dim_t N, ep_dim_t K)
{
    const ep_groups_t *g = d->g;
    int fp32 = d->dtype == EP_FLOAT32;
    if ((fp32 ? !u->ssmm : !u->dsmm) || d->b_packed || ep_always_pack())
        return 0;
    if (N > (fp32 ? u->smm_max_n_s : u->smm_max_n_d) || K == 0 || M > INT_MAX)
        return 0;
    // AVX2 (16 registers, 3-vector blocks): each tile of R rows streams the
    // K x block of B; from L2 that loses to packing.  Zen 3, 2026-11-23,
    // 1 thread, ratio to numpy.matmul smm / packed: f32 10000x512x32
    // 0.84 / 1.08, f64 10000x512x32 0.83 / 1.12, f32 256x4096x64 0.47 /
    // 0.81; with B in L1 smm wins: 976 x 16^3 1.62 / 0.49, 15 x 64^3
    // 0.82 / 0.72.  Passes over k with B's block in L1 read A and C
    // several times and lose more (f32 10000x512x32 0.50).
    int l1_cols = fp32 ? u->smm_l1_cols_s : u->smm_l1_cols_d;
    if (l1_cols) {
        static ep_dim_t l1d = -1;      // the same value from any thread
        if (l1d < 0) {
            ep_dim_t l2, l3, v;
            ep_cache_sizes(&v, &l2, &l3);
            l1d = v > 0 ? v : 32 << 10;
        }
        ep_dim_t cols = N < l1_cols ? N : l1_cols;
        if (K * cols * (fp32 ? 4 : 8) > l1d / 2) return 0;
    }
    return g->m.ndim <= 1 && g->n.ndim == 1 && g->k.ndim <= 1 &&
           g->n.stride[EP_N_B][0] == 1 && g->n.stride[EP_N_C][0] == 1;
}

// Rows i0 .. i1 of one batch index of the smm path.
static void ep_small_one(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                         const ep_schedule_t *s, ep_dim_t bi, ep_dim_t i0,
                         ep_dim_t i1, ep_inc_t rsa, ep_inc_t csa, ep_inc_t rsb,
                         ep_inc_t rsc)
{
    ep_inc_t oa, ob, oc;
    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
    oa += i0 * rsa;
    oc += i0 * rsc;
    if (d->dtype == EP_FLOAT32)
        u->ssmm((int)(i1 - i0), (int)s->N, s->K, (const float *)d->a + oa, rsa,
                csa, (const float *)d->b + ob, rsb, (float *)d->c + oc, rsc,
                (float)d->alpha, (float)d->beta);
    else
        u->dsmm((int)(i1 - i0), (int)s->N, s->K, (const double *)d->a + oa, rsa,
                csa, (const double *)d->b + ob, rsb, (double *)d->c + oc, rsc,
                d->alpha, d->beta);
}

// Threads over m take row ranges in multiples of this (the smm tiles are 8
// or 6 rows): every row is still summed in the same order, so the result is
// the same to the last bit for any thread count.
#define EP_SMM_ROW_QUANTUM 24

static void ep_small_all(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                         const ep_schedule_t *s)
{
    const ep_groups_t *g = d->g;
    int nt = s->nthreads;
    ep_dim_t NB = s->NB, M = s->M;
    ep_inc_t rsa = g->m.ndim ? g->m.stride[EP_M_A][0] : 0;
    ep_inc_t rsc = g->m.ndim ? g->m.stride[EP_M_C][0] : 0;
    ep_inc_t csa = g->k.ndim ? g->k.stride[EP_K_A][0] : 0;
    ep_inc_t rsb = g->k.ndim ? g->k.stride[EP_K_B][0] : 0;
    // no OpenMP call at all on one thread: even an if(0) region costs ~0.7 us
    if (nt == 1) {
        for (ep_dim_t bi = 0; bi < NB; bi++)
            ep_small_one(d, u, s, bi, 0, M, rsa, csa, rsb, rsc);
        return;
    }
    if (s->loop == EP_LOOP_BATCH) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
        for (ep_dim_t bi = 0; bi < NB; bi++)
            ep_small_one(d, u, s, bi, 0, M, rsa, csa, rsb, rsc);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {                                    // EP_LOOP_M: a range of rows each
        int tid, ntr;
        ep_team(&tid, &ntr);
        ep_dim_t q = EP_SMM_ROW_QUANTUM;
        ep_dim_t chunk = ((M + ntr - 1) / ntr + q - 1) / q * q;
        ep_dim_t i0 = chunk * tid, i1 = i0 + chunk < M ? i0 + chunk : M;
        for (ep_dim_t bi = 0; bi < NB && i0 < i1; bi++)
            ep_small_one(d, u, s, bi, i0, i1, rsa, csa, rsb, rsc);
    }
}

void ep_gemm_schedule(const ep_gemm_desc_t *d, ep_schedule_t *s)
{
    const ep_ukr_set_t *u = ep_ukr_set();
    ep_dim_t M = ep_group_size(&d->g->m), N = ep_group_size(&d->g->n);
    ep_dim_t K = ep_group_size(&d->g->k), NB = ep_group_size(&d->g->batch);
    int nt = ep_clamp_threads(d->nthreads > 0 ? d->nthreads : ep_get_num_threads());
    s->M = M; s->N = N; s->K = K; s->NB = NB;
    s->bk = ep_blocking(d->dtype);
    s->direct_b = 0;
    s->loop = EP_LOOP_NONE;
    if (M == 0 || N == 0 || NB == 0) {
        s->path = EP_PATH_EMPTY;
        s->nthreads = 1;
        return;
    }
    double flops = 2.0 * (double)M * (double)N * (double)(K ? K : 1);
    // Threads: none for small work (a fork/join costs more than it saves)
    if (flops * (double)NB < EP_MIN_PARALLEL_FLOPS) nt = 1;
    // 1m (complex) needs B's packing: the packed path only
    if (K > 0 && (M == 1 || N == 1) && !ep_always_pack() && !d->b_packed && !d->cplx) {
        // GEMV: whole vectors per thread when batches are many and small,
        // else slices of the output vector
        s->path = EP_PATH_GEMV;
        s->nthreads = nt;
        if (nt > 1)
            s->loop = NB >= nt && flops < 2e6 ? EP_LOOP_BATCH : EP_LOOP_N;
        return;
    }
    if (!d->cplx && ep_small_ok(d, u, M, N, K)) {
        // threads over batches when there are enough, else over rows
        s->path = EP_PATH_SMM;
        s->loop = nt > 1 && NB >= nt ? EP_LOOP_BATCH
                : nt > 1 && M >= EP_SMM_ROW_QUANTUM * nt ? EP_LOOP_M : EP_LOOP_NONE;
        s->nthreads = s->loop == EP_LOOP_NONE ? 1 : nt;
        return;
    }
    s->path = EP_PATH_GEMM;
    // whole GEMMs per thread when each is too small to split well, or when
    // they share out evenly (EP_BY_BATCH_FLOPS)
    int by_batch = nt > 1 && NB >= nt &&
                   (flops < 4e6 || (flops < EP_BY_BATCH_FLOPS &&
                                    (NB % nt == 0 || NB >= 4 * (ep_dim_t)nt)));
    if (by_batch && nt > NB) nt = (int)NB;
    // blocks no larger than the problem (the threads' share of m is split
    // evenly in ep_gemm_template.h)
    ep_kn_blocks(&s->bk, K, N, d->cplx);
    if (M < s->bk.mc) s->bk.mc = (M + s->bk.mr - 1) / s->bk.mr * s->bk.mr;
    if (K == 0) {                       // C = beta * C: blocks of EP_SCALE_BLOCK
        if (s->bk.mc < EP_SCALE_BLOCK) s->bk.mc = EP_SCALE_BLOCK;
        if (s->bk.nc < EP_SCALE_BLOCK) s->bk.nc = EP_SCALE_BLOCK;
    }
    s->direct_b = M <= (d->dtype == EP_FLOAT32 ? u->direct_b_max_m_s : u->direct_b_max_m_d) &&
                  !ep_always_pack() && !d->b_packed &&
                  !d->cplx;
    s->nthreads = nt;
    if (nt > 1) {
        ep_dim_t mpanels = (M + s->bk.mr - 1) / s->bk.mr;
        s->loop = by_batch ? EP_LOOP_BATCH
                : mpanels >= (ep_dim_t)nt * EP_SPLIT_M_MIN_PANELS ? EP_LOOP_M : EP_LOOP_N;
    }
}

ep_status_t ep_gemm(const ep_gemm_desc_t *d)
{
    const ep_ukr_set_t *u = ep_ukr_set();
    ep_schedule_t sc;
    ep_gemm_schedule(d, &sc);
    switch (sc.path) {
    case EP_PATH_EMPTY: return EP_OK;
    case EP_PATH_GEMV: ep_gemv_all(d, u, &sc); return EP_OK;
    case EP_PATH_SMM: ep_small_all(d, u, &sc); return EP_OK;
    case EP_PATH_GEMM: break;
    }
    ep_blocking_t bk = sc.bk;
    ep_dim_t M = sc.M, N = sc.N, K = sc.K, NB = sc.NB;
    ep_dim_t kc = bk.kc, nc = bk.nc;
    int nt = sc.nthreads, by_batch = sc.loop == EP_LOOP_BATCH;
    size_t esize = d->dtype == EP_FLOAT32 ? 4 : 8;

    int failed = 0;
    ep_shared_t sh_all = {M, N, K, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    sh_all.direct_b = sc.direct_b;
    if (d->b_packed) sh_all.packed_b_per = ep_packed_b_batch_elems(&bk, K, N);
    if (nt == 1) {           // no parallel region at all: small calls stay cheap
        ep_thread_bufs_t tb;
        if (!ep_carve(&bk, esize, bk.mc, kc, nc, &tb, &sh_all)) return EP_ERR_NOMEM;
        for (ep_dim_t bi = 0; bi < NB; bi++) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_gemm_at(d, u, &bk, &sh_all, &tb, bi, oa, ob, oc, 0, 1);
        }
        return EP_OK;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) shared(failed, sh_all)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr);
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
                for (ep_dim_t bi = tid; bi < NB; bi += ntr) {
                    ep_inc_t oa, ob, oc;
                    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
                    ep_gemm_at(d, u, &bk, &sh, &tb, bi, oa, ob, oc, 0, 1);
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
                    ep_gemm_at(d, u, &bk, &sh_all, &tb, bi, oa, ob, oc, tid, ntr);
                    EP_BARRIER(ntr);
                }
            }
        }
    }
    return failed ? EP_ERR_NOMEM : EP_OK;
}
