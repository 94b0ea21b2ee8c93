// ep_cpu.c -- CPU features and cache sizes, read from the machine.
//
// CPUID says what the CPU implements; XGETBV says which register state the
// OS saves on a context switch.  Both must agree before a kernel runs
// (AVX needs XCR0 bits 1-2, AVX-512 also bits 5-7).  Vendor and family are
// never looked at.
#include <stdio.h>
#include <unistd.h>
#include "ep_cpu.h"
#include "ukr/ep_ukr.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>

static uint64_t ep_xgetbv0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

int ep_cpu_best_isa(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return EP_ISA_GENERIC;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx) return EP_ISA_GENERIC;
    uint64_t xcr0 = ep_xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return EP_ISA_GENERIC;       // XMM + YMM state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return EP_ISA_GENERIC;
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1;
    if (!(avx2 && fma)) return EP_ISA_GENERIC;
    if (avx512f && (xcr0 & 0xe6) == 0xe6)                 // + opmask, ZMM
        return EP_ISA_AVX512;
    return EP_ISA_AVX2;
}
#else
int ep_cpu_best_isa(void) { return EP_ISA_GENERIC; }
#endif

// Linux sysfs first (glibc's sysconf misreports some virtual CPUs' L3 by
// 10x, seen on AMD EPYC VMs), then sysconf, else 0.
static ep_dim_t ep_sysfs_cache(int level)
{
    char path[96], buf[64];
    for (int i = 0; i < 10; i++) {
        int lvl = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &lvl) != 1) lvl = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(path, "r");
        if (!f) continue;
        int is_insn = fgets(buf, sizeof buf, f) && buf[0] == 'I';
        fclose(f);
        if (lvl != level || is_insn) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) continue;
        long v = 0;
        char unit = 0;
        int got = fscanf(f, "%ld%c", &v, &unit);
        fclose(f);
        if (got >= 1 && v > 0)
            return (ep_dim_t)v * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : 1);
    }
    return 0;
}

void ep_cache_sizes_reported(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
{
    ep_dim_t v[3] = {ep_sysfs_cache(1), ep_sysfs_cache(2), ep_sysfs_cache(3)};
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const int names[3] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
                          _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < 3; i++)
        if (v[i] <= 0) { long s = sysconf(names[i]); v[i] = s > 0 ? s : 0; }
#endif
    *l1d = v[0];
    *l2 = v[1];
    *l3 = v[2];
}

// A virtual machine may report the host's whole L3 as its own: a 2-vCPU
// guest on a Xeon reported 480 MiB shared by its 2 CPUs, and its reads
// fell to memory speed past 32 MiB.  No x86 part gives a core more than
// 16 MiB of L3 (Zen 4 X3D: 96 MiB over 8 cores), so the L3 every
// decision counts on is at most that per online CPU.
#define EP_L3_PER_CPU_MAX ((ep_dim_t)16 << 20)

// Read once per process (sysfs costs about 200 us a read; nest calls ask
// per call): a race between threads reads the same values twice.
void ep_cache_sizes(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
{
    static ep_dim_t sizes[3];
    static int ready;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        ep_dim_t v[3];
        ep_cache_sizes_reported(&v[0], &v[1], &v[2]);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        ep_dim_t cap = EP_L3_PER_CPU_MAX * (ncpu > 0 ? ncpu : 1);
        if (v[2] > cap) v[2] = cap;
        for (int i = 0; i < 3; i++) __atomic_store_n(&sizes[i], v[i], __ATOMIC_RELAXED);
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    *l1d = __atomic_load_n(&sizes[0], __ATOMIC_RELAXED);
    *l2 = __atomic_load_n(&sizes[1], __ATOMIC_RELAXED);
    *l3 = __atomic_load_n(&sizes[2], __ATOMIC_RELAXED);
}
