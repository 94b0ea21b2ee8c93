// ep_copy.c -- permutation copy dst[i...] = src[i...] through any strides
// ("ncabhw->nchawb" into out=, the TVM layout case).
//
// 1. The axes are normalised: extent-1 axes dropped, axes flipped so dst
//    strides are >= 0 (a copy may run in any order), ordered by dst stride,
//    and neighbours contiguous on both sides merged: the fewest, longest
//    axes, walked in dst order.
// 2. The inner loop:
//    RUN        dst's innermost axis has unit stride on both sides: memcpy of
//               runs (non-temporal stores for a large dst).
//    TILE       else the 2-D tile of dst's innermost axis I by src's
//               innermost B, so both sides are read and written a cache
//               line at a time; portable C, EDGE_B x EDGE_I elements.
//    INTERLEAVE / TRANSPOSE  the same tile in SIMD registers (AVX2,
//               AVX-512; 4- and 8-byte elements) when I has unit dst stride
//               and B unit src stride: R rows of B transposed by log2(R)
//               rounds of 2-way zips (isa/ep_copy_simd.h).  TRANSPOSE: VL x VL
//               tiles, dst rows anywhere.  INTERLEAVE: I has R < VL
//               elements (R a power of two) and the (B, I) block is
//               contiguous in dst, so R src rows zip into whole vectors.
//               The TVM case is INTERLEAVE with R = 2: before, its 32 x 2
//               tiles ran an inner loop of 2.
// 3. Threads share the outer iteration space (the other axes times blocks
//    of the split axis, flattened) in contiguous ranges, when the copy is
//    large enough to repay a fork/join.
// 4. A dst of half the L3 or more is written with non-temporal stores where
//    whole aligned lines are written: no read-for-ownership of dst lines
//    that would only be evicted again (one memory pass in three saved).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ep_copy.h"
#include "ep_cpu.h"
#include "ep_omp.h"
#include "ukr/ep_ukr.h"
#ifdef EP_COPY_X86
#include <immintrin.h>     // _mm_sfence (SSE2, every x86-64)
#endif
#if defined(EP_COPY_X86) && defined(EP_NO_AVX512)
// a build without the AVX-512 set never runs it (ep_dispatch.c): the
// branches that pick its copies name the AVX2 ones
#define ep_stream_copy_avx512 ep_stream_copy_avx2
#define ep_cs512s_tile ep_cs256s_tile
#define ep_cs512d_tile ep_cs256d_tile
#endif

// Measured on AMD EPYC Zen 4 (2 cores, L3 32 MiB), 2026-11-21, the TVM
// case 'ncabhw->nchawb' (1,32,2,2,360,640) f32 into out= (118 MB each way),
// torch out.copy_(x.permute) 17.2 ms (1 thread) / 8.9 ms (2 threads):
//   before: 32 x 2 tiles, inner loop of 2, no threads: 17.9 ms
//   portable C zip of 2 rows (auto-vectorised SSE2): 8.1-9.3 ms
//   AVX2 / AVX-512 zip, ordinary stores: 8.1-9.4 ms (1 thread)
//   AVX2 / AVX-512 zip, non-temporal stores: 5.8-6.3 ms (1 thread),
//     4.8-5.5 ms (2 threads); a memcpy of the same bytes takes 8-10 ms.
//   rejected: AVX2 streaming aligned to 32 bytes only (half lines) 11.7 ms;
//     AVX-512 masked store for the unaligned head of each dst row 7.9 ms
//     (scalar head: 6.3 ms); 256-bit loads under AVX-512 (fewer line-split
//     loads): no gain beyond noise.
//   the permute-out benchmark case, median: 1 thread einplan 7.0-7.8 ms vs
//     torch 17.5-18.7 (2.4-2.5x); 2 threads 5.6-5.7 ms vs torch 15.4-16.9
//     (its min 9.0; 2.7-3.0x).
// Portable tiles: EDGE_B columns (src-inner axis) by EDGE_I rows (dst-
// inner): the EDGE_I src lines read at once must fit the L1's 8 ways when
// the rows' stride is a multiple of 4 KiB (1024^2 f32, 4096^2 int8).  Zen 4,
// 2026-11-21, 1 thread, ratio to torch copy_(permute), 'ij->ji' int8
// 4096^2 / int16 4096^2 / c128 2048^2, generic ISA f32 1024^2 / 4096^2 /
// f64 2048^2, 'nchw->nhwc' (32,64,56,56) generic:
//   32 x 32 (before): 0.38 0.44 1.47 0.31 0.55 0.79 0.93
//   8 x 8:            0.65 0.68 1.28 1.59 0.66 0.93 0.56
//   32 x 8:           1.12 1.10 1.77 1.04 0.88 1.69 0.67
//   64 x 8:           1.35 0.85 1.67 1.18 1.57 1.66 0.91
//   48 x 8:           1.09 1.18 1.75 1.14 1.55 1.69 0.89
//   64 x 4:           0.56 0.57 1.91 0.46 0.66 1.45 0.91
#ifndef EP_COPY_EDGE_B
#define EP_COPY_EDGE_B 64
#endif
#ifndef EP_COPY_EDGE_I
#define EP_COPY_EDGE_I 8
#endif
#define EP_COPY_RUN_MIN_BYTES 256    // shorter runs go through TILE
// Threads below this many bytes moved (read + written) cost more than they
// save.  Zen 4, 2026-11-21, forced 2 threads vs 1 (the team already up):
// 128 KiB moved 0.89-1.08x, 256 KiB 1.10-1.19x, 1 MiB 1.6-1.9x; a team
// woken from sleep costs more (~10-15 us, ep_schedule.c).
#define EP_COPY_MIN_PARALLEL_BYTES (256 << 10)
// Each thread gets at least this many units, so equal ranges of units are
// equal work within ~1/8.
#define EP_COPY_UNITS_PER_THREAD 8

// ------------------------------------------------------------ portable
// A tile of n0 columns (B) by n1 rows (I): s[c*s0 + r*s1] -> d[c*d0 + r*d1].
// The inner loop runs along I when it is long or contiguous on both sides,
// else along B; zips of 2-4 rows into a contiguous block get loops with
// constant strides, which the compiler vectorises.
#define EP_COPY_KERNEL(T)                                                      \
    static inline void ep_zip_##T(int R, const T *s, ep_inc_t s1, ep_dim_t n0, \
                                  T *d)                                        \
    {                                                                          \
        for (ep_dim_t c = 0; c < n0; c++)                                      \
            for (int r = 0; r < R; r++) d[c * R + r] = s[r * s1 + c];          \
    }                                                                          \
    static void ep_tile_##T(const ep_copy_plan_t *p, const char *sc, char *dc, \
                            ep_dim_t n0)                                       \
    {                                                                          \
        const T *s = (const T *)sc;                                            \
        T *d = (T *)dc;                                                        \
        ep_dim_t n1 = p->n1;                                                   \
        ep_inc_t s0 = p->s0, d0 = p->d0, s1 = p->s1, d1 = p->d1;               \
        if (s0 == 1 && d1 == 1 && d0 == n1 && n1 <= 4) {                       \
            switch (n1) {                                                      \
            case 2: ep_zip_##T(2, s, s1, n0, d); return;                       \
            case 3: ep_zip_##T(3, s, s1, n0, d); return;                       \
            case 4: ep_zip_##T(4, s, s1, n0, d); return;                       \
            }                                                                  \
        }                                                                      \
        int along_i = n1 >= 8 || (s1 == 1 && d1 == 1);                         \
        ep_dim_t t0 = along_i ? EP_COPY_EDGE_B : 256, t1 = EP_COPY_EDGE_I;     \
        for (ep_dim_t i0 = 0; i0 < n0; i0 += t0)                               \
            for (ep_dim_t i1 = 0; i1 < n1; i1 += t1) {                         \
                ep_dim_t e0 = n0 - i0 < t0 ? n0 - i0 : t0;                     \
                ep_dim_t e1 = n1 - i1 < t1 ? n1 - i1 : t1;                     \
                const T *sp = s + i0 * s0 + i1 * s1;                           \
                T *dp = d + i0 * d0 + i1 * d1;                                 \
                if (along_i) {                                                 \
                    for (ep_dim_t a = 0; a < e0; a++)                          \
                        for (ep_dim_t b = 0; b < e1; b++)                      \
                            dp[a * d0 + b * d1] = sp[a * s0 + b * s1];         \
                } else {                                                       \
                    for (ep_dim_t b = 0; b < e1; b++)                          \
                        for (ep_dim_t a = 0; a < e0; a++)                      \
                            dp[a * d0 + b * d1] = sp[a * s0 + b * s1];         \
                }                                                              \
            }                                                                  \
    }
typedef struct { char b[16]; } ep_b16_t;
EP_COPY_KERNEL(uint8_t)
EP_COPY_KERNEL(uint16_t)
EP_COPY_KERNEL(uint32_t)
EP_COPY_KERNEL(uint64_t)
EP_COPY_KERNEL(ep_b16_t)

static void ep_run(const ep_copy_plan_t *p, const char *s, char *d,
                   ep_dim_t cnt)
{
    size_t bytes = (size_t)cnt * (size_t)p->es;
    if (p->stream && bytes >= EP_COPY_RUN_MIN_BYTES)
        p->stream_copy(d, s, bytes);
    else
        memcpy(d, s, bytes);
}

// ------------------------------------------------------------ the plan
// Bytes of dst from which stores bypass the caches: half the L3 (sysfs),
// read once; 4 MiB when unknown.  Zen 4 (L3 32 MiB), 2026-11-21, 1 thread,
// the same copy repeated, ordinary / streamed time: dst 4-6 MiB 0.64-0.74x
// (zip, run; transposes 1.0-1.1x), 8 MiB 0.87-2.4x, 16 MiB 1.7-2.6x,
// 64 MiB 1.4-1.6x.
static ep_dim_t ep_copy_stream_min(void)
{
    static ep_dim_t v = 0;
    if (v == 0) {                      // a benign race: all threads agree
        ep_dim_t l1, l2, l3;
        ep_cache_sizes(&l1, &l2, &l3);
        v = l3 > 0 ? l3 / 2 : 4 << 20;
    }
    return v;
}

static int ep_pow2(ep_dim_t n) { return n >= 2 && (n & (n - 1)) == 0; }

// Step 1: the normalised axes, outer to inner in dst order (n, s, d in
// elements).  Returns the axis count (at least 1), or 0 when there is
// nothing to copy; *src_off / *dst_off are the element offsets of the walk's
// first element (flipped axes start at their far end).
static int ep_copy_axes(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                        const ep_inc_t *d_st, ep_dim_t *n, ep_inc_t *s, ep_inc_t *d,
                        ep_inc_t *src_off, ep_inc_t *dst_off)
{
    int nd = 0;
    *src_off = *dst_off = 0;
    for (int x = 0; x < ndim; x++) {
        if (extent[x] == 0) return 0;
        if (extent[x] == 1) continue;
        n[nd] = extent[x], s[nd] = s_st[x], d[nd] = d_st[x];
        if (d[nd] < 0) {
            *src_off += (n[nd] - 1) * s[nd];
            *dst_off += (n[nd] - 1) * d[nd];
            s[nd] = -s[nd], d[nd] = -d[nd];
        }
        nd++;
    }
    for (int x = 1; x < nd; x++)          // stable: by dst stride, descending
        for (int y = x; y > 0 && d[y - 1] < d[y]; y--) {
            ep_dim_t tn = n[y]; n[y] = n[y - 1]; n[y - 1] = tn;
            ep_inc_t ts = s[y]; s[y] = s[y - 1]; s[y - 1] = ts;
            ep_inc_t td = d[y]; d[y] = d[y - 1]; d[y - 1] = td;
        }
    int m = 0;
    for (int x = 0; x < nd; x++) {
        if (m > 0 && d[m - 1] == d[x] * n[x] && s[m - 1] == s[x] * n[x]) {
            n[m - 1] *= n[x], s[m - 1] = s[x], d[m - 1] = d[x];
        } else {
            n[m] = n[x], s[m] = s[x], d[m] = d[x];
            m++;
        }
    }
    if (m == 0) n[0] = 1, s[0] = d[0] = 1, m = 1;   // one element
    return m;
}

// Step 2, RUN: runs of the innermost axis, streamed when dst is large.
static void ep_copy_pick_run(ep_copy_plan_t *p, int isa, int want_stream)
{
    p->sc.kind = EP_COPY_RUN;
    p->fn = ep_run;
    p->nsplit = p->n1;
    p->ss = p->sd = p->es;
#ifdef EP_COPY_X86
    if (isa != EP_ISA_GENERIC && want_stream) {
        p->stream_copy = isa == EP_ISA_AVX512 ? ep_stream_copy_avx512
                                              : ep_stream_copy_avx2;
        p->stream = 1;
    }
#else
    (void)isa, (void)want_stream;
#endif
}

// Step 2, tiles of I by B: portable TILE, or the SIMD TRANSPOSE /
// INTERLEAVE where I has unit dst stride and B unit src stride.
static void ep_copy_pick_tile(ep_copy_plan_t *p, int isa, int want_stream, int has_b)
{
    int es = p->es;
    p->sc.kind = EP_COPY_TILE;
    switch (es) {
    case 1: p->fn = ep_tile_uint8_t; break;
    case 2: p->fn = ep_tile_uint16_t; break;
    case 4: p->fn = ep_tile_uint32_t; break;
    case 8: p->fn = ep_tile_uint64_t; break;
    default: p->fn = ep_tile_ep_b16_t; break;
    }
    p->nsplit = p->n0;
    p->ss = p->s0 * es;
    p->sd = p->d0 * es;
#ifdef EP_COPY_X86
    int vl = isa == EP_ISA_AVX512 ? 64 / es : 32 / es;
    if (isa != EP_ISA_GENERIC && (es == 4 || es == 8) && has_b &&
        p->d1 == 1 && p->s0 == 1 && p->n0 >= vl) {
        ep_copy_fn simd = isa == EP_ISA_AVX512
                              ? (es == 4 ? ep_cs512s_tile : ep_cs512d_tile)
                              : (es == 4 ? ep_cs256s_tile : ep_cs256d_tile);
        if (p->n1 >= vl) {
            p->sc.kind = EP_COPY_TRANSPOSE;
            p->sc.rows = vl;
            // streaming needs a whole 64-byte line per vector store
            p->stream = want_stream && vl * es == 64;
        } else if (ep_pow2(p->n1) && p->d0 == p->n1) {
            p->sc.kind = EP_COPY_INTERLEAVE;
            p->sc.rows = (int)p->n1;
            p->stream = want_stream;
        }
        if (p->sc.kind != EP_COPY_TILE) {
            p->fn = simd;
            p->sc.isa = isa;
        }
    }
#else
    (void)isa, (void)want_stream, (void)has_b;
#endif
}

// Step 3: threads, and blocks of the split axis so that each gets enough
// units of the outer iteration space.
static void ep_copy_share(ep_copy_plan_t *p, ep_dim_t outer, ep_dim_t total,
                          const ep_copy_opts_t *opt)
{
    int es = p->es, nt = 1;
#ifdef _OPENMP
    if (opt && opt->nthreads > 0)
        nt = opt->nthreads;
    else if (2.0 * (double)total * es >= EP_COPY_MIN_PARALLEL_BYTES)
        nt = ep_get_num_threads();
    nt = ep_clamp_threads(nt);
#else
    (void)opt, (void)total;
#endif
    p->cb = p->nsplit;
    p->nb = 1;
    if (nt > 1 && outer < (ep_dim_t)nt * EP_COPY_UNITS_PER_THREAD) {
        // blocks of whole vectors and (for elements up to 4 bytes) lines
        ep_dim_t want = ((ep_dim_t)nt * EP_COPY_UNITS_PER_THREAD + outer - 1) / outer;
        ep_dim_t g = es <= 4 ? 64 / es : 16;
        ep_dim_t cb = (p->nsplit + want - 1) / want;
        cb = (cb + g - 1) / g * g;
        if (cb < p->nsplit) {
            p->cb = cb;
            p->nb = (p->nsplit + cb - 1) / cb;
        }
    }
    ep_dim_t units = outer * p->nb;
    if (nt > units) nt = (int)units;
    p->units = units;
    p->sc.nthreads = nt;
}

// The copy's plan (the three steps of the header).  Returns 0 when there is
// nothing to copy; *src_off / *dst_off as for ep_copy_axes.
static int ep_copy_plan(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                        const ep_inc_t *d_st, int es, const ep_copy_opts_t *opt,
                        ep_copy_plan_t *p, ep_inc_t *src_off, ep_inc_t *dst_off)
{
    ep_dim_t n[EP_MAXDIM];
    ep_inc_t s[EP_MAXDIM], d[EP_MAXDIM];
    memset(&p->sc, 0, sizeof p->sc);
    p->sc.isa = EP_ISA_GENERIC;
    p->sc.nthreads = 1;
    int nd = ep_copy_axes(ndim, extent, s_st, d_st, n, s, d, src_off, dst_off);
    if (nd == 0) return 0;
    ep_dim_t total = 1;
    for (int x = 0; x < nd; x++) total *= n[x];

    // I: dst's innermost axis; B: the other axis of smallest src stride
    p->es = es;
    p->sc.ndim = nd;
    int I = nd - 1, B = -1;
    p->n1 = n[I], p->s1 = s[I], p->d1 = d[I];
    int run = s[I] == 1 && d[I] == 1 && n[I] * es >= EP_COPY_RUN_MIN_BYTES;
    if (!run)
        for (int x = 0; x < I; x++)
            if (B < 0 || llabs(s[x]) < llabs(s[B])) B = x;
    p->n0 = B >= 0 ? n[B] : 1;
    p->s0 = B >= 0 ? s[B] : 0;
    p->d0 = B >= 0 ? d[B] : 0;
    p->nout = 0;
    ep_dim_t outer = 1;
    for (int x = 0; x < I; x++) {
        if (x == B) continue;
        p->on[p->nout] = n[x];
        p->os[p->nout] = s[x] * es;
        p->od[p->nout] = d[x] * es;
        outer *= n[x];
        p->nout++;
    }

    int isa = ep_isa();
    int want_stream = opt && opt->stream >= 0
                          ? opt->stream
                          : (double)total * es >= (double)ep_copy_stream_min();
    p->stream = 0;
    p->stream_copy = NULL;
    if (run)
        ep_copy_pick_run(p, isa, want_stream);
    else
        ep_copy_pick_tile(p, isa, want_stream, B >= 0);
    p->sc.stream = p->stream;
    ep_copy_share(p, outer, total, opt);
    return 1;
}

// Units [u0, u1): the first one's position by division, then an odometer.
static void ep_copy_range(const ep_copy_plan_t *p, const char *src, char *dst,
                          ep_dim_t u0, ep_dim_t u1)
{
    if (u0 >= u1) return;
    ep_dim_t idx[EP_MAXDIM];
    ep_dim_t o = u0 / p->nb, j = u0 % p->nb;
    const char *s = src;
    char *d = dst;
    for (int x = p->nout - 1; x >= 0; x--) {
        idx[x] = o % p->on[x];
        o /= p->on[x];
        s += idx[x] * p->os[x];
        d += idx[x] * p->od[x];
    }
    for (ep_dim_t u = u0;;) {
        for (; j < p->nb && u < u1; j++, u++) {
            ep_dim_t c0 = j * p->cb;
            ep_dim_t cnt = p->nsplit - c0 < p->cb ? p->nsplit - c0 : p->cb;
            p->fn(p, s + c0 * p->ss, d + c0 * p->sd, cnt);
        }
        if (u >= u1) return;
        j = 0;
        int x = p->nout - 1;
        for (; x >= 0; x--) {
            if (++idx[x] < p->on[x]) {
                s += p->os[x];
                d += p->od[x];
                break;
            }
            s -= (p->on[x] - 1) * p->os[x];
            d -= (p->on[x] - 1) * p->od[x];
            idx[x] = 0;
        }
        if (x < 0) return;
    }
}

static void ep_copy_fence(const ep_copy_plan_t *p)
{
#ifdef EP_COPY_X86
    if (p->stream) _mm_sfence();     // streamed lines visible before return
#else
    (void)p;
#endif
}

void ep_copy_schedule(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                      const ep_inc_t *d_st, int itemsize,
                      const ep_copy_opts_t *opt, ep_copy_schedule_t *out)
{
    ep_copy_plan_t p;
    ep_inc_t so, dof;
    if (!ep_copy_plan(ndim, extent, s_st, d_st, itemsize, opt, &p, &so, &dof))
        p.sc.kind = EP_COPY_EMPTY;
    *out = p.sc;
}

ep_status_t ep_copy_ex(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                       const ep_inc_t *d_st, int itemsize, const void *src,
                       void *dst, const ep_copy_opts_t *opt)
{
    if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8 &&
        itemsize != 16)
        return EP_ERR_INVALID;
    if (ndim < 0 || ndim > EP_MAXDIM) return EP_ERR_INVALID;
    ep_copy_plan_t p;
    ep_inc_t so, dof;
    if (!ep_copy_plan(ndim, extent, s_st, d_st, itemsize, opt, &p, &so, &dof))
        return EP_OK;
    const char *s = (const char *)src + so * itemsize;
    char *d = (char *)dst + dof * itemsize;
    int nt = p.sc.nthreads;
    if (nt == 1) {             // no OpenMP call at all: small copies stay cheap
        ep_copy_range(&p, s, d, 0, p.units);
        ep_copy_fence(&p);
        return EP_OK;
    }
    ep_team_map_t *team = ep_team_prepare(nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        // contiguous, equal ranges of units: thread t's share of dst follows
        // thread t-1's
        ep_dim_t q = p.units / ntr, r = p.units % ntr;
        ep_dim_t u0 = tid * q + (tid < r ? tid : r);
        ep_dim_t u1 = u0 + q + (tid < r ? 1 : 0);
        ep_copy_range(&p, s, d, u0, u1);
        ep_copy_fence(&p);
    }
    return EP_OK;
}
