// ep_ukr_registry.c -- the kernel sets, one entry per ISA (ep_dispatch.c
// picks one at import).  The fields are documented in ep_ukr.h; the
// row counts and column limits that steer the schedule carry their
// measurements in ep_schedule.c.
#include "ep_ukr_kernels.h"

#define EP_L1_FNS(ISA)                                                        \
    .sdot4 = ep_sdot4_##ISA, .ddot4 = ep_ddot4_##ISA,                         \
    .sdot1 = ep_sdot1_##ISA, .ddot1 = ep_ddot1_##ISA,                         \
    .saxpy = ep_saxpy_##ISA, .daxpy = ep_daxpy_##ISA

const ep_ukr_set_t ep_ukr_set_generic = {
    .isa = EP_ISA_GENERIC, .name = "generic",
    .s_mr = 4, .s_nr = 16, .d_mr = 4, .d_nr = 8,
    .sgemm = ep_sgemm_ukr_ref_4x16, .dgemm = ep_dgemm_ukr_ref_4x8,
    EP_L1_FNS(ref),
    .ssmm = NULL, .dsmm = NULL, .smm_max_n_s = 0, .smm_max_n_d = 0,
    .s_narrow_nr = {0, 0}, .d_narrow_nr = {0, 0},
    .s_narrow = {NULL, NULL}, .d_narrow = {NULL, NULL},
    .smm_l1_cols_s = 0, .smm_l1_cols_d = 0,
    .direct_b_max_m_s = 256, .direct_b_max_m_d = 256,
};

#if defined(__x86_64__) || defined(_M_X64)
const ep_ukr_set_t ep_ukr_set_avx2 = {
    .isa = EP_ISA_AVX2, .name = "avx2",
    .s_mr = 6, .s_nr = 16, .d_mr = 6, .d_nr = 8,
    .sgemm = ep_sgemm_ukr_avx2_6x16, .dgemm = ep_dgemm_ukr_avx2_6x8,
    EP_L1_FNS(avx2),
    .ssmm = ep_ssmm_avx2, .dsmm = ep_dsmm_avx2, .smm_max_n_s = 64, .smm_max_n_d = 32,
    .ssmm_passes = ep_ssmm_b_passes_avx2, .dsmm_passes = ep_dsmm_b_passes_avx2,
    .s_narrow_nr = {0, 0}, .d_narrow_nr = {0, 0},
    .s_narrow = {NULL, NULL}, .d_narrow = {NULL, NULL},
    .smm_l1_cols_s = 24, .smm_l1_cols_d = 12,
    .direct_b_max_m_s = 16, .direct_b_max_m_d = 6,
};

#ifndef EP_NO_AVX512
const ep_ukr_set_t ep_ukr_set_avx512 = {
    .isa = EP_ISA_AVX512, .name = "avx512",
    .s_mr = 8, .s_nr = 48, .d_mr = 8, .d_nr = 24,
    .sgemm = ep_sgemm_ukr_avx512_8x48, .dgemm = ep_dgemm_ukr_avx512_8x24,
    EP_L1_FNS(avx512),
    .ssmm = ep_ssmm_avx512, .dsmm = ep_dsmm_avx512,
    .ssmm_passes = ep_ssmm_b_passes_avx512, .dsmm_passes = ep_dsmm_b_passes_avx512,
    .smm_max_n_s = 128, .smm_max_n_d = 64,
    .s_narrow_nr = {16, 32}, .d_narrow_nr = {8, 16},
    .s_narrow = {ep_sgemm_ukr_avx512_8x16, ep_sgemm_ukr_avx512_8x32},
    .d_narrow = {ep_dgemm_ukr_avx512_8x8, ep_dgemm_ukr_avx512_8x16},
    .smm_l1_cols_s = 0, .smm_l1_cols_d = 0,
    .direct_b_max_m_s = 256, .direct_b_max_m_d = 256,
};
#endif
#endif
