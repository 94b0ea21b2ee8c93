// ep_schedule.c -- what ep_gemm does with a descriptor: the path (packed
// GEMM, GEMV, small in-place GEMM), the threads and the loop they share
// out, the blocking, and whether B is read in place.  Every threshold of
// these decisions is here, each with the measurement that set it.  The
// schedule depends only on the descriptor, the kernel set, the caches and
// the thread count asked for; a plan makes it once per GEMM step (the
// descriptor keeps it, the Plan records it), the drivers (ep_gemm.c,
// ep_gemv.c, ep_smm.c) run exactly what it says, and explain prints it.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include "ep_api.h"
#include "ep_blocking.h"
#include "ep_gemv.h"
#include "ep_pack.h"
#include "ep_measured.h"
#include "ep_schedule.h"
#include "ep_smm.h"
#include "ukr/ep_ukr.h"

// Below this many flops in a call, threads cost more than they save: a
// fork/join of the OpenMP team and its barriers take ~10-15 us here (Zen 4,
// libgomp).  Measured 2026-11-21, f64 square GEMM, 1 vs 2 threads: 64^3
// (5e5 flops) 28 vs 43 us; 128^3 (4e6 flops) 108 vs 77 us.
#define EP_MIN_PARALLEL_FLOPS 2e6

// A GEMV of fewer flops than this runs whole per thread when the batches
// are at least as many as the threads (no recorded measurement: the size
// at which EP_MIN_PARALLEL_FLOPS lets one GEMM use threads at all).
#define EP_GEMV_BY_BATCH_FLOPS 2e6

// The GEMV path takes A's rows against a few columns of B from this k on:
// the loop nest's small-edge kernel dots rows up to nest.SHORT_DOT_ROW, as
// fast or faster (Zen 3, 1 thread, us, there / here: 'ij,jk->ik' (1000,
// 2048) x (2048,2) f64 455-579 / 1049-1201; (100,3000) x (3000,4) f32 61 /
// 73-76), and the packed engine copies all of A beyond them ((24,199568) x
// (199568,4) f32: 3.7-4.1 ms packed, 1.7-1.8 ms here, numpy 1.6-1.8).
#define EP_GEMV_COLS_MIN_K 16385
// Complex, from this k on for at most EP_GEMV_COLS_ROWS_1M rows: the
// nest's register tiles run along m, gathering across rows as far apart as
// k is long (Zen 3, 1 thread, us, nest / here: 'bij,bjk->bik' (2451,4,1280) x
// (2451,1280,2) c64 24633 / 20137, numpy 19622; (2,10000) x (10000,2) c64
// 151 / 60); more rows ran either way (c64 (400,600) x (600,2) 194 / 166,
// c128 198 / 307), as did small calls ((3,2000) x (2000,2) c64 12 / 18:
// all the rows and batches together reach EP_GEMV_COLS_MIN_K of k).
#define EP_GEMV_COLS_MIN_K_1M 1024
#define EP_GEMV_COLS_ROWS_1M 8

// The GEMV path's few rows share k among threads (EP_LOOP_K) when each
// thread reads at least this many bytes of A and B.
#define EP_GEMV_BY_K_BYTES (256.0 * 1024)

// A packed GEMM of fewer flops than this runs whole per thread whenever the
// batches are at least as many as the threads: splitting it leaves each
// thread a few micro-panels between barriers (no recorded measurement:
// 128^3, the smallest square GEMM that gains from 2 threads above).
#define EP_BY_BATCH_MIN_FLOPS 4e6

// Batched GEMMs up to this many flops each run whole per thread when the
// batches share out evenly (NB a multiple of the threads, or many): no
// barriers and no shared B panel per GEMM.  Zen 4, 2026-11-21, 2 threads,
// 64 batches, split inside each GEMM / whole GEMMs per thread:
// 'bik,bjk->bij' 128^3 f32 1.81 / 1.52 ms; 'acb,cd->adb' 256^3 12.1 / 11.5 ms.
#ifndef EP_BY_BATCH_FLOPS
#define EP_BY_BATCH_FLOPS 1e8
#endif

// Threads split m (each packs its own rows of A) when every thread gets at
// least this many MR panels; below, they split n and share A's packing.
// Zen 4, 2 threads, 2026-11-21: tract m = 462 (58 panels of 8) split by m
// (imbalanced MC blocks) 0.82x, split by equal panel ranges 1.04x of
// numpy's merged reshape@; m = 77 split by n 1.03-1.23x.
#define EP_SPLIT_M_MIN_PANELS 8

// B may be read in place (full NR-wide panels with unit n stride and a
// regular k stride) when m has at most the kernel set's direct_b_max_m_s/_d
// rows (for more than one MR panel, when measured faster; below):
// each element of B then meets so few micro-tiles that packing it costs
// more than it saves.  Measured for 'bij,jk->bik' shapes (k = 512,
// n = 1536), 1 thread, ratio to numpy's merged reshape@ with B read in
// place / packed:
//   AVX-512, Zen 4, 2026-11-21, f32: m = 77: 1.13 / 1.02; m = 231: 1.08 /
//   0.95; m = 462: 0.94 / 1.00; m = 1232: 1.02 / 1.02  -> 256 rows;
//   AVX2, Zen 3, 2026-11-23: m = 6: f32 2.0 / 0.85, f64 1.5 / 1.4; m = 16:
//   f32 1.05 / 0.66, f64 0.62 / 0.84; m = 77: f32 0.89 / 0.94, f64 0.57 /
//   1.04; m = 231: f64 0.49 / 1.08; 256^3 f64 0.77 / 1.00  -> 16 rows f32,
//   6 f64 (B's rows are pages apart: a panel read in place thrashes the
//   L1 TLB once several row panels reuse it).

// B read in place, or packed one panel at a time, is walked down a panel's
// KC rows for each NR panel: one line or two of every row, rows ldb apart.
// When B spans more pages than the second-level TLB holds (2048 entries on
// Zen 3 and 4, 1536-2048 on recent Intel cores: B past EP_TLB_PAGES), a
// walk of a few hundred rows pages apart misses the TLB at every row; KC
// is cut so that a panel's rows lie on at most EP_IN_PLACE_PAGES pages
// (the rows split into even blocks) -- while C is within L2, so that the
// more passes over it cost little beside B's one read (the AVX-512 set
// reads B in place for up to 256 rows).  Zen 3, 1 thread, f32 6 x 1024 x n, a
// C loop of the AVX2 6 x 16 tile with B in place, ms: n = 4096 (B 16 MB,
// rows 16 KB apart) KC = 1024 3.9, 512 1.8-2.5, 256 1.3-1.4, 128 1.3-1.4,
// 16 1.5 (with the next panel's rows fetched ahead, ep_ukr.h; numpy
// 2.3-2.6); n = 2048 (8 MB) KC = 1024 0.93, 128 0.63; n = 1536 (6 MB)
// 0.40 either way.
#define EP_TLB_PAGES 1024
#define EP_IN_PLACE_PAGES 128

static void ep_in_place_kc(ep_blocking_t *bk, const ep_group_t *k, ep_dim_t K, size_t es)
{
    if (K < 2) return;
    double span = 0;                   // bytes from B's first row to its last
    for (int i = 0; i < k->ndim; i++) {
        ep_inc_t st = k->stride[EP_K_B][i];
        span += (double)(k->extent[i] - 1) * (double)(st < 0 ? -st : st) * (double)es;
    }
    if (span <= EP_TLB_PAGES * 4096.0) return;
    double gap = span / (double)(K - 1);               // between rows
    double rows_per_page = gap >= 4096 ? 1 : 4096 / (gap > 0 ? gap : 1);
    double most = EP_IN_PLACE_PAGES * rows_per_page;
    if ((double)bk->kc <= most) return;
    ep_dim_t cap = (ep_dim_t)most, nkb = (K + cap - 1) / cap;
    bk->kc = (K + nkb - 1) / nkb;        // at most cap, below the old KC
}

// This core's L1d (32 KB where the caches are not known).
static ep_dim_t ep_l1d_bytes(void)
{
    ep_dim_t l1d, l2, l3;              // read once per process (ep_cpu.c)
    ep_cache_sizes(&l1d, &l2, &l3);
    return l1d > 0 ? l1d : 32 << 10;
}

// This core's L2 (512 KB where the caches are not known).
static ep_dim_t ep_l2_bytes(void)
{
    ep_dim_t l1d, l2, l3;
    ep_cache_sizes(&l1d, &l2, &l3);
    return l2 > 0 ? l2 : 512 << 10;
}

// On other cores the rows up to which in place wins differ by far more:
// Emerald Rapids, 2026-11-28, f64 'ij,jk->ik' k = 512, n = 1536, 1 thread,
// us in place / packed (numpy): m = 16: 687 / 925 (723); m = 32: 1342 /
// 1180 (969); m = 77: 3459 / 2288 (2010); m = 231: 10150 / 5216 (5380);
// f32 256^3: 237 / 227 (228).  So past one panel of MR rows the schedule
// names no winner: the calls take the two ways in turn until each has done
// EP_B_WAY_WORK flops, per kernel set, dtype and class of m (up to 2, 4, 8,
// 16 and more MR rows), and the faster stays for the process.  They are
// compared by flops a nanosecond, so classes hold calls of like shapes.
#define EP_B_WAY_CLASSES 5
#define EP_B_WAY_WORK ((int64_t)256 << 20)
#define EP_B_WAY_STATES (EP_ISA_COUNT * 2 * 2 * EP_B_WAY_CLASSES)
static ep_measured_t ep_b_ways[EP_B_WAY_STATES] = {[0 ... EP_B_WAY_STATES - 1] =
                                                       EP_MEASURED_INIT};

// B is past half of L2: read in place, its rows come from L3 (m = 32, k =
// 512, f64: n = 256 134 us in place, 169 packed; n = 1536 1342 / 1180)
static int ep_b_past_l2(ep_dim_t K, ep_dim_t N, int dtype)
{
    return (double)K * (double)N * (dtype == EP_FLOAT32 ? 4 : 8) > 0.5 * (double)ep_l2_bytes();
}

static ep_measured_t *ep_b_way_of(const ep_schedule_t *s, int dtype)
{
    int c = 0;
    while (c < EP_B_WAY_CLASSES - 1 && s->M > ((ep_dim_t)2 * s->bk.mr << c)) c++;
    int far = ep_b_past_l2(s->K, s->N, dtype);
    int dt = dtype == EP_FLOAT32 ? 0 : 1;
    return &ep_b_ways[((s->for_isa * 2 + dt) * 2 + far) * EP_B_WAY_CLASSES + c];
}

int ep_b_way_now(const ep_schedule_t *s, int dtype)
{
    if (s->direct_b != EP_B_MEASURED) return s->direct_b;
    int pick = ep_measured_pick(ep_b_way_of(s, dtype));
    return pick < 0 ? -1 : pick == 1 ? EP_B_PACKED : EP_B_IN_PLACE;
}

int ep_b_way_turn(const ep_schedule_t *s, int dtype, ep_measured_t **m)
{
    *m = NULL;
    int now = ep_b_way_now(s, dtype);
    if (now >= 0) return now;
    ep_measured_t *w = ep_b_way_of(s, dtype);
    // each way's first call is not timed: it pays the packing workspace's
    // first touch, or B's first trip into the caches
    int timed, way = ep_measured_turn_timed(w, &timed);
    if (timed) *m = w;
    return way ? EP_B_PACKED : EP_B_IN_PLACE;
}

void ep_b_way_sample(ep_measured_t *m, int way, const ep_schedule_t *s, int64_t ns)
{
    double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K * (double)s->NB;
    ep_measured_sample(m, way == EP_B_PACKED, flops < 1e18 ? (int64_t)flops : (int64_t)1e18,
                       ns, EP_B_WAY_WORK, 1.0);
}

// B read in place takes each micro-tile's NR columns across all of k: a
// line from every k row, rows a stride apart that no prefetcher follows.
// From L3 that is latency the kernel hides; from memory it is not: B of
// more than this core's share of L3 is packed (Zen 3, f32, m = 3, k = 427,
// n = 24058, B 41 MB: 11.6 ms in place, 4.2-5.0 ms packed, numpy 5.4-9.3;
// m = 6, n = 1536 / 4096 (B 3 / 8 MB): 0.23 / 1.9 ms in place, 0.57 /
// 3.5 ms packed; n = 8192 (16 MB): even).
static int ep_b_fits_l3(ep_dim_t K, ep_dim_t N, int esize)
{
    static ep_dim_t share;         // read once (sysfs): a benign race
    if (!share) {
        ep_dim_t l1, l2, l3;
        ep_cache_sizes(&l1, &l2, &l3);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        share = l3 > 0 ? l3 / (ncpu > 0 ? ncpu : 1) : (ep_dim_t)2 << 20;
    }
    return (double)K * (double)N * esize <= (double)share;
}


// A complex (1m) call on the smm path gathers A's rows into the thread's
// workspace when its k is not unit-stride, up to this many bytes (half
// of L2 here; larger A take the packed path, which packs it in blocks).
#define EP_SMM_1M_MAX_A_BYTES (256 << 10)

// A real B whose n is not unit-stride (k-contiguous, 'bik,bjk->bij') is
// gathered per batch index into rows of N for the smm kernel while its
// K x N block fits L1 (the kernel streams it once per tile of rows); the
// packed path would pack it as well, and A too, for a narrow n of mostly
// fringe tiles.  Zen 4, 1 thread, ms, packed / gathered (numpy's best):
// f64 'bij,bkj->bki' (2547,4,91) x (2547,18,91) 8.6 / 3.8-4.1 (4.0-4.4);
// 'bik,bjk->bij' (1000,16,32)^2 f32 0.55 / 0.28 (0.30), (64,128,64)^2
// f32 1.52 / 1.34 (1.73); past L1, (64,128,128)^2 f32 3.21 / 3.33 (4.1).

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
#define EP_SMM_F_MIN_K 128
#define EP_SMM_F32_LANES_512 16   // float32 lanes of a 512-bit vector

// A real B whose n is not unit-stride is gathered into a K x N block
// (ep_smm.c) that every tile of rows then streams: a block within L1, or,
// for sets that stream B from L2 (no smm_l1_cols, as they stream a
// unit-stride B of any size), one within a quarter of L2 that at least
// EP_SMM_GATHER_PASSES tiles of rows read, the gather then costing at most
// a quarter of B's reads.  Intel Xeon AVX-512, 1 thread, us, A packed / B
// gathered for smm (numpy): 'ijk,jkl->il' (2694,594,4) x (594,4,10)[..., ::2]
// f64 6314 / 3722 (5156); 'ij,jk->ik' (588,1235)[:, ::2] x (1235,13):T f64
// (a chain's step) 1045 / 525 (1496); for fewer rows the gather costs
// more than it saves: (2,897) x (897,28):T f32 3 / 9, 'abc,cd->abd' with
// m = 14 f64 22 / 29.
#define EP_SMM_GATHER_PASSES 4
static int ep_smm_gathers(const ep_ukr_set_t *u, int fp32, ep_dim_t M, ep_dim_t N,
                          ep_dim_t K)
{
    double bytes = (double)K * (double)N * (fp32 ? 4 : 8);
    if (bytes <= (double)ep_l1d_bytes())
        return 1;
    return !(u->smm_l1_cols_s || u->smm_l1_cols_d) &&
           (fp32 ? u->ssmm_passes : u->dsmm_passes)(M, N) >= EP_SMM_GATHER_PASSES &&
           bytes <= 0.25 * (double)ep_l2_bytes();
}

static int ep_smm_fits(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       ep_dim_t M, ep_dim_t N, ep_dim_t K)
{
    const ep_groups_t *g = d->g;
    int fp32 = d->dtype == EP_FLOAT32;
    if ((fp32 ? !u->ssmm : !u->dsmm) || d->b_packed)
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
    // Rows that take at most two passes over B leave its size no matter:
    // 'bij,bjk->bik' (1858,3,1147) x (1858,1147,4) f64 packed A and B per
    // batch index (239 MB for 120 MB of operands), 37 ms against numpy's
    // 17; 'ij,jk->ik' (9,293965) F x (293965,3) f64, 6.8 ms against 4.0.
    int l1_cols = fp32 ? u->smm_l1_cols_s : u->smm_l1_cols_d;
    if (l1_cols && (fp32 ? u->ssmm_passes : u->dsmm_passes)(M, N) > 2) {
        ep_dim_t cols = N < l1_cols ? N : l1_cols;
        if (K * cols * (fp32 ? 4 : 8) > ep_l1d_bytes() / 2) return 0;
    }
    // A unit-stride along m with its columns closer than a page (Fortran
    // order, a few hundred rows): in place, each tile of rows takes a line
    // from every column of k, as many streams as k is long; packed, each
    // column's run of a block's rows is copied once, prefetched, and the
    // micro-kernel reads the copy in order.  Emerald Rapids, 1 thread,
    // 'ij,kj->ik' F x F, ms, A transposed block by block for smm / packed
    // (numpy): f64 (292, 32332) x 39 20.1 / 18.2 (19.6); (64, 32332) x 16
    // 2.3 / 1.9 (2.6); f32 (400, 4000) x 22 1.54 / 1.10 (1.10); (300,
    // 3000) x 22 0.86 / 0.63 (0.64).  Columns a page apart run in blocks
    // of k (ep_smm.c) -- but for float32 under AVX-512 only when each row
    // of C is whole vectors: with a partial last vector the blocks ran
    // 1.2-2.5x the packed path ('ij,jk->ik' F x C, ms, blocks / packed
    // (numpy): (12104, 821) x 24 11.4 / 7.1 (6.1), x 12 6.9 / 5.5 (5.4),
    // x 40 21 / 9.0 (8.4); (8000, 160) x 24 0.97 / 0.79 (0.76); with 16,
    // 32 or 48 columns the blocks win: (8000, 160) x 48 0.92 / 1.04 (1.10)).
    if (!d->cplx && g->m.ndim == 1 && g->k.ndim == 1 && g->m.stride[EP_M_A][0] == 1 &&
        M > EP_SMM_ROW_QUANTUM && K >= EP_SMM_F_MIN_K) {
        ep_inc_t csa = g->k.stride[EP_K_A][0];
        if (csa != 1 && csa != -1) {
            if (!ep_smm_far_apart(csa, fp32 ? 4 : 8)) return 0;
            if (fp32 && u->isa == EP_ISA_AVX512 && N % EP_SMM_F32_LANES_512 != 0) return 0;
        }
    }
    if (!d->cplx)
        return g->m.ndim <= 1 && g->n.ndim == 1 && g->k.ndim <= 1 &&
               g->n.stride[EP_N_C][0] == 1 &&
               (g->n.stride[EP_N_B][0] == 1 || ep_smm_gathers(u, fp32, M, N, K));
    // 1m (the real groups, ep_api.h): one complex m, n and k axis at most,
    // n unit-stride in C; B is packed per batch index (any layout), A too
    // when its k is not unit-stride, as long as its rows fit in L2.  Zen 3,
    // 2026-11-23, 1 thread, CPU-time medians, ratio to numpy.matmul packed
    // path / smm: 'bij,bjk->bik' (256,8,8) c64 0.30 / 1.00, c128 0.32 /
    // 0.98; (64,16,16) c64 0.42 / 0.84, c128 0.50 / 0.97
    if (g->m.ndim > 1 || g->n.ndim != 2 || g->k.ndim > 2 ||
        (g->n.stride[EP_N_C][0] != 2 && g->n.extent[0] > 1))
        return 0;
    int a_unit = g->k.ndim == 1 || g->k.stride[EP_K_A][0] == 2 || g->k.extent[0] == 1;
    return a_unit || M * K * (fp32 ? 4 : 8) <= EP_SMM_1M_MAX_A_BYTES;
}

// 1m with few rows: B's 2x2 real form is twice its bytes, and packed whole
// (a kc x nc panel of several MB) it goes out to L3 or memory and comes
// back for the few A panels that meet it; there it costs as much as the
// arithmetic.  When all of m fits one MC block in L2 beside one B panel,
// each NR panel of B is packed right before its A panels meet it, into the
// thread's own slot (threads split n then, each packing the panels it
// computes; real B too, below).  Zen 3, 1 thread, loaded (load ~4), tract
// 'bij,jk->bik' (77,1,512) x (512,1536) complex64: B's packing was 25% of
// the profile.
#define EP_B_BY_PANEL_L2 0.75
// At most this many MR panels of A take a B of several KC blocks, read
// along n, a panel at a time (below, ep_schedule)
#define EP_BY_PANEL_MR_PANELS 4
static void ep_schedule_b_by_panel(ep_schedule_t *s, ep_dim_t M, size_t es)
{
    ep_dim_t rows = (M + s->bk.mr - 1) / s->bk.mr * s->bk.mr;
    double bytes = (double)(rows + s->bk.nr) * (double)s->bk.kc * (double)es;
    if (bytes > EP_B_BY_PANEL_L2 * (double)ep_l2_bytes())
        return;
    s->bk.mc = rows;                   // one MC block: each B panel packed once
    s->b_by_panel = 1;
}

// The GEMV path: whole vectors per thread when batches are many and small,
// else slices of the output vector
static void ep_schedule_gemv(ep_schedule_t *s, int nt, ep_dim_t NB, double flops)
{
    s->path = EP_PATH_GEMV;
    s->nthreads = nt;
    if (nt > 1)
        s->loop = NB >= nt && flops < EP_GEMV_BY_BATCH_FLOPS ? EP_LOOP_BATCH : EP_LOOP_N;
}

// The thread count a call asks for: the descriptor's, else the library's
// setting (set_num_threads, EINPLAN_NUM_THREADS, OpenMP's cap), clamped.
static int ep_schedule_threads(const ep_gemm_desc_t *d)
{
    return ep_clamp_threads(d->nthreads > 0 ? d->nthreads : ep_get_num_threads());
}

int ep_schedule_holds(const ep_schedule_t *s, const ep_gemm_desc_t *d)
{
    return s->for_threads == ep_schedule_threads(d) && s->for_isa == ep_isa() &&
           s->for_b_packed == (d->b_packed != NULL);
}

// The schedule of a call; packed_only: the packed path whatever the shape
// (no GEMV, no smm, no B read in place).
static void ep_schedule(const ep_gemm_desc_t *d, ep_schedule_t *s, int packed_only)
{
    const ep_ukr_set_t *u = ep_ukr_set();
    ep_dim_t M = ep_group_size(&d->g->m), N = ep_group_size(&d->g->n);
    ep_dim_t K = ep_group_size(&d->g->k), NB = ep_group_size(&d->g->batch);
    int nt = ep_schedule_threads(d);
    s->for_threads = nt;
    s->for_isa = ep_isa();
    s->for_b_packed = d->b_packed != NULL;
    s->M = M; s->N = N; s->K = K; s->NB = NB;
    s->bk = ep_blocking(d->dtype);
    s->direct_b = 0;
    s->b_by_panel = 0;
    s->loop = EP_LOOP_NONE;
    if (M == 0 || N == 0 || NB == 0) {
        s->path = EP_PATH_EMPTY;
        s->nthreads = 1;
        return;
    }
    double flops = 2.0 * (double)M * (double)N * (double)(K ? K : 1);
    // Threads: none for small work (a fork/join costs more than it saves)
    int nt_asked = nt;
    if (flops * (double)NB < EP_MIN_PARALLEL_FLOPS) nt = 1;
    // 1m (complex) needs B's packing: the packed path only
    int no_pack = K > 0 && !packed_only && !d->b_packed;
    int gemv_ok = no_pack && !d->cplx;
    if (gemv_ok && (M == 1 || N == 1)) {
        ep_schedule_gemv(s, nt, NB, flops);
        return;
    }
    // A's rows, unit-stride along one k axis, against 2 .. EP_GEMV_MAX_COLS
    // columns of B the smm kernel does not take: dots on the GEMV path, A
    // read once in place (an output slice of EP_GEMV_JB rows a thread).
    // Complex, before smm (whose 1m panels copy A and B for a few columns):
    // one complex k axis contiguous in A, the 1m groups' (re, im) axis after
    // it, up to EP_GEMV_MAX_COLS / 2 complex columns.
    int cols_ok = no_pack && N <= EP_GEMV_MAX_COLS;
    int cols_1m = cols_ok && d->cplx && d->g->k.ndim == 2 &&
                  d->g->k.stride[EP_K_A][0] == 2 &&
                  (K / 2 >= EP_GEMV_COLS_MIN_K ||
                   (K / 2 >= EP_GEMV_COLS_MIN_K_1M && M <= EP_GEMV_COLS_ROWS_1M &&
                    (double)NB * (double)M * (double)(K / 2) >= EP_GEMV_COLS_MIN_K));
    int cols_real = cols_ok && !d->cplx && M > 1 && K >= EP_GEMV_COLS_MIN_K &&
                    d->g->k.ndim == 1 && d->g->k.stride[EP_K_A][0] == 1;
    if (!cols_1m && !packed_only && ep_smm_fits(d, u, M, N, K)) {
        // threads over batches when there are enough, else over rows
        s->path = EP_PATH_SMM;
        s->loop = nt > 1 && NB >= nt ? EP_LOOP_BATCH
                : nt > 1 && M >= EP_SMM_ROW_QUANTUM * nt ? EP_LOOP_M : EP_LOOP_NONE;
        s->nthreads = s->loop == EP_LOOP_NONE ? 1 : nt;
        return;
    }
    if (cols_1m || cols_real) {
        ep_schedule_gemv(s, nt, NB, flops);
        // rows too few to share (one block) and batches fewer than the
        // threads: the threads share k instead, each at least
        // EP_GEMV_COLS_MIN_K of it and EP_GEMV_BY_K_BYTES of A and B (the
        // flops alone undersell this memory-bound work)
        if (nt_asked > 1 && NB < nt_asked && M <= EP_GEMV_JB) {
            double by_k = (double)(K / (d->cplx ? 2 : 1) / EP_GEMV_COLS_MIN_K);
            double by_bytes = (double)(M + N) * (double)K * (d->dtype == EP_FLOAT32 ? 4 : 8) /
                              EP_GEMV_BY_K_BYTES;
            double share = by_k < by_bytes ? by_k : by_bytes;
            s->nthreads = share >= nt_asked ? nt_asked : share >= 2 ? (int)share : 1;
            s->loop = s->nthreads > 1 ? EP_LOOP_K : EP_LOOP_NONE;
        } else if (nt > 1 && NB < nt && (M + EP_GEMV_JB - 1) / EP_GEMV_JB < nt) {
            s->nthreads = 1;
            s->loop = EP_LOOP_NONE;
        }
        return;
    }
    s->path = EP_PATH_GEMM;
    // whole GEMMs per thread when each is too small to split well, or when
    // they share out evenly
    int by_batch = nt > 1 && NB >= nt &&
                   (flops < EP_BY_BATCH_MIN_FLOPS ||
                    (flops < EP_BY_BATCH_FLOPS &&
                     (NB % nt == 0 || NB >= 4 * (ep_dim_t)nt)));
    if (by_batch && nt > NB) nt = (int)NB;
    // blocks no larger than the problem (the threads' share of m is split
    // evenly by the blocked driver, ep_gemm_template.h)
    ep_kn_blocks(&s->bk, K, N, d->cplx);
    if (M < s->bk.mc) s->bk.mc = (M + s->bk.mr - 1) / s->bk.mr * s->bk.mr;
    if (K == 0) {                       // C = beta * C: blocks of EP_SCALE_BLOCK
        if (s->bk.mc < EP_SCALE_BLOCK) s->bk.mc = EP_SCALE_BLOCK;
        if (s->bk.nc < EP_SCALE_BLOCK) s->bk.nc = EP_SCALE_BLOCK;
    }
    int in_place = M <= (d->dtype == EP_FLOAT32 ? u->direct_b_max_m_s : u->direct_b_max_m_d) &&
                   !packed_only && !d->b_packed &&
                   !d->cplx && ep_b_fits_l3(K, N, d->dtype == EP_FLOAT32 ? 4 : 8);
    s->direct_b = !in_place ? EP_B_PACKED : M <= s->bk.mr ? EP_B_IN_PLACE : EP_B_MEASURED;
    // both ways of a measured call take the same KC: the same sums, bit for bit
    size_t es = d->dtype == EP_FLOAT32 ? 4 : 8;
    if (in_place && (double)M * (double)N * (double)es <= (double)ep_l2_bytes())
        ep_in_place_kc(&s->bk, &d->g->k, K, es);
    s->nthreads = nt;
    if (nt > 1) {
        ep_dim_t mpanels = (M + s->bk.mr - 1) / s->bk.mr;
        s->loop = by_batch ? EP_LOOP_BATCH
                : mpanels >= (ep_dim_t)nt * EP_SPLIT_M_MIN_PANELS ? EP_LOOP_M : EP_LOOP_N;
        ep_dim_t npanels = (N + s->bk.nr - 1) / s->bk.nr;
        ep_dim_t share_m = (mpanels + nt - 1) / nt * npanels;   // both over
        ep_dim_t share_n = (npanels + nt - 1) / nt * mpanels;   // mpanels * npanels
        if (s->loop == EP_LOOP_N && mpanels >= 2 * (ep_dim_t)nt &&
            (share_m < share_n || (share_m == share_n && 2 * M >= N))) {
            // a thread's share of m's panels smaller than of n's, or the
            // same and A about as large as B: split m, each thread packing
            // only its own rows of A, not all of them ('ij,jk->ik' m = 84,
            // n = 42, k = 33402 f32: 3 panels of n split 2 : 1 ran 2 threads
            // no faster than 1; the 1m form of (42, 16701) x (16701, 44)
            // c64, m 44 and n 84 real, 3.2x faster split by m)
            s->loop = EP_LOOP_M;
        }
        if (s->loop == EP_LOOP_N && npanels < (ep_dim_t)nt) {
            // fewer NR panels of n than threads: the others would only wait
            // at its barriers ('ji,jk->ki' m = 57, n = 3, k = 62150 f32, Zen
            // 4: 2 threads over n 8.6 ms, 1 thread 4.9 ms).  Split m only
            // with two MR panels a thread or more: with one each, the first
            // panel's thread waits at every KC block's barrier for a second
            // that may hold one row ('ik,jk->ij' m = 9, n = 24, k = 7776
            // f64: 2 threads 262 us, 1 thread 222; m = 20, n = 10, k = 50000
            // f32: 1920 and 1179; m = 30, 4 panels: 1118 and 1511)
            if (mpanels >= 2 * (ep_dim_t)nt) {
                s->loop = EP_LOOP_M;
            } else {
                s->loop = EP_LOOP_NONE;
                s->nthreads = 1;
            }
        }
    }
    if (d->cplx && !packed_only && !d->b_packed && s->loop != EP_LOOP_M)
        ep_schedule_b_by_panel(s, M, d->dtype == EP_FLOAT32 ? 4 : 8);
    // a real B the calls time in place against packed, beyond half of L2:
    // packed, it goes one panel at a time as well (f64 'ij,jk->ik' k = 512,
    // n = 1536, Emerald Rapids, us, whole B packed / by panel (numpy): m =
    // 32: 1234 / 1108 (1014); m = 48: 1543 / 1406 (1321); m = 32, k = n =
    // 1024: 1779 / 1508 (1426); f32 within 4% either way).  So does a B
    // always packed in one KC block: its NC panel of several MB went out to
    // L3 or memory and back for the one MC block ('ij,jk->ik' Zen 3, 1
    // thread, whole / by panel: (64, 64) x (64, 38450) f64 0.84x / 1.18x
    // numpy, f32 1.09x / 1.48x; (20, 300) x (300, 20000) f32 0.80x / 1.31x).
    // With more KC blocks, so does a B whose panels pack from runs along k
    // (its k at unit stride), or one met by at most EP_BY_PANEL_MR_PANELS
    // panels of A: Zen 3, 1 thread, us, whole / by panel: B along k, f64
    // (24, 899) x (899, 2609) 6665 / 4220, (12, 2000) x (2000, 3000) 12459 /
    // 8746, (60, 1024) x (1024, 2048) 9112 / 7734; f32 (6, 3000) x (3000,
    // 3000) 8613 / 4241, (48, 2048) x (2048, 2048) 7261 / 5979.  B along n,
    // whose panels read KC rows a page or more apart: f64 (24, 899) x (899,
    // 2609) 6308 / 4445; f32 (24, 1500) x (1500, 3000) 6141 / 4881; with
    // more panels of A mixed: f64 (60, 1024) x (1024, 2048) 8372 / 9428, f32
    // (30, 4096) x (4096, 1000) 5022 / 5376, (48, 2048) x (2048, 2048) 6591
    // / 7394, (36, 1024) x (1024, 4096) 7302 / 6190.
    int b_along_k = d->g->k.ndim > 0 && d->g->k.stride[EP_K_B][d->g->k.ndim - 1] == 1;
    if (!d->cplx && !packed_only && !d->b_packed && s->loop != EP_LOOP_M &&
        (s->direct_b == EP_B_MEASURED ||
         (s->direct_b == EP_B_PACKED &&
          (K <= s->bk.kc || b_along_k || M <= EP_BY_PANEL_MR_PANELS * s->bk.mr))) &&
        ep_b_past_l2(K, N, d->dtype))
        ep_schedule_b_by_panel(s, M, d->dtype == EP_FLOAT32 ? 4 : 8);
}

void ep_gemm_schedule(const ep_gemm_desc_t *d, ep_schedule_t *s)
{
    ep_schedule(d, s, 0);
}

void ep_gemm_schedule_packed(const ep_gemm_desc_t *d, ep_schedule_t *s)
{
    ep_schedule(d, s, 1);
}
