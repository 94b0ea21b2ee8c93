// ep_blocking.c -- MC, KC, NC from the cache sizes (BLIS's analytical
// model), computed once per (ISA, dtype), and fitted to one GEMM.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ep_blocking.h"
#include "ep_pack.h"
#include "ukr/ep_ukr.h"

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

// A short k leaves the KC x NC panel of B small: NC grows to keep its bytes,
// up to this many times (the n offsets of a block, two per column, stay
// within half of L2).  Each NC block costs the threads three barriers, and
// a long n with a short k crossed hundreds: 'ij...,jk...->ik...' (3,2,5,1) x
// (2,135847,1,2) f64, k = 2 and n = 271694 in 67 blocks, ran 2.8 ms on two
// threads and 2.4 on one (Zen 4).
#define EP_NC_GROWTH 8

void ep_kn_blocks(ep_blocking_t *bk, ep_dim_t K, ep_dim_t N, int cplx)
{
    const ep_dim_t kc0 = bk->kc, nc0 = bk->nc;
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
    ep_dim_t grow = kc < kc0 ? kc0 / kc : 1;
    ep_dim_t nc = nc0 * (grow < EP_NC_GROWTH ? grow : EP_NC_GROWTH);
    bk->nc = N < nc ? N : nc;
}

ep_dim_t ep_packed_b_batch_elems(const ep_blocking_t *bk, ep_dim_t K, ep_dim_t N)
{
    ep_dim_t full = N / bk->nc, last = N % bk->nc;
    return K * (full * EP_ROUND_UP(bk->nc, bk->nr) + EP_ROUND_UP(last, bk->nr));
}
