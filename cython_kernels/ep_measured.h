// ep_measured.h -- a choice between two ways of running a kernel that give
// the same results, made by timing the calls themselves: while measuring,
// calls take the two ways in turn and add their time and work; once each
// way has done enough work, the one of the higher rate stays for the rest
// of the process.  Used where the faster way differs by core and no cache
// size or feature flag tells it (ep_nest.c's stream order, ep_smm.c's block
// of k for a far-strided A, ep_schedule.c's way of taking B).
#ifndef EP_MEASURED_H
#define EP_MEASURED_H

#include <stdint.h>
#include <time.h>

typedef struct {
    int pick;                 // the way chosen (0 or 1), -1 while measuring
    int64_t ns[2], work[2];   // each way's timed calls so far
    uint64_t calls;           // calls taken while measuring: their turn
} ep_measured_t;

#define EP_MEASURED_INIT {-1, {0, 0}, {0, 0}, 0}

static inline int64_t ep_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// The chosen way, or -1 while measuring.
static inline int ep_measured_pick(ep_measured_t *m)
{
    return __atomic_load_n(&m->pick, __ATOMIC_ACQUIRE);
}

// The way a call takes while measuring: the two in turn.
static inline int ep_measured_turn(ep_measured_t *m)
{
    return (int)(__atomic_fetch_add(&m->calls, 1, __ATOMIC_RELAXED) & 1);
}

// The same, and whether to time the call: not each way's first, which may
// pay first touches the rest do not.
static inline int ep_measured_turn_timed(ep_measured_t *m, int *timed)
{
    uint64_t call = __atomic_fetch_add(&m->calls, 1, __ATOMIC_RELAXED);
    *timed = call >= 2;
    return (int)(call & 1);
}

// One timed call of `way`; once both ways have done `enough` work, way 1
// stays if its rate (work a ns) beats way 0's by `margin`, else way 0.
static inline void ep_measured_sample(ep_measured_t *m, int way, int64_t work, int64_t ns,
                                      int64_t enough, double margin)
{
    __atomic_fetch_add(&m->ns[way], ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&m->work[way], work, __ATOMIC_RELAXED);
    int64_t w0 = __atomic_load_n(&m->work[0], __ATOMIC_RELAXED);
    int64_t w1 = __atomic_load_n(&m->work[1], __ATOMIC_RELAXED);
    if (w0 < enough || w1 < enough) return;
    double r0 = (double)w0 / (double)(__atomic_load_n(&m->ns[0], __ATOMIC_RELAXED) + 1);
    double r1 = (double)w1 / (double)(__atomic_load_n(&m->ns[1], __ATOMIC_RELAXED) + 1);
    int expect = -1;
    __atomic_compare_exchange_n(&m->pick, &expect, r1 > margin * r0 ? 1 : 0, 0,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

#endif
