// ep_nest.h -- the loop-nest engine: a sum of products over a nest of loops.
//
//     out[...] = sum over the loops of  in_0[...] * in_1[...] * ... * in_{n-1}[...]
//
// Every operand (the inputs, then the output) has one stride per loop, in
// elements of the dtype (a complex element counts as one); stride 0 means the
// operand does not vary along that loop: a broadcast input, or an axis the
// output sums over.  Loops run outer to inner in the order given; the caller
// (einplan/nest.py) has merged and ordered them.  The output is written, never
// cleared first: its first visit stores, later visits add.
#ifndef EP_NEST_H
#define EP_NEST_H

#include "ep_types.h"

#define EP_NEST_MAXIN 8      // inputs of one nest
#define EP_NEST_SHORT 8      // longest short loop the small-edge kernel holds in registers
#define EP_NEST_ACROSS_MAXE 64   // iterations of the block the across kernel runs per element
// Rows of 2..EP_PICK_N elements, fewer than a vector of 32 or 64 bytes, end
// to end, summed a vector of rows at a time by picking each row's elements
// into its lane (ep_nest_template.h's picked_n), forward rows dotted with a
// shared vector up to EP_PICK_SHARED_N of a real element of es bytes in
// vectors of vb bytes
#define EP_PICK_N 8
#define EP_PICK_SHARED_N(es, vb) ((vb) == 64 ? ((es) == 4 ? 5 : 7) : 3)

typedef enum { EP_NEST_F32 = 0, EP_NEST_F64 = 1, EP_NEST_C64 = 2,
               EP_NEST_C128 = 3 } ep_nest_dtype_t;

typedef struct {
    ep_nest_dtype_t dtype;
    int nin;                 // inputs, 0 < nin <= EP_NEST_MAXIN
    int ndim;                // loops, outer to inner (0: one product)
    ep_dim_t extent[EP_MAXDIM];
    ep_inc_t stride[EP_NEST_MAXIN + 1][EP_MAXDIM];   // inputs, then the output
    int split;               // loop the threads share out, -1: none
    int nthreads;            // most threads worth using (capped by the library's setting)
    int tile;                // > 0: the two innermost loops run in tiles of this edge
                             // along the outer of the two (inputs strided along the row
                             // and near unit-stride along the outer loop are copied
                             // per tile into contiguous rows first)
    int tile_row;            // the tiles' edge along the row (0: the same as tile)
    int transposed;          // 1: tiles of two inputs crossed in their unit strides (one
                             // unit along the row, the other copied per tile but unit
                             // along the loop around it; real; the output's row stride
                             // 0 or 1) read the copied one in place, transposed in
                             // registers (else ignored)
    ep_dim_t block;          // > 0: the innermost loop runs in blocks of this many
                             // elements, the block loop outside every other loop (what
                             // the outer loops re-read of a long row stays in cache)
    int block_outer;         // 1: the loop around the row runs in blocks instead (two
                             // operands crossed in their unit strides outside a shared
                             // row: each block a few runs of each, not one line of each
                             // of hundreds of rows); not with tiles or the small-edge,
                             // register-tile or threads' loop
    int short_loop;          // 1: the loop around the row (extent <= EP_NEST_SHORT) runs
                             // inside the row kernel with the row, its S partial sums or
                             // products in registers (the small-edge kernel); the output
                             // must be summed along exactly one of the two, and the
                             // threads' loop must be outside them (else ignored);
                             // 2: two inputs: the three innermost loops W, K, V run in
                             // the register-tile kernel (o[w,v] += x[k,v] * y[w,k], x
                             // constant along W, y along V, the output along K; the
                             // threads' loop outside them or V, else ignored)
    int across;              // > 0: the loop outside the `across` innermost loops runs
                             // across its elements in chunks, vector lanes along it:
                             // each input strided along it copied per chunk into rows
                             // (one per element of its block, the innermost loops'
                             // at most EP_NEST_ACROSS_MAXE iterations), each iteration
                             // of the block one row kernel call over the chunk; the
                             // threads' loop must be outside the block, no tiles,
                             // blocks or small-edge kernel (else ignored)
    int conj;                // 1: input 0 enters conjugated (numpy.vdot); only for a
                             // complex dot of two inputs over one loop (else invalid)
    int isa;                 // ep_isa_t of the inner loops, -1: the one in use
    const void *in[EP_NEST_MAXIN];
    void *out;
} ep_nest_desc_t;

ep_status_t ep_nest(const ep_nest_desc_t *d);

// The same nest on these operands and kernel set (d's own in/out/isa are
// not read): a descriptor shared by calls on several threads, each passing
// its pointers, with no copy of it per call.
ep_status_t ep_nest_run(const ep_nest_desc_t *d, const void *const *in, void *out, int isa);

// The threads ep_nest runs d with (its cap, the library's setting, OpenMP).
int ep_nest_threads(const ep_nest_desc_t *d);

// The kernel set whose row kernels run d under kernel set isa (-1: the one
// in use): a row that fills less than one vector of it may run narrower.
int ep_nest_row_isa(const ep_nest_desc_t *d, int isa);

// The order of row sums that stream an operand from memory (ep_nest.c):
// measured on the first such calls of each kind of row kernel, then fixed
// for the process.  The kinds: contiguous rows of one input summed and rows
// dotted (each shorter than EP_LONG_ROW bytes, and longer), rows summed into one
// output row (inputs at stride 1 or 2), one input's short strided rows, and
// complex dot rows (always one after another, not measured).
enum { EP_STREAM_FOUR = 0, EP_STREAM_ONE = 1, EP_STREAM_MEASURING = 2 };
enum { EP_STREAMS_NONE = 0, EP_STREAMS_SUMS = 1, EP_STREAMS_LONG_SUMS = 2, EP_STREAMS_DOTS = 3,
       EP_STREAMS_LONG_DOTS = 4, EP_STREAMS_INTO_ONE = 5, EP_STREAMS_STRIDED = 6,
       EP_STREAMS_COMPLEX = 7 };
#define EP_STREAM_KINDS 6                       // the measured kinds, 1 .. 6
#define EP_LONG_ROW 256                         // bytes of the shortest long row
// GEMV dot rows end to end run in the measured order up to three pages (Zen 4,
// 72 MB f64 / f32, GB/s one after another and four at a time: rows of 4480 bytes
// 30 / 38 and 15 / 16, of 13440 29 / 30 and 24 / 27); past that four at a time,
// each row a stream long enough for the prefetchers (17920: 20 / 19, 22 / 27)
#define EP_SEQ_DOT_ROW 12288
enum { EP_LOADS_PRODUCTS = 1, EP_LOADS_SUMS = 2 };
int ep_nest_stream_loads(const ep_nest_desc_t *d, int isa);  // EP_LOADS_*, 0: ep_load_width
int ep_nest_streams(const ep_nest_desc_t *d, int isa);  // d's rows' kind, EP_STREAMS_*
int ep_stream_order(int kind);                  // EP_STREAM_*
int ep_stream_next(int kind);                   // the order a measured call takes
void ep_stream_sample(int kind, int seq, int64_t bytes, int64_t ns);
// the state, and each order's bytes per ns so far
int ep_stream_report(int kind, double *gbs_one, double *gbs_four);
int ep_load_width(int kind);                    // 0 whole, 1 halves, -1 measuring
int ep_load_report(int kind, double *gbs_whole, double *gbs_halves);

#endif
