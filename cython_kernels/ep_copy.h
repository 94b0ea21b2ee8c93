// ep_copy.h -- what ep_copy.c shares with its SIMD tiles (isa/ep_copy_avx2.c,
// isa/ep_copy_avx512.c): the plan of one copy and the kernels' signatures.
#ifndef EP_COPY_H
#define EP_COPY_H

#include <stddef.h>
#include "ep_api.h"

#if defined(__x86_64__) || defined(_M_X64)
#define EP_COPY_X86 1
#endif

// SIMD square tiles are walked in blocks of SQ_ROWS (dst-inner) x SQ_COLS
// (src-inner) elements.  Zen 4, 2026-11-21, 1 thread, ratio to torch
// copy_(permute) for f32 'ij->ji' 1024^2 / 4096^2 / 1000x3000, f64 2048^2,
// f32 'nchw->nhwc' / 'nhwc->nchw' (32,64,56,56):
//   32 x 32:   1.29 2.12 1.18 2.71 0.87 1.15
//   64 x 64:   1.81 2.50 1.41 2.59 1.17 1.27
//   128 x 128: 1.40 2.72 1.54 3.07 1.25 1.30
//   32 x 256:  1.61 2.74 1.87 2.96 1.32 1.18   (32 x 1024 and 64 x 256 alike)
#ifndef EP_COPY_SQ_ROWS
#define EP_COPY_SQ_ROWS 32
#endif
#ifndef EP_COPY_SQ_COLS
#define EP_COPY_SQ_COLS 256
#endif
typedef struct ep_copy_plan ep_copy_plan_t;
typedef void (*ep_copy_fn)(const ep_copy_plan_t *p, const char *s, char *d,
                           ep_dim_t cnt);

// What ep_copy runs.  A unit of work is one index of the outer axes and one
// block of the split axis (B for the tiles, I for RUN); units are numbered
// outer index major, so a range of them is a stretch of dst in order.
struct ep_copy_plan {
    ep_copy_schedule_t sc;
    int es;                              // element size in bytes
    int nout;                            // outer axes, outer to inner
    ep_dim_t on[EP_MAXDIM];
    ep_inc_t os[EP_MAXDIM], od[EP_MAXDIM];   // their strides in bytes
    ep_dim_t n0, n1;                     // extents of B and I
    ep_inc_t s0, d0, s1, d1;             // their strides in elements
    ep_dim_t nsplit, cb, nb;             // split axis: extent, block, blocks
    ep_inc_t ss, sd;                     // split axis strides in bytes
    ep_dim_t units;
    int stream;
    ep_copy_fn fn;
    void (*stream_copy)(char *d, const char *s, size_t bytes);
};

#ifdef EP_COPY_X86
// Non-temporal copy of a run of n bytes: ordinary stores up to dst's first
// line boundary and after its last, whole lines streamed between.
void ep_stream_copy_avx2(char *d, const char *s, size_t n);
void ep_stream_copy_avx512(char *d, const char *s, size_t n);
// One unit of an INTERLEAVE or TRANSPOSE copy through the in-register
// transposes, per ISA and element size (s: 4 bytes, d: 8 bytes).
void ep_cs256s_tile(const ep_copy_plan_t *p, const char *s, char *d, ep_dim_t n0);
void ep_cs256d_tile(const ep_copy_plan_t *p, const char *s, char *d, ep_dim_t n0);
void ep_cs512s_tile(const ep_copy_plan_t *p, const char *s, char *d, ep_dim_t n0);
void ep_cs512d_tile(const ep_copy_plan_t *p, const char *s, char *d, ep_dim_t n0);
// d[c*d0 + r] = s[r*s1 + c], r < nr, c < nc: a strided 2-D transpose of
// 4- or 8-byte elements in the same in-register tiles.
void ep_cs256s_transpose(const float *s, ep_inc_t s1, ep_dim_t nr, ep_dim_t nc, float *d,
                         ep_inc_t d0);
void ep_cs256d_transpose(const double *s, ep_inc_t s1, ep_dim_t nr, ep_dim_t nc, double *d,
                         ep_inc_t d0);
void ep_cs512s_transpose(const float *s, ep_inc_t s1, ep_dim_t nr, ep_dim_t nc, float *d,
                         ep_inc_t d0);
void ep_cs512d_transpose(const double *s, ep_inc_t s1, ep_dim_t nr, ep_dim_t nc, double *d,
                         ep_inc_t d0);
#endif

#endif
