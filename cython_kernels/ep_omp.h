// ep_omp.h -- the OpenMP idioms the kernels share; they compile to the
// single-threaded case when the build has no OpenMP (EINPLAN_NO_OPENMP=1).
#ifndef EP_OMP_H
#define EP_OMP_H

#ifdef _OPENMP
#include <omp.h>
#endif

// Where a team's threads run (ep_threads.c): the forking thread calls
// ep_team_prepare(nt) before its region and hands the map (NULL where the
// team is not placed) to every thread's ep_team.
typedef struct ep_team_map ep_team_map_t;
ep_team_map_t *ep_team_prepare(int nt);
void ep_team_settle(ep_team_map_t *map, int tid);

// This thread's number and the size of its team (0 and 1 outside OpenMP);
// a worker takes its CPU first.
static inline void ep_team(int *tid, int *ntr, ep_team_map_t *map)
{
#ifdef _OPENMP
    *tid = omp_get_thread_num();
    *ntr = omp_get_num_threads();
    if (*tid > 0) ep_team_settle(map, *tid);
#else
    (void)map;
    *tid = 0;
    *ntr = 1;
#endif
}

#endif
