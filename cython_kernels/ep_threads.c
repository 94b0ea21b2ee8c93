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
//
// Every count is capped at EP_MAX_THREADS (libgomp aborts or the stack
// allocations fail long before 2**31 threads).
//
// Fork: libgomp's thread pool is not fork-safe (its workers do not exist in
// the child, and the child's first parallel region waits for them forever).
// Before a fork, the forking thread releases its pool with OpenMP 5.0's
// omp_pause_resource_all(omp_pause_hard), the routine the standard gives
// for this; the child then starts a fresh pool and keeps its threads, and
// the parent re-creates its pool at its next parallel region (tens of
// microseconds).  Where that cannot be done -- the runtime is not libgomp,
// or the pause fails (the forking thread is inside a parallel region) --
// the child is marked and runs single-threaded.  einplan's parallel regions
// take no global lock (no critical sections) that another thread's team
// could hold across the fork.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include "ep_api.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static int ep_nthreads = 0;    // 0: not yet decided
static volatile int ep_forked = 0;      // this process is a single-threaded child
static volatile int ep_pool_released = 0;

#if defined(_OPENMP) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#define EP_PAUSE_BEFORE_FORK 1        // libgomp has omp_pause_resource_all from GCC 9
#endif

static void ep_release_pool_before_fork(void)
{
#ifdef EP_PAUSE_BEFORE_FORK
    ep_pool_released = omp_pause_resource_all(omp_pause_hard) == 0;
#else
    ep_pool_released = 0;
#endif
}

static void ep_mark_forked_child(void)
{
    if (!ep_pool_released) ep_forked = 1;
}

__attribute__((constructor)) static void ep_register_fork_handler(void)
{
    pthread_atfork(ep_release_pool_before_fork, NULL, ep_mark_forked_child);
}

int ep_max_threads(void) { return EP_MAX_THREADS; }

int ep_in_forked_child(void) { return ep_forked; }

int ep_clamp_threads(int n)
{
    if (ep_forked || n < 1) return 1;
    return n > EP_MAX_THREADS ? EP_MAX_THREADS : n;
}

// EINPLAN_NUM_THREADS as a count, 0 when unset or not a positive integer
// (Python warns about those), capped at EP_MAX_THREADS
static int ep_env_threads(void)
{
    const char *env = getenv("EINPLAN_NUM_THREADS");
    if (!env || !*env) return 0;
    char *end;
    errno = 0;
    long long n = strtoll(env, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (end == env || *end != '\0' || n < 1) return 0;
    if (errno == ERANGE || n > EP_MAX_THREADS) return EP_MAX_THREADS;
    return (int)n;
}

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
        int n = ep_env_threads();
        if (n > 0)
            ep_set_num_threads(n);
        else
            ep_nthreads = ep_usable_cpus();
    }
#ifndef _OPENMP
    return 1;
#else
    if (ep_forked) return 1;
    int cap = omp_get_max_threads();
    return cap > 0 && cap < ep_nthreads ? cap : ep_nthreads;
#endif
}

void ep_set_num_threads(int n)
{
    ep_nthreads = n > 0 ? (n > EP_MAX_THREADS ? EP_MAX_THREADS : n) : ep_usable_cpus();
#ifdef _OPENMP
    if (!ep_forked)
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
