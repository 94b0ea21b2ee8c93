// ep_nest.c -- the loop-nest engine (see ep_nest.h): the nest of loops
// around one row kernel, threads over one loop, the row kernels per ISA.
//
// The innermost loop is a row.  Inputs that do not move along it (stride 0:
// a broadcast operand, a GEMV's vector in the axpy form) are multiplied once
// per row into a scale; the others feed a row kernel:
//   output stride 0 along the row -> row_sum (a reduction: blockwise,
//                                    several accumulators, pairwise blocks)
//   otherwise                      -> row_prod (elementwise into the output)
// each with a contiguous SIMD path and a strided (gather) path.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ep_api.h"
#include "ep_copy.h"
#include "ep_measured.h"
#include "ep_nest.h"
#include "ep_nest_rows.h"
#include "ep_omp.h"
#include "ep_workspace.h"
#include "ukr/ep_ukr.h"

#if defined(__x86_64__) || defined(_M_X64)
#define EP_NEST_X86 1
#endif

// ------------------------------------------------------------ row kernels
// per ISA and dtype, in ep_nest_rows_*.c
static const ep_rows_t *ep_rows_for(int isa, int dtype)
{
#ifdef EP_NEST_X86
#ifndef EP_NO_AVX512
    if (isa == EP_ISA_AVX512) return &ep_nest_rows_avx512[dtype];
#endif
    if (isa == EP_ISA_AVX2) return &ep_nest_rows_avx2[dtype];
#else
    (void)isa;
#endif
    return &ep_nest_rows_generic[dtype];
}

// Bytes of one element of d's dtype (a complex one: both parts).
static ep_dim_t ep_nest_elem_bytes(const ep_nest_desc_t *d)
{
    return d->dtype == EP_NEST_F32 ? 4 : d->dtype == EP_NEST_C128 ? 16 : 8;
}

#ifdef EP_NEST_X86
// Complex dot rows against one vector shared by every row ('ab,b->a'): the
// row kernels take a vector of such rows at a time (crows_dotv) while a row
// is at most two vectors of reals, so complex64 rows of 4-7 elements and
// complex128 rows of 2-3 stay on 64-byte vectors, where the AVX2 kernels
// would run them one at a time.  Calls of fewer rows than two such vectors'
// (a thread's share) would run them one at a time anyway.
#define EP_CDOTV_ROWS 64
static int ep_nest_cdotv(const ep_nest_desc_t *d)
{
    const int k = d->ndim - 1, o = d->nin;
    if (d->nin != 2 || k < 1 || d->tile || d->across || d->block ||
        d->extent[k - 1] < EP_CDOTV_ROWS || d->stride[o][k] != 0 || d->stride[o][k - 1] == 0)
        return 0;
    for (int v = 0; v < 2; v++)
        if (d->stride[v][k - 1] == 0 && d->stride[1 - v][k - 1] > 0 &&
            d->stride[1 - v][k] == 1)
            return 1;
    return 0;
}
#endif

int ep_nest_row_isa(const ep_nest_desc_t *d, int isa)
{
    if (isa < 0) isa = ep_isa();
#ifdef EP_NEST_X86
    // A complex row of half a 512-bit vector or more but less than one
    // (complex64 4-7 elements, complex128 2-3) runs in the AVX2 kernels,
    // which hold it in a 256-bit vector and an overlapping last one where
    // the AVX-512 ones keep it in scalars: 1 thread, rows of 5 c64,
    // 'ab,a->b' 0.54x -> 1.9x numpy, 'ab,ab->b' 1.2x -> 4.3x, 'ab->b' 1.6x
    // -> 3.2x; rows of 4 'ab,a->b' 0.11x -> 1.04x
    ep_dim_t n = d->ndim > 0 ? d->extent[d->ndim - 1] : 1;
    if (isa == EP_ISA_AVX512 && d->short_loop == 0 && !ep_nest_cdotv(d) &&
        ((d->dtype == EP_NEST_C64 && n >= 4 && n <= 7) ||
         (d->dtype == EP_NEST_C128 && n >= 2 && n <= 3)))
        return EP_ISA_AVX2;
#endif
    return isa;
}

// ------------------------------------------------------------ scalars
// a product or sum of elements held as double[2] (re, im), in the dtype's
// own precision
typedef struct { double re, im; } ep_val_t;

static inline ep_val_t ep_load(int dt, const char *p)
{
    ep_val_t v = {0, 0};
    switch (dt) {
    case EP_NEST_F32: v.re = *(const float *)p; break;
    case EP_NEST_F64: v.re = *(const double *)p; break;
    case EP_NEST_C64: v.re = ((const float *)p)[0]; v.im = ((const float *)p)[1]; break;
    default: v.re = ((const double *)p)[0]; v.im = ((const double *)p)[1]; break;
    }
    return v;
}

// a * b rounded as the dtype computes it
static inline ep_val_t ep_mul(int dt, ep_val_t a, ep_val_t b)
{
    ep_val_t r;
    if (dt == EP_NEST_F32) { r.re = (float)((float)a.re * (float)b.re); r.im = 0; }
    else if (dt == EP_NEST_F64) { r.re = a.re * b.re; r.im = 0; }
    else if (dt == EP_NEST_C64) {
        float ar = (float)a.re, ai = (float)a.im, br = (float)b.re, bi = (float)b.im;
        r.re = (float)(ar * br - ai * bi); r.im = (float)(ar * bi + ai * br);
    } else {
        r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re;
    }
    return r;
}

// *p = (add ? *p : 0) + v, in the dtype
static inline void ep_store(int dt, char *p, ep_val_t v, int add)
{
    switch (dt) {
    case EP_NEST_F32: *(float *)p = add ? *(float *)p + (float)v.re : (float)v.re; break;
    case EP_NEST_F64: *(double *)p = add ? *(double *)p + v.re : v.re; break;
    case EP_NEST_C64: {
        float *f = (float *)p;
        f[0] = add ? f[0] + (float)v.re : (float)v.re;
        f[1] = add ? f[1] + (float)v.im : (float)v.im;
        break;
    }
    default: {
        double *f = (double *)p;
        f[0] = add ? f[0] + v.re : v.re;
        f[1] = add ? f[1] + v.im : v.im;
    }
    }
}

static inline void ep_put(int dt, void *p, ep_val_t v)
{
    // v as the dtype's element (row_prod's scale argument)
    switch (dt) {
    case EP_NEST_F32: *(float *)p = (float)v.re; break;
    case EP_NEST_F64: *(double *)p = v.re; break;
    case EP_NEST_C64: ((float *)p)[0] = (float)v.re; ((float *)p)[1] = (float)v.im; break;
    default: ((double *)p)[0] = v.re; ((double *)p)[1] = v.im;
    }
}

// *dst = the nt partials part, part + step, ... summed in that order, in
// the dtype (the same result for the same thread count)
static void ep_sum_parts(int dt, char *dst, const char *part, size_t step, int nt)
{
    ep_store(dt, dst, ep_load(dt, part), 0);
    for (int t = 1; t < nt; t++) ep_store(dt, dst, ep_load(dt, part + t * step), 1);
}

// Elements input j spans over the whole nest (first to last, any signs)
static ep_dim_t ep_input_span(const ep_nest_desc_t *d, int j)
{
    ep_dim_t span = 1;
    for (int x = 0; x < d->ndim; x++) {
        ep_inc_t s = d->stride[j][x];
        span += (d->extent[x] - 1) * (s < 0 ? -s : s);
    }
    return span;
}

// ------------------------------------------------------------ stream order
// Row sums and a GEMV's dot rows that stream an operand from memory (one
// past half of L3: an L3 shared with other cores or guests holds less than
// its size -- in a Zen 4 guest with 32 MB, rows of 218 f32 over 20-32 MB
// read 9 GB/s four at a time, 27 one at a time) run four rows at a time
// (four interleaved streams: on an Intel Xeon 'bij,bj->bi'
// 256^3 f32 reads 28 GB/s so, 20 one row at a time) or one row after
// another (memory order: an AMD Zen 4 reads rows of 128-512 f32 at 9-12
// GB/s four at a time, 28-31 one at a time).  Which order a core prefers is
// measured on the calls themselves: until each order has read L3's size,
// turns of calls alternate between the two, timed, then the faster stays (an
// Emerald Rapids guest measured one after another 4-22% faster on six
// first calls of 'bij,bj->bi' 256^3 f32; with a 5% margin for four rows,
// one of the six kept four, 7% slower from L3).  Each kind of row kernel
// (ep_nest_streams) measures its own order: they disagree on one core
// (Zen 4: dot rows of 72 bytes measured four at a time faster, where
// 'bii->b' (182986,9,9) f64's diagonals read 4.5 ms one after another and
// 9.9 four at a time), and so do short rows and long ones of one kind
// (sums of rows of 5 f64 measure 4-8 GB/s either way and keep either; rows
// of 112 f64 read 26 GB/s one after another, 10 four at a time: 'abc->a'
// (73823,28,4) ran 0.26x numpy on the order rows of 5 chose).  Both orders
// sum each row the same way, so results do not depend on the choice.
// EINPLAN_STREAM_ROWS=1 or 4 fixes every kind.
// A turn is at least EP_STREAM_TURN bytes of consecutive calls: orders
// alternated call by call (a few KB each) time each call's first misses, not
// the streams ('abc,ac->b' (6675,3,423) f32, Zen 4, calls of three rows:
// alternated so, one after another measured 8.3 GB/s and four at a time
// 12.6, where whole calls ran 19 and 9).
#define EP_STREAM_TURN (256 << 10)
// Each thread's turn, within one run of a nest: the time between runs is
// not the rows'
static _Thread_local struct { int way; uint64_t run; int64_t bytes, t0; } ep_turn = {-1, 0, 0, 0};
static uint64_t ep_nest_runs;
static ep_measured_t ep_stream_way[EP_STREAM_KINDS + 1] = {   // way 0 four, 1 one
    [0 ... EP_STREAM_KINDS] = EP_MEASURED_INIT};
static int ep_stream_env_read;            // EINPLAN_STREAM_ROWS looked at

static ep_measured_t *ep_stream_of(int kind)
{
    return &ep_stream_way[kind >= 1 && kind <= EP_STREAM_KINDS ? kind : 0];
}

int ep_stream_order(int kind)
{
    if (!__atomic_load_n(&ep_stream_env_read, __ATOMIC_ACQUIRE)) {
        const char *e = getenv("EINPLAN_STREAM_ROWS");
        int fixed = e && e[0] == '1' && !e[1] ? EP_STREAM_ONE
                  : e && e[0] == '4' && !e[1] ? EP_STREAM_FOUR : -1;
        for (int k = 1; fixed >= 0 && k <= EP_STREAM_KINDS; k++) {
            int expect = -1;
            __atomic_compare_exchange_n(&ep_stream_way[k].pick, &expect, fixed, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        }
        __atomic_store_n(&ep_stream_env_read, 1, __ATOMIC_RELEASE);
    }
    int pick = ep_measured_pick(ep_stream_of(kind));
    return pick < 0 ? EP_STREAM_MEASURING : pick;
}

int ep_stream_next(int kind)
{
    return ep_measured_turn(ep_stream_of(kind));
}

void ep_stream_sample(int kind, int seq, int64_t bytes, int64_t ns)
{
    ep_dim_t l1 = 0, l2 = 0, l3 = 0;
    ep_cache_sizes(&l1, &l2, &l3);
    ep_measured_sample(ep_stream_of(kind), seq, bytes, ns, (int64_t)l3, 1.0);
}

int ep_stream_report(int kind, double *gbs_one, double *gbs_four)
{
    int st = ep_stream_order(kind);
    const ep_measured_t *m = ep_stream_of(kind);
    *gbs_one = (double)m->work[1] / ((double)m->ns[1] + 1e-9);
    *gbs_four = (double)m->work[0] / ((double)m->ns[0] + 1e-9);
    return st;
}

// ------------------------------------------------------------ load width
// A contiguous row of products (one or two inputs into a unit-stride
// output) past L2 streams from L3 or memory, one summed past L3 from memory.
// A core whose 64-byte loads are two 32-byte loads inside (AMD Zen 4)
// streams such rows 10-15% faster loading each vector as two halves
// ('a,a->a' 3.3M float32: 0.92 ms, 1.03 whole; 'a->' 7.6M float64 25-33
// GB/s, 22-27 whole); one that loads 64 bytes at once gains nothing by it.
// So, as for the stream order, calls take the two ways in turn, timed,
// until each has moved four times L3's size, and the faster stays: both
// compute the same products and sums.  Products and sums are measured
// apart (calls of the two kinds alternating would give each kind one way).
// EINPLAN_STREAM_LOADS=whole or halves fixes both.
static ep_measured_t ep_load_way[2] = {EP_MEASURED_INIT, EP_MEASURED_INIT};  // 0 whole, 1 halves
static int ep_load_env_read;

static ep_measured_t *ep_load_of(int kind)
{
    return &ep_load_way[kind == EP_LOADS_SUMS];
}

int ep_load_width(int kind)
{
    if (!__atomic_load_n(&ep_load_env_read, __ATOMIC_ACQUIRE)) {
        const char *e = getenv("EINPLAN_STREAM_LOADS");
        int fixed = e && !strcmp(e, "whole") ? 0 : e && !strcmp(e, "halves") ? 1 : -1;
        for (int k = 0; fixed >= 0 && k < 2; k++) {
            int expect = -1;
            __atomic_compare_exchange_n(&ep_load_way[k].pick, &expect, fixed, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        }
        __atomic_store_n(&ep_load_env_read, 1, __ATOMIC_RELEASE);
    }
    return ep_measured_pick(ep_load_of(kind));
}

int ep_load_report(int kind, double *gbs_whole, double *gbs_halves)
{
    int st = ep_load_width(kind);
    const ep_measured_t *m = ep_load_of(kind);
    *gbs_whole = (double)m->work[0] / ((double)m->ns[0] + 1e-9);
    *gbs_halves = (double)m->work[1] / ((double)m->ns[1] + 1e-9);
    return st;
}

// Whether d is one contiguous row of products that streams past L2 (each
// thread's part of it) or of sums that streams from memory (past L3), in
// kernels that load it whole or in halves (above): EP_LOADS_PRODUCTS,
// EP_LOADS_SUMS, or 0.
int ep_nest_stream_loads(const ep_nest_desc_t *d, int isa)
{
    if (d->ndim != 1 || d->tile > 0 || d->short_loop || d->conj)
        return 0;
    ep_inc_t so = d->stride[d->nin][0];
    const ep_rows_t *rows = ep_rows_for(ep_nest_row_isa(d, isa), d->dtype);
    if (so == 1 ? !rows->stream_prod : so != 0 || !rows->stream_sum) return 0;
    int nm = 0;
    for (int j = 0; j < d->nin; j++) {
        if (d->stride[j][0] == 0) continue;
        if (d->stride[j][0] != 1) return 0;
        nm++;
    }
    ep_dim_t l1 = 0, l2 = 0, l3 = 0;
    ep_cache_sizes(&l1, &l2, &l3);
    ep_dim_t es = ep_nest_elem_bytes(d);
    if (nm < 1 || nm > 2)
        return 0;
    if (so == 0)
        // sums from memory: from L3 halves ran 5-15% slower ('a->' of 30 MB
        // on Zen 4: 0.85-0.98 ms whole, 0.91-1.11 in halves; of 120 MB 5.5-5.9
        // whole, 4.7-4.9 in halves)
        return (double)d->extent[0] * es * nm > (double)(l3 > 0 ? l3 : 32 << 20)
                   ? EP_LOADS_SUMS : 0;
    double part = (double)d->extent[0] / ep_nest_threads(d);
    return part * es * (nm + 1) > (double)(l2 > 0 ? l2 : 1 << 20) ? EP_LOADS_PRODUCTS : 0;
}

// Whether d's rows stream (see above): real rows of one or two inputs
// contiguous along the row that together span more than half of L3 ('ab,ab->a'
// (437, 9283) f32 C x C transposed, 16.2 MB each: four rows at a time 2.2-2.9 ms,
// one after another 1.0-1.5), in the
// three kernels whose order differs: row sums of up to 512 bytes (2 KB of
// one input end to end), dot rows up to
// a page, end to end, against one vector shared by every row, and rows
// summed into one output row (axpy4) from one past the registers of the row
// ISA's kernels up to 3/8 of L1, the output row staying there ('ab->b' with
// b = 503; 'j,jk->k' (37010,120) f64 four at a time 12 GB/s, one after
// another 24-28; rows of 800 f64 16-21 and 20-27 GB/s; Zen 4, 32 KB of L1:
// 'ab->a' (1121, 5130):T f64, rows of 8968 bytes, 1.79 ms four at a time,
// 1.35 one after another, rows of 16000 bytes f32 0.55 and 0.75); one input's
// short strided rows that rows_sum sums in four scalar chains ('bii->b').
// The kind (EP_STREAMS_*) says which order is measured: dot rows of a few
// lines and longer ones apart, as they disagree (Zen 4, 'ij,j->i' f64 over
// 190 MB: rows of 11 18.4 GB/s four at a time, 20.7 one after another;
// rows of 106 7.8 and 21.4 -- one measurement for both, made on the short
// rows, ran the long ones four at a time at 0.4x numpy); EP_STREAMS_COMPLEX:
// complex dot rows of 256 bytes to 8 KB against one shared vector, which
// always run one after another (rows_cdot_shared; Zen 4: 'ab,a->b' (45,
// 100000) F c128, four rows' lines interleaved 8.4 ms, one after another
// 3.3; c64 rows of 48 5.0 and 3.6 ms; rows of up to 256 bytes about the same
// either way: c64 rows of 8 2.6 ms both, of 16 3.9 and 4.2).
int ep_nest_streams(const ep_nest_desc_t *d, int isa)
{
    int inner = d->ndim - 1;
    int cpx = d->dtype > EP_NEST_F64;
    if (inner < 0 || d->tile > 0 || d->short_loop)
        return EP_STREAMS_NONE;
    ep_inc_t so = d->stride[d->nin][inner];
    // into one output row: its rows are the loop around the row, summed
    int into_one = so == 1 && inner > 0 && d->stride[d->nin][inner - 1] == 0;
    if (so != 0 && !into_one)
        return EP_STREAMS_NONE;
    ep_dim_t es = ep_nest_elem_bytes(d), bytes = d->extent[inner] * es;
    int nm = 0, shared = 0, packed = 0;      // packed: rows end to end
    int strided = 0;                         // moving inputs not unit-stride along the row
    ep_dim_t l1 = 0, l2 = 0, l3 = 0, spans = 0;
    ep_cache_sizes(&l1, &l2, &l3);
    for (int j = 0; j < d->nin; j++) {
        if (d->stride[j][inner] == 0) continue;
        if (d->stride[j][inner] != 1) strided++;
        if (inner > 0 && d->stride[j][inner - 1] == 0) shared++;
        else if (inner > 0 && d->stride[j][inner - 1] == d->extent[inner]) packed++;
        nm++;
        spans += ep_input_span(d, j);
    }
    if (nm < 1 || nm > 2 || l3 <= 0 || 2 * spans * es <= l3)
        return EP_STREAMS_NONE;
    if (cpx)  // complex dots against one shared vector, rows past four lines
        return so == 0 && nm == 2 && shared == 1 && !strided && bytes > 256 && bytes < 8192
               ? EP_STREAMS_COMPLEX : EP_STREAMS_NONE;
    isa = ep_nest_row_isa(d, isa);
    ep_dim_t vbytes = isa == EP_ISA_AVX512 ? 64 : isa == EP_ISA_AVX2 ? 32 : 16;
    if (strided && into_one) {  // rows_into_one's long rows with inputs at stride 2
        int s12 = 1;
        for (int j = 0; j < d->nin; j++) {
            ep_inc_t s = d->stride[j][inner];
            s12 &= s == 0 || s == 1 || s == 2;
        }
        return s12 && d->nin - nm <= 1 && bytes > 17 * vbytes - es && bytes <= l1 * 3 / 8
               ? EP_STREAMS_INTO_ONE : EP_STREAMS_NONE;
    }
    if (strided) {  // one input's short strided rows: rows_sum's scalar chains
        ep_inc_t s = d->stride[0][inner];
        return !into_one && nm == 1 && d->nin == 1 && d->extent[inner] <= 256 &&
               (bytes < 2 * vbytes || s > 2 || s < -2) ? EP_STREAMS_STRIDED : EP_STREAMS_NONE;
    }
    if (into_one) {  // longer than the kernels hold in registers (rows_into_one)
        return d->nin - nm <= 1 && bytes > 17 * vbytes - es && bytes <= l1 * 3 / 8
               ? EP_STREAMS_INTO_ONE : EP_STREAMS_NONE;
    }
    if (vbytes >= 32 && inner > 0 && bytes < vbytes && d->extent[inner] >= 2 &&
        d->extent[inner] <= EP_PICK_N && d->extent[inner - 1] >= 2 * (vbytes / es) &&
        d->stride[d->nin][inner - 1] != 0 && shared <= 1 && nm > shared) {
        // rows shorter than a vector end to end, a vector of them at a time
        // with no row of its own (rows_sum's picked_n): no order to measure
        ep_inc_t rs = 0;
        int alike = 1;
        for (int j = 0; j < d->nin; j++) {
            ep_inc_t r = d->stride[j][inner - 1];
            if (d->stride[j][inner] == 0 || r == 0) continue;
            alike &= (r == d->extent[inner] || r == -d->extent[inner]) && (!rs || r == rs);
            rs = r;
        }
        if (alike && !(shared && rs > 0 && d->extent[inner] > EP_PICK_SHARED_N(es, vbytes)))
            return EP_STREAMS_NONE;
    }
    if (bytes <= 512 || (nm == 1 && packed == 1 && bytes <= 2048) ||
        (nm == 2 && shared == 1 && bytes <= 4096 && (packed == 1 || bytes == 4096)) ||
        (nm == 2 && shared == 1 && packed == 1 && bytes <= EP_SEQ_DOT_ROW))
        return nm == 1 ? (bytes >= EP_LONG_ROW ? EP_STREAMS_LONG_SUMS : EP_STREAMS_SUMS)
             : bytes >= EP_LONG_ROW ? EP_STREAMS_LONG_DOTS : EP_STREAMS_DOTS;
    return EP_STREAMS_NONE;
}

// ------------------------------------------------------------ the nest
typedef struct {
    const ep_nest_desc_t *d;
    const ep_rows_t *rows;
    int dt, nin, es, inner;          // innermost loop (-1: none)
    int nm, mv[EP_NEST_MAXIN];       // inputs moving along the row
    int nf, fx[EP_NEST_MAXIN];       // inputs constant along it
    ep_inc_t ms[EP_NEST_MAXIN];      // the moving inputs' row strides
    ep_inc_t so;                     // the output's row stride
    ep_dim_t row_n;                  // elements of the row (of its block)
    int split;                       // the loop shared out (-1: one thread runs all)
    int shortk;                      // the small-edge kernel runs the two innermost loops
    int ctile;                       // the register-tile kernel runs the three
    int cx;                          // innermost loops (W, K, V); cx: its input x (the
                                     // one constant along W)
    ep_dim_t vrun, vlo, vhi;         // its V in runs of vrun with the loops outside it
                                     // inside each (0: V whole); [vlo, vhi): this run
    int pk[EP_NEST_MAXIN];           // in tiles: moving input j is copied per tile
    int pk_streams;                  // the copies read from memory (ep_copies_stream)
    int stream_loads;                // one row of products past L2 or of sums past L3,
                                     // loaded the measured way (EP_LOADS_*, 0 none)
    int tp, tpy;                     // in tiles: the two inputs cross in their unit strides
                                     // and run NT(tpair), input mv[tpy] read across its rows
    void *sbuf;                      // the small-edge kernel's or the tiles' copies of
                                     // strided inputs (this thread's)
    int stream;                      // the row sums stream an operand from memory: their
                                     // rows' order is ep_stream_order's (-1: not so)
    int stream_kind;                 // EP_STREAMS_* (ep_nest_streams)
    uint64_t run;                    // this run of the nest (for ep_turn)
    int bl;                          // the loop run in blocks (ep_blocks) other than the
    ep_dim_t bl_n;                   // row (-1: none), and its extent in this block
    int across;                      // the loop the across kernel runs (-1: none), with
    int ax_e;                        // its block's iterations and, per iteration, each
    ep_dim_t ax_c;                   // operand's offset; chunks of ax_c elements
    ep_inc_t ax_off[EP_NEST_MAXIN + 1][EP_NEST_ACROSS_MAXE];
    unsigned char ax_first[EP_NEST_ACROSS_MAXE];   // the first visit of its output element
    int ax_pk[EP_NEST_MAXIN + 1];    // copied per chunk: an input strided along the loop;
                                     // the output, when its blocks lie end to end
    ep_inc_t ax_lo[EP_NEST_MAXIN + 1], ax_r[EP_NEST_MAXIN + 1];   // the span copied
} ep_nest_ctx_t;

// The register-tile kernel's V (x's loop) in runs of this many elements,
// with the loops outside its three, which x does not move, inside each run
// (0: V whole).  x's run, K x run elements, then stays in half of L2 for
// every pass of them, where the whole of x would be read from memory once
// per pass ('abc,cd->adb' (3,6,234) x (234,15281) c64: B's 29 MB read once
// per a).  y is re-read once per run: the runs pay while those re-reads
// come to at most half of x's.  Mirrored by nest.py's ctile_vrun.
#define EP_CTILE_VRUN_ALIGN 32    // runs end on whole tiles of every kernel set
static ep_dim_t ep_ctile_vrun(const ep_nest_desc_t *d, const ep_nest_ctx_t *c)
{
    int w = c->inner - 2, k = w + 1, v = k + 1, x = c->cx, y = 1 - x;
    ep_dim_t outer = 1, ybytes = d->extent[w] * d->extent[k] * c->es;
    for (int i = 0; i < w; i++) {
        if (d->stride[x][i] != 0) return 0;
        outer *= d->extent[i];
        if (d->stride[y][i] != 0) ybytes *= d->extent[i];
    }
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    ep_dim_t col = d->extent[k] * c->es, xbytes = col * d->extent[v];
    if (outer < 2 || xbytes <= l2 / 2) return 0;
    ep_dim_t run = l2 / 2 / col / EP_CTILE_VRUN_ALIGN * EP_CTILE_VRUN_ALIGN;
    if (run < EP_CTILE_VRUN_ALIGN) run = EP_CTILE_VRUN_ALIGN;
    if (run >= d->extent[v]) return 0;
    ep_dim_t runs = (d->extent[v] + run - 1) / run;
    return 2 * (runs - 1) * ybytes <= (outer - 1) * xbytes ? run : 0;
}

// The small-edge kernel over the loop at dpt (the rows; none when dpt is the
// short loop itself) and the two innermost loops (see ep_nest_short_template.h).
static void ep_short(const ep_nest_ctx_t *c, int dpt, char *const *ptr, int first,
                     ep_dim_t lo, ep_dim_t hi)
{
    const ep_nest_desc_t *d = c->d;
    int sx = c->inner - 1, lx = c->inner, nin = c->nin;
    ep_dim_t R = 1, r0 = 0;
    ep_inc_t ro[EP_NEST_MAXIN + 1], rs[EP_NEST_MAXIN], rl[EP_NEST_MAXIN];
    memset(ro, 0, sizeof ro);
    if (dpt == c->inner - 2) {
        ep_dim_t e = d->extent[dpt];
        r0 = dpt == c->split ? lo : 0;
        R = (dpt == c->split ? hi : e) - r0;
        for (int op = 0; op <= nin; op++) ro[op] = d->stride[op][dpt];
    }
    // a row shared out by threads (the output varies along it): this
    // thread's part [lo, hi) of every row
    ep_dim_t l0 = c->split == lx ? lo : 0, n = c->split == lx ? hi - lo : d->extent[lx];
    const void *p[EP_NEST_MAXIN];
    for (int j = 0; j < nin; j++) {
        p[j] = ptr[j] + (r0 * ro[j] + l0 * d->stride[j][lx]) * c->es;
        rs[j] = d->stride[j][sx];
        rl[j] = d->stride[j][lx];
    }
    char *o = ptr[nin] + (r0 * ro[nin] + l0 * d->stride[nin][lx]) * c->es;
    c->rows->short_rows(nin, p, ro, rs, rl, R, (int)d->extent[sx], n, o, ro[nin],
                        d->stride[nin][sx], d->stride[nin][lx],
                        first && (r0 == 0 || ro[nin] != 0), c->sbuf);
}

// The across kernel: the loop at dpt runs in chunks of c->ax_c of its
// elements, vector lanes along it.  Each input strided along it is copied
// per chunk into one contiguous row per element of its block (a transpose:
// the block is the innermost loops, whose offsets c->ax_off holds), then
// each iteration of the block is one row kernel call over the chunk.  Many
// small blocks ('nij,nj->ni' with 3 x 3 matrices) run as a few long rows,
// not as a row of 3 per call.  The output, when its blocks lie end to end
// and this is its first visit, is gathered in rows too and transposed back
// once per chunk; else each iteration writes it in place, strided.
static void ep_across(const ep_nest_ctx_t *c, int dpt, char *const *ptr, int first,
                      ep_dim_t lo, ep_dim_t hi)
{
    const ep_nest_desc_t *d = c->d;
    int nin = c->nin, es = c->es, dt = c->dt;
    ep_dim_t i0 = dpt == c->split ? lo : 0, i1 = dpt == c->split ? hi : d->extent[dpt];
    ep_inc_t so = d->stride[nin][dpt], one = 1;
    for (ep_dim_t n0 = i0; n0 < i1; n0 += c->ax_c) {
        ep_dim_t C = i1 - n0 < c->ax_c ? i1 - n0 : c->ax_c;
        char *buf = c->sbuf;
        const char *base[EP_NEST_MAXIN];
        ep_inc_t mul[EP_NEST_MAXIN], rs[EP_NEST_MAXIN];
        for (int j = 0; j < nin; j++) {
            ep_inc_t s = d->stride[j][dpt];
            const char *x = ptr[j] + n0 * s * es;
            if (c->ax_pk[j]) {
                c->rows->pack(x + c->ax_lo[j] * es, 1, s, c->ax_r[j], C, buf, 0);
                base[j] = buf - c->ax_lo[j] * C * es;
                mul[j] = C;
                rs[j] = 1;
                buf += c->ax_r[j] * C * es;
            } else {
                base[j] = x;    // read in place along the loop (or constant)
                mul[j] = 1;
                rs[j] = s;
            }
        }
        char *o = ptr[nin] + n0 * so * es;
        // the first visit of the chunk's output elements: a later chunk
        // adds to an output summed along the loop
        int fc = first && (n0 == 0 || so != 0);
        char *ob = c->ax_pk[nin] && fc ? buf - c->ax_lo[nin] * C * es : NULL;
        for (int e = 0; e < c->ax_e; e++) {
            const void *p[EP_NEST_MAXIN];
            ep_inc_t s[EP_NEST_MAXIN];
            int nm = 0, nf = 0;
            ep_val_t scale = {1, 0};
            for (int j = 0; j < nin; j++) {
                const char *q = base[j] + c->ax_off[j][e] * mul[j] * es;
                if (d->stride[j][dpt] != 0) {
                    s[nm] = rs[j];
                    p[nm++] = q;
                } else {
                    ep_val_t v = ep_load(dt, q);
                    scale = nf++ == 0 ? v : ep_mul(dt, scale, v);
                }
            }
            ep_inc_t oe = c->ax_off[nin][e];
            int f = c->ax_first[e] && fc;
            if (so == 0) {
                double r2[2] = {0, 0};
                float f2[2] = {0, 0};
                int single = dt == EP_NEST_F32 || dt == EP_NEST_C64;
                c->rows->sum(nm, p, s, C, single ? (void *)f2 : (void *)r2);
                ep_val_t r;
                if (single) { r.re = f2[0]; r.im = f2[1]; }
                else { r.re = r2[0]; r.im = r2[1]; }
                if (nf) r = ep_mul(dt, r, scale);
                ep_store(dt, o + oe * es, r, !f);
            } else {
                double sc[2];
                ep_put(dt, sc, scale);
                if (ob)
                    c->rows->prod(nm, p, s, C, ob + oe * C * es, one, sc, c->ax_first[e]);
                else
                    c->rows->prod(nm, p, s, C, o + oe * es, so, sc, f);
            }
        }
        if (ob)   // the rows back into the chunk's blocks, end to end
            c->rows->pack(ob + c->ax_lo[nin] * C * es, 1, C, C, c->ax_r[nin],
                          o + c->ax_lo[nin] * es, 0);
    }
}

// The across kernel's layout (ep_across): the block's offsets, which
// operands it copies and its chunk; *sbuf_n the elements of its copies per
// thread.  0 when the nest does not take it.
static int ep_across_context(const ep_nest_desc_t *d, ep_nest_ctx_t *c, ep_dim_t *sbuf_n)
{
    int a = d->ndim - 1 - d->across, nin = d->nin;
    if (d->across <= 0 || a < 0 || d->tile > 0 || d->short_loop || d->block > 0 || d->conj ||
        c->split > a)
        return 0;
    ep_dim_t E = 1;
    for (int x = a + 1; x < d->ndim; x++) {
        E *= d->extent[x];
        if (E > EP_NEST_ACROSS_MAXE) return 0;
    }
    int moving = 0;
    for (int j = 0; j < nin; j++) moving |= d->stride[j][a] != 0;
    if (!moving) return 0;
    for (int e = 0; e < (int)E; e++) {
        ep_dim_t rest = e;
        for (int op = 0; op <= nin; op++) c->ax_off[op][e] = 0;
        for (int x = d->ndim - 1; x > a; x--) {
            ep_dim_t i = rest % d->extent[x];
            rest /= d->extent[x];
            for (int op = 0; op <= nin; op++) c->ax_off[op][e] += i * d->stride[op][x];
        }
        c->ax_first[e] = 1;
        for (int f = 0; f < e; f++)
            if (c->ax_off[nin][f] == c->ax_off[nin][e]) c->ax_first[e] = 0;
    }
    c->ax_e = (int)E;
    ep_dim_t rows = 0;
    for (int op = 0; op <= nin; op++) {
        ep_inc_t lo = c->ax_off[op][0], hi = lo, s = d->stride[op][a];
        for (int e = 0; e < (int)E; e++) {
            ep_inc_t v = c->ax_off[op][e];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        c->ax_lo[op] = lo;
        c->ax_r[op] = hi - lo + 1;
        if (op < nin) {
            // strided along the loop: copied, the block's span (at most
            // twice its iterations: a sparse span is read in place)
            c->ax_pk[op] = s != 0 && s != 1 && c->ax_r[op] <= 2 * E;
        } else {
            // the output's blocks end to end, each element once per block
            ep_dim_t uniq = 0;
            for (int e = 0; e < (int)E; e++) uniq += c->ax_first[e];
            c->ax_pk[op] = s != 0 && s == c->ax_r[op] && uniq == c->ax_r[op] && s > 1;
        }
        if (c->ax_pk[op]) rows += c->ax_r[op];
    }
    // chunks of copies about 16 KB in all (the rows stay in L1)
    ep_dim_t C = rows ? (16384 / c->es) / rows : 512;
    C = C < 32 ? 32 : C > 512 ? 512 : C & ~(ep_dim_t)15;
    c->ax_c = C;
    *sbuf_n = rows * C;
    c->across = a;
    return 1;
}

// The register-tile kernel over the three innermost loops W, K, V
// (see ep_nest_ctile_template.h); [wlo, whi) of W and [vlo, vhi) of V (this
// thread's part when the threads share W or V out).
static void ep_ctile(const ep_nest_ctx_t *c, char *const *ptr, int first, ep_dim_t wlo,
                     ep_dim_t whi, ep_dim_t vlo, ep_dim_t vhi)
{
    const ep_nest_desc_t *d = c->d;
    int w = c->inner - 2, k = c->inner - 1, v = c->inner, x = c->cx, y = 1 - c->cx;
    c->rows->ctile(ptr[x] + vlo * d->stride[x][v] * c->es, d->stride[x][k], d->stride[x][v],
                   ptr[y] + wlo * d->stride[y][w] * c->es, d->stride[y][w], d->stride[y][k],
                   whi - wlo, d->extent[k], vhi - vlo, d->extent[v], d->extent[w],
                   ptr[2] + (wlo * d->stride[2][w] + vlo * d->stride[2][v]) * c->es,
                   d->stride[2][w], d->stride[2][v], first, c->sbuf);
}

// A contiguous row past L2 (ep_nest_stream_loads): its products into o, or
// (o NULL) its sum into res, loaded the measured way.
static void ep_stream_row(const ep_nest_ctx_t *c, const void *const *p, ep_dim_t n, char *o,
                          const double *sc, int first, void *res)
{
    ep_measured_t *m = ep_load_of(c->stream_loads);
    int way = ep_load_width(c->stream_loads), timed = 0;
    if (way < 0) way = ep_measured_turn_timed(m, &timed);
    int64_t t0 = timed ? ep_clock_ns() : 0;
    if (o) c->rows->stream_prod(c->nm, p, n, o, sc, first, way);
    else c->rows->stream_sum(c->nm, p, n, res, way);
    if (timed) {
        ep_dim_t l1 = 0, l2 = 0, l3 = 0;
        ep_cache_sizes(&l1, &l2, &l3);
        int64_t enough = 4 * (int64_t)(l3 > 0 ? l3 : 32 << 20);
        ep_measured_sample(m, way, (int64_t)n * c->es * (c->nm + (o != NULL)),
                           ep_clock_ns() - t0, enough, 1.0);
    }
}

static void ep_row(const ep_nest_ctx_t *c, char *const *ptr, ep_dim_t off, ep_dim_t n, int first)
{
    int dt = c->dt;
    ep_val_t scale = {1, 0};
    for (int j = 0; j < c->nf; j++) {
        ep_val_t v = ep_load(dt, ptr[c->fx[j]]);
        scale = j == 0 ? v : ep_mul(dt, scale, v);
    }
    const void *p[EP_NEST_MAXIN];
    ep_inc_t inner_off = 0;
    for (int j = 0; j < c->nm; j++)
        p[j] = ptr[c->mv[j]] + (c->inner >= 0 ? off * c->ms[j] * c->es : 0);
    (void)inner_off;
    char *o = ptr[c->nin];
    if (c->so == 0) {
        ep_val_t r;
        if (c->nm == 0) {
            // the same product n times
            r.re = scale.re * (double)n; r.im = scale.im * (double)n;
        } else {
            double buf[2] = {0, 0};
            float f[2] = {0, 0};
            int single = dt == EP_NEST_F32 || dt == EP_NEST_C64;
            void *res = single ? (void *)f : (void *)buf;
            if (c->d->conj) c->rows->dotc(p, c->ms, n, res);
            else if (c->stream_loads) ep_stream_row(c, p, n, NULL, NULL, 0, res);
            else c->rows->sum(c->nm, p, c->ms, n, res);
            if (single) { r.re = f[0]; r.im = f[1]; }
            else { r.re = buf[0]; r.im = buf[1]; }
            if (c->nf) r = ep_mul(dt, r, scale);
        }
        ep_store(dt, o, r, !first);
    } else {
        double sc[2];
        ep_put(dt, sc, scale);
        if (c->stream_loads)
            ep_stream_row(c, p, n, o + off * c->es, sc, first, NULL);
        else
            c->rows->prod(c->nm, p, c->ms, n, o + off * c->so * c->es, c->so, sc, first);
    }
}

// Whether the tiles' copies read their inputs from memory rather than from
// cache: the inputs span more than a quarter of L3 (a guest's share of an L3
// shared with other cores or guests holds less than its size).  The copy
// then reads a few source rows at a time in runs the prefetchers follow;
// from cache it walks every source row for more lines in flight ('ab,ab->'
// C x F c128 on a Zen 3 guest with 32 MB of L3: inputs of 3.2 MB each ran
// 1.4x faster walking, of 4.8 MB alike, of 6.4 MB and more 1.3-1.6x faster
// in runs).
static int ep_copies_stream(const ep_nest_desc_t *d, int es)
{
    ep_dim_t l1 = 0, l2 = 0, l3 = 0;
    ep_cache_sizes(&l1, &l2, &l3);
    double spans = 0;
    for (int j = 0; j < d->nin; j++) spans += (double)ep_input_span(d, j);
    return spans * es > (double)(l3 > 0 ? l3 : 32 << 20) / 4;
}

// The two innermost loops (dpt and the row) in tiles of d->tile x tile_row:
// every operand's lines stay in cache while the other axis runs.  An input
// marked in c->pk (near unit-stride along dpt, strided along the row) is
// first copied into contiguous rows, read along its own unit stride, so the
// row kernel runs SIMD on it and its pages are walked once per tile, not
// once per element.  A tile whose rows then all lie end to end (the output
// too, or summed along both loops) runs as one row.
static void ep_tiles(const ep_nest_ctx_t *c, int dpt, char *const *ptr, int first,
                     ep_dim_t lo, ep_dim_t hi)
{
    const ep_nest_desc_t *d = c->d;
    int es = c->es;
    ep_dim_t E0 = d->extent[dpt], E1 = c->row_n;
    ep_dim_t ti = d->tile, tj = d->tile_row > 0 ? d->tile_row : d->tile;
    ep_inc_t so0 = d->stride[c->nin][dpt];
    ep_dim_t i_lo = dpt == c->split ? lo : 0, i_hi = dpt == c->split ? hi : E0;
    ep_dim_t j_lo = c->inner == c->split ? lo : 0, j_hi = c->inner == c->split ? hi : E1;
    for (ep_dim_t i0 = i_lo; i0 < i_hi; i0 += ti) {
        ep_dim_t R = i_hi - i0 < ti ? i_hi - i0 : ti;
        for (ep_dim_t j0 = j_lo; j0 < j_hi; j0 += tj) {
            ep_dim_t jn = j_hi - j0 < tj ? j_hi - j0 : tj;
            int fj = first && (j0 == 0 || c->so != 0);
            if (c->tp) {
                int x = c->mv[1 - c->tpy], y = c->mv[c->tpy];
                ep_inc_t ys = d->stride[y][dpt];
                char *o = ptr[c->nin] + (i0 * so0 + j0 * c->so) * es;
                c->rows->tpair(ptr[x] + (i0 * d->stride[x][dpt] + j0 * c->ms[1 - c->tpy]) * es,
                               c->ms[1 - c->tpy], d->stride[x][dpt],
                               ptr[y] + (i0 * ys + j0 * c->ms[c->tpy]) * es, ys,
                               c->ms[c->tpy], R, jn, o, so0, c->so,
                               fj && (i0 == 0 || so0 != 0));
                continue;
            }
            // the tile's rows in one call
            const void *p[EP_NEST_MAXIN], *fp[EP_NEST_MAXIN];
            ep_inc_t rs[EP_NEST_MAXIN], fs[EP_NEST_MAXIN], s[EP_NEST_MAXIN];
            char *buf = c->sbuf;
            int flat = 1;
            for (int j = 0; j < c->nm; j++) {
                int op = c->mv[j];
                p[j] = ptr[op] + (i0 * d->stride[op][dpt] + j0 * c->ms[j]) * es;
                rs[j] = d->stride[op][dpt];
                s[j] = c->ms[j];
                if (c->pk[j]) {
                    c->rows->pack(p[j], rs[j], s[j], R, jn, buf, c->pk_streams);
                    p[j] = buf;
                    buf += R * jn * es;
                    rs[j] = jn;
                    s[j] = 1;
                }
                flat &= s[j] == 1 && rs[j] == jn;
            }
            for (int j = 0; j < c->nf; j++) {
                int op = c->fx[j];
                fp[j] = ptr[op] + i0 * d->stride[op][dpt] * es;
                fs[j] = d->stride[op][dpt];
            }
            flat &= c->nf == 0 && ((c->so == 0 && so0 == 0) || (c->so == 1 && so0 == jn));
            char *o = ptr[c->nin] + (i0 * so0 + j0 * c->so) * es;
            int f = fj && (i0 == 0 || so0 != 0);
            ep_dim_t n = jn;
            if (flat) { n = R * jn; R = 1; }
            if (c->so == 0)
                c->rows->rows_sum(c->nm, p, s, n, rs, R, o, so0, f, c->nf, fp, fs, 0);
            else
                c->rows->rows_prod(c->nm, p, s, n, rs, R, o, c->so, so0, f, c->nf, fp, fs, 0);
            if (flat) R = n / jn;
        }
    }
}

static void ep_rec(const ep_nest_ctx_t *c, int dpt, char *const *ptr, int first,
                   ep_dim_t lo, ep_dim_t hi)
{
    const ep_nest_desc_t *d = c->d;
    int nops = c->nin + 1, es = c->es;
    if (dpt == c->across) {
        ep_across(c, dpt, ptr, first, lo, hi);
        return;
    }
    if (dpt >= c->inner) {
        if (c->inner >= 0 && c->split == c->inner)
            ep_row(c, ptr, lo, hi - lo, first && (lo == 0 || c->so != 0));
        else
            ep_row(c, ptr, 0, c->inner >= 0 ? c->row_n : 1, first);
        return;
    }
    if (c->ctile && dpt == c->inner - 2) {
        ep_dim_t W = d->extent[dpt], vlo = c->vlo, vhi = c->vhi;
        if (c->split == c->inner) {
            vlo = lo > vlo ? lo : vlo;
            vhi = hi < vhi ? hi : vhi;
            if (vlo < vhi) ep_ctile(c, ptr, first, 0, W, vlo, vhi);
        } else if (c->split == dpt) {
            ep_ctile(c, ptr, first, lo, hi, vlo, vhi);
        } else {
            ep_ctile(c, ptr, first, 0, W, vlo, vhi);
        }
        return;
    }
    if (c->shortk && dpt >= c->inner - 2) {
        ep_short(c, dpt, ptr, first, lo, hi);
        return;
    }
    char *q[EP_NEST_MAXIN + 1];
    if (d->tile > 0 && dpt == c->inner - 1) {
        ep_tiles(c, dpt, ptr, first, lo, hi);
        return;
    }
    ep_dim_t e = dpt == c->bl ? c->bl_n : d->extent[dpt];
    ep_dim_t i0 = dpt == c->split ? lo : 0, i1 = dpt == c->split ? hi : e;
    ep_inc_t so = d->stride[c->nin][dpt];
    if (dpt == c->inner - 1 && (c->split != c->inner || c->so != 0)) {
        // the loop around the row in one call: no per-row dispatch, each
        // row's scale (the inputs constant along it) made in the kernel; a
        // row shared out by threads (the output varies along it) runs this
        // thread's part [lo, hi) of every row
        ep_dim_t r0 = c->split == c->inner ? lo : 0;
        const void *p[EP_NEST_MAXIN], *fp[EP_NEST_MAXIN];
        ep_inc_t rs[EP_NEST_MAXIN], fs[EP_NEST_MAXIN];
        for (int j = 0; j < c->nm; j++) {
            p[j] = ptr[c->mv[j]] + (i0 * d->stride[c->mv[j]][dpt] + r0 * c->ms[j]) * es;
            rs[j] = d->stride[c->mv[j]][dpt];
        }
        for (int j = 0; j < c->nf; j++) {
            fp[j] = ptr[c->fx[j]] + i0 * d->stride[c->fx[j]][dpt] * es;
            fs[j] = d->stride[c->fx[j]][dpt];
        }
        char *o = ptr[c->nin] + (i0 * so + r0 * c->so) * es;
        int f = first && (i0 == 0 || so != 0);
        ep_dim_t n = c->split == c->inner ? hi - lo : c->row_n;
        // while the row order is measured, turns of calls (EP_STREAM_TURN
        // bytes each) alternate the two, timed
        int measure = c->stream == EP_STREAM_MEASURING;
        if (measure && (ep_turn.way < 0 || ep_turn.run != c->run)) {
            ep_turn.way = ep_stream_next(c->stream_kind);
            ep_turn.run = c->run;
            ep_turn.bytes = 0;
            ep_turn.t0 = ep_clock_ns();
        }
        int seq = measure ? ep_turn.way : c->stream == EP_STREAM_ONE;
        if (c->so == 0)
            c->rows->rows_sum(c->nm, p, c->ms, n, rs, i1 - i0, o, so, f, c->nf, fp, fs, seq);
        else
            c->rows->rows_prod(c->nm, p, c->ms, n, rs, i1 - i0, o, c->so, so, f, c->nf, fp,
                               fs, seq);
        if (measure) {
            // bytes of the lines the rows read: a strided row a line an
            // element once its elements are a line apart
            ep_inc_t step = 1;
            for (int j = 0; j < c->nm; j++) {
                ep_inc_t a = c->ms[j] < 0 ? -c->ms[j] : c->ms[j];
                if (a * es > 64) a = 64 / es;
                if (a > step) step = a;
            }
            ep_turn.bytes += (int64_t)(i1 - i0) * n * step * es;
            if (ep_turn.bytes >= EP_STREAM_TURN) {
                ep_stream_sample(c->stream_kind, seq, ep_turn.bytes, ep_clock_ns() - ep_turn.t0);
                ep_turn.way = -1;
            }
        }
        return;
    }
    for (ep_dim_t i = i0; i < i1; i++) {
        for (int op = 0; op < nops; op++)
            q[op] = ptr[op] + i * d->stride[op][dpt] * es;
        ep_rec(c, dpt + 1, q, first && (i == 0 || so != 0), lo, hi);
    }
}

// The nest, with the row (or with d->block_outer the loop around it) in
// blocks of d->block elements when asked (the block loop outermost; an
// output summed along the blocked loop adds each block's partial sum to
// it).  c is this thread's own copy.
static void ep_blocks(ep_nest_ctx_t *c, char *const *base, int first, ep_dim_t lo,
                      ep_dim_t hi)
{
    const ep_nest_desc_t *d = c->d;
    int bl = d->block_outer ? c->inner - 1 : c->inner;
    if (c->ctile && c->vrun > 0) {
        ep_dim_t V = d->extent[c->inner];
        for (ep_dim_t v0 = 0; v0 < V; v0 += c->vrun) {
            c->vlo = v0;
            c->vhi = V - v0 < c->vrun ? V : v0 + c->vrun;
            ep_rec(c, 0, base, first, lo, hi);
        }
        c->vlo = 0;
        c->vhi = V;
        return;
    }
    if (d->block <= 0 || bl < 0 || c->split == bl || c->shortk || c->ctile ||
        (d->block_outer && d->tile > 0) || d->block >= d->extent[bl]) {
        ep_rec(c, 0, base, first, lo, hi);
        return;
    }
    ep_dim_t E = d->extent[bl];
    char *q[EP_NEST_MAXIN + 1];
    for (ep_dim_t b0 = 0; b0 < E; b0 += d->block) {
        for (int op = 0; op <= c->nin; op++)
            q[op] = base[op] + b0 * d->stride[op][bl] * c->es;
        ep_dim_t n = E - b0 < d->block ? E - b0 : d->block;
        if (bl == c->inner) c->row_n = n;
        else { c->bl = bl; c->bl_n = n; }
        ep_rec(c, 0, q, first && (b0 == 0 || d->stride[c->nin][bl] != 0), lo, hi);
    }
    c->row_n = d->extent[c->inner];
    c->bl = -1;
}

#define EP_NEST_MAXTHREADS 64

int ep_nest_threads(const ep_nest_desc_t *d)
{
    if (d->split < 0 || d->split >= d->ndim || d->nthreads <= 1) return 1;
    int nt = ep_get_num_threads();
    if (d->nthreads < nt) nt = d->nthreads;
    if (nt > d->extent[d->split]) nt = (int)d->extent[d->split];
    if (nt > EP_NEST_MAXTHREADS) nt = EP_NEST_MAXTHREADS;
    return nt < 1 ? 1 : nt;
}

// This call's context: the row's moving and fixed operands, the output's
// row stride, the split loop and whether the small-edge kernel runs (then
// *sbuf_n is the elements of its copy buffer per thread).
static void ep_nest_context(const ep_nest_desc_t *d, int isa, int nt, ep_nest_ctx_t *c,
                            ep_dim_t *sbuf_n)
{
    memset(c, 0, sizeof *c);
    c->d = d;
    c->dt = d->dtype;
    c->nin = d->nin;
    c->es = ep_nest_elem_bytes(d);
    c->rows = ep_rows_for(ep_nest_row_isa(d, isa), d->dtype);
    c->stream_loads = ep_nest_stream_loads(d, isa);
    c->inner = d->ndim - 1;
    c->bl = -1;
    for (int j = 0; j < d->nin; j++) {
        ep_inc_t s = c->inner >= 0 ? d->stride[j][c->inner] : 0;
        if (s != 0) { c->ms[c->nm] = s; c->mv[c->nm++] = j; }
        else c->fx[c->nf++] = j;
    }
    c->so = c->inner >= 0 ? d->stride[d->nin][c->inner] : 0;
    c->stream_kind = ep_nest_streams(d, isa);
    c->stream = c->stream_kind == EP_STREAMS_COMPLEX ? EP_STREAM_ONE
              : c->stream_kind ? ep_stream_order(c->stream_kind) : -1;
    c->run = __atomic_add_fetch(&ep_nest_runs, 1, __ATOMIC_RELAXED);
    c->row_n = c->inner >= 0 ? d->extent[c->inner] : 1;
    c->split = nt > 1 ? d->split : -1;
    c->across = -1;
    *sbuf_n = 0;
    if (ep_across_context(d, c, sbuf_n)) {
        c->stream = -1;
        c->stream_loads = 0;
        return;
    }
    if (d->short_loop == 2 && d->ndim >= 3 && d->nin == 2 && d->tile <= 0 &&
        (c->split != c->inner - 1 || d->ndim == 3)) {
        // the register-tile kernel's shape: x constant along W, y along V,
        // the output along K, every other stride of the three not 0
        int w = c->inner - 2, k = c->inner - 1, v = c->inner;
        int x = d->stride[0][w] == 0 ? 0 : 1, y = 1 - x;
        c->ctile = d->stride[x][w] == 0 && d->stride[y][v] == 0 && d->stride[2][k] == 0 &&
                   d->stride[x][k] != 0 && d->stride[x][v] != 0 && d->stride[y][w] != 0 &&
                   d->stride[y][k] != 0 && d->stride[2][w] != 0 && d->stride[2][v] != 0;
        c->cx = x;
        c->vlo = 0;
        c->vhi = d->extent[v];
        c->vrun = c->ctile ? ep_ctile_vrun(d, c) : 0;
    }
    if (d->short_loop == 1 && d->ndim >= 2 && d->tile <= 0 &&
        (c->split < c->inner - 1 || (c->split == c->inner && c->so != 0)) &&
        d->extent[c->inner - 1] <= EP_NEST_SHORT &&
        ((d->stride[d->nin][c->inner - 1] == 0) != (c->so == 0))) {
        c->shortk = 1;
    }
    *sbuf_n = 0;
    if (c->ctile) *sbuf_n = c->rows->ctile_buffer();
    if (d->tile > 0 && d->ndim >= 2 && !c->shortk && !c->ctile) {
        // tiles copy the inputs strided along the row that move by less
        // along the loop around it (but do move: a row shared by every
        // row of the tile is read in place)
        ep_dim_t ti = d->tile, tj = d->tile_row > 0 ? d->tile_row : d->tile;
        if (ti > d->extent[c->inner - 1]) ti = d->extent[c->inner - 1];
        if (tj > d->extent[c->inner]) tj = d->extent[c->inner];
        for (int j = 0; j < c->nm; j++) {
            ep_inc_t so = d->stride[c->mv[j]][c->inner - 1], si = c->ms[j];
            ep_inc_t ao = so < 0 ? -so : so, ai = si < 0 ? -si : si;
            c->pk[j] = so != 0 && ao < ai && ai > 2;
            if (c->pk[j]) *sbuf_n += ti * tj;
        }
        c->pk_streams = ep_copies_stream(d, c->es);
        // asked for, two inputs, one at stride 1 or 2 along the row, the other copied
        // but at stride 1 or 2 along the loop around it, and the output
        // unit or 0 along the row: the tile runs NT(tpair), the copied
        // input read in place and transposed in registers
        if (d->transposed && c->rows->tpair && c->nm == 2 && c->nf == 0 &&
            (c->so == 0 || c->so == 1)) {
            for (int y = 0; y < 2; y++)
                if (c->pk[y] && !c->pk[1 - y] && (c->ms[1 - y] == 1 || c->ms[1 - y] == 2) &&
                    (d->stride[c->mv[y]][c->inner - 1] == 1 ||
                     d->stride[c->mv[y]][c->inner - 1] == 2)) {
                    c->tp = 1;
                    c->tpy = y;
                    *sbuf_n = 0;
                }
        }
    }
    if (c->shortk) {
        ep_inc_t rs[EP_NEST_MAXIN], rl[EP_NEST_MAXIN];
        for (int j = 0; j < d->nin; j++) {
            rs[j] = d->stride[j][c->inner - 1];
            rl[j] = d->stride[j][c->inner];
        }
        *sbuf_n = c->rows->short_buffer(d->nin, rs, rl, (int)d->extent[c->inner - 1],
                                        d->extent[c->inner]) + 1;
    }
}

// Whether d sums everything into one output element
static int ep_reduces_all(const ep_nest_desc_t *d)
{
    for (int x = 0; x < d->ndim; x++)
        if (d->stride[d->nin][x] != 0) return 0;
    return 1;
}

// nt threads share the split loop; a full reduction sums into a private
// partial each, combined in thread order (the same result for the same
// thread count).  parts: nt zeroed private outputs of part_bytes each that
// the threads add into instead of the output, or NULL.
// sbuf: nt copy buffers of sbuf_n elements, or NULL.
static void ep_nest_threaded(const ep_nest_ctx_t *c, char *const *base, int nt,
                             char *sbuf, ep_dim_t sbuf_n, char *parts, size_t part_bytes)
{
    const ep_nest_desc_t *d = c->d;
    int reduce_all = ep_reduces_all(d);
    double part[EP_NEST_MAXTHREADS][2];
    memset(part, 0, sizeof part);
    ep_dim_t E = d->extent[d->split];
    ep_team_map_t *team = ep_team_prepare(nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        ep_dim_t lo = E * tid / ntr, hi = E * (tid + 1) / ntr;
        ep_nest_ctx_t mine = *c;
        mine.sbuf = sbuf ? sbuf + (size_t)tid * sbuf_n * c->es : NULL;
        if (reduce_all || parts) {
            char *own[EP_NEST_MAXIN + 1];
            memcpy(own, base, sizeof own);
            own[d->nin] = parts ? parts + (size_t)tid * part_bytes : (char *)part[tid];
            if (lo < hi) ep_blocks(&mine, own, 0, lo, hi);
        } else if (lo < hi) {
            ep_blocks(&mine, base, 1, lo, hi);
        }
    }
    if (reduce_all) ep_sum_parts(c->dt, base[d->nin], (const char *)part, sizeof part[0], nt);
}

// Threads sharing a loop the output is summed along, the output not a
// scalar but small (at most EP_NEST_PART_MAX elements: 'ab,a->b' with b =
// 3, one period stream of 163404 rows): each thread sums its part of the
// loop into a private dense copy of the output, zeroed, and the copies
// are added in thread order (the same result for the same thread count).
#define EP_NEST_PART_MAX 4096
static int ep_nest_part_elems(const ep_nest_desc_t *d, ep_inc_t *pst)
{
    ep_dim_t total = 1;
    for (int x = d->ndim - 1; x >= 0; x--) {
        pst[x] = d->stride[d->nin][x] != 0 ? total : 0;
        if (d->stride[d->nin][x] != 0) {
            if (d->extent[x] > EP_NEST_PART_MAX / total) return 0;
            total *= d->extent[x];
        }
    }
    return (int)total;
}

// The dense private copies `part` (nt of `bytes`, element strides pst)
// added in thread order into the output at out
static void ep_nest_sum_copies(const ep_nest_desc_t *d, const ep_inc_t *pst, int total,
                               char *out, const char *part, size_t bytes, int nt, int es)
{
    for (int e = 0; e < total; e++) {
        ep_inc_t off = 0;
        for (int x = 0; x < d->ndim; x++)
            if (pst[x] != 0) off += (e / pst[x]) % d->extent[x] * d->stride[d->nin][x];
        ep_sum_parts(d->dtype, out + off * es, part + (size_t)e * es, bytes, nt);
    }
}

// The register-tile kernel with K shared out (the three loops the whole
// nest, W and V short, K long: 'ij,jk->ik' (112,48807) F x (48807,3) f64):
// each thread sums its part of K into a private W x V output, and the
// parts are added in thread order (the same result for the same thread
// count).  sbuf: nt copy buffers of sbuf_n elements.
static ep_status_t ep_ctile_ksplit(const ep_nest_ctx_t *c, char *const *base, int nt,
                                   char *sbuf, ep_dim_t sbuf_n)
{
    const ep_nest_desc_t *d = c->d;
    int w = c->inner - 2, k = c->inner - 1, v = c->inner, x = c->cx, y = 1 - c->cx;
    ep_dim_t W = d->extent[w], K = d->extent[k], V = d->extent[v], n = W * V;
    char *part = malloc((size_t)nt * (size_t)n * (size_t)c->es);
    if (!part) return EP_ERR_NOMEM;
    ep_team_map_t *team = ep_team_prepare(nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid, ntr;
        ep_team(&tid, &ntr, team);
        ep_dim_t lo = K * tid / ntr, hi = K * (tid + 1) / ntr;
        char *mine = part + (size_t)tid * (size_t)n * (size_t)c->es;
        if (lo < hi)
            c->rows->ctile(base[x] + lo * d->stride[x][k] * c->es, d->stride[x][k],
                           d->stride[x][v], base[y] + lo * d->stride[y][k] * c->es,
                           d->stride[y][w], d->stride[y][k], W, hi - lo, V, V, W, mine, V, 1,
                           1, sbuf ? sbuf + (size_t)tid * sbuf_n * c->es : NULL);
        else
            memset(mine, 0, (size_t)n * (size_t)c->es);
    }
    ep_inc_t ow = d->stride[2][w], ov = d->stride[2][v];
    for (ep_dim_t i = 0; i < W; i++)
        for (ep_dim_t j = 0; j < V; j++)
            ep_sum_parts(c->dt, base[2] + (i * ow + j * ov) * c->es,
                         part + (size_t)(i * V + j) * c->es, (size_t)n * c->es, nt);
    free(part);
    return EP_OK;
}

ep_status_t ep_nest(const ep_nest_desc_t *d)
{
    return ep_nest_run(d, d->in, d->out, d->isa);
}

ep_status_t ep_nest_run(const ep_nest_desc_t *d, const void *const *in, void *out, int isa)
{
    if (d->nin < 1 || d->nin > EP_NEST_MAXIN || d->ndim < 0 || d->ndim > EP_MAXDIM ||
        (unsigned)d->dtype > EP_NEST_C128)
        return EP_ERR_INVALID;
    for (int x = 0; x < d->ndim; x++)
        if (d->extent[x] <= 0) return d->extent[x] == 0 ? EP_OK : EP_ERR_INVALID;
    if (d->conj && (d->dtype < EP_NEST_C64 || d->nin != 2 || d->ndim != 1 ||
                    d->stride[2][0] != 0 || d->stride[0][0] == 0 || d->stride[1][0] == 0 ||
                    d->tile > 0 || d->short_loop || d->block > 0))
        return EP_ERR_INVALID;
    int nt = ep_nest_threads(d);
    ep_nest_ctx_t c;
    ep_dim_t sbuf_n;
    ep_nest_desc_t pd = *d;              // d with the private copies' output strides
    int total = 0;                       // elements of each copy (ep_nest_part_elems), or 0
    ep_nest_context(d, isa, nt, &c, &sbuf_n);
    if (nt > 1 && d->stride[d->nin][d->split] == 0 && !(c.ctile && c.split == c.inner - 1)) {
        // threads write apart only along a loop the output moves along,
        // into private partials for a full reduction, into private copies
        // of a small output (ep_nest_part_elems), or in the register-tile
        // kernel's K parts
        if (!ep_reduces_all(d)) {
            if (!c.ctile && !c.shortk && d->tile <= 0 &&
                (total = ep_nest_part_elems(d, pd.stride[d->nin])) > 0) {
                ep_nest_context(&pd, isa, nt, &c, &sbuf_n);    // into the copies
            } else {
                nt = 1;
                ep_nest_context(d, isa, nt, &c, &sbuf_n);
            }
        }
    }
    char *base[EP_NEST_MAXIN + 1];
    for (int j = 0; j < d->nin; j++) base[j] = (char *)in[j];
    base[d->nin] = (char *)out;
    // the small-edge kernel's copies: one buffer per thread, allocated
    // before any thread starts so a failure is reported, not dereferenced
    char *sbuf = NULL, *part = NULL;
    size_t bytes = (size_t)total * (size_t)c.es;
    if (sbuf_n > 0) {
        sbuf = malloc((size_t)nt * (size_t)sbuf_n * (size_t)c.es);
        if (!sbuf) return EP_ERR_NOMEM;
    }
    if (total > 0 && !(part = calloc((size_t)nt, bytes))) {
        free(sbuf);
        return EP_ERR_NOMEM;
    }
    if (nt <= 1) {
        c.sbuf = sbuf;
        ep_blocks(&c, base, 1, 0, 0);
    } else if (c.ctile && c.split == c.inner - 1) {
        ep_status_t st = ep_ctile_ksplit(&c, base, nt, sbuf, sbuf_n);
        free(sbuf);
        return st;
    } else {
        ep_nest_threaded(&c, base, nt, sbuf, sbuf_n, part, bytes);
        if (part)
            ep_nest_sum_copies(d, pd.stride[d->nin], total, base[d->nin], part, bytes, nt,
                               c.es);
    }
    free(part);
    free(sbuf);
    return EP_OK;
}
