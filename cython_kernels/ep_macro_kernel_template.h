// ep_macro_kernel_template.h -- the two innermost loops of the packed GEMM
// (BLIS's macro-kernel) for one element type: jr over the NR panels of a
// packed kc x nc panel of B, ir over the MR panels of a packed mc x kc
// block of A, one micro-kernel call per C tile.  Included by ep_gemm.c
// once per dtype with T, EP_PFX(x), UKR_FIELD, EP_UKR_T, NARROW_NR and
// NARROW_FN (the kernel fields of ep_ukr_set_t).

// Panels jr0 .. jr1 of B against the whole packed block of A (rows ic ..
// ic + mc of C, whose offsets are in tb); `b` is B itself, read in place
// where sh->direct_b says; `c` is C at the batch index.
static void EP_PFX(macro_kernel)(const ep_ukr_set_t *u, const ep_shared_t *sh,
                                 const ep_thread_bufs_t *tb, int MR, int NR,
                                 ep_dim_t mc, ep_dim_t nc, ep_dim_t kc,
                                 ep_dim_t jr0, ep_dim_t jr1, const T *ap,
                                 const T *bp, const T *b, T *c, T alpha,
                                 T beta)
{
    T ct[EP_MAX_MR * EP_MAX_NR] __attribute__((aligned(64)));
    ep_dim_t mpanel = (mc + MR - 1) / MR;
    for (ep_dim_t jr = jr0; jr < jr1; jr++) {  // jr: NR of n
        ep_dim_t j0 = jr * NR;
        int nr = (int)(nc - j0 < NR ? nc - j0 : NR);
        ep_inc_t cs = sh->nbs_c[jr];
        int direct = EP_DIRECT_B(sh, jr, nc, NR);
        const T *bpj = direct ? b + sh->koff_b[0] + sh->noff_b[j0]
                              : bp + jr * NR * kc;
        ep_inc_t ldb = direct ? sh->ks_b : NR;
        if (sh->b_by_panel) {
            // 1m, m small: this panel packed now into the thread's first
            // slot (its jr range is its own), read by every A panel while
            // it is in L1 / L2 -- not the whole kc x nc panel through L3
            T *slot = (T *)bp + jr0 * NR * kc;
            EP_PFX(pack_b_1m)(NR, nc - j0, kc, b, sh->noff_b + j0, sh->koff_b,
                              sh->b_by_panel, 0, 1, slot);
            bpj = slot;
        }
        // a partial last panel runs the narrowest kernel that covers it
        EP_UKR_T kern = u->UKR_FIELD;
        for (int q = 0; nr < NR && q < EP_NARROW; q++)
            if (u->NARROW_NR[q] && nr <= u->NARROW_NR[q]) {
                kern = u->NARROW_FN[q];
                break;
            }
        // the next packed B micro-panel, fetched a slice per call
        // (ep_ukr.h: b_next); NULL past its end or when it is B itself
        const char *b_next =
            jr + 1 < jr1 && !EP_DIRECT_B(sh, jr + 1, nc, NR) && !sh->b_by_panel
                ? (const char *)(bp + (jr + 1) * NR * kc) : NULL;
        const size_t next_bytes = (size_t)NR * kc * sizeof(T);
        const size_t slice = (size_t)(kc / 8) * 64;
        for (ep_dim_t ir = 0; ir < mpanel; ir++) {  // ir: MR of m
            ep_dim_t i0 = ir * MR;
            int mr = (int)(mc - i0 < MR ? mc - i0 : MR);
            const char *pf = b_next && (size_t)ir * slice < next_bytes
                                 ? b_next + (size_t)ir * slice : NULL;
            ep_inc_t rs = tb->mbs_c[ir];
            const T *api = ap + ir * MR * kc;
            T *cij = c + tb->moff_c[i0] + sh->noff_c[j0];
            if (rs != EP_IRREGULAR && cs != EP_IRREGULAR) {
                // full or edge tile: the kernel stores mr x nr
                kern(mr, nr, kc, api, bpj, ldb, cij, rs, cs, alpha, beta, pf);
                continue;
            }
            // scattered tile: through a private tile
            u->UKR_FIELD(MR, NR, kc, api, bpj, ldb, ct, NR, 1, alpha, (T)0,
                         pf);  // full tile: ct is MR x NR
            for (int i = 0; i < mr; i++) {
                T *ci = c + tb->moff_c[i0 + i];
                for (int j = 0; j < nr; j++) {
                    T *e = ci + sh->noff_c[j0 + j];
                    *e = beta == 0 ? ct[i * NR + j] : ct[i * NR + j] + beta * *e;
                }
            }
        }
    }
}
