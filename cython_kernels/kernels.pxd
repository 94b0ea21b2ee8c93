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

    ctypedef struct ep_gemm_desc_t:
        ep_dtype_t dtype
        const ep_groups_t *g
        const void *a
        const void *b
        void *c
        double alpha, beta
        int nthreads
        const void *b_packed

    ctypedef struct ep_blocking_t:
        int mr, nr
        ep_dim_t mc, kc, nc

    ep_status_t ep_gemm(const ep_gemm_desc_t *desc)
    ep_dim_t ep_packed_b_size(const ep_gemm_desc_t *desc)
    ep_status_t ep_pack_b_all(const ep_gemm_desc_t *desc, void *buf)
    ep_blocking_t ep_blocking(ep_dtype_t dtype)
    int ep_isa()
    int ep_isa_supported(int isa)
    int ep_set_isa(int isa)
    const char *ep_isa_name(int isa)
    int ep_isa_tile(int isa, ep_dtype_t dtype, int *mr, int *nr)
    int ep_run_ukr(int isa, ep_dtype_t dtype, int m, int n, ep_dim_t k,
                   const void *a, const void *b, void *c, ep_inc_t rs_c,
                   ep_inc_t cs_c, double alpha, double beta)
    void ep_cache_sizes(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3)
    void ep_set_num_threads(int n)
    int ep_get_num_threads()
    int ep_have_openmp()
