// ep_smm.c -- the small in-place GEMM path: narrow GEMMs (n up to a few
// vectors) read A, B and C in place through the kernel set's smm kernel,
// with no packing (ep_schedule.c says when).
#include "ep_smm.h"
#include "ep_omp.h"
#include "ep_pack.h"
#include "ep_schedule.h"

// Rows i0 .. i1 of one batch index.
static void ep_smm_one(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                       const ep_schedule_t *s, ep_dim_t bi, ep_dim_t i0,
                       ep_dim_t i1, ep_inc_t rsa, ep_inc_t csa, ep_inc_t rsb,
                       ep_inc_t rsc)
{
    ep_inc_t oa, ob, oc;
    ep_batch_offsets(&d->g->batch, bi, &oa, &ob, &oc);
    oa += i0 * rsa;
    oc += i0 * rsc;
    if (d->dtype == EP_FLOAT32)
        u->ssmm((int)(i1 - i0), (int)s->N, s->K, (const float *)d->a + oa, rsa,
                csa, (const float *)d->b + ob, rsb, (float *)d->c + oc, rsc,
                (float)d->alpha, (float)d->beta);
    else
        u->dsmm((int)(i1 - i0), (int)s->N, s->K, (const double *)d->a + oa, rsa,
                csa, (const double *)d->b + ob, rsb, (double *)d->c + oc, rsc,
                d->alpha, d->beta);
}

void ep_smm_run(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                const ep_schedule_t *s)
{
    const ep_groups_t *g = d->g;
    int nt = s->nthreads;
    ep_dim_t NB = s->NB, M = s->M;
    ep_inc_t rsa = g->m.ndim ? g->m.stride[EP_M_A][0] : 0;
    ep_inc_t rsc = g->m.ndim ? g->m.stride[EP_M_C][0] : 0;
    ep_inc_t csa = g->k.ndim ? g->k.stride[EP_K_A][0] : 0;
    ep_inc_t rsb = g->k.ndim ? g->k.stride[EP_K_B][0] : 0;
    // no OpenMP call at all on one thread: even an if(0) region costs ~0.7 us
    if (nt == 1) {
        for (ep_dim_t bi = 0; bi < NB; bi++)
            ep_smm_one(d, u, s, bi, 0, M, rsa, csa, rsb, rsc);
        return;
    }
    if (s->loop == EP_LOOP_BATCH) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
        for (ep_dim_t bi = 0; bi < NB; bi++)
            ep_smm_one(d, u, s, bi, 0, M, rsa, csa, rsb, rsc);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {                                    // EP_LOOP_M: a range of rows each
        int tid, ntr;
        ep_team(&tid, &ntr);
        ep_dim_t q = EP_SMM_ROW_QUANTUM;
        ep_dim_t chunk = ((M + ntr - 1) / ntr + q - 1) / q * q;
        ep_dim_t i0 = chunk * tid, i1 = i0 + chunk < M ? i0 + chunk : M;
        for (ep_dim_t bi = 0; bi < NB && i0 < i1; bi++)
            ep_smm_one(d, u, s, bi, i0, i1, rsa, csa, rsb, rsc);
    }
}
