// ep_ukr_template.h -- the body of every SIMD micro-kernel, written once.
//
// Included by ep_ukr_<isa>_<dt><MR>x<NR>.c after it defines:
//   UKR_NAME            function name
//   UKR_T               element type (float / double)
//   UKR_MR, UKR_NV      tile rows; vectors per tile row (NR = NV * VL)
//   VEC, VL             vector type and its length in elements
//   V_ZERO() V_SET1(x) V_LOADU(p) V_STOREU(p, v) V_FMA(a, b, c)
//   V_MUL(a, b)         the intrinsics of that ISA and dtype
// The contract is in ep_ukr.h.
//
// Register map (AVX-512 f64 8x24 as the example): acc[i][v] = c(i, 8v:8v+7),
// 24 zmm accumulators; 3 zmm hold the current row of B; 1 zmm the broadcast
// a(i).  Everything is unrolled by the compiler (constant trip counts), which
// keeps acc[][] in registers (checked with objdump: no spills in the k loop).

#define UKR_NR (UKR_NV * VL)
#ifdef EP_UKR_AVX2_BCAST
#include "ep_ukr_avx2_group.h"
#endif
// Prefetch distance into the packed A micro-panel, in k steps.
#ifndef EP_UKR_PREFETCH_A
#define EP_UKR_PREFETCH_A 8
#endif
// k steps before the end at which the C tile is fetched into L1.
#ifndef EP_UKR_PREFETCH_C_LATE
#define EP_UKR_PREFETCH_C_LATE 32
#endif

// Prefetch one row of the C tile (each line of it when rows are contiguous).
#define EP_UKR_PREFETCH_C_ROW(ci, cs_c, locality)                              \
    do {                                                                       \
        if ((cs_c) == 1)                                                       \
            for (int l_ = 0; l_ < UKR_NR; l_ += 64 / (int)sizeof(UKR_T))       \
                __builtin_prefetch((ci) + l_, 1, locality);                    \
        __builtin_prefetch((ci) + (UKR_NR - 1) * (cs_c), 1, locality);         \
    } while (0)

// B read in place: row p of the next NR panel, rows ldb elements apart.  Its
// rows are often pages apart, one line or two of each read per panel, a
// pattern the hardware prefetcher does not follow; asked for a whole panel
// walk before its use, the row is in cache when the next call reaches it.
#define EP_UKR_PREFETCH_B_ROW(next, p, ldb)                                    \
    ep_prefetch_run((next) + (p) * (ldb) * (ep_inc_t)sizeof(UKR_T), UKR_NR * sizeof(UKR_T))

// The packed B micro-panel (kc x NR) outgrows L1 with the AVX-512 tiles
// (96 KB f64 at kc = 512): each tile streams it from L2, one row of NR
// per k step, three times the bytes of A's row.  A set that defines
// EP_UKR_PREFETCH_B fetches B's rows that many k steps ahead.  Intel Xeon
// (AVX-512, KVM), 1 thread, 2026-12-08, ahead 8 / none: f64 'ik,kj->ij'
// 441 x 4096 x 4096 +3-4%, 1024^3 +2-6%; f32 2048^3 +2-3%; complex
// 1024^3 through 1m +1-4%; 4 and 16 steps alike.
#ifdef EP_UKR_PREFETCH_B
#define EP_UKR_PREFETCH_B_AHEAD()                                              \
    do {                                                                       \
        _Pragma("GCC unroll 4")                                                \
        for (int v = 0; v < UKR_NV; v++)                                       \
            __builtin_prefetch(b + EP_UKR_PREFETCH_B * ldb + v * VL, 0, 3);    \
    } while (0)
#else
#define EP_UKR_PREFETCH_B_AHEAD() ((void)0)
#endif

// One k step: c(i, :) += a(i, p) * b(p, :) over the register tile.
#define EP_UKR_STEP()                                                          \
    do {                                                                       \
        VEC bv[UKR_NV];                                                        \
        __builtin_prefetch(a + EP_UKR_PREFETCH_A * UKR_MR, 0, 3);              \
        EP_UKR_PREFETCH_B_AHEAD();                                             \
        _Pragma("GCC unroll 4")                                                \
        for (int v = 0; v < UKR_NV; v++)                                       \
            bv[v] = V_LOADU(b + v * VL);       /* b(p, :): a row of B */       \
        _Pragma("GCC unroll 16")                                               \
        for (int i = 0; i < UKR_MR; i++) {                                     \
            VEC ai = V_SET1(a[i]);             /* broadcast a(i, p) */         \
            _Pragma("GCC unroll 4")                                            \
            for (int v = 0; v < UKR_NV; v++)                                   \
                acc[i][v] = V_FMA(ai, bv[v], acc[i][v]);                       \
        }                                                                      \
        a += UKR_MR;                                                           \
        b += ldb;                                                              \
    } while (0)

void UKR_NAME(int m, int n, ep_dim_t k, const UKR_T *restrict a,
              const UKR_T *restrict b, ep_inc_t ldb, UKR_T *restrict c,
              ep_inc_t rs_c, ep_inc_t cs_c, UKR_T alpha, UKR_T beta,
              const void *b_next)
{
    VEC acc[UKR_MR][UKR_NV];
#pragma GCC unroll 16
    for (int i = 0; i < UKR_MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < UKR_NV; v++)
            acc[i][v] = V_ZERO();

    // The C tile is needed after the k loop.  Fetched into L1 now, it would
    // be evicted by the A and B streamed through L1 meanwhile (96 KB for f64
    // 8x24 at kc = 384): ask for it in L2 now and in L1 for the last steps.
#pragma GCC unroll 16
    for (int i = 0; i < UKR_MR; i++)
        EP_UKR_PREFETCH_C_ROW(c + i * rs_c, cs_c, 2);

    // Every 8 k steps, one line of the caller's slice of the next B
    // micro-panel: it then waits in L2, not L3, for its first use.  (A
    // nested loop of 8 steps made GCC spill a B vector to the stack.)
    ep_dim_t k_main = k > EP_UKR_PREFETCH_C_LATE ? k - EP_UKR_PREFETCH_C_LATE : 0;
    const char *pf_b = (const char *)b_next;
    ep_dim_t p = 0;
#ifdef EP_UKR_AVX2_BCAST
    if (ldb == UKR_NR && k_main >= 4) {   // packed B: 4 steps a trip, from p = 0
        long trips = (long)(k_main / 4);
        const char *pf = pf_b ? pf_b : (const char *)b;
        EP_UKR_AVX2_GROUPS(trips, a, b, pf, acc, EP_UKR_AVX2_ES);
        p = k_main / 4 * 4;
    }
#endif
    // B in place (ep_ukr.h: b_next): every step also asks for its row's
    // values in the next panel
    const int rows_ahead = pf_b && ldb != UKR_NR;
    for (; p < k_main; p++) {
        if (rows_ahead)
            EP_UKR_PREFETCH_B_ROW(pf_b, p, ldb);
        else if (pf_b && (p & 7) == 0)
            __builtin_prefetch(pf_b + (p >> 3) * 64, 0, 3);
        EP_UKR_STEP();
    }
    for (int q = 0; p < k; p++, q++) {
        if (q < UKR_MR)
            EP_UKR_PREFETCH_C_ROW(c + q * rs_c, cs_c, 3);
        if (rows_ahead)
            EP_UKR_PREFETCH_B_ROW(pf_b, p, ldb);
        EP_UKR_STEP();
    }

    VEC va = V_SET1(alpha);
    VEC vb = V_SET1(beta);
    if (cs_c == 1 && m == UKR_MR && n == UKR_NR) {    // full tile, rows contiguous
#pragma GCC unroll 16
        for (int i = 0; i < UKR_MR; i++) {
            UKR_T *ci = c + i * rs_c;
#pragma GCC unroll 4
            for (int v = 0; v < UKR_NV; v++) {
                VEC r = V_MUL(va, acc[i][v]);
                if (beta != 0)                        // beta == 0 never reads C
                    r = V_FMA(vb, V_LOADU(ci + v * VL), r);
                V_STOREU(ci + v * VL, r);
            }
        }
        return;
    }
#ifdef V_MASK_STOREU
    if (cs_c == 1) {                                  // edge tile: masked vectors
#pragma GCC unroll 16
        for (int i = 0; i < UKR_MR; i++) {
            if (i >= m) break;
            UKR_T *ci = c + i * rs_c;
#pragma GCC unroll 4
            for (int v = 0; v < UKR_NV; v++) {
                int left = n - v * VL;
                if (left <= 0) break;
                EP_MASK_T mk = left >= VL ? (EP_MASK_T)~0 : (EP_MASK_T)((1u << left) - 1);
                VEC r = V_MUL(va, acc[i][v]);
                if (beta != 0)
                    r = V_FMA(vb, V_MASK_LOADU(ci + v * VL, mk), r);
                V_MASK_STOREU(ci + v * VL, mk, r);
            }
        }
        return;
    }
#endif
    // general strides (or an edge tile without masked stores): via a tile
    UKR_T tile[UKR_MR][UKR_NR] __attribute__((aligned(64)));
#pragma GCC unroll 16
    for (int i = 0; i < UKR_MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < UKR_NV; v++)
            V_STOREU(&tile[i][v * VL], V_MUL(va, acc[i][v]));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            UKR_T *cij = c + i * rs_c + j * cs_c;
            *cij = beta == 0 ? tile[i][j] : tile[i][j] + beta * *cij;
        }
}

#undef UKR_NR
#undef EP_UKR_PREFETCH_C_ROW
#undef EP_UKR_STEP
#undef EP_UKR_PREFETCH_B_AHEAD
