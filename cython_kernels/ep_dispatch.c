// ep_dispatch.c -- pick the micro-kernel set once, by the CPU's feature
// bits (ep_cpu.c).  EINPLAN_ISA=avx512|avx2|generic forces a lower set (a
// higher one than the CPU supports is refused), EINPLAN_VERBOSE=1 logs the
// choice on stderr.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_cpu.h"
#include "ukr/ep_ukr.h"

static int ep_best_isa = -1;     // what the machine supports
static int ep_cur_isa = -1;      // what runs

static const ep_ukr_set_t *ep_sets[EP_ISA_COUNT] = {
    &ep_ukr_set_generic,
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(EP_NO_AVX512)
    &ep_ukr_set_avx2, &ep_ukr_set_avx512,
#elif defined(__x86_64__) || defined(_M_X64)
    &ep_ukr_set_avx2, NULL,     // a build without the AVX-512 set (setup.py)
#else
    NULL, NULL,
#endif
};

static void ep_dispatch_init(void)
{
    if (ep_cur_isa >= 0) return;
    ep_best_isa = ep_cpu_best_isa();
    while (ep_best_isa > 0 && !ep_sets[ep_best_isa]) ep_best_isa--;
    ep_cur_isa = ep_best_isa;
    const char *force = getenv("EINPLAN_ISA");
    if (force && *force) {
        for (int i = 0; i < EP_ISA_COUNT; i++)
            if (ep_sets[i] && strcmp(force, ep_sets[i]->name) == 0 &&
                i <= ep_best_isa)
                ep_cur_isa = i;
    }
    const char *verbose = getenv("EINPLAN_VERBOSE");
    if (verbose && *verbose && strcmp(verbose, "0") != 0)
        fprintf(stderr, "einplan: CPU supports %s, using %s%s\n",
                ep_sets[ep_best_isa]->name, ep_sets[ep_cur_isa]->name,
                force && *force ? " (EINPLAN_ISA)" : "");
}

const ep_ukr_set_t *ep_ukr_set(void)
{
    ep_dispatch_init();
    return ep_sets[ep_cur_isa];
}

int ep_isa(void) { ep_dispatch_init(); return ep_cur_isa; }

int ep_isa_supported(int isa)
{
    ep_dispatch_init();
    return isa >= 0 && isa < EP_ISA_COUNT && ep_sets[isa] && isa <= ep_best_isa;
}

int ep_set_isa(int isa)
{
    if (!ep_isa_supported(isa)) return -1;
    ep_cur_isa = isa;
    return 0;
}

const char *ep_isa_name(int isa)
{
    return isa >= 0 && isa < EP_ISA_COUNT && ep_sets[isa] ? ep_sets[isa]->name
                                                          : "unknown";
}

int ep_isa_tile(int isa, ep_dtype_t dtype, int *mr, int *nr)
{
    if (isa < 0 || isa >= EP_ISA_COUNT || !ep_sets[isa]) return -1;
    *mr = dtype == EP_FLOAT32 ? ep_sets[isa]->s_mr : ep_sets[isa]->d_mr;
    *nr = dtype == EP_FLOAT32 ? ep_sets[isa]->s_nr : ep_sets[isa]->d_nr;
    return 0;
}

int ep_run_ukr(int isa, ep_dtype_t dtype, int m, int n, ep_dim_t k,
               const void *a, const void *b, void *c, ep_inc_t rs_c,
               ep_inc_t cs_c, double alpha, double beta)
{
    if (!ep_isa_supported(isa)) return -1;
    const ep_ukr_set_t *s = ep_sets[isa];
    if (dtype == EP_FLOAT32)
        s->sgemm(m, n, k, a, b, s->s_nr, c, rs_c, cs_c, (float)alpha, (float)beta,
                 NULL);
    else
        s->dgemm(m, n, k, a, b, s->d_nr, c, rs_c, cs_c, alpha, beta, NULL);
    return 0;
}
