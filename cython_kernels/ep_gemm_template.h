// ep_gemm_template.h -- the three outer loops of the packed GEMM (BLIS's
// blocked driver) for one element type: jc over NC columns of n, pc over
// KC of k (pack B), ic over MC rows of m (pack A), each block handed to the
// macro-kernel (ep_macro_kernel_template.h).  Included by ep_gemm.c once
// per dtype with T and EP_PFX(x).

// One GEMM (one batch index), run by all `nt` threads of the enclosing
// parallel region together; thread `tid` takes its share of each loop:
// of m's MC blocks when the schedule split m (`split_m`), else of n's NR
// panels.  Each thread computes whole C tiles with the same k order
// whatever nt is, so results are bitwise identical for any thread count.
// `ah`: the next GEMM's blocks, fetched a few lines per C tile, or NULL.
static void EP_PFX(gemm_blocked)(const ep_gemm_desc_t *d, const ep_ukr_set_t *u,
                                 const ep_blocking_t *bk, ep_shared_t *sh,
                                 ep_thread_bufs_t *tb, const T *a, const T *b,
                                 const T *bpre, T *c, int tid, int nt,
                                 int split_m, ep_ahead_t *ah)
{
    const int MR = bk->mr, NR = bk->nr;
    const ep_dim_t M = sh->M, N = sh->N, K = sh->K;
    const T alpha = (T)d->alpha, beta = (T)d->beta;
    T *bp = (T *)sh->bpack;
    T *ap = (T *)tb->apack;

    for (ep_dim_t jc = 0; jc < N; jc += bk->nc) {          // jc: NC of n (L3)
        ep_dim_t nc = N - jc < bk->nc ? N - jc : bk->nc;
        ep_dim_t npanel = (nc + NR - 1) / NR;
        if (tid == 0 && sh->n_at != jc) {
            ep_scatter(&d->g->n, EP_N_B, jc, nc, sh->noff_b);
            ep_scatter(&d->g->n, EP_N_C, jc, nc, sh->noff_c);
            ep_block_strides(sh->noff_b, nc, NR, sh->nbs_b);
            ep_block_strides(sh->noff_c, nc, NR, sh->nbs_c);
            sh->n_at = jc;
        }
        for (ep_dim_t pc = 0; pc < K; pc += bk->kc) {      // pc: KC of k
            ep_dim_t kc = K - pc < bk->kc ? K - pc : bk->kc;
            T beta_pc = pc == 0 ? beta : (T)1;             // later blocks add
            if (tid == 0) {
                if (sh->k_at != pc) {
                    ep_scatter(&d->g->k, EP_K_A, pc, kc, sh->koff_a);
                    ep_scatter(&d->g->k, EP_K_B, pc, kc, sh->koff_b);
                    sh->ks_a = ep_regular_stride(sh->koff_a, kc);
                    sh->ks_b = ep_regular_stride(sh->koff_b, kc);
                    sh->k_at = pc;
                }
                for (int t = 0; t < nt && t < EP_MBLOCK_COUNTERS; t++)
                    sh->mblocks[t].taken = 0;   // read after the barriers below
            }
            EP_BARRIER(nt);
            // prepacked B: this block's panel, in ep_pack_b_all's order
            if (bpre)
                bp = (T *)bpre + EP_PACKED_B_BLOCK(jc, pc, bk->nc, npanel, K, NR);
            // pack the kc x nc panel of B, micro-panels shared out; panels
            // the kernel can read in place (sh->direct_b) are skipped
            ep_dim_t jp0 = npanel * tid / nt, jp1 = npanel * (tid + 1) / nt;
            if (!bpre && sh->b_by_panel)
                ;                               // packed in the macro-kernel
            else if (!bpre && d->cplx)          // complex B as 2x2 real blocks
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
            ep_dim_t jr0 = split_m ? 0 : npanel * tid / nt;
            ep_dim_t jr1 = split_m ? npanel : npanel * (tid + 1) / nt;
            ep_dim_t nblk = (M + bk->mc - 1) / bk->mc;
            if (split_m) nblk = (nblk + nt - 1) / nt * nt;
            for (ep_dim_t q = 0;; q++) {                   // ic: MC of m (L2)
                ep_dim_t blk = split_m && nt > 1 ? ep_claim_mblock(sh, tid, nt, nblk) : q;
                if (blk < 0 || blk >= nblk) break;
                ep_dim_t ic = mpanels * blk / nblk * MR;
                ep_dim_t ic_end = mpanels * (blk + 1) / nblk * MR;
                if (ic_end > M) ic_end = M;
                ep_dim_t mc = ic_end - ic;
                if (mc <= 0) continue;
                ep_dim_t mpanel = (mc + MR - 1) / MR;
                if (tb->m_at != ic) {
                    ep_scatter(&d->g->m, EP_M_A, ic, mc, tb->moff_a);
                    ep_scatter(&d->g->m, EP_M_C, ic, mc, tb->moff_c);
                    ep_block_strides(tb->moff_a, mc, MR, tb->mbs_a);
                    ep_block_strides(tb->moff_c, mc, MR, tb->mbs_c);
                    tb->m_at = ic;
                }
                EP_PFX(pack_a)(MR, mc, kc, a, tb->moff_a, tb->mbs_a,
                               sh->koff_a, sh->ks_a, 0, mpanel, ap);

                EP_PFX(macro_kernel)(u, sh, tb, MR, NR, mc, nc, kc, jr0, jr1,
                                     ap, bp, b, c, alpha, beta_pc, ah);
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
