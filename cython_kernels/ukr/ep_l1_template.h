// ep_l1_template.h -- the level-1 kernels of the GEMV path (ep_gemv.c),
// written once with the same vector macros as ep_ukr_template.h (plus
// V_ADD) and included by each ep_ukr_<isa>_<dt>*.c after its micro-kernel,
// with EP_L1(x) naming the functions.
//
//   dot4(k, x, a0, a1, a2, a3, out): out[r] += sum_p a_r[p] * x[p]
//   dot1(k, x, a):                   returns sum_p a[p] * x[p]
//   axpy(n, alpha, a, y):            y[j] += alpha * a[j]
// All vectors contiguous, unaligned loads; two accumulators per row hide
// the FMA latency.  The summation order depends only on k, never on the
// thread count or on alignment, so equal inputs give equal bits.

// Software prefetch distance, in elements (1 KiB for float32).
#ifndef EP_L1_PF
#define EP_L1_PF (1024 / (int)sizeof(UKR_T))
#endif

static inline UKR_T EP_L1(hsum)(VEC v)
{
    UKR_T t[VL], r = 0;
    V_STOREU(t, v);
    for (int l = 0; l < VL; l++) r += t[l];
    return r;
}

void EP_L1(dot4)(ep_dim_t k, const UKR_T *restrict x,
                 const UKR_T *restrict a0, const UKR_T *restrict a1,
                 const UKR_T *restrict a2, const UKR_T *restrict a3,
                 UKR_T *restrict out)
{
    VEC s0 = V_ZERO(), s1 = V_ZERO(), s2 = V_ZERO(), s3 = V_ZERO();
    VEC t0 = V_ZERO(), t1 = V_ZERO(), t2 = V_ZERO(), t3 = V_ZERO();
    ep_dim_t p = 0;
    for (; p + 2 * VL <= k; p += 2 * VL) {
        // the matrix streams from memory once: fetch well ahead
        __builtin_prefetch(a0 + p + EP_L1_PF, 0, 0);
        __builtin_prefetch(a1 + p + EP_L1_PF, 0, 0);
        __builtin_prefetch(a2 + p + EP_L1_PF, 0, 0);
        __builtin_prefetch(a3 + p + EP_L1_PF, 0, 0);
        VEC x0 = V_LOADU(x + p), x1 = V_LOADU(x + p + VL);
        s0 = V_FMA(V_LOADU(a0 + p), x0, s0);  t0 = V_FMA(V_LOADU(a0 + p + VL), x1, t0);
        s1 = V_FMA(V_LOADU(a1 + p), x0, s1);  t1 = V_FMA(V_LOADU(a1 + p + VL), x1, t1);
        s2 = V_FMA(V_LOADU(a2 + p), x0, s2);  t2 = V_FMA(V_LOADU(a2 + p + VL), x1, t2);
        s3 = V_FMA(V_LOADU(a3 + p), x0, s3);  t3 = V_FMA(V_LOADU(a3 + p + VL), x1, t3);
    }
    UKR_T r0 = EP_L1(hsum)(V_ADD(s0, t0)), r1 = EP_L1(hsum)(V_ADD(s1, t1));
    UKR_T r2 = EP_L1(hsum)(V_ADD(s2, t2)), r3 = EP_L1(hsum)(V_ADD(s3, t3));
    for (; p < k; p++) {
        r0 += a0[p] * x[p]; r1 += a1[p] * x[p];
        r2 += a2[p] * x[p]; r3 += a3[p] * x[p];
    }
    out[0] += r0; out[1] += r1; out[2] += r2; out[3] += r3;
}

UKR_T EP_L1(dot1)(ep_dim_t k, const UKR_T *restrict x, const UKR_T *restrict a)
{
    VEC s = V_ZERO(), t = V_ZERO();
    ep_dim_t p = 0;
    for (; p + 2 * VL <= k; p += 2 * VL) {
        s = V_FMA(V_LOADU(a + p), V_LOADU(x + p), s);
        t = V_FMA(V_LOADU(a + p + VL), V_LOADU(x + p + VL), t);
    }
    UKR_T r = EP_L1(hsum)(V_ADD(s, t));
    for (; p < k; p++) r += a[p] * x[p];
    return r;
}

void EP_L1(axpy)(ep_dim_t n, UKR_T alpha, const UKR_T *restrict a,
                 UKR_T *restrict y)
{
    VEC va = V_SET1(alpha);
    ep_dim_t j = 0;
    for (; j + VL <= n; j += VL)
        V_STOREU(y + j, V_FMA(va, V_LOADU(a + j), V_LOADU(y + j)));
    for (; j < n; j++) y[j] += alpha * a[j];
}

// smm: small C = alpha * A B + beta * C read in place (no packing), for
// batches of tiny matrices ("bij,bjk->bik" with 4x4 .. 64x64 blocks), where
// packing and the MR x NR micro-tile cost more than the arithmetic.  B and C
// rows must be contiguous (n stride 1), n <= EP_SMM_MAXV vectors.
//
// The register tile is R rows x NV vectors with both constant: smm_tile is
// inlined once per (R, NV), so the k loop has no branches and the
// accumulators stay in registers.  R is the most rows whose R * NV
// accumulators, NV vectors of B and one broadcast fit the ISA's
// EP_SMM_VREGS vector registers (at most 8), next to the last vector's mask
// where the ISA keeps it in one: R * NV independent FMA chains cover the FMA
// latency.  Wider rows run as blocks of at most EP_SMM_BLOCKV vectors (4 with
// 32 registers: 6 x 4 tiles; 3 with 16: 3 x 3 tiles, as 2 x 4 tiles would
// leave 8 chains and 6 loads per 8 FMAs).  The rows left over take one tile
// of their own count (smm_rest), so no row is computed twice and B is
// streamed once more, not once per tile of 4, 2 and 1 rows; a tile of fewer
// than 8 accumulators splits k into more chains (EP_SMM_SPLIT).  Zen 4,
// 2026-11-21, ~8 MFLOP of batches per call,
// 1 thread, ratio to numpy.matmul before / after (the old kernel: 4 rows,
// up to 4 vectors chosen at run time; asv_benchmarks/smm_table.py): f32
// 16^3 0.76 / 1.31, 32^3 0.64 / 0.99; f64 16^3 0.73 / 1.06, 64^3 0.65 / 1.02.
//
// The ISA file supplies the partial vector at the end of a row of B and C:
// EP_MASK_T, V_MASK_FIRST(t) (the first t lanes), V_MASK_LOADU (masked-off
// lanes read as zero, never touching memory) and V_MASK_STOREU.
#ifdef V_MASK_LOADU
#define EP_SMM_MAXV 8
// vector registers the last vector's mask takes (AVX2 masks are vectors;
// AVX-512's live in mask registers): with it counted, NV = 3 on AVX2 takes
// 3 rows, not 4, whose 12 accumulators would have the mask spilled and
// reloaded on every k step
#ifndef EP_SMM_MASK_VREGS
#define EP_SMM_MASK_VREGS 0
#endif
#define EP_SMM_FREE(NV) (EP_SMM_VREGS - 1 - (NV) - EP_SMM_MASK_VREGS)
#define EP_SMM_ROWS_FOR(NV) (EP_SMM_FREE(NV) / (NV) >= 8 ? 8 : EP_SMM_FREE(NV) / (NV))

// FMA chains a tile keeps in flight: two units of four cycles' latency
#define EP_SMM_CHAINS 8
// Partial sums along k a tile of R x NV accumulators keeps (1 to 4): a tile
// of fewer than EP_SMM_CHAINS accumulators sums alternate steps of k into
// separate ones, added at the end ('ij,jk->ik' (7,230781) x (230781,16)
// f32: one row's chain waits four cycles a step)
#define EP_SMM_SPLIT(R, NV)                                                   \
    ((R) * (NV) >= EP_SMM_CHAINS ? 1 : EP_SMM_CHAINS / ((R) * (NV)) > 4 ? 4   \
     : EP_SMM_CHAINS / ((R) * (NV)))

static inline __attribute__((always_inline)) void
EP_L1(smm_tile)(const int R, const int NV, EP_MASK_T last, ep_dim_t k,
                const UKR_T *a, ep_inc_t rsa, ep_inc_t csa, const UKR_T *b,
                ep_inc_t rsb, UKR_T *c, ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    // partial sum u of row r in s[u * R + r]: U * R <= 8 rows (EP_SMM_SPLIT),
    // and an array no larger than one tile's lets GCC keep it in registers
    const int U = EP_SMM_SPLIT(R, NV);
    VEC s[8][EP_SMM_MAXV];
#pragma GCC unroll 8
    for (int r = 0; r < U * R; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) s[r][v] = V_ZERO();
    ep_dim_t p = 0;
    if (U > 1)
        for (; p + U <= k; p += U) {
#pragma GCC unroll 4
            for (int u = 0; u < U; u++) {
                VEC bv[EP_SMM_MAXV];
#pragma GCC unroll 8
                for (int v = 0; v < NV; v++)
                    bv[v] = v == NV - 1 ? V_MASK_LOADU(b + u * rsb + v * VL, last)
                                        : V_LOADU(b + u * rsb + v * VL);
#pragma GCC unroll 8
                for (int r = 0; r < R; r++) {
                    VEC x = V_SET1(a[r * rsa + u * csa]);
#pragma GCC unroll 8
                    for (int v = 0; v < NV; v++)
                        s[u * R + r][v] = V_FMA(x, bv[v], s[u * R + r][v]);
                }
            }
            a += U * csa;
            b += U * rsb;
        }
    for (; p < k; p++) {
        VEC bv[EP_SMM_MAXV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++)
            bv[v] = v == NV - 1 ? V_MASK_LOADU(b + v * VL, last) : V_LOADU(b + v * VL);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            VEC x = V_SET1(a[r * rsa]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) s[r][v] = V_FMA(x, bv[v], s[r][v]);
        }
        a += csa;
        b += rsb;
    }
#pragma GCC unroll 4
    for (int u = 1; u < U; u++)
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) s[r][v] = V_ADD(s[r][v], s[u * R + r][v]);
    VEC va = V_SET1(alpha), vb = V_SET1(beta);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        UKR_T *cr = c + r * rsc;
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            // alpha == 1 (every einsum call): no multiply -- with k = 32 the
            // tile's 16 multiplies are 3% of its FMA cycles
            VEC res = alpha == (UKR_T)1 ? s[r][v] : V_MUL(va, s[r][v]);
            if (v < NV - 1) {
                if (beta != 0)                    // beta == 0 never reads C
                    res = V_FMA(vb, V_LOADU(cr + v * VL), res);
                V_STOREU(cr + v * VL, res);
            } else {
                if (beta != 0)
                    res = V_FMA(vb, V_MASK_LOADU(cr + v * VL, last), res);
                V_MASK_STOREU(cr + v * VL, last, res);
            }
        }
    }
}

// The rows left below a tile of R (1 to 7) as one tile of their own count,
// out of line: inlined beside the R-row tiles, the 28 tiles of this switch
// crowd the registers of theirs (B's vectors fetched again for every row).
// It returns with vzeroupper, as every AVX function called from SSE code
// must: the caller's SSE code would pay for dirty upper halves ('bij,bjk->
// bik' (2000,7,16) f32 on AVX2: 2x slower).
static __attribute__((noinline)) void
EP_L1(smm_rest)(int rows, int nv, int tail, ep_dim_t k, const UKR_T *a,
                ep_inc_t rsa, ep_inc_t csa, const UKR_T *b, ep_inc_t rsb,
                UKR_T *c, ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    // the last vector's lanes as a count: a vector argument (AVX2's mask)
    // would leave the upper halves live at the return, with no vzeroupper
    EP_MASK_T last = V_MASK_FIRST(tail);
#define EP_SMM_REST(NV)                                                       \
    switch (rows) {                                                           \
    case 1: EP_L1(smm_tile)(1, (NV), last, k, a, rsa, csa, b, rsb, c, rsc,    \
                            alpha, beta); break;                              \
    case 2: EP_L1(smm_tile)(2, (NV), last, k, a, rsa, csa, b, rsb, c, rsc,    \
                            alpha, beta); break;                              \
    case 3: EP_L1(smm_tile)(3, (NV), last, k, a, rsa, csa, b, rsb, c, rsc,    \
                            alpha, beta); break;                              \
    case 4: EP_L1(smm_tile)(4, (NV), last, k, a, rsa, csa, b, rsb, c, rsc,    \
                            alpha, beta); break;                              \
    case 5: if (EP_SMM_ROWS_FOR(NV) > 5)                                      \
                EP_L1(smm_tile)(5, (NV), last, k, a, rsa, csa, b, rsb, c,     \
                                rsc, alpha, beta); break;                     \
    case 6: if (EP_SMM_ROWS_FOR(NV) > 6)                                      \
                EP_L1(smm_tile)(6, (NV), last, k, a, rsa, csa, b, rsb, c,     \
                                rsc, alpha, beta); break;                     \
    case 7: if (EP_SMM_ROWS_FOR(NV) > 7)                                      \
                EP_L1(smm_tile)(7, (NV), last, k, a, rsa, csa, b, rsb, c,     \
                                rsc, alpha, beta); break;                     \
    default: break;                                                           \
    }
    switch (nv) {
    case 1: EP_SMM_REST(1); break;
    case 2: EP_SMM_REST(2); break;
    case 3: EP_SMM_REST(3); break;
    case 4: EP_SMM_REST(4); break;
    default: break;
    }
#undef EP_SMM_REST
}

// All rows of C for one constant NV: tiles of R rows, then one tile of the
// rows left (R - 1 at most), so that B is streamed once per tile of rows
#define EP_SMM_ROWS(R, NV)                                                    \
    do {                                                                      \
        int i = 0;                                                            \
        for (; i + (R) <= m; i += (R))                                        \
            EP_L1(smm_tile)((R), (NV), last, k, a + i * rsa, rsa, csa, b,     \
                            rsb, c + i * rsc, rsc, alpha, beta);              \
        if (i < m)                                                            \
            EP_L1(smm_rest)(m - i, (NV), tail, k, a + i * rsa, rsa, csa, b,   \
                            rsb, c + i * rsc, rsc, alpha, beta);              \
    } while (0)

// One block of columns (nv vectors, the last one of `tail` lanes).
static inline __attribute__((always_inline)) void
EP_L1(smm_cols)(int m, int nv, int tail, ep_dim_t k, const UKR_T *a,
                ep_inc_t rsa, ep_inc_t csa, const UKR_T *b, ep_inc_t rsb,
                UKR_T *c, ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    EP_MASK_T last = V_MASK_FIRST(tail);
    switch (nv) {
    case 1: EP_SMM_ROWS(EP_SMM_ROWS_FOR(1), 1); break;
    case 2: EP_SMM_ROWS(EP_SMM_ROWS_FOR(2), 2); break;
    case 3: EP_SMM_ROWS(EP_SMM_ROWS_FOR(3), 3); break;
    case 4: EP_SMM_ROWS(EP_SMM_ROWS_FOR(4), 4); break;
    default: break;
    }
}

static inline __attribute__((always_inline)) void
EP_L1(smm_blocks)(int m, int n, ep_dim_t k, const UKR_T *a, ep_inc_t rsa,
                  ep_inc_t csa, const UKR_T *b, ep_inc_t rsb, UKR_T *c,
                  ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    int nv = (n + VL - 1) / VL;
    int tail = n - (nv - 1) * VL;
    // more than EP_SMM_BLOCKV vectors: blocks of columns of near-equal width
    // (all but the last unmasked), so that each block's tile still has 12+
    // accumulators in the registers next to its row of B
    for (int nblk = (nv + EP_SMM_BLOCKV - 1) / EP_SMM_BLOCKV; nblk > 1; nblk--) {
        int nvb = (nv + nblk - 1) / nblk;
        EP_L1(smm_cols)(m, nvb, VL, k, a, rsa, csa, b, rsb, c, rsc, alpha, beta);
        b += nvb * VL;
        c += nvb * VL;
        nv -= nvb;
    }
    EP_L1(smm_cols)(m, nv, tail, k, a, rsa, csa, b, rsb, c, rsc, alpha, beta);
}

// Rows of A and C a chunk takes across the column blocks: about
// EP_SMM_CHUNK_BYTES of both, a multiple of every tile's rows (8, 6, 3, 2)
#define EP_SMM_CHUNK_BYTES (64 << 10)
#define EP_SMM_CHUNK_ROWS 24

void EP_L1(smm)(int m, int n, ep_dim_t k, const UKR_T *a, ep_inc_t rsa,
                ep_inc_t csa, const UKR_T *b, ep_inc_t rsb, UKR_T *c,
                ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    // Several column blocks each run down all the rows: the rows go in
    // chunks whose A and C stay in L2 from one block to the next, where a
    // tall A past the caches was read from memory once per block ('ij,jk->ik'
    // (70452, 48) x (48, 62) f32: three blocks, A's 13.5 MB read three
    // times, 0.57x numpy).
    ep_dim_t per_row = (k + (ep_dim_t)n) * (ep_dim_t)sizeof(UKR_T);
    ep_dim_t rows = EP_SMM_CHUNK_BYTES / (per_row > 0 ? per_row : 1);
    rows = rows < EP_SMM_CHUNK_ROWS ? EP_SMM_CHUNK_ROWS : rows / EP_SMM_CHUNK_ROWS * EP_SMM_CHUNK_ROWS;
    if ((n + VL - 1) / VL > EP_SMM_BLOCKV && (ep_dim_t)m > rows) {
        for (ep_dim_t i = 0; i < (ep_dim_t)m; i += rows) {
            int mi = (ep_dim_t)m - i < rows ? (int)((ep_dim_t)m - i) : (int)rows;
            EP_L1(smm_blocks)(mi, n, k, a + i * rsa, rsa, csa, b, rsb, c + i * rsc, rsc,
                              alpha, beta);
        }
        return;
    }
    EP_L1(smm_blocks)(m, n, k, a, rsa, csa, b, rsb, c, rsc, alpha, beta);
}

// Passes EP_L1(smm) makes over B for m rows of n columns: the tiles
// EP_SMM_ROWS runs down the widest column block (the first)
ep_dim_t EP_L1(smm_b_passes)(ep_dim_t m, ep_dim_t n)
{
    ep_dim_t nv = (n + VL - 1) / VL;
    if (nv == 0) return 0;
    ep_dim_t nblk = (nv + EP_SMM_BLOCKV - 1) / EP_SMM_BLOCKV;
    ep_dim_t nvb = (nv + nblk - 1) / nblk;
    ep_dim_t R = EP_SMM_ROWS_FOR(nvb);
    return (m + R - 1) / R;
}
#undef EP_SMM_ROWS
#undef EP_SMM_SPLIT
#undef EP_SMM_CHAINS
#undef EP_SMM_ROWS_FOR
#undef EP_SMM_CHUNK_BYTES
#undef EP_SMM_CHUNK_ROWS
#undef EP_SMM_MAXV
#endif
