// ep_nest_ctile_template.h -- the nest's register-tile kernel for one ISA and
// one dtype, real or complex; included by ep_nest_template.h (its parameters
// NT, T, VL, CPX, NT_TGT, NT_LD, NT_ST, NT_PAIR_SWAP are set there).
//
// The three innermost loops W, K, V of a GEMM with a short edge:
//     o[w, v] (+)= sum_k x[k, v] * y[w, k]
// x does not move along W, y not along V, the output not along K.  V runs in
// vectors (H = VL / E elements each, E reals an element), W is a short strip
// of NW columns: an MV-vector x NW tile of the output stays in registers
// while K streams through both inputs once.  x is copied a block at a time
// (KB rows of VB elements, padded with zeros to whole vectors) into a buffer
// that stays in L2, from any strides -- unit-stride along V and used by one
// strip of W, only its last, partial tile is, the others read in place; y's
// elements are broadcast from where they lie.  x is read from memory once
// and the output written once, where the plain nest re-reads the output once
// per k (or x once per w): a thin GEMM with x beyond L2 then runs at the
// speed of its one read of x.
// The complex product is deferred-swap: x * yr and x * yi accumulate
// apart (two FMAs per vector, no shuffle in the k loop), one swap and one
// FMA per accumulator combine them when the tile is stored.
// The products and sums contract into FMAs where the kernel set has them
// (ISO C mode keeps them apart otherwise); the avx2 set runs only where the
// CPU has FMA too (ep_cpu.c), NT_FMA says so.
#ifdef NT_FMA
#define CT_TGT __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
#else
#define CT_TGT NT_TGT __attribute__((optimize("fp-contract=fast")))
#endif
#define CT_ELEMS 8192        // elements of x's block copy (32-128 KB: L2)
#define CT_VB 128            // longest V run of the block (y re-read per run)
#define CT_KB 512            // longest K run of the block
#define CT_E (1 + CPX)       // reals an element
#define CT_CHAINS 8          // accumulators that keep two FMA units of 4 cycles' latency busy
// W strip: the tile's accumulators (two per element of W for complex) and
// its operands fit the vector registers, 16 of avx2, 32 of avx-512 (a
// complex strip stays at 3 there: its wider strips' walk of y along K is
// not priced well enough to pick the orientation by)
#ifdef EP_NT512
#define CT_NW (CPX ? 3 : 8)
#else
#define CT_NW (CPX ? 3 : 4)
#endif
#define CT_KO 16             // K rows of a block that re-visits such an output
// complex x unit-stride along V read in place by any number of strips of W
// when K is longer than a block of CT_KO: each tile's rows serve every
// strip from L1 (copied, a block of x is read from memory in runs of VB
// elements, the prefetchers restarted per run: 'ij,jk->ik' F (1957,6441) x
// (6441,5) c128 48 ms copied, 22 in place; numpy 32).  With K no longer,
// each tile reads K rows a line each: (10,15) F x (15,30000) c128 2.8 ms
// copied, 3.6 in place.  A real x's copies run faster for more than one
// strip (F (3000,2000) x (2000,6) f32: 6.3 ms copied, 7.4 in place)
#define CT_INPLACE_STRIPS CPX
#define CT_PF 2              // tiles ahead that such a block prefetches x's rows

// The first n elements of a tile's vector v (E reals each) stored (or
// added) one by one at o, ov reals apart: each lane taken from the register
// at a fixed index, not through a copy of v in memory, whose wide store the
// narrow loads right after it would wait on (Zen 4: 'ij,jk->ik' (6878,2) x
// (2,2) c128, half-vector tiles, 58 us so, numpy 34).
static inline __attribute__((always_inline)) CT_TGT void
NT(ct_lanes)(NT(vec) v, T *o, ep_inc_t ov, ep_dim_t n, int first)
{
#pragma GCC unroll 16
    for (int e = 0; e < VL / CT_E; e++) {
        if (e >= n) break;
        T *p = o + e * ov;
        p[0] = first ? v[CT_E * e] : p[0] + v[CT_E * e];
#if CPX
        p[1] = first ? v[2 * e + 1] : p[1] + v[2 * e + 1];
#endif
    }
}

// one MV x NW tile over kb rows of the block b (ldb reals per row): y at
// (w0, k0), strides in reals; o at (w0, v), strides in reals; nv: the
// tile's valid elements along V (the rest is padding)
#if !CPX
static inline __attribute__((always_inline)) CT_TGT void
NT(ct_tile)(const int MV, const int NW, const T *b, ep_dim_t ldb, const T *y, ep_inc_t yw,
            ep_inc_t yk, ep_dim_t kb, T *o, ep_inc_t ow, ep_inc_t ov, ep_dim_t nv, int first,
            int split)
{
    // split: even and odd k summed apart (NT(ctile) says when)
    NT(vec) acc[2][CT_NW], odd[2][CT_NW];
    for (int m = 0; m < MV; m++)
        for (int w = 0; w < NW; w++) acc[m][w] = odd[m][w] = (NT(vec)){0};
    ep_dim_t k = 0;
    if (split) {
        for (; k + 2 <= kb; k += 2) {
            const T *p = b + k * ldb;
            NT(vec) x0 = NT_LD(p), x1 = MV > 1 ? NT_LD(p + VL) : x0;
            NT(vec) z0 = NT_LD(p + ldb), z1 = MV > 1 ? NT_LD(p + ldb + VL) : z0;
            const T *q = y + k * yk;
            for (int w = 0; w < NW; w++) {
                NT(vec) bw = q[w * yw] - (NT(vec)){0}, cw = q[w * yw + yk] - (NT(vec)){0};
                acc[0][w] += x0 * bw;
                odd[0][w] += z0 * cw;
                if (MV > 1) {
                    acc[1][w] += x1 * bw;
                    odd[1][w] += z1 * cw;
                }
            }
        }
    }
    for (; k < kb; k++) {
        NT(vec) x0 = NT_LD(b + k * ldb), x1 = MV > 1 ? NT_LD(b + k * ldb + VL) : x0;
        const T *q = y + k * yk;
        for (int w = 0; w < NW; w++) {
            NT(vec) bw = q[w * yw] - (NT(vec)){0};
            acc[0][w] += x0 * bw;
            if (MV > 1) acc[1][w] += x1 * bw;
        }
    }
    if (split)
        for (int m = 0; m < MV; m++)
            for (int w = 0; w < NW; w++) acc[m][w] += odd[m][w];
    const ep_dim_t full = MV * VL;
    for (int w = 0; w < NW; w++) {
        T *d = o + w * ow;
        if (ov == 1 && nv == full) {
            for (int m = 0; m < MV; m++) {
                NT(vec) r = acc[m][w];
                if (!first) r += NT_LD(d + m * VL);
                NT_ST(d + m * VL, r);
            }
            continue;
        }
        for (int m = 0; m < MV; m++)
            NT(ct_lanes)(acc[m][w], d + m * VL * ov, ov, nv - m * VL, first);
    }
}
#else
static inline __attribute__((always_inline)) CT_TGT void
NT(ct_tile)(const int MV, const int NW, const T *b, ep_dim_t ldb, const T *y, ep_inc_t yw,
            ep_inc_t yk, ep_dim_t kb, T *o, ep_inc_t ow, ep_inc_t ov, ep_dim_t nv, int first,
            int split)
{
    (void)split;    // one sum: two accumulators an element already
    NT(vec) ar[2][CT_NW], ai[2][CT_NW];
    for (int m = 0; m < MV; m++)
        for (int w = 0; w < NW; w++) { ar[m][w] = (NT(vec)){0}; ai[m][w] = (NT(vec)){0}; }
    for (ep_dim_t k = 0; k < kb; k++) {
        NT(vec) x0 = NT_LD(b + k * ldb), x1 = MV > 1 ? NT_LD(b + k * ldb + VL) : x0;
        const T *q = y + k * yk;
        for (int w = 0; w < NW; w++) {
            NT(vec) br = q[w * yw] - (NT(vec)){0}, bi = q[w * yw + 1] - (NT(vec)){0};
            ar[0][w] += x0 * br;
            ai[0][w] += x0 * bi;
            if (MV > 1) { ar[1][w] += x1 * br; ai[1][w] += x1 * bi; }
        }
    }
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) alt = {0};
    for (int v = 0; v < VL; v++) alt[v] = v & 1 ? 1 : -1;
    const ep_dim_t full = MV * (VL / 2);
    for (int w = 0; w < NW; w++) {
        T *d = o + w * ow;
        NT(vec) r0 = ar[0][w] + alt * __builtin_shuffle(ai[0][w], sw);
        NT(vec) r1 = MV > 1 ? ar[1][w] + alt * __builtin_shuffle(ai[1][w], sw) : r0;
        if (ov == 2 && nv == full) {
            if (!first) r0 += NT_LD(d);
            NT_ST(d, r0);
            if (MV > 1) {
                if (!first) r1 += NT_LD(d + VL);
                NT_ST(d + VL, r1);
            }
            continue;
        }
        NT(ct_lanes)(r0, d, ov, nv, first);
        if (MV > 1) NT(ct_lanes)(r1, d + (VL / 2) * ov, ov, nv - VL / 2, first);
    }
}

#endif

// every MV x NW variant, each a small function of its own
#define CT_ONE(MV, NW) \
    static CT_TGT void NT(ct_##MV##_##NW)(const T *b, ep_dim_t ldb, const T *y, ep_inc_t yw, \
                                          ep_inc_t yk, ep_dim_t kb, T *o, ep_inc_t ow, \
                                          ep_inc_t ov, ep_dim_t nv, int first, int split) \
    { NT(ct_tile)(MV, NW, b, ldb, y, yw, yk, kb, o, ow, ov, nv, first, split); }
CT_ONE(1, 1) CT_ONE(1, 2) CT_ONE(1, 3) CT_ONE(2, 1) CT_ONE(2, 2) CT_ONE(2, 3)
#if CT_NW >= 4
CT_ONE(1, 4) CT_ONE(2, 4)
#endif
#if CT_NW >= 6
CT_ONE(1, 5) CT_ONE(2, 5) CT_ONE(1, 6) CT_ONE(2, 6)
#endif
#if CT_NW >= 8
CT_ONE(1, 7) CT_ONE(2, 7) CT_ONE(1, 8) CT_ONE(2, 8)
#endif
#undef CT_ONE
typedef void (*NT(ct_fn_t))(const T *, ep_dim_t, const T *, ep_inc_t, ep_inc_t, ep_dim_t, T *,
                            ep_inc_t, ep_inc_t, ep_dim_t, int, int);
#define CT_ROW(MV) NT(ct_##MV##_1), NT(ct_##MV##_2), NT(ct_##MV##_3)
#if CT_NW >= 4
#undef CT_ROW
#define CT_ROW(MV) NT(ct_##MV##_1), NT(ct_##MV##_2), NT(ct_##MV##_3), NT(ct_##MV##_4)
#endif
#if CT_NW >= 6
#undef CT_ROW
#define CT_ROW(MV) NT(ct_##MV##_1), NT(ct_##MV##_2), NT(ct_##MV##_3), NT(ct_##MV##_4), \
                   NT(ct_##MV##_5), NT(ct_##MV##_6)
#endif
#if CT_NW >= 8
#undef CT_ROW
#define CT_ROW(MV) NT(ct_##MV##_1), NT(ct_##MV##_2), NT(ct_##MV##_3), NT(ct_##MV##_4), \
                   NT(ct_##MV##_5), NT(ct_##MV##_6), NT(ct_##MV##_7), NT(ct_##MV##_8)
#endif
static const NT(ct_fn_t) NT(ct_fn)[2][CT_NW] = {{CT_ROW(1)}, {CT_ROW(2)}};
#undef CT_ROW

// One block of NT(ctile): V run [v0, v0 + nvb) by K run [k0, k0 + kb), x's
// block copied into buf but, when x is read in place (inplace), for its
// whole tiles (own of them); those prefetch x's rows ahead, into the next
// block when it ends by pf (0: no prefetch)
static inline __attribute__((always_inline)) CT_TGT void
NT(ct_block)(const T *x, ep_inc_t xk, ep_inc_t xv, const T *y, ep_inc_t yw, ep_inc_t yk,
             ep_dim_t W, ep_dim_t v0, ep_dim_t nvb, ep_dim_t k0, ep_dim_t kb, T *o, ep_inc_t ow,
             ep_inc_t ov, int fr, T *buf, ep_dim_t pf, int split, int inplace)
{
    const ep_dim_t H = VL / CT_E, E = CT_E;
    ep_dim_t pad = (nvb + H - 1) / H * H;
    // x unit-stride along V and used by one strip of W: its whole tiles
    // are read in place, only the last, partial one copied (padded with
    // zeros).  Strips re-read the block: then it is copied, its rows
    // made adjacent ('ji,jk->ki' (1659,2801) x (1659,24) c64: 64 rows
    // 22 KB apart, re-read by 8 strips, 7% slower in place).
    ep_dim_t own = inplace ? nvb / (2 * H) * (2 * H) : 0, bpad = pad - own;
    // x's block, rows of bpad elements
    for (ep_dim_t k = 0; k < kb && own < nvb; k++) {
        const T *s = x + E * ((k0 + k) * xk + (v0 + own) * xv);
        T *d = buf + E * k * bpad;
        if (xv == 1 && own) {
            // the last, partial tile's row: a few elements, copied and
            // padded in one loop (a call of memcpy a row cost more than the
            // row's FMAs)
            for (ep_dim_t e = 0; e < E * bpad; e++) d[e] = e < E * (nvb - own) ? s[e] : 0;
            continue;
        } else if (xv == 1) {
            memcpy(d, s, (size_t)(nvb - own) * E * sizeof(T));
        } else {
            for (ep_dim_t e = 0; e < nvb; e++) {
                d[E * e] = s[E * e * xv];
                if (CPX) d[E * e + 1] = s[E * e * xv + 1];
            }
        }
        for (ep_dim_t e = E * (nvb - own); e < E * bpad; e++) d[e] = 0;
    }
    // x read in place: the strips of W inside each tile, which re-read its
    // rows of x from L1; copied, the tiles inside each strip, which re-read
    // the block from L2
    ep_dim_t ntile = (nvb + 2 * H - 1) / (2 * H), nstrip = (W + CT_NW - 1) / CT_NW;
    ep_dim_t nout = own ? ntile : nstrip, nin = own ? nstrip : ntile;
    for (ep_dim_t io = 0; io < nout; io++) for (ep_dim_t ii = 0; ii < nin; ii++) {
        ep_dim_t w0 = (own ? ii : io) * CT_NW, vt = (own ? io : ii) * 2 * H;
        int nw = W - w0 < CT_NW ? (int)(W - w0) : CT_NW;
        const T *yq = y + E * (w0 * yw + k0 * yk);
        ep_dim_t rem = nvb - vt;
        int mv = rem > H ? 2 : 1;
        const T *b = vt < own ? x + E * (k0 * xk + v0 + vt) : buf + E * (vt - own);
        if (pf && w0 == 0) {
            // x's rows of the tile CT_PF tiles on (the next block's
            // first ones past the last), prefetched as this one runs
            ep_dim_t t = vt + CT_PF * 2 * H, kq = k0;
            while (own && t >= own) { t -= own; kq += kb; }
            if (t < own && kq + kb <= pf) {
                const char *q = (const char *)(x + E * (kq * xk + v0 + t));
                for (ep_dim_t k = 0; k < kb; k++, q += E * xk * sizeof(T)) {
                    __builtin_prefetch(q);
                    __builtin_prefetch(q + 64);
                }
            }
        }
        ep_dim_t ldb = vt < own ? E * xk : E * bpad;
        NT(ct_fn)[mv - 1][nw - 1](b, ldb, yq, E * yw, E * yk, kb,
                                  o + E * (w0 * ow + (v0 + vt) * ov), E * ow,
                                  E * ov, rem < 2 * H ? rem : 2 * H, fr, split);
    }
}

// The W x K x V loops (strides in elements): x along K and V, y along W
// and K, the output along W and V; W and V elements of the wall and vall
// the loops have (this thread's part), whose blocks are those of all of W
// and V, so that each output element sums the same way however the
// threads share W or V out.  first: the output's first visit (stored, not
// added to).  buf: NT(ctile_buffer)() elements.
static CT_TGT void NT(ctile)(const T *x, ep_inc_t xk, ep_inc_t xv, const T *y, ep_inc_t yw,
                     ep_inc_t yk, ep_dim_t W, ep_dim_t K, ep_dim_t V, ep_dim_t vall,
                     ep_dim_t wall, T *o, ep_inc_t ow, ep_inc_t ov, int first, T *buf)
{
    const ep_dim_t H = VL / CT_E, E = CT_E;
    // V runs of CT_VB, longer when K is short enough for the block to take
    // them whole: fewer, longer runs of each input and output row (a long
    // V with K = 15 walks 15 input and W output streams a run at a time)
    ep_dim_t VB = (vall + H - 1) / H * H, vmax = CT_VB;
    if (K * CT_VB < CT_ELEMS) vmax = CT_ELEMS / K / (2 * H) * (2 * H);
    if (VB > vmax) VB = vmax;
    ep_dim_t KB = CT_ELEMS / VB;
    if (KB > CT_KB) KB = CT_KB;
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    // Tiles of fewer than CT_CHAINS accumulators sum even and odd k apart:
    // each FMA waits on the last one into its accumulator, and so few
    // chains leave the FMA units idle ('bij,bjk->bik' (40,3,500) x
    // (40,500,12) f64 on AVX2, Zen 3: tiles of 3 x 2 and 3 x 1 vectors,
    // 213 -> 156 us).
    // Decided by all of W and V, so each element sums the same way however
    // threads share them out; the wider tiles keep one sum (their
    // accumulators, doubled, would not fit the registers).
    int split = !CPX && (wall < CT_NW ? wall : CT_NW) * (vall > H ? 2 : 1) < CT_CHAINS;
    int inplace = xv == 1 && (wall <= CT_NW || (CT_INPLACE_STRIPS && K > CT_KO));
    if (inplace) {
        // x read in place: the K blocks outside runs of V whose output fits
        // in half of L2, the output re-visited per block from L1 or L2 (a
        // load and a store per CT_KO FMAs), so x is read a few rows at a
        // time -- one stretch of memory when it is unit-stride along V -- a
        // couple of tiles ahead prefetched.  Each element sums its K blocks
        // in order whatever the runs, so they may follow this thread's part.
        // 'ij,jk->ik' F (557,14213) x (14213,3) f32: V runs of 128 each
        // walking all of K, rows 2.2 KB apart, 4.8 ms; blocks of 16 rows
        // outside 2.6 ms, numpy 4.0 (blocks of 32 or more rows ran as
        // slowly as the V runs: more streams than the prefetchers follow).
        // F (15091,591) x (591,2) f64, rows 120 KB apart: 5.7 ms, 2.7 with
        // the prefetch (the next block's rows prefetched instead: 3.5 ms,
        // gone from cache before they are read), numpy 5.9.  F (20000,200)
        // x (200,7) f64, an output of 1.1 MB: V runs of 128 over K blocks of
        // 64 rows 160 KB apart, 6.8 ms; runs of 4608, numpy 3.5.
        // A run of at most two tiles is a stretch of x a row short: its K
        // rows are one stream whatever the block, and short blocks only
        // add the tiles' stores ('bij,bjk->bik' (40,3,500) x (40,500,16)
        // f64: blocks of CT_KO 144 us, of 500 rows 96).
        ep_dim_t run = l2 / 2 / (wall * E * (ep_dim_t)sizeof(T)) / (2 * H) * (2 * H);
        if (run < 2 * H) run = 2 * H;
        ep_dim_t ko = vall <= 4 * H ? CT_ELEMS / (2 * H) : CT_KO;
        if (ko > CT_KB) ko = CT_KB;
        for (ep_dim_t v0 = 0; v0 < V; v0 += run) {
            ep_dim_t nv = V - v0 < run ? V - v0 : run;
            for (ep_dim_t k0 = 0; k0 < K; k0 += ko) {
                ep_dim_t kb = K - k0 < ko ? K - k0 : ko;
                NT(ct_block)(x, xk, xv, y, yw, yk, W, v0, nv, k0, kb, o, ow, ov,
                             first && k0 == 0, buf, K, split, inplace);
            }
        }
        return;
    }
    for (ep_dim_t v0 = 0; v0 < V; v0 += VB)
        for (ep_dim_t k0 = 0; k0 < K; k0 += KB)
            NT(ct_block)(x, xk, xv, y, yw, yk, W, v0, V - v0 < VB ? V - v0 : VB, k0,
                         K - k0 < KB ? K - k0 : KB, o, ow, ov, first && k0 == 0, buf, 0, split,
                         xv == 1 && W <= CT_NW);
}

// elements of the buffer NT(ctile) copies x's blocks into
static ep_dim_t NT(ctile_buffer)(void)
{
    return CT_ELEMS + CT_VB;
}

#undef CT_ELEMS
#undef CT_VB
#undef CT_KB
#undef CT_E
#undef CT_NW
#undef CT_CHAINS
#undef CT_KO
#undef CT_PF
#undef CT_INPLACE_STRIPS
#undef CT_TGT
