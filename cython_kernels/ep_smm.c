// ep_smm.c -- the small in-place GEMM path: narrow GEMMs (n up to a few
// vectors) read A, B and C in place through the kernel set's smm kernel,
// with no packing (ep_schedule.c says when).  Complex GEMMs (1m, ep_api.h)
// take the same kernel on their real form: B, the only operand 1m must
// rewrite, is packed per batch index and block of k into this thread's
// workspace (EP_SMM_1M_BLOCK, in L2), A and C are read in place through
// their float views.
#include <string.h>
#include "ep_smm.h"
#include "ep_omp.h"
#include "ep_measured.h"
#include "ep_pack.h"
#include "ep_schedule.h"
#include "ep_workspace.h"

// The smm kernel's view of one batch index's operands: A's rows and
// columns, B's rows (its columns have stride 1), C's rows.  For a 1m call
// B and, when its k is not unit-stride, A point into the thread's
// workspace; so does a real B whose n is not unit-stride (csb != 1),
// gathered into rows of N.
typedef struct {
    const void *a, *b;
    void *c;
    ep_inc_t rsa, csa, rsb, rsc, csb;
} ep_smm_args_t;

// 1m: the real form (2K x 2N) of complex B's batch index at b (real
// offsets; sk, sn the real strides of its complex k and n axes), each
// complex element as the 2x2 block of ep_pack_template.h's pack_b_1m:
// row 2k (re, sb im), row 2k+1 (-sa sb im, sa re).  A's k not unit-stride:
// its M x 2K real rows gathered too (A row i at ap + i * 2K).
#define EP_SMM_1M_PACK(T, V, VN, SWAP, S0, S1, NAME)                         \
static void NAME(const ep_gemm_desc_t *d, ep_dim_t Kc, ep_dim_t Nc,         \
                 const T *restrict b, ep_inc_t sk, ep_inc_t sn,              \
                 const T *restrict a, ep_inc_t rsa, ep_inc_t ska,            \
                 ep_dim_t i0, ep_dim_t i1, T *restrict bp, T *restrict ap)   \
{                                                                            \
    const T sa = (d->cplx & EP_CPLX_CONJ_A) ? (T)-1 : (T)1;                  \
    const T sb = (d->cplx & EP_CPLX_CONJ_B) ? (T)-1 : (T)1;                  \
    const T nab = -sa * sb;                                                  \
    const V s0 = S0, s1 = S1;                                                \
    for (ep_dim_t p = 0; p < Kc; p++) {                                      \
        const T *restrict x = b + p * sk;                                    \
        T *restrict d0 = bp + 2 * p * (2 * Nc);                              \
        T *restrict d1 = d0 + 2 * Nc;                                        \
        ep_dim_t j = 0;                                                      \
        if (sn == 2)                /* a row of B is one run */              \
            for (; j + VN / 2 <= Nc; j += VN / 2) {                          \
                V v;                                                         \
                memcpy(&v, x + 2 * j, sizeof v);                             \
                V w = __builtin_shuffle(v, SWAP);                            \
                v *= s0;                                                     \
                w *= s1;                                                     \
                memcpy(d0 + 2 * j, &v, sizeof v);                            \
                memcpy(d1 + 2 * j, &w, sizeof w);                            \
            }                                                                \
        for (; j < Nc; j++) {                                                \
            T re = x[j * sn], im = x[j * sn + 1];                            \
            d0[2 * j] = re;                                                  \
            d0[2 * j + 1] = sb * im;                                         \
            d1[2 * j] = nab * im;                                            \
            d1[2 * j + 1] = sa * re;                                         \
        }                                                                    \
    }                                                                        \
    if (ap)                                                                  \
        for (ep_dim_t i = i0; i < i1; i++)                                   \
            for (ep_dim_t p = 0; p < Kc; p++) {                              \
                const T *e = a + i * rsa + p * ska;                          \
                ap[(i - i0) * 2 * Kc + 2 * p] = e[0];                        \
                ap[(i - i0) * 2 * Kc + 2 * p + 1] = e[1];                    \
            }                                                                \
}
// 16-byte vectors of the compiler's (any ISA): pairs swapped, signs as above
typedef float ep_v4s __attribute__((vector_size(16)));
typedef double ep_v2d __attribute__((vector_size(16)));
typedef int32_t ep_v4i __attribute__((vector_size(16)));
typedef int64_t ep_v2i __attribute__((vector_size(16)));
EP_SMM_1M_PACK(float, ep_v4s, 4, ((ep_v4i){1, 0, 3, 2}), ((ep_v4s){1, sb, 1, sb}),
               ((ep_v4s){nab, sa, nab, sa}), ep_smm_1m_pack_s)
EP_SMM_1M_PACK(double, ep_v2d, 2, ((ep_v2i){1, 0}), ((ep_v2d){1, sb}),
               ((ep_v2d){nab, sa}), ep_smm_1m_pack_d)
#undef EP_SMM_1M_PACK

// A whose columns lie a page or more apart (m unit-stride, 'ij' in
// Fortran order) is read a line per k for each tile of rows, each line on
// its own page; the next tile reads the next line of the same pages.  Run
// over all of k, those are as many interleaved streams as k is long, which
// the hardware prefetcher cannot follow: every line waits on memory.  Over
// blocks of a few columns (C re-read per block, from cache) the rows
// tiles walk the same few pages one line after another, which it follows.
// Zen 4, 1 thread, f64 (3476 x 3603) F x (3603 x 13), ms: all of k 26.1;
// blocks of 4: 28.5, 8: 17.7, 12: 14.5, 16: 13.6, 24: 16.7, 32: 24.4,
// 64: 31.8 (numpy.matmul 13.4); f32 (3900 x 3063) F x (3063 x 14) 18.1 ->
// 8.7 (numpy 8.2).
// The best block differs by core: 16 on Zen 4 (32: 24.4 ms above), 32 on
// Emerald Rapids ((1914 x 6532) F x (6532 x 29) f32: 16 13.5 ms, 32 10.2,
// 64 25.9; (3476 x 3603) F x 13 f64: 13.9, 9.9, 30.5).  The first such
// calls take the two in turn, timed per multiply-add, until each has run
// EP_SMM_FAR_MEASURE of them; the faster then stays.
// Rows run in chunks whose C stays in L2 while every block of k passes
// over it (EP_SMM_FAR_C_SHARE of L2): across all rows a block re-read C
// from L3.  Emerald Rapids, 1 thread, 'ij,kj->ik' F x F f64, ms, packed
// path / blocks over all rows / over chunks (numpy): (22912, 638) x 22
// 20.0 / 17.4 / 14.3 (17.1); (5000, 638) x 16 3.3 / 2.0 / 2.2 (3.1);
// (5000, 638) x 64 7.0 / 7.7 / 7.0 (7.2); f32 (1024, 1024) x 32 0.91 /
// 0.69 / 0.69 (0.89).  Short k too: blocking beats packing there as well.
#define EP_SMM_PAGE 4096
#define EP_SMM_FAR_MEASURE ((int64_t)1 << 30)
// Only calls of this many multiply-adds or more are timed: two clock reads
// cost about what a GEMM of m = 5, n = 2, k = 21 does ('bij,bkj->bki'
// (392,2,21):T x (392,5,21):T f32, 392 such calls: 57 us timed, 28 untimed;
// numpy 36)
#define EP_SMM_FAR_TIMED ((int64_t)1 << 16)
#define EP_SMM_FAR_C_SHARE 4
static const ep_dim_t ep_smm_far_kbs[2] = {16, 32};
static ep_measured_t ep_smm_far_way = EP_MEASURED_INIT;

void ep_smm_far_state(int *pick, int64_t *turns, int64_t *timed_work)
{
    *pick = ep_measured_pick(&ep_smm_far_way);
    *turns = (int64_t)__atomic_load_n(&ep_smm_far_way.calls, __ATOMIC_RELAXED);
    *timed_work = __atomic_load_n(&ep_smm_far_way.work[0], __ATOMIC_RELAXED) +
                  __atomic_load_n(&ep_smm_far_way.work[1], __ATOMIC_RELAXED);
}

int ep_smm_far_apart(ep_inc_t csa, size_t es)
{
    return (size_t)(csa < 0 ? -csa : csa) * es >= EP_SMM_PAGE;
}

static int ep_smm_far(const ep_gemm_desc_t *d, const ep_smm_args_t *x)
{
    return !d->cplx && ep_smm_far_apart(x->csa, d->dtype == EP_FLOAT32 ? 4 : 8);
}

// The rows of a far call's chunk: C's rows x N within its share of L2, in
// whole quanta of rows
static ep_dim_t ep_smm_far_chunk(ep_dim_t rows, ep_dim_t N, size_t es)
{
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    size_t share = (l2 > 0 ? (size_t)l2 : (size_t)1 << 20) / EP_SMM_FAR_C_SHARE;
    ep_dim_t q = EP_SMM_ROW_QUANTUM;
    ep_dim_t c = (ep_dim_t)(share / ((size_t)N * es)) / q * q;
    if (c < q) c = q;
    return c < rows ? c : rows;
}

// B bigger than half of L2 under many tiles of rows: each tile would
// stream all of B from L3 or memory.  k then runs in blocks whose B fits
// half of L2, every tile of rows taking a block from L2 before the next,
// C (rows x N) re-read per block from cache.  Emerald Rapids, 1 thread,
// 'kl,lm->km' (M x K) x (K x N), C order, ms, all of k / blocks (numpy):
// f64 292 x 32332 x 39 30.2 / 13.3 (26.4); f32 9.1 / 6.8 (10.9);
// f64 100 x 60000 x 24 7.7 / 5.2 (9.8); f64 64 x 32332 x 39 6.4 / 3.3 (5.4).
#define EP_SMM_L2_MIN_KB 64
static ep_dim_t ep_smm_l2_kb(ep_dim_t K, ep_dim_t N, size_t es)
{
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    size_t row = (size_t)N * es, half = l2 > 0 ? (size_t)l2 / 2 : (size_t)256 << 10;
    if ((size_t)K * row <= half) return K;
    ep_dim_t kb = (ep_dim_t)(half / row);
    return kb < EP_SMM_L2_MIN_KB ? EP_SMM_L2_MIN_KB : kb;
}

// Batches of small blocks from memory: while one batch index computes, the
// next one's A rows and B are asked into L2 (prefetcht1), a line at a
// time, when they are runs along k or n of at most EP_SMM_AHEAD_BYTES in
// all; the hardware prefetchers do not run from one batch's blocks into
// the next.  Zen 4 guest, 1 thread, f64 'bij,bkj->bki', 2547 batches from
// memory, us a batch index without / with (numpy): (4,91) x (18,91) 1.74-1.81
// / 1.51-1.62 (1.55-1.73); (18,91) x (4,91) 2.0-2.1 / 1.1-1.4 (1.5-1.7);
// 'bij,bkj->bik' (32,64) x (8,64) 2.5 / 2.3-2.4 (2.0-2.2).
#define EP_SMM_AHEAD_BYTES (64 << 10)
static void ep_smm_prefetch_rows(const char *p, ep_inc_t rs, ep_dim_t rows,
                                 size_t run)
{
    for (ep_dim_t i = 0; i < rows; i++, p += rs)
        for (size_t o = 0; o < run; o += 64) __builtin_prefetch(p + o, 0, 2);
}

static void ep_smm_prefetch(const ep_gemm_desc_t *d, const ep_schedule_t *s,
                            ep_dim_t bi, ep_dim_t i0, ep_dim_t i1,
                            const ep_smm_args_t *g0, size_t es)
{
    size_t ka = (size_t)s->K * es, nb = (size_t)s->N * es;
    if (bi >= s->NB || d->cplx || g0->csa != 1 || (g0->csb != 1 && g0->rsb != 1) ||
        (size_t)(i1 - i0) * ka + (size_t)s->K * nb > EP_SMM_AHEAD_BYTES)
        return;
    ep_inc_t oa, ob, oc;
    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
    ep_smm_prefetch_rows((const char *)d->a + (oa + i0 * g0->rsa) * (ep_inc_t)es,
                         g0->rsa * (ep_inc_t)es, i1 - i0, ka);
    const char *b = (const char *)d->b + ob * (ep_inc_t)es;
    if (g0->csb == 1)          // K rows of N
        ep_smm_prefetch_rows(b, g0->rsb * (ep_inc_t)es, s->K, nb);
    else                       // N rows of K
        ep_smm_prefetch_rows(b, g0->csb * (ep_inc_t)es, s->N, ka);
}

// One smm kernel call on rows x N x k of A, B, C (real views).
static inline void ep_smm_call(const ep_ukr_set_t *u, int fp32, ep_dim_t rows, ep_dim_t N,
                               ep_dim_t k, const void *a, ep_inc_t rsa, ep_inc_t csa,
                               const void *b, ep_inc_t rsb, void *c, ep_inc_t rsc,
                               double alpha, double beta)
{
    if (fp32)
        u->ssmm((int)rows, (int)N, k, (const float *)a, rsa, csa, (const float *)b, rsb, c,
                rsc, (float)alpha, (float)beta);
    else
        u->dsmm((int)rows, (int)N, k, (const double *)a, rsa, csa, (const double *)b, rsb, c,
                rsc, alpha, beta);
}

// A 1m call's k block, complex elements: its packed B (2k x N reals) about
// EP_SMM_1M_BLOCK bytes, in L2 for every tile of rows.  Packed whole, a long
// k made B's real form twice B in memory, written then read back
// ('ik,kl->il' (4,352408) x (352408,6) c128: 15.5 ms, numpy 5.1).
#define EP_SMM_1M_BLOCK (64 << 10)
static ep_dim_t ep_smm_1m_kc(const ep_schedule_t *s, size_t es)
{
    ep_dim_t kc = (ep_dim_t)(EP_SMM_1M_BLOCK / (2 * (size_t)s->N * es));
    if (kc > s->K / 2) kc = s->K / 2;
    return kc < 1 ? 1 : kc;
}

// Elements of the workspace's B: a 1m call's packed block, a real call's
// gathered K x N when its n is not unit-stride, else none.
static size_t ep_smm_b_elems(const ep_gemm_desc_t *d, const ep_schedule_t *s,
                             const ep_smm_args_t *g0)
{
    size_t es = d->dtype == EP_FLOAT32 ? 4 : 8;
    if (d->cplx) return 2 * (size_t)ep_smm_1m_kc(s, es) * (size_t)s->N;
    return g0->csb == 1 ? 0 : (size_t)s->K * (size_t)s->N;
}

// Rows i0 .. i1 of one batch index; `ws`: this thread's workspace (ep_smm_ws).
static void ep_smm_one(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_schedule_t *s, ep_dim_t bi, ep_dim_t i0,
                       ep_dim_t i1, const ep_smm_args_t *g0, void *ws)
{
    const ep_groups_t *g = d->g;
    int fp32 = d->dtype == EP_FLOAT32;
    size_t es = fp32 ? 4 : 8;
    ep_inc_t oa, ob, oc;
    ep_batch_offsets(&g->batch, bi, &oa, &ob, &oc);
    ep_smm_args_t x = *g0;
    x.a = (const char *)d->a + (oa + i0 * x.rsa) * (ep_inc_t)es;
    x.b = (const char *)d->b + ob * (ep_inc_t)es;
    x.c = (char *)d->c + (oc + i0 * x.rsc) * (ep_inc_t)es;
    if (d->cplx) {
        // the real groups (ep_api.h): k and n end in the (re, im) axis, so a
        // single complex axis makes them 2-axis groups (1-axis: extent 1)
        ep_inc_t sk = g->k.ndim == 2 ? g->k.stride[EP_K_B][0] : 0;
        ep_inc_t ska = g->k.ndim == 2 ? g->k.stride[EP_K_A][0] : 0;
        ep_inc_t sn = g->n.ndim == 2 ? g->n.stride[EP_N_B][0] : 2;
        // k in blocks of kc complex: each block of B packed, then its GEMM
        // run, C accumulating after the first
        ep_dim_t Kc = s->K / 2, kc = ep_smm_1m_kc(s, es);
        for (ep_dim_t p = 0; p == 0 || p < Kc; p += kc) {   // once for k = 0: C = beta C
            ep_dim_t k = Kc - p < kc ? Kc - p : kc;
            ep_smm_args_t y = x;
            y.b = ws;
            void *ap = NULL;
            if (x.csa != 1) {            // A gathered: rows of 2k reals
                ap = (char *)ws + (size_t)(2 * k) * (size_t)s->N * es;
                y.a = ap;
                y.rsa = 2 * k;
                y.csa = 1;
            } else {
                y.a = (const char *)x.a + 2 * p * (ep_inc_t)es;
            }
            if (fp32)
                ep_smm_1m_pack_s(d, k, s->N / 2, (const float *)x.b + p * sk, sk, sn,
                                 (const float *)d->a + oa + p * ska, g0->rsa, ska, i0, i1,
                                 ws, ap);
            else
                ep_smm_1m_pack_d(d, k, s->N / 2, (const double *)x.b + p * sk, sk, sn,
                                 (const double *)d->a + oa + p * ska, g0->rsa, ska, i0, i1,
                                 ws, ap);
            ep_smm_call(u, fp32, i1 - i0, s->N, 2 * k, y.a, y.rsa, y.csa, y.b, y.rsb, y.c,
                        y.rsc, d->alpha, p ? 1.0 : d->beta);
        }
        return;
    } else if (x.csb != 1) {
        // B's n not unit-stride: its K x N block gathered into rows of N,
        // read by every tile of rows from L1 / L2
        if (fp32)
            ep_sgather_kn(s->N, s->K, (const float *)x.b, x.csb, g0->rsb, ws);
        else
            ep_dgather_kn(s->N, s->K, (const double *)x.b, x.csb, g0->rsb, ws);
        x.b = ws;
        x.rsb = s->N;
    }
    ep_smm_prefetch(d, s, bi + 1, i0, i1, g0, es);
    // k in blocks: of ep_smm_far_kbs, the measured one, over chunks of rows,
    // when A's columns lie a page or more apart (and k is longer than the
    // smaller block: else the two are the same); else of B fitting L2
    ep_dim_t kb = s->K, chunk = i1 - i0;
    int which = -1;                      // the block measured on this call
    int64_t t0 = 0;
    if (ep_smm_far(d, &x) && s->K > ep_smm_far_kbs[0]) {
        int pick = ep_measured_pick(&ep_smm_far_way);
        if (pick < 0) {
            pick = ep_measured_turn(&ep_smm_far_way);
            // a call too small to time well takes its turn untimed
            if ((int64_t)(i1 - i0) * s->N * s->K >= EP_SMM_FAR_TIMED) {
                which = pick;
                t0 = ep_clock_ns();
            }
        }
        kb = ep_smm_far_kbs[pick];
        chunk = ep_smm_far_chunk(i1 - i0, s->N, es);
    } else if (i1 - i0 > EP_SMM_ROW_QUANTUM) {
        kb = ep_smm_l2_kb(s->K, s->N, es);
    }
    for (ep_dim_t r0 = 0; r0 < i1 - i0; r0 += chunk) {
        ep_dim_t rows = i1 - i0 - r0 < chunk ? i1 - i0 - r0 : chunk;
        const char *ar = (const char *)x.a + r0 * x.rsa * (ep_inc_t)es;
        char *cr = (char *)x.c + r0 * x.rsc * (ep_inc_t)es;
        for (ep_dim_t p = 0; p < s->K; p += kb) {
            ep_dim_t k = s->K - p < kb ? s->K - p : kb;
            // blocks after the first add to C
            ep_smm_call(u, fp32, rows, s->N, k, ar + p * x.csa * (ep_inc_t)es, x.rsa, x.csa,
                        (const char *)x.b + p * x.rsb * (ep_inc_t)es, x.rsb, cr, x.rsc,
                        d->alpha, p ? 1.0 : d->beta);
        }
    }
    if (which >= 0)
        ep_measured_sample(&ep_smm_far_way, which, (int64_t)(i1 - i0) * s->N * s->K,
                           ep_clock_ns() - t0, EP_SMM_FAR_MEASURE, 1.0);
}

// This thread's workspace: for a 1m call packed B, and A's rows i0 .. i1
// when A is gathered; for a real call B gathered when its n is not
// unit-stride; else NULL.  *ok = 0 on allocation failure.
static void *ep_smm_ws(const ep_gemm_desc_t *d, const ep_schedule_t *s,
                       const ep_smm_args_t *g0, ep_dim_t rows, int *ok)
{
    *ok = 1;
    size_t es = d->dtype == EP_FLOAT32 ? 4 : 8;
    size_t elems = ep_smm_b_elems(d, s, g0);
    if (d->cplx && g0->csa != 1) elems += (size_t)rows * 2 * (size_t)ep_smm_1m_kc(s, es);
    if (!elems) return NULL;
    void *ws = ep_scratch(elems * es);
    *ok = ws != NULL;
    return ws;
}

ep_status_t ep_smm_run(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_schedule_t *s)
{
    const ep_groups_t *g = d->g;
    int nt = s->nthreads, failed = 0;
    ep_dim_t NB = s->NB, M = s->M;
    ep_smm_args_t g0;
    g0.rsa = g->m.ndim ? g->m.stride[EP_M_A][0] : 0;
    g0.rsc = g->m.ndim ? g->m.stride[EP_M_C][0] : 0;
    // a 1m call's k is (complex k, re/im): A's real columns have stride 1
    // when its complex k stride is 1 (2 reals) or k has extent 1
    g0.csa = !d->cplx ? (g->k.ndim ? g->k.stride[EP_K_A][0] : 0)
           : g->k.ndim == 1 || g->k.stride[EP_K_A][0] == 2 ? 1 : 0;
    g0.rsb = d->cplx ? s->N : g->k.ndim ? g->k.stride[EP_K_B][0] : 0;
    g0.csb = d->cplx || s->N == 1 ? 1 : g->n.stride[EP_N_B][0];
    // no OpenMP call at all on one thread: even an if(0) region costs ~0.7 us
    if (nt == 1) {
        int ok;
        void *ws = ep_smm_ws(d, s, &g0, M, &ok);
        if (!ok) return EP_ERR_NOMEM;
        for (ep_dim_t bi = 0; bi < NB; bi++)
            ep_smm_one(d, u, s, bi, 0, M, &g0, ws);
        return EP_OK;
    }
    ep_team_map_t *team = ep_team_prepare(nt);
    if (s->loop == EP_LOOP_BATCH) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            int tid, ntr, ok;
            ep_team(&tid, &ntr, team);
            void *ws = ep_smm_ws(d, s, &g0, M, &ok);
            if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
            for (ep_dim_t bi = 0; bi < NB; bi++)
                if (ok) ep_smm_one(d, u, s, bi, 0, M, &g0, ws);
        }
        return failed ? EP_ERR_NOMEM : EP_OK;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {                                    // EP_LOOP_M: a range of rows each
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        ep_dim_t q = EP_SMM_ROW_QUANTUM;
        ep_dim_t chunk = ((M + ntr - 1) / ntr + q - 1) / q * q;
        ep_dim_t i0 = chunk * tid, i1 = i0 + chunk < M ? i0 + chunk : M;
        int ok = 1;
        void *ws = i0 < i1 ? ep_smm_ws(d, s, &g0, i1 - i0, &ok) : NULL;
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
        for (ep_dim_t bi = 0; bi < NB && i0 < i1 && ok; bi++)
            ep_smm_one(d, u, s, bi, i0, i1, &g0, ws);
    }
    return failed ? EP_ERR_NOMEM : EP_OK;
}
