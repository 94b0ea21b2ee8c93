// ep_copy.c -- permutation copy dst[i...] = src[i...] through any strides,
// cache-blocked: the axis that is contiguous in dst and the one contiguous in
// src are walked in TILE x TILE tiles, so both sides are read and written a
// cache line at a time ("ncabhw->nchawb" into out=, the TVM layout case),
// where an element loop in dst order would touch a new src line per element.
#include <stdlib.h>
#include <string.h>
#include "ep_api.h"

#define EP_COPY_TILE 32

// Copy one tile / run of `size`-byte elements.
#define EP_COPY_KERNEL(T)                                                      \
    static void ep_copy2d_##T(const char *s, char *d, ep_dim_t n0,             \
                              ep_inc_t s0, ep_inc_t d0, ep_dim_t n1,           \
                              ep_inc_t s1, ep_inc_t d1)                        \
    {                                                                          \
        for (ep_dim_t i0 = 0; i0 < n0; i0 += EP_COPY_TILE)                     \
            for (ep_dim_t i1 = 0; i1 < n1; i1 += EP_COPY_TILE) {               \
                ep_dim_t e0 = n0 - i0 < EP_COPY_TILE ? n0 - i0 : EP_COPY_TILE; \
                ep_dim_t e1 = n1 - i1 < EP_COPY_TILE ? n1 - i1 : EP_COPY_TILE; \
                for (ep_dim_t a = 0; a < e0; a++) {                            \
                    const T *sp = (const T *)s + (i0 + a) * s0 + i1 * s1;      \
                    T *dp = (T *)d + (i0 + a) * d0 + i1 * d1;                  \
                    for (ep_dim_t b = 0; b < e1; b++)                          \
                        dp[b * d1] = sp[b * s1];                               \
                }                                                              \
            }                                                                  \
    }
typedef struct { char b[16]; } ep_b16_t;
EP_COPY_KERNEL(uint8_t)
EP_COPY_KERNEL(uint16_t)
EP_COPY_KERNEL(uint32_t)
EP_COPY_KERNEL(uint64_t)
EP_COPY_KERNEL(ep_b16_t)

ep_status_t ep_copy(int ndim, const ep_dim_t *extent, const ep_inc_t *s_st,
                    const ep_inc_t *d_st, int itemsize, const void *src,
                    void *dst)
{
    void (*kern)(const char *, char *, ep_dim_t, ep_inc_t, ep_inc_t, ep_dim_t,
                 ep_inc_t, ep_inc_t);
    switch (itemsize) {
    case 1: kern = ep_copy2d_uint8_t; break;
    case 2: kern = ep_copy2d_uint16_t; break;
    case 4: kern = ep_copy2d_uint32_t; break;
    case 8: kern = ep_copy2d_uint64_t; break;
    case 16: kern = ep_copy2d_ep_b16_t; break;
    default: return EP_ERR_INVALID;
    }
    for (int x = 0; x < ndim; x++)
        if (extent[x] == 0) return EP_OK;
    // the tile's axes: innermost in dst (unit stride when it has one) and
    // innermost in src; the rest are walked by an odometer
    int ad = -1, as = -1;
    for (int x = 0; x < ndim; x++) {
        if (extent[x] < 2) continue;
        if (ad < 0 || llabs(d_st[x]) < llabs(d_st[ad])) ad = x;
    }
    for (int x = 0; x < ndim; x++) {
        if (extent[x] < 2 || x == ad) continue;
        if (as < 0 || llabs(s_st[x]) < llabs(s_st[as])) as = x;
    }
    ep_dim_t n0 = as >= 0 ? extent[as] : 1, n1 = ad >= 0 ? extent[ad] : 1;
    ep_inc_t s0 = as >= 0 ? s_st[as] : 0, d0 = as >= 0 ? d_st[as] : 0;
    ep_inc_t s1 = ad >= 0 ? s_st[ad] : 0, d1 = ad >= 0 ? d_st[ad] : 0;
    ep_dim_t idx[EP_MAXDIM] = {0};
    const char *s = src;
    char *d = dst;
    for (;;) {
        kern(s, d, n0, s0, d0, n1, s1, d1);
        int x = ndim - 1;
        for (; x >= 0; x--) {                 // next index of the other axes
            if (x == ad || x == as || extent[x] < 2) continue;
            if (++idx[x] < extent[x]) {
                s += s_st[x] * itemsize;
                d += d_st[x] * itemsize;
                break;
            }
            s -= (extent[x] - 1) * s_st[x] * itemsize;
            d -= (extent[x] - 1) * d_st[x] * itemsize;
            idx[x] = 0;
        }
        if (x < 0) return EP_OK;
    }
}
