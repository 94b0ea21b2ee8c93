// ep_pack_template.h -- packing of A and B for one element type; included by
// ep_pack.c once per dtype with T (element type) and EP_PFX(x) (name prefix).

// dst[p * width + i] = x[rows[i] + p] for i < nrows, p < kc: rows that
// are contiguous along k, packed through register transposes of EP_TGROUP
// rows (isa/ep_pack_avx2.c), or of all 6 rows of an AVX2 micro-panel of A,
// leftover rows one at a time.
static void EP_PFX(pack_t)(int width, int nrows, ep_dim_t kc, const T *x,
                           const ep_inc_t *rows, T *dst)
{
    int i = 0;
    if (width == 6 && nrows == 6) {
        const T *r[6];
        for (int q = 0; q < 6; q++) r[q] = x + rows[q];
        EP_TPACK6(r, kc, dst);
        return;
    }
    for (; i + EP_TGROUP <= nrows; i += EP_TGROUP) {
        const T *r[EP_TGROUP];
        for (int q = 0; q < EP_TGROUP; q++) r[q] = x + rows[i + q];
        EP_TPACK(r, kc, dst + i, width);
    }
    for (; i < nrows; i++) {
        const T *src = x + rows[i];
        for (ep_dim_t p = 0; p < kc; p++) dst[p * width + i] = src[p];
    }
}

// The same for rows at a small regular stride ks along k (a [..., ::2]
// slice): each row's chunk compacted into a contiguous block on the stack,
// then transposed as contiguous rows are.  The element loop stored one value
// per panel row: 'bij,bkj->bki' (808, 9, 858) x (808, 20, 858)[..., ::2]
// f64 packed A for 2.6x the micro-kernel's time.
#ifndef EP_PACK_CHUNK
#define EP_PACK_CHUNK 64    // elements of each row compacted at a time
#define EP_PACK_MAXW 48     // widest panel compacted (the blocks take 24 KB)
#define EP_PACK_MAXKS 8     // largest stride compacted (past it, a line per element)
#endif
static void EP_PFX(pack_t_strided)(int width, int nrows, ep_dim_t kc, const T *x,
                                   const ep_inc_t *rows, ep_inc_t ks, T *dst)
{
    T tmp[EP_PACK_MAXW * EP_PACK_CHUNK];
    ep_inc_t trow[EP_PACK_MAXW];
    for (int i = 0; i < nrows; i++) trow[i] = i * EP_PACK_CHUNK;
    for (ep_dim_t p0 = 0; p0 < kc; p0 += EP_PACK_CHUNK) {
        ep_dim_t n = kc - p0 < EP_PACK_CHUNK ? kc - p0 : EP_PACK_CHUNK;
        for (int i = 0; i < nrows; i++) {
            const T *src = x + rows[i] + p0 * ks;
            T *t = tmp + i * EP_PACK_CHUNK;
            if (ks == 2)    // a constant stride: the compiler's even-lane shuffles
                for (ep_dim_t p = 0; p < n; p++) t[p] = src[2 * p];
            else
                for (ep_dim_t p = 0; p < n; p++) t[p] = src[p * ks];
        }
        EP_PFX(pack_t)(width, nrows, n, tmp, trow, dst + p0 * width);
    }
}

static int EP_PFX(pack_compacts)(int width, ep_inc_t ks)
{
    return ks != 1 && ks != EP_IRREGULAR && ks >= -EP_PACK_MAXKS && ks <= EP_PACK_MAXKS &&
           width <= EP_PACK_MAXW && EP_PACK_SIMD();
}

// Full micro-panels [p0, p1) of B with unit n stride (row-major B): B's
// rows are swept once, each row feeding every panel, so B is read in runs
// of (p1 - p0) * NR values instead of NR-wide pieces a whole row apart.
// From memory that is 1.5x faster (Zen 4, 2026-11-21, 2304 x 2048 f64,
// kc = 384: 4.35 ms panel by panel, 2.92 ms swept).  pack_a sweeps A's
// unit-stride m panels the same way (MR for NR, m offsets for n offsets).
// Panels at n stride 2 (B[:, ::2]) sweep the same, each panel's row taken
// from every other element ('ij,j,jk->ik' with jk sliced along k: element
// by element through pack_b's general loop, 0.59x numpy).
// A single panel packed just before its use (ep_macro_kernel_template.h:
// b_panel) asks, with next, for the next panel's piece of each row as it
// copies this one's: a whole panel's copy ahead, where the runs a few rows
// on come too late when the rows are pages apart (the pattern of B read
// in place, ep_ukr.h).
// Each step of k reads a run of the block's rows that starts far from the
// last (a column of a column-major A), too short for the hardware
// prefetcher to pick up before it ends: the run EP_PACK_AHEAD steps on is
// asked for while this one is copied.  Emerald Rapids, 1 thread, f64
// 'ij,kj->ik' (22912, 638) F x (22, 638) F, packed path: 14-16 -> 10-11 ms.
// A single panel (a B packed one panel at a time beside panels read in
// place) sweeps too, its runs of a few lines asked for as many steps on as
// make EP_PACK_AHEAD_BYTES -- unless the rows are a near multiple of 4 KB
// apart, where that many runs would share L1's sets and evict one another.
// Zen 4, 1 thread, 'ij,jk->ik' (7, 521) F x (521, 2088)[:, ::2] f64: the
// panels element by element, each row's load waiting on memory, 2.5 ms
// (numpy 1.3-1.4); swept and asked for ahead, 1.4-1.5.
#ifndef EP_PACK_AHEAD
#define EP_PACK_AHEAD 4
#endif
#ifndef EP_PACK_AHEAD_BYTES
#define EP_PACK_AHEAD_BYTES 4096
#endif
static void EP_PFX(pack_b_rows)(int NR, ep_dim_t kc, const T *b,
                                const ep_inc_t *noff, const ep_inc_t *koff,
                                ep_dim_t p0, ep_dim_t p1, T *bp, int cs, int next)
{
    // the width as a constant, so that the copy is a few vector moves (an
    // element loop stays scalar: GCC cannot rule out that d and s overlap)
#define EP_SWEEP(W)                                                          \
    for (ep_dim_t p = 0; p < kc; p++) {                                      \
        const T *src = b + koff[p];                                          \
        const T *ahead = far && p + dist < kc ? b + koff[p + dist] : NULL;   \
        for (ep_dim_t jp = p0; jp < p1; jp++) {                              \
            const T *s = src + noff[jp * (W)];                               \
            if (ahead) {                                                     \
                const char *f = (const char *)(ahead + noff[jp * (W)]);      \
                for (size_t o = 0; o < (W) * sizeof(T) * cs; o += 64)        \
                    __builtin_prefetch(f + o, 0, 3);                         \
            }                                                                \
            if (next)                                                        \
                ep_prefetch_run(src + noff[p1 * (W)], (W) * sizeof(T) * cs);  \
            T *d = bp + (jp * kc + p) * (W);                                 \
            if (cs == 1)                                                     \
                __builtin_memcpy(d, s, (W) * sizeof(T));                     \
            else                                                             \
                for (int j = 0; j < (W); j++) d[j] = s[2 * j];               \
        }                                                                    \
    }
    // runs apart by more than twice their length (rows of a column-major
    // block; a row-major B's rows follow one another, which the hardware
    // prefetcher streams)
    ep_inc_t step = kc > 1 ? koff[1] - koff[0] : 0;
    int far = (step < 0 ? -step : step) > 2 * (p1 - p0) * NR * cs;
    size_t run = (size_t)(p1 - p0) * NR * cs * sizeof(T);
    size_t set = (size_t)(step < 0 ? -step : step) * sizeof(T) % 4096;
    int aliased = 4 * (set < 4096 - set ? set : 4096 - set) < run;
    ep_dim_t dist = aliased || run >= EP_PACK_AHEAD_BYTES / EP_PACK_AHEAD
                        ? EP_PACK_AHEAD : EP_PACK_AHEAD_BYTES / run;
    switch (NR) {
    case 6: EP_SWEEP(6) break;
    case 8: EP_SWEEP(8) break;
    case 16: EP_SWEEP(16) break;
    case 24: EP_SWEEP(24) break;
    case 48: EP_SWEEP(48) break;
    default: EP_SWEEP(NR) break;
    }
#undef EP_SWEEP
}

// "abcd,dbef->aecf": rows of A (m = a,c) and columns (k = d,b) may both be
// multi-axis; each micro-panel reads with one stride when it can.  Its
// fringe's zeros stay inline loops, as pack_b's do.
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void EP_PFX(pack_a)(int MR, ep_dim_t mc, ep_dim_t kc, const T *a,
                    const ep_inc_t *moff, const ep_inc_t *mbs,
                    const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0,
                    ep_dim_t p1, T *ap)
{
    ep_dim_t full = p0;   // the leading run of full panels at stride 1 (or 2)
    ep_inc_t unit = p0 < p1 && (mbs[p0] == 1 || mbs[p0] == 2) ? mbs[p0] : 0;
    while (unit && full < p1 && mbs[full] == unit && (full + 1) * MR <= mc) full++;
    if (full - p0 >= 1) {   // column-major A: kc runs of a block's m, not of MR each
        EP_PFX(pack_b_rows)(MR, kc, a, moff, koff, p0, full, ap, (int)unit, 0);
        p0 = full;
    }
    for (ep_dim_t ip = p0; ip < p1; ip++) {
        ep_dim_t i0 = ip * MR;
        int mr = (int)(mc - i0 < MR ? mc - i0 : MR);
        const ep_inc_t *mo = moff + i0;
        ep_inc_t rs = mbs[ip];
        T *dst = ap + ip * MR * kc;
        if (rs == 1 && mr == MR) {
            // m contiguous (e.g. column-major A): MR values per k, one run
            for (ep_dim_t p = 0; p < kc; p++) {
                const T *src = a + koff[p] + mo[0];
                for (int i = 0; i < MR; i++) dst[p * MR + i] = src[i];
            }
            continue;
        }
        if (ks == 1 && EP_PACK_SIMD()) {
            // rows contiguous along k (row-major A)
            EP_PFX(pack_t)(MR, mr, kc, a + koff[0], mo, dst);
        } else if (EP_PFX(pack_compacts)(MR, ks)) {
            EP_PFX(pack_t_strided)(MR, mr, kc, a + koff[0], mo, ks, dst);
        } else if (ks != EP_IRREGULAR) {
            // k regular (e.g. row-major A, ks == 1): walk each row along k
            for (int i = 0; i < mr; i++) {
                const T *src = a + mo[i] + koff[0];
                for (ep_dim_t p = 0; p < kc; p++) dst[p * MR + i] = src[p * ks];
            }
        } else {
            for (ep_dim_t p = 0; p < kc; p++) {
                const T *src = a + koff[p];
                for (int i = 0; i < mr; i++) dst[p * MR + i] = src[mo[i]];
            }
        }
        // fringe: zero-pad inside the packed buffer only
        if (mr < MR)
            for (ep_dim_t p = 0; p < kc; p++)
                for (int i = mr; i < MR; i++) dst[p * MR + i] = 0;
    }
}

// The fringe's short runs (nr < NR values and NR - nr zeros per k) stay
// inline loops: as memcpy / memset calls, two library calls per k row cost
// more than the copy ('ij,jk->ik' (28,306408) x (306408,10) f32: 7% of its
// profile in memset).
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void EP_PFX(pack_b)(int NR, ep_dim_t nc, ep_dim_t kc, const T *b,
                    const ep_inc_t *noff, const ep_inc_t *nbs,
                    const ep_inc_t *koff, ep_inc_t ks, ep_dim_t p0,
                    ep_dim_t p1, T *bp)
{
    ep_dim_t full = p0;   // the leading run of full panels at stride 1 (or 2)
    ep_inc_t unit = p0 < p1 && (nbs[p0] == 1 || nbs[p0] == 2) ? nbs[p0] : 0;
    while (unit && full < p1 && nbs[full] == unit && (full + 1) * NR <= nc) full++;
    if (full - p0 >= 1) {
        // one panel whose successor is full and alike: fetch that one's rows
        int next = full == p0 + 1 && full == p1 && (full + 1) * NR <= nc &&
                   nbs[full] == unit;
        EP_PFX(pack_b_rows)(NR, kc, b, noff, koff, p0, full, bp, (int)unit, next);
        p0 = full;
    }
    for (ep_dim_t jp = p0; jp < p1; jp++) {
        ep_dim_t j0 = jp * NR;
        int nr = (int)(nc - j0 < NR ? nc - j0 : NR);
        const ep_inc_t *no = noff + j0;
        ep_inc_t cs = nbs[jp];
        T *dst = bp + jp * NR * kc;
        if (cs == 1) {
            // n contiguous (row-major B): nr values per k, one run
            for (ep_dim_t p = 0; p < kc; p++) {
                const T *src = b + koff[p] + no[0];
                for (int j = 0; j < nr; j++) dst[p * NR + j] = src[j];
                for (int j = nr; j < NR; j++) dst[p * NR + j] = 0;
            }
        } else if (ks == 1 && EP_PACK_SIMD()) {
            // columns contiguous along k ("bjk", column-major B)
            EP_PFX(pack_t)(NR, nr, kc, b + koff[0], no, dst);
            for (ep_dim_t p = 0; p < kc; p++)
                for (int jj = nr; jj < NR; jj++) dst[p * NR + jj] = 0;
        } else if (EP_PFX(pack_compacts)(NR, ks)) {
            EP_PFX(pack_t_strided)(NR, nr, kc, b + koff[0], no, ks, dst);
            for (ep_dim_t p = 0; p < kc; p++)
                for (int jj = nr; jj < NR; jj++) dst[p * NR + jj] = 0;
        } else if (cs != EP_IRREGULAR && ks == 1) {
            // k contiguous (column-major B): walk each column along k
            for (int j = 0; j < nr; j++) {
                const T *src = b + no[j] + koff[0];
                for (ep_dim_t p = 0; p < kc; p++) dst[p * NR + j] = src[p];
            }
            for (ep_dim_t p = 0; p < kc; p++)
                for (int j = nr; j < NR; j++) dst[p * NR + j] = 0;
        } else {
            for (ep_dim_t p = 0; p < kc; p++) {
                const T *src = b + koff[p];
                for (int j = 0; j < nr; j++) dst[p * NR + j] = src[no[j]];
                for (int j = nr; j < NR; j++) dst[p * NR + j] = 0;
            }
        }
    }
}

// ep_pack.h: B's K x N block as rows of N for the smm kernel.  N is at
// most the smm kernels' widest n (a few vectors), so the row offsets fit
// on the stack.  Contiguous rows are transposed EP_GATHER_KB values of k
// at a time, so each chunk's rows of N are whole lines written while in
// L1: all of k at once wrote each line in pieces as many as N's groups of
// rows ((128, 128) f32: 20 us, against the 2.8 ms of 64 such GEMMs' 44 us).
void EP_PFX(gather_kn)(ep_dim_t N, ep_dim_t K, const T *b, ep_inc_t sn,
                       ep_inc_t sk, T *dst)
{
    enum { EP_GATHER_MAXN = 256, EP_GATHER_KB = 16 };
    ep_inc_t rows[EP_GATHER_MAXN];
    for (ep_dim_t j = 0; j < N && j < EP_GATHER_MAXN; j++) rows[j] = j * sn;
    if (N <= EP_GATHER_MAXN && sk == 1 && EP_PACK_SIMD()) {
        for (ep_dim_t p = 0; p < K; p += EP_GATHER_KB)
            EP_PFX(pack_t)((int)N, (int)N, K - p < EP_GATHER_KB ? K - p : EP_GATHER_KB,
                           b + p, rows, dst + p * N);
        return;
    }
    if (N <= EP_GATHER_MAXN && EP_PFX(pack_compacts)((int)N, sk)) {
        EP_PFX(pack_t_strided)((int)N, (int)N, K, b, rows, sk, dst);
        return;
    }
    for (ep_dim_t j = 0; j < N; j++) {
        const T *src = b + j * sn;
        for (ep_dim_t p = 0; p < K; p++) dst[p * N + j] = src[p * sk];
    }
}

// 1m packing of complex B: complex element (k, j) at x = b + koff[2k] +
// noff[2j] becomes rows 2k, 2k+1 x columns 2j, 2j+1 of the real panel:
//   row 2k:   ( re, im)       C_re += a_re re - a_im im
//   row 2k+1: (-im, re)       C_im += a_re im + a_im re
// with A's real row (.., a_re, a_im, ..).  conj(B) flips im; conj(A) is the
// sign of row 2k+1 (it multiplies a_im).  Fringe columns are zero-padded.
void EP_PFX(pack_b_1m)(int NR, ep_dim_t nc, ep_dim_t kc, const T *b,
                       const ep_inc_t *noff, const ep_inc_t *koff, int cplx,
                       ep_dim_t p0, ep_dim_t p1, T *bp)
{
    const T sa = (cplx & EP_CPLX_CONJ_A) ? (T)-1 : (T)1;
    const T sb = (cplx & EP_CPLX_CONJ_B) ? (T)-1 : (T)1;
    // row 2k is B's run times (1, sb, 1, sb, ..); row 2k+1 the run with
    // each pair swapped, times (-sa sb, sa, ..): both loops vectorize
    const T s0[2] = {1, sb}, s1[2] = {-sa * sb, sa};
    // A panel reads one run of B per row of k, rows apart: the hardware
    // does not run ahead of that, so the run EP_1M_AHEAD rows on is asked for
    enum { EP_1M_AHEAD = 16 };
    for (ep_dim_t jp = p0; jp < p1; jp++) {
        ep_dim_t j0 = jp * NR;
        int nr = (int)(nc - j0 < NR ? nc - j0 : NR);
        const ep_inc_t *no = noff + j0;
        T *dst = bp + jp * NR * kc;
        // unit complex stride along n: a row of the panel is one run of B
        int unit = 1;
        for (int j = 2; j < nr && unit; j += 2) unit = no[j] == no[0] + j;
        if (unit && nr == NR && NR % EP_V16_N == 0) {
            // 16 bytes at a time in the compiler's vector extension (every
            // NR here is a multiple of the vector's complex pairs): the
            // pair swap is a shuffle; GCC does not vectorize the scalar form
            const EP_V16 m0 = EP_V16_PAIRS(s0[0], s0[1]);
            const EP_V16 m1 = EP_V16_PAIRS(s1[0], s1[1]);
#define EP_1M_ROWS(W)                                                        \
            for (ep_dim_t p = 0; p < kc; p += 2) {                           \
                const T *x = b + koff[p] + no[0];                            \
                if (p + EP_1M_AHEAD < kc)                                    \
                    __builtin_prefetch(b + koff[p + EP_1M_AHEAD] + no[0]);   \
                T *d0 = dst + p * (W), *d1 = d0 + (W);                       \
                for (int j = 0; j < (W); j += EP_V16_N) {                    \
                    EP_V16 v;                                                \
                    __builtin_memcpy(&v, x + j, 16);                         \
                    EP_V16 w0 = v * m0, w1 = EP_V16_SWAP(v) * m1;            \
                    __builtin_memcpy(d0 + j, &w0, 16);                       \
                    __builtin_memcpy(d1 + j, &w1, 16);                       \
                }                                                            \
            }
            switch (NR) {
            case 8: EP_1M_ROWS(8) break;
            case 16: EP_1M_ROWS(16) break;
            case 24: EP_1M_ROWS(24) break;
            case 48: EP_1M_ROWS(48) break;
            default: EP_1M_ROWS(NR) break;
            }
#undef EP_1M_ROWS
            continue;
        }
        for (ep_dim_t p = 0; p < kc; p += 2) {
            T *d0 = dst + p * NR, *d1 = d0 + NR;
            const T *src = b + koff[p];
            for (int j = 0; j < nr; j += 2) {
                const T *x = unit ? src + no[0] + j : src + no[j];
                d0[j] = x[0];
                d0[j + 1] = sb * x[1];
                d1[j] = s1[0] * x[1];
                d1[j + 1] = sa * x[0];
            }
            for (int j = nr; j < NR; j++) d0[j] = d1[j] = 0;
        }
    }
}

// Pack every (jc, pc) block of one batch index of B into buf (one thread).
static void EP_PFX(pack_b_all)(const ep_gemm_desc_t *d, int NR, ep_dim_t K,
                               ep_dim_t N, ep_dim_t KC, ep_dim_t NC,
                               const T *b, T *buf, ep_inc_t *noff,
                               ep_inc_t *nbs, ep_inc_t *koff)
{
    for (ep_dim_t jc = 0; jc < N; jc += NC) {
        ep_dim_t nc = N - jc < NC ? N - jc : NC;
        ep_dim_t npanel = (nc + NR - 1) / NR;
        ep_scatter(&d->g->n, EP_N_B, jc, nc, noff);
        ep_block_strides(noff, nc, NR, nbs);
        for (ep_dim_t pc = 0; pc < K; pc += KC) {
            ep_dim_t kc = K - pc < KC ? K - pc : KC;
            ep_scatter(&d->g->k, EP_K_B, pc, kc, koff);
            if (d->cplx) {
                EP_PFX(pack_b_1m)(NR, nc, kc, b, noff, koff, d->cplx, 0, npanel,
                                  buf + EP_PACKED_B_BLOCK(jc, pc, NC, npanel, K, NR));
                continue;
            }
            EP_PFX(pack_b)(NR, nc, kc, b, noff, nbs, koff,
                           ep_regular_stride(koff, kc), 0, npanel,
                           buf + EP_PACKED_B_BLOCK(jc, pc, NC, npanel, K, NR));
        }
    }
}
