# The whole C interface of einplan's core, on one screen (ep_api.h).
from libc.stdint cimport int64_t

cdef extern from "ep_api.h" nogil:
    ctypedef int64_t ep_dim_t
    ctypedef int64_t ep_inc_t
    enum: EP_MAXDIM
    ctypedef enum ep_dtype_t:
        EP_FLOAT32
        EP_FLOAT64
    ctypedef enum ep_status_t:
        EP_OK
        EP_ERR_NOMEM
        EP_ERR_INVALID

    ctypedef struct ep_group_t:
        int ndim
        ep_dim_t extent[EP_MAXDIM]
        ep_inc_t stride[3][EP_MAXDIM]

    ctypedef struct ep_groups_t:
        ep_group_t m, n, k, batch

    enum: EP_N_B, EP_N_C, EP_K_A, EP_K_B
    enum:
        EP_CPLX_1M
        EP_CPLX_CONJ_A
        EP_CPLX_CONJ_B


    ctypedef struct ep_blocking_t:
        int mr, nr
        ep_dim_t mc, kc, nc

    ctypedef enum ep_path_t:
        EP_PATH_EMPTY
        EP_PATH_GEMM
        EP_PATH_GEMV
        EP_PATH_SMM
    ctypedef enum ep_loop_t:
        EP_LOOP_NONE
        EP_LOOP_BATCH
        EP_LOOP_M
        EP_LOOP_N
        EP_LOOP_K
    enum:
        EP_B_PACKED
        EP_B_IN_PLACE
        EP_B_MEASURED
    ctypedef struct ep_schedule_t:
        ep_path_t path
        int nthreads
        ep_loop_t loop
        ep_blocking_t bk
        int direct_b
        int b_by_panel
        ep_dim_t M, N, K, NB
        int for_threads
        int for_isa
        int for_b_packed

    ctypedef struct ep_gemm_desc_t:
        ep_dtype_t dtype
        const ep_groups_t *g
        const void *a
        const void *b
        void *c
        double alpha, beta
        int nthreads
        const void *b_packed
        int cplx
        const ep_schedule_t *sched
    void ep_gemm_schedule(const ep_gemm_desc_t *desc, ep_schedule_t *s)
    void ep_gemm_schedule_packed(const ep_gemm_desc_t *desc, ep_schedule_t *s)
    int ep_schedule_holds(const ep_schedule_t *s, const ep_gemm_desc_t *desc)
    const ep_schedule_t *ep_call_schedule(const ep_gemm_desc_t *desc, ep_schedule_t *now)
    ep_status_t ep_gemm(const ep_gemm_desc_t *desc)
    int ep_b_way_now(const ep_schedule_t *s, int dtype)
    ctypedef enum ep_copy_kind_t:
        EP_COPY_EMPTY
        EP_COPY_RUN
        EP_COPY_TILE
        EP_COPY_INTERLEAVE
        EP_COPY_TRANSPOSE
    ctypedef struct ep_copy_opts_t:
        int nthreads
        int stream
    ctypedef struct ep_copy_schedule_t:
        ep_copy_kind_t kind
        int isa
        int nthreads
        int stream
        int rows
        int ndim
    void ep_copy_schedule(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                          const ep_inc_t *d_st, int itemsize, const ep_copy_opts_t *opt,
                          ep_copy_schedule_t *out)
    ep_status_t ep_copy_ex(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                           const ep_inc_t *d_st, int itemsize, const void *src, void *dst,
                           const ep_copy_opts_t *opt)
    ep_dim_t ep_packed_b_size(const ep_gemm_desc_t *desc)
    ep_status_t ep_pack_b_all(const ep_gemm_desc_t *desc, void *buf)
    ep_blocking_t ep_blocking(ep_dtype_t dtype)
    int ep_isa()
    int ep_isa_supported(int isa)
    int ep_set_isa(int isa)
    const char *ep_isa_name(int isa)
    int ep_isa_tile(int isa, ep_dtype_t dtype, int *mr, int *nr)
    double ep_probe_ukr_gflops(int isa, ep_dtype_t dtype, int reps, double seconds)
    int ep_run_ukr(int isa, ep_dtype_t dtype, int m, int n, ep_dim_t k,
                   const void *a, const void *b, void *c, ep_inc_t rs_c,
                   ep_inc_t cs_c, double alpha, double beta)
    void ep_cache_sizes(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
    void ep_cache_sizes_reported(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
    void ep_set_num_threads(int n)
    int ep_get_num_threads()
    int ep_max_threads()
    int ep_in_forked_child()
    int ep_have_openmp()
    int ep_probe_team_cpus(int nt, int *cpu) nogil
    void ep_smm_far_state(int *pick, int64_t *turns, int64_t *timed_work)
