// ep_api.h -- the public C API of einplan's core: the GEMM descriptor, the
// entry points, configuration.  Declared to Cython once, in kernels.pxd.
#ifndef EP_API_H
#define EP_API_H

#include "ep_types.h"

// Indices into ep_group_t.stride[] for each role.  A role group is a list of
// axes (outer to inner) after merging; each axis has one extent and one
// stride per operand that holds it (TBLIS's block-scatter idea).
enum { EP_M_A = 0, EP_M_C = 1 };                 // m     : (A, C)
enum { EP_N_B = 0, EP_N_C = 1 };                 // n     : (B, C)
enum { EP_K_A = 0, EP_K_B = 1 };                 // k     : (A, B)
enum { EP_BATCH_A = 0, EP_BATCH_B = 1, EP_BATCH_C = 2 };  // batch : (A, B, C)

typedef struct {
    int ndim;
    ep_dim_t extent[EP_MAXDIM];
    ep_inc_t stride[3][EP_MAXDIM];   // [operand of the role][axis]
} ep_group_t;

// The four role groups of one GEMM: validated once (by the Cython layer)
// and shared by every call of a cached plan.
typedef struct {
    ep_group_t m, n, k, batch;
} ep_groups_t;

// C[batch, m, n] = alpha * sum_k A[batch, m, k] B[batch, k, n]
//                  + beta * C[batch, m, n]
// Pointers are to element 0 of each group; all strides in elements.  The
// descriptor is small (the groups are behind a pointer) so each call and
// thread can have its own copy.
typedef struct {
    ep_dtype_t dtype;
    const ep_groups_t *g;
    const void *a;
    const void *b;
    void *c;
    double alpha, beta;
    int nthreads;                    // <= 0: the library's setting
    const void *b_packed;            // B prepacked by ep_pack_b_all, or NULL
    int cplx;                        // EP_CPLX_* flags: 0 for a real GEMM
    // the schedule made for this descriptor when it was planned, or NULL:
    // ep_gemm runs it while ep_schedule_holds, else schedules the call
    const struct ep_schedule *sched;
} ep_gemm_desc_t;

// Complex GEMM by the 1m method (Van Zee & Smith, SIAM J. Sci. Comput.
// 2020): A, B, C are complex arrays seen as real ones, and the groups are
// those of the real GEMM of doubled extent -- n and k each end in an
// extent-2 axis (re, im): stride 1 in C and A, stride 0 in B.  A and C are
// then plain real operands; B is packed with each complex element as the
// real 2x2 block [[re, im], [-im, re]] over (2 real k rows) x (2 real
// columns), so the real micro-kernel computes the complex product (8 real
// flops per complex multiply-add, the complex count).  CONJ_A / CONJ_B
// conjugate an operand inside B's packing.
enum { EP_CPLX_1M = 1, EP_CPLX_CONJ_A = 2, EP_CPLX_CONJ_B = 4 };
// ep_shared_t.b_by_panel for a real B packed one NR panel at a time
enum { EP_B_BY_PANEL_REAL = 8 };

// What ep_gemm will do with a descriptor (ep_schedule.c): which path, how
// many threads over which loop, which blocking.  A plan makes it once per
// GEMM step and keeps it with the descriptor (desc.sched); ep_gemm runs
// exactly this, and explain prints it.  It holds for the thread count,
// kernel set and B packing it was made for (the for_* fields): a call
// with another thread count is scheduled again.
typedef enum { EP_PATH_EMPTY = 0, EP_PATH_GEMM = 1, EP_PATH_GEMV = 2,
               EP_PATH_SMM = 3 } ep_path_t;
// (EP_LOOP_K: blocks of k, each thread's partial sums added in thread
// order -- the GEMV path's few rows against a few columns, ep_gemv.c)
typedef enum { EP_LOOP_NONE = 0, EP_LOOP_BATCH = 1, EP_LOOP_M = 2,
               EP_LOOP_N = 3, EP_LOOP_K = 4 } ep_loop_t;
typedef struct { int mr, nr; ep_dim_t mc, kc, nc; } ep_blocking_t;
// How the packed path takes B: packed, read in place, or whichever of the
// two this process measures faster for calls of its kind (ep_schedule.c)
typedef enum { EP_B_PACKED = 0, EP_B_IN_PLACE = 1, EP_B_MEASURED = 2 } ep_b_way_t;
typedef struct ep_schedule {
    ep_path_t path;
    int nthreads;          // threads the call will use
    ep_loop_t loop;        // what they share out
    ep_blocking_t bk;      // effective MC/KC/NC (GEMM path)
    int direct_b;          // full B panels read in place (small m):
                           // EP_B_IN_PLACE, EP_B_PACKED or EP_B_MEASURED
    int b_by_panel;        // small m, 1m or a real B past L2 taken packed
                           // (EP_B_MEASURED): each NR panel of B packed right
                           // before the A panels meet it (ep_schedule.c)
    ep_dim_t M, N, K, NB;
    int for_threads;       // the thread count asked for (clamped)
    int for_isa;           // the kernel set (ep_isa_t)
    int for_b_packed;      // B prepacked (ep_pack_b_all)
} ep_schedule_t;
void ep_gemm_schedule(const ep_gemm_desc_t *desc, ep_schedule_t *s);
// The packed path's schedule whatever the shape (no GEMV, no smm, no B read
// in place): tests hand it to ep_gemm (desc.sched) to run the five loops on
// shapes the schedule sends elsewhere.
void ep_gemm_schedule_packed(const ep_gemm_desc_t *desc, ep_schedule_t *s);
// The schedule still fits a call of this descriptor: same thread count
// asked for, same kernel set, same B packing.
int ep_schedule_holds(const ep_schedule_t *s, const ep_gemm_desc_t *desc);
// The schedule ep_gemm runs for a call: the descriptor's planned one
// (desc->sched) while it holds, else this call's, made in *now.
const ep_schedule_t *ep_call_schedule(const ep_gemm_desc_t *desc, ep_schedule_t *now);

// The way a call of schedule s takes B now: EP_B_IN_PLACE or EP_B_PACKED,
// or -1 while its kind is still measured (s->direct_b == EP_B_MEASURED).
int ep_b_way_now(const ep_schedule_t *s, int dtype);

// Runs the packed GEMM.  The caller (the Cython layer) has checked extents,
// overflow and bounds; ep_gemm only fails on allocation.
ep_status_t ep_gemm(const ep_gemm_desc_t *desc);

// Prepacked B (constant operands, packed once): the kernel's panel format
// for every (batch, jc, pc) block of B, in the order ep_gemm reads them.
// It depends on the dtype, the ISA's NR and KC/NC, and K, N, NB -- never on
// the thread count.  ep_packed_b_size gives the elements needed.
ep_dim_t ep_packed_b_size(const ep_gemm_desc_t *desc);
ep_status_t ep_pack_b_all(const ep_gemm_desc_t *desc, void *buf);

// Permutation copy dst = src over ndim axes (ep_copy.c); strides in
// elements of itemsize bytes (1, 2, 4, 8 or 16).  ep_copy_schedule says what
// ep_copy_ex will do with the same arguments (explain prints it).
typedef enum { EP_COPY_EMPTY = 0,    // nothing to copy
               EP_COPY_RUN = 1,      // runs contiguous on both sides
               EP_COPY_TILE = 2,     // portable 2-D tiles
               EP_COPY_INTERLEAVE = 3,   // SIMD: `rows` src rows zipped into
                                         // one contiguous dst block
               EP_COPY_TRANSPOSE = 4 } ep_copy_kind_t;  // SIMD square tiles
typedef struct {
    int nthreads;          // > 0: exactly this many (tests); 0: by size
    int stream;            // 1 / 0: force non-temporal stores on / off;
                           // -1: when dst is half the L3 or more
} ep_copy_opts_t;
typedef struct {
    ep_copy_kind_t kind;
    int isa;               // ep_isa_t of the kernel (generic for RUN, TILE)
    int nthreads;
    int stream;            // dst written with non-temporal stores
    int rows;              // INTERLEAVE: src rows zipped; TRANSPOSE: tile edge
    int ndim;              // axes after dropping 1s and merging
} ep_copy_schedule_t;
void ep_copy_schedule(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                      const ep_inc_t *d_st, int itemsize,
                      const ep_copy_opts_t *opt, ep_copy_schedule_t *out);
ep_status_t ep_copy_ex(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                       const ep_inc_t *d_st, int itemsize, const void *src,
                       void *dst, const ep_copy_opts_t *opt);

// Blocking sizes used for a dtype with the current ISA.
ep_blocking_t ep_blocking(ep_dtype_t dtype);

// Run-time dispatch (ep_dispatch.c).
int ep_isa(void);                    // ep_isa_t in use
int ep_isa_supported(int isa);       // CPU and OS support it
int ep_set_isa(int isa);             // force one (0 on success)
const char *ep_isa_name(int isa);
int ep_isa_tile(int isa, ep_dtype_t dtype, int *mr, int *nr);
// Run one micro-kernel of a given ISA, storing its m x n corner (tests).
int ep_run_ukr(int isa, ep_dtype_t dtype, int m, int n, ep_dim_t k,
               const void *a, const void *b, void *c, ep_inc_t rs_c,
               ep_inc_t cs_c, double alpha, double beta);
// Best GFLOP/s of timings of `reps` back-to-back micro-kernel calls of a
// given ISA on panels in L1, repeated for `seconds` (ep_probe.c; -1 if the ISA cannot run).
double ep_probe_ukr_gflops(int isa, ep_dtype_t dtype, int reps, double seconds);

// Caches in bytes as read from the system (ep_cpu.c; 0 if unknown); the
// L3 at most 16 MiB per online CPU, which is what every decision counts on.
void ep_cache_sizes(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3);
// The same with the L3 as the system reports it (show_config).
void ep_cache_sizes_reported(ep_dim_t *l1d, ep_dim_t *l2, ep_dim_t *l3);

// Threads (ep_threads.c).
#define EP_MAX_THREADS 512
void ep_set_num_threads(int n);
int ep_get_num_threads(void);
int ep_max_threads(void);
int ep_in_forked_child(void);
int ep_clamp_threads(int n);   /* 1 in a forked child, at most EP_MAX_THREADS */
int ep_have_openmp(void);
// For tests: one region of nt threads placed as the kernels' regions are;
// writes each thread's CPU (-1 unknown) and returns the team's size,
// negated when the team was left unplaced (one CPU, the user's binding).
int ep_probe_team_cpus(int nt, int *cpu);
// For tests: the smm path's measured block of k for a far-strided A
// (ep_smm.c): the way chosen (-1 while measuring), the calls that took a
// turn, and the multiply-adds timed so far.
void ep_smm_far_state(int *pick, int64_t *turns, int64_t *timed_work);

#endif
