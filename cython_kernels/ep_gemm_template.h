// ep_gemm_template.h -- the five loops around the micro-kernel for one
// element type; included by ep_gemm.c once per dtype with T, EP_PFX(x) and
// UKR_FIELD (the kernel in ep_ukr_set_t).

// One GEMM (one batch index), run by all `nt` threads of the enclosing
// parallel region together; thread `tid` takes its share of each loop.
// Each thread computes whole C tiles with the same k order whatever nt is,
// so results are bitwise identical for any thread count.
static void EP_PFX(gemm_one)(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                             const ep_blocking_t *bk, ep_shared_t *sh,
                             ep_thread_bufs_t *tb, const T *a, const T *b,
                             const T *bpre, T *c, int tid, int nt)
{
    const int MR = bk->mr, NR = bk->nr;
    const ep_dim_t M = sh->M, N = sh->N, K = sh->K;
    const T alpha = (T)d->alpha, beta = (T)d->beta;
    T *bp = (T *)sh->bpack;
    T *ap = (T *)tb->apack;
    T ct[EP_MAX_MR * EP_MAX_NR] __attribute__((aligned(64)));

    for (ep_dim_t jc = 0; jc < N; jc += bk->nc) {          // jc: NC of n (L3)
        ep_dim_t nc = N - jc < bk->nc ? N - jc : bk->nc;
        ep_dim_t npanel = (nc + NR - 1) / NR;
        if (tid == 0) {
            ep_scatter(&d->g->n, EP_N_B, jc, nc, sh->noff_b);
            ep_scatter(&d->g->n, EP_N_C, jc, nc, sh->noff_c);
            ep_block_strides(sh->noff_b, nc, NR, sh->nbs_b);
            ep_block_strides(sh->noff_c, nc, NR, sh->nbs_c);
        }
        for (ep_dim_t pc = 0; pc < K; pc += bk->kc) {      // pc: KC of k
            ep_dim_t kc = K - pc < bk->kc ? K - pc : bk->kc;
            T beta_pc = pc == 0 ? beta : (T)1;             // later blocks add
            if (tid == 0) {
                ep_scatter(&d->g->k, EP_K_A, pc, kc, sh->koff_a);
                ep_scatter(&d->g->k, EP_K_B, pc, kc, sh->koff_b);
                for (int t = 0; t < nt && t < EP_MBLOCK_COUNTERS; t++)
                    sh->mblocks[t].taken = 0;   // read after the barriers below
                sh->ks_a = ep_regular_stride(sh->koff_a, kc);
                sh->ks_b = ep_regular_stride(sh->koff_b, kc);
            }
            EP_BARRIER(nt);
            // prepacked B: this block's panel, in ep_pack_b_all's order
            if (bpre)
                bp = (T *)bpre + EP_PACKED_B_BLOCK(jc, pc, bk->nc, npanel, K, NR);
            // pack the kc x nc panel of B, micro-panels shared out; panels
            // the kernel can read in place (sh->direct_b) are skipped
            ep_dim_t jp0 = npanel * tid / nt, jp1 = npanel * (tid + 1) / nt;
            if (!bpre && d->cplx)               // complex B as 2x2 real blocks
                EP_PFX(pack_b_1m)(NR, nc, kc, b, sh->noff_b, sh->koff_b,
                                  d->cplx, jp0, jp1, bp);
            else if (!bpre && !sh->direct_b)    // the whole range in one sweep
                EP_PFX(pack_b)(NR, nc, kc, b, sh->noff_b, sh->nbs_b,
                               sh->koff_b, sh->ks_b, jp0, jp1, bp);
            else if (!bpre)
                for (ep_dim_t jp = jp0; jp < jp1; jp++)
                    if (!EP_DIRECT_B(sh, jp, nc, NR))
                        EP_PFX(pack_b)(NR, nc, kc, b, sh->noff_b, sh->nbs_b,
                                       sh->koff_b, sh->ks_b, jp, jp + 1, bp);
            EP_BARRIER(nt);

            // m large: the MR panels of m are cut into MC blocks, equal to
            // the panel and a multiple of nt of them, which the threads
            // claim (ep_claim_mblock), each packing its own A.  m small:
            // every thread packs each A block and takes an equal slice of
            // the jr loop, so B is streamed once, not once per thread.
            ep_dim_t mpanels = (M + MR - 1) / MR;
            int split_ic = mpanels >= (ep_dim_t)nt * EP_SPLIT_M_MIN_PANELS;  // EP_LOOP_M
            ep_dim_t jr0 = split_ic ? 0 : npanel * tid / nt;
            ep_dim_t jr1 = split_ic ? npanel : npanel * (tid + 1) / nt;
            ep_dim_t nblk = (M + bk->mc - 1) / bk->mc;
            if (split_ic) nblk = (nblk + nt - 1) / nt * nt;
            for (ep_dim_t q = 0;; q++) {                   // ic: MC of m (L2)
                ep_dim_t blk = split_ic && nt > 1 ? ep_claim_mblock(sh, tid, nt, nblk) : q;
                if (blk < 0 || blk >= nblk) break;
                ep_dim_t ic = mpanels * blk / nblk * MR;
                ep_dim_t ic_end = mpanels * (blk + 1) / nblk * MR;
                if (ic_end > M) ic_end = M;
                ep_dim_t mc = ic_end - ic;
                if (mc <= 0) continue;
                ep_dim_t mpanel = (mc + MR - 1) / MR;
                ep_scatter(&d->g->m, EP_M_A, ic, mc, tb->moff_a);
                ep_scatter(&d->g->m, EP_M_C, ic, mc, tb->moff_c);
                ep_block_strides(tb->moff_a, mc, MR, tb->mbs_a);
                ep_block_strides(tb->moff_c, mc, MR, tb->mbs_c);
                EP_PFX(pack_a)(MR, mc, kc, a, tb->moff_a, tb->mbs_a,
                               sh->koff_a, sh->ks_a, 0, mpanel, ap);

                for (ep_dim_t jr = jr0; jr < jr1; jr++) {  // jr: NR of n
                    ep_dim_t j0 = jr * NR;
                    int nr = (int)(nc - j0 < NR ? nc - j0 : NR);
                    ep_inc_t cs = sh->nbs_c[jr];
                    int direct = EP_DIRECT_B(sh, jr, nc, NR);
                    const T *bpj = direct ? b + sh->koff_b[0] + sh->noff_b[j0]
                                          : bp + jr * NR * kc;
                    ep_inc_t ldb = direct ? sh->ks_b : NR;
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
                        jr + 1 < jr1 && !EP_DIRECT_B(sh, jr + 1, nc, NR)
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
                            kern(mr, nr, kc, api, bpj, ldb, cij, rs, cs, alpha,
                                 beta_pc, pf);
                            continue;
                        }
                        // scattered tile: through a private tile
                        u->UKR_FIELD(MR, NR, kc, api, bpj, ldb, ct, NR, 1, alpha,
                                     (T)0, pf);  // full tile: ct is MR x NR
                        for (int i = 0; i < mr; i++) {
                            T *ci = c + tb->moff_c[i0 + i];
                            for (int j = 0; j < nr; j++) {
                                T *e = ci + sh->noff_c[j0 + j];
                                *e = beta_pc == 0 ? ct[i * NR + j]
                                                  : ct[i * NR + j] + beta_pc * *e;
                            }
                        }
                    }
                }
            }
            EP_BARRIER(nt);   // B panel and k offsets are reused next pc
        }
    }
}

// k == 0 (or an empty k group of extent 0): C = beta * C; beta == 0 writes 0.
static void EP_PFX(scale_c)(const ep_gemm_desc_t *d, ep_shared_t *sh,
                            ep_thread_bufs_t *tb, T *c)
{
    const T beta = (T)d->beta;
    for (ep_dim_t ic = 0; ic < sh->M; ic += EP_SCALE_BLOCK) {
        ep_dim_t mc = sh->M - ic < EP_SCALE_BLOCK ? sh->M - ic : EP_SCALE_BLOCK;
        ep_scatter(&d->g->m, EP_M_C, ic, mc, tb->moff_c);
        for (ep_dim_t jc = 0; jc < sh->N; jc += EP_SCALE_BLOCK) {
            ep_dim_t nc = sh->N - jc < EP_SCALE_BLOCK ? sh->N - jc : EP_SCALE_BLOCK;
            ep_scatter(&d->g->n, EP_N_C, jc, nc, sh->noff_c);
            for (ep_dim_t i = 0; i < mc; i++)
                for (ep_dim_t j = 0; j < nc; j++) {
                    T *e = c + tb->moff_c[i] + sh->noff_c[j];
                    *e = beta == 0 ? (T)0 : beta * *e;
                }
        }
    }
}

// Pack every (jc, pc) block of one batch index of B into buf (one thread).
static void EP_PFX(pack_b_all)(const ep_gemm_desc_t *d, int NR, ep_dim_t K,
                               ep_dim_t N, ep_dim_t KC, ep_dim_t NC,
                               const T *b, T *buf, ep_inc_t *noff,
                               ep_inc_t *nbs, ep_inc_t *koff)
{
    for (ep_dim_t jc = 0; jc < N; jc += NC) {
        ep_dim_t nc = N - jc < NC ? N - jc : NC;
        ep_dim_t npanel = (nc + NR - 1) / NR;
        ep_scatter(&d->g->n, EP_N_B, jc, nc, noff);
        ep_block_strides(noff, nc, NR, nbs);
        for (ep_dim_t pc = 0; pc < K; pc += KC) {
            ep_dim_t kc = K - pc < KC ? K - pc : KC;
            ep_scatter(&d->g->k, EP_K_B, pc, kc, koff);
            if (d->cplx) {
                EP_PFX(pack_b_1m)(NR, nc, kc, b, noff, koff, d->cplx, 0, npanel,
                                  buf + EP_PACKED_B_BLOCK(jc, pc, NC, npanel, K, NR));
                continue;
            }
            EP_PFX(pack_b)(NR, nc, kc, b, noff, nbs, koff,
                           ep_regular_stride(koff, kc), 0, npanel,
                           buf + EP_PACKED_B_BLOCK(jc, pc, NC, npanel, K, NR));
        }
    }
}
