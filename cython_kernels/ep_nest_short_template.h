// ep_nest_short_template.h -- the nest's small-edge kernel for one ISA and
// one dtype; included by ep_nest_template.h (its parameters NT, T, CPX, VL,
// NT_TGT, NT_LD, NT_ST are set there).
//
// Three innermost loops in one call: R rows (the loop O), each an S x n block
// of a short loop S (extent <= EP_NEST_SHORT) around the row L (n elements).
// Exactly one of S, L is summed into the output:
//   sum-over-S  (os == 0): out[r, l] = sum_s prod_j in_j[r, s, l]   -- a GEMM
//               whose k is short ('ij,kj->ik' with j = 3): each output
//               element is written once, the S partial products in registers;
//   sum-over-L  (ol == 0): out[r, s] = sum_l prod_j in_j[r, s, l]   -- S dots
//               at once ('ij,jk->ik' with k = 3): S vector accumulators share
//               each load of the inputs constant along S.
// The row is vectorised along L.  A moving input whose L-stride is not 1 is
// first copied into a contiguous [s][l] buffer: once per call when it is
// constant along O (a GEMM's small operand), else per row.  The S extent is a
// compile-time constant in the SIMD paths (one instantiation per S), so the
// short loop unrolls into registers.  Complex dtypes take the sum over S
// only (NT(csum_s)): rows shorter than a vector as the real kernel's sum
// over 2 S (NT_REAL names the real instantiation), longer ones in complex
// vectors; other complex calls run the generic path (any strides, no
// buffers, still no per-row set-up).
// The kernel's products and sums contract into FMAs where the kernel set has
// them (ISO C mode keeps them apart otherwise): the avx2 set runs only where
// the CPU has FMA too (ep_cpu.c), NT_FMA says so; AVX-512F implies FMA.
#ifdef NT_FMA
#define NS_TGT __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
#else
#define NS_TGT NT_TGT __attribute__((optimize("fp-contract=fast")))
#endif
#define NS_MAXIN 2   // moving inputs of the SIMD paths
#define NS_REGS (sizeof(NT(vec)) == 64 ? 24 : 12)   // vectors a kernel may keep in registers
#define NS_CHUNK 1024  // longest row of the SIMD paths' copies (at most 64 KB for S = 8)
#define NS_CHUNK_BYTES (16 << 10)   // the S rows of a chunk where L1's size is unknown (half of it)

// prod_j in_j[s, l] of the generic path (vi = 0 for real dtypes).  The
// first factor is taken as it is: 1 * inf would give nan parts.
static inline __attribute__((always_inline)) void NT(short_prod)(
    int nin, const T *const *p, const ep_inc_t *rs, const ep_inc_t *rl, int s,
    ep_dim_t l, T *re, T *im)
{
    const int E = 1 + CPX;
    T vr = 1, vi = 0;
    for (int j = 0; j < nin; j++) {
        const T *q = p[j] + E * (s * rs[j] + l * rl[j]);
#if CPX
        T t = j == 0 ? q[0] : vr * q[0] - vi * q[1];
        vi = j == 0 ? q[1] : vr * q[1] + vi * q[0];
        vr = t;
#else
        vr = j == 0 ? q[0] : vr * q[0];
#endif
    }
    *re = vr;
    *im = vi;
}

// the generic path: one row, any strides, any inputs.  p[j] at the row's
// start; fr: the row's output elements are visited for the first time.
NT_FN void NT(short_row_any)(int nin, const T *const *p, const ep_inc_t *rs,
                             const ep_inc_t *rl, int S, ep_dim_t n, T *o, ep_inc_t os,
                             ep_inc_t ol, int fr)
{
    const int E = 1 + CPX;
    if (os == 0) {
        for (ep_dim_t l = 0; l < n; l++) {
            T ar = 0, ai = 0;
            for (int s = 0; s < S; s++) {
                T vr, vi;
                NT(short_prod)(nin, p, rs, rl, s, l, &vr, &vi);
                ar += vr; ai += vi;
            }
            T *d = o + E * l * ol;
            d[0] = fr ? ar : d[0] + ar;
#if CPX
            d[1] = fr ? ai : d[1] + ai;
#endif
            (void)ai;
        }
        return;
    }
    for (int s = 0; s < S; s++) {
        T ar0 = 0, ai0 = 0, ar1 = 0, ai1 = 0;
        for (ep_dim_t l = 0; l < n; l++) {
            T vr, vi;
            NT(short_prod)(nin, p, rs, rl, s, l, &vr, &vi);
            if (l & 1) { ar1 += vr; ai1 += vi; } else { ar0 += vr; ai0 += vi; }
        }
        T *d = o + E * s * os;
        d[0] = fr ? ar0 + ar1 : d[0] + (ar0 + ar1);
#if CPX
        d[1] = fr ? ai0 + ai1 : d[1] + (ai0 + ai1);
#endif
        (void)ai0; (void)ai1;
    }
}

#if !CPX
// the sum of v's lanes by halving (log2(VL) shuffles and adds, no chain of
// VL dependent scalar adds)
static inline __attribute__((always_inline)) NT_TGT T NT(hsum_tree)(NT(vec) v)
{
#if VL == 16
    v += __builtin_shuffle(v, (NT(ivec)){8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7});
    v += __builtin_shuffle(v, (NT(ivec)){4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11});
    v += __builtin_shuffle(v, (NT(ivec)){2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13});
    v += __builtin_shuffle(v, (NT(ivec)){1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14});
#elif VL == 8
    v += __builtin_shuffle(v, (NT(ivec)){4, 5, 6, 7, 0, 1, 2, 3});
    v += __builtin_shuffle(v, (NT(ivec)){2, 3, 0, 1, 6, 7, 4, 5});
    v += __builtin_shuffle(v, (NT(ivec)){1, 0, 3, 2, 5, 4, 7, 6});
#elif VL == 4
    v += __builtin_shuffle(v, (NT(ivec)){2, 3, 0, 1});
    v += __builtin_shuffle(v, (NT(ivec)){1, 0, 3, 2});
#else
    v += __builtin_shuffle(v, (NT(ivec)){1, 0});
#endif
    return v[0];
}

// vector v of pn periods (ep_nest_short_template.h's rows run across):
// o[q*op] (+)= sum over the SP rows j and s of f[q*fp + jo[j] + s*fs] *
// w[j*S + s], the terms alternating between two chains of multiply-adds
static inline __attribute__((always_inline)) NT_TGT void
NT(across_run)(const int S, const int SP, ep_dim_t pn, const T *f, ep_inc_t fp,
               const ep_inc_t *jo, ep_inc_t fs, const NT(vec) *w, T *o, ep_inc_t op,
               int first)
{
    for (ep_dim_t q = 0; q < pn; q++, f += fp, o += op) {
        NT(vec) a[2] = {first ? (NT(vec)){0} : NT_LD(o), (NT(vec)){0}};
        for (int j = 0; j < SP; j++)
            for (int s = 0; s < S; s++)
                a[(j * S + s) & 1] += (f[jo[j] + s * fs] - (NT(vec)){0}) * w[j * S + s];
        NT_ST(o, a[0] + a[1]);
    }
}

// The period of rows run across (see rows_across): G rows and NV vectors
// repeat every lcm(n, VL) elements, a vector's lanes fall in at most SP rows.
static inline __attribute__((always_inline)) void NT(across_period)(ep_dim_t n, int *G, int *NV,
                                                                    int *SP)
{
    ep_dim_t g = n, h = VL;
    while (h) { ep_dim_t t = g % h; g = h; h = t; }
    *G = (int)(VL / g);
    *NV = (int)(n / g);
    *SP = (VL - 1) / n + 2 < *G ? (int)((VL - 1) / n + 2) : *G;
}

// The fewest rows worth running across (nest.py's across_min_rows): each
// call builds NV x SP x S weight vectors lane by lane, which the rows repay
// only from about twice as many rows as those vectors' lanes cover
// ('ij...,jk...->ik...' (11058,7,1,3) x (7,3,5,1) f64: 15 rows a call, 4.9
// ms across on 8 of them, 1.8 ms element by element)
static inline __attribute__((always_inline)) ep_dim_t NT(across_min_rows)(ep_dim_t n)
{
    int G, NV, SP;
    NT(across_period)(n, &G, &NV, &SP);
    const ep_dim_t rows = 2 * (ep_dim_t)NV * SP * VL / n;
    return rows > VL ? rows : VL;
}

// R rows of n <= VL elements of the sum over a short S, back to back in the
// output (oo == n, ol == 1) against an x shared by every row, f present
// ('ij,jk->ik' (N, 3) x (3, 3)): the output is run through in whole vectors
// across rows.  Lane L of a vector belongs to row (p + L) / n, column
// (p + L) % n; the pattern repeats every lcm(n, VL) elements (G rows,
// NV vectors).  A vector's lanes fall in at most SP rows j; for each
// j and s it takes c[row j, s] broadcast times a vector holding
// x[s, col] in row j's lanes and 0 elsewhere -- built once per call,
// so the rows cost broadcasts and multiply-adds and no per-row set-up
// or tail.  Every vector takes SP rows (a row it does not reach has
// zero weights and reads its first row again), so the loop's trip
// count is the same for all and its branch predicted.
// Returns the rows done (whole periods); the caller runs the rest.
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(rows_across)(const int S, ep_dim_t R, const T *x, ep_inc_t xs, const T *f, ep_inc_t fro,
                ep_inc_t fs, ep_dim_t n, T *o, int first)
{
    int G, NV, SP;                             // rows and vectors per period
    NT(across_period)(n, &G, &NV, &SP);
    int row0[VL];
    NT(vec) m[3 * VL * EP_NEST_SHORT];        // NV x SP x S, NV x SP < 3 VL
    for (int v = 0; v < NV; v++) {
        row0[v] = v * VL / n;
        const int at0 = v * VL - row0[v] * (int)n;    // vector v's first element in its row
        for (int j = 0; j < SP; j++)
            for (int s = 0; s < S; s++) {
                NT(vec) w = {0};
                // element v * VL + L is at `at` in row `row` (counted: no
                // division per lane, these weights are built per call)
                int at = at0, row = row0[v];
                for (int L = 0; L < VL; L++) {
                    if (row == row0[v] + j) w[L] = x[s * xs + at];
                    if (++at == (int)n) {
                        at = 0;
                        row++;
                    }
                }
                m[(v * SP + j) * S + s] = w;
            }
    }
    // vector v of a block of periods after another (independent sums
    // the core overlaps), the block's output staying in L1 across v
    const ep_dim_t P = (ep_dim_t)G * n, periods = R / G;
    const ep_inc_t fp = G * fro;                // f's step from a period to the next
    // the rows in groups whose S x rows weights stay in registers (the row
    // count a constant), the block's output re-read from L1 by each group
    // after the first
    const int cj = SP * S <= NS_REGS ? SP : (NS_REGS / S > 0 ? NS_REGS / S : 1);
    ep_dim_t blk = 8192 / (ep_dim_t)sizeof(T) / P;
    if (blk < 1) blk = 1;
    for (ep_dim_t p0 = 0; p0 < periods; p0 += blk) {
        const ep_dim_t pn = periods - p0 < blk ? periods - p0 : blk;
        for (int v = 0; v < NV; v++) {
            const NT(vec) *w = m + v * SP * S;
            // the SP rows' offsets; a row past the period's last has
            // zero weights and reads the vector's first row again
            ep_inc_t jo[VL + 1];
            for (int j = 0; j < SP; j++) jo[j] = (row0[v] + j < G ? j : 0) * fro;
            const T *fv = f + (p0 * G + row0[v]) * fro;
            T *ov = o + p0 * P + v * VL;
            for (int j0 = 0; j0 < SP; j0 += cj) {
                const int nj = SP - j0 < cj ? SP - j0 : cj;
                const int fr = first && j0 == 0;
                const ep_inc_t *jj = jo + j0;
                const NT(vec) *wj = w + j0 * S;
                switch (nj) {
                case 1: NT(across_run)(S, 1, pn, fv, fp, jj, fs, wj, ov, P, fr); break;
                case 2: NT(across_run)(S, 2, pn, fv, fp, jj, fs, wj, ov, P, fr); break;
                case 3: NT(across_run)(S, 3, pn, fv, fp, jj, fs, wj, ov, P, fr); break;
                case 4: NT(across_run)(S, 4, pn, fv, fp, jj, fs, wj, ov, P, fr); break;
                default: NT(across_run)(S, nj, pn, fv, fp, jj, fs, wj, ov, P, fr);
                }
            }
        }
    }
    return periods * G;
}

// lane indices interleaving two vectors: the lanes of their first halves
// (second halves) alternately
#if VL == 2
#define NS_ILV_LO {0, 2}
#define NS_ILV_HI {1, 3}
#elif VL == 4
#define NS_ILV_LO {0, 4, 1, 5}
#define NS_ILV_HI {2, 6, 3, 7}
#elif VL == 8
#define NS_ILV_LO {0, 8, 1, 9, 2, 10, 3, 11}
#define NS_ILV_HI {4, 12, 5, 13, 6, 14, 7, 15}
#else
#define NS_ILV_LO {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23}
#define NS_ILV_HI {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31}
#endif

// R rows of n = 2, 4 or 8 elements (fewer than a vector) of the sum over a
// short S, back to back in the output, against an x shared by every row,
// the factors f unit-stride along the rows ('ij...,jk...->ik...' with a
// broadcast row of 2: f[r + s*fs]): VL rows at a time, each column l a
// vector along the rows (S multiply-adds of f's rows by x[s, l]), the n
// column vectors interleaved in registers (log2 n levels of lane pairs)
// into the rows' n VL elements, stored whole.  Per output vector S / n
// loads, S multiply-adds and log2 n shuffles, where rows_across takes a
// broadcast and a multiply-add for each s and each of the rows its lanes
// span ((231,2,2,1) x (2,910,1,1) f32, rows of 2, Zen 4: 256 us across,
// 59 interleaved; numpy 62).  Returns the rows done (whole vectors of them).
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(rows_interleaved)(const int S, ep_dim_t R, const T *x, ep_inc_t xs, const T *f, ep_inc_t fs,
                     const int n, T *o, int first)
{
    const NT(ivec) lo = NS_ILV_LO, hi = NS_ILV_HI;
    ep_dim_t r = 0;
    for (; r + VL <= R; r += VL) {
        NT(vec) fv[EP_NEST_SHORT], w[8], u[8];
        for (int s = 0; s < S; s++) fv[s] = NT_LD(f + r + s * fs);
        for (int l = 0; l < n; l++) {
            NT(vec) a = fv[0] * (x[l] - (NT(vec)){0});
            for (int s = 1; s < S; s++) a += fv[s] * (x[s * xs + l] - (NT(vec)){0});
            w[l] = a;
        }
        // pairs (i, i + n/2) at each level, their lo and hi side by side
        for (int h = n / 2; h >= 1; h /= 2) {
            for (int i = 0; i < n / 2; i++) {
                u[2 * i] = __builtin_shuffle(w[i], w[i + n / 2], lo);
                u[2 * i + 1] = __builtin_shuffle(w[i], w[i + n / 2], hi);
            }
            for (int i = 0; i < n; i++) w[i] = u[i];
        }
        T *d = o + r * n;
        for (int q = 0; q < n; q++) {
            NT(vec) v = w[q];
            if (!first) v += NT_LD(d + q * VL);
            NT_ST(d + q * VL, v);
        }
    }
    return r;
}

// R rows of the sum over a short S: o[r*oo + l*ol] (+)= sum_s c[r, s] *
// x[r*xro + s*xs + l], c[r, s] = f[r*fro + s*fs] (1 without f)
static inline __attribute__((always_inline)) NT_TGT void
NT(short_sum_s)(const int S, ep_dim_t R, const T *x, ep_inc_t xro, ep_inc_t xs, const T *f,
                ep_inc_t fro, ep_inc_t fs, ep_dim_t n, T *o, ep_inc_t oo, ep_inc_t ol,
                int first)
{
    if (NT_VB == 64 && ol == 1 && 2 * n > VL && n < VL && R > 1) {
        // 512-bit vectors, rows of more than half a vector and less than
        // one: the branch below in half vectors (x's 2 S half vectors in
        // registers, the second ending the row), as AVX2 runs such rows,
        // not across rows, whose weight vectors outgrow the registers
        // ('ij...,jk...->ik...' (80,5,4,3) x (5,465,1,1) f32, rows of 12:
        // 153 us across, 64-80 us in AVX2's whole vectors on a Zen 4).  An
        // x that moves from row to row takes its 2 S half vectors afresh
        // for each row, not a lane at a time ('abc->ac' (1021,7,7) f64)
        typedef T hvec __attribute__((vector_size(NT_VB / 2), aligned(sizeof(T))));
        const ep_dim_t t = n - VL / 2;
        hvec x0[EP_NEST_SHORT], x1[EP_NEST_SHORT];
        for (int s = 0; s < S; s++) {
            x0[s] = *(const hvec *)(x + s * xs);
            x1[s] = *(const hvec *)(x + s * xs + t);
        }
        for (ep_dim_t r = 0; r < R; r++, o += oo) {
            if (xro != 0 && r > 0)
                for (int s = 0; s < S; s++) {
                    x0[s] = *(const hvec *)(x + r * xro + s * xs);
                    x1[s] = *(const hvec *)(x + r * xro + s * xs + t);
                }
            const T *fr_ = f ? f + r * fro : NULL;
            hvec c0 = (f ? fr_[0] : (T)1) - (hvec){0};
            hvec a0 = c0 * x0[0], a1 = c0 * x1[0];
            for (int s = 1; s < S; s++) {
                hvec cs = (f ? fr_[s * fs] : (T)1) - (hvec){0};
                a0 += cs * x0[s];
                a1 += cs * x1[s];
            }
            if (!(first && (r == 0 || oo != 0))) {
                a0 += *(const hvec *)o;
                a1 += *(const hvec *)(o + t);
            }
            *(hvec *)o = a0;
            *(hvec *)(o + t) = a1;
        }
        return;
    }
    if (ol == 1 && xro == 0 && f && fro == 1 && oo == n && n >= 2 && n < VL && n <= 8 &&
        (n & (n - 1)) == 0 && R >= VL) {
        const ep_dim_t r = n == 2 ? NT(rows_interleaved)(S, R, x, xs, f, fs, 2, o, first)
                         : n == 4 ? NT(rows_interleaved)(S, R, x, xs, f, fs, 4, o, first)
                                  : NT(rows_interleaved)(S, R, x, xs, f, fs, 8, o, first);
        f += r;
        o += r * n;
        R -= r;
    }
    // (R >= VL first: across_min_rows divides, a few hundred cycles a call
    // of a few rows -- 'ijk,jkl->il' (7,2984,3) F x (2984,3,3) f64)
    if (ol == 1 && xro == 0 && f && n >= 2 && n <= VL && oo == n && R >= VL &&
        R >= NT(across_min_rows)(n)) {
        const ep_dim_t r = NT(rows_across)(S, R, x, xs, f, fro, fs, n, o, first);
        // the last rows, short of a period, take the general path below
        f += r * fro;
        o += r * oo;
        R -= r;
    }
    if (ol == 1 && xro == 0 && n > VL && n <= 2 * VL && R > 1) {
        // rows of one to two vectors against an x shared by every row (a
        // GEMM's small operand): x's 2 S vectors stay in registers and each
        // row is its S factors, 2 S multiply-adds and two stores, the second
        // vector ending the row (overlapping the first; the output is read
        // before either store, so the overlap gets the same sum)
        const ep_dim_t t = n - VL;
        NT(vec) x0[EP_NEST_SHORT], x1[EP_NEST_SHORT];
        for (int s = 0; s < S; s++) {
            x0[s] = NT_LD(x + s * xs);
            x1[s] = NT_LD(x + s * xs + t);
        }
        for (ep_dim_t r = 0; r < R; r++, o += oo) {
            const T *fr_ = f ? f + r * fro : NULL;
            NT(vec) c0 = (f ? fr_[0] : (T)1) - (NT(vec)){0};
            NT(vec) a0 = c0 * x0[0], a1 = c0 * x1[0];
            for (int s = 1; s < S; s++) {
                NT(vec) cs = (f ? fr_[s * fs] : (T)1) - (NT(vec)){0};
                a0 += cs * x0[s];
                a1 += cs * x1[s];
            }
            if (!(first && (r == 0 || oo != 0))) { a0 += NT_LD(o); a1 += NT_LD(o + t); }
            NT_ST(o, a0);
            NT_ST(o + t, a1);
        }
        return;
    }
    for (ep_dim_t r = 0; r < R; r++, x += xro, o += oo) {
        T c[EP_NEST_SHORT];
        NT(vec) cv[EP_NEST_SHORT];
        for (int s = 0; s < S; s++) {
            c[s] = f ? f[r * fro + s * fs] : 1;
            cv[s] = c[s] - (NT(vec)){0};
        }
        int fr = first && (r == 0 || oo != 0);
        ep_dim_t l = 0;
        if (ol == 1) {
            // a ragged row of at least one vector ends with the row's last
            // vector, overlapping the one before it: its output is read
            // before any store of the row, so the overlap gets the same sum
            const ep_dim_t tail = n % VL != 0 && n >= VL ? n - VL : -1;
            NT(vec) otail = (NT(vec)){0};
            if (tail >= 0 && !fr) otail = NT_LD(o + tail);
            for (; l + 2 * VL <= n; l += 2 * VL) {
                NT(vec) a0 = cv[0] * NT_LD(x + l), a1 = cv[0] * NT_LD(x + l + VL);
                for (int s = 1; s < S; s++) {
                    a0 += cv[s] * NT_LD(x + s * xs + l);
                    a1 += cv[s] * NT_LD(x + s * xs + l + VL);
                }
                if (!fr) { a0 += NT_LD(o + l); a1 += NT_LD(o + l + VL); }
                NT_ST(o + l, a0);
                NT_ST(o + l + VL, a1);
            }
            for (; l + VL <= n; l += VL) {
                NT(vec) a0 = cv[0] * NT_LD(x + l);
                for (int s = 1; s < S; s++) a0 += cv[s] * NT_LD(x + s * xs + l);
                if (!fr) a0 += NT_LD(o + l);
                NT_ST(o + l, a0);
            }
            if (tail >= 0) {
                NT(vec) a0 = cv[0] * NT_LD(x + tail);
                for (int s = 1; s < S; s++) a0 += cv[s] * NT_LD(x + s * xs + tail);
                if (!fr) a0 += otail;
                NT_ST(o + tail, a0);
                l = n;
            }
        } else {
            for (; l + VL <= n; l += VL) {
                NT(vec) a0 = cv[0] * NT_LD(x + l);
                for (int s = 1; s < S; s++) a0 += cv[s] * NT_LD(x + s * xs + l);
                T t[VL];
                NT_ST(t, a0);
                for (int v = 0; v < VL; v++) {
                    T *d = o + (l + v) * ol;
                    *d = fr ? t[v] : *d + t[v];
                }
            }
        }
        for (; l < n; l++) {
            T a = c[0] * x[l];
            for (int s = 1; s < S; s++) a += c[s] * x[s * xs + l];
            T *d = o + l * ol;
            *d = fr ? a : *d + a;
        }
    }
}

// Rows of NT(short_sum_l) RB at a time, x the same for every s and y the
// same for every row (a GEMM's dot form with a short n, B copied once):
// each vector of y is loaded once for the RB rows and each of x once for
// the S dots, a load per FMA or fewer where one row at a time took two
// ('ij,jk->ik' (200,1024) x (1024,3) f32 from L2: 0.42 cycles an element
// of A a row at a time, 0.27 four at a time).  A row's accumulators and
// sums are those of the one-row loop, so its result has the same bits in
// any block.
#define NS_VREGS (sizeof(NT(vec)) == 64 ? 32 : 16)   // vector registers of the ISA
// dots summed in two accumulators each (FMA latency), up to this many: S = 4
// in one each runs four rows at a time, not two ('ij,jk->ik' (200,1000) x
// (1000,4) f32: 38 us two rows of two accumulators at a time, numpy 20)
#define NS_PAIRED 3
static inline __attribute__((always_inline)) NT_TGT void
NT(short_sum_l_block)(const int S, const int RB, const T *x, ep_inc_t xro, const T *y,
                      ep_inc_t ys, ep_dim_t n, T *o, ep_inc_t oo, ep_inc_t os, int first)
{
    NT(vec) a[4][EP_NEST_SHORT], b[4][EP_NEST_SHORT], w0[EP_NEST_SHORT], w1[EP_NEST_SHORT];
#pragma GCC unroll 4
    for (int i = 0; i < RB; i++)
#pragma GCC unroll 8
        for (int s = 0; s < S; s++) { a[i][s] = (NT(vec)){0}; b[i][s] = (NT(vec)){0}; }
    ep_dim_t l = 0;
    if (S <= NS_PAIRED) {
        for (; l + 2 * VL <= n; l += 2 * VL) {
#pragma GCC unroll 8
            for (int s = 0; s < S; s++) {
                w0[s] = NT_LD(y + s * ys + l);
                w1[s] = NT_LD(y + s * ys + l + VL);
            }
#pragma GCC unroll 4
            for (int i = 0; i < RB; i++) {
                NT(vec) u0 = NT_LD(x + i * xro + l), u1 = NT_LD(x + i * xro + l + VL);
#pragma GCC unroll 8
                for (int s = 0; s < S; s++) {
                    a[i][s] += u0 * w0[s];
                    b[i][s] += u1 * w1[s];
                }
            }
        }
    }
    for (; l + VL <= n; l += VL) {
#pragma GCC unroll 8
        for (int s = 0; s < S; s++) w0[s] = NT_LD(y + s * ys + l);
#pragma GCC unroll 4
        for (int i = 0; i < RB; i++) {
            NT(vec) u0 = NT_LD(x + i * xro + l);
#pragma GCC unroll 8
            for (int s = 0; s < S; s++) a[i][s] += u0 * w0[s];
        }
    }
    for (int i = 0; i < RB; i++)
        for (int s = 0; s < S; s++) {
            T t = 0;
            for (ep_dim_t q = l; q < n; q++) t += x[i * xro + q] * y[s * ys + q];
            T v = NT(hsum_tree)(a[i][s] + b[i][s]) + t;
            T *d = o + i * oo + s * os;
            *d = first ? v : *d + v;
        }
}

// R rows of S dots: o[r*oo + s*os] (+)= sum_l x[r*xro + s*xs + l] *
// y[r*yro + s*ys + l]; xshared (xs == 0): x is the same for every s (a
// GEMM's dot form with a short n), loaded once per vector
static inline __attribute__((always_inline)) NT_TGT void
NT(short_sum_l)(const int S, const int xshared, ep_dim_t R, const T *x, ep_inc_t xro,
                ep_inc_t xs, const T *y, ep_inc_t yro, ep_inc_t ys, ep_dim_t n, T *o,
                ep_inc_t oo, ep_inc_t os, int first)
{
    ep_dim_t r0 = 0;
    if (xshared && yro == 0 && oo != 0) {
        // rows per block: their accumulators, S vectors of y (two of each
        // where two vectors run per step) and the row's own in registers
        const int U = S <= NS_PAIRED ? 2 : 1;
        const int fit = ((int)NS_VREGS - U * S - U) / (U * S);
        const int RB = fit > 4 ? 4 : fit;
        if (RB >= 2)
            for (; r0 + RB <= R; r0 += RB)
                NT(short_sum_l_block)(S, RB, x + r0 * xro, xro, y, ys, n, o + r0 * oo, oo, os,
                                      first);
        x += r0 * xro;
        o += r0 * oo;
    }
    for (ep_dim_t r = r0; r < R; r++, x += xro, y += yro, o += oo) {
        NT(vec) a[EP_NEST_SHORT], b[EP_NEST_SHORT];
        for (int s = 0; s < S; s++) { a[s] = (NT(vec)){0}; b[s] = (NT(vec)){0}; }
        ep_dim_t l = 0;
        // two accumulators per s while they fit in registers (FMA latency)
        if (S <= NS_PAIRED) {
            for (; l + 2 * VL <= n; l += 2 * VL) {
                NT(vec) u0 = NT_LD(x + l), u1 = NT_LD(x + l + VL);
                for (int s = 0; s < S; s++) {
                    NT(vec) v0 = xshared ? u0 : NT_LD(x + s * xs + l);
                    NT(vec) v1 = xshared ? u1 : NT_LD(x + s * xs + l + VL);
                    a[s] += v0 * NT_LD(y + s * ys + l);
                    b[s] += v1 * NT_LD(y + s * ys + l + VL);
                }
            }
        }
        for (; l + VL <= n; l += VL) {
            NT(vec) u0 = NT_LD(x + l);
            for (int s = 0; s < S; s++)
                a[s] += (xshared ? u0 : NT_LD(x + s * xs + l)) * NT_LD(y + s * ys + l);
        }
        int fr = first && (r == 0 || oo != 0);
        for (int s = 0; s < S; s++) {
            T t = 0;
            for (ep_dim_t i = l; i < n; i++) t += x[s * xs + i] * y[s * ys + i];
            T v = NT(hsum_tree)(a[s] + b[s]) + t;
            T *d = o + s * os;
            *d = fr ? v : *d + v;
        }
    }
}

// one function per S (the short loop unrolled into registers), called
// through a table: each stays a small function to optimise
#define NS_ONE(K) \
    static NS_TGT void NT(sum_s_##K)(ep_dim_t R, const T *x, ep_inc_t xro, ep_inc_t xs, \
                                     const T *f, ep_inc_t fro, ep_inc_t fs, ep_dim_t n, \
                                     T *o, ep_inc_t oo, ep_inc_t ol, int first) \
    { NT(short_sum_s)(K, R, x, xro, xs, f, fro, fs, n, o, oo, ol, first); } \
    static NS_TGT void NT(dots_##K)(ep_dim_t R, const T *x, ep_inc_t xro, ep_inc_t xs, \
                                    const T *y, ep_inc_t yro, ep_inc_t ys, ep_dim_t n, \
                                    T *o, ep_inc_t oo, ep_inc_t os, int first) \
    { if (xs == 0) NT(short_sum_l)(K, 1, R, x, xro, 0, y, yro, ys, n, o, oo, os, first); \
      else NT(short_sum_l)(K, 0, R, x, xro, xs, y, yro, ys, n, o, oo, os, first); }
NS_ONE(1) NS_ONE(2) NS_ONE(3) NS_ONE(4) NS_ONE(5) NS_ONE(6) NS_ONE(7) NS_ONE(8)
#undef NS_ONE
typedef void (*NT(sum_s_t))(ep_dim_t, const T *, ep_inc_t, ep_inc_t, const T *, ep_inc_t,
                            ep_inc_t, ep_dim_t, T *, ep_inc_t, ep_inc_t, int);
typedef void (*NT(dots_t))(ep_dim_t, const T *, ep_inc_t, ep_inc_t, const T *, ep_inc_t,
                           ep_inc_t, ep_dim_t, T *, ep_inc_t, ep_inc_t, int);
static const NT(sum_s_t) NT(sum_s_fn)[EP_NEST_SHORT] = {
    NT(sum_s_1), NT(sum_s_2), NT(sum_s_3), NT(sum_s_4),
    NT(sum_s_5), NT(sum_s_6), NT(sum_s_7), NT(sum_s_8)};
static const NT(dots_t) NT(dots_fn)[EP_NEST_SHORT] = {
    NT(dots_1), NT(dots_2), NT(dots_3), NT(dots_4),
    NT(dots_5), NT(dots_6), NT(dots_7), NT(dots_8)};
#endif

#if CPX
// The longest complex row, in vectors of its 2 n reals, that runs as a real
// one below: the expanded x (EP_NEST_SHORT rows of it) is a stack buffer
// ('ij,jk->ik' (20000,3) x (3,4) c128: 316 us in the complex loop, element
// pairs at a time with a per-row set-up; 36 as real)
#define NS_CREAL_VECTORS 8

// R rows of the sum over a short S for interleaved complex: as the real
// NT(short_sum_s) (strides in complex elements), c * x as
// cr * x + (-ci, ci) * swap(x) -- the lanes of one vector hold VL / 2
// complex elements.  Without f the elements are summed as they are.
NT_FN void NT(csum_s)(int S, ep_dim_t R, const T *x, ep_inc_t xro, ep_inc_t xs, const T *f,
                      ep_inc_t fro, ep_inc_t fs, ep_dim_t n, T *o, ep_inc_t oo, ep_inc_t ol,
                      int first)
{
    const ep_dim_t H = VL / 2;          // complex elements per vector
#ifdef NT_REAL
    if (f && xro == 0 && fs == 1 && ol == 1 && 2 * n <= NS_CREAL_VECTORS * VL && R > 1) {
        // rows of up to NS_CREAL_VECTORS vectors against an x shared by
        // every row, each row's factors side by side and its output contiguous: the real
        // kernel's sum over 2 S (at most EP_NEST_SHORT, so S in chunks)
        // with x as the 2 S x 2 n real matrix of blocks [[xr, xi], [-xi,
        // xr]] -- the factors' (re, im) pairs are its rows' weights and the
        // output's pairs its columns -- so the rows run across in vectors
        // as real ones do ('iab,bc->aic' (1205,1636,4) x (4,3) c64: 80 ms
        // a row at a time, element by element; numpy 22)
        enum { SC = EP_NEST_SHORT / 2 };
        T xe[EP_NEST_SHORT * NS_CREAL_VECTORS * VL];
        const ep_dim_t w = 2 * n;
        for (int s0 = 0; s0 < S; s0 += SC) {
            const int sc = S - s0 < SC ? S - s0 : SC;
            for (int s = 0; s < sc; s++)
                for (ep_dim_t l = 0; l < n; l++) {
                    const T re = x[2 * ((s0 + s) * xs + l)], im = x[2 * ((s0 + s) * xs + l) + 1];
                    xe[2 * s * w + 2 * l] = re;
                    xe[2 * s * w + 2 * l + 1] = im;
                    xe[(2 * s + 1) * w + 2 * l] = -im;
                    xe[(2 * s + 1) * w + 2 * l + 1] = re;
                }
            NT_REAL(sum_s_fn)[2 * sc - 1](R, xe, 0, w, f + 2 * s0, 2 * fro, 1, w, o, 2 * oo, 1,
                                          first && s0 == 0);
        }
        return;
    }
#endif
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) alt = {0};
    for (int v = 0; v < VL; v++) alt[v] = v & 1 ? 1 : -1;
    for (ep_dim_t r = 0; r < R; r++, x += 2 * xro, o += 2 * oo) {
        T c[2 * EP_NEST_SHORT];
        NT(vec) cr[EP_NEST_SHORT], ci[EP_NEST_SHORT];
        for (int s = 0; s < S; s++) {
            c[2 * s] = f ? f[2 * (r * fro + s * fs)] : 1;
            c[2 * s + 1] = f ? f[2 * (r * fro + s * fs) + 1] : 0;
            cr[s] = c[2 * s] - (NT(vec)){0};
            ci[s] = c[2 * s + 1] * alt;
        }
        int fr = first && (r == 0 || oo != 0);
        ep_dim_t l = 0;
        if (ol == 1) {
            for (; l + H <= n; l += H) {
                NT(vec) a = {0};
                for (int s = 0; s < S; s++) {
                    NT(vec) u = NT_LD(x + 2 * (s * xs + l));
                    a += f ? cr[s] * u + ci[s] * __builtin_shuffle(u, sw) : u;
                }
                if (!fr) a += NT_LD(o + 2 * l);
                NT_ST(o + 2 * l, a);
            }
        }
        for (; l < n; l++) {
            T ar = 0, ai = 0;
            for (int s = 0; s < S; s++) {
                const T *q = x + 2 * (s * xs + l);
                if (f) {
                    ar += c[2 * s] * q[0] - c[2 * s + 1] * q[1];
                    ai += c[2 * s] * q[1] + c[2 * s + 1] * q[0];
                } else {
                    ar += q[0]; ai += q[1];
                }
            }
            T *d = o + 2 * l * ol;
            d[0] = fr ? ar : d[0] + ar;
            d[1] = fr ? ai : d[1] + ai;
        }
    }
}
#endif

#if !CPX
// The dot form's S dots when one input x moves along O (rows xro > 0 apart,
// contiguous along L, the same for every s) and the other is S vectors y
// shared by every row ('ij,kj->ik' with k short): each vector against a
// block of rows at a time, VL rows reduced together into one vector
// (rows_dotv), the block re-read from L1 by the next vector.  One row's S
// dots with a horizontal sum each ran 15 ns a row ('ij,kj->ik' (40000,15) x
// (3,15) f64: 0.5x numpy, now 1.15x).  Rows of up to five vectors: longer
// ones share each load of a row among the S dots better than they share
// the sums ((180000,100) x (8,100) f64: 349 us that way, 487 this).
// Returns the rows done (a multiple of VL).
#define NS_DOTV_VECTORS 5     // the longest row it takes, in vectors (nest.py prices it)
static NT_TGT ep_dim_t NT(short_dotv)(int S, const T *x, ep_inc_t xro, const T *y,
                                      ep_inc_t ys, ep_dim_t n, ep_dim_t R, T *o, ep_inc_t oo,
                                      ep_inc_t os, int first)
{
    // a block's S x VL sums go to a buffer as vectors, then to the output
    // element by element: rows_dotv's own strided store pulls each lane out
    // of its vector, half of the time where the output is (i, k) C order
    enum { MAXB = 256 };
    T buf[EP_NEST_SHORT * MAXB];
    ep_dim_t blk = (ep_dim_t)(8192 / sizeof(T)) / (n > (ep_dim_t)VL ? n : (ep_dim_t)VL);
    blk = blk > MAXB ? MAXB : blk < VL ? VL : blk / VL * VL;
    ep_dim_t r = 0;
    for (; r + VL <= R; r += blk) {
        if (R - r < blk) blk = (R - r) / VL * VL;
        for (int s = 0; s < S; s++)
            NT(rows_dotv)(x + r * xro, xro, y + s * ys, n, blk, buf + s * blk, 1, 1, 0, NULL,
                          NULL, 0);
        T *d = o + r * oo;
        for (ep_dim_t q = 0; q < blk; q++, d += oo)
            for (int s = 0; s < S; s++)
                d[s * os] = first ? buf[s * blk + q] : d[s * os] + buf[s * blk + q];
    }
    return r;
}
#endif

// a moving input as a contiguous [s][l] block (rows of n elements, S of them
// when it varies along S, else one)
static inline NT_TGT void NT(short_gather)(const T *src, ep_inc_t rs, ep_inc_t rl, int S,
                                          ep_dim_t n, T *dst)
{
    int rows = rs != 0 ? S : 1;
#ifdef NT_TRANSPOSE
    // the S elements of each l side by side (rs = 1): an (n x S) block
    // transposed in vector tiles, read in memory order ('li,lm->im' with lm
    // F-ordered: 4 cycles an element one by one)
    if (rs == 1 && 2 * S >= VL && n >= VL) {
        NT_TRANSPOSE(src, rl, n, S, dst, n);
        return;
    }
#endif
    if (rs == 1 && S > 1) {
        // fewer than half a vector side by side: each vector tile would
        // move S useful columns of VL ('ij,jk->ik' (8,1000) x (1000,2) f32:
        // the transpose twice the dots' time), so element by element, read
        // in memory order
        for (ep_dim_t l = 0; l < n; l++)
            for (int s = 0; s < S; s++) {
#if CPX
                dst[2 * (s * n + l)] = src[2 * (s + l * rl)];
                dst[2 * (s * n + l) + 1] = src[2 * (s + l * rl) + 1];
#else
                dst[s * n + l] = src[s + l * rl];
#endif
            }
        return;
    }
    for (int s = 0; s < rows; s++)
        for (ep_dim_t l = 0; l < n; l++) {
#if CPX
            dst[2 * (s * n + l)] = src[2 * (s * rs + l * rl)];
            dst[2 * (s * n + l) + 1] = src[2 * (s * rs + l * rl) + 1];
#else
            dst[s * n + l] = src[s * rs + l * rl];
#endif
        }
}

// R rows of the S x n blocks (see the top of the file).  p[j] at the first
// row; ro/rs/rl: each input's strides along O, S, L; oo/os/ol: the output's.
// first: the first visit of the output (row r's output is new when r == 0 or
// the output moves along O).  buf: room for the copies this call asks of
// NT(short_buffer), or NULL (the generic path then runs where a copy is
// needed).
NT_FN void NT(short_rows)(int nin, const T *const *p, const ep_inc_t *ro, const ep_inc_t *rs,
                          const ep_inc_t *rl, ep_dim_t R, int S, ep_dim_t n, T *o,
                          ep_inc_t oo, ep_inc_t os, ep_inc_t ol, int first, T *buf)
{
    const int E = 1 + CPX;
    // inputs constant along L give per-(r, s) factors; the others (at most
    // two) feed the SIMD rows, through a contiguous copy where L is strided
    int nm = 0, mv[NS_MAXIN] = {0, 0}, nf = 0, fx = -1;
    for (int j = 0; j < nin; j++) {
        if (rl[j] == 0) { fx = j; nf++; }
        else if (nm < NS_MAXIN) mv[nm++] = j;
        else nm = NS_MAXIN + 1;
    }
    // the SIMD paths: a GEMM's sum over a short k (one moving input, at
    // most one factor) and, real only, its dot form (two moving inputs, no
    // factor)
    int simd = buf != NULL && ((os == 0 && nm == 1 && nf <= 1) ||
                               (!CPX && ol == 0 && nm == 2 && nf == 0));
    // a long row in chunks, so that the S rows of a chunk (the copies, the
    // vectors every row meets) stay in L1 while the rows stream past them:
    // the rows' output elements of a chunk are their own (sum over S), or
    // the chunks' dots add up (sum over L).  Half of L1: 'ij,jk->ik'
    // (200,1000) x (1000,8) f64, B's 64 KB copy in one chunk, 159 us; in
    // chunks of 8 / 16 / 24 / 32 KB, 140 / 131 / 126 / 121 us (L1 48 KB)
    // (rows of up to two vectors are one chunk: no division for them)
    ep_dim_t chunk = 2 * VL;
    if (simd && n > chunk) {
        ep_dim_t l1, l2, l3;            // read once per process (ep_cpu.c)
        ep_cache_sizes(&l1, &l2, &l3);
        chunk = (l1 > 0 ? l1 / 2 : NS_CHUNK_BYTES) / ((ep_dim_t)S * E * (ep_dim_t)sizeof(T));
        chunk = chunk > NS_CHUNK ? NS_CHUNK : chunk < 2 * VL ? 2 * VL : chunk / (2 * VL) * (2 * VL);
    }
    if (simd && n > chunk) {
        for (ep_dim_t l0 = 0; l0 < n; l0 += chunk) {
            const T *q[EP_NEST_MAXIN];
            for (int j = 0; j < nin; j++) q[j] = p[j] + E * l0 * rl[j];
            NT(short_rows)(nin, q, ro, rs, rl, R, S, n - l0 < chunk ? n - l0 : chunk,
                           o + E * l0 * ol, oo, os, ol, first && (ol != 0 || l0 == 0), buf);
        }
        return;
    }
    if (simd) {
        // copies: once for an input constant along O, else per row
        const T *src[NS_MAXIN];
        ep_inc_t sro[NS_MAXIN], ss[NS_MAXIN];
        T *per[NS_MAXIN] = {0, 0};
        T *next = buf;
        for (int k = 0; k < nm; k++) {
            int j = mv[k];
            src[k] = p[j]; sro[k] = ro[j]; ss[k] = rs[j];
            if (rl[j] == 1) continue;
            ep_dim_t len = (rs[j] != 0 ? S : 1) * n;
            if (ro[j] == 0 || R == 1) {
                NT(short_gather)(p[j], rs[j], rl[j], S, n, next);
                src[k] = next; sro[k] = 0;
            } else {
                per[k] = next;
            }
            ss[k] = rs[j] != 0 ? n : 0;
            next += E * len;
        }
        const T *f = nf ? p[fx] : NULL;
        ep_inc_t fro = nf ? ro[fx] : 0, fs = nf ? rs[fx] : 0;
        int x = 0, y = nm > 1 ? 1 : 0;
        if (nm == 2 && ss[0] != 0 && ss[1] == 0) { x = 1; y = 0; }   // x: the shared one
        ep_dim_t r0 = 0;
#if !CPX
        if (os != 0 && nm == 2 && !per[x] && ss[x] == 0 && sro[x] > 0 && sro[y] == 0 &&
            oo != 0 && R >= VL && n >= 2 && n <= NS_DOTV_VECTORS * VL)
            r0 = NT(short_dotv)(S, src[x], sro[x], src[y], ss[y], n, R, o, oo, os, first);
#endif
        for (ep_dim_t r = r0; r < R; r++) {
            // all rows in one call when nothing is copied per row
            ep_dim_t rows = per[0] || per[1] ? 1 : R - r;
            const T *q[NS_MAXIN];
            for (int k = 0; k < nm; k++) {
                q[k] = src[k] + E * r * sro[k];
                if (per[k]) {
                    NT(short_gather)(p[mv[k]] + E * r * ro[mv[k]], rs[mv[k]], rl[mv[k]], S, n,
                                     per[k]);
                    q[k] = per[k];
                }
            }
            int fr = first && (r == 0 || oo != 0);
            const T *fr_f = f ? f + E * r * fro : NULL;
#if CPX
            (void)y;
            NT(csum_s)(S, rows, q[x], sro[x], ss[x], fr_f, fro, fs, n, o + E * r * oo, oo, ol,
                       fr);
#else
            if (os == 0)
                NT(sum_s_fn)[S - 1](rows, q[x], sro[x], ss[x], fr_f, fro, fs, n, o + r * oo, oo,
                                    ol, fr);
            else
                NT(dots_fn)[S - 1](rows, q[x], sro[x], ss[x], q[y], sro[y], ss[y], n,
                                   o + r * oo, oo, os, fr);
#endif
            r += rows - 1;
        }
        return;
    }
    for (ep_dim_t r = 0; r < R; r++) {
        const T *q[EP_NEST_MAXIN];
        for (int j = 0; j < nin; j++) q[j] = p[j] + E * r * ro[j];
        NT(short_row_any)(nin, q, rs, rl, S, n, o + E * r * oo, os, ol,
                          first && (r == 0 || oo != 0));
    }
}

// elements of T the SIMD path of NT(short_rows) copies moving inputs into
NT_FN ep_dim_t NT(short_buffer)(int nin, const ep_inc_t *rs, const ep_inc_t *rl, int S,
                                ep_dim_t n)
{
    ep_dim_t e = 0;
    if (n > NS_CHUNK) n = NS_CHUNK;
    for (int j = 0; j < nin; j++)
        if (rl[j] != 0 && rl[j] != 1) e += (rs[j] != 0 ? S : 1) * n;
    return (1 + CPX) * e;
}

#undef NS_MAXIN
#undef NS_DOTV_VECTORS
#undef NS_REGS
#undef NS_ILV_LO
#undef NS_ILV_HI
#undef NS_TGT
#undef NS_CHUNK
#undef NS_CHUNK_BYTES
#undef NS_VREGS
#undef NS_PAIRED
