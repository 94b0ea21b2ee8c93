// ep_types.h -- basic types of einplan's C core.
//
// Extents and strides are 64-bit signed everywhere: strides may be negative
// (reversed views) or zero (broadcast), and sizes of several GB must not wrap.
#ifndef EP_TYPES_H
#define EP_TYPES_H

#include <stdint.h>
#include <stddef.h>

typedef int64_t ep_dim_t;   // an extent (number of elements along an axis)
typedef int64_t ep_inc_t;   // a stride or offset, in elements

// Largest number of axes in one role group (numpy allows 64 dims per array).
#define EP_MAXDIM 64

typedef enum { EP_FLOAT32 = 0, EP_FLOAT64 = 1 } ep_dtype_t;

typedef enum {
    EP_OK = 0,
    EP_ERR_NOMEM = 1,      // -> MemoryError
    EP_ERR_INVALID = 2,    // -> ValueError
} ep_status_t;

// a * b, or -1 when the product would overflow int64 (both inputs >= 0).
static inline ep_dim_t ep_mul_checked(ep_dim_t a, ep_dim_t b)
{
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > INT64_MAX / a) return -1;
    return a * b;
}

#endif
