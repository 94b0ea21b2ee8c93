// ep_macro_kernel_template.h -- the two innermost loops of the packed GEMM
// (BLIS's macro-kernel) for one element type: jr over the NR panels of a
// packed kc x nc panel of B, ir over the MR panels of a packed mc x kc
// block of A, one micro-kernel call per C tile.  Included by ep_gemm.c
// once per dtype with T, EP_PFX(x), UKR_FIELD, EP_UKR_T, NARROW_NR and
// NARROW_FN (the kernel fields of ep_ukr_set_t).

// k up to EP_SHORT_K, when C's rows are contiguous along n, runs ir outside
// jr over strips of EP_SHORT_K_STRIP NR panels (see macro_kernel).  Measured
// on Zen 3, f64 'kdac,kb->abcd' (93 x 21 x 804357, C rows 6.4 MB apart):
// 2.0x faster into a touched output, on a par with OpenBLAS; 1.5-1.9x at
// k = 8..64 of a smaller one, and no gain left at k = 512.
#ifndef EP_SHORT_K
#define EP_SHORT_K 64
#define EP_SHORT_K_STRIP 64
#endif

// The NR panel jr of B as the micro-kernel reads it, and its k stride:
// B itself where sh->direct_b says, else its packed panel.  Few rows
// (sh->b_by_panel: 1m, or a real B past L2) pack the panel now, into the thread's first slot
// (its jr range is its own), read by every A panel while it is in L1 / L2
// -- not the whole kc x nc panel through L3.
static inline const T *EP_PFX(b_panel)(const ep_shared_t *sh, int NR, ep_dim_t nc,
                                       ep_dim_t kc, ep_dim_t jr, ep_dim_t jr0,
                                       const T *bp, const T *b, ep_inc_t *ldb)
{
    ep_dim_t j0 = jr * NR;
    *ldb = NR;
    if (sh->b_by_panel == EP_B_BY_PANEL_REAL) {
        T *slot = (T *)bp + jr0 * NR * kc;
        // pack_b writes panel jr at its base + jr NR kc: the base that puts it in the slot
        EP_PFX(pack_b)(NR, nc, kc, b, sh->noff_b, sh->nbs_b, sh->koff_b, sh->ks_b, jr, jr + 1,
                       slot - jr * NR * kc);
        return slot;
    }
    if (sh->b_by_panel) {
        T *slot = (T *)bp + jr0 * NR * kc;
        EP_PFX(pack_b_1m)(NR, nc - j0, kc, b, sh->noff_b + j0, sh->koff_b,
                          sh->b_by_panel, 0, 1, slot);
        return slot;
    }
    if (EP_DIRECT_B(sh, jr, nc, NR)) {
        *ldb = sh->ks_b;
        return b + sh->koff_b[0] + sh->noff_b[j0];
    }
    return bp + jr * NR * kc;
}

// w elements of a private tile's row into C: dst = src, or src + beta dst
static inline void EP_PFX(store_run)(T *restrict dst, const T *restrict src, int w, T beta)
{
    if (beta == 0)
        for (int q = 0; q < w; q++)
            dst[q] = src[q];
    else
        for (int q = 0; q < w; q++)
            dst[q] = src[q] + beta * dst[q];
}

// One C tile: the MR panel ir of the packed A against B's NR panel jr
// (bpj, k stride ldb).  `pf` is the slice of the next B micro-panel the
// kernel fetches (or NULL).
static inline __attribute__((always_inline)) void EP_PFX(macro_tile)(
    const ep_ukr_set_t *u, const ep_shared_t *sh, const ep_thread_bufs_t *tb, int MR,
    int NR, ep_dim_t mc, ep_dim_t nc, ep_dim_t kc, ep_dim_t jr, ep_dim_t ir, const T *ap,
    const T *bpj, ep_inc_t ldb, T *c, T alpha, T beta, const char *pf)
{
    ep_dim_t j0 = jr * NR, i0 = ir * MR;
    int nr = (int)(nc - j0 < NR ? nc - j0 : NR);
    int mr = (int)(mc - i0 < MR ? mc - i0 : MR);
    ep_inc_t cs = sh->nbs_c[jr], rs = tb->mbs_c[ir];
    const T *api = ap + ir * MR * kc;
    T *cij = c + tb->moff_c[i0] + sh->noff_c[j0];
    if (rs != EP_IRREGULAR && cs != EP_IRREGULAR) {
        // full or edge tile: the kernel stores mr x nr; a partial last
        // panel runs the narrowest kernel that covers it
        EP_UKR_T kern = u->UKR_FIELD;
        for (int q = 0; nr < NR && q < EP_NARROW; q++)
            if (u->NARROW_NR[q] && nr <= u->NARROW_NR[q]) {
                kern = u->NARROW_FN[q];
                break;
            }
        kern(mr, nr, kc, api, bpj, ldb, cij, rs, cs, alpha, beta, pf);
        return;
    }
    // scattered tile: through a private tile, stored a run at a time -- the
    // tile's columns whose C offsets step by one (a short unit-stride axis
    // that did not merge with the next) go as one contiguous copy per row
    T ct[EP_MAX_MR * EP_MAX_NR] __attribute__((aligned(64)));
    u->UKR_FIELD(MR, NR, kc, api, bpj, ldb, ct, NR, 1, alpha, (T)0,
                 pf);  // full tile: ct is MR x NR
    const ep_inc_t *no = sh->noff_c + j0;
    for (int j = 0; j < nr;) {
        int e = j + 1;
        while (e < nr && no[e] == no[e - 1] + 1)
            e++;
        for (int i = 0; i < mr; i++)
            EP_PFX(store_run)(c + tb->moff_c[i0 + i] + no[j], ct + i * NR + j, e - j, beta);
        j = e;
    }
}

// Panels jr0 .. jr1 of B against the whole packed block of A (rows ic ..
// ic + mc of C, whose offsets are in tb); `b` is B itself, read in place
// where sh->direct_b says; `c` is C at the batch index; `ah`: the next
// GEMM's blocks, a few lines fetched before each tile (or NULL).  A
// scattered tile's short runs stay inline loops: as memcpy calls, one
// library call per row of every run cost more than the copy.
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void EP_PFX(macro_kernel)(const ep_ukr_set_t *u, const ep_shared_t *sh,
                                 const ep_thread_bufs_t *tb, int MR, int NR,
                                 ep_dim_t mc, ep_dim_t nc, ep_dim_t kc,
                                 ep_dim_t jr0, ep_dim_t jr1, const T *ap,
                                 const T *bp, const T *b, T *c, T alpha,
                                 T beta, ep_ahead_t *ah)
{
    ep_dim_t mpanel = (mc + MR - 1) / MR;
    ep_inc_t ldb;
    if (kc <= EP_SHORT_K && !sh->b_by_panel && jr0 < jr1 && sh->nbs_c[jr0] == 1) {
        // short k: a tile is a few FMAs per element of C it stores, and the
        // stores of C set the speed.  ir runs outside jr, over strips of
        // EP_SHORT_K_STRIP panels of B (in L2), so each of the MR rows of C
        // in flight takes a run of the strip's width, which the hardware
        // streams, instead of one tile's width on each of mc rows
        for (ep_dim_t js = jr0; js < jr1; js += EP_SHORT_K_STRIP) {
            ep_dim_t je = jr1 - js < EP_SHORT_K_STRIP ? jr1 : js + EP_SHORT_K_STRIP;
            for (ep_dim_t ir = 0; ir < mpanel; ir++)
                for (ep_dim_t jr = js; jr < je; jr++) {
                    const T *bpj = EP_PFX(b_panel)(sh, NR, nc, kc, jr, jr0, bp, b, &ldb);
                    ep_ahead_step(ah);
                    EP_PFX(macro_tile)(u, sh, tb, MR, NR, mc, nc, kc, jr, ir, ap,
                                       bpj, ldb, c, alpha, beta, NULL);
                }
        }
        return;
    }
    const size_t next_bytes = (size_t)NR * kc * sizeof(T);
    const size_t slice = (size_t)(kc / 8) * 64;
    for (ep_dim_t jr = jr0; jr < jr1; jr++) {  // jr: NR of n
        const T *bpj = EP_PFX(b_panel)(sh, NR, nc, kc, jr, jr0, bp, b, &ldb);
        // the next packed B micro-panel, fetched a slice per call
        // (ep_ukr.h: b_next); NULL past its end, when it is B itself or
        // when it is packed only when its turn comes
        const char *b_next =
            jr + 1 < jr1 && !EP_DIRECT_B(sh, jr + 1, nc, NR) && !sh->b_by_panel
                ? (const char *)(bp + (jr + 1) * NR * kc) : NULL;
        // B in place: the first A panel's call fetches the next panel's
        // rows as it walks this one's (ep_ukr.h)
        const char *b_rows_next =
            jr + 1 < jr1 && ldb != NR && EP_DIRECT_B(sh, jr, nc, NR) &&
                    EP_DIRECT_B(sh, jr + 1, nc, NR)
                ? (const char *)(b + sh->koff_b[0] + sh->noff_b[(jr + 1) * NR]) : NULL;
        for (ep_dim_t ir = 0; ir < mpanel; ir++) {  // ir: MR of m
            const char *pf = b_next && (size_t)ir * slice < next_bytes
                                 ? b_next + (size_t)ir * slice
                                 : ir == 0 ? b_rows_next : NULL;
            ep_ahead_step(ah);
            EP_PFX(macro_tile)(u, sh, tb, MR, NR, mc, nc, kc, jr, ir, ap, bpj, ldb,
                               c, alpha, beta, pf);
        }
    }
}
