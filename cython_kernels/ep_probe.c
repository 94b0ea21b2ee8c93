// ep_probe.c -- the FLOP rate one core gets from a micro-kernel, measured
// for the machine model that prices plans (einplan/model.py).
//
// The panels are sized to sit in half of L1d, so the rate is the kernel's
// arithmetic and not the cache's; the repeats run back to back in C, so no
// Python call overhead (about 3 us, a third of a k = 2048 kernel call) is
// counted.  Trials repeat for `seconds` and the best is kept: a trial that a
// context switch, another process on the core or a clock ramp interrupts
// only ever reads slower, and a longer window is more likely to hold one
// quiet trial on a loaded machine.
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ep_api.h"

static double ep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ep_probe_ukr_gflops(int isa, ep_dtype_t dtype, int reps, double seconds)
{
    int mr, nr;
    if (!ep_isa_supported(isa) || ep_isa_tile(isa, dtype, &mr, &nr) != 0)
        return -1.0;
    size_t item = dtype == EP_FLOAT32 ? 4 : 8;
    ep_dim_t l1 = 0, l2 = 0, l3 = 0;
    ep_cache_sizes(&l1, &l2, &l3);
    if (l1 <= 0) l1 = 32 << 10;
    ep_dim_t k = (l1 / 2) / ((ep_dim_t)(mr + nr) * (ep_dim_t)item);
    k = k < 16 ? 16 : k & ~(ep_dim_t)15;   // multiple of 16: aligned panels
    size_t bytes_a = (size_t)k * mr * item, bytes_b = (size_t)k * nr * item;
    size_t bytes_c = ((size_t)mr * nr * item + 63) & ~(size_t)63;
    void *a = aligned_alloc(64, bytes_a), *b = aligned_alloc(64, bytes_b);
    void *c = aligned_alloc(64, bytes_c);
    if (!a || !b || !c) {
        free(a); free(b); free(c);
        return -1.0;
    }
    // zeros keep the accumulators finite however many repeats run
    memset(a, 0, bytes_a);
    memset(b, 0, bytes_b);
    memset(c, 0, bytes_c);
    double best = 0.0, start = ep_now();
    for (int t = 0; t < 3 || ep_now() - start < seconds; t++) {
        double t0 = ep_now();
        for (int r = 0; r < reps; r++)
            ep_run_ukr(isa, dtype, mr, nr, k, a, b, c, nr, 1, 1.0, 1.0);
        double dt = ep_now() - t0;
        double rate = dt > 0 ? 2.0 * mr * nr * (double)k * reps / dt / 1e9 : 0.0;
        if (rate > best) best = rate;
    }
    free(a); free(b); free(c);
    return best;
}
