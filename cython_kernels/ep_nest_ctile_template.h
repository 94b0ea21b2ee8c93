// ep_nest_ctile_template.h -- the nest's complex register-tile kernel for one
// ISA and one complex dtype; included by ep_nest_template.h (its parameters
// NT, T, VL, NT_TGT, NT_LD, NT_ST, NT_PAIR_SWAP are set there, CPX is 1).
//
// The three innermost loops W, K, V of a complex GEMM with a short edge:
//     o[w, v] (+)= sum_k x[k, v] * y[w, k]
// x does not move along W, y not along V, the output not along K.  V runs in
// vectors (H = VL / 2 complex elements each), W is a short strip of NW
// columns: an MV-vector x NW tile of the output stays in registers while K
// streams through both inputs once.  x is copied a block at a time (KB rows
// of VB elements, padded with zeros to whole vectors) into a buffer that
// stays in L2, from any strides; y's elements are broadcast from where they
// lie.  The complex product is deferred-swap: x * yr and x * yi accumulate
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
#define CT_ELEMS 8192        // complex elements of x's block copy (64-128 KB: L2)
#define CT_VB 128            // longest V run of the block (y re-read per run)
#define CT_KB 512            // longest K run of the block

// one MV x NW tile over kb rows of the block b (ldb reals per row): y at
// (w0, k0), strides in reals; o at (w0, v), strides in reals; nv: the
// tile's valid elements along V (the rest is padding)
static inline __attribute__((always_inline)) CT_TGT void
NT(ct_tile)(const int MV, const int NW, const T *b, ep_dim_t ldb, const T *y, ep_inc_t yw,
            ep_inc_t yk, ep_dim_t kb, T *o, ep_inc_t ow, ep_inc_t ov, ep_dim_t nv, int first)
{
    NT(vec) ar[2][3], ai[2][3];
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
        T t[2 * VL];
        NT_ST(t, r0);
        NT_ST(t + VL, r1);
        for (ep_dim_t e = 0; e < nv; e++) {
            T *p = d + e * ov;
            p[0] = first ? t[2 * e] : p[0] + t[2 * e];
            p[1] = first ? t[2 * e + 1] : p[1] + t[2 * e + 1];
        }
    }
}

// every MV x NW variant, each a small function of its own
#define CT_ONE(MV, NW) \
    static CT_TGT void NT(ct_##MV##_##NW)(const T *b, ep_dim_t ldb, const T *y, ep_inc_t yw, \
                                          ep_inc_t yk, ep_dim_t kb, T *o, ep_inc_t ow, \
                                          ep_inc_t ov, ep_dim_t nv, int first) \
    { NT(ct_tile)(MV, NW, b, ldb, y, yw, yk, kb, o, ow, ov, nv, first); }
CT_ONE(1, 1) CT_ONE(1, 2) CT_ONE(1, 3) CT_ONE(2, 1) CT_ONE(2, 2) CT_ONE(2, 3)
#undef CT_ONE
typedef void (*NT(ct_fn_t))(const T *, ep_dim_t, const T *, ep_inc_t, ep_inc_t, ep_dim_t, T *,
                            ep_inc_t, ep_inc_t, ep_dim_t, int);
static const NT(ct_fn_t) NT(ct_fn)[2][3] = {
    {NT(ct_1_1), NT(ct_1_2), NT(ct_1_3)}, {NT(ct_2_1), NT(ct_2_2), NT(ct_2_3)}};

// The W x K x V loops (strides in complex elements): x along K and V, y
// along W and K, the output along W and V.  first: the output's first visit
// (stored, not added to).  buf: NT(ctile_buffer)() reals.
static CT_TGT void NT(ctile)(const T *x, ep_inc_t xk, ep_inc_t xv, const T *y, ep_inc_t yw,
                     ep_inc_t yk, ep_dim_t W, ep_dim_t K, ep_dim_t V, T *o, ep_inc_t ow,
                     ep_inc_t ov, int first, T *buf)
{
    const ep_dim_t H = VL / 2;
    // V runs of CT_VB, longer when K is short enough for the block to take
    // them whole: fewer, longer runs of each input and output row (a long
    // V with K = 15 walks 15 input and W output streams a run at a time)
    ep_dim_t VB = (V + H - 1) / H * H, vmax = CT_VB;
    if (K * CT_VB < CT_ELEMS) vmax = CT_ELEMS / K / (2 * H) * (2 * H);
    if (VB > vmax) VB = vmax;
    ep_dim_t KB = CT_ELEMS / VB;
    if (KB > CT_KB) KB = CT_KB;
    for (ep_dim_t v0 = 0; v0 < V; v0 += VB) {
        ep_dim_t nvb = V - v0 < VB ? V - v0 : VB, pad = (nvb + H - 1) / H * H;
        for (ep_dim_t k0 = 0; k0 < K; k0 += KB) {
            ep_dim_t kb = K - k0 < KB ? K - k0 : KB;
            // x's block, rows of pad elements
            for (ep_dim_t k = 0; k < kb; k++) {
                const T *s = x + 2 * ((k0 + k) * xk + v0 * xv);
                T *d = buf + 2 * k * pad;
                if (xv == 1) {
                    memcpy(d, s, (size_t)nvb * 2 * sizeof(T));
                } else {
                    for (ep_dim_t e = 0; e < nvb; e++) {
                        d[2 * e] = s[2 * e * xv];
                        d[2 * e + 1] = s[2 * e * xv + 1];
                    }
                }
                for (ep_dim_t e = nvb; e < pad; e++) { d[2 * e] = 0; d[2 * e + 1] = 0; }
            }
            int fr = first && k0 == 0;
            for (ep_dim_t w0 = 0; w0 < W; w0 += 3) {
                int nw = W - w0 < 3 ? (int)(W - w0) : 3;
                const T *yq = y + 2 * (w0 * yw + k0 * yk);
                for (ep_dim_t vt = 0; vt < nvb; vt += 2 * H) {
                    ep_dim_t rem = nvb - vt;
                    int mv = rem > H ? 2 : 1;
                    NT(ct_fn)[mv - 1][nw - 1](buf + 2 * vt, 2 * pad, yq, 2 * yw, 2 * yk, kb,
                                              o + 2 * (w0 * ow + (v0 + vt) * ov), 2 * ow,
                                              2 * ov, rem < 2 * H ? rem : 2 * H, fr);
                }
            }
        }
    }
}

// reals of the buffer NT(ctile) copies x's blocks into
static ep_dim_t NT(ctile_buffer)(void)
{
    return 2 * (CT_ELEMS + CT_VB);
}

#undef CT_ELEMS
#undef CT_VB
#undef CT_KB
#undef CT_TGT
