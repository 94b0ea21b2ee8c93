// ep_omp.h -- the OpenMP idioms the kernels share; they compile to the
// single-threaded case when the build has no OpenMP (EINPLAN_NO_OPENMP=1).
#ifndef EP_OMP_H
#define EP_OMP_H

#ifdef _OPENMP
#include <omp.h>
#endif

// This thread's number and the size of its team (0 and 1 outside OpenMP).
static inline void ep_team(int *tid, int *ntr)
{
#ifdef _OPENMP
    *tid = omp_get_thread_num();
    *ntr = omp_get_num_threads();
#else
    *tid = 0;
    *ntr = 1;
#endif
}

#endif
