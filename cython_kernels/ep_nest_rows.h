// ep_nest_rows.h -- the loop-nest engine's row kernels for one ISA and one
// dtype, as a table of function pointers (ep_nest.c picks one per call).
// Each ISA's kernels are their own translation unit (ep_nest_rows_*.c), so
// the build compiles them side by side.
#ifndef EP_NEST_ROWS_H
#define EP_NEST_ROWS_H
#include "ep_types.h"

typedef void (*ep_row_sum_fn)(int nm, const void *const *p, const ep_inc_t *s, ep_dim_t n,
                              void *res);
typedef void (*ep_row_prod_fn)(int nm, const void *const *p, const ep_inc_t *s, ep_dim_t n,
                               void *o, ep_inc_t so, const void *c, int first);
typedef void (*ep_rows_sum_fn)(int nm, const void *const *p, const ep_inc_t *s, ep_dim_t n,
                               const ep_inc_t *rs, ep_dim_t R, void *o, ep_inc_t so,
                               int first, int nf, const void *const *f, const ep_inc_t *fs,
                               int seq);
typedef void (*ep_rows_prod_fn)(int nm, const void *const *p, const ep_inc_t *s, ep_dim_t n,
                                const ep_inc_t *rs, ep_dim_t R, void *o, ep_inc_t so,
                                ep_inc_t sor, int first, int nf, const void *const *f,
                                const ep_inc_t *fs, int seq);
typedef void (*ep_short_rows_fn)(int nin, const void *const *p, const ep_inc_t *ro,
                                 const ep_inc_t *rs, const ep_inc_t *rl, ep_dim_t R, int S,
                                 ep_dim_t n, void *o, ep_inc_t oo, ep_inc_t os, ep_inc_t ol,
                                 int first, void *buf);
typedef void (*ep_row_dotc_fn)(const void *const *p, const ep_inc_t *s, ep_dim_t n, void *res);
typedef void (*ep_ctile_fn)(const void *x, ep_inc_t xk, ep_inc_t xv, const void *y, ep_inc_t yw,
                            ep_inc_t yk, ep_dim_t W, ep_dim_t K, ep_dim_t V, ep_dim_t vall,
                            ep_dim_t wall, void *o, ep_inc_t ow, ep_inc_t ov, int first, void *buf);
typedef ep_dim_t (*ep_ctile_buffer_fn)(void);
typedef void (*ep_tpair_fn)(const void *x, ep_inc_t xs, ep_inc_t xr, const void *y, ep_inc_t ys,
                            ep_inc_t yi, ep_dim_t R, ep_dim_t n, void *o, ep_inc_t orr,
                            ep_inc_t oi, int first);
typedef void (*ep_stream_prod_fn)(int nm, const void *const *p, ep_dim_t n, void *o,
                                  const void *c, int first, int halves);
typedef void (*ep_stream_sum_fn)(int nm, const void *const *p, ep_dim_t n, void *res,
                                 int halves);
typedef ep_dim_t (*ep_short_buffer_fn)(int nin, const ep_inc_t *rs, const ep_inc_t *rl, int S,
                                       ep_dim_t n);
typedef void (*ep_pack_fn)(const void *x, ep_inc_t sr, ep_inc_t si, ep_dim_t R, ep_dim_t n,
                           void *buf, int streams);
typedef struct {
    ep_row_sum_fn sum;
    ep_row_prod_fn prod;
    ep_rows_sum_fn rows_sum;
    ep_rows_prod_fn rows_prod;
    ep_short_rows_fn short_rows;
    ep_short_buffer_fn short_buffer;
    ep_pack_fn pack;
    ep_row_dotc_fn dotc;     // complex only: sum conj(x) * y (NULL for real types)
    ep_ctile_fn ctile;       // the register-tile kernel
    ep_ctile_buffer_fn ctile_buffer;
    ep_tpair_fn tpair;       // real only: a tile of two inputs crossed in their unit strides
    ep_stream_prod_fn stream_prod;  // real, 64-byte vectors only: a contiguous row's
                                    // products, loads whole or in halves (NULL elsewhere)
    ep_stream_sum_fn stream_sum;    // the same for a contiguous row's sum (complex too)
} ep_rows_t;

#define EP_ROWS(p, dotc, ct, ctb, tp, sp, ss) { (ep_row_sum_fn)p##row_sum, (ep_row_prod_fn)p##row_prod, \
                     (ep_rows_sum_fn)p##rows_sum, (ep_rows_prod_fn)p##rows_prod, \
                     (ep_short_rows_fn)p##short_rows, (ep_short_buffer_fn)p##short_buffer, \
                     (ep_pack_fn)p##pack, (ep_row_dotc_fn)dotc, (ep_ctile_fn)ct, \
                     (ep_ctile_buffer_fn)ctb, (ep_tpair_fn)tp, (ep_stream_prod_fn)sp, \
                     (ep_stream_sum_fn)ss }
#define EP_RROWS(p) EP_ROWS(p, NULL, p##ctile, p##ctile_buffer, p##tpair, NULL, NULL)
#define EP_RROWS_HALVES(p) EP_ROWS(p, NULL, p##ctile, p##ctile_buffer, p##tpair, \
                                   p##stream_prod, p##stream_sum)
#define EP_CROWS(p) EP_ROWS(p, p##row_dotc, p##ctile, p##ctile_buffer, NULL, NULL, NULL)
#define EP_CROWS_HALVES(p) EP_ROWS(p, p##row_dotc, p##ctile, p##ctile_buffer, NULL, NULL, \
                                   p##stream_sum)

// [dtype]: float32, float64, complex64, complex128 (ep_nest.h's EP_NEST_*)
extern const ep_rows_t ep_nest_rows_generic[4];
#if defined(__x86_64__) || defined(_M_X64)
extern const ep_rows_t ep_nest_rows_avx2[4];
extern const ep_rows_t ep_nest_rows_avx512[4];
#endif
#endif
