// ep_threads.c -- how many threads a GEMM may use.
//
// Default: the CPUs this process may run on (sched_getaffinity, so a
// container or `taskset` limit is honoured), overridden by
// EINPLAN_NUM_THREADS, then by einplan.set_num_threads().  The OpenMP
// runtime's own limit caps it (omp_get_max_threads: OMP_NUM_THREADS,
// omp_set_num_threads), so threadpoolctl's threadpool_limits() on the
// OpenMP library einplan loads limits einplan too; einplan's own setting
// is passed on to the runtime (omp_set_num_threads) so it is not capped
// by the runtime's default.
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include "ep_api.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static int ep_nthreads = 0;    // 0: not yet decided

static int ep_usable_cpus(void)
{
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int ep_get_num_threads(void)
{
    if (ep_nthreads <= 0) {
        const char *env = getenv("EINPLAN_NUM_THREADS");
        int n = env ? atoi(env) : 0;
        if (n > 0)
            ep_set_num_threads(n);
        else
            ep_nthreads = ep_usable_cpus();
    }
#ifndef _OPENMP
    return 1;
#else
    int cap = omp_get_max_threads();
    return cap > 0 && cap < ep_nthreads ? cap : ep_nthreads;
#endif
}

void ep_set_num_threads(int n)
{
    ep_nthreads = n > 0 ? n : ep_usable_cpus();
#ifdef _OPENMP
    omp_set_num_threads(ep_nthreads);
#endif
}

int ep_have_openmp(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}
