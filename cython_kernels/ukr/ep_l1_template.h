// ep_l1_template.h -- the level-1 kernels of the GEMV path (ep_small.c),
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
// batches of tiny matrices ("bij,bjk->bik" with 4x4 .. 32x32 blocks), where
// packing and the 8 x NR micro-tile cost more than the arithmetic.  B and C
// rows must be contiguous (n stride 1), n <= 4 VL.  Four rows of C at a
// time, up to four vectors each: enough independent FMA chains to cover the
// FMA latency even when n is one vector.
#ifdef V_MASK_STOREU
#define EP_SMM_MAXV 4
#define EP_SMM_ROWS 4
void EP_L1(smm)(int m, int n, ep_dim_t k, const UKR_T *a, ep_inc_t rsa,
                ep_inc_t csa, const UKR_T *b, ep_inc_t rsb, UKR_T *c,
                ep_inc_t rsc, UKR_T alpha, UKR_T beta)
{
    int nv = (n + VL - 1) / VL;
    EP_MASK_T mk[EP_SMM_MAXV];
    for (int v = 0; v < EP_SMM_MAXV; v++) {
        int left = n - v * VL;
        mk[v] = left >= VL ? (EP_MASK_T)~0 : left > 0 ? (EP_MASK_T)((1u << left) - 1) : 0;
    }
    VEC va = V_SET1(alpha), vb = V_SET1(beta);
    for (int i = 0; i < m; i += EP_SMM_ROWS) {
        int rows = m - i < EP_SMM_ROWS ? m - i : EP_SMM_ROWS;
        const UKR_T *ar[EP_SMM_ROWS];
        for (int r = 0; r < EP_SMM_ROWS; r++)     // missing rows repeat row i
            ar[r] = a + (i + (r < rows ? r : 0)) * rsa;
        VEC s[EP_SMM_ROWS][EP_SMM_MAXV];
#pragma GCC unroll 4
        for (int r = 0; r < EP_SMM_ROWS; r++)
#pragma GCC unroll 4
            for (int v = 0; v < EP_SMM_MAXV; v++) s[r][v] = V_ZERO();
        for (ep_dim_t p = 0; p < k; p++) {
            const UKR_T *bp = b + p * rsb;
            VEC x[EP_SMM_ROWS];
#pragma GCC unroll 4
            for (int r = 0; r < EP_SMM_ROWS; r++) x[r] = V_SET1(ar[r][p * csa]);
#pragma GCC unroll 4
            for (int v = 0; v < EP_SMM_MAXV; v++) {
                if (v >= nv) break;
                VEC bv = V_MASK_LOADU(bp + v * VL, mk[v]);
#pragma GCC unroll 4
                for (int r = 0; r < EP_SMM_ROWS; r++) s[r][v] = V_FMA(x[r], bv, s[r][v]);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < EP_SMM_ROWS; r++) {
            if (r >= rows) break;
            UKR_T *ci = c + (i + r) * rsc;
#pragma GCC unroll 4
            for (int v = 0; v < EP_SMM_MAXV; v++) {
                if (v >= nv) break;
                VEC res = V_MUL(va, s[r][v]);
                if (beta != 0)
                    res = V_FMA(vb, V_MASK_LOADU(ci + v * VL, mk[v]), res);
                V_MASK_STOREU(ci + v * VL, mk[v], res);
            }
        }
    }
}
#endif
