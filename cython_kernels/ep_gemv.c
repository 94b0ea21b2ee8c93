// ep_gemv.c -- the GEMV path (m == 1 or n == 1, or A's rows against a few
// columns of B), where every element of the matrix is used once and
// packing would only add traffic.
#include "ep_gemv.h"
#include "ep_omp.h"
#include "ep_pack.h"

#define T float
#define EP_PFX(x) ep_s##x
#define DOT4 sdot4
#define DOT1 sdot1
#define AXPY saxpy
#include "ep_gemv_template.h"
#undef T
#undef EP_PFX
#undef DOT4
#undef DOT1
#undef AXPY

#define T double
#define EP_PFX(x) ep_d##x
#define DOT4 ddot4
#define DOT1 ddot1
#define AXPY daxpy
#include "ep_gemv_template.h"
#undef T
#undef EP_PFX
#undef DOT4
#undef DOT1
#undef AXPY

// C[m, n] for m == 1 or n == 1 at batch offsets (oa, ob, oc), output
// indices [j_begin, j_end) of the non-unit group.
static void ep_gemv_at(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       int n_is_one, ep_inc_t oa, ep_inc_t ob, ep_inc_t oc,
                       ep_dim_t j_begin, ep_dim_t j_end)
{
    // n == 1: y(m) = A(m, k) x(k), x = B; m == 1: y(n) = B(k, n)^T x(k), x = A
    const ep_group_t *jg = n_is_one ? &d->g->m : &d->g->n;
    int jop_mat = n_is_one ? EP_M_A : EP_N_B;
    int jop_c = n_is_one ? EP_M_C : EP_N_C;
    int kop_mat = n_is_one ? EP_K_A : EP_K_B;
    int kop_x = n_is_one ? EP_K_B : EP_K_A;
    if (d->dtype == EP_FLOAT32) {
        const float *a = (const float *)d->a + oa, *b = (const float *)d->b + ob;
        ep_sgemv(u, jg, jop_mat, jop_c, &d->g->k, kop_mat, kop_x,
                 n_is_one ? a : b, n_is_one ? b : a, (float *)d->c + oc,
                 j_begin, j_end, (float)d->alpha, (float)d->beta);
    } else {
        const double *a = (const double *)d->a + oa, *b = (const double *)d->b + ob;
        ep_dgemv(u, jg, jop_mat, jop_c, &d->g->k, kop_mat, kop_x,
                 n_is_one ? a : b, n_is_one ? b : a, (double *)d->c + oc,
                 j_begin, j_end, d->alpha, d->beta);
    }
}

// A's rows [j_begin, j_end) against B's few columns at batch offsets
static void ep_gemv_cols_at(const ep_gemm_desc_t *d, const ep_ukr_set_t *u, ep_dim_t N,
                            ep_inc_t oa, ep_inc_t ob, ep_inc_t oc, ep_dim_t j_begin,
                            ep_dim_t j_end)
{
    if (d->dtype == EP_FLOAT32)
        ep_sgemv_cols(u, d->g, (const float *)d->a + oa, (const float *)d->b + ob,
                      (float *)d->c + oc, N, j_begin, j_end, (float)d->alpha, (float)d->beta,
                      d->cplx);
    else
        ep_dgemv_cols(u, d->g, (const double *)d->a + oa, (const double *)d->b + ob,
                      (double *)d->c + oc, N, j_begin, j_end, d->alpha, d->beta, d->cplx);
}

static void ep_gemv_range(const ep_gemm_desc_t *d, const ep_ukr_set_t *u, ep_dim_t M,
                          ep_dim_t N, ep_inc_t oa, ep_inc_t ob, ep_inc_t oc, ep_dim_t j0,
                          ep_dim_t j1)
{
    if (d->cplx || (N > 1 && M > 1))
        ep_gemv_cols_at(d, u, N, oa, ob, oc, j0, j1);
    else
        ep_gemv_at(d, u, N == 1, oa, ob, oc, j0, j1);
}

// gemv_cols over all of m with k shared out (EP_LOOP_K), batch by batch
static void ep_gemv_cols_by_k(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                              const ep_schedule_t *s)
{
    // each thread's sums, on its stack, for the first to add
    void *part[EP_MAX_THREADS];
    ep_team_map_t *team = ep_team_prepare(s->nthreads);
#ifdef _OPENMP
#pragma omp parallel num_threads(s->nthreads)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        for (ep_dim_t bi = 0; bi < s->NB; bi++) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            if (d->dtype == EP_FLOAT32)
                ep_sgemv_cols_by_k(u, d->g, (const float *)d->a + oa,
                                   (const float *)d->b + ob, (float *)d->c + oc, s->M, s->N,
                                   (float)d->alpha, (float)d->beta, d->cplx, tid, ntr,
                                   (float (**)[4])part);
            else
                ep_dgemv_cols_by_k(u, d->g, (const double *)d->a + oa,
                                   (const double *)d->b + ob, (double *)d->c + oc, s->M, s->N,
                                   d->alpha, d->beta, d->cplx, tid, ntr, (double (**)[4])part);
        }
    }
}

void ep_gemv_run(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                 const ep_schedule_t *s)
{
    ep_dim_t M = s->M, N = s->N, NB = s->NB;
    int nt = s->nthreads, by_batch = s->loop == EP_LOOP_BATCH;
    if (nt > 1 && s->loop == EP_LOOP_K) {
        ep_gemv_cols_by_k(d, u, s);
        return;
    }
    // the output's rows: m unless m == 1 on the real GEMV (gemv_cols, which
    // takes the complex calls, runs A's rows)
    ep_dim_t J = d->cplx || N == 1 || M > 1 ? M : N;
    if (nt == 1) {
        for (ep_dim_t bi = 0; bi < NB; bi++) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_gemv_range(d, u, M, N, oa, ob, oc, 0, J);
        }
        return;
    }
    ep_team_map_t *team = ep_team_prepare(nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        for (ep_dim_t bi = by_batch ? tid : 0; bi < NB; bi += by_batch ? ntr : 1) {
            ep_inc_t oa, ob, oc;
            ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
            ep_dim_t j0 = 0, j1 = J;
            if (!by_batch) {                 // slices of whole JB blocks
                ep_dim_t nblk = (J + EP_GEMV_JB - 1) / EP_GEMV_JB;
                j0 = nblk * tid / ntr * EP_GEMV_JB;
                j1 = nblk * (tid + 1) / ntr * EP_GEMV_JB;
                if (j1 > J) j1 = J;
            }
            if (j0 < j1) ep_gemv_range(d, u, M, N, oa, ob, oc, j0, j1);
        }
    }
}
