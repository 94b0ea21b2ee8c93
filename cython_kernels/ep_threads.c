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
#include "ep_omp.h"
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

// Where a team's threads run.  A woken thread is placed near the thread that
// woke it, and on some systems (virtual machines whose idle CPUs the guest
// sees as preempted) the scheduler queues a team's worker behind its master
// on one CPU while another allowed CPU idles: every barrier then waits for a
// thread that is not running and the call runs at one thread's speed or
// worse.  So a worker pins itself, on its first region, to an allowed CPU
// its master is not on, and the master -- never pinned, since the threads
// it starts would inherit its mask -- moves itself off its workers' CPUs
// before forking (pinned for the move only).  A user's own binding
// (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY) is left alone, and so is a
// team larger than the CPUs it may use.
#define EP_PIN_MAX 64      // teams of up to this many threads are placed

struct ep_team_map {
    int ncpu;                 // 0 until the master has read its allowed CPUs
    cpu_set_t allowed;        // the master's allowed CPUs when it first forked
    int master;               // the CPU the master forks from
    int cpu[EP_PIN_MAX];      // worker t's CPU, -1 before it has run
};
static __thread struct ep_team_map ep_my_team;   // the map of this thread's team
static __thread int ep_my_pin = -1;              // a worker's CPU, -1 if unpinned

#if defined(__linux__) && defined(_OPENMP)
static int ep_user_binds(void)
{
    static int binds = -1;
    if (binds < 0)
        binds = omp_get_proc_bind() != omp_proc_bind_false
                || getenv("GOMP_CPU_AFFINITY") != NULL;
    return binds;
}

static void ep_pin_self(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
}
#endif

ep_team_map_t *ep_team_prepare(int nt)
{
#if defined(__linux__) && defined(_OPENMP)
    struct ep_team_map *m = &ep_my_team;
    if (nt < 2 || nt > EP_PIN_MAX || ep_my_pin >= 0 || ep_user_binds()) return NULL;
    if (m->ncpu == 0) {
        if (sched_getaffinity(0, sizeof m->allowed, &m->allowed) != 0) return NULL;
        m->ncpu = CPU_COUNT(&m->allowed);
        for (int t = 0; t < EP_PIN_MAX; t++) m->cpu[t] = -1;
    }
    if (nt > m->ncpu) return NULL;
    int here = sched_getcpu();
    int taken = 0;
    for (int t = 1; t < nt; t++) taken |= m->cpu[t] == here;
    cpu_set_t own;       // the master's mask now, the user's to change
    if (taken && sched_getaffinity(0, sizeof own, &own) == 0) {
        // the first allowed CPU none of the workers is on
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (!CPU_ISSET(c, &own)) continue;
            int used = 0;
            for (int t = 1; t < nt; t++) used |= m->cpu[t] == c;
            if (used) continue;
            ep_pin_self(c);
            sched_setaffinity(0, sizeof own, &own);
            here = c;
            break;
        }
    }
    m->master = here;
    return m;
#else
    (void)nt;
    return NULL;
#endif
}

void ep_team_settle(ep_team_map_t *m, int tid)
{
#if defined(__linux__) && defined(_OPENMP)
    if (m == NULL || tid < 1 || tid >= EP_PIN_MAX) return;
    if (ep_my_pin >= 0 && m->cpu[tid] == ep_my_pin && ep_my_pin != m->master) return;
    // worker t takes the ((t - 1) mod others)-th allowed CPU other than the
    // master's, so a team's workers spread over distinct CPUs
    int others = m->ncpu - CPU_ISSET(m->master, &m->allowed);
    if (others < 1) return;
    int want = (tid - 1) % others;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &m->allowed) || c == m->master || want-- > 0) continue;
        if (c != ep_my_pin) ep_pin_self(c);
        ep_my_pin = c;
        m->cpu[tid] = c;
        return;
    }
#else
    (void)m;
    (void)tid;
#endif
}

int ep_probe_team_cpus(int nt, int *cpu)
{
    ep_team_map_t *team = ep_team_prepare(nt);
    int ran = 1;
    cpu[0] = -1;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
#ifdef __linux__
        cpu[tid] = sched_getcpu();
#else
        cpu[tid] = -1;
#endif
        if (tid == 0) ran = ntr;
    }
    return team != NULL ? ran : -ran;
}

int ep_have_openmp(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}
