// ep_gemv_template.h -- the GEMV path for one element type; included by
// ep_gemv.c once per dtype with T, EP_PFX(x) and the level-1 kernel
// fields DOT4 / DOT1 / AXPY of ep_ukr_set_t.

// y[j] = alpha * sum_p mat[j, p] * x[p] + beta * y[j] over role groups:
// jg is the output's group (n when m == 1, m when n == 1), kg the k group;
// op_* name which stride of each group belongs to which operand.
// Memory-bound, so the matrix is read exactly once, in place, and nothing
// is packed but a block of x (<= EP_GEMV_KB elements).
// offset along k of block element p in the matrix
#define EP_KOFF(p) (ks != EP_IRREGULAR ? km0 + (p) * ks : koff_m[p])

static void EP_PFX(gemv)(const ep_ukr_set_t *u, const ep_group_t *jg,
                         int jop_mat, int jop_c, const ep_group_t *kg,
                         int kop_mat, int kop_x, const T *mat, const T *x,
                         T *c, ep_dim_t j_begin, ep_dim_t j_end, T alpha,
                         T beta)
{
    ep_dim_t K = 1;
    for (int i = 0; i < kg->ndim; i++) K *= kg->extent[i];
    ep_inc_t joff_m[EP_GEMV_JB], joff_c[EP_GEMV_JB];
    ep_inc_t koff_m[EP_GEMV_KB], koff_x[EP_GEMV_KB];
    T acc[EP_GEMV_JB], xb[EP_GEMV_KB];

    for (ep_dim_t j0 = j_begin; j0 < j_end; j0 += EP_GEMV_JB) {
        ep_dim_t jb = j_end - j0 < EP_GEMV_JB ? j_end - j0 : EP_GEMV_JB;
        ep_scatter(jg, jop_mat, j0, jb, joff_m);
        ep_scatter(jg, jop_c, j0, jb, joff_c);
        ep_inc_t js = ep_regular_stride(joff_m, jb);
        for (ep_dim_t j = 0; j < jb; j++) acc[j] = 0;
        for (ep_dim_t p0 = 0; p0 < K; p0 += EP_GEMV_KB) {
            ep_dim_t kb = K - p0 < EP_GEMV_KB ? K - p0 : EP_GEMV_KB;
            // offsets along k: affine (one stride) in the common case of a
            // merged k axis, else a scatter vector
            ep_inc_t km0, ks, kx0, kxs;
            int aff = ep_affine(kg, kop_mat, p0, kb, &km0, &ks) &&
                      ep_affine(kg, kop_x, p0, kb, &kx0, &kxs);
            if (!aff) {
                ep_scatter(kg, kop_mat, p0, kb, koff_m);
                ep_scatter(kg, kop_x, p0, kb, koff_x);
                km0 = koff_m[0];
                ks = ep_regular_stride(koff_m, kb);
                kxs = ep_regular_stride(koff_x, kb);
                kx0 = koff_x[0];
            }
            // x in place when contiguous, else gathered into xb
            const T *xv = xb;
            if (kxs == 1)
                xv = x + kx0;
            else if (kxs != EP_IRREGULAR)
                for (ep_dim_t p = 0; p < kb; p++) xb[p] = x[kx0 + p * kxs];
            else
                for (ep_dim_t p = 0; p < kb; p++) xb[p] = x[koff_x[p]];
            if (ks == 1) {
                // rows of the matrix contiguous along k: dot products
                // ("bij,bj->bi"); long rows four at a time (they share the
                // loads of x), short rows one at a time: one stream through
                // memory.  Zen 4, f64, 1 thread, ms per call dot4 / dot1:
                // 3000x3000 4.2 / 4.9, 64x100000 3.4 / 4.4, 20000x1000
                // 11.5 / 7.4, 100000x64 8.8 / 3.2; f32 256 x (256x256) 9.3 / 3.0.
                const T *base = mat + km0;
                ep_dim_t j = 0;
                for (; kb >= EP_GEMV_DOT4_MIN_K && j + 4 <= jb; j += 4)
                    u->DOT4(kb, xv, base + joff_m[j], base + joff_m[j + 1],
                            base + joff_m[j + 2], base + joff_m[j + 3],
                            acc + j);
                for (; j < jb; j++)
                    acc[j] += u->DOT1(kb, xv, base + joff_m[j]);
            } else if (js == 1) {
                // the output's index contiguous in the matrix: axpy per k
                // ("ij,i->j" with C-ordered a)
                for (ep_dim_t p = 0; p < kb; p++)
                    u->AXPY(jb, xv[p], mat + EP_KOFF(p) + joff_m[0], acc);
            } else {
                for (ep_dim_t p = 0; p < kb; p++) {
                    const T *col = mat + EP_KOFF(p);
                    for (ep_dim_t j = 0; j < jb; j++)
                        acc[j] += col[joff_m[j]] * xv[p];
                }
            }
        }
        for (ep_dim_t j = 0; j < jb; j++) {
            T *e = c + joff_c[j];
            *e = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * *e;
        }
    }
}

// C[j, q] = alpha * sum_p A[j, p] B[p, q] + beta * C[j, q] for 2 <= N <=
// EP_GEMV_MAX_COLS columns, j in [j_begin, j_end) of the m group: a GEMM
// of a few columns whose A rows run along k at unit stride (the schedule's
// condition).  Each row of A is read once, in place, and dotted with B's N
// columns EP_GEMV_COLS_KB values of k at a time: read in place when they
// run at unit stride along k, else gathered into rows of xb (in L1).
// Packed, all of A would be copied into panels for one tile of N columns
// padded to NR.  The schedule sends here only a k group of one axis, at
// unit stride in A, so each block of a row is one run.
//
// A complex GEMM (cplx: the 1m groups of ep_api.h, N real columns of up to
// EP_GEMV_MAX_COLS / 2 complex ones, k of one complex axis contiguous in A)
// runs as the real one of A's rows as reals against B's columns gathered
// as real pairs of rows: C_re += a_re re - a_im im, C_im += a_re im + a_im
// re (the rows 1m packs B into, ep_pack_template.h).
//
// gemv_cols_sum adds the sums of rows [j0, j0 + jb) over k in [p_begin,
// p_end) into acc; gemv_cols_store writes them to C.
static void EP_PFX(gemv_cols_sum)(const ep_ukr_set_t *u, const ep_groups_t *g, const T *a,
                                  const T *b, ep_dim_t N, ep_dim_t j0, ep_dim_t jb,
                                  ep_dim_t p_begin, ep_dim_t p_end, int cplx, T (*acc)[4])
{
    // k and kmax in A's elements along the run: complex ones take two reals
    const int ce = cplx ? 2 : 1;
    const ep_dim_t kmax = EP_GEMV_COLS_KB / ce;
    ep_inc_t sa = g->k.stride[EP_K_A][0], sb = g->k.stride[EP_K_B][0];
    ep_inc_t noff_b[EP_GEMV_MAX_COLS], joff_a[EP_GEMV_JB];
    ep_scatter(&g->n, EP_N_B, 0, N, noff_b);
    ep_scatter(&g->m, EP_M_A, j0, jb, joff_a);
    // the signs of the gathered parts (the rows of pack_b_1m)
    const T sga = (cplx & EP_CPLX_CONJ_A) ? (T)-1 : (T)1;
    const T sgb = (cplx & EP_CPLX_CONJ_B) ? (T)-1 : (T)1;
    const T im_re = -sga * sgb, re_im = sgb;
    // rows of B between a gathered one and the one prefetched (~1 KiB on)
    ep_inc_t row_bytes = (sb < 0 ? -sb : sb) * (ep_inc_t)sizeof(T);
    ep_dim_t ahead = row_bytes >= 128 ? 8 : 1024 / (row_bytes ? row_bytes : 1);
    T xb[4][EP_GEMV_COLS_KB];
    const T *x[4];
    for (ep_dim_t p0 = p_begin; p0 < p_end; p0 += kmax) {
        ep_dim_t kb = p_end - p0 < kmax ? p_end - p0 : kmax;
        const T *bk = b + p0 * sb;
        // B's rows along k, in order, the one `ahead` on asked for: the
        // gather's loads are the first touch of B (from memory)
        const T *pf = bk + ahead * sb + noff_b[0];
        if (cplx) {
            for (ep_dim_t p = 0; p < kb; p++) {
                if (p + ahead < p_end - p0) __builtin_prefetch(pf + p * sb, 0, 0);
                for (ep_dim_t q = 0; q < N; q += 2) {
                    const T *e = bk + p * sb + noff_b[q];
                    T re = e[0], im = e[1];
                    xb[q][2 * p] = re;
                    xb[q][2 * p + 1] = im_re * im;
                    xb[q + 1][2 * p] = re_im * im;
                    xb[q + 1][2 * p + 1] = sga * re;
                }
            }
            for (ep_dim_t q = 0; q < N; q++) x[q] = xb[q];
        } else if (sb == 1) {
            for (ep_dim_t q = 0; q < N; q++) x[q] = bk + noff_b[q];
        } else {
            for (ep_dim_t p = 0; p < kb; p++) {
                if (p + ahead < p_end - p0) __builtin_prefetch(pf + p * sb, 0, 0);
                for (ep_dim_t q = 0; q < N; q++) xb[q][p] = bk[p * sb + noff_b[q]];
            }
            for (ep_dim_t q = 0; q < N; q++) x[q] = xb[q];
        }
        // the columns past N repeat the first: their sums are dropped
        for (ep_dim_t q = N; q < 4; q++) x[q] = x[0];
        const T *ak = a + p0 * sa;
        size_t run = (size_t)(kb * ce) * sizeof(T);
        ep_dim_t j = 0;
        // four rows of A against each column: no lane computes a dropped
        // sum, and the kernel prefetches A's rows, the stream from memory,
        // re-read from L1 / L2 for the next column (Zen 3, 1 thread, 11 x
        // 200000 x 2 f64, 1.3x as fast as one row against four columns;
        // 40 x 50000 x 3 1.5x; 24 x 199568 x 4 f32 1.2x).  The same sums
        // in the same order: each row's dot is the kernel's per-row sum.
        for (; j + 4 <= jb; j += 4) {
            const T *r0 = ak + joff_a[j], *r1 = ak + joff_a[j + 1];
            const T *r2 = ak + joff_a[j + 2], *r3 = ak + joff_a[j + 3];
            for (ep_dim_t q = 0; q < N; q++) {
                T s4[4] = {0, 0, 0, 0};
                u->DOT4(kb * ce, x[q], r0, r1, r2, r3, s4);
                for (int r = 0; r < 4; r++) acc[j + r][q] += s4[r];
            }
        }
        for (; j < jb; j++) {
            // the next row's run, a page or two from this one, asked for
            // now: the hardware's streams stop at each page
            if (j + 1 < jb) ep_prefetch_run(ak + joff_a[j + 1], run);
            u->DOT4(kb * ce, ak + joff_a[j], x[0], x[1], x[2], x[3], acc[j]);
        }
    }
}

// C's rows [j0, j0 + jb) from their sums
static void EP_PFX(gemv_cols_store)(const ep_groups_t *g, T *c, ep_dim_t N, ep_dim_t j0,
                                    ep_dim_t jb, T (*acc)[4], T alpha, T beta)
{
    ep_inc_t noff_c[EP_GEMV_MAX_COLS], joff_c[EP_GEMV_JB];
    ep_scatter(&g->n, EP_N_C, 0, N, noff_c);
    ep_scatter(&g->m, EP_M_C, j0, jb, joff_c);
    for (ep_dim_t j = 0; j < jb; j++)
        for (ep_dim_t q = 0; q < N; q++) {
            T *e = c + joff_c[j] + noff_c[q];
            *e = beta == 0 ? alpha * acc[j][q] : alpha * acc[j][q] + beta * *e;
        }
}

static void EP_PFX(gemv_cols)(const ep_ukr_set_t *u, const ep_groups_t *g, const T *a,
                              const T *b, T *c, ep_dim_t N, ep_dim_t j_begin, ep_dim_t j_end,
                              T alpha, T beta, int cplx)
{
    T acc[EP_GEMV_JB][4];
    for (ep_dim_t j0 = j_begin; j0 < j_end; j0 += EP_GEMV_JB) {
        ep_dim_t jb = j_end - j0 < EP_GEMV_JB ? j_end - j0 : EP_GEMV_JB;
        for (ep_dim_t j = 0; j < jb; j++)
            acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;
        EP_PFX(gemv_cols_sum)(u, g, a, b, N, j0, jb, 0, g->k.extent[0], cplx, acc);
        EP_PFX(gemv_cols_store)(g, c, N, j0, jb, acc, alpha, beta);
    }
}

// The same for all of m (at most EP_GEMV_JB rows) with k shared out: each
// thread sums whole blocks of k of its share into its own sums, which the
// first thread adds in thread order (equal bits for equal thread counts).
// For the GEMMs of a few rows and a long k, where rows are too few to
// share (two threads read from memory faster than one).
static void EP_PFX(gemv_cols_by_k)(const ep_ukr_set_t *u, const ep_groups_t *g, const T *a,
                                   const T *b, T *c, ep_dim_t M, ep_dim_t N, T alpha, T beta,
                                   int cplx, int tid, int ntr, T (**part)[4])
{
    T acc[EP_GEMV_JB][4];
    const ep_dim_t K = g->k.extent[0], kmax = EP_GEMV_COLS_KB / (cplx ? 2 : 1);
    const ep_dim_t nblk = (K + kmax - 1) / kmax;
    ep_dim_t p0 = nblk * tid / ntr * kmax, p1 = nblk * (tid + 1) / ntr * kmax;
    if (p1 > K) p1 = K;
    for (ep_dim_t j = 0; j < M; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;
    if (p0 < p1) EP_PFX(gemv_cols_sum)(u, g, a, b, N, 0, M, p0, p1, cplx, acc);
    part[tid] = acc;
#ifdef _OPENMP
#pragma omp barrier
#endif
    if (tid == 0) {
        for (int t = 1; t < ntr; t++)
            for (ep_dim_t j = 0; j < M; j++)
                for (int q = 0; q < 4; q++) acc[j][q] += part[t][j][q];
        EP_PFX(gemv_cols_store)(g, c, N, 0, M, acc, alpha, beta);
    }
    // the other threads' sums live on their stacks until the first has read them
#ifdef _OPENMP
#pragma omp barrier
#endif
}

#undef EP_KOFF
