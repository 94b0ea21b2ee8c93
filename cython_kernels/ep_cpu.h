// ep_cpu.h -- what the machine offers the kernels: the widest instruction
// set the CPU and the OS support, and the data cache sizes (ep_cpu.c).
// The blocking, the dispatch and the copy's streaming threshold read these.
#ifndef EP_CPU_H
#define EP_CPU_H

#include "ep_api.h"

// The best ep_isa_t this CPU and OS run (CPUID + XGETBV; generic elsewhere).
int ep_cpu_best_isa(void);

// ep_cache_sizes (ep_api.h) is defined in ep_cpu.c as well.

#endif
