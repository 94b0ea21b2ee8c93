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
// columns, gathered EP_GEMV_COLS_KB values of k at a time into rows of xb
// (in L1): packed, all of A would be copied into panels for one tile of N
// columns padded to NR.  The schedule sends here only a k group of one
// axis at unit stride in A, so each block of a row is one run.
static void EP_PFX(gemv_cols)(const ep_ukr_set_t *u, const ep_groups_t *g, const T *a,
                              const T *b, T *c, ep_dim_t N, ep_dim_t j_begin, ep_dim_t j_end,
                              T alpha, T beta)
{
    ep_dim_t K = 1;
    for (int i = 0; i < g->k.ndim; i++) K *= g->k.extent[i];
    ep_inc_t noff_b[EP_GEMV_MAX_COLS], noff_c[EP_GEMV_MAX_COLS];
    ep_scatter(&g->n, EP_N_B, 0, N, noff_b);
    ep_scatter(&g->n, EP_N_C, 0, N, noff_c);
    ep_inc_t joff_a[EP_GEMV_JB], joff_c[EP_GEMV_JB], koff_b[EP_GEMV_COLS_KB];
    T acc[EP_GEMV_JB][4], xb[4][EP_GEMV_COLS_KB];
    // the columns past N repeat the first: their sums are dropped
    const T *x1 = xb[N > 1 ? 1 : 0], *x2 = xb[N > 2 ? 2 : 0], *x3 = xb[N > 3 ? 3 : 0];
    for (ep_dim_t j0 = j_begin; j0 < j_end; j0 += EP_GEMV_JB) {
        ep_dim_t jb = j_end - j0 < EP_GEMV_JB ? j_end - j0 : EP_GEMV_JB;
        ep_scatter(&g->m, EP_M_A, j0, jb, joff_a);
        ep_scatter(&g->m, EP_M_C, j0, jb, joff_c);
        for (ep_dim_t j = 0; j < jb; j++)
            acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;
        for (ep_dim_t p0 = 0; p0 < K; p0 += EP_GEMV_COLS_KB) {
            ep_dim_t kb = K - p0 < EP_GEMV_COLS_KB ? K - p0 : EP_GEMV_COLS_KB;
            ep_scatter(&g->k, EP_K_B, p0, kb, koff_b);
            for (ep_dim_t p = 0; p < kb; p++)
                for (ep_dim_t q = 0; q < N; q++) xb[q][p] = b[koff_b[p] + noff_b[q]];
            const T *ak = a + p0 * g->k.stride[EP_K_A][0];
            for (ep_dim_t j = 0; j < jb; j++) {
                // the next row's run, a page or two from this one, asked for
                // now: the hardware's streams stop at each page
                if (j + 1 < jb)
                    ep_prefetch_run(ak + joff_a[j + 1], (size_t)kb * sizeof(T));
                u->DOT4(kb, ak + joff_a[j], xb[0], x1, x2, x3, acc[j]);
            }
        }
        for (ep_dim_t j = 0; j < jb; j++)
            for (ep_dim_t q = 0; q < N; q++) {
                T *e = c + joff_c[j] + noff_c[q];
                *e = beta == 0 ? alpha * acc[j][q] : alpha * acc[j][q] + beta * *e;
            }
    }
}

#undef EP_KOFF
