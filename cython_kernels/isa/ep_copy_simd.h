// ep_copy_simd.h -- the permutation copy's in-register transposes for one
// ISA and one element size, included by isa/ep_copy_<isa>.c once per
// element size with these set:
//   EP_CS(x)     function name          T, VEC, VL   element, vector, lanes
//   CS_LOADU(p), CS_LOADN(p, n)    VL lanes / the first n, the rest zero
//   CS_STOREU(p, v), CS_STOREN(p, v, n)   VL lanes / the first n
//   CS_STREAM(p, v)   non-temporal store, p aligned to VL * sizeof(T)
//   CS_ZERO()
//   CS_IL2(a, b, lo, hi)   lo = a0 b0 a1 b1 .. (low halves zipped), hi =
//                          the high halves zipped
// The template undefines these at its end; the including file sets the
// target ISA with its pragma.
// Elements are only moved, never computed on: float shuffles and masked
// moves carry any bit pattern (int32, NaN payloads) unchanged.
#define EP_CS_INLINE static inline __attribute__((always_inline))

// R rows (a power of two <= VL) in v[0..R): log2(R) rounds of zipping row i
// with row i + R/2 is a perfect shuffle of the R*VL elements, and log2(R)
// perfect shuffles turn row-major (r, c) into (c, r): v[j] then holds
// columns j*VL/R .. (j+1)*VL/R - 1, R elements each.
EP_CS_INLINE void EP_CS(shuffle)(VEC *v, const int R)
{
    for (int step = 1; step < R; step <<= 1) {
        VEC u[VL];
#pragma GCC unroll 16
        for (int i = 0; i < R / 2; i++)
            CS_IL2(v[i], v[i + R / 2], u[2 * i], u[2 * i + 1]);
#pragma GCC unroll 16
        for (int i = 0; i < R; i++) v[i] = u[i];
    }
}

// A square tile, nr <= VL rows of the dst-inner axis by nc <= VL columns of
// the src-inner one: s[r*s1 + c] -> d[c*d0 + r].
EP_CS_INLINE void EP_CS(square)(const T *s, ep_inc_t s1, int nr, int nc, T *d,
                                ep_inc_t d0, int stream)
{
    VEC v[VL];
#pragma GCC unroll 16
    for (int r = 0; r < VL; r++)
        v[r] = r >= nr ? CS_ZERO() : nc == VL ? CS_LOADU(s + r * s1)
                                              : CS_LOADN(s + r * s1, nc);
    EP_CS(shuffle)(v, VL);
#pragma GCC unroll 16
    for (int c = 0; c < VL; c++) {
        if (c >= nc) break;
        if (nr < VL) CS_STOREN(d + c * d0, v[c], nr);
        else if (stream) CS_STREAM(d + c * d0, v[c]);
        else CS_STOREU(d + c * d0, v[c]);
    }
}

// R < VL rows of nc <= VL columns zipped into nc*R contiguous elements.
EP_CS_INLINE void EP_CS(zip)(const int R, const T *s, ep_inc_t s1, int nc,
                             T *d, int stream)
{
    VEC v[VL];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++)
        v[r] = nc == VL ? CS_LOADU(s + r * s1) : CS_LOADN(s + r * s1, nc);
    EP_CS(shuffle)(v, R);
    int left = nc * R;
#pragma GCC unroll 16
    for (int j = 0; j < R; j++, left -= VL) {
        if (left <= 0) break;
        if (left < VL) CS_STOREN(d + j * VL, v[j], left);
        else if (stream) CS_STREAM(d + j * VL, v[j]);
        else CS_STOREU(d + j * VL, v[j]);
    }
}

// n0 columns of R rows into the contiguous block d (d0 == R).  Streaming
// needs whole 64-byte lines: the first columns up to a line boundary go
// through ordinary scalar stores, when a column boundary falls on one (a
// masked AVX-512 store there, next to the streamed lines, cost 25%: 7.9 vs
// 6.3 ms on the TVM case, dst 16 bytes past a line, Zen 4 2026-11-21).
EP_CS_INLINE void EP_CS(zip_block)(const int R, const T *s, ep_inc_t s1,
                                   ep_dim_t n0, T *d, int stream)
{
    ep_dim_t c = 0;
    int st = 0;
    if (stream) {
        size_t gap = (size_t)(-(uintptr_t)d) & 63, col = (size_t)R * sizeof(T);
        if (gap % col == 0) {
            st = 1;
            c = (ep_dim_t)(gap / col);        // < VL: col >= 8 bytes
            if (c > n0) c = n0;
            for (ep_dim_t k = 0; k < c; k++)
                for (int r = 0; r < R; r++) d[k * R + r] = s[r * s1 + k];
        }
    }
    for (; c + VL <= n0; c += VL) EP_CS(zip)(R, s + c, s1, VL, d + c * R, st);
    if (c < n0) EP_CS(zip)(R, s + c, s1, (int)(n0 - c), d + c * R, 0);
}

// One unit of work: n0 columns of the src-inner axis (unit src stride) by
// all n1 rows of the dst-inner axis (unit dst stride).
void EP_CS(tile)(const ep_copy_plan_t *p, const char *sc,
                 char *dc, ep_dim_t n0)
{
    const T *s = (const T *)sc;
    T *d = (T *)dc;
    ep_dim_t n1 = p->n1;
    ep_inc_t s1 = p->s1, d0 = p->d0;
    if (n1 < VL) {                       // plan: a power of two, d0 == n1
        switch (n1) {
        case 2: EP_CS(zip_block)(2, s, s1, n0, d, p->stream); return;
        case 4: EP_CS(zip_block)(4, s, s1, n0, d, p->stream); return;
#if VL > 8
        case 8: EP_CS(zip_block)(8, s, s1, n0, d, p->stream); return;
#endif
        default:                         // not planned; correct anyway
            for (ep_dim_t c = 0; c < n0; c++)
                for (ep_dim_t r = 0; r < n1; r++) d[c * d0 + r] = s[r * s1 + c];
            return;
        }
    }
    // Streaming a VL x VL tile writes one whole line per dst row when the
    // rows are VL*sizeof(T) = 64 bytes long and line-aligned: the rows up to
    // the first line boundary go first, through ordinary (masked) stores.
    int st = 0;
    if (p->stream && VL * sizeof(T) == 64 && (d0 * (ep_inc_t)sizeof(T)) % 64 == 0) {
        size_t gap = (size_t)(-(uintptr_t)d) & 63;
        if (gap % sizeof(T) == 0) {
            ep_dim_t peel = (ep_dim_t)(gap / sizeof(T));
            if (peel > n1) peel = n1;
            for (ep_dim_t c = 0; peel && c < n0; c += VL)
                EP_CS(square)(s + c, s1, (int)peel, n0 - c < VL ? (int)(n0 - c) : VL,
                              d + c * d0, d0, 0);
            s += peel * s1;
            d += peel;
            n1 -= peel;
            st = 1;
        }
    }
    for (ep_dim_t i0 = 0; i0 < n1; i0 += EP_COPY_SQ_ROWS)
        for (ep_dim_t c0 = 0; c0 < n0; c0 += EP_COPY_SQ_COLS) {
            ep_dim_t ie = i0 + EP_COPY_SQ_ROWS < n1 ? i0 + EP_COPY_SQ_ROWS : n1;
            ep_dim_t ce = c0 + EP_COPY_SQ_COLS < n0 ? c0 + EP_COPY_SQ_COLS : n0;
            ep_dim_t i = i0;
            for (; i + VL <= ie; i += VL) {
                ep_dim_t c = c0;
                for (; c + VL <= ce; c += VL)
                    EP_CS(square)(s + i * s1 + c, s1, VL, VL, d + c * d0 + i, d0, st);
                if (c < ce)
                    EP_CS(square)(s + i * s1 + c, s1, VL, (int)(ce - c), d + c * d0 + i,
                                  d0, st);
            }
            for (ep_dim_t c = c0; i < ie && c < ce; c += VL)
                EP_CS(square)(s + i * s1 + c, s1, (int)(ie - i),
                              ce - c < VL ? (int)(ce - c) : VL, d + c * d0 + i, d0, 0);
        }
}

// d[c*d0 + r] = s[r*s1 + c] for r < nr, c < nc through the square tiles (the
// loop-nest engine's copy of a tile of an input crossed along its rows:
// eight or four source rows read as vectors, not one element at a time)
void EP_CS(transpose)(const T *s, ep_inc_t s1, ep_dim_t nr, ep_dim_t nc, T *d,
                      ep_inc_t d0)
{
    for (ep_dim_t r = 0; r < nr; r += VL) {
        int rr = nr - r < VL ? (int)(nr - r) : VL;
        ep_dim_t c = 0;
        for (; c + VL <= nc; c += VL)
            EP_CS(square)(s + r * s1 + c, s1, rr, VL, d + c * d0 + r, d0, 0);
        if (c < nc)
            EP_CS(square)(s + r * s1 + c, s1, rr, (int)(nc - c), d + c * d0 + r, d0, 0);
    }
}

#undef EP_CS_INLINE
// this instantiation's parameters
#undef EP_CS
#undef T
#undef VEC
#undef VL
#undef CS_MASK
#undef CS_LOADU
#undef CS_LOADN
#undef CS_STOREU
#undef CS_STOREN
#undef CS_STREAM
#undef CS_ZERO
#undef CS_IL2
