// ep_ukr_avx2_group.h -- four k steps of the AVX2 6 x (2 vectors) micro-kernel
// over a packed B, in assembly.
//
// Included by ep_ukr_template.h when the kernel file defines
// EP_UKR_AVX2_BCAST ("vbroadcastsd" or "vbroadcastss"), EP_UKR_AVX2_FMA
// ("vfmadd231pd" or "vfmadd231ps") and EP_UKR_AVX2_LOAD ("vmovupd" or
// "vmovups"), for MR = 6 and NV = 2.
//
// Why assembly: a step is 2 loads of B, 6 broadcasts of A and 12 FMAs.  GCC,
// given four of them unrolled, hoists the next step's loads above the FMAs
// and spills accumulators, and given one step per trip it adds a counter, a
// branch and pointer updates to every step (2.25 instructions per FMA).  A
// core whose other hardware thread is busy dispatches for both, and there the
// instruction count, not the FMA pipes, sets the speed; this loop issues 1.85
// instructions per FMA with no spill (12 accumulators, 2 rows of B and one
// broadcast: 15 of the 16 ymm registers).

#define EP_STR_(x) #x
#define EP_STR(x) EP_STR_(x)
// one step: B's row at byte offset BO, A's six values from byte offset AO
#define EP_AVX2_ROW(i, AO, ES)                                                 \
    EP_UKR_AVX2_BCAST " " EP_STR(AO) "+" EP_STR(i) "*" EP_STR(ES) "(%[a]), %%ymm15\n\t" \
    EP_UKR_AVX2_FMA " %%ymm13, %%ymm15, %[c" EP_STR(i) "0]\n\t"               \
    EP_UKR_AVX2_FMA " %%ymm14, %%ymm15, %[c" EP_STR(i) "1]\n\t"
#define EP_AVX2_STEP(BO, AO, ES)                                               \
    EP_UKR_AVX2_LOAD " " EP_STR(BO) "(%[b]), %%ymm13\n\t"                      \
    EP_UKR_AVX2_LOAD " " EP_STR(BO) "+32(%[b]), %%ymm14\n\t"                   \
    EP_AVX2_ROW(0, AO, ES) EP_AVX2_ROW(1, AO, ES) EP_AVX2_ROW(2, AO, ES)      \
    EP_AVX2_ROW(3, AO, ES) EP_AVX2_ROW(4, AO, ES) EP_AVX2_ROW(5, AO, ES)

// Runs the first `trips` groups of 4 steps, the accumulators starting from
// zero (held in the asm's outputs alone: as in-out operands the 12 would be
// 24, and an asm takes 30); a and b advance past them.  pf names the
// line of the next B micro-panel to fetch (half a line per group); A is
// fetched EP_UKR_PREFETCH_A steps ahead, each of its lines once.
#define EP_UKR_AVX2_GROUPS(trips, a, b, pf, acc, ES)                           \
    __asm__ volatile(                                                          \
        "vxorpd %[c00], %[c00], %[c00]\n\t" "vxorpd %[c01], %[c01], %[c01]\n\t" \
        "vxorpd %[c10], %[c10], %[c10]\n\t" "vxorpd %[c11], %[c11], %[c11]\n\t" \
        "vxorpd %[c20], %[c20], %[c20]\n\t" "vxorpd %[c21], %[c21], %[c21]\n\t" \
        "vxorpd %[c30], %[c30], %[c30]\n\t" "vxorpd %[c31], %[c31], %[c31]\n\t" \
        "vxorpd %[c40], %[c40], %[c40]\n\t" "vxorpd %[c41], %[c41], %[c41]\n\t" \
        "vxorpd %[c50], %[c50], %[c50]\n\t" "vxorpd %[c51], %[c51], %[c51]\n\t" \
        "1:\n\t"                                                               \
        "prefetcht0 (%[pf])\n\t"                                               \
        "prefetcht0 " EP_STR(EP_UKR_PREFETCH_A) "*6*" EP_STR(ES) "(%[a])\n\t"  \
        "prefetcht0 " EP_STR(EP_UKR_PREFETCH_A) "*6*" EP_STR(ES) "+64(%[a])\n\t" \
        EP_AVX2_STEP(0, 0, ES)                                                 \
        EP_AVX2_STEP(64, 6*ES, ES)                                             \
        "prefetcht0 " EP_STR(EP_UKR_PREFETCH_A) "*6*" EP_STR(ES) "+128(%[a])\n\t" \
        EP_AVX2_STEP(128, 12*ES, ES)                                           \
        EP_AVX2_STEP(192, 18*ES, ES)                                           \
        "add $24*" EP_STR(ES) ", %[a]\n\t"                                     \
        "add $256, %[b]\n\t"                                                   \
        "add $32, %[pf]\n\t"                                                   \
        "dec %[n]\n\t"                                                         \
        "jnz 1b\n\t"                                                           \
        : [a] "+r"(a), [b] "+r"(b), [pf] "+r"(pf), [n] "+r"(trips),            \
          [c00] "=x"(acc[0][0]), [c01] "=x"(acc[0][1]),                        \
          [c10] "=x"(acc[1][0]), [c11] "=x"(acc[1][1]),                        \
          [c20] "=x"(acc[2][0]), [c21] "=x"(acc[2][1]),                        \
          [c30] "=x"(acc[3][0]), [c31] "=x"(acc[3][1]),                        \
          [c40] "=x"(acc[4][0]), [c41] "=x"(acc[4][1]),                        \
          [c50] "=x"(acc[5][0]), [c51] "=x"(acc[5][1])                         \
        :                                                                      \
        : "xmm13", "xmm14", "xmm15", "cc", "memory")
