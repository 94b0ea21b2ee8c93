// ep_nest_template.h -- the loop-nest engine's inner loops (one row of the nest) for one
// ISA and one dtype, included once per pair with these set:
//   NT(x)   function name          T     the real element type
//   IT      the integer type of T's size (lane shuffles)
//   CPX     1: interleaved complex elements (re, im), 0: real
//   VL      lanes of T per vector   NT_TGT   the target attribute (never -march)
// Vectors are GCC vector extensions of VL lanes, so the one source compiles
// to SSE2 / AVX2 / AVX-512 code under the target attribute.  The template
// undefines its parameters at its end.
//
// A row: n elements along the innermost loop, nm "moving" inputs p[j] with
// element strides s[j] (the inputs that are constant along the row were
// folded into the caller's scale).  Sums run blockwise: NB elements per
// block in several vector accumulators, blocks combined pairwise (a binary
// counter of partial sums), so the error grows with log(n) as in numpy's
// pairwise sum.
#define NT_FN static NT_TGT
#define NT_VB (VL * (int)sizeof(T))
typedef T NT(vec) __attribute__((vector_size(NT_VB), aligned(sizeof(T))));
typedef IT NT(ivec) __attribute__((vector_size(NT_VB)));
#define NT_LD(q) (*(const NT(vec) *)(q))
#define NT_ST(q, v) (*(NT(vec) *)(q) = (v))
#define NB 2048
#define NT_CH 256            // elements of a strided row gathered into L1 at a time

// lane indices: REV reverses a vector; EVEN (ODD) takes the even (odd) lanes
// of two (stride 2), EVEN_LAST the same from a second load one element
// early (the odd lanes of its second half: no element past the last read); ODDREV the odd lanes of two in reverse order (stride -2);
// PREV, PEVEN and PODDREV do the same with (re, im) pairs as the lanes
// SWh swaps lanes h apart (lane l takes lane l ^ h): the steps of a
// horizontal sum
#if VL == 2
#define NT_SW1 {1, 0}
#elif VL == 4
#define NT_SW2 {2, 3, 0, 1}
#define NT_SW1 {1, 0, 3, 2}
#elif VL == 8
#define NT_SW4 {4, 5, 6, 7, 0, 1, 2, 3}
#define NT_SW2 {2, 3, 0, 1, 6, 7, 4, 5}
#define NT_SW1 {1, 0, 3, 2, 5, 4, 7, 6}
#else
#define NT_SW8 {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}
#define NT_SW4 {4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11}
#define NT_SW2 {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13}
#define NT_SW1 {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}
#endif
#if VL == 2
#define NT_REV {1, 0}
#define NT_EVEN {0, 2}
#define NT_EVEN_LAST {0, 3}
#define NT_ODD {1, 3}
#define NT_ODDREV {3, 1}
#define NT_PREV {0, 1}
#define NT_PEVEN {0, 1}
#define NT_PODDREV {2, 3}
#elif VL == 4
#define NT_REV {3, 2, 1, 0}
#define NT_EVEN {0, 2, 4, 6}
#define NT_EVEN_LAST {0, 2, 5, 7}
#define NT_ODD {1, 3, 5, 7}
#define NT_ODDREV {7, 5, 3, 1}
#define NT_PREV {2, 3, 0, 1}
#define NT_PEVEN {0, 1, 4, 5}
#define NT_PODDREV {6, 7, 2, 3}
#elif VL == 8
#define NT_REV {7, 6, 5, 4, 3, 2, 1, 0}
#define NT_EVEN {0, 2, 4, 6, 8, 10, 12, 14}
#define NT_EVEN_LAST {0, 2, 4, 6, 9, 11, 13, 15}
#define NT_ODD {1, 3, 5, 7, 9, 11, 13, 15}
#define NT_ODDREV {15, 13, 11, 9, 7, 5, 3, 1}
#define NT_PREV {6, 7, 4, 5, 2, 3, 0, 1}
#define NT_PEVEN {0, 1, 4, 5, 8, 9, 12, 13}
#define NT_PODDREV {14, 15, 10, 11, 6, 7, 2, 3}
#else
#define NT_REV {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
#define NT_EVEN {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
#define NT_EVEN_LAST {0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31}
#define NT_ODD {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}
#define NT_ODDREV {31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1}
#define NT_PREV {14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1}
#define NT_PEVEN {0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29}
#define NT_PODDREV {30, 31, 26, 27, 22, 23, 18, 19, 14, 15, 10, 11, 6, 7, 2, 3}
#endif

// b[i] = element i*s of x for i < n (a complex element is two T): whole
// vectors for s = -1 (reversed loads), s = 2 (even lanes of two loads) and
// s = -2 (odd lanes of two loads reversed, the pair of loads starting one
// element before the vector's last, so that they end on its first: an
// axis reversed outside a unit one, 'ab,ba->' with B[::-1] of (n, 2)),
// scalar copies otherwise.  Vector loads stay inside the elements the row
// reads.
NT_FN void NT(gather)(const T *x, ep_inc_t s, ep_dim_t n, T *b)
{
    ep_dim_t i = 0;
#if CPX
    const int E = VL / 2;    // complex elements per vector
    if (s == -1) {
        const NT(ivec) m = NT_PREV;
        for (; i + E <= n; i += E)
            NT_ST(b + 2 * i, __builtin_shuffle(NT_LD(x - 2 * (i + E - 1)), m));
    } else if (s == 2) {
        const NT(ivec) m = NT_PEVEN;
        for (; i + E < n; i += E)
            NT_ST(b + 2 * i, __builtin_shuffle(NT_LD(x + 4 * i), NT_LD(x + 4 * i + VL), m));
    } else if (s == -2) {
        const NT(ivec) m = NT_PODDREV;
        for (; i + E < n; i += E) {
            const T *q = x - 4 * (i + E - 1) - 2;
            NT_ST(b + 2 * i, __builtin_shuffle(NT_LD(q), NT_LD(q + VL), m));
        }
    }
    for (; i < n; i++) {
        b[2 * i] = x[2 * i * s];
        b[2 * i + 1] = x[2 * i * s + 1];
    }
#else
    if (s == -1) {
        const NT(ivec) m = NT_REV;
        for (; i + VL <= n; i += VL)
            NT_ST(b + i, __builtin_shuffle(NT_LD(x - (i + VL - 1)), m));
    } else if (s == 2) {
        const NT(ivec) m = NT_EVEN;
        for (; i + VL < n; i += VL)
            NT_ST(b + i, __builtin_shuffle(NT_LD(x + 2 * i), NT_LD(x + 2 * i + VL), m));
    } else if (s == -2) {
        const NT(ivec) m = NT_ODDREV;
        for (; i + VL < n; i += VL) {
            const T *q = x - 2 * (i + VL - 1) - 1;
            NT_ST(b + i, __builtin_shuffle(NT_LD(q), NT_LD(q + VL), m));
        }
    }
    for (; i + 4 <= n; i += 4) {
        T v0 = x[i * s], v1 = x[(i + 1) * s], v2 = x[(i + 2) * s], v3 = x[(i + 3) * s];
        b[i] = v0; b[i + 1] = v1; b[i + 2] = v2; b[i + 3] = v3;
    }
    for (; i < n; i++) b[i] = x[i * s];
#endif
}

// a row worth gathering into L1 before the contiguous kernel: every input
// strided by -1 or +-2 at most (whole-vector gathers), at least one not
// unit-stride, and rows long enough to pay the copy
static inline __attribute__((always_inline)) int
NT(gatherable)(int nm, const ep_inc_t *s, ep_dim_t n)
{
    int strided = 0;
    for (int j = 0; j < nm; j++) {
        if (s[j] != 1 && s[j] != -1 && s[j] != 2 && s[j] != -2) return 0;
        strided |= s[j] != 1;
    }
    return strided && n >= 4 * VL;
}

static inline __attribute__((always_inline)) NT_TGT T NT(hsum)(NT(vec) v, int step, int first)
{
    // sum of lanes first, first + step, ... (step 1: all; 2: re or im
    // lanes) as a tree of log2(VL) vector shuffles and adds: a row's sum
    // ends in this chain, and VL - 1 scalar adds in a row (60 cycles for
    // 16 lanes) kept the loads of the next rows waiting ('bij,bj->bi'
    // 256^3 f32 row by row: 17 GB/s, where one stream reads 28)
#if VL >= 16
    if (step <= 8) { const NT(ivec) m = NT_SW8; v += __builtin_shuffle(v, m); }
#endif
#if VL >= 8
    if (step <= 4) { const NT(ivec) m = NT_SW4; v += __builtin_shuffle(v, m); }
#endif
#if VL >= 4
    if (step <= 2) { const NT(ivec) m = NT_SW2; v += __builtin_shuffle(v, m); }
#endif
    if (step <= 1) { const NT(ivec) m = NT_SW1; v += __builtin_shuffle(v, m); }
    return v[first];
}

// One level of NT(hsum) (lane l plus lane l ^ h) on two vectors at once:
// x's sums in the lanes whose bit h is clear, y's where it is set.  Levels
// of these sum up to sixteen vectors' lanes in NT(hsum)'s order, each vector's sum
// the bits NT(hsum) gives it alone, in a few in-lane shuffles a level
// instead of a horizontal sum per vector.
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(bfly)(NT(vec) x, NT(vec) y, int h)
{
    NT(ivec) lo, hi;
    for (int l = 0; l < VL; l++) {
        lo[l] = l & h ? VL + (l ^ h) : l;
        hi[l] = l & h ? VL + l : l ^ h;
    }
    return __builtin_shuffle(x, y, lo) + __builtin_shuffle(x, y, hi);
}

// The butterfly levels of K <= 16 vectors' lane sums, in NT(hsum)'s order:
// each level pairs vectors while there are two or more (split[level] set),
// else folds the one left onto itself.  Written out, each h a literal, so
// each level's shuffle masks are constants (a loop over h builds them at
// run time).  Returns the vectors left; *lev the levels run.
static inline __attribute__((always_inline)) NT_TGT int NT(hsums_tree)(NT(vec) *v, int K,
                                                                      int *split, int *lev)
{
    int cnt = K;
    *lev = 0;
#define NT_HSUMS_LEVEL(H)                                                                 \
    do {                                                                                  \
        split[(*lev)++] = cnt > 1;                                                        \
        if (cnt > 1) {                                                                    \
            _Pragma("GCC unroll 8") for (int k = 0; k < cnt / 2; k++)                     \
                v[k] = NT(bfly)(v[2 * k], v[2 * k + 1], H);                               \
            cnt /= 2;                                                                     \
        } else {                                                                          \
            v[0] = NT(bfly)(v[0], v[0], H);                                               \
        }                                                                                 \
    } while (0)
#if VL >= 16
    NT_HSUMS_LEVEL(8);
#endif
#if VL >= 8
    NT_HSUMS_LEVEL(4);
#endif
#if VL >= 4
    NT_HSUMS_LEVEL(2);
#endif
    NT_HSUMS_LEVEL(1);
#undef NT_HSUMS_LEVEL
    return cnt;
}

// sums[k] = NT(hsum)(v[k], 1, 0) for K <= 16 vectors (K a constant where it
// is inlined, so the levels unroll)
static inline __attribute__((always_inline)) NT_TGT void NT(hsums)(NT(vec) *v, int K, T *sums)
{
    int split[8], lev;
    int cnt = NT(hsums_tree)(v, K, split, &lev);
    // lane l of vector j came, at each level that halved the vectors, from
    // the odd one of its pair where l has that level's bit
    for (int j = 0; j < cnt; j++)
        for (int l = 0; l < VL; l++) {
            int k = j;
            for (int i = lev - 1, h = 1; i >= 0; i--, h *= 2)
                if (split[i]) k = 2 * k + ((l & h) != 0);
            if (k < K) sums[k] = v[j][l];
        }
}

static inline __attribute__((always_inline)) NT_TGT void NT(hsums8)(NT(vec) *v, T *sums)
{
    NT(hsums)(v, 8, sums);
}

// The lanes of VL vectors summed, vector q's sum in lane q of the result:
// hsums's butterflies with K = VL (each sum the bits NT(hsum) gives its
// vector alone), which leave vector q's sum in the lane whose bits are q's
// reversed, then one permute back
static inline __attribute__((always_inline)) NT_TGT NT(vec) NT(hsums_vec)(NT(vec) *v)
{
    int split[8], lev;
    NT(hsums_tree)(v, VL, split, &lev);
    NT(ivec) rev;
    for (int l = 0; l < VL; l++) {
        int q = 0;
        for (int h = 1; h < VL; h *= 2) q = 2 * q + ((l & h) != 0);
        rev[l] = q;
    }
    return __builtin_shuffle(v[0], rev);
}

static inline __attribute__((always_inline)) NT_TGT NT(vec) NT(kept)(NT(vec) v, NT(ivec) keep)
{
    return (NT(vec))((NT(ivec))v & keep);     // lanes outside keep cleared bitwise
}

// Rows of e lanes, step > 0 lanes apart, each loaded as one vector from its
// start (rows shorter than a vector: rows_dotv_part, crows_dotv): how many
// of the R rows' loads stay inside the last row's end
static inline ep_dim_t NT(part_safe)(ep_dim_t R, ep_dim_t e, ep_inc_t step)
{
    if (e >= VL) return R;
    const ep_dim_t over = (VL - e + step - 1) / step;
    return R > over ? R - over : 0;
}

// Lanes 0 .. e-1 of the row of e < VL lanes at z + off, a row past
// part_safe's: the vector ending on the row's end with its lanes moved down
// (the same lanes as a load from the start), or -- an operand shorter than a
// vector -- a zero-padded copy
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(ld_part_end)(const T *z, ep_inc_t off, ep_dim_t e)
{
    if (off + (ep_inc_t)e >= VL) {
        NT(ivec) down;
        for (int l = 0; l < VL; l++) down[l] = (l + VL - (int)e) % VL;
        return __builtin_shuffle(NT_LD(z + off + (ep_inc_t)e - VL), down);
    }
    T b[VL];
    for (int l = 0; l < VL; l++) b[l] = l < (int)e ? z[off + l] : 0;
    return NT_LD(b);
}

// A vector of elements i .. i+E-1 of x (E = VL / W elements of W reals,
// W = 2 for interleaved complex; element k at x[W*k*S]) for a stride S of
// 1, -1, 2 or -2, a constant after inlining: one load, reversed, or the even
// (odd, reversed) elements of two loads.  A stride of +-2 reads one element
// past element i+E-1.
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(ld_s)(const T *x, int S, ep_dim_t i)
{
    const int W = 1 + CPX;
    const ep_dim_t E = VL / W;
    if (S == 1)
        return NT_LD(x + W * i);
    if (S == -1) {
        const NT(ivec) m = CPX ? (NT(ivec))NT_PREV : (NT(ivec))NT_REV;
        return __builtin_shuffle(NT_LD(x - W * (i + E - 1)), m);
    }
    if (S == 2) {
        const NT(ivec) m = CPX ? (NT(ivec))NT_PEVEN : (NT(ivec))NT_EVEN;
        return __builtin_shuffle(NT_LD(x + 2 * W * i), NT_LD(x + 2 * W * i + VL), m);
    }
    const NT(ivec) m = CPX ? (NT(ivec))NT_PODDREV : (NT(ivec))NT_ODDREV;
    const T *q = x - 2 * W * (i + E - 1) - W;
    return __builtin_shuffle(NT_LD(q), NT_LD(q + VL), m);
}

static NT_TGT void NT(blk_fused_s)(int nm, const T *x, ep_inc_t sx, const T *y, ep_inc_t sy,
                                   ep_dim_t n, T *res, int conj);

#ifdef NT_HALVES
// One vector loaded as two 32-byte halves (the bits as they are, real or
// interleaved complex).
static inline __attribute__((always_inline)) NT_TGT NT(vec) NT(ld_halves)(const T *x)
{
    __m256d lo = _mm256_loadu_pd((const double *)x);
    __m256d hi = _mm256_loadu_pd((const double *)(x + VL / 2));
    return (NT(vec))_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1);
}
#define NT_LDW(p, H) ((H) ? NT(ld_halves)(p) : NT_LD(p))
#else
#define NT_LDW(p, H) NT_LD(p)
#endif

#if !CPX

// sum_{i<n} prod_j q[j][i] over contiguous rows, n <= NB; one or two
// inputs' vectors loaded whole or (H) in halves, the same sums either way
static inline __attribute__((always_inline)) NT_TGT T
NT(blk_contig_w)(int nm, const T *const *q, ep_dim_t n, int H)
{
    NT(vec) a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    ep_dim_t i = 0;
    const T *x = q[0], *y = nm > 1 ? q[1] : q[0];
    if (nm == 1) {
        for (; i + 4 * VL <= n; i += 4 * VL) {
            a0 += NT_LDW(x + i, H); a1 += NT_LDW(x + i + VL, H);
            a2 += NT_LDW(x + i + 2 * VL, H); a3 += NT_LDW(x + i + 3 * VL, H);
        }
        for (; i + VL <= n; i += VL) a0 += NT_LDW(x + i, H);
    } else if (nm == 2) {
        for (; i + 4 * VL <= n; i += 4 * VL) {
            a0 += NT_LDW(x + i, H) * NT_LDW(y + i, H);
            a1 += NT_LDW(x + i + VL, H) * NT_LDW(y + i + VL, H);
            a2 += NT_LDW(x + i + 2 * VL, H) * NT_LDW(y + i + 2 * VL, H);
            a3 += NT_LDW(x + i + 3 * VL, H) * NT_LDW(y + i + 3 * VL, H);
        }
        for (; i + VL <= n; i += VL) a0 += NT_LDW(x + i, H) * NT_LDW(y + i, H);
    } else {
        for (; i + 2 * VL <= n; i += 2 * VL) {
            NT(vec) v = NT_LD(x + i), w = NT_LD(x + i + VL);
            for (int j = 1; j < nm; j++) {
                v *= NT_LD(q[j] + i);
                w *= NT_LD(q[j] + i + VL);
            }
            a0 += v; a1 += w;
        }
    }
    T r = NT(hsum)((a0 + a1) + (a2 + a3), 1, 0);
    T t0 = 0, t1 = 0;
    for (; i + 1 < n; i += 2) {
        T v = x[i], w = x[i + 1];
        for (int j = 1; j < nm; j++) { v *= q[j][i]; w *= q[j][i + 1]; }
        t0 += v; t1 += w;
    }
    if (i < n) {
        T v = x[i];
        for (int j = 1; j < nm; j++) v *= q[j][i];
        t0 += v;
    }
    return r + (t0 + t1);
}

NT_FN T NT(blk_contig)(int nm, const T *const *q, ep_dim_t n)
{
    return NT(blk_contig_w)(nm, q, n, 0);
}

// the same through any strides (a gather: four scalar accumulators)
NT_FN T NT(blk_strided)(int nm, const T *const *q, const ep_inc_t *s, ep_dim_t n)
{
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    ep_dim_t i = 0;
    const T *x = q[0], *y = nm > 1 ? q[1] : q[0];
    ep_inc_t sx = s[0], sy = nm > 1 ? s[1] : s[0];
    if (nm == 1) {
        for (; i + 4 <= n; i += 4) {
            a0 += x[i * sx]; a1 += x[(i + 1) * sx];
            a2 += x[(i + 2) * sx]; a3 += x[(i + 3) * sx];
        }
        for (; i < n; i++) a0 += x[i * sx];
    } else if (nm == 2) {
        for (; i + 4 <= n; i += 4) {
            a0 += x[i * sx] * y[i * sy];
            a1 += x[(i + 1) * sx] * y[(i + 1) * sy];
            a2 += x[(i + 2) * sx] * y[(i + 2) * sy];
            a3 += x[(i + 3) * sx] * y[(i + 3) * sy];
        }
        for (; i < n; i++) a0 += x[i * sx] * y[i * sy];
    } else {
        for (; i < n; i++) {
            T v = x[i * sx];
            for (int j = 1; j < nm; j++) v *= q[j][i * s[j]];
            if (i & 1) a1 += v; else a0 += v;
        }
    }
    return (a0 + a1) + (a2 + a3);
}

// sum_{i<n} x[i*SX] (times y[i*SY]) for strides of +-1 and +-2, the
// elements taken into vectors as they are loaded: a gather into L1 before
// the sum leaves the memory idle while the sum runs ('a,a->' on two
// [::2] slices of 64 MB f64 0.73x numpy's BLAS)
static inline __attribute__((always_inline)) NT_TGT void
NT(blk_fused)(int nm, const T *x, int SX, const T *y, int SY, ep_dim_t n, T *res, int conj)
{
    (void)conj;
    NT(vec) a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    int wide = SX == 2 || SX == -2 || (nm == 2 && (SY == 2 || SY == -2));
    ep_dim_t lim = n - wide, i = 0;     // loads stay inside the row
    for (; i + 4 * VL <= lim; i += 4 * VL) {
        if (nm == 2) {
            a0 += NT(ld_s)(x, SX, i) * NT(ld_s)(y, SY, i);
            a1 += NT(ld_s)(x, SX, i + VL) * NT(ld_s)(y, SY, i + VL);
            a2 += NT(ld_s)(x, SX, i + 2 * VL) * NT(ld_s)(y, SY, i + 2 * VL);
            a3 += NT(ld_s)(x, SX, i + 3 * VL) * NT(ld_s)(y, SY, i + 3 * VL);
        } else {
            a0 += NT(ld_s)(x, SX, i);
            a1 += NT(ld_s)(x, SX, i + VL);
            a2 += NT(ld_s)(x, SX, i + 2 * VL);
            a3 += NT(ld_s)(x, SX, i + 3 * VL);
        }
    }
    for (; i + VL <= lim; i += VL)
        a0 += nm == 2 ? NT(ld_s)(x, SX, i) * NT(ld_s)(y, SY, i) : NT(ld_s)(x, SX, i);
    T r = NT(hsum)((a0 + a1) + (a2 + a3), 1, 0), t = 0;
    for (; i < n; i++)
        t += nm == 2 ? x[i * SX] * y[i * SY] : x[i * SX];
    res[0] = r + t;
}

// the sum of blk_fused_s, for the real rows' callers
static inline __attribute__((always_inline)) NT_TGT T
NT(fused_sum)(int nm, const T *x, ep_inc_t sx, const T *y, ep_inc_t sy, ep_dim_t n)
{
    T res[1];
    NT(blk_fused_s)(nm, x, sx, y, sy, n, res, 0);
    return res[0];
}

// Partial sums combined pairwise: a binary counter of levels, level k
// holding the sum of 2^k partial sums, so the error grows with log(count)
// (the real counterpart of NT(pairs)).
typedef struct { T l[64]; uint64_t cnt; } NT(sums);

static inline __attribute__((always_inline)) NT_TGT void NT(sums_add)(NT(sums) *ps, T v)
{
    int k = 0;
    for (; ps->cnt >> k & 1; k++) v = ps->l[k] + v;
    ps->l[k] = v;
    ps->cnt++;
}

static inline __attribute__((always_inline)) NT_TGT T NT(sums_total)(const NT(sums) *ps)
{
    T r = 0;
    for (int k = 0; ps->cnt >> k; k++)
        if (ps->cnt >> k & 1) r = ps->l[k] + r;
    return r;
}

// row_sum past one block (or gathered): blocks combined pairwise (contiguous
// ones loaded in halves when asked: stream_sum); its
// buffers (16 KB of stack) kept out of row_sum's own frame, which short rows
// take thousands of times per call
__attribute__((noinline)) NT_FN void NT(row_sum_blocks)(int nm, const T *const *p,
                                                        const ep_inc_t *s, ep_dim_t n,
                                                        int contig, int gath, int halves,
                                                        T *res)
{
    // one or two inputs strided by +-1 or +-2: the fused loads, in blocks
    int fused = gath && nm <= 2;
    ep_dim_t bl = gath && !fused ? NT_CH : NB;
    T buf[EP_NEST_MAXIN][NT_CH];
    NT(sums) ps;                   // its levels are written before they are read
    ps.cnt = 0;
    const T *q[EP_NEST_MAXIN];
    for (ep_dim_t b = 0; b < n; b += bl) {
        ep_dim_t len = n - b < bl ? n - b : bl;
        for (int j = 0; j < nm; j++) {
            q[j] = p[j] + b * s[j];
            if (gath && !fused && s[j] != 1) {
                NT(gather)(q[j], s[j], len, buf[j]);
                q[j] = buf[j];
            }
        }
        T v = fused ? NT(fused_sum)(nm, q[0], s[0], q[nm - 1], s[nm - 1], len)
            : halves ? NT(blk_contig_w)(nm, q, len, 1)
            : contig || gath ? NT(blk_contig)(nm, q, len) : NT(blk_strided)(nm, q, s, len);
        NT(sums_add)(&ps, v);
    }
    res[0] = NT(sums_total)(&ps);
}

NT_FN void NT(row_sum)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n, T *res)
{
    int contig = 1;
    for (int j = 0; j < nm; j++) contig &= s[j] == 1;
    // strided inputs gathered into L1 a block of NT_CH at a time (SIMD sums)
    int gath = !contig && NT(gatherable)(nm, s, n);
    if (n <= NB && (!gath || nm <= 2)) {
        // one block (fused: its sum plus zero, row_sum_blocks' bits)
        res[0] = contig ? NT(blk_contig)(nm, p, n)
                 : gath ? NT(fused_sum)(nm, p[0], s[0], p[nm - 1], s[nm - 1], n) + (T)0
                 : NT(blk_strided)(nm, p, s, n);
        return;
    }
    NT(row_sum_blocks)(nm, p, s, n, contig, gath, 0, res);
}

// o[i*so] = (first ? 0 : o[i*so]) + c * prod_j p[j][i*s[j]]
NT_FN void NT(row_prod_in)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                        T *o, ep_inc_t so, const T *cp, int first)
{
    const T c = cp[0];
    int contig = so == 1;
    for (int j = 0; j < nm; j++) contig &= s[j] == 1;
    ep_dim_t i = 0;
    if (contig) {
        NT(vec) cv = c - (NT(vec)){0};
        if (nm == 1) {
            const T *x = p[0];
            if (first) for (; i + VL <= n; i += VL) NT_ST(o + i, cv * NT_LD(x + i));
            else for (; i + VL <= n; i += VL) NT_ST(o + i, NT_LD(o + i) + cv * NT_LD(x + i));
        } else if (nm == 2) {
            const T *x = p[0], *y = p[1];
            if (first)
                for (; i + VL <= n; i += VL) NT_ST(o + i, cv * (NT_LD(x + i) * NT_LD(y + i)));
            else
                for (; i + VL <= n; i += VL)
                    NT_ST(o + i, NT_LD(o + i) + cv * (NT_LD(x + i) * NT_LD(y + i)));
        } else {
            for (; i + VL <= n; i += VL) {
                NT(vec) v = nm ? NT_LD(p[0] + i) : cv - cv + 1;
                for (int j = 1; j < nm; j++) v *= NT_LD(p[j] + i);
                v = cv * v;
                NT_ST(o + i, first ? v : NT_LD(o + i) + v);
            }
        }
    }
    if (nm == 2) {
        const T *x = p[0], *y = p[1];
        ep_inc_t sx = s[0], sy = s[1];
        for (; i + 4 <= n; i += 4) {
            T v0 = c * (x[i * sx] * y[i * sy]), v1 = c * (x[(i + 1) * sx] * y[(i + 1) * sy]);
            T v2 = c * (x[(i + 2) * sx] * y[(i + 2) * sy]);
            T v3 = c * (x[(i + 3) * sx] * y[(i + 3) * sy]);
            if (!first) {
                v0 += o[i * so]; v1 += o[(i + 1) * so];
                v2 += o[(i + 2) * so]; v3 += o[(i + 3) * so];
            }
            o[i * so] = v0; o[(i + 1) * so] = v1; o[(i + 2) * so] = v2; o[(i + 3) * so] = v3;
        }
        if (first) for (; i < n; i++) o[i * so] = c * (x[i * sx] * y[i * sy]);
        else for (; i < n; i++) o[i * so] += c * (x[i * sx] * y[i * sy]);
    } else if (nm == 1) {
        // loads of four elements ahead of their stores (no store-to-load
        // stalls between a strided read and the unit-stride writes)
        const T *x = p[0];
        ep_inc_t sx = s[0];
        for (; i + 4 <= n; i += 4) {
            T v0 = c * x[i * sx], v1 = c * x[(i + 1) * sx];
            T v2 = c * x[(i + 2) * sx], v3 = c * x[(i + 3) * sx];
            if (!first) {
                v0 += o[i * so]; v1 += o[(i + 1) * so];
                v2 += o[(i + 2) * so]; v3 += o[(i + 3) * so];
            }
            o[i * so] = v0; o[(i + 1) * so] = v1; o[(i + 2) * so] = v2; o[(i + 3) * so] = v3;
        }
        if (first) for (; i < n; i++) o[i * so] = c * x[i * sx];
        else for (; i < n; i++) o[i * so] += c * x[i * sx];
    }
    for (; i < n; i++) {
        T v = 1;
        for (int j = 0; j < nm; j++) v *= p[j][i * s[j]];
        v = c * v;
        o[i * so] = first ? v : o[i * so] + v;
    }
}

#ifdef NT_HALVES
// row_prod_in over one contiguous row of one or two inputs, the inputs'
// vectors loaded whole or (`halves`) as two 32-byte halves: a core that
// splits 64-byte loads in two streams rows from L3 and memory faster so
// (Zen 4, 'a,a->a' 3.3M float32: 0.92 ms in halves, 1.03 whole; float64
// 12M: 8.5 and 9.6), and ep_nest.c measures which way a core prefers.  The
// same products either way.
NT_FN void NT(stream_prod)(int nm, const T *const *p, ep_dim_t n, T *o, const T *cp, int first,
                           int halves)
{
    static const ep_inc_t one[2] = {1, 1};
    ep_dim_t i = 0;
    if (halves) {
        const NT(vec) cv = cp[0] - (NT(vec)){0};
        const T *x = p[0], *y = nm > 1 ? p[1] : 0;
        for (; i + VL <= n; i += VL) {
            NT(vec) v = NT(ld_halves)(x + i);
            if (y) v *= NT(ld_halves)(y + i);
            v = cv * v;
            NT_ST(o + i, first ? v : NT_LD(o + i) + v);
        }
    }
    if (i < n) {
        const T *q[2] = {p[0] + i, nm > 1 ? p[1] + i : 0};
        NT(row_prod_in)(nm, q, one, n - i, o + i, 1, cp, first);
    }
}

// row_sum over one contiguous row of one or two inputs past L3, their
// vectors loaded whole or (`halves`) in halves, as stream_prod's: a Zen 4
// core sums 'a->' of 7.6M float64 at 22-27 GB/s loading whole vectors,
// 25-33 in halves.  row_sum's blocks and pairwise sums, so the same bits.
NT_FN void NT(stream_sum)(int nm, const T *const *p, ep_dim_t n, T *res, int halves)
{
    static const ep_inc_t one[2] = {1, 1};
    if (!halves || n <= NB) NT(row_sum)(nm, p, one, n, res);
    else NT(row_sum_blocks)(nm, p, one, n, 1, 0, 1, res);
}
#endif

#else  // interleaved complex: element i is (q[2i], q[2i+1])

// lane indices that swap each (real, imaginary) pair of a vector
#if VL == 2
#define NT_PAIR_SWAP {1, 0}
#elif VL == 4
#define NT_PAIR_SWAP {1, 0, 3, 2}
#elif VL == 8
#define NT_PAIR_SWAP {1, 0, 3, 2, 5, 4, 7, 6}
#else
#define NT_PAIR_SWAP {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14}
#endif
// lane indices that copy each pair's real (imaginary) part into both lanes
#if VL == 2
#define NT_PAIR_RE {0, 0}
#define NT_PAIR_IM {1, 1}
#elif VL == 4
#define NT_PAIR_RE {0, 0, 2, 2}
#define NT_PAIR_IM {1, 1, 3, 3}
#elif VL == 8
#define NT_PAIR_RE {0, 0, 2, 2, 4, 4, 6, 6}
#define NT_PAIR_IM {1, 1, 3, 3, 5, 5, 7, 7}
#else
#define NT_PAIR_RE {0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14}
#define NT_PAIR_IM {1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15}
#endif

// Complex partial sums combined pairwise: a binary counter of levels, level
// k holding the sum of 2^k partial sums, so the error grows with log(count).
typedef struct { T r[64], i[64]; uint64_t cnt; } NT(pairs);

static inline __attribute__((always_inline)) NT_TGT void
NT(pairs_add)(NT(pairs) *ps, T vr, T vi)
{
    int k = 0;
    for (; ps->cnt >> k & 1; k++) { vr = ps->r[k] + vr; vi = ps->i[k] + vi; }
    ps->r[k] = vr; ps->i[k] = vi;
    ps->cnt++;
}

static inline __attribute__((always_inline)) NT_TGT void
NT(pairs_total)(const NT(pairs) *ps, T *re, T *im)
{
    T r = 0, m = 0;
    for (int k = 0; ps->cnt >> k; k++)
        if (ps->cnt >> k & 1) { r = ps->r[k] + r; m = ps->i[k] + m; }
    *re = r; *im = m;
}

// a complex dot's whole pairs of vectors: (xr yr, xi yi) lanes into *a,
// (xr yi, xi yr) into *b; the index of the first real past them
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(dot_vecs_w)(const T *x, const T *y, ep_dim_t n2, NT(vec) *a, NT(vec) *b, int H)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0};
    ep_dim_t i = 0;
    for (; i + 2 * VL <= n2; i += 2 * VL) {
        NT(vec) u = NT_LDW(x + i, H), v = NT_LDW(y + i, H);
        NT(vec) u1 = NT_LDW(x + i + VL, H), v1 = NT_LDW(y + i + VL, H);
        a0 += u * v; b0 += u * __builtin_shuffle(v, sw);
        a1 += u1 * v1; b1 += u1 * __builtin_shuffle(v1, sw);
    }
    *a = a0 + a1;
    *b = b0 + b1;
    return i;
}

static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(dot_vecs)(const T *x, const T *y, ep_dim_t n2, NT(vec) *a, NT(vec) *b)
{
    return NT(dot_vecs_w)(x, y, n2, a, b, 0);
}

// the reals past dot_vecs' pairs as vectors, into the same *a, *b: one whole
// vector, then the row's last vector (it overlaps the one before) with the
// lanes already summed cleared bitwise (a multiply by 0 would turn an inf
// into a nan).  A scalar tail of up to VL - 1 complex products is a chain of
// dependent FMAs as long as the rest of a short row ('ab,a->b' (45, 10519)
// F c64: 13 of a row's 45 products scalar, 0.42x cgemv).  Rows shorter than
// a vector keep their scalar tail (dot_tail), as rows_sum's short rows four
// at a time sum them.  Returns the reals done.
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(dot_rest)(const T *x, const T *y, ep_dim_t i, ep_dim_t n2, NT(vec) *a, NT(vec) *b)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    if (n2 < VL) return i;
    if (i + VL <= n2) {
        NT(vec) u = NT_LD(x + i), v = NT_LD(y + i);
        *a += u * v; *b += u * __builtin_shuffle(v, sw);
        i += VL;
    }
    if (i < n2) {
        ep_dim_t e = n2 - VL, done = i - e;      // lanes below done already summed
        const NT(ivec) rev = NT_REV;      // lane l holds VL - 1 - l
        NT(ivec) keep = rev <= (IT)(VL - 1 - done);
        NT(vec) u = NT_LD(x + e), v = NT_LD(y + e);
        *a += (NT(vec))((NT(ivec))(u * v) & keep);
        *b += (NT(vec))((NT(ivec))(u * __builtin_shuffle(v, sw)) & keep);
        i = n2;
    }
    return i;
}

// the lane signs that turn the dot's vectors into its real and imaginary
// sums: conj(x) y = (xr yr + xi yi, xr yi - xi yr), sg = -1 for conj
static inline __attribute__((always_inline)) NT_TGT void
NT(dot_signs)(T sg, NT(vec) *sr, NT(vec) *sm)
{
    for (int l = 0; l < VL; l++) {
        (*sr)[l] = l & 1 ? -sg : 1;
        (*sm)[l] = l & 1 ? sg : 1;
    }
}

// the dot's elements past its whole pairs of vectors, one by one
static inline __attribute__((always_inline)) NT_TGT void
NT(dot_tail)(const T *x, const T *y, ep_dim_t i, ep_dim_t n2, T sg, T *r, T *m)
{
    for (; i < n2; i += 2) {
        *r += x[i] * y[i] - sg * (x[i + 1] * y[i + 1]);
        *m += x[i] * y[i + 1] + sg * (x[i + 1] * y[i]);
    }
}

// Rows of n2 >= VL reals dotted NT_CROWS at a time with a vector w shared
// by every row, no scales: w's vectors and their pair swaps loaded once for
// the rows, each row's vectors one load, a multiply and an add into each of
// its two sums ('ab,a->b' (48, 10519) F c64: 52 cycles a row through the
// general four-row block below, where every row reloads and swaps w).
// Each row summed as dot_vecs and dot_rest sum it (two accumulators over
// the pairs, then the rest): the same bits as the row alone (the products
// commute; with w the first input its swapped sums sit in the other lane of
// each pair, which the lane tree adds the same way).  NT_CROWS rows hold
// 4 * NT_CROWS accumulators: four where there are 32 vector registers.
// Returns the rows done.
#define NT_CROWS (NT_VB == 64 ? 4 : 2)
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(rows_cdot_shared)(const T *x, ep_inc_t ax, const T *w, ep_dim_t n2, ep_dim_t R,
                     T *o, ep_inc_t so, int first, int seq)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    const int K = NT_CROWS;
    NT(vec) sr, sm;
    NT(dot_signs)(1, &sr, &sm);
    ep_dim_t r = 0;
    for (; r + K <= R; r += K) {
        NT(vec) at[NT_CROWS], bt[NT_CROWS], v[2 * NT_CROWS];
        T sums[2 * NT_CROWS];
        const T *u = x + r * ax;
        ep_dim_t i = 0;
        if (seq) {
            // from memory: the rows one after another, one stream (their
            // lines interleaved read c128 rows of 45 at 9 GB/s, 21 so)
#pragma GCC unroll 4
            for (int t = 0; t < K; t++) i = NT(dot_vecs)(u + t * ax, w, n2, &at[t], &bt[t]);
        } else {
            NT(vec) a0[NT_CROWS], a1[NT_CROWS], b0[NT_CROWS], b1[NT_CROWS];
            for (int t = 0; t < K; t++) a0[t] = a1[t] = b0[t] = b1[t] = (NT(vec)){0};
            for (; i + 2 * VL <= n2; i += 2 * VL) {
                NT(vec) w0 = NT_LD(w + i), w1 = NT_LD(w + i + VL);
                NT(vec) s0 = __builtin_shuffle(w0, sw), s1 = __builtin_shuffle(w1, sw);
#pragma GCC unroll 4
                for (int t = 0; t < K; t++) {
                    NT(vec) u0 = NT_LD(u + t * ax + i), u1 = NT_LD(u + t * ax + i + VL);
                    a0[t] += u0 * w0; b0[t] += u0 * s0;
                    a1[t] += u1 * w1; b1[t] += u1 * s1;
                }
            }
            for (int t = 0; t < K; t++) { at[t] = a0[t] + a1[t]; bt[t] = b0[t] + b1[t]; }
        }
#pragma GCC unroll 4
        for (int t = 0; t < K; t++) {
            NT(dot_rest)(u + t * ax, w, i, n2, &at[t], &bt[t]);
            v[t] = at[t] * sr;
            v[K + t] = bt[t] * sm;
        }
        NT(hsums)(v, 2 * K, sums);
        for (int t = 0; t < K; t++) {
            T vr = sums[t] + (T)0, vi = sums[K + t] + (T)0;
            T *d = o + 2 * (r + t) * so;
            int fr = first && (r + t == 0 || so != 0);
            d[0] = fr ? vr : d[0] + vr;
            d[1] = fr ? vi : d[1] + vi;
        }
    }
    return r;
}

// sum_{i<n} prod_j q[j][i] over contiguous rows of one or two inputs, n <= NB;
// conj: the first of two inputs conjugated.  Inlined where rows are short
// (rows_sum's rows of a few vectors: the call would cost as much as the row)
static inline __attribute__((always_inline)) NT_TGT void
NT(blk_contig_in)(int nm, const T *const *q, ep_dim_t n, T *re, T *im, int conj, int H)
{
    // the 2n reals as vectors: even lanes hold real parts, odd lanes imaginary
    ep_dim_t i = 0, n2 = 2 * n;
    const T *x = q[0], *y = nm > 1 ? q[1] : q[0];
    T r, m;
    if (nm == 1) {
        NT(vec) a0 = {0}, a1 = {0};
        for (; i + 2 * VL <= n2; i += 2 * VL) {
            a0 += NT_LDW(x + i, H);
            a1 += NT_LDW(x + i + VL, H);
        }
        NT(vec) a = a0 + a1;
        r = NT(hsum)(a, 2, 0); m = NT(hsum)(a, 2, 1);
        for (; i < n2; i += 2) { r += x[i]; m += x[i + 1]; }
    } else {
        T sg = conj ? -1 : 1;
        NT(vec) a, b, sr, sm;
        i = NT(dot_vecs_w)(x, y, n2, &a, &b, H);
        i = NT(dot_rest)(x, y, i, n2, &a, &b);
        NT(dot_signs)(sg, &sr, &sm);
        r = NT(hsum)(a * sr, 1, 0);
        m = NT(hsum)(b * sm, 1, 0);
        NT(dot_tail)(x, y, i, n2, sg, &r, &m);
    }
    *re = r; *im = m;
}

NT_FN void NT(blk_contig)(int nm, const T *const *q, ep_dim_t n, T *re, T *im, int conj)
{
    NT(blk_contig_in)(nm, q, n, re, im, conj, 0);
}

#ifdef NT_HALVES
// blk_contig with the vectors loaded in halves (stream_sum): the same sums
NT_FN void NT(blk_contig_h)(int nm, const T *const *q, ep_dim_t n, T *re, T *im, int conj)
{
    NT(blk_contig_in)(nm, q, n, re, im, conj, 1);
}
#endif

// blk_contig_in through strides of +-1 and +-2, the elements taken into
// vectors as they are loaded: a gather into L1 before the sum reads the two
// rows a few KB at a time in turn, and such alternating reads ran at half
// the memory's speed ('a,a->' on two [::2] slices of 53 MB c128: 17 ms where
// numpy's interleaved loop takes 10).  The same sums in the same order as
// the contiguous block wherever its vectors reach as far.
static inline __attribute__((always_inline)) NT_TGT void
NT(blk_fused)(int nm, const T *x, int SX, const T *y, int SY, ep_dim_t n, T *res, int conj)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    const ep_dim_t E = VL / 2;
    int wide = SX == 2 || SX == -2 || (nm == 2 && (SY == 2 || SY == -2));
    ep_dim_t lim = n - wide, i = 0;     // loads stay inside the row
    NT(vec) a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0};
    for (; i + 2 * E <= lim; i += 2 * E) {
        NT(vec) u = NT(ld_s)(x, SX, i), u1 = NT(ld_s)(x, SX, i + E);
        if (nm == 2) {
            NT(vec) v = NT(ld_s)(y, SY, i), v1 = NT(ld_s)(y, SY, i + E);
            a0 += u * v; b0 += u * __builtin_shuffle(v, sw);
            a1 += u1 * v1; b1 += u1 * __builtin_shuffle(v1, sw);
        } else {
            a0 += u; a1 += u1;
        }
    }
    T r, m;
    if (nm == 1) {
        NT(vec) a = a0 + a1;
        r = NT(hsum)(a, 2, 0); m = NT(hsum)(a, 2, 1);
        for (; i < n; i++) { r += x[2 * i * SX]; m += x[2 * i * SX + 1]; }
    } else {
        T sg = conj ? -1 : 1;
        NT(vec) sr, sm;
        NT(dot_signs)(sg, &sr, &sm);
        r = NT(hsum)((a0 + a1) * sr, 1, 0);
        m = NT(hsum)((b0 + b1) * sm, 1, 0);
        for (; i < n; i++) {
            T xr = x[2 * i * SX], xi = x[2 * i * SX + 1];
            T yr = y[2 * i * SY], yi = y[2 * i * SY + 1];
            r += xr * yr - sg * (xi * yi);
            m += xr * yi + sg * (xi * yr);
        }
    }
    res[0] = r; res[1] = m;
}

NT_FN void NT(blk_strided)(int nm, const T *const *q, const ep_inc_t *s, ep_dim_t n,
                           T *re, T *im, int conj)
{
    T r0 = 0, m0 = 0, r1 = 0, m1 = 0;
    T sg = conj ? -1 : 1;
    for (ep_dim_t i = 0; i < n; i++) {
        T vr = q[0][2 * i * s[0]], vi = sg * q[0][2 * i * s[0] + 1];
        for (int j = 1; j < nm; j++) {
            T wr = q[j][2 * i * s[j]], wi = q[j][2 * i * s[j] + 1];
            T t = vr * wr - vi * wi;
            vi = vr * wi + vi * wr;
            vr = t;
        }
        if (i & 1) { r1 += vr; m1 += vi; } else { r0 += vr; m0 += vi; }
    }
    *re = r0 + r1; *im = m0 + m1;
}

static inline __attribute__((always_inline)) NT_TGT void
NT(row_sum_conj)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n, T *res, int conj,
                 int halves)
{
    int contig = nm <= 2;
    for (int j = 0; j < nm; j++) contig &= s[j] == 1;
    // one or two inputs strided by +-1 or +-2: SIMD sums of the fused loads
    int fused = !contig && nm <= 2 && NT(gatherable)(nm, s, n);
    NT(pairs) ps;                  // its levels are written before they are read
    ps.cnt = 0;
    const T *q[EP_NEST_MAXIN];
    for (ep_dim_t b = 0; b < n; b += NB) {
        ep_dim_t len = n - b < NB ? n - b : NB;
        for (int j = 0; j < nm; j++) q[j] = p[j] + 2 * b * s[j];
        T vr, vi, v[2];
#ifdef NT_HALVES
        if (contig && halves) NT(blk_contig_h)(nm, q, len, &vr, &vi, conj);
        else
#endif
        if (contig) NT(blk_contig)(nm, q, len, &vr, &vi, conj);
        else if (fused) {
            NT(blk_fused_s)(nm, q[0], s[0], q[nm - 1], s[nm - 1], len, v, conj);
            vr = v[0]; vi = v[1];
        } else NT(blk_strided)(nm, q, s, len, &vr, &vi, conj);
        NT(pairs_add)(&ps, vr, vi);
    }
    NT(pairs_total)(&ps, &res[0], &res[1]);
}

NT_FN void NT(row_sum)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n, T *res)
{
    NT(row_sum_conj)(nm, p, s, n, res, 0, 0);
}

// sum_i conj(p[0][i]) * p[1][i]: numpy.vdot's dot, pairwise as row_sum
NT_FN void NT(row_dotc)(const T *const *p, const ep_inc_t *s, ep_dim_t n, T *res)
{
    NT(row_sum_conj)(2, p, s, n, res, 1, 0);
}

#ifdef NT_HALVES
// row_sum over one contiguous row of one or two inputs past L3, their
// vectors loaded whole or (`halves`) in halves, as the real stream_sum's
// (this Xeon: 'a,a->' of 5.3M complex128 at 15 GB/s whole, the real dot of
// the same bytes at 17 in halves); the same blocks and pairwise sums
NT_FN void NT(stream_sum)(int nm, const T *const *p, ep_dim_t n, T *res, int halves)
{
    static const ep_inc_t one[2] = {1, 1};
    NT(row_sum_conj)(nm, p, one, n, res, 0, halves);
}
#endif

// the complex products of one vector: x * y with y's (re, im) pairs swapped
// in ys -- (xr yr - xi yi, xr yi + xi yr) as dup_re(x) * y + dup_im(x) * alt * ys
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(cmul)(NT(vec) x, NT(vec) y, NT(vec) alt)
{
    const NT(ivec) sw = NT_PAIR_SWAP, re = NT_PAIR_RE, im = NT_PAIR_IM;
    return __builtin_shuffle(x, re) * y + __builtin_shuffle(x, im) * alt *
           __builtin_shuffle(y, sw);
}

// o[i] = (first ? 0 : o[i]) + c * prod_j x_j[i] over contiguous rows of one
// or two inputs (an axpy row of a complex GEMV, an elementwise product);
// returns the elements done (whole vectors), the caller finishes the tail
NT_FN ep_dim_t NT(prod_contig)(int nm, const T *const *p, ep_dim_t n, T *o, T cr, T ci,
                               int first)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) alt = {0};
    for (int v = 0; v < VL; v++) alt[v] = v & 1 ? 1 : -1;
    const NT(vec) crv = cr - (NT(vec)){0}, civ = ci * alt;
    const int unit = cr == 1 && ci == 0;
    const ep_dim_t H = VL / 2;          // complex elements per vector
    const T *x = p[0], *y = nm > 1 ? p[1] : p[0];
    ep_dim_t i = 0;
    for (; i + 2 * H <= n; i += 2 * H) {
        NT(vec) u0 = NT_LD(x + 2 * i), u1 = NT_LD(x + 2 * i + VL);
        if (nm > 1) {
            u0 = NT(cmul)(u0, NT_LD(y + 2 * i), alt);
            u1 = NT(cmul)(u1, NT_LD(y + 2 * i + VL), alt);
        }
        if (!unit) {
            u0 = crv * u0 + civ * __builtin_shuffle(u0, sw);
            u1 = crv * u1 + civ * __builtin_shuffle(u1, sw);
        }
        if (!first) { u0 += NT_LD(o + 2 * i); u1 += NT_LD(o + 2 * i + VL); }
        NT_ST(o + 2 * i, u0);
        NT_ST(o + 2 * i + VL, u1);
    }
    for (; i + H <= n; i += H) {
        NT(vec) u = NT_LD(x + 2 * i);
        if (nm > 1) u = NT(cmul)(u, NT_LD(y + 2 * i), alt);
        if (!unit) u = crv * u + civ * __builtin_shuffle(u, sw);
        if (!first) u += NT_LD(o + 2 * i);
        NT_ST(o + 2 * i, u);
    }
    return i;
}

NT_FN void NT(row_prod_in)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                           T *o, ep_inc_t so, const T *cp, int first)
{
    const T cr = cp[0], ci = cp[1];
    if ((nm == 1 || nm == 2) && so == 1 && s[0] == 1 && (nm == 1 || s[1] == 1) &&
        n >= VL / 2) {
        ep_dim_t i = NT(prod_contig)(nm, p, n, o, cr, ci, first);
        if (i < n) {
            const T *q[2] = {p[0] + 2 * i, nm > 1 ? p[1] + 2 * i : p[0]};
            NT(row_prod_in)(nm, q, s, n - i, o + 2 * i, so, cp, first);
        }
        return;
    }
    if (nm == 2 && cr == 1 && ci == 0) {
        const T *x = p[0], *y = p[1];
        ep_inc_t sx = 2 * s[0], sy = 2 * s[1];
        for (ep_dim_t i = 0; i < n; i++) {
            T xr = x[i * sx], xi = x[i * sx + 1], yr = y[i * sy], yi = y[i * sy + 1];
            T *d = o + 2 * i * so;
            T vr = xr * yr - xi * yi, vi = xr * yi + xi * yr;
            if (first) { d[0] = vr; d[1] = vi; }
            else { d[0] += vr; d[1] += vi; }
        }
        return;
    }
    for (ep_dim_t i = 0; i < n; i++) {
        T vr = cr, vi = ci;
        for (int j = 0; j < nm; j++) {
            T wr = p[j][2 * i * s[j]], wi = p[j][2 * i * s[j] + 1];
            T t = vr * wr - vi * wi;
            vi = vr * wi + vi * wr;
            vr = t;
        }
        T *d = o + 2 * i * so;
        if (first) { d[0] = vr; d[1] = vi; }
        else { d[0] += vr; d[1] += vi; }
    }
}
#endif

#define NT_FUSED_Y(SX, sy)                                                      \
    switch (sy) {                                                               \
    case 1: NT(blk_fused)(2, x, SX, y, 1, n, res, conj); return;                \
    case -1: NT(blk_fused)(2, x, SX, y, -1, n, res, conj); return;              \
    case 2: NT(blk_fused)(2, x, SX, y, 2, n, res, conj); return;                \
    default: NT(blk_fused)(2, x, SX, y, -2, n, res, conj); return;              \
    }

// blk_fused with the strides made constants (strides of +-1, +-2 only):
// res[0] the sum, res[1] its imaginary part for complex rows
static NT_TGT void NT(blk_fused_s)(int nm, const T *x, ep_inc_t sx, const T *y, ep_inc_t sy,
                                   ep_dim_t n, T *res, int conj)
{
    if (nm == 1) {
        switch (sx) {
        case 1: NT(blk_fused)(1, x, 1, x, 1, n, res, conj); return;
        case -1: NT(blk_fused)(1, x, -1, x, 1, n, res, conj); return;
        case 2: NT(blk_fused)(1, x, 2, x, 1, n, res, conj); return;
        default: NT(blk_fused)(1, x, -2, x, 1, n, res, conj); return;
        }
    }
    switch (sx) {
    case 1: NT_FUSED_Y(1, sy)
    case -1: NT_FUSED_Y(-1, sy)
    case 2: NT_FUSED_Y(2, sy)
    default: NT_FUSED_Y(-2, sy)
    }
}
#undef NT_FUSED_Y

#if !CPX
// ld_s's vector for S = 1 or 2 that reads nothing past its last element (i
// + VL - 1), so it may end on the row's last one: at stride 2 the second
// load starts one element back
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(ld_s_end)(const T *x, int S, ep_dim_t i)
{
    const NT(ivec) ml = NT_EVEN_LAST;
    return S == 1 ? NT_LD(x + i)
                  : __builtin_shuffle(NT_LD(x + 2 * i), NT_LD(x + 2 * i + VL - 1), ml);
}

// row_prod_in's products of inputs at strides 1 and 2 (n >= VL, so = 1)
// loaded straight into vectors, the same bits (gathered into L1 in chunks
// first, 'a,a->a' on two [::2] f32 views of 2.8M elements ran 1.3-1.8x
// slower than numpy's scalar loop).  Written fresh, the last vector ends on
// the row's last element (overlapping the one before: the same values
// twice); added to, the tail goes element by element.
static NT_TGT void NT(row_prod_fused)(int nm, const T *x, ep_inc_t sx, const T *y, ep_inc_t sy,
                                      ep_dim_t n, T *o, T c, int first)
{
    const NT(vec) cv = c - (NT(vec)){0};
    ep_dim_t i = 0;
    for (; i + VL < n; i += VL) {
        NT(vec) v = NT(ld_s)(x, (int)sx, i);
        if (nm == 2) v = cv * (v * NT(ld_s)(y, (int)sy, i));
        else v = cv * v;
        NT_ST(o + i, first ? v : NT_LD(o + i) + v);
    }
    if (first) {
        i = n - VL;
        NT(vec) v = NT(ld_s_end)(x, (int)sx, i);
        if (nm == 2) v = cv * (v * NT(ld_s_end)(y, (int)sy, i));
        else v = cv * v;
        NT_ST(o + i, v);
        return;
    }
    for (; i < n; i++) o[i] += nm == 2 ? c * (x[i * sx] * y[i * sy]) : c * x[i * sx];
}
#endif

// row_prod_in with inputs strided by -1 or +-2 gathered into L1 NT_CH
// elements at a time, so the SIMD row runs on them (real rows at strides 1
// and 2 only: row_prod_fused)
NT_FN void NT(row_prod)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                        T *o, ep_inc_t so, const T *cp, int first)
{
#if !CPX
    if (so == 1 && nm >= 1 && nm <= 2 && n >= VL && (s[0] == 1 || s[0] == 2) &&
        (nm == 1 || s[1] == 1 || s[1] == 2) && (s[0] == 2 || (nm == 2 && s[1] == 2))) {
        NT(row_prod_fused)(nm, p[0], s[0], p[nm - 1], s[nm - 1], n, o, cp[0], first);
        return;
    }
#endif
    if (so != 1 || nm > 2 || !NT(gatherable)(nm, s, n)) {
        NT(row_prod_in)(nm, p, s, n, o, so, cp, first);
        return;
    }
    T buf[2][(1 + CPX) * NT_CH];
    const T *q[2];
    const ep_inc_t one[2] = {1, 1};
    for (ep_dim_t b = 0; b < n; b += NT_CH) {
        ep_dim_t len = n - b < NT_CH ? n - b : NT_CH;
        for (int j = 0; j < nm; j++) {
            q[j] = p[j] + (1 + CPX) * b * s[j];
            if (s[j] != 1) {
                NT(gather)(q[j], s[j], len, buf[j]);
                q[j] = buf[j];
            }
        }
        NT(row_prod_in)(nm, q, one, len, o + (1 + CPX) * b, 1, cp, first);
    }
}

// buf[r*n + i] = element r*sr + i*si of x for r < R, i < n: a tile's rows
// copied contiguous, read along the rows' own axis (sr, the small stride).
// NT_PK rows at a time (a cache line of them when sr = 1): their n source
// lines stay in L1 across the blocks, the writes are NT_PK streams.
// streams: the source comes from memory, not from cache (ep_nest.c).
#define NT_PK (CPX ? 4 : 8)
#define NT_DI 8              // rows past the most a row's permutes pick from (R - 1 a row)

#if !CPX
// The permute masks that pick row r of R rows end to end (element l*R + r
// into lane l) from R vectors: m[0] takes the lanes of vectors 0 and 1,
// m[k] (k >= 2) each lane whose element lies in vector k from it and keeps
// the others
static inline NT_TGT void NT(pick_masks)(int R, int r, NT(ivec) *m)
{
    for (int l = 0; l < VL; l++) {
        IT e = (IT)(l * R + r);
        m[0][l] = e < 2 * VL ? e : 0;
        for (int k = 2; k < R; k++) m[k][l] = e / VL == (IT)k ? (IT)VL + e % VL : (IT)l;
    }
}

// One row's vector picked from R vectors v by its masks m (pick_masks)
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(pick)(const NT(vec) *v, int R, const NT(ivec) *m)
{
    NT(vec) t = __builtin_shuffle(v[0], v[1], m[0]);
#pragma GCC unroll 8
    for (int k = 2; k < R; k++) t = __builtin_shuffle(t, v[k], m[k]);
    return t;
}

// pack's rows picked from a contiguous (n, R) block by m (see there), whole
// groups of VL columns; returns the columns done
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(pack_picked)(const T *x, int R, ep_dim_t n, T *buf, NT(ivec) (*m)[NT_DI])
{
    ep_dim_t i = 0;
    for (; i + VL <= n; i += VL) {
        const T *a = x + i * R;
        NT(vec) v[NT_DI];
#pragma GCC unroll 8
        for (int k = 0; k < R; k++) v[k] = NT_LD(a + k * VL);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) NT_ST(buf + r * n + i, NT(pick)(v, R, m[r]));
    }
    return i;
}
#endif
#define NT_PK2 512           // longest tile row the stride-2 copy compacts (32 KB for float64)
NT_FN void NT(pack)(const T *x, ep_inc_t sr, ep_inc_t si, ep_dim_t R, ep_dim_t n, T *buf,
                    int streams)
{
#ifdef NT_WHOLE8
    // complex64: each element's 8 bytes move whole, as a float64's do, so
    // the float64 copy (transposes, stride-2 compaction) runs it
    NT_WHOLE8(pack)((const double *)x, sr, si, R, n, (double *)buf, streams);
    return;
#endif
#ifdef NT_TRANSPOSE
    // rows contiguous along r, at least one vector of them: a transpose in
    // vector tiles (fewer rows take the scalar loop: masked tiles cost more)
    if (sr == 1 && R >= VL / (1 + CPX)) {
        NT_TRANSPOSE(x, si, n, R, buf, n);
        return;
    }
#if !CPX
    if (sr == 2 && R > VL && R <= NT_PK2) {
        // rows at stride 2 (a [:, ::2] slice): each column's R elements
        // compacted (even lanes of two loads; the last ones element by
        // element, so nothing past the column's last element is read) into
        // a block of NT_PK columns, which is transposed as above
        T tmp[NT_PK * NT_PK2];
        const NT(ivec) ev = NT_EVEN;
        for (ep_dim_t i0 = 0; i0 < n; i0 += NT_PK) {
            const ep_dim_t nb = n - i0 < NT_PK ? n - i0 : NT_PK;
            for (ep_dim_t i = 0; i < nb; i++) {
                const T *a = x + (i0 + i) * si;
                T *t = tmp + i * R;
                ep_dim_t r = 0;
                for (; r + VL < R; r += VL)
                    NT_ST(t + r, __builtin_shuffle(NT_LD(a + 2 * r), NT_LD(a + 2 * r + VL), ev));
                for (; r < R; r++) t[r] = a[2 * r];
            }
            NT_TRANSPOSE(tmp, R, nb, R, buf + i0, n);
        }
        return;
    }
#endif
#endif
#if !CPX
    if (sr == 1 && si == 4 && R == 4 && R < VL) {
        // four rows end to end along i (a contiguous (n, 4) block, fewer
        // rows than a vector; two are never copied, stride 2 loads
        // directly): de-interleaved by the even and odd lanes of pairs of
        // vectors, two levels, VL columns at a time
        const NT(ivec) ev = NT_EVEN, od = NT_ODD;
        ep_dim_t i = 0;
        for (; i + VL <= n; i += VL) {
            const T *a = x + i * R;
            NT(vec) v0 = NT_LD(a), v1 = NT_LD(a + VL);
            NT(vec) v2 = NT_LD(a + 2 * VL), v3 = NT_LD(a + 3 * VL);
            // rows 0 and 2 (1 and 3) of VL / 2 columns in e0 (o0), the
            // next VL / 2 in e1 (o1)
            NT(vec) e0 = __builtin_shuffle(v0, v1, ev), o0 = __builtin_shuffle(v0, v1, od);
            NT(vec) e1 = __builtin_shuffle(v2, v3, ev), o1 = __builtin_shuffle(v2, v3, od);
            NT_ST(buf + i, __builtin_shuffle(e0, e1, ev));
            NT_ST(buf + n + i, __builtin_shuffle(o0, o1, ev));
            NT_ST(buf + 2 * n + i, __builtin_shuffle(e0, e1, od));
            NT_ST(buf + 3 * n + i, __builtin_shuffle(o0, o1, od));
        }
        for (; i < n; i++)
            for (ep_dim_t r = 0; r < R; r++) buf[r * n + i] = x[i * R + r];
        return;
    }
    if (sr == 1 && si == R && R >= 2 && R < NT_DI && R < VL && VL * sizeof(T) == 64 &&
        n >= VL) {
        // other short rows end to end along i (a contiguous (n, R) block,
        // 64-byte vectors): VL columns are R vectors, and each row's lanes
        // are picked from them by R - 1 two-source permutes ('ab,b->a' (3,
        // 2259369) F complex64 -- its float64 copy -- element by element:
        // 53% of the call, 0.48x numpy).  m[r][k]: row r's lanes taken from
        // vectors 0 and 1 (k = 0), then each lane whose element is in
        // vector k from it, the others kept
        NT(ivec) m[NT_DI][NT_DI];
        for (ep_dim_t r = 0; r < R; r++) NT(pick_masks)((int)R, (int)r, m[r]);
        ep_dim_t i;
        switch (R) {   // R a constant in each: the vectors stay in registers
        case 2: i = NT(pack_picked)(x, 2, n, buf, m); break;
        case 3: i = NT(pack_picked)(x, 3, n, buf, m); break;
        case 5: i = NT(pack_picked)(x, 5, n, buf, m); break;
        case 6: i = NT(pack_picked)(x, 6, n, buf, m); break;
        default: i = NT(pack_picked)(x, 7, n, buf, m);
        }
        for (; i < n; i++)
            for (ep_dim_t r = 0; r < R; r++) buf[r * n + i] = x[i * R + r];
        return;
    }
#endif
    const int w = 1 + CPX;
    ep_dim_t r0 = 0;
#if CPX
    if (sizeof(T) == 8 && sr == 1 && n >= 2 && streams) {
        // complex128 rows contiguous along r, from memory: four source rows
        // i read in step along r, four runs the prefetchers follow (the walk
        // below asks for one line of every row per pair of r, each line of
        // it a page or more from the last: 'ab,ab->' (573, 1067) C x F
        // c128, 64 x 64 tiles, 3.4 ms so, 2.2 in runs; numpy 1.6-2.0);
        // 32-byte loads of two elements split between the copy's rows r and
        // r + 1, 64 bytes of each written, the next four runs asked for a
        // line at a time
        typedef double v4 __attribute__((vector_size(32), aligned(8)));
        typedef double v2 __attribute__((vector_size(16), aligned(8)));
        typedef int64_t i4 __attribute__((vector_size(32)));
        const double *a = (const double *)x;
        double *b = (double *)buf;
        const ep_dim_t R2 = R & ~(ep_dim_t)1;
        ep_dim_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const double *a0 = a + 2 * i * si, *a1 = a0 + 2 * si;
            const double *a2 = a1 + 2 * si, *a3 = a2 + 2 * si;
            const int ahead = i + 8 <= n;
            for (ep_dim_t r = 0; r < R2; r += 2) {
                double *b0 = b + 2 * (r * n + i), *b1 = b0 + 2 * n;
                if (ahead && (r & 3) == 0)
                    for (int t = 4; t < 8; t++) __builtin_prefetch(a0 + 2 * (t * si + r));
                v4 l0 = *(const v4 *)(a0 + 2 * r), l1 = *(const v4 *)(a1 + 2 * r);
                v4 l2 = *(const v4 *)(a2 + 2 * r), l3 = *(const v4 *)(a3 + 2 * r);
                *(v4 *)b0 = __builtin_shuffle(l0, l1, (i4){0, 1, 4, 5});
                *(v4 *)(b0 + 4) = __builtin_shuffle(l2, l3, (i4){0, 1, 4, 5});
                *(v4 *)b1 = __builtin_shuffle(l0, l1, (i4){2, 3, 6, 7});
                *(v4 *)(b1 + 4) = __builtin_shuffle(l2, l3, (i4){2, 3, 6, 7});
            }
        }
        for (; i < n; i++)
            for (ep_dim_t r = 0; r < R2; r++)
                *(v2 *)(b + 2 * (r * n + i)) = *(const v2 *)(a + 2 * (r + i * si));
        r0 = R2;
    } else if (sizeof(T) == 8 && sr == 1 && n >= 2) {
        // complex128 rows contiguous along r, from cache: 2 x 2 tiles of
        // 32-byte loads (two elements of two source rows), each element 16
        // bytes whole, a pair of r across every source row: as many lines
        // in flight as rows ('ab,ab->' (100, 2000) C x F c128: 270 us so,
        // 380 four rows at a time in step)
        typedef double v4 __attribute__((vector_size(32), aligned(8)));
        typedef int64_t i4 __attribute__((vector_size(32)));
        for (; r0 + 2 <= R; r0 += 2) {
            const double *a = (const double *)x + 2 * r0;
            double *b0 = (double *)buf + 2 * r0 * n, *b1 = b0 + 2 * n;
            ep_dim_t i = 0;
            for (; i + 2 <= n; i += 2) {
                v4 l0 = *(const v4 *)(a + 2 * i * si), l1 = *(const v4 *)(a + 2 * (i + 1) * si);
                *(v4 *)(b0 + 2 * i) = __builtin_shuffle(l0, l1, (i4){0, 1, 4, 5});
                *(v4 *)(b1 + 2 * i) = __builtin_shuffle(l0, l1, (i4){2, 3, 6, 7});
            }
            for (; i < n; i++)
                for (int h = 0; h < 4; h++)
                    (h < 2 ? b0 : b1)[2 * i + (h & 1)] = a[2 * i * si + h];
        }
    }
    if (sizeof(T) == 8 && sr != 1 && r0 == 0 && n >= 4) {
        // complex128 rows strided along r (a [:, ::2] slice): four source
        // rows i read along r in step, each element's 16 bytes whole, four
        // of them stored together in the copy's row r -- the source read
        // once in order, the copy written a line at a time
        typedef double v2 __attribute__((vector_size(16), aligned(8)));
        const double *a = (const double *)x;
        double *b = (double *)buf;
        ep_dim_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const double *a0 = a + 2 * i * si, *a1 = a0 + 2 * si;
            const double *a2 = a1 + 2 * si, *a3 = a2 + 2 * si;
            for (ep_dim_t r = 0; r < R; r++) {
                double *d = b + 2 * (r * n + i);
                ep_inc_t o = 2 * r * sr;
                v2 e0 = *(const v2 *)(a0 + o), e1 = *(const v2 *)(a1 + o);
                v2 e2 = *(const v2 *)(a2 + o), e3 = *(const v2 *)(a3 + o);
                *(v2 *)d = e0; *(v2 *)(d + 2) = e1; *(v2 *)(d + 4) = e2; *(v2 *)(d + 6) = e3;
            }
        }
        for (; i < n; i++)
            for (ep_dim_t r = 0; r < R; r++)
                *(v2 *)(b + 2 * (r * n + i)) = *(const v2 *)(a + 2 * (r * sr + i * si));
        return;
    }
#endif
    for (; r0 + NT_PK <= R; r0 += NT_PK) {
        const T *a = x + w * r0 * sr;
        T *b = buf + w * r0 * n;
        for (ep_dim_t i = 0; i < n; i++) {
            const T *ai = a + w * i * si;
            T v[w * NT_PK];
            for (int r = 0; r < NT_PK; r++)
                for (int h = 0; h < w; h++) v[w * r + h] = ai[w * r * sr + h];
            for (int r = 0; r < NT_PK; r++)
                for (int h = 0; h < w; h++) b[w * (r * n + i) + h] = v[w * r + h];
        }
    }
    for (; r0 < R; r0++)
        for (ep_dim_t i = 0; i < n; i++)
            for (int h = 0; h < w; h++)
                buf[w * (r0 * n + i) + h] = x[w * (r0 * sr + i * si) + h];
}

// The scale of row r: the product of the inputs that are constant along the
// row (nf of them at f[j], rows apart by fs[j] elements), in T; 1 when none.
static inline __attribute__((always_inline)) NT_TGT void
NT(scale)(int nf, const T *const *f, const ep_inc_t *fs, ep_dim_t r, T *sc)
{
    T cr = 1, ci = 0;
    for (int j = 0; j < nf; j++) {
#if CPX
        const T *v = f[j] + 2 * r * fs[j];
        if (j == 0) { cr = v[0]; ci = v[1]; }
        else {
            T t = cr * v[0] - ci * v[1];
            ci = cr * v[1] + ci * v[0];
            cr = t;
        }
#else
        T v = f[j][r * fs[j]];
        cr = j == 0 ? v : cr * v;
#endif
    }
    sc[0] = cr; sc[1] = ci;
}

#if !CPX
// Four short rows of n elements, summed or dotted side by side, one input
// at a stride SX of -1 or +-2 (a [:, ::2] slice), the other (SY) at +-1 or
// +-2: whole vectors loaded straight in (ld_s), the four vectors' lane sums
// in one butterfly (hsums), the elements past them in four scalar chains --
// not a call and a horizontal sum per row ('ab->a' (15789, 19) of a [:, ::2]
// f64: 0.78x numpy so; rows of 9: 0.48x; 'ab,ab->a' rows of 9 f64, one
// input sliced: 0.75x).  The same operations for every row of a call, so
// the same bits.  Rows of up to NT_FUS4_BYTES of all inputs; longer ones run
// one at a time in blk_fused's four accumulators (rows of 33 f64 of two
// [:, ::2] slices: 8 wide streams, 0.93x one at a time).
#define NT_FUS4_BYTES 512
static inline __attribute__((always_inline)) NT_TGT void
NT(fused4)(int nm, const T *const *x, int SX, const T *const *y, int SY, ep_dim_t n, T *acc)
{
    const int wide = SX == 2 || SX == -2 || (nm == 2 && (SY == 2 || SY == -2));
    const ep_dim_t lim = n - wide;       // loads stay inside the row
    NT(vec) v[4] = {{0}, {0}, {0}, {0}};
    ep_dim_t i = 0;
    for (; i + VL <= lim; i += VL) {
#pragma GCC unroll 4
        for (int t = 0; t < 4; t++)
            v[t] += nm == 2 ? NT(ld_s)(x[t], SX, i) * NT(ld_s)(y[t], SY, i) : NT(ld_s)(x[t], SX, i);
    }
    NT(hsums)(v, 4, acc);
#pragma GCC unroll 4
    for (int t = 0; t < 4; t++) {
        T u = 0;
        for (ep_dim_t k = i; k < n; k++) u += nm == 2 ? x[t][k * SX] * y[t][k * SY] : x[t][k * SX];
        acc[t] += u;
    }
}

// fused4 with the strides as constants (sx, sy in -2..2, not 0; not both 1)
static NT_TGT void NT(fused4_call)(int nm, const T *const *x, ep_inc_t sx, const T *const *y,
                                   ep_inc_t sy, ep_dim_t n, T *acc)
{
#define NT_F4_Y(SX)                                                                       \
    do {                                                                                  \
        if (nm == 1) NT(fused4)(1, x, SX, x, SX, n, acc);                                 \
        else if (sy == 1) NT(fused4)(2, x, SX, y, 1, n, acc);                             \
        else if (sy == -1) NT(fused4)(2, x, SX, y, -1, n, acc);                           \
        else if (sy == 2) NT(fused4)(2, x, SX, y, 2, n, acc);                             \
        else NT(fused4)(2, x, SX, y, -2, n, acc);                                         \
    } while (0)
    if (nm == 2 && sx == 1) {      // the strided input second
        if (sy == -1) NT(fused4)(2, y, -1, x, 1, n, acc);
        else if (sy == 2) NT(fused4)(2, y, 2, x, 1, n, acc);
        else NT(fused4)(2, y, -2, x, 1, n, acc);
    } else if (sx == -1) NT_F4_Y(-1);
    else if (sx == 2) NT_F4_Y(2);
    else NT_F4_Y(-2);
#undef NT_F4_Y
}

#define NT_SV 8              // longest row whose shared vector is held in registers
#define NT_DOTV_BYTES 1024    // longest row rows_dotv takes

// Four rows of n (a constant after inlining) against the vector w held in
// registers: acc[t] = sum_i z[t][i*sz] * w[i], one load per product.
static inline __attribute__((always_inline)) NT_TGT void
NT(dot4w)(const T *const *z, ep_inc_t sz, const T *w, const int n, T *acc)
{
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < n; i++) {
        a0 += z[0][i * sz] * w[i];
        a1 += z[1][i * sz] * w[i];
        a2 += z[2][i * sz] * w[i];
        a3 += z[3][i * sz] * w[i];
    }
    acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
}
#endif

NT_FN void NT(rows_sum)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                        const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, int first,
                        int nf, const T *const *f, const ep_inc_t *fs, int seq);

#if !CPX
// One row of rows_sum's four-row vector path (nm = 1: summed, 2: dotted)
// alone, its lanes summed as that path sums each of its rows: the same bits.
static inline __attribute__((always_inline)) NT_TGT T
NT(vec_row)(int nm, const T *x, const T *y, ep_dim_t n, ep_dim_t rem, NT(ivec) keep)
{
    NT(vec) v = {0};
    ep_dim_t i = 0;
    if (nm == 1) {
        for (; i + VL <= n; i += VL) v += NT_LD(x + i);
        if (rem) v += NT(kept)(NT_LD(x + n - VL), keep);
    } else {
        for (; i + VL <= n; i += VL) v += NT_LD(x + i) * NT_LD(y + i);
        if (rem) v += NT(kept)(NT_LD(x + n - VL) * NT_LD(y + n - VL), keep);
    }
    return NT(hsum)(v, 1, 0);
}
#endif

#if !CPX
// Contiguous rows of one input, each summed into its own output element
// (so != 0), no scale, in a loop of their own: the four-row path's sums
// (one vector accumulator a row, the kept last vector, NT(hsum)), the same
// bits, four rows at a time from cache and one after another when seq.
// Inside rows_sum's general block loop the same vectors ran 1.4-2x slower
// ('ab->a' (10000,112) f64 from L3, rows_sum called alone: 200-250 us
// there, 125-150 in a loop like this one's).
static NT_TGT void NT(rows_sum_each)(const T *x, ep_inc_t rs, ep_dim_t n, ep_dim_t R, T *o,
                                     ep_inc_t so, int first, int seq)
{
    const ep_dim_t rem = n % VL;
    NT(ivec) keep = {0};
    for (int l = VL - (int)rem; rem && l < VL; l++) keep[l] = (IT)-1;
    ep_dim_t r = 0;
    if (!seq)
        for (; r + 4 <= R; r += 4) {
            const T *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs;
            NT(vec) v0 = {0}, v1 = {0}, v2 = {0}, v3 = {0};
            for (ep_dim_t i = 0; i + VL <= n; i += VL) {
                v0 += NT_LD(x0 + i); v1 += NT_LD(x1 + i);
                v2 += NT_LD(x2 + i); v3 += NT_LD(x3 + i);
            }
            if (rem) {
                const ep_dim_t e = n - VL;
                v0 += NT(kept)(NT_LD(x0 + e), keep); v1 += NT(kept)(NT_LD(x1 + e), keep);
                v2 += NT(kept)(NT_LD(x2 + e), keep); v3 += NT(kept)(NT_LD(x3 + e), keep);
            }
            T a0 = 0, a1 = 0, a2 = 0, a3 = 0;     // 0 + sum, as rows_sum's rows
            a0 += NT(hsum)(v0, 1, 0); a1 += NT(hsum)(v1, 1, 0);
            a2 += NT(hsum)(v2, 1, 0); a3 += NT(hsum)(v3, 1, 0);
            T *d = o + r * so;
            if (first) {
                d[0] = a0; d[so] = a1; d[2 * so] = a2; d[3 * so] = a3;
            } else {
                d[0] += a0; d[so] += a1; d[2 * so] += a2; d[3 * so] += a3;
            }
        }
    for (; r < R; r++) {
        T a = 0;
        a += NT(vec_row)(1, x + r * rs, x + r * rs, n, rem, keep);
        T *d = o + r * so;
        *d = first ? a : *d + a;
    }
}
#endif

// Rows read one after another from memory (the measured stream order ONE)
// have the lines NT_AHEAD bytes past each row's prefetched as it starts: the
// hardware's stream prefetchers run too close behind the loads ('bij,bj->bi'
// (512,256,256) f32 on Emerald Rapids, 134 MB: 13.6 GB/s, 15.7-18.3 so; 2 KB
// and 8 KB ahead gain less).  Rows of up to NT_AHEAD bytes.
#define NT_AHEAD 4096

static inline __attribute__((always_inline)) void NT(prefetch_ahead)(const T *x, ep_dim_t n)
{
    // longer rows are streams the prefetchers have learned by their end
    if (n * (ep_dim_t)sizeof(T) > NT_AHEAD) return;
    const char *q = (const char *)x + NT_AHEAD;
    for (ep_dim_t l = 0; l < n * (ep_dim_t)sizeof(T); l += 64) __builtin_prefetch(q + l);
}

#if !CPX
// A GEMV's dot rows block by block: each block [b, e) of a row z dotted
// with w in two vector accumulators over pairs of vectors, then one more
// vector, then the block's last partial vector (the VL elements ending at e,
// its lanes before i cleared bitwise: a multiply by 0 would turn an inf into
// a nan), so a row of any length >= VL takes no scalar step ('ij,j->i'
// rows of 218 f32: 10 scalars a row in four dependent chains, 0.67x sgemv).
// dot_row runs one row, rows_dot4 four at once with w's loads shared, the
// same operations in the same order: the same bits.
#define NT_DOT_BLOCK(K, ZQ, B, E)                                                         \
    do {                                                                                  \
        ep_dim_t i_ = (B);                                                                \
        for (; i_ + 2 * VL <= (E); i_ += 2 * VL) {                                        \
            NT(vec) w0_ = NT_LD(w + i_), w1_ = NT_LD(w + i_ + VL);                        \
            _Pragma("GCC unroll 4") for (int q_ = 0; q_ < (K); q_++) {                    \
                u[q_] += NT_LD(ZQ(q_) + i_) * w0_;                                        \
                v[q_] += NT_LD(ZQ(q_) + i_ + VL) * w1_;                                   \
            }                                                                             \
        }                                                                                 \
        if (i_ + VL <= (E)) {                                                             \
            NT(vec) w0_ = NT_LD(w + i_);                                                  \
            _Pragma("GCC unroll 4") for (int q_ = 0; q_ < (K); q_++)                      \
                u[q_] += NT_LD(ZQ(q_) + i_) * w0_;                                        \
            i_ += VL;                                                                     \
        }                                                                                 \
        if (i_ < (E)) {                                                                   \
            NT(ivec) keep_;                                                               \
            for (int l_ = 0; l_ < VL; l_++) keep_[l_] = l_ >= VL - (int)((E) - i_) ? -1 : 0; \
            NT(vec) w1_ = NT_LD(w + (E) - VL);                                            \
            _Pragma("GCC unroll 4") for (int q_ = 0; q_ < (K); q_++)                      \
                v[q_] += NT(kept)(NT_LD(ZQ(q_) + (E) - VL) * w1_, keep_);                 \
        }                                                                                 \
    } while (0)

// one row z of n >= VL dotted with w
static inline __attribute__((always_inline)) NT_TGT T NT(dot_row)(const T *z, const T *w,
                                                                  ep_dim_t n)
{
#define NT_Z1(q) z
    NT(sums) ps;
    ps.cnt = 0;
    for (ep_dim_t b = 0; b < n; b += NB) {
        ep_dim_t e = n - b < NB ? n : b + NB;
        NT(vec) u[1] = {{0}}, v[1] = {{0}};
        NT_DOT_BLOCK(1, NT_Z1, b, e);
        NT(sums_add)(&ps, NT(hsum)(u[0] + v[0], 1, 0));
    }
#undef NT_Z1
    return NT(sums_total)(&ps);
}

// K <= 4 long contiguous rows z0, z0 + az, ... (n >= VL) dotted with one
// vector w at once, into xs: each row blockwise, NB elements a block, the
// blocks combined pairwise as in row_sum, the K rows' lanes summed together
// (each row's sum the bits dot_row gives it alone); xs holds four.
static inline __attribute__((always_inline)) NT_TGT void
NT(dot_rows)(const int K, const T *z0, ep_inc_t az, const T *w, ep_dim_t n, T *xs)
{
#define NT_ZK(q) (z0 + (q) * az)
    if (n <= NB) {
        // one block: its sum plus the zero sums_total adds
        NT(vec) u[4] = {{0}}, v[4] = {{0}};
        NT_DOT_BLOCK(K, NT_ZK, 0, n);
        for (int q = 0; q < K; q++) u[q] += v[q];
        NT(hsums)(u, K == 3 ? 4 : K, xs);       // (the levels pair vectors: 3 as 4)
        for (int q = 0; q < K; q++) xs[q] += (T)0;
        return;
    }
    NT(sums) ps[4];
    for (int q = 0; q < K; q++) ps[q].cnt = 0;
    for (ep_dim_t b = 0; b < n; b += NB) {
        ep_dim_t e = n - b < NB ? n : b + NB;
        NT(vec) u[4] = {{0}}, v[4] = {{0}};
        NT_DOT_BLOCK(K, NT_ZK, b, e);
        T t[4];
        for (int q = 0; q < K; q++) u[q] += v[q];
        NT(hsums)(u, K == 3 ? 4 : K, t);
        for (int q = 0; q < K; q++) NT(sums_add)(&ps[q], t[q]);
    }
    for (int q = 0; q < K; q++) xs[q] = NT(sums_total)(&ps[q]);
#undef NT_ZK
}

// Long contiguous rows z (rows az apart, n >= VL) dotted with one vector w
// shared by every row (a GEMV's dot form, '...ij,j->...i'), four rows at a
// time: four streams from memory at once and w's loads shared by them (one
// row at a time reads 12-15 GB/s where OpenBLAS's sgemv reads 18-20 on Zen
// 3), the four rows' lanes summed together (dot_rows); the last two or three
// rows together too, w read once for them ('ab,b->a' (2, 7666528) f64: w
// read twice, 8.2 ms; numpy 6.3).  seq: the rows one after another
// instead (dot_row, the same sums), for cores whose prefetchers follow one
// stream in memory order better than four interleaved (see
// ep_stream_order).  Starts at row r; returns the rows done.
NT_FN ep_dim_t NT(rows_dot4)(ep_dim_t r, const T *z, ep_inc_t az, const T *w, ep_dim_t n,
                             ep_dim_t R, T *o, ep_inc_t so, int first, int nf,
                             const T *const *f, const ep_inc_t *fs, int seq)
{
    while (R - r >= 2) {
        const T *z0 = z + r * az;
        int K = R - r >= 4 ? 4 : (int)(R - r);
        T xs[4];
        if (seq) {
            for (int q = 0; q < K; q++) {
                NT(prefetch_ahead)(z0 + q * az, n);
                xs[q] = NT(dot_row)(z0 + q * az, w, n);
            }
        } else if (K == 4) {
            NT(dot_rows)(4, z0, az, w, n, xs);
        } else if (K == 3) {
            NT(dot_rows)(3, z0, az, w, n, xs);
        } else {
            NT(dot_rows)(2, z0, az, w, n, xs);
        }
        for (int q = 0; q < K; q++) {
            T x = xs[q];
            if (nf) {
                T sc[2];
                NT(scale)(nf, f, fs, r + q, sc);
                x *= sc[0];
            }
            T *d = o + (r + q) * so;
            int fr = first && (r + q == 0 || so != 0);
            *d = fr ? x : *d + x;
        }
        r += K;
    }
    return r;
}

// The sums x of rows r .. r+VL-1 (lane q row r+q's), each times its row's
// scale, into the output
static inline __attribute__((always_inline)) NT_TGT void
NT(sums_put)(NT(vec) x, ep_dim_t r, T *o, ep_inc_t so, int first, int nf,
             const T *const *f, const ep_inc_t *fs)
{
    if (nf) {
        NT(vec) sc;
        for (int q = 0; q < VL; q++) {
            T c[2];
            NT(scale)(nf, f, fs, r + q, c);
            sc[q] = c[0];
        }
        x *= sc;
    }
    if (so == 1) {
        T *d = o + r;
        NT_ST(d, first ? x : NT_LD(d) + x);
    } else {
        for (int q = 0; q < VL; q++) {
            T *d = o + (r + q) * so;
            *d = first ? x[q] : *d + x[q];
        }
    }
}

// The sums of rows r .. r+VL-1 (vector q's lanes are row r+q's products),
// reduced together, each times its row's scale, into the output
static inline __attribute__((always_inline)) NT_TGT void
NT(dotv_put)(NT(vec) *s, ep_dim_t r, T *o, ep_inc_t so, int first, int nf,
             const T *const *f, const ep_inc_t *fs)
{
    NT(sums_put)(NT(hsums_vec)(s) + (T)0, r, o, so, first, nf, f, fs);
}

// One input's contiguous rows far apart in memory (two lines or more
// untouched between them), each spanning two or three lines: the hardware
// prefetchers leave each such row a miss, however the row is read (a Zen 4
// 'ab->a' (409600, 64)[:, :16] f32 16 bytes past a line: 25 ns a row, four
// at a time or one after another; numpy 11).  Each line prefetched NT_RPF
// rows ahead, each from its own instruction: 7 ns (one instruction in a loop
// over the lines: 20).  A row of one line runs as fast without, and so does
// one of three lines with one line between rows (1.1x slower with).  The
// same holds for a GEMV's dot rows against one vector (rows_dotv, the next
// VL rows prefetched: 'ab,b->a' on a[:, :21] of (102400, 256) f32, 0.61x
// numpy -> 1.04x) and for rows summed into one row held in vector registers
// (held_body: 'ab,a->b' there on a[:, :16], 0.66x -> 1.2x).  Two inputs'
// such rows gain nothing: their prefetches fill the core's misses in flight
// and stall it; nor do rows shorter than a vector held in scalars
// (held_small: 15 ns a row, prefetched or not).
#define NT_RPF 8              // rows ahead

// The most lines a prefetched row spans (0: the rows are not prefetched):
// rows s apart (elements), n long, R of them.
static inline int NT(prefetch_lines)(ep_inc_t s, ep_dim_t n, ep_dim_t R)
{
    ep_inc_t gap = (s < 0 ? -s : s) * (ep_inc_t)sizeof(T) / 64 - 2;
    if (R < 4 * NT_RPF || n * (ep_dim_t)sizeof(T) > 3 * 64 || gap < 2) return 0;
    return gap < 3 ? (int)gap : 3;
}

// The lines of rows x, x + s, x + 2s, x + 3s that span 2..most lines
static inline __attribute__((always_inline)) void
NT(prefetch_rows4)(const T *x, ep_inc_t s, ep_dim_t n, int most)
{
    const uintptr_t last = (uintptr_t)((n - 1) * (ep_dim_t)sizeof(T));
    for (int t = 0; t < 4; t++) {
        const char *q = (const char *)(x + t * s);
        uintptr_t lines = (((uintptr_t)q + last) >> 6) - ((uintptr_t)q >> 6);
        if (lines >= 1 && (int)lines < most) {
            __builtin_prefetch(q);
            if (lines == 2) __builtin_prefetch(q + 64);
            __builtin_prefetch(q + last);
        }
    }
}

// Short contiguous rows z (VL <= n <= NB, rows az apart) dotted with one
// vector w shared by every row, VL rows at a time, each row whole before the
// next (one stream where the rows are end to end): each row's products
// summed as NT_DOT_BLOCK sums them (full vector k into u if k is even, else
// into v; the last partial vector masked into v), the VL rows' lanes
// reduced together and written as one vector: a permute and a store per VL
// rows instead of a horizontal sum and a store per row ('ij,j->i' (65536,
// 16) f32 four rows at a time: 0.62x sgemv).  NV: the row's whole vectors
// (a constant where w's vectors stay in registers, else -1).  Sums the
// same bits as rows_dot4.  Returns the rows done (a multiple of VL).
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(rows_dotv_nv)(const int NV, const T *z, ep_inc_t az, const T *w, ep_dim_t n, ep_dim_t R,
                 T *o, ep_inc_t so, int first, int nf, const T *const *f, const ep_inc_t *fs,
                 int seq)
{
    const ep_dim_t rem = n % VL;
    NT(vec) wr[NV > 0 ? NV : 1];
    for (int k = 0; k < NV; k++) wr[k] = NT_LD(w + k * VL);
    const NT(vec) wt = NT_LD(w + n - VL);
    NT(ivec) keep;
    for (int l = 0; l < VL; l++) keep[l] = l >= VL - (int)rem ? -1 : 0;
    const int pf = NT(prefetch_lines)(az, n, R);
    ep_dim_t l1, l2, l3;
    ep_cache_sizes(&l1, &l2, &l3);
    const int far = R * (az < 0 ? -az : az) * (ep_inc_t)sizeof(T) > (ep_inc_t)l3 / 2;
    ep_dim_t r = 0;
    for (; r + VL <= R; r += VL) {
        NT(vec) s[VL];
        for (int t = 0; pf && t < VL && r + VL + t + 4 <= R; t += 4)
            NT(prefetch_rows4)(z + (r + VL + t) * az, az, n, pf);
#define NT_DOTV_ROW                                                            \
        do {                                                                   \
            const T *zq = z + (r + q) * az;                                    \
            NT(vec) u = {0}, v = {0};                                          \
            for (int k = 0; k < NV; k++) {                                     \
                if (k & 1) v += NT_LD(zq + k * VL) * wr[k];                    \
                else u += NT_LD(zq + k * VL) * wr[k];                          \
            }                                                                  \
            if (rem) v += NT(kept)(NT_LD(zq + n - VL) * wt, keep);             \
            s[q] = u + v;                                                      \
        } while (0)
        // rows from memory four at a time: the VL rows' loads unrolled
        // together read the stream at half its speed (Zen 4, 'ij,j->i' 80
        // MB f32 rows of 24 / 40: 15 / 12 GB/s, 32 / 34 so; numpy 30), where
        // from cache they run faster together (f64 rows of 16 in L3: 62
        // GB/s, 34 four at a time)
        if (NV >= 0 && far) {
#pragma GCC unroll 4
            for (int q = 0; q < VL; q++) NT_DOTV_ROW;
        } else if (NV >= 0) {
#pragma GCC unroll 16
            for (int q = 0; q < VL; q++) NT_DOTV_ROW;
        }
#undef NT_DOTV_ROW
#define NT_ZV(t) (z + (r + q + (t)) * az)
        if (NV < 0 && seq) {
            // longer rows one after another (see rows_dot4)
            for (int q = 0; q < VL; q++) {
                NT(vec) u[1] = {{0}}, v[1] = {{0}};
                NT(prefetch_ahead)(NT_ZV(0), n);
                NT_DOT_BLOCK(1, NT_ZV, 0, n);
                s[q] = u[0] + v[0];
            }
        } else if (NV < 0) {
            // longer rows four at a time, as rows_dot4 runs them: eight
            // chains of adds instead of one row's two
            const int K = VL < 4 ? VL : 4;
            for (int q = 0; q < VL; q += K) {
                NT(vec) u[4] = {{0}}, v[4] = {{0}};
                NT_DOT_BLOCK(K, NT_ZV, 0, n);
                for (int t = 0; t < K; t++) s[q + t] = u[t] + v[t];
            }
        }
#undef NT_ZV
        NT(dotv_put)(s, r, o, so, first, nf, f, fs);
    }
    return r;
}

// Rows shorter than a vector (2 <= n < VL, rows az > 0 apart, unit along
// the row) dotted with one vector w shared by every row, VL rows at a time:
// each row one load from its first element, the lanes past n (the next
// row's, or a gap's) cleared bitwise, the VL rows' lanes reduced together
// ('...ij,j->...i' (219620, 14) f32 in four scalar chains a row: 0.48x
// numpy).  A load reaches VL - n elements past its row: inside the operand
// for every row but the last few, whose loads would pass the last row's end
// (the last element this call may read); those rows load the vector ending
// on their end and move its lanes down, the same products in the same
// lanes, so every row's sum has the bits NT(hsum) gives its vector.
// Returns R.
NT_FN ep_dim_t NT(rows_dotv_part)(const T *z, ep_inc_t az, const T *w, ep_dim_t n, ep_dim_t R,
                                  T *o, ep_inc_t so, int first, int nf, const T *const *f,
                                  const ep_inc_t *fs)
{
    NT(ivec) keep;
    T wb[VL];
    for (int l = 0; l < VL; l++) {
        keep[l] = l < (int)n ? -1 : 0;
        wb[l] = l < (int)n ? w[l] : 0;
    }
    const NT(vec) wv = NT_LD(wb);
    const ep_dim_t safe = NT(part_safe)(R, n, az);
    // each row's load reads VL elements: its lines are those prefetched
    const int pf = NT(prefetch_lines)(az, VL, R);
    ep_dim_t r = 0;
    for (; r + VL <= safe; r += VL) {
        NT(vec) s[VL];
        for (int t = 0; pf && t < VL && r + VL + t + 4 <= safe; t += 4)
            NT(prefetch_rows4)(z + (r + VL + t) * az, az, VL, pf);
#pragma GCC unroll 16
        for (int q = 0; q < VL; q++) s[q] = NT(kept)(NT_LD(z + (r + q) * az) * wv, keep);
        NT(dotv_put)(s, r, o, so, first, nf, f, fs);
    }
    // the rest one by one: a load from the row's start while it stays
    // inside, else ld_part_end's
    for (; r < R; r++) {
        const NT(vec) v = r < safe ? NT_LD(z + r * az) : NT(ld_part_end)(z, r * az, n);
        T x = NT(hsum)(NT(kept)(v * wv, keep), 1, 0) + (T)0;
        if (nf) {
            T c[2];
            NT(scale)(nf, f, fs, r, c);
            x *= c[0];
        }
        T *d = o + r * so;
        *d = first ? x : *d + x;
    }
    return R;
}

NT_FN ep_dim_t NT(rows_dotv)(const T *z, ep_inc_t az, const T *w, ep_dim_t n, ep_dim_t R,
                             T *o, ep_inc_t so, int first, int nf, const T *const *f,
                             const ep_inc_t *fs, int seq)
{
    switch (n / VL) {
    case 0: return NT(rows_dotv_part)(z, az, w, n, R, o, so, first, nf, f, fs);
    case 1: return NT(rows_dotv_nv)(1, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 2: return NT(rows_dotv_nv)(2, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 3: return NT(rows_dotv_nv)(3, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 4: return NT(rows_dotv_nv)(4, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 5: return NT(rows_dotv_nv)(5, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 6: return NT(rows_dotv_nv)(6, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 7: return NT(rows_dotv_nv)(7, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    case 8: return NT(rows_dotv_nv)(8, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    default: return NT(rows_dotv_nv)(-1, z, az, w, n, R, o, so, first, nf, f, fs, seq);
    }
}

// Rows of 2..NT_PICK_N elements (fewer than a vector) end to end in every
// moving input (rows +-n apart, both inputs alike, unit along the row), at
// most one input w the same contiguous row for every row, 32- or 64-byte
// vectors:
// VL rows are n vectors of each moving input, multiplied lane by lane (w
// repeated with period n), and element j of each row is picked into its
// row's lane by n - 1 two-source permutes (pack_picked's), the columns
// added in j order.  One stream, nothing per row: 'ij,j->i' (2547869, 3)
// f64 rows dotted one load each (rows_dotv_part) or in four scalar chains
// (rows backwards) ran at 9-14 GB/s.  Rows backwards in memory load their
// VL rows from the lowest, which reverses the lanes.  N: n as a constant
// (the permutes' indices fold).  The rows past the last whole VL are
// copied into a zeroed block and summed the same way: every row has the
// same bits wherever it falls.
#define NT_PICK_N EP_PICK_N
#define NT_PICK_ROWS 2       // fewest VL-row blocks rows_picked is worth its set-up for
// Longest row dotted with a shared vector that is picked where rows_dotv_part
// could take it (rows forwards): that costs the same at any n, the picks
// grow as n^2 (Zen 4, 'ij,j->i' f32 from L3 / memory, picked against one
// load a row: n = 5 1.9x / 1.1x, n = 6 1.2x / 0.9x, n = 8 0.6x / 0.8x; f64
// n = 7 1.06x / 1.06x; 32-byte vectors, f32 n = 3 1.9x / 1.4x, n = 5 0.9x)
#define NT_PICK_SHARED_N EP_PICK_SHARED_N(sizeof(T), VL * sizeof(T))

// The sums of the VL rows at a, b (rows of N end to end, upwards), lane l
// row l's: the inputs multiplied (w's period wp), the columns picked by m
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(picked_block)(const int N, const int BACK, int nm, const T *a, const T *b, int shared,
                 const NT(vec) *wp, NT(ivec) (*m)[NT_PICK_N])
{
    NT(vec) v[NT_PICK_N];
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) {
        // backwards rows read from their highest vector down, in the
        // order of the stream (the prefetchers lose a descending stream
        // read upwards a block at a time: rows of 6 f64 at 10 GB/s, 24
        // forwards)
        const int k = BACK ? N - 1 - i : i;
        v[k] = NT_LD(a + k * VL);
        if (nm == 2) v[k] *= NT_LD(b + k * VL);
        if (shared) v[k] *= wp[k];
    }
    NT(vec) acc;
#pragma GCC unroll 8
    for (int j = 0; j < N; j++) {
        NT(vec) t = __builtin_shuffle(v[0], v[1], m[j][0]);
#pragma GCC unroll 8
        for (int k = 2; k < N; k++) t = __builtin_shuffle(t, v[k], m[j][k]);
        acc = j ? acc + t : t;
    }
    return acc;
}

static inline __attribute__((always_inline)) NT_TGT void
NT(picked_n)(const int N, const int BACK, int nm, const T *x, const T *y, ep_inc_t az,
             const T *w, ep_dim_t R, T *o, ep_inc_t so, int first, int nf, const T *const *f,
             const ep_inc_t *fs)
{
    NT(ivec) m[NT_PICK_N][NT_PICK_N];
    NT(vec) wp[NT_PICK_N];
    for (int j = 0; j < N; j++)
        for (int l = 0; l < VL; l++) {
            IT e = (IT)(l * N + j);
            m[j][0][l] = e < 2 * VL ? e : 0;
            for (int k = 2; k < N; k++)
                m[j][k][l] = e / VL == (IT)k ? (IT)VL + e % VL : (IT)l;
        }
    for (int k = 0; k < N; k++)
        for (int l = 0; l < VL; l++) wp[k][l] = w ? w[(k * VL + l) % N] : (T)1;
    const NT(ivec) rev = NT_REV;
    const ep_inc_t back = BACK ? (VL - 1) * az : 0;
    ep_dim_t r = 0;
    for (; r + VL <= R; r += VL) {
        NT(vec) acc = NT(picked_block)(N, BACK, nm, x + r * az + back, y + r * az + back,
                                       w != NULL, wp, m);
        if (BACK) acc = __builtin_shuffle(acc, rev);
        NT(sums_put)(acc, r, o, so, first, nf, f, fs);
    }
    if (r == R)
        return;
    // the rest, upwards from the block's first row, zeros after them
    T ta[NT_PICK_N * VL] = {0}, tb[NT_PICK_N * VL] = {0};
    const int rest = (int)(R - r);
    for (int q = 0; q < rest; q++)
        for (int j = 0; j < N; j++) {
            ta[q * N + j] = x[(r + q) * az + j];
            if (nm == 2) tb[q * N + j] = y[(r + q) * az + j];
        }
    NT(vec) acc = NT(picked_block)(N, 0, nm, ta, tb, w != NULL, wp, m);
    for (int q = 0; q < rest; q++) {
        T v = acc[q];
        if (nf) {
            T c[2];
            NT(scale)(nf, f, fs, r + q, c);
            v *= c[0];
        }
        T *d = o + (r + q) * so;
        *d = first ? v : *d + v;
    }
}

// rows_sum's rows run by picked_n (see there); 0 when they are not its
NT_FN int NT(rows_picked)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                          const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, int first,
                          int nf, const T *const *f, const ep_inc_t *fs)
{
    if (VL * sizeof(T) < 32 || n < 2 || n > NT_PICK_N || n >= VL || R < NT_PICK_ROWS * VL ||
        so == 0 || nm < 1 || nm > 2)
        return 0;
    const T *x = NULL, *y = NULL, *w = NULL;
    ep_inc_t az = 0;
    for (int j = 0; j < nm; j++) {
        if (s[j] != 1)
            return 0;
        if (rs[j] == 0) {
            if (w) return 0;
            w = p[j];
        } else if (rs[j] == (ep_inc_t)n || rs[j] == -(ep_inc_t)n) {
            if (az && rs[j] != az) return 0;
            az = rs[j];
            if (x) y = p[j]; else x = p[j];
        } else {
            return 0;
        }
    }
    if (!x || (w && az > 0 && n > NT_PICK_SHARED_N))
        return 0;
    const int mv = y ? 2 : 1;
    if (!y) y = x;
#define NT_PICKED(N) (az < 0 ? NT(picked_n)(N, 1, mv, x, y, az, w, R, o, so, first, nf, f, fs) \
                             : NT(picked_n)(N, 0, mv, x, y, az, w, R, o, so, first, nf, f, fs))
    switch (n) {
    case 2: NT_PICKED(2); break;
    case 3: NT_PICKED(3); break;
    case 4: NT_PICKED(4); break;
    case 5: NT_PICKED(5); break;
    case 6: NT_PICKED(6); break;
    case 7: NT_PICKED(7); break;
    default: NT_PICKED(8);
    }
#undef NT_PICKED
    return 1;
}
#undef NT_DOT_BLOCK
#endif

#if !CPX
// One level of a VL x VL transpose in registers: rows i and i + h (bit h of
// i clear) swap their off-diagonal blocks of h lanes.  The levels h = VL/2
// .. 1 together swap each element's row bits with its lane bits.  Written
// out per h (a literal where inlined), so the masks are constants.
static inline __attribute__((always_inline)) NT_TGT void NT(tr_level)(NT(vec) *v, int h)
{
    NT(ivec) lo, hi;
    for (int l = 0; l < VL; l++) {
        lo[l] = l & h ? VL + l - h : l;
        hi[l] = l & h ? VL + l : l + h;
    }
#pragma GCC unroll 16
    for (int i = 0; i < VL; i++)
        if (!(i & h)) {
            NT(vec) a = v[i], b = v[i + h];
            v[i] = __builtin_shuffle(a, b, lo);
            v[i + h] = __builtin_shuffle(a, b, hi);
        }
}

static inline __attribute__((always_inline)) NT_TGT void NT(transpose_vl)(NT(vec) *v)
{
#if VL >= 16
    NT(tr_level)(v, 8);
#endif
#if VL >= 8
    NT(tr_level)(v, 4);
#endif
#if VL >= 4
    NT(tr_level)(v, 2);
#endif
    NT(tr_level)(v, 1);
}

// What NT(tpair)'s products go to: the output element by element (a row
// per row), one output row for all rows, a sum per row, one sum
#define NT_TP_ELEM 0
#define NT_TP_COLS 1
#define NT_TP_ROWS 2
#define NT_TP_ALL 3

// Lanes of new where keep is set, of old elsewhere
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(blend)(NT(ivec) keep, NT(vec) nw, NT(vec) old)
{
    return (NT(vec))(((NT(ivec))nw & keep) | ((NT(ivec))old & ~keep));
}

// Columns [i, i + VL) of VL rows of x (at stride xs along the row, rows xr
// apart) times the same of y (unit across the rows: element (r, i) at y[r +
// i*yi]): VL columns of y loaded as vectors down the rows and transposed in
// registers to meet x's vectors.  Rows before k0 and (masked) lanes outside
// keep were done by the block before: they leave the output as it is.  wr:
// the output is written, not added to.
static inline __attribute__((always_inline)) NT_TGT void
NT(tpair_block)(const int mode, const T *x, const int xs, ep_inc_t xr, const T *y, const int ys,
                int ysafe, ep_inc_t yi, ep_dim_t i, const int masked, NT(ivec) keep, int k0,
                T *o, ep_inc_t orr, int wr, NT(vec) *acc)
{
    NT(vec) v[VL];
    const T *yc = y + i * yi;
    if (ys == 1) {
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++) v[k] = NT_LD(yc + k * yi);
    } else if (ysafe) {
        // rows at stride 2 (a [::2] slice): the even lanes of two loads
        const NT(ivec) ev = NT_EVEN;
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++)
            v[k] = __builtin_shuffle(NT_LD(yc + k * yi), NT_LD(yc + k * yi + VL), ev);
    } else {
        // the last vector of rows: its second load one element early, so it
        // ends on the last element
        const NT(ivec) el = NT_EVEN_LAST;
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++)
            v[k] = __builtin_shuffle(NT_LD(yc + k * yi), NT_LD(yc + k * yi + VL - 1), el);
    }
    NT(transpose_vl)(v);
#pragma GCC unroll 16
    for (int k = 0; k < VL; k++) {
        v[k] *= NT(ld_s_end)(x + k * xr, xs, i);
        if (masked) v[k] = NT(kept)(v[k], keep);
    }
    if (mode == NT_TP_ELEM) {
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++) {
            if (k < k0) continue;
            T *q = o + k * orr + i;
            NT(vec) d = NT_LD(q), nw = wr ? v[k] : d + v[k];
            NT_ST(q, masked ? NT(blend)(keep, nw, d) : nw);
        }
    } else if (mode == NT_TP_ROWS) {
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++) acc[k] += v[k];
    } else {
        // the VL rows' products summed pairwise
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++)
            if (k < k0) v[k] = (NT(vec)){0};
#pragma GCC unroll 16
        for (int h = 1; h < VL; h *= 2)
#pragma GCC unroll 16
            for (int k = 0; k < VL; k += 2 * h) v[k] += v[k + h];
        if (mode == NT_TP_COLS) {
            T *q = o + i;
            NT(vec) d = NT_LD(q), nw = wr ? v[0] : d + v[0];
            NT_ST(q, masked ? NT(blend)(keep, nw, d) : nw);
        } else {
            acc[0] += v[0];
        }
    }
}

// Fewer rows than a vector (2 <= R < VL), y's rows adjacent (ys 1) and its
// columns yi > 0 apart: each column loaded as a whole vector whose first R
// lanes are the rows, the block transposed as for VL rows and its first R
// rows used.  A column's load reaches VL - R elements past its rows, so the
// columns whose loads would pass y's last element ([nv, n)) go element by
// element.  Returns the columns done.
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(tpair_few)(const int mode, const T *x, const int xs, ep_inc_t xr, const T *y, ep_inc_t yi,
              ep_dim_t R, ep_dim_t n, T *o, ep_inc_t orr, int first)
{
    ep_dim_t over = (VL - R + yi - 1) / yi;   // columns of overreach past y's end
    if (n < VL + over)
        return 0;
    const ep_dim_t nv = (n - over) - (n - over) % VL;
    NT(vec) acc[VL];
    for (int k = 0; k < VL; k++) acc[k] = (NT(vec)){0};
    for (ep_dim_t i = 0; i < nv; i += VL) {
        NT(vec) v[VL];
        const T *yc = y + i * yi;
#pragma GCC unroll 16
        for (int k = 0; k < VL; k++) v[k] = NT_LD(yc + k * yi);
        NT(transpose_vl)(v);
        if (mode == NT_TP_ELEM) {
            for (ep_dim_t k = 0; k < R; k++) {
                T *q = o + k * orr + i;
                NT(vec) p = v[k] * NT(ld_s_end)(x + k * xr, xs, i);
                NT_ST(q, first ? p : NT_LD(q) + p);
            }
        } else if (mode == NT_TP_ROWS) {
            for (ep_dim_t k = 0; k < R; k++) acc[k] += v[k] * NT(ld_s_end)(x + k * xr, xs, i);
        } else {
            NT(vec) s = v[0] * NT(ld_s_end)(x, xs, i);
            for (ep_dim_t k = 1; k < R; k++) s += v[k] * NT(ld_s_end)(x + k * xr, xs, i);
            if (mode == NT_TP_COLS) NT_ST(o + i, first ? s : NT_LD(o + i) + s);
            else acc[0] += s;
        }
    }
    if (mode == NT_TP_ROWS) {
        NT(vec) s = NT(hsums_vec)(acc);
        for (ep_dim_t k = 0; k < R; k++) o[k * orr] = first ? s[k] : o[k * orr] + s[k];
    } else if (mode == NT_TP_ALL) {
        T s = NT(hsum)(acc[0], 1, 0);
        *o = first ? s : *o + s;
    }
    return nv;
}

static inline __attribute__((always_inline)) NT_TGT void
NT(tpair_mode)(const int mode, const T *x, const int xs, ep_inc_t xr, const T *y, const int ys,
               ep_inc_t yi, ep_dim_t R, ep_dim_t n, T *o, ep_inc_t orr, int first)
{
    if (R >= 2 && R < VL && ys == 1 && yi > 0) {
        ep_dim_t done = NT(tpair_few)(mode, x, xs, xr, y, yi, R, n, o, orr, first);
        if (done) {
            // the columns left over: fresh outputs, or sums added to
            x += done * xs;
            y += done * yi;
            if (mode == NT_TP_ELEM || mode == NT_TP_COLS) o += done;
            else first = 0;
            n -= done;
        }
    }
    if (R < VL || n < VL) {
        // under a vector of rows or of columns: element by element
        T rest = 0;
        for (ep_dim_t r = 0; r < R; r++) {
            const T *xb = x + r * xr, *yb = y + r * ys;
            T *ob = o + r * orr;
            int wr = first && (mode == NT_TP_ELEM || mode == NT_TP_ROWS || r == 0);
            T s = 0;
            for (ep_dim_t i = 0; i < n; i++) {
                T p = xb[i * xs] * yb[i * yi];
                if (mode == NT_TP_ELEM || mode == NT_TP_COLS) ob[i] = wr ? p : ob[i] + p;
                else s += p;
            }
            if (mode == NT_TP_ROWS) *ob = wr ? s : *ob + s;
            else rest += s;
        }
        if (mode == NT_TP_ALL) *o = first ? rest : *o + rest;
        return;
    }
    // the last vectors of rows and of columns overlap the ones before
    // (rows before k0, lanes outside keep): no scalar steps
    const ep_dim_t nv = n - n % VL;
    NT(ivec) keep;
    for (int l = 0; l < VL; l++) keep[l] = l >= VL - (int)(n - nv) ? -1 : 0;
    NT(vec) tot = {0};
    for (ep_dim_t r0 = 0; r0 < R; r0 += VL) {
        ep_dim_t r = r0 + VL <= R ? r0 : R - VL;
        int k0 = (int)(r0 - r);
        const T *xb = x + r * xr, *yb = y + r * ys;
        T *ob = o + r * orr;
        int wr = first && (mode == NT_TP_ELEM || mode == NT_TP_ROWS || r0 == 0);
        NT(vec) acc[VL];
        for (int k = 0; k < VL; k++) acc[k] = (NT(vec)){0};
        int ysafe = ys == 1 || r + VL < R;
        for (ep_dim_t i = 0; i < nv; i += VL)
            NT(tpair_block)(mode, xb, xs, xr, yb, ys, ysafe, yi, i, 0, keep, k0, ob, orr, wr, acc);
        if (nv < n)
            NT(tpair_block)(mode, xb, xs, xr, yb, ys, ysafe, yi, n - VL, 1, keep, k0, ob, orr, wr,
                            acc);
        if (mode == NT_TP_ROWS) {
            NT(vec) s = NT(hsums_vec)(acc);
            for (int k = k0; k < VL; k++) {
                T *q = ob + k * orr;
                *q = wr ? s[k] : *q + s[k];
            }
        } else if (mode == NT_TP_ALL) {
            tot += acc[0];
        }
    }
    if (mode == NT_TP_ALL) {
        T s = NT(hsum)(tot, 1, 0);
        *o = first ? s : *o + s;
    }
}

static inline __attribute__((always_inline)) NT_TGT void
NT(tpair_ys)(const int xs, const int ys, const T *x, ep_inc_t xr, const T *y, ep_inc_t yi,
             ep_dim_t R, ep_dim_t n, T *o, ep_inc_t orr, ep_inc_t oi, int first)
{
    if (oi)
        if (orr) NT(tpair_mode)(NT_TP_ELEM, x, xs, xr, y, ys, yi, R, n, o, orr, first);
        else NT(tpair_mode)(NT_TP_COLS, x, xs, xr, y, ys, yi, R, n, o, 0, first);
    else if (orr)
        NT(tpair_mode)(NT_TP_ROWS, x, xs, xr, y, ys, yi, R, n, o, orr, first);
    else
        NT(tpair_mode)(NT_TP_ALL, x, xs, xr, y, ys, yi, R, n, o, 0, first);
}

// A tile of two inputs that disagree on the unit stride ('ab,ab->' of a
// Fortran and a C array; 'ab,ba->ab'): x[r*xr + i*xs] at stride xs (1 or 2)
// along the row, y[r*ys + i*yi] at stride ys (1 or 2) across the rows, read
// in place in VL x VL blocks transposed in registers -- no copy of y, and
// each operand's lines read as they lie (at stride 2, a vector is the even
// lanes of two loads).  The output o[r*orr + i*oi], oi 1 or 0: elementwise
// (orr 0: every row into one), or summed along the row (orr 0: into one
// element).  first: the output is written, not added to.
NT_FN void NT(tpair)(const T *x, ep_inc_t xs, ep_inc_t xr, const T *y, ep_inc_t ys,
                     ep_inc_t yi, ep_dim_t R, ep_dim_t n, T *o, ep_inc_t orr, ep_inc_t oi,
                     int first)
{
    if (xs == 1 && ys == 1)
        NT(tpair_ys)(1, 1, x, xr, y, yi, R, n, o, orr, oi, first);
    else if (xs == 1)
        NT(tpair_ys)(1, 2, x, xr, y, yi, R, n, o, orr, oi, first);
    else if (ys == 1)
        NT(tpair_ys)(2, 1, x, xr, y, yi, R, n, o, orr, oi, first);
    else
        NT(tpair_ys)(2, 2, x, xr, y, yi, R, n, o, orr, oi, first);
}
#undef NT_TP_ELEM
#undef NT_TP_COLS
#undef NT_TP_ROWS
#undef NT_TP_ALL
#endif

// rows_sum of two inputs whose input v is the same vector for every row,
// gathered once (on this function's stack up to NB elements, longer into
// the thread's scratch buffer); 0 when no buffer could be had.  Its own
// frame: rows_sum is called per few rows and must not carry the buffer.
__attribute__((noinline)) NT_FN int NT(rows_sum_gathered)(
    int v, const T *const *p, const ep_inc_t *s, ep_dim_t n, const ep_inc_t *rs, ep_dim_t R,
    T *o, ep_inc_t so, int first, int nf, const T *const *f, const ep_inc_t *fs, int seq)
{
    T sbuf[(1 + CPX) * NB];
    T *buf = n <= NB ? sbuf : ep_scratch((size_t)(1 + CPX) * n * sizeof(T));
    if (!buf)
        return 0;
    NT(gather)(p[v], s[v], n, buf);
    const T *pp[2];
    ep_inc_t ss[2] = {1, 1};
    pp[v] = buf;
    pp[1 - v] = p[1 - v];
    NT(rows_sum)(2, pp, ss, n, rs, R, o, so, first, nf, f, fs, seq);
    return 1;
}

#if CPX
// Two long contiguous complex rows (8 KB or more) dotted with one vector
// shared by both, input WV (a complex GEMV's dot form, 'ij,j->i' with long
// j): the shared vector's loads (and, as the second input, its swaps) done
// once for the two rows, two streams from memory at once (a row at a time
// read 13 GB/s where zgemv reads 40 in cache).  Each row's blocks summed as
// row_sum_conj sums them (dot_vecs' sums, the signs, the lanes, the tail,
// the blocks pairwise): the same bits.  Returns the rows done.
static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(rows_cdot_wv)(const int K, const int WV, ep_dim_t r, const T *const *p, const ep_inc_t *rs,
                 ep_dim_t n, ep_dim_t R, T *o, ep_inc_t so, int first, int nf,
                 const T *const *f, const ep_inc_t *fs)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) sr, sm;
    NT(dot_signs)(1, &sr, &sm);
    for (; r + K <= R; r += K) {
        NT(pairs) ps[4];
        for (int t = 0; t < K; t++) ps[t].cnt = 0;
        const T *x0 = p[0] + 2 * r * rs[0], *y0 = p[1] + 2 * r * rs[1];
        for (ep_dim_t b = 0; b < n; b += NB) {
            ep_dim_t n2 = 2 * (n - b < NB ? n - b : NB);
            const T *xb[4], *yb[4];
            for (int t = 0; t < K; t++) {
                xb[t] = (WV == 0 ? x0 : x0 + 2 * t * rs[0]) + 2 * b;
                yb[t] = (WV == 1 ? y0 : y0 + 2 * t * rs[1]) + 2 * b;
            }
            NT(vec) a0[4] = {{0}}, a1[4] = {{0}}, b0[4] = {{0}}, b1[4] = {{0}};
            ep_dim_t i = 0;
            for (; i + 2 * VL <= n2; i += 2 * VL) {
#pragma GCC unroll 4
                for (int t = 0; t < K; t++) {
                    NT(vec) u0 = NT_LD(xb[t] + i), u1 = NT_LD(xb[t] + i + VL);
                    NT(vec) v0 = NT_LD(yb[t] + i), v1 = NT_LD(yb[t] + i + VL);
                    a0[t] += u0 * v0; b0[t] += u0 * __builtin_shuffle(v0, sw);
                    a1[t] += u1 * v1; b1[t] += u1 * __builtin_shuffle(v1, sw);
                }
            }
            for (int t = 0; t < K; t++) {
                NT(vec) at = a0[t] + a1[t], bt = b0[t] + b1[t];
                ep_dim_t it = NT(dot_rest)(xb[t], yb[t], i, n2, &at, &bt);
                T vr = NT(hsum)(at * sr, 1, 0);
                T vi = NT(hsum)(bt * sm, 1, 0);
                NT(dot_tail)(xb[t], yb[t], it, n2, 1, &vr, &vi);
                NT(pairs_add)(&ps[t], vr, vi);
            }
        }
        for (int t = 0; t < K; t++) {
            T res[2];
            NT(pairs_total)(&ps[t], &res[0], &res[1]);
            if (nf) {
                T sc[2];
                NT(scale)(nf, f, fs, r + t, sc);
                T v = res[0] * sc[0] - res[1] * sc[1];
                res[1] = res[0] * sc[1] + res[1] * sc[0];
                res[0] = v;
            }
            T *d = o + 2 * (r + t) * so;
            int fr = first && (r + t == 0 || so != 0);
            d[0] = fr ? res[0] : d[0] + res[0];
            d[1] = fr ? res[1] : d[1] + res[1];
        }
    }
    return r;
}

// complex64 rows four at a time where the vectors are 64 bytes (32
// registers hold the four rows' sixteen accumulators), then two: four
// streams read faster ('ij,jk->ki' (1,2819) x (2819,3561):T c64 on an Intel
// Xeon, 80 MB: 5.5 ms two at a time, 4.5 four, numpy's cgemv 4.7); complex128
// rows of 45 KB read 7% slower so, of 128 KB 4% faster: they stay two
NT_FN ep_dim_t NT(rows_cdot)(int wv, const T *const *p, const ep_inc_t *rs, ep_dim_t n,
                              ep_dim_t R, T *o, ep_inc_t so, int first, int nf,
                              const T *const *f, const ep_inc_t *fs)
{
    ep_dim_t r = 0;
    if (VL * sizeof(T) == 64 && sizeof(T) == 4)
        r = wv ? NT(rows_cdot_wv)(4, 1, r, p, rs, n, R, o, so, first, nf, f, fs)
               : NT(rows_cdot_wv)(4, 0, r, p, rs, n, R, o, so, first, nf, f, fs);
    return wv ? NT(rows_cdot_wv)(2, 1, r, p, rs, n, R, o, so, first, nf, f, fs)
              : NT(rows_cdot_wv)(2, 0, r, p, rs, n, R, o, so, first, nf, f, fs);
}
#endif

// R rows at once (the loop around the row, rows apart by rs[j] elements):
// o[r*so] = (first and r's first visit ? 0 : o[r*so]) + row r's sum times
// its scale (the nf inputs constant along the row).  One call per R rows:
// short rows ('...ij,j->...i' with j = 7, an outer product's rows of 3)
// pay no per-row dispatch.  Four cases in one function (108 lines): the
// choice between them is made once per call of R rows, which is the point
// of the function; each case is a short loop of its own below.
#if !CPX
// rows_sum whose first k >= 2 inputs are contiguous rows shared by every
// row (rows apart by 0): their product formed once into w, in the order
// the rows would form it, then the rows run with w as their first input
// ('ij,j,jk->ik' (1, 8) x (8,) x (8, 33471) F: 33471 rows of three inputs,
// a row_sum call each, 456 us; as dots against w, 70; (1, 3391) x (3391,) x
// (3391, 4077) F f64, 12.9 ms as three inputs a row, numpy 8.3).  w on this
// function's stack up to NB elements (kept out of rows_sum's own frame),
// longer in the thread's scratch buffer, up to NT_SHARED_MAX elements.
// Returns 0 when no buffer could be had.
#define NT_SHARED_MAX ((ep_dim_t)1 << 20)
__attribute__((noinline)) NT_FN int
NT(rows_sum_shared)(int k, int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                    const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, int first, int nf,
                    const T *const *f, const ep_inc_t *fs, int seq)
{
    T sbuf[NB];
    T *w = n <= NB ? sbuf : ep_scratch((size_t)n * sizeof(T));
    if (!w)
        return 0;
    for (ep_dim_t i = 0; i < n; i++) {
        T v = p[0][i];
        for (int j = 1; j < k; j++) v *= p[j][i];
        w[i] = v;
    }
    const T *q[EP_NEST_MAXIN];
    ep_inc_t qs[EP_NEST_MAXIN], qr[EP_NEST_MAXIN];
    q[0] = w; qs[0] = 1; qr[0] = 0;
    for (int j = k; j < nm; j++) {
        q[j - k + 1] = p[j]; qs[j - k + 1] = s[j]; qr[j - k + 1] = rs[j];
    }
    NT(rows_sum)(nm - k + 1, q, qs, n, qr, R, o, so, first, nf, f, fs, seq);
    return 1;
}
#endif

#if CPX
// Short complex dots (n <= 4 VL elements) of rows at strides SX, SY of 1 or
// 2, all summed into one element: the rows' products in vector
// accumulators, NB elements per partial sum, the partials combined pairwise
// (no per-row set-up or horizontal sum).  A vector is loaded while its loads
// stay inside the row (at stride 2 the second ends one element past the
// vector's last); the rest element by element.
static inline __attribute__((always_inline)) NT_TGT void
NT(dots_into_one)(const int SX, const int SY, const T *const *p, ep_dim_t n,
                  const ep_inc_t *rs, ep_dim_t R, T *sr, T *sm)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    const ep_dim_t E = VL / 2, lim = n - (SX == 2 || SY == 2);
    ep_dim_t per = NB / n;
    NT(pairs) ps;
    ps.cnt = 0;
    for (ep_dim_t r0 = 0; r0 < R; r0 += per) {
        ep_dim_t r1 = R - r0 < per ? R : r0 + per;
        NT(vec) a = {0}, b = {0};
        T tr = 0, tm = 0;
        for (ep_dim_t rr = r0; rr < r1; rr++) {
            const T *x = p[0] + 2 * rr * rs[0], *y = p[1] + 2 * rr * rs[1];
            ep_dim_t i = 0;
            for (; i + E <= lim; i += E) {
                NT(vec) u = NT(ld_s)(x, SX, i), v = NT(ld_s)(y, SY, i);
                a += u * v;
                b += u * __builtin_shuffle(v, sw);
            }
            for (; i < n; i++) {
                T xr = x[2 * i * SX], xi = x[2 * i * SX + 1];
                T yr = y[2 * i * SY], yi = y[2 * i * SY + 1];
                tr += xr * yr - xi * yi;
                tm += xr * yi + xi * yr;
            }
        }
        T vr = NT(hsum)(a, 2, 0) - NT(hsum)(a, 2, 1) + tr;
        T vi = NT(hsum)(b, 2, 0) + NT(hsum)(b, 2, 1) + tm;
        NT(pairs_add)(&ps, vr, vi);
    }
    NT(pairs_total)(&ps, sr, sm);
}

// Complex rows of n >= 2 elements, 2n <= 2 VL reals (rows az > 0 elements
// apart, unit along the row) dotted with one complex vector w (elements sw
// apart) shared by every row, VL rows at a time.  A row times w is two real
// dots of the row's 2n reals: the real part against (wr0, -wi0, wr1, -wi1,
// ...), the imaginary part against (wi0, wr0, wi1, wr1, ...).  A row is one
// or two loads (cdotv_row), the VL rows' real sums and imaginary sums each
// reduced together as rows_dotv_part reduces real rows ('ab,b->a' (240000,
// 3) c64 element by element: 2 ns a row, 0.7x numpy; 0.9 here).  Rows
// shorter than a vector load from their start, those near the operand's
// end as rows_dotv_part's: every row's sums have the bits NT(hsum) gives
// its two vectors.  Returns R.
#define NT_CDOTV_MAX (2 * VL)       // the longest row, in reals

// Row zq's two sums as vectors of lanes to add: NV whole vectors, then the
// last, lt (loaded by the caller: a row shorter than a vector from its
// start, else the vector ending on its end), its lanes in keep
static inline __attribute__((always_inline)) NT_TGT void
NT(cdotv_row)(const int NV, const T *zq, NT(vec) lt, const NT(vec) *wa, const NT(vec) *wb,
              NT(ivec) keep, NT(vec) *x, NT(vec) *y)
{
    NT(vec) a = NT(kept)(lt * wa[NV], keep), b = NT(kept)(lt * wb[NV], keep);
    for (int k = 0; k < NV; k++) {
        const NT(vec) v = NT_LD(zq + k * VL);
        a += v * wa[k];
        b += v * wb[k];
    }
    *x = a;
    *y = b;
}

static inline __attribute__((always_inline)) NT_TGT void
NT(cdotv_put)(T xr, T xi, ep_dim_t r, T *o, ep_inc_t so, int first, int nf,
              const T *const *f, const ep_inc_t *fs)
{
    if (nf) {
        T c[2];
        NT(scale)(nf, f, fs, r, c);
        const T t = xr * c[0] - xi * c[1];
        xi = xr * c[1] + xi * c[0];
        xr = t;
    }
    T *d = o + 2 * r * so;
    d[0] = first ? xr : d[0] + xr;
    d[1] = first ? xi : d[1] + xi;
}

static inline __attribute__((always_inline)) NT_TGT ep_dim_t
NT(crows_dotv_nv)(const int NV, const T *z, ep_inc_t az, const T *w, ep_inc_t sw, ep_dim_t n,
                  ep_dim_t R, T *o, ep_inc_t so, int first, int nf, const T *const *f,
                  const ep_inc_t *fs)
{
    const int e = 2 * (int)n;                  // the row's reals
    const int t0 = e < VL ? 0 : e - VL;        // the last vector's first real
    T ta[NT_CDOTV_MAX], tb[NT_CDOTV_MAX];
    for (int l = 0; l < e; l++) {
        const T wr = w[2 * (l / 2) * sw], wi = w[2 * (l / 2) * sw + 1];
        ta[l] = l & 1 ? -wi : wr;
        tb[l] = l & 1 ? wr : wi;
    }
    NT(vec) wa[2], wb[2];
    NT(ivec) keep;
    for (int k = 0; k < NV; k++) {
        wa[k] = NT_LD(ta + k * VL);
        wb[k] = NT_LD(tb + k * VL);
    }
    for (int l = 0; l < VL; l++) {
        const int i = t0 + l, in = i < e && i >= NV * VL;
        keep[l] = in ? -1 : 0;
        wa[NV][l] = in ? ta[i] : 0;
        wb[NV][l] = in ? tb[i] : 0;
    }
    const ep_inc_t step = 2 * az;              // reals from a row to the next
    const ep_dim_t safe = NT(part_safe)(R, e, step);
    const int whole = so == 1 && nf == 0;
    NT(ivec) lo, hi;
    for (int l = 0; l < VL; l++) {
        lo[l] = (l & 1 ? VL : 0) + l / 2;
        hi[l] = (l & 1 ? VL : 0) + VL / 2 + l / 2;
    }
    ep_dim_t r = 0;
    for (; r + VL <= safe; r += VL) {
        NT(vec) x[VL], y[VL];
#pragma GCC unroll 16
        for (int q = 0; q < VL; q++) {
            const T *zq = z + (r + q) * step;
            NT(cdotv_row)(NV, zq, NT_LD(zq + t0), wa, wb, keep, &x[q], &y[q]);
        }
        const NT(vec) re = NT(hsums_vec)(x) + (T)0, im = NT(hsums_vec)(y) + (T)0;
        if (whole) {
            T *d = o + 2 * r;
            const NT(vec) a = __builtin_shuffle(re, im, lo), b = __builtin_shuffle(re, im, hi);
            NT_ST(d, first ? a : NT_LD(d) + a);
            NT_ST(d + VL, first ? b : NT_LD(d + VL) + b);
        } else {
            for (int q = 0; q < VL; q++)
                NT(cdotv_put)(re[q], im[q], r + q, o, so, first, nf, f, fs);
        }
    }
    // the rest one by one, a row shorter than a vector near the operand's
    // end loaded as rows_dotv_part loads it
    for (; r < R; r++) {
        const T *zq = z + r * step;
        const NT(vec) lt = r < safe ? NT_LD(zq + t0) : NT(ld_part_end)(z, r * step, e);
        NT(vec) x, y;
        NT(cdotv_row)(NV, zq, lt, wa, wb, keep, &x, &y);
        NT(cdotv_put)(NT(hsum)(x, 1, 0) + (T)0, NT(hsum)(y, 1, 0) + (T)0, r, o, so, first, nf,
                      f, fs);
    }
    return R;
}

NT_FN ep_dim_t NT(crows_dotv)(const T *z, ep_inc_t az, const T *w, ep_inc_t sw, ep_dim_t n,
                              ep_dim_t R, T *o, ep_inc_t so, int first, int nf,
                              const T *const *f, const ep_inc_t *fs)
{
    if (2 * n <= VL) return NT(crows_dotv_nv)(0, z, az, w, sw, n, R, o, so, first, nf, f, fs);
    return NT(crows_dotv_nv)(1, z, az, w, sw, n, R, o, so, first, nf, f, fs);
}
#endif

NT_FN void NT(rows_sum)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                        const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, int first,
                        int nf, const T *const *f, const ep_inc_t *fs, int seq)
{
    const T *q[EP_NEST_MAXIN];
    int contig = 1;
#if !CPX
    if (nm >= 3 && n <= NT_SHARED_MAX && R >= 4) {
        int k = 0;
        while (k < nm && rs[k] == 0 && s[k] == 1) k++;
        if (k >= 2 && NT(rows_sum_shared)(k, nm, p, s, n, rs, R, o, so, first, nf, f, fs, seq))
            return;
    }
#endif
    for (int j = 0; j < nm; j++) contig &= s[j] == 1;
    if (nm == 0) {
        // every input constant along the row: n times the scale
        for (ep_dim_t r = 0; r < R; r++) {
            T sc[2];
            NT(scale)(nf, f, fs, r, sc);
            T *d = o + (1 + CPX) * r * so;
            int fr = first && (r == 0 || so != 0);
            d[0] = fr ? sc[0] * (T)n : d[0] + sc[0] * (T)n;
#if CPX
            d[1] = fr ? sc[1] * (T)n : d[1] + sc[1] * (T)n;
#endif
        }
        return;
    }
    if (nm == 2 && R >= 4 && !contig) {
        // a GEMV's dot form with a strided vector: the vector is the same
        // for every row, so gather it once (on the stack up to NB elements,
        // longer into this thread's scratch buffer) and run the rows
        // contiguous -- long rows too, which would otherwise each gather
        // the vector again element by element
        int v = rs[0] == 0 ? 0 : rs[1] == 0 ? 1 : -1;
        if (v >= 0 && s[1 - v] == 1 &&
            NT(rows_sum_gathered)(v, p, s, n, rs, R, o, so, first, nf, f, fs, seq))
            return;
    }
    ep_dim_t r = 0;
#if CPX
    if (nm == 2 && so != 0 && n >= 2 && 2 * n <= NT_CDOTV_MAX && R >= VL &&
        (rs[0] == 0) != (rs[1] == 0)) {
        // short dot rows against one vector shared by every row
        const int v = rs[0] == 0 ? 0 : 1;
        if (s[1 - v] == 1 && rs[1 - v] > 0) {
            NT(crows_dotv)(p[1 - v], rs[1 - v], p[v], s[v], n, R, o, so, first, nf, f, fs);
            return;
        }
    }
    if (nm == 2 && so == 0 && nf == 0 && n <= 4 * VL && R > 1 && (s[0] == 1 || s[0] == 2) &&
        (s[1] == 1 || s[1] == 2)) {
        // short complex dots summed into one element (contiguous, or at
        // stride 2: 'abcd,badc->' (9094,4,2,12) c64, B's rows of 12 at
        // stride 2, a horizontal sum per row, 0.5x numpy)
        T sr, sm;
        if (s[0] == 1 && s[1] == 1) NT(dots_into_one)(1, 1, p, n, rs, R, &sr, &sm);
        else if (s[0] == 1) NT(dots_into_one)(1, 2, p, n, rs, R, &sr, &sm);
        else if (s[1] == 1) NT(dots_into_one)(2, 1, p, n, rs, R, &sr, &sm);
        else NT(dots_into_one)(2, 2, p, n, rs, R, &sr, &sm);
        o[0] = first ? sr : o[0] + sr;
        o[1] = first ? sm : o[1] + sm;
        return;
    }
#endif
#if !CPX
    if (NT(rows_picked)(nm, p, s, n, rs, R, o, so, first, nf, f, fs))
        return;
    // Four rows at a time, one accumulator each: four independent chains
    // and none of a row's set-up ('ab->a' with b = 84 runs at the cache's
    // speed, not a call and a horizontal sum per row).  Contiguous rows of
    // one or two inputs up to 512 bytes, or short or strided sums and dots.
    // Longer rows run one at a time: four rows of a kilobyte read as four
    // streams jumping across each page, which the hardware prefetcher
    // follows worse than one ('bij,bj->bi' at 256: 6.5 ms one row at a
    // time, 9 ms four), and their set-up is paid once per kilobyte anyway.
    // A single input's rows end to end stay four at a time up to 2 KB: the
    // four are one stretch of lines, and from cache a call per row cost more
    // ('ab->a' (1000, 102) f64: 33 us a row at a time, 22 four); from
    // memory they run in the measured stream order (seq).  Dot rows of two
    // inputs stay four at a time up to 1 KB: one at a time, each row's
    // scalar tail and horizontal sum set the speed ('ab,ab->' (41013, 93 of
    // 96) f64: 3.1 ms, 2.2 four at a time, numpy 2.2; PySCF's 'jiab,iajb'
    // (21,21,93,93) x (21,93,21,93): 4.4 -> 2.9 ms, numpy 2.1).
    // short dot rows against one vector shared by every row, into an output
    // element each: a vector of rows at a time (rows_dotv)
    // (rows shorter than a vector too, one load each, rows_dotv_part: a
    // row's unused lanes cost less than the scalar products of dot4w,
    // 'ij,j->i' (200000, 4..8) f32 0.6-0.9x numpy there, 2.3-3.0x here)
    const int dotv = contig && nm == 2 && (rs[0] == 0) != (rs[1] == 0) && so != 0
                     && R >= VL && n * (ep_dim_t)sizeof(T) <= NT_DOTV_BYTES
                     && (n >= VL || (n >= 2 && (rs[0] > 0 || rs[1] > 0)));
    int vec4 = !dotv && contig && nm >= 1 && nm <= 2 && n >= VL
               && (n * (ep_dim_t)sizeof(T) <= (nm == 2 ? 1024 : 512)
                   || (nm == 1 && rs[0] == (ep_inc_t)n && n * (ep_dim_t)sizeof(T) <= 2048));
    if (vec4 && nm == 1 && nf == 0 && so != 0) {
        NT(rows_sum_each)(p[0], rs[0], n, R, o, so, first, seq);
        return;
    }
    // rows of 2..NT_SV against one vector shared by every row ('...ij,j->...i'
    // with j = 5): the vector in registers, each row's n products unrolled
    int wv = !vec4 && !dotv && nm == 2 && n >= 2 && n <= NT_SV && (rs[0] == 0) != (rs[1] == 0)
             ? (rs[0] == 0 ? 0 : 1) : -1;
    // (copied element by element, unrolled: as a loop of n the copy compiles
    // to rep movsq, whose start-up cost more than the rows, called per few
    // rows of 5)
    T w[NT_SV];
#pragma GCC unroll 8
    for (int i = 0; i < NT_SV; i++) w[i] = wv >= 0 && i < n ? p[wv][i * s[wv]] : 0;
    if (!dotv && (vec4 || (nm == 2 && n <= NB && (n < 4 * VL || !contig))
                  || (nm == 1 && n <= 256 && (!contig || n < VL)))) {
        ep_inc_t sx = s[0], sy = nm > 1 ? s[1] : 0;
        // vec4's elements past whole vectors: the row's last vector (it
        // overlaps the one before) with the lanes already summed cleared
        // bitwise (a multiply by 0 would turn an inf into a nan), instead of
        // a scalar chain per row ('ab->b' (24, 83680) T f32: 16 lanes and 8
        // scalars a row, 0.57x numpy)
        ep_dim_t rem = vec4 ? n % VL : 0;
        NT(ivec) keep = {0};
        for (int l = VL - (int)rem; rem && l < VL; l++) keep[l] = (IT)-1;
        // rows at strides of +-1 and +-2 that load straight into vectors
        // (blk_fused), fewer than four too ('abcd,bacd->' (925,2,5,8) x
        // (2,925,5,16)[..., ::2] f64: calls of 2 rows of 40, one row_sum
        // each, 0.7x numpy)
        int fus = !vec4 && wv < 0 && n >= 2 * VL && sx >= -2 && sx <= 2 && sx != 0
                  && (nm == 1 || (sy >= -2 && sy <= 2 && sy != 0));
        int fus4 = fus && nm * n * (ep_dim_t)sizeof(T) <= NT_FUS4_BYTES
                   && !(sx == 1 && (nm == 1 || sy == 1));
        int pf = nm == 1 && s[0] == 1 ? NT(prefetch_lines)(rs[0], n, R) : 0;
        for (; r < R && (R >= 2 || vec4 || fus); r += 4) {
            if (pf && r + NT_RPF + 4 <= R)
                NT(prefetch_rows4)(p[0] + (r + NT_RPF) * rs[0], rs[0], n, pf);
            // the last block ends at row R - 1, repeating up to three rows
            // just summed (in L1) instead of sending the rest one at a time
            // through row_sum ('abcd,abcd->' with rows of 33 in calls of 6:
            // a third of the rows); fewer than four rows repeat the last
            // ('abc->b' (40,2,2352) F order: calls of 2 rows of 40; the
            // scalar chains too, 'bij,bkj->bki' (182707,3,5)[..., ::2] f64: a
            // row_sum call per row of 5, 0.37x numpy)
            ep_dim_t rb = R < 4 ? 0 : r + 4 <= R ? r : R - 4;
            const T *x = p[0] + rb * rs[0], *y = nm > 1 ? p[1] + rb * rs[1] : x;
            ep_inc_t ax = rs[0], ay = nm > 1 ? rs[1] : rs[0];
            T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            // rows 1..3 of the block, the last row standing in for rows past
            // R - 1
            ep_dim_t t1 = R > 1, t2 = R > 2 ? 2 : t1, t3 = R > 3 ? 3 : t2;
            const T *x1 = x + t1 * ax, *x2 = x + t2 * ax, *x3 = x + t3 * ax;
            const T *y1 = y + t1 * ay, *y2 = y + t2 * ay, *y3 = y + t3 * ay;
            if (vec4) {
                NT(vec) v0 = {0}, v1 = {0}, v2 = {0}, v3 = {0};
                ep_dim_t i = 0;
                if (seq) {
                    // the four rows one after another, each summed as below
                    a0 += NT(vec_row)(nm, x, y, n, rem, keep);
                    a1 += NT(vec_row)(nm, x1, y1, n, rem, keep);
                    a2 += NT(vec_row)(nm, x2, y2, n, rem, keep);
                    a3 += NT(vec_row)(nm, x3, y3, n, rem, keep);
                } else if (nm == 1) {
                    for (; i + VL <= n; i += VL) {
                        v0 += NT_LD(x + i); v1 += NT_LD(x1 + i);
                        v2 += NT_LD(x2 + i); v3 += NT_LD(x3 + i);
                    }
                    if (rem) {
                        ep_dim_t e = n - VL;
                        v0 += NT(kept)(NT_LD(x + e), keep);
                        v1 += NT(kept)(NT_LD(x1 + e), keep);
                        v2 += NT(kept)(NT_LD(x2 + e), keep);
                        v3 += NT(kept)(NT_LD(x3 + e), keep);
                    }
                } else {
                    for (; i + VL <= n; i += VL) {
                        v0 += NT_LD(x + i) * NT_LD(y + i);
                        v1 += NT_LD(x1 + i) * NT_LD(y1 + i);
                        v2 += NT_LD(x2 + i) * NT_LD(y2 + i);
                        v3 += NT_LD(x3 + i) * NT_LD(y3 + i);
                    }
                    if (rem) {
                        ep_dim_t e = n - VL;
                        v0 += NT(kept)(NT_LD(x + e) * NT_LD(y + e), keep);
                        v1 += NT(kept)(NT_LD(x1 + e) * NT_LD(y1 + e), keep);
                        v2 += NT(kept)(NT_LD(x2 + e) * NT_LD(y2 + e), keep);
                        v3 += NT(kept)(NT_LD(x3 + e) * NT_LD(y3 + e), keep);
                    }
                }
                if (!seq) {
                    a0 += NT(hsum)(v0, 1, 0); a1 += NT(hsum)(v1, 1, 0);
                    a2 += NT(hsum)(v2, 1, 0); a3 += NT(hsum)(v3, 1, 0);
                }
            } else if (wv >= 0) {
                const T *z[4] = {wv ? x : y, wv ? x1 : y1, wv ? x2 : y2, wv ? x3 : y3};
                ep_inc_t sz = wv ? sx : sy;
                T acc[4];
                switch (n) {
                case 2: NT(dot4w)(z, sz, w, 2, acc); break;
                case 3: NT(dot4w)(z, sz, w, 3, acc); break;
                case 4: NT(dot4w)(z, sz, w, 4, acc); break;
                case 5: NT(dot4w)(z, sz, w, 5, acc); break;
                case 6: NT(dot4w)(z, sz, w, 6, acc); break;
                case 7: NT(dot4w)(z, sz, w, 7, acc); break;
                default: NT(dot4w)(z, sz, w, NT_SV, acc);
                }
                a0 = acc[0]; a1 = acc[1]; a2 = acc[2]; a3 = acc[3];
            } else if (fus4) {
                const T *xs[4] = {x, x1, x2, x3}, *ys[4] = {y, y1, y2, y3};
                T acc[4];
                NT(fused4_call)(nm, xs, sx, ys, sy, n, acc);
                a0 = acc[0]; a1 = acc[1]; a2 = acc[2]; a3 = acc[3];
            } else if (fus) {
                // strides of +-1 and +-2 load straight into vectors, a row at
                // a time ('bij,bjk->bik' with rows [::2] of 106: 2.5 ns an
                // element in the four scalar chains below); rows past R - 1
                // (R < 4) not read
                a0 = NT(fused_sum)(nm, x, sx, y, sy, n);
                if (rb + 1 < R) a1 = NT(fused_sum)(nm, x + ax, sx, y + ay, sy, n);
                if (rb + 2 < R) a2 = NT(fused_sum)(nm, x + 2 * ax, sx, y + 2 * ay, sy, n);
                if (rb + 3 < R) a3 = NT(fused_sum)(nm, x + 3 * ax, sx, y + 3 * ay, sy, n);
            } else if (nm == 1 && seq) {
                // from memory: the rows one after another, in address order
                // ('bii->b' (30320,19,19) f32, rows 80 bytes a step: 3.2 ms
                // four interleaved, numpy 1.5 one after another); each row
                // the same chain as below, so the same bits
                for (ep_dim_t i = 0; i < n; i++) a0 += x[i * sx];
                for (ep_dim_t i = 0; i < n; i++) a1 += x1[i * sx];
                for (ep_dim_t i = 0; i < n; i++) a2 += x2[i * sx];
                for (ep_dim_t i = 0; i < n; i++) a3 += x3[i * sx];
            } else if (nm == 1) {
                for (ep_dim_t i = 0; i < n; i++) {
                    a0 += x[i * sx]; a1 += x1[i * sx];
                    a2 += x2[i * sx]; a3 += x3[i * sx];
                }
            } else {
                for (ep_dim_t i = 0; i < n; i++) {
                    a0 += x[i * sx] * y[i * sy];
                    a1 += x1[i * sx] * y1[i * sy];
                    a2 += x2[i * sx] * y2[i * sy];
                    a3 += x3[i * sx] * y3[i * sy];
                }
            }
            T a[4] = {a0, a1, a2, a3};
            for (int t = (int)(r - rb); t < 4 && rb + t < R; t++) {
                if (nf) {
                    T sc[2];
                    NT(scale)(nf, f, fs, rb + t, sc);
                    a[t] *= sc[0];
                }
                T *d = o + (rb + t) * so;
                int fr = first && (rb + t == 0 || so != 0);
                *d = fr ? a[t] : *d + a[t];
            }
        }
    }
#else
    // rows of 8 KB or more (shorter ones read faster four at a time below,
    // their horizontal sums sharing shuffles: c128 rows of 64-128 in L2
    // 0.75x zgemv so, 0.6x two at a time)
    if (nm == 2 && contig && 2 * n * (ep_dim_t)sizeof(T) >= 8192 && R >= 2
        && (rs[0] == 0) != (rs[1] == 0))
        r = NT(rows_cdot)(rs[0] == 0 ? 0 : 1, p, rs, n, R, o, so, first, nf, f, fs);
    if (nm == 2 && contig && 2 * n >= VL && n <= NB) {
        // contiguous complex dots of one block four rows at a time, their
        // eight horizontal sums sharing shuffles; each row's sum is its
        // per-row sum's (blk_contig_in, plus the zero of row_sum's pairs)
        NT(vec) sr, sm;
        NT(dot_signs)(1, &sr, &sm);
        const ep_inc_t ax = 2 * rs[0], ay = 2 * rs[1];
        int wv = (ax == 0) != (ay == 0) ? (ax == 0 ? 0 : 1) : -1;   // the shared input
        if (wv >= 0 && nf == 0) {
            // past the rows rows_cdot ran (rows of one vector or one pair
            // with the loops unrolled)
            ep_inc_t axx = wv ? ax : ay;
            const T *xx = p[1 - wv] + r * axx, *ww = p[wv];
            T *oo = o + 2 * r * so;
            int fr = first && (r == 0 || so != 0);
            r += 2 * n == VL ? NT(rows_cdot_shared)(xx, axx, ww, VL, R - r, oo, so, fr, seq)
                 : n == VL   ? NT(rows_cdot_shared)(xx, axx, ww, 2 * VL, R - r, oo, so, fr, seq)
                             : NT(rows_cdot_shared)(xx, axx, ww, 2 * n, R - r, oo, so, fr, seq);
        }
        for (; r + 4 <= R; r += 4) {
            NT(vec) v[8];
            ep_dim_t i[4];
            T sums[8];
            const T *x = p[0] + r * ax, *y = p[1] + r * ay;
#pragma GCC unroll 4
            for (int t = 0; t < 4; t++) {
                NT(vec) a, b;
                i[t] = NT(dot_vecs)(x + t * ax, y + t * ay, 2 * n, &a, &b);
                i[t] = NT(dot_rest)(x + t * ax, y + t * ay, i[t], 2 * n, &a, &b);
                v[t] = a * sr;
                v[4 + t] = b * sm;
            }
            NT(hsums8)(v, sums);
            for (int t = 0; t < 4; t++) {
                T vr = sums[t], vi = sums[4 + t];
                NT(dot_tail)(x + t * ax, y + t * ay, i[t], 2 * n, 1, &vr, &vi);
                vr += (T)0;
                vi += (T)0;
                if (nf) {
                    T sc[2];
                    NT(scale)(nf, f, fs, r + t, sc);
                    T w = vr * sc[0] - vi * sc[1];
                    vi = vr * sc[1] + vi * sc[0];
                    vr = w;
                }
                T *d = o + 2 * (r + t) * so;
                int fr = first && (r + t == 0 || so != 0);
                d[0] = fr ? vr : d[0] + vr;
                d[1] = fr ? vi : d[1] + vi;
            }
        }
    }
    if (nm == 2 && n <= NB && (2 * n < VL || !contig) && !NT(gatherable)(nm, s, n)) {
        // short or strided complex dots four rows at a time: eight
        // independent chains instead of one row's two (FMA latency).  Rows
        // at strides of +-1 and +-2 long enough to load straight into
        // vectors go one at a time through row_sum's fused loads
        // ('abcd,dcb->a' c64, rows of 1024 at strides 2 and 1: a scalar
        // chain per row, 0.76x numpy)
        ep_inc_t sx = 2 * s[0], sy = 2 * s[1], ax = 2 * rs[0], ay = 2 * rs[1];
        for (; r + 4 <= R; r += 4) {
            const T *x = p[0] + r * ax, *y = p[1] + r * ay;
            T ar[4] = {0, 0, 0, 0}, ai[4] = {0, 0, 0, 0};
            for (ep_dim_t i = 0; i < n; i++) {
                for (int t = 0; t < 4; t++) {
                    const T *u = x + i * sx + t * ax, *w = y + i * sy + t * ay;
                    ar[t] += u[0] * w[0] - u[1] * w[1];
                    ai[t] += u[0] * w[1] + u[1] * w[0];
                }
            }
            for (int t = 0; t < 4; t++) {
                if (nf) {
                    T sc[2];
                    NT(scale)(nf, f, fs, r + t, sc);
                    T v = ar[t] * sc[0] - ai[t] * sc[1];
                    ai[t] = ar[t] * sc[1] + ai[t] * sc[0];
                    ar[t] = v;
                }
                T *d = o + 2 * (r + t) * so;
                int fr = first && (r + t == 0 || so != 0);
                d[0] = fr ? ar[t] : d[0] + ar[t];
                d[1] = fr ? ai[t] : d[1] + ai[t];
            }
        }
    }
#endif
#if !CPX
    // rows of a page or more, or rows of four vectors or more end to end
    // (four of them one run of memory: 'bij,bj->bi' 256^3 f32 0.75x -> 1.0x
    // numpy's sgemv, 20 -> 28 GB/s, on a Xeon); shorter rows apart in
    // memory read four at a time jump between streams every kilobyte or
    // less, which the prefetcher follows worse than one stream
    // the rows zr and the vector ws every row shares (dotv: no path above ran)
    const int zi = rs[0] == 0 ? 1 : 0;
    const T *zr = p[nm == 2 ? zi : 0], *ws = p[nm == 2 ? 1 - zi : 0];
    ep_inc_t az = rs[zi];
    if (dotv)
        r = NT(rows_dotv)(zr, az, ws, n, R, o, so, first, nf, f, fs, seq);
    if ((r == 0 || dotv) && nm == 2 && contig && R - r >= 2 && (rs[0] == 0) != (rs[1] == 0)
        && (dotv || n * (ep_dim_t)sizeof(T) >= 4096 || (az == (ep_inc_t)n && n >= 4 * VL)))
        // rows apart longer than a page, and rows end to end longer than
        // EP_SEQ_DOT_ROW, stay four at a time in either order: each page is
        // a stream of its own for the prefetchers either way, and four of
        // them in flight read faster (Zen 4, rows of 4096 f32: 3.8 ms four
        // at a time, 4.7-4.9 one after another, 64 MB); the rows past
        // rows_dotv's last VL, the same sums
        r = NT(rows_dot4)(r, zr, az, ws, n, R, o, so, first, nf, f, fs,
                          seq && n * (ep_dim_t)sizeof(T) <= (az == (ep_inc_t)n ? EP_SEQ_DOT_ROW
                                                                            : 4096));
#endif
    for (; r < R; r++) {
        for (int j = 0; j < nm; j++) q[j] = p[j] + (1 + CPX) * r * rs[j];
        T res[2] = {0, 0};
#if !CPX
        if (contig && nm <= 2 && n < 4 * VL) {
            // a short sum or dot: whole vectors, then two scalar
            // accumulators ('ab->b' (24, 83680) T f32, rows of 24 in 24
            // scalar adds: 0.57x numpy)
            const T *x = q[0], *y = q[nm - 1];
            NT(vec) v = {0};
            ep_dim_t i = 0;
            for (; i + VL <= n; i += VL)
                v += nm == 2 ? NT_LD(x + i) * NT_LD(y + i) : NT_LD(x + i);
            T a0 = i ? NT(hsum)(v, 1, 0) : 0, a1 = 0;
            for (; i + 1 < n; i += 2) {
                a0 += nm == 2 ? x[i] * y[i] : x[i];
                a1 += nm == 2 ? x[i + 1] * y[i + 1] : x[i + 1];
            }
            if (i < n) a0 += nm == 2 ? x[i] * y[i] : x[i];
            res[0] = a0 + a1;
        } else
#else
        if (contig && nm <= 2 && n <= NB) {
            // a row of one block: row_sum's sum without its call and its
            // pairwise levels (one level: the block's sum plus zero, as
            // there), so the same bits ('ab,b->a' (856341, 8) c64: a call
            // per row of 64 bytes, 0.35x numpy)
            T vr, vi;
            NT(blk_contig_in)(nm, q, n, &vr, &vi, 0, 0);
            res[0] = vr + (T)0;
            res[1] = vi + (T)0;
        } else
#endif
            NT(row_sum)(nm, q, s, n, res);
        if (nf) {
            T sc[2];
            NT(scale)(nf, f, fs, r, sc);
#if CPX
            T t = res[0] * sc[0] - res[1] * sc[1];
            res[1] = res[0] * sc[1] + res[1] * sc[0];
            res[0] = t;
#else
            res[0] *= sc[0];
#endif
        }
        T *d = o + (1 + CPX) * r * so;
        int fr = first && (r == 0 || so != 0);
        d[0] = fr ? res[0] : d[0] + res[0];
#if CPX
        d[1] = fr ? res[1] : d[1] + res[1];
#endif
    }
}

#if !CPX
// A contiguous (R, n) block summed over its rows into o[0..n) ('ab->b' with
// b = 6), or the product of two such blocks ('ij,ij->j'): one stream of R*n
// elements, element e adding to output e mod n.  In vectors of lcm(n, VL)
// elements each lane stays on one output, so the stream runs at full vector
// width however short the rows are.  The rows may run backwards in memory
// (x, y are then the last row's start): the blocks are the same streams.
// Taken for n <= NT_PERIOD_N with lcm(n, VL) at most NT_PERIOD_V vectors.
#define NT_PERIOD_N 64
#define NT_PERIOD_V 16
#define NT_SCALE_ROWS 256   // rows_into_one's chunk of rows scaled by several inputs
#define NT_COPY_ROW_BYTES 4096   // rows_prod's copies of rows up to this long are memmoves
#define NT_PERIOD_MIN 8
static inline int NT(period_vectors)(ep_dim_t n)
{
    ep_dim_t P = n;
    while (P % VL) P += n;
    return (int)(P / VL);
}

// Vector k of the period at flat element i of an input at stride S (1 or
// 2: the even lanes of two loads; the caller stops a period early, so the
// second load ends inside the input)
#define NT_PLD(x, S, i) ((S) == 1 ? NT_LD((x) + (i)) \
    : __builtin_shuffle(NT_LD((x) + 2 * (i)), NT_LD((x) + 2 * (i) + VL), (NT(ivec))NT_EVEN))

// The rp scales w[r*rw] .. of a period's rows in the first lanes of a
// vector, past the last whole vector of scales.  Out of line: copied into an
// array they become a call of memcpy, and around a call every accumulator
// of the caller's loop goes to memory.
static __attribute__((noinline, cold)) NT_TGT NT(vec)
NT(period_scales_tail)(const T *w, ep_inc_t rw, ep_dim_t r, int rp)
{
    T ws[VL] = {0};
    for (int q = 0; q < rp; q++) ws[q] = w[(r + q) * rw];
    return NT_LD(ws);
}

// The scales of rows r .. r + VL - 1, all inside the rows: one load when
// contiguous, else lane by lane (rw != 1 there: no memcpy)
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(period_scales_at)(const T *w, ep_inc_t rw, ep_dim_t r)
{
    if (rw == 1)
        return NT_LD(w + r);
    NT(vec) v;
    for (int q = 0; q < VL; q++) v[q] = w[(r + q) * rw];
    return v;
}

static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(period_scales)(const T *w, ep_inc_t rw, ep_dim_t r, ep_dim_t R, int rp)
{
    return r + VL <= R ? NT(period_scales_at)(w, rw, r) : NT(period_scales_tail)(w, rw, r, rp);
}

// The row of each lane of a period's nv vectors (element e's row e / n),
// counted: these tables are built per call, and a division per lane cost
// more than the rows ('a,cd->cad' (17,) x (2368,15) f64: 17 rows of 15 a
// call, 0.8x numpy dividing, 1.7x counting)
static inline __attribute__((always_inline)) void NT(period_rows)(ep_dim_t n, int nv,
                                                                  NT(ivec) *ix)
{
    int at = 0, row = 0;
    for (int k = 0; k < nv; k++)
        for (int l = 0; l < VL; l++) {
            ix[k][l] = (IT)row;
            if (++at == (int)n) {
                at = 0;
                row++;
            }
        }
}

// One vector of the period stream at flat element e: the inputs' product,
// times the row scales spread to their lanes (wv: the period's scales)
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(period_term)(int nm, int SX, int SY, const T *x, const T *y, int scaled, NT(vec) wv,
                NT(ivec) ixk, ep_dim_t e)
{
    NT(vec) v = NT_PLD(x, SX, e);
    if (nm == 2) v *= NT_PLD(y, SY, e);
    return scaled ? v * __builtin_shuffle(wv, ixk) : v;
}

// The same stream with the inputs' elements at a stride SX, SY of 1 or 2
// (a [..., ::2] slice: 'abc,bc->ac' (279500, 4) x (279500, 8)[:, ::2]
// f32 ran a row at a time, 0.62x numpy), and w[r*rw], when given, the
// row's scale (an input constant along the row: 'ab,a->b' with b = 3, a
// GEMV's dot form over short rows): the P / n scales of a period loaded
// as one vector and spread to their lanes by a permute.
static inline __attribute__((always_inline)) NT_TGT void
NT(period_run)(int nm, int SX, int SY, const int NVC, const T *x, const T *y, const T *w,
               ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t P = n;
    while (P % VL) P += n;
    const int nv = NVC ? NVC : (int)(P / VL), rp = (int)(P / n);
    NT(vec) acc[NT_PERIOD_V];
    // the lanes' rows in the period, for the scales (unread without them,
    // and left unset: zeroing them costs a call of memset per stream)
    NT(ivec) ix[NT_PERIOD_V];
    if (w)
        NT(period_rows)(n, nv, ix);
    else
        for (int k = 0; k < NVC; k++) ix[k] = (NT(ivec)){0};
    ep_dim_t tot = R * n, i = 0, r = 0, stop = SX == 2 || SY == 2 ? tot - 1 : tot;
    if (NVC) {
        // a period of 1 to 3 vectors (NVC) in named accumulators, U
        // periods a step in their own: one accumulator per vector waits on
        // each addition, and an array of them stays in memory ('ab,b->a'
        // (2, 75143):F f64, rows of 2 scaled: 15 cycles a period, numpy 8)
        const int U = NVC == 1 ? 4 : 2;
        const NT(ivec) i0 = ix[0], i1 = ix[NVC > 1 ? 1 : 0], i2 = ix[NVC > 2 ? 2 : 0];
        NT(vec) a00 = {0}, a01 = {0}, a02 = {0}, a10 = {0}, a11 = {0}, a12 = {0};
        NT(vec) a20 = {0}, a30 = {0};
#define NT_PSTEP(q0, q1, q2, e, rr) do {                                                  \
        NT(vec) wv_ = w ? NT(period_scales_at)(w, rw, rr) : (NT(vec)){0};                  \
        q0 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv_, i0, e);                    \
        if (NVC > 1) q1 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv_, i1, (e) + VL); \
        if (NVC > 2) q2 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv_, i2, (e) + 2 * VL); \
    } while (0)
        // (every step's scales inside the rows: no tail in the loop)
        for (; i + U * P <= stop && (!w || r + (U - 1) * rp + VL <= R);
             i += U * P, r += U * rp) {
            NT_PSTEP(a00, a01, a02, i, r);
            NT_PSTEP(a10, a11, a12, i + P, r + rp);
            if (U == 4) {
                NT_PSTEP(a20, a01, a02, i + 2 * P, r + 2 * rp);
                NT_PSTEP(a30, a01, a02, i + 3 * P, r + 3 * rp);
            }
        }
        for (; i + P <= stop; i += P, r += rp) {
            NT(vec) wv = w ? NT(period_scales)(w, rw, r, R, rp) : (NT(vec)){0};
            a00 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv, i0, i);
            if (NVC > 1) a01 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv, i1, i + VL);
            if (NVC > 2) a02 += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv, i2, i + 2 * VL);
        }
#undef NT_PSTEP
        acc[0] = (a00 + a10) + (a20 + a30);
        acc[1] = a01 + a11;
        acc[2] = a02 + a12;
    } else {
        const NT(vec) zero = {0};
        for (int k = 0; k < NT_PERIOD_V; k++) acc[k] = zero;
        for (; i + P <= stop; i += P, r += rp) {
            NT(vec) wv = w ? NT(period_scales)(w, rw, r, R, rp) : (NT(vec)){0};
            for (int k = 0; k < nv; k++)
                acc[k] += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv, ix[k], i + k * VL);
        }
    }
    // the elements past the last whole period: whole vectors lane for lane
    // on the same outputs as in any period, then the last few elements as
    // the end of the vector that ends with the stream, moved down to their
    // lanes of the period (a scalar loop there waits on each addition)
    if (i < tot) {
        const int rq = R - r < rp ? (int)(R - r) : rp;
        NT(vec) wv = w ? NT(period_scales)(w, rw, r, R, rq) : (NT(vec)){0};
        int k = 0;
        for (; k < nv && i + (k + 1) * VL <= stop; k++)
            acc[k] += NT(period_term)(nm, SX, SY, x, y, w != NULL, wv, ix[k], i + k * VL);
        i += k * VL;
        const int rem = (int)(tot - i);
        if (rem && SX == 1 && SY == 1 && tot >= VL) {
            NT(ivec) pick;
            for (int l = 0; l < VL; l++) pick[l] = (IT)(l < rem ? 2 * VL - rem + l : 0);
            NT(vec) v = NT_LD(x + tot - VL);
            if (nm == 2) v *= NT_LD(y + tot - VL);
            v = __builtin_shuffle((NT(vec)){0}, v, pick);
            acc[k] += w ? v * __builtin_shuffle(wv, ix[k]) : v;
            i = tot;
        }
    }
    // The period's P = rp * n lanes folded onto its n outputs: row q of
    // the period (elements q*n .. q*n + n - 1 of its vectors end to end)
    // taken out of the two vectors it spans by a two-source permute, the
    // rows summed lane by lane.  Stored and re-read at offsets of n, the
    // loads would straddle stores and wait for them.
    T part[NT_PERIOD_N];
    if (n < VL) {
        NT(ivec) iota;
        for (int l = 0; l < VL; l++) iota[l] = (IT)l;
        NT(vec) f0 = acc[0], f1 = {0}, zero = {0};
        for (int q = 1; q < rp; q++) {
            const int e = q * (int)n, a = e / VL;
            NT(vec) g = __builtin_shuffle(acc[a], a + 1 < nv ? acc[a + 1] : zero,
                                          iota + (IT)(e % VL));
            if (q & 1)
                f1 += g;
            else
                f0 += g;
        }
        f0 += f1;
        for (int j = 0; j < n; j++) part[j] = f0[j];
    } else {
        T t[NT_PERIOD_V * VL];
        for (int k = 0; k < nv; k++) NT_ST(t + k * VL, acc[k]);
        for (ep_dim_t j = 0; j < n; j++) part[j] = 0;
        for (int q = 0; q < rp; q++)
            for (ep_dim_t j = 0; j < n; j++) part[j] += t[q * n + j];
    }
    // the last elements, less than a vector
    for (ep_dim_t j = i % n, row = i / n; i < tot; i++) {
        T v = x[i * SX];
        if (nm == 2) v *= y[i * SY];
        part[j] += w ? v * w[row * rw] : v;
        if (++j == n) j = 0, row++;
    }
    for (ep_dim_t j = 0; j < n; j++) o[j] = first ? part[j] : o[j] + part[j];
}

// The period stream, its vectors a constant when they are 1 to 3
static inline __attribute__((always_inline)) NT_TGT void
NT(period_body)(int nm, int SX, int SY, const T *x, const T *y, const T *w, ep_inc_t rw,
                ep_dim_t n, ep_dim_t R, T *o, int first)
{
    const int nv = NT(period_vectors)(n);
    if (nv == 1)
        NT(period_run)(nm, SX, SY, 1, x, y, w, rw, n, R, o, first);
    else if (nv == 2)
        NT(period_run)(nm, SX, SY, 2, x, y, w, rw, n, R, o, first);
    else if (nv == 3)
        NT(period_run)(nm, SX, SY, 3, x, y, w, rw, n, R, o, first);
    else
        NT(period_run)(nm, SX, SY, 0, x, y, w, rw, n, R, o, first);
}

NT_FN void NT(rows_period)(int nm, const T *x, const T *y, ep_dim_t n, ep_dim_t R, T *o,
                           int first)
{
    if (nm == 2)
        NT(period_body)(2, 1, 1, x, y, NULL, 0, n, R, o, first);
    else
        NT(period_body)(1, 1, 1, x, x, NULL, 0, n, R, o, first);
}

// The period stream with strides of 2 or a scale per row (period_body)
NT_FN void NT(rows_period_any)(int nm, int SX, int SY, const T *x, const T *y, const T *w,
                               ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    if (nm == 1)
        NT(period_body)(1, SX, SX, x, x, w, rw, n, R, o, first);
    else if (SX == 1 && SY == 1)
        NT(period_body)(2, 1, 1, x, y, w, rw, n, R, o, first);
    else
        NT(period_body)(2, SX, SY, x, y, w, rw, n, R, o, first);
}

// The other way round: R rows of n elements end to end in the output, each
// the same row x (contiguous) times its own scale y[r*fy], an outer product
// with a short row ('ab,c->cba' (3, 2) x (2498642,): rows of 6, 45 cycles
// a row one at a time).  In vectors of lcm(n, VL) elements (rp rows): x's
// pattern held in registers, the rp scales loaded as one vector and spread
// to their lanes by a permute, a multiply and a store per vector.  Each
// element is y * x as the row at a time computes it: the same bits.
NT_FN void NT(rows_period_prod)(const T *x, const T *y, ep_inc_t fy, ep_dim_t n, ep_dim_t R,
                                T *o, int first)
{
    ep_dim_t P = n;
    while (P % VL) P += n;
    const int nv = (int)(P / VL), rp = (int)(P / n);
    NT(vec) xp[NT_PERIOD_V];
    NT(ivec) ix[NT_PERIOD_V];
    // element e of the period is x[e mod n] in row e / n
    NT(period_rows)(n, nv, ix);
    int at = 0;
    for (int k = 0; k < nv; k++)
        for (int l = 0; l < VL; l++) {
            xp[k][l] = x[at];
            at = at + 1 == (int)n ? 0 : at + 1;
        }
    ep_dim_t r = 0;
    for (; r + rp <= R; r += rp) {
        NT(vec) yv = NT(period_scales)(y, fy, r, R, rp);
        T *d = o + r * n;
        for (int k = 0; k < nv; k++) {
            NT(vec) v = __builtin_shuffle(yv, ix[k]) * xp[k];
            NT_ST(d + k * VL, first ? v : NT_LD(d + k * VL) + v);
        }
    }
    for (; r < R; r++)
        for (ep_dim_t i = 0; i < n; i++) {
            T v = y[r * fy] * x[i], *d = o + r * n + i;
            *d = first ? v : *d + v;
        }
}

// R rows of n contiguous elements (or the products of two inputs' rows),
// row r at x + r*rx (and y + r*ry), any row strides, times w[r*rw] when
// `scaled` (an input constant along the row: a GEMV's vector), summed into
// o[0..n): the output row stays in vector registers while the rows stream,
// instead of being loaded and stored once per row ('ab->b' with b = 37 read
// row by row: 0.69-0.88x numpy; 'ij,i->j' (40000,12) f32 0.27x -> 1.0x).
// VL <= n < (NT_PERIOD_V + 1) * VL; the inputs at a stride SX, SY of 1 or 2
// along the row (a [..., ::2] slice: 'ab->b' (27508,34)[:, ::2] f64 ran
// element by element, 0.5x numpy), n > VL where one is 2.
// elements i .. i+VL-1 of a row of n at stride S (1 or 2) without reading
// past its last element: even lanes of two loads, or for the row's last
// vector the odd lanes of two loads starting one element before it (n > VL)
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(ld_row)(const T *x, int S, ep_dim_t i, ep_dim_t n)
{
    if (S == 1)
        return NT_LD(x + i);
    if (i + VL < n) {
        const NT(ivec) m = NT_EVEN;
        return __builtin_shuffle(NT_LD(x + 2 * i), NT_LD(x + 2 * i + VL), m);
    }
    const NT(ivec) m = NT_ODD;
    return __builtin_shuffle(NT_LD(x + 2 * i - 1), NT_LD(x + 2 * i - 1 + VL), m);
}

static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(held_row)(int nm, int scaled, int SX, int SY, const T *x, const T *y, NT(vec) cv,
             ep_dim_t off, ep_dim_t n)
{
    NT(vec) v = NT(ld_row)(x, SX, off, n);
    if (nm == 2) v *= NT(ld_row)(y, SY, off, n);
    return scaled ? v * cv : v;
}

// The part of the row past whole vectors is the last vector of the row
// (overlapping the one before it), whose last n % VL lanes are kept at the
// end; rows run in pairs into two sets of accumulators when the row is at
// most four vectors (one chain of additions per vector would be the limit).
static inline __attribute__((always_inline)) NT_TGT void
NT(held_body)(int nm, int scaled, int SX, int SY, int NV, const T *x, ep_inc_t rx, const T *y,
              ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    // NV: the whole vectors of the row when a constant (1..4: the
    // accumulators stay in registers), else 0
    int nv = NV ? NV : (int)(n / VL), nt = (int)(n % VL), na = nv + (nt > 0);
    NT(vec) acc[NT_PERIOD_V + 1], acc2[4];
    for (int k = 0; k < na; k++) acc[k] = (NT(vec)){0};
    for (int k = 0; k < 4; k++) acc2[k] = (NT(vec)){0};
    ep_dim_t r = 0;
    const int pf = nm == 1 && SX == 1 ? NT(prefetch_lines)(rx, n, R) : 0;
    if (na <= 4) {
        for (; r + 2 <= R; r += 2, x += 2 * rx, y += 2 * ry) {
            // four rows' lines every other pair of rows
            if (pf && !(r & 2) && r + NT_RPF + 4 <= R)
                NT(prefetch_rows4)(x + NT_RPF * rx, rx, n, pf);
            NT(vec) c0 = (scaled ? w[r * rw] : (T)1) - (NT(vec)){0};
            NT(vec) c1 = (scaled ? w[(r + 1) * rw] : (T)1) - (NT(vec)){0};
            for (int k = 0; k < nv; k++) {
                acc[k] += NT(held_row)(nm, scaled, SX, SY, x, y, c0, k * VL, n);
                acc2[k] += NT(held_row)(nm, scaled, SX, SY, x + rx, y + ry, c1, k * VL, n);
            }
            if (nt) {
                acc[nv] += NT(held_row)(nm, scaled, SX, SY, x, y, c0, n - VL, n);
                acc2[nv] += NT(held_row)(nm, scaled, SX, SY, x + rx, y + ry, c1, n - VL, n);
            }
        }
        for (int k = 0; k < na; k++) acc[k] += acc2[k];
    }
    for (; r < R; r++, x += rx, y += ry) {
        NT(vec) c0 = (scaled ? w[r * rw] : (T)1) - (NT(vec)){0};
        for (int k = 0; k < nv; k++) acc[k] += NT(held_row)(nm, scaled, SX, SY, x, y, c0, k * VL, n);
        if (nt) acc[nv] += NT(held_row)(nm, scaled, SX, SY, x, y, c0, n - VL, n);
    }
    for (int k = 0; k < na; k++) {
        T t[VL];
        NT_ST(t, acc[k]);
        int l0 = k < nv ? 0 : VL - nt;          // the overlapping vector's own lanes
        ep_dim_t e0 = k < nv ? (ep_dim_t)k * VL : n - VL;
        for (int l = l0; l < VL; l++)
            o[e0 + l] = first ? t[l] : o[e0 + l] + t[l];
    }
}

static inline __attribute__((always_inline)) NT_TGT void
NT(held_nv)(int nm, int scaled, int SX, int SY, const T *x, ep_inc_t rx, const T *y,
            ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    switch (n / VL) {
    case 1: NT(held_body)(nm, scaled, SX, SY, 1, x, rx, y, ry, w, rw, n, R, o, first); break;
    case 2: NT(held_body)(nm, scaled, SX, SY, 2, x, rx, y, ry, w, rw, n, R, o, first); break;
    case 3: NT(held_body)(nm, scaled, SX, SY, 3, x, rx, y, ry, w, rw, n, R, o, first); break;
    default: NT(held_body)(nm, scaled, SX, SY, 0, x, rx, y, ry, w, rw, n, R, o, first);
    }
}

// The same for rows shorter than a vector (n < VL, a constant after
// inlining): the output row in scalar registers, two rows at a time into
// two sets ('ij,i->j' (100000,5) f32 read row by row, the output loaded and
// stored per row: 0.28x numpy's BLAS).
static inline __attribute__((always_inline)) NT_TGT void
NT(held_small)(int nm, int scaled, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
               const T *w, ep_inc_t rw, int n, ep_dim_t R, T *o, int first)
{
    T a[VL], b[VL];
    for (int i = 0; i < n; i++) a[i] = b[i] = 0;
    ep_dim_t r = 0;
    for (; r + 2 <= R; r += 2, x += 2 * rx, y += 2 * ry) {
        T c0 = scaled ? w[r * rw] : (T)1, c1 = scaled ? w[(r + 1) * rw] : (T)1;
        for (int i = 0; i < n; i++) {
            T u = nm == 2 ? x[i] * y[i] : x[i], v = nm == 2 ? x[rx + i] * y[ry + i] : x[rx + i];
            a[i] += scaled ? u * c0 : u;
            b[i] += scaled ? v * c1 : v;
        }
    }
    for (; r < R; r++, x += rx, y += ry) {
        T c0 = scaled ? w[r * rw] : (T)1;
        for (int i = 0; i < n; i++) {
            T u = nm == 2 ? x[i] * y[i] : x[i];
            a[i] += scaled ? u * c0 : u;
        }
    }
    for (int i = 0; i < n; i++) o[i] = first ? a[i] + b[i] : o[i] + (a[i] + b[i]);
}

// one row's term of NT(held_part): x's row (times y's) times c
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(held_term)(int nm, int scaled, const T *x, const T *y, T c)
{
    NT(vec) u = NT_LD(x);
    if (nm == 2) u *= NT_LD(y);
    return scaled ? c * u : u;
}

// Rows shorter than a vector (2 <= n < VL, rows rx, ry > 0 apart) summed
// into one output row held in a vector register: each row one load from its
// first element, four rows into four accumulators ('ij,j->i' (12,103179) F
// f32 in scalar chains, 236 us, numpy 273; rows of 8 0.85x numpy).  The
// lanes past n (the next row's, or a gap's) are never stored.  A load
// reaches VL - n elements past its row: inside the operand for every row
// but the last few, whose loads would pass the last row's end (the last
// element this call may read); those rows are added in scalars.
static inline __attribute__((always_inline)) NT_TGT void
NT(held_part)(int nm, int scaled, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
              const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t over = (VL - n + rx - 1) / rx;
    if (nm == 2 && (VL - n + ry - 1) / ry > over) over = (VL - n + ry - 1) / ry;
    const ep_dim_t safe = R > over ? R - over : 0;
    NT(vec) a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
#define NT_HP(q) NT(held_term)(nm, scaled, x + (r + (q)) * rx, y + (r + (q)) * ry, \
                               scaled ? w[(r + (q)) * rw] : (T)1)
    ep_dim_t r = 0;
    for (; r + 4 <= safe; r += 4) {
        a0 += NT_HP(0); a1 += NT_HP(1); a2 += NT_HP(2); a3 += NT_HP(3);
    }
    for (; r < safe; r++) a0 += NT_HP(0);
#undef NT_HP
    T s[VL];
    NT_ST(s, (a0 + a1) + (a2 + a3));
    for (; r < R; r++) {
        T c = scaled ? w[r * rw] : (T)1;
        for (ep_dim_t i = 0; i < n; i++)
            s[i] += c * (nm == 2 ? x[r * rx + i] * y[r * ry + i] : x[r * rx + i]);
    }
    for (ep_dim_t i = 0; i < n; i++) o[i] = first ? s[i] : o[i] + s[i];
}

static inline __attribute__((always_inline)) NT_TGT void
NT(held_small_n)(int nm, int scaled, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
                 const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    if (n >= 2 && R >= 8 && rx > 0 && (nm == 1 || ry > 0)) {
        NT(held_part)(nm, scaled, x, rx, y, ry, w, rw, n, R, o, first);
        return;
    }
    switch (n) {
    case 1: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 1, R, o, first); break;
    case 2: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 2, R, o, first); break;
    case 3: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 3, R, o, first); break;
#if VL > 4
    case 4: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 4, R, o, first); break;
    case 5: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 5, R, o, first); break;
    case 6: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 6, R, o, first); break;
    case 7: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, 7, R, o, first); break;
#endif
    default: NT(held_small)(nm, scaled, x, rx, y, ry, w, rw, (int)n, R, o, first);
    }
}

// Long rows summed into one output row, in either of two orders with one
// sum per element: o + t_0 + t_1 + ... + t_{R-1} from the left, t_r = c_r x_r
// (times y's row with two inputs; c_r = 1 unscaled), as numpy's axpy loop
// sums them, so both orders give the same bits:
//  - four rows at a time (axpy4_body): the output is read and written once
//    per four rows ('ij,jk->ki' (1,83) x (83,89902) f32, a GEMV's axpy form
//    over a row block in L1: 0.45-0.51x numpy row by row);
//  - one row after another (axpy_seq_body, rows up to 3/8 of L1, see
//    ep_nest_streams and ep_stream_order): the rows are read in memory
//    order, the output in L1.
#define NT_SEQ_N ((ep_dim_t)(65536 / sizeof(T)))   // the longest row any L1 keeps so
#define NT_AXROW(x, y, i) (nm == 2 ? NT(ld_row)(x, SX, i, n) * NT(ld_row)(y, SY, i, n) \
                                   : NT(ld_row)(x, SX, i, n))
#define NT_AXTERM(c, x, y, i) (scaled ? (c) * NT_AXROW(x, y, i) : NT_AXROW(x, y, i))
#define NT_AXSC(c, x, y, i) (scaled ? (c) * (nm == 2 ? (x)[(i) * SX] * (y)[(i) * SY] : (x)[(i) * SX]) \
                                    : (nm == 2 ? (x)[(i) * SX] * (y)[(i) * SY] : (x)[(i) * SX]))

// Rows r0..R-1, one after another.
static inline __attribute__((always_inline)) NT_TGT void
NT(axpy_seq_body)(int nm, int scaled, int SX, int SY, const T *x, ep_inc_t rx, const T *y,
                  ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t r0, ep_dim_t R,
                  T *o, int first)
{
    ep_dim_t nv = n - n % VL;
    for (ep_dim_t r = r0; r < R; r++) {
        const T *xr = x + r * rx, *yr = y + r * ry;
        T c = scaled ? w[r * rw] : (T)1;
        NT(vec) cv = c - (NT(vec)){0};
        (void)cv;
        int fr = first && r == 0;
        ep_dim_t i = 0;
        // four vectors a step, every load before any store: a store
        // between the loads of one vector and the next makes each load wait
        // on it when the row and the output alias modulo 4 KB, as the rows
        // sweep past the output ('ab->b' (10000,1000) f64 one vector a
        // step 4.2-4.6 ms, four 2.4-2.6)
        for (; i + 4 * VL <= nv; i += 4 * VL) {
            NT(vec) t0 = NT_AXTERM(cv, xr, yr, i), t1 = NT_AXTERM(cv, xr, yr, i + VL);
            NT(vec) t2 = NT_AXTERM(cv, xr, yr, i + 2 * VL);
            NT(vec) t3 = NT_AXTERM(cv, xr, yr, i + 3 * VL);
            if (!fr) {
                t0 = NT_LD(o + i) + t0; t1 = NT_LD(o + i + VL) + t1;
                t2 = NT_LD(o + i + 2 * VL) + t2; t3 = NT_LD(o + i + 3 * VL) + t3;
            }
            NT_ST(o + i, t0); NT_ST(o + i + VL, t1);
            NT_ST(o + i + 2 * VL, t2); NT_ST(o + i + 3 * VL, t3);
        }
        for (; i < nv; i += VL) {
            NT(vec) t = NT_AXTERM(cv, xr, yr, i);
            NT_ST(o + i, fr ? t : NT_LD(o + i) + t);
        }
        for (; i < n; i++) {
            T t = NT_AXSC(c, xr, yr, i);
            o[i] = fr ? t : o[i] + t;
        }
    }
}

// Whole blocks of four rows, then the rows left one after another.
static inline __attribute__((always_inline)) NT_TGT void
NT(axpy4_body)(int nm, int scaled, int SX, int SY, const T *x, ep_inc_t rx, const T *y,
               ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t nv = n - n % VL, r = 0;
    for (; r + 4 <= R; r += 4) {
        const T *x0 = x + r * rx, *x1 = x0 + rx, *x2 = x1 + rx, *x3 = x2 + rx;
        const T *y0 = y + r * ry, *y1 = y0 + ry, *y2 = y1 + ry, *y3 = y2 + ry;
        T c0 = scaled ? w[r * rw] : (T)1, c1 = scaled ? w[(r + 1) * rw] : (T)1;
        T c2 = scaled ? w[(r + 2) * rw] : (T)1, c3 = scaled ? w[(r + 3) * rw] : (T)1;
        NT(vec) v0 = c0 - (NT(vec)){0}, v1 = c1 - (NT(vec)){0};
        NT(vec) v2 = c2 - (NT(vec)){0}, v3 = c3 - (NT(vec)){0};
        (void)v0; (void)v1; (void)v2; (void)v3;
        int fr = first && r == 0;
        ep_dim_t i = 0;
        for (; i < nv; i += VL) {
            NT(vec) t = NT_AXTERM(v0, x0, y0, i);
            NT(vec) v = fr ? t : NT_LD(o + i) + t;
            v = v + NT_AXTERM(v1, x1, y1, i);
            v = v + NT_AXTERM(v2, x2, y2, i);
            NT_ST(o + i, v + NT_AXTERM(v3, x3, y3, i));
        }
        for (; i < n; i++) {
            T t = NT_AXSC(c0, x0, y0, i);
            T v = fr ? t : o[i] + t;
            v = v + NT_AXSC(c1, x1, y1, i);
            v = v + NT_AXSC(c2, x2, y2, i);
            o[i] = v + NT_AXSC(c3, x3, y3, i);
        }
    }
    NT(axpy_seq_body)(nm, scaled, SX, SY, x, rx, y, ry, w, rw, n, r, R, o, first);
}
#undef NT_AXSC
#undef NT_AXTERM
#undef NT_AXROW

// One of the four ways of rows summed into one output row (`way`: 0 rows
// shorter than a vector, 1 held in vector registers, 2 four long rows at a
// time, 3 one row after another), made once per case of one or two
// inputs with or without a scale (w NULL: none), so each loop is compiled
// with those fixed.
#define NT_SMALL 0
#define NT_HELD 1
#define NT_AXPY4 2
#define NT_AXPY_SEQ 3
static inline __attribute__((always_inline)) NT_TGT void
NT(into_one_way)(int way, int nm, int scaled, const T *x, ep_inc_t rx, const T *y,
                 ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    if (way == NT_SMALL)
        NT(held_small_n)(nm, scaled, x, rx, y, ry, w, rw, n, R, o, first);
    else if (way == NT_HELD)
        NT(held_nv)(nm, scaled, 1, 1, x, rx, y, ry, w, rw, n, R, o, first);
    else if (way == NT_AXPY4)
        NT(axpy4_body)(nm, scaled, 1, 1, x, rx, y, ry, w, rw, n, R, o, first);
    else
        NT(axpy_seq_body)(nm, scaled, 1, 1, x, rx, y, ry, w, rw, n, 0, R, o, first);
}

NT_FN void NT(rows_into_one_way)(int way, int nm, const T *x, ep_inc_t rx, const T *y,
                                 ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R,
                                 T *o, int first)
{
    if (nm == 2 && w)
        NT(into_one_way)(way, 2, 1, x, rx, y, ry, w, rw, n, R, o, first);
    else if (nm == 2)
        NT(into_one_way)(way, 2, 0, x, rx, y, ry, x, 0, n, R, o, first);
    else if (w)
        NT(into_one_way)(way, 1, 1, x, rx, x, 0, w, rw, n, R, o, first);
    else
        NT(into_one_way)(way, 1, 0, x, rx, x, 0, x, 0, n, R, o, first);
}

// Rows with the first input at stride 2 along the row (a [..., ::2] slice;
// y at stride sy of 1 or 2: a product's inputs come in either order) summed
// into one output row, held in registers or (long rows, `held` 0) four at
// a time; that input's vectors are the even lanes of two loads, where
// element by element ran below the memory's speed ('abc,a->bc'
// (277,3999,6)[..., ::2] f64: 0.66x numpy).  One instance per case.
// `held` 2: long rows one after another (the measured order, as for
// contiguous rows: 'abcd,c->abd' (1,104,120,898)[..., ::2] f64 from memory,
// Zen 4, four at a time 8.0-8.8 ms, one after another 5.7-6.0; numpy 5.8-6.6).
static inline __attribute__((always_inline)) NT_TGT void
NT(strided_way)(int held, int nm, int scaled, int SY, const T *x, ep_inc_t rx, const T *y,
                ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    if (held == 1)
        NT(held_nv)(nm, scaled, 2, SY, x, rx, y, ry, w, rw, n, R, o, first);
    else if (held == 2)
        NT(axpy_seq_body)(nm, scaled, 2, SY, x, rx, y, ry, w, rw, n, 0, R, o, first);
    else
        NT(axpy4_body)(nm, scaled, 2, SY, x, rx, y, ry, w, rw, n, R, o, first);
}

NT_FN void NT(rows_into_one_strided)(int held, int nm, int sy, const T *x, ep_inc_t rx,
                                     const T *y, ep_inc_t ry, const T *w, ep_inc_t rw,
                                     ep_dim_t n, ep_dim_t R, T *o, int first)
{
    if (nm == 1 && w)
        NT(strided_way)(held, 1, 1, 2, x, rx, x, 0, w, rw, n, R, o, first);
    else if (nm == 1)
        NT(strided_way)(held, 1, 0, 2, x, rx, x, 0, x, 0, n, R, o, first);
    else if (sy == 2 && w)
        NT(strided_way)(held, 2, 1, 2, x, rx, y, ry, w, rw, n, R, o, first);
    else if (sy == 2)
        NT(strided_way)(held, 2, 0, 2, x, rx, y, ry, x, 0, n, R, o, first);
    else if (w)
        NT(strided_way)(held, 2, 1, 1, x, rx, y, ry, w, rw, n, R, o, first);
    else
        NT(strided_way)(held, 2, 0, 1, x, rx, y, ry, x, 0, n, R, o, first);
}

// Rows summed into one output row (the loop around the row summed, the row
// contiguous in every input and the output; nf <= 1 inputs constant along
// the row, f[0] rows apart by fs[0]): rows longer than the registers hold
// four at a time; from 16 shorter rows, the period stream when every
// input's rows are end to end in one direction and none is constant along
// the row, else the row held in registers; 0 when none applies.  seq: long
// rows up to 8 KB one after another (axpy_seq_body).
static inline __attribute__((always_inline)) NT_TGT int
NT(rows_into_one_1)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                    const ep_inc_t *rs, ep_dim_t R, T *o, int first, int nf,
                    const T *const *f, const ep_inc_t *fs, int seq)
{
    if (nm < 1 || nm > 2 || nf > 1 || R < 2)
        return 0;
    ep_inc_t r0 = rs[0], r1 = nm == 2 ? rs[1] : rs[0];
    const T *w = nf ? f[0] : NULL;
    ep_inc_t rw = nf ? fs[0] : 0;
    ep_inc_t sx = s[0], sy = s[nm - 1];
    // (one input's rows of a vector to 16 elements at stride 2, which the
    // held rows below leave, too: 'ab->b' (193983, 22)[:, ::2] f64 ran a
    // row at a time, 0.6x numpy)
    if ((sx != 1 || sy != 1 || nf) && (n < VL || (nm == 1 && sx == 2 && n < 17)) && R >= 16 &&
        (sx == 1 || sx == 2) &&
        (sy == 1 || sy == 2) && r0 == (ep_inc_t)n * sx && r1 == (ep_inc_t)n * sy &&
        (!nf || rw != 0) && NT(period_vectors)(n) <= NT_PERIOD_V &&
        R * n >= NT_PERIOD_MIN * VL * NT(period_vectors)(n)) {
        // rows shorter than a vector end to end in every input, at least
        // NT_PERIOD_MIN periods of them: the period stream, with the scale
        // or the stride 2 in its loads (fewer periods pay more in the set-up
        // and the tail than they save: 'abcd->da' (28, 24, 2, 15)[..., ::2]
        // f32, 28 streams of 3 periods of 240, 0.23x numpy)
        NT(rows_period_any)(nm, (int)sx, (int)sy, p[0], p[nm - 1], w, rw, n, R, o, first);
        return 1;
    }
    if (sx != 1 || sy != 1) {
        // an input at stride 2: that input's vectors the even lanes of two
        // loads, long rows four at a time, shorter ones held in registers
        int held = n <= NT_PERIOD_V * VL + VL - 1;
        if ((sx != 1 && sx != 2) || (sy != 1 && sy != 2) ||
            (held && (n <= VL || R < 16 || (nm == 1 && n < 17))))
            return 0;
        if (!held && seq && n <= NT_SEQ_N)
            held = 2;
        if (sx == 2)
            NT(rows_into_one_strided)(held, nm, (int)sy, p[0], r0, p[nm - 1], r1, w, rw, n, R,
                                      o, first);
        else
            NT(rows_into_one_strided)(held, nm, 1, p[1], r1, p[0], r0, w, rw, n, R, o, first);
        return 1;
    }
    if (n > NT_PERIOD_V * VL + VL - 1) {
        NT(rows_into_one_way)(seq && n <= NT_SEQ_N ? NT_AXPY_SEQ : NT_AXPY4, nm, p[0], r0,
                              p[nm - 1], r1, w, rw, n, R, o, first);
        return 1;
    }
    if (R < 16)
        return 0;
    if (!nf && r0 == r1 && (r0 == (ep_inc_t)n || r0 == -(ep_inc_t)n) && n <= NT_PERIOD_N &&
        NT(period_vectors)(n) <= NT_PERIOD_V) {
        ep_dim_t back = r0 < 0 ? (R - 1) * r0 : 0;
        NT(rows_period)(nm, p[0] + back, p[nm - 1] + back, n, R, o, first);
        return 1;
    }
    if ((n >= VL || nm == 2 || nf || (n >= 2 && r0 > 0)) && n <= NT_PERIOD_V * VL + VL - 1) {
        NT(rows_into_one_way)(n < VL ? NT_SMALL : NT_HELD, nm, p[0], r0, p[nm - 1], r1, w, rw,
                              n, R, o, first);
        return 1;
    }
    return 0;
}

// rows_into_one of several inputs constant along the row ('ia,ib,ic->abc':
// B's rows scaled by x_i z_i): their product per row made for a chunk of
// rows, which the one-scale kernels then take.  Chunks of q or q + 1 rows,
// the shortest first: whether a kernel takes rows only grows with their
// number, so if the first chunk is taken all are (and if not, nothing is
// written).  Its own frame: rows_prod's stays without the chunk's scales.
__attribute__((noinline)) NT_FN int
NT(rows_into_one_scales)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                         const ep_inc_t *rs, ep_dim_t R, T *o, int first, int nf,
                         const T *const *f, const ep_inc_t *fs, int seq)
{
    T w[NT_SCALE_ROWS];
    const T *wp = w;
    const ep_inc_t one = 1;
    ep_dim_t nc = (R + NT_SCALE_ROWS - 1) / NT_SCALE_ROWS, q = R / nc, extra = R % nc;
    ep_dim_t r = 0;
    for (ep_dim_t c = 0; c < nc; c++) {
        ep_dim_t m = q + (c >= nc - extra);
        for (ep_dim_t k = 0; k < m; k++) {
            T v = f[0][(r + k) * fs[0]];
            for (int j = 1; j < nf; j++) v *= f[j][(r + k) * fs[j]];
            w[k] = v;
        }
        const T *q2[2] = {p[0] + r * rs[0], p[nm - 1] + r * rs[nm - 1]};
        if (!NT(rows_into_one_1)(nm, q2, s, n, rs, m, o, first && c == 0, 1, &wp, &one, seq))
            return 0;
        r += m;
    }
    return 1;
}

// rows_into_one of any number of inputs constant along the row
static inline __attribute__((always_inline)) NT_TGT int
NT(rows_into_one)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                  const ep_inc_t *rs, ep_dim_t R, T *o, int first, int nf,
                  const T *const *f, const ep_inc_t *fs, int seq)
{
    if (nf <= 1)
        return NT(rows_into_one_1)(nm, p, s, n, rs, R, o, first, nf, f, fs, seq);
    if (nm < 1 || nm > 2 || R < 2)
        return 0;
    return NT(rows_into_one_scales)(nm, p, s, n, rs, R, o, first, nf, f, fs, seq);
}
#endif

#if CPX
// Complex rows summed into one output row (the complex form of rows_into_one:
// 'ab,a->b' complex64 with b = 5 read row by row, the output loaded and
// stored per row: 0.44x numpy's BLAS).  The product is deferred to the end:
// sum_r c_r x_r = sum_r re(c_r) x_r + alt * swap(sum_r im(c_r) x_r), and
// for two inputs x y = dup_re(x) y + alt * dup_im(x) swap(y), so each row
// adds to two accumulators with real FMAs and the swap and signs are
// applied once.  Modes: CR_SUM (one input, no scale: a plain sum of the 2n
// reals), CR_SCALED (one input times the constant along the row: a GEMV's
// axpy form), CR_PROD (two inputs, no scale).
#define NT_CR_SUM 0
#define NT_CR_SCALED 1
#define NT_CR_PROD 2

// adds row x (and y) at real offset off, times (wr, wi), to *a and *b
static inline __attribute__((always_inline)) NT_TGT void
NT(crow_add)(int mode, const T *x, const T *y, T wr, T wi, ep_dim_t off, NT(vec) *a,
             NT(vec) *b)
{
    const NT(ivec) sw = NT_PAIR_SWAP, re = NT_PAIR_RE, im = NT_PAIR_IM;
    NT(vec) u = NT_LD(x + off);
    if (mode == NT_CR_PROD) {
        NT(vec) v = NT_LD(y + off);
        *a += __builtin_shuffle(u, re) * v;
        *b += __builtin_shuffle(u, im) * __builtin_shuffle(v, sw);
    } else if (mode == NT_CR_SCALED) {
        *a += wr * u;
        *b += wi * u;
    } else {
        *a += u;
    }
}

// the deferred part: a + alt * b, b's pairs swapped first for CR_SCALED
static inline __attribute__((always_inline)) NT_TGT NT(vec)
NT(crow_total)(int mode, NT(vec) a, NT(vec) b)
{
    const NT(ivec) sw = NT_PAIR_SWAP;
    NT(vec) alt;
    for (int v = 0; v < VL; v++) alt[v] = v & 1 ? 1 : -1;
    if (mode == NT_CR_SUM)
        return a;
    return a + alt * (mode == NT_CR_SCALED ? __builtin_shuffle(b, sw) : b);
}

// rows of 2n >= VL reals held in NV (1..4) vectors, the part past whole
// vectors as the row's last vector overlapping the one before; rows in
// pairs into two sets when the row is at most two vectors
static inline __attribute__((always_inline)) NT_TGT void
NT(cheld_body)(int mode, int NV, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
               const T *w, ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t n2 = 2 * n;
    int nt = (int)(n2 % VL), na = NV + (nt > 0);
    NT(vec) a[5], b[5], a2[3], b2[3];
    for (int k = 0; k < 5; k++) a[k] = b[k] = (NT(vec)){0};
    for (int k = 0; k < 3; k++) a2[k] = b2[k] = (NT(vec)){0};
    ep_dim_t r = 0;
    T wr0 = 1, wi0 = 0, wr1 = 1, wi1 = 0;
    if (na <= 2) {
        for (; r + 2 <= R; r += 2, x += 4 * rx, y += 4 * ry) {
            if (mode == NT_CR_SCALED) {
                wr0 = w[2 * r * rw]; wi0 = w[2 * r * rw + 1];
                wr1 = w[2 * (r + 1) * rw]; wi1 = w[2 * (r + 1) * rw + 1];
            }
            for (int k = 0; k < NV; k++) {
                NT(crow_add)(mode, x, y, wr0, wi0, k * VL, &a[k], &b[k]);
                NT(crow_add)(mode, x + 2 * rx, y + 2 * ry, wr1, wi1, k * VL, &a2[k], &b2[k]);
            }
            if (nt) {
                NT(crow_add)(mode, x, y, wr0, wi0, n2 - VL, &a[NV], &b[NV]);
                NT(crow_add)(mode, x + 2 * rx, y + 2 * ry, wr1, wi1, n2 - VL, &a2[NV], &b2[NV]);
            }
        }
        for (int k = 0; k < na; k++) { a[k] += a2[k]; b[k] += b2[k]; }
    }
    for (; r < R; r++, x += 2 * rx, y += 2 * ry) {
        if (mode == NT_CR_SCALED) { wr0 = w[2 * r * rw]; wi0 = w[2 * r * rw + 1]; }
        for (int k = 0; k < NV; k++) NT(crow_add)(mode, x, y, wr0, wi0, k * VL, &a[k], &b[k]);
        if (nt) NT(crow_add)(mode, x, y, wr0, wi0, n2 - VL, &a[NV], &b[NV]);
    }
    for (int k = 0; k < na; k++) {
        T t[VL];
        NT_ST(t, NT(crow_total)(mode, a[k], b[k]));
        int l0 = k < NV ? 0 : VL - nt;          // the overlapping vector's own lanes
        ep_dim_t e0 = k < NV ? (ep_dim_t)k * VL : n2 - VL;
        for (int l = l0; l < VL; l++)
            o[e0 + l] = first ? t[l] : o[e0 + l] + t[l];
    }
}

// rows of fewer reals than a vector (n a constant after inlining): the
// output row in scalar registers
static inline __attribute__((always_inline)) NT_TGT void
NT(cheld_small)(int mode, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry, const T *w,
                ep_inc_t rw, int n, ep_dim_t R, T *o, int first)
{
    T ar[VL], ai[VL];
    for (int i = 0; i < n; i++) ar[i] = ai[i] = 0;
    for (ep_dim_t r = 0; r < R; r++, x += 2 * rx, y += 2 * ry) {
        T wr = mode == NT_CR_SCALED ? w[2 * r * rw] : (T)1;
        T wi = mode == NT_CR_SCALED ? w[2 * r * rw + 1] : (T)0;
        for (int i = 0; i < n; i++) {
            T xr = x[2 * i], xi = x[2 * i + 1];
            if (mode == NT_CR_PROD) {
                T yr = y[2 * i], yi = y[2 * i + 1];
                ar[i] += xr * yr - xi * yi;
                ai[i] += xr * yi + xi * yr;
            } else if (mode == NT_CR_SCALED) {
                ar[i] += wr * xr - wi * xi;
                ai[i] += wr * xi + wi * xr;
            } else {
                ar[i] += xr;
                ai[i] += xi;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        o[2 * i] = first ? ar[i] : o[2 * i] + ar[i];
        o[2 * i + 1] = first ? ai[i] : o[2 * i + 1] + ai[i];
    }
}

// long rows four at a time: o += sum of four rows' terms, the output read
// and written once per four rows; a last block of fewer rows adds only
// those (a repeated row weighed by 0 would turn its infs into nans)
static inline __attribute__((always_inline)) NT_TGT void
NT(caxpy4_body)(int mode, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry, const T *w,
                ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t n2 = 2 * n;
    for (ep_dim_t r = 0; r < R; r += 4) {
        int k = R - r < 4 ? (int)(R - r) : 4;
        T wr[4], wi[4];
        const T *xs[4], *ys[4];
        for (int t = 0; t < 4; t++) {
            int u = t < k ? t : k - 1;
            wr[t] = t >= k ? (T)0 : mode == NT_CR_SCALED ? w[2 * (r + u) * rw] : (T)1;
            wi[t] = t >= k || mode != NT_CR_SCALED ? (T)0 : w[2 * (r + u) * rw + 1];
            xs[t] = x + 2 * (r + u) * rx;
            ys[t] = y + 2 * (r + u) * ry;
        }
        int fr = first && r == 0;
        ep_dim_t i = 0;
        for (; i + VL <= n2; i += VL) {
            NT(vec) a = {0}, b = {0};
            if (k < 4) {
                for (int t = 0; t < k; t++)
                    NT(crow_add)(mode, xs[t], ys[t], wr[t], wi[t], i, &a, &b);
            } else {
                for (int t = 0; t < 4; t++)
                    NT(crow_add)(mode, xs[t], ys[t], wr[t], wi[t], i, &a, &b);
            }
            NT(vec) v = NT(crow_total)(mode, a, b);
            NT_ST(o + i, fr ? v : NT_LD(o + i) + v);
        }
        for (; i < n2; i += 2) {
            T vr = 0, vi = 0;
            for (int t = 0; t < k; t++) {
                T xr = xs[t][i], xi = xs[t][i + 1];
                if (mode == NT_CR_PROD) {
                    T yr = ys[t][i], yi = ys[t][i + 1];
                    vr += xr * yr - xi * yi;
                    vi += xr * yi + xi * yr;
                } else if (mode == NT_CR_SUM) {
                    vr += xr;
                    vi += xi;
                } else {
                    vr += wr[t] * xr - wi[t] * xi;
                    vi += wr[t] * xi + wi[t] * xr;
                }
            }
            o[i] = fr ? vr : o[i] + vr;
            o[i + 1] = fr ? vi : o[i + 1] + vi;
        }
    }
}

#define NT_CHELD_V 4         // the most vectors of a row held in registers

static inline __attribute__((always_inline)) NT_TGT void
NT(cinto_one_mode)(int mode, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry, const T *w,
                   ep_inc_t rw, ep_dim_t n, ep_dim_t R, T *o, int first)
{
    ep_dim_t n2 = 2 * n;
    if (n2 > NT_CHELD_V * VL) {
        NT(caxpy4_body)(mode, x, rx, y, ry, w, rw, n, R, o, first);
        return;
    }
    switch (n2 / VL) {
    case 0:
        switch (n) {
        case 1: NT(cheld_small)(mode, x, rx, y, ry, w, rw, 1, R, o, first); break;
#if VL >= 8
        case 2: NT(cheld_small)(mode, x, rx, y, ry, w, rw, 2, R, o, first); break;
        case 3: NT(cheld_small)(mode, x, rx, y, ry, w, rw, 3, R, o, first); break;
#endif
        default: NT(cheld_small)(mode, x, rx, y, ry, w, rw, (int)n, R, o, first);
        }
        break;
    case 1: NT(cheld_body)(mode, 1, x, rx, y, ry, w, rw, n, R, o, first); break;
    case 2: NT(cheld_body)(mode, 2, x, rx, y, ry, w, rw, n, R, o, first); break;
    case 3: NT(cheld_body)(mode, 3, x, rx, y, ry, w, rw, n, R, o, first); break;
    default: NT(cheld_body)(mode, 4, x, rx, y, ry, w, rw, n, R, o, first);
    }
}

NT_FN void NT(crows_into_one_mode)(int mode, const T *x, ep_inc_t rx, const T *y,
                                   ep_inc_t ry, const T *w, ep_inc_t rw, ep_dim_t n,
                                   ep_dim_t R, T *o, int first)
{
    if (mode == NT_CR_PROD)
        NT(cinto_one_mode)(NT_CR_PROD, x, rx, y, ry, w, rw, n, R, o, first);
    else if (mode == NT_CR_SCALED)
        NT(cinto_one_mode)(NT_CR_SCALED, x, rx, y, ry, w, rw, n, R, o, first);
    else
        NT(cinto_one_mode)(NT_CR_SUM, x, rx, y, ry, w, rw, n, R, o, first);
}

// Complex rows summed into one output row (the loop around the row summed,
// the row contiguous in every input and the output): one input with or
// without the input constant along the row, or two inputs without one; 0
// when none applies.
static inline __attribute__((always_inline)) NT_TGT int
NT(crows_into_one)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                   const ep_inc_t *rs, ep_dim_t R, T *o, int first, int nf,
                   const T *const *f, const ep_inc_t *fs)
{
    if (nm < 1 || nm > 2 || nf > 1 || (nm == 2 && nf) || R < 2 || s[0] != 1 ||
        (nm == 2 && s[1] != 1))
        return 0;
    int mode = nm == 2 ? NT_CR_PROD : nf ? NT_CR_SCALED : NT_CR_SUM;
    NT(crows_into_one_mode)(mode, p[0], rs[0], p[nm - 1], nm == 2 ? rs[1] : rs[0],
                            nf ? f[0] : p[0], nf ? fs[0] : 0, n, R, o, first);
    return 1;
}
#undef NT_CHELD_V
#undef NT_CR_SUM
#undef NT_CR_SCALED
#undef NT_CR_PROD
#endif

#if !CPX
// R short rows of one or two inputs (VL <= n <= 4 VL), each input at a stride
// SX, SY of 1 or 2 along the row (a [..., ::2] slice), times their scale,
// into contiguous output rows sor apart: whole vectors, then the row's last
// vector, overlapping the one before it ('abcd->acd' (880,6,2,4) adds rows
// of 8 per summed b; 'ab,ba->ab' with rows of 12 at stride 2 ran element by
// element; 'ab,cd->acdb' (47, 22) x (820, 2) f32, rows of 22 scaled, 11 ns
// a row through row_prod's set-up).  The output under the overlap is read
// before the row's stores, so the overlap gets the same sum.

static inline __attribute__((always_inline)) NT_TGT void
NT(short_vec_body)(int nm, const int SX, const int SY, const T *const *p, ep_dim_t n,
                   const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t sor, int first, int nf,
                   const T *const *f, const ep_inc_t *fs)
{
    const ep_dim_t nv = n / VL, t = n - VL;
    const int tail = n % VL != 0;
    T sc[2] = {1, 0};
    for (ep_dim_t r = 0; r < R; r++) {
        const T *x = p[0] + r * rs[0], *y = p[nm - 1] + r * rs[nm - 1];
        if (nf) NT(scale)(nf, f, fs, r, sc);
        T *d = o + r * sor;
        int fr = first && (r == 0 || sor != 0);
        NT(vec) dt = (NT(vec)){0};
        if (tail && !fr) dt = NT_LD(d + t);
        for (ep_dim_t k = 0; k < nv; k++) {
            NT(vec) v = NT(ld_row)(x, SX, k * VL, n);
            if (nm == 2) v *= NT(ld_row)(y, SY, k * VL, n);
            if (nf) v *= sc[0];
            NT_ST(d + k * VL, fr ? v : NT_LD(d + k * VL) + v);
        }
        if (tail) {
            NT(vec) v = NT(ld_row)(x, SX, t, n);
            if (nm == 2) v *= NT(ld_row)(y, SY, t, n);
            if (nf) v *= sc[0];
            NT_ST(d + t, fr ? v : dt + v);
        }
    }
}

#if VL >= 4
// R rows of W <= n < 2W contiguous elements (W half a vector, or a quarter
// of a 64-byte one) of one or two inputs, times their scale, into
// contiguous output rows sor apart: two W-wide vectors a row, the second
// ending on the row's last element (overlapping the first; the output
// under both is read before either store, as short_vec_body's).  Element
// by element, rows of 14 f32 summed over b ('abc->ac' (108,54,14)) took 7
// ns a row (0.76x numpy), in two halves 2.
typedef T NT(hvec) __attribute__((vector_size(NT_VB / 2), aligned(sizeof(T))));
#ifdef EP_NT512
typedef T NT(qvec) __attribute__((vector_size(NT_VB / 4), aligned(sizeof(T))));
#endif
#define NT_SUB_BODY(VT, W)                                                    \
    const ep_dim_t t = n - (W);                                               \
    T sc[2] = {1, 0};                                                         \
    for (ep_dim_t r = 0; r < R; r++) {                                        \
        const T *x = p[0] + r * rs[0], *y = p[nm - 1] + r * rs[nm - 1];       \
        if (nf) NT(scale)(nf, f, fs, r, sc);                                  \
        T *d = o + r * sor;                                                   \
        int fr = first && (r == 0 || sor != 0);                               \
        VT a = *(const VT *)x, b = *(const VT *)(x + t);                      \
        if (nm == 2) {                                                        \
            a *= *(const VT *)y;                                              \
            b *= *(const VT *)(y + t);                                        \
        }                                                                     \
        if (nf) {                                                             \
            a *= sc[0];                                                       \
            b *= sc[0];                                                       \
        }                                                                     \
        if (!fr) {                                                            \
            VT d0 = *(const VT *)d, d1 = *(const VT *)(d + t);                \
            a += d0;                                                          \
            b += d1;                                                          \
        }                                                                     \
        *(VT *)d = a;                                                         \
        *(VT *)(d + t) = b;                                                   \
    }

static inline __attribute__((always_inline)) NT_TGT void
NT(half_vec_body)(int nm, const T *const *p, ep_dim_t n, const ep_inc_t *rs, ep_dim_t R,
                  T *o, ep_inc_t sor, int first, int nf, const T *const *f,
                  const ep_inc_t *fs)
{
    NT_SUB_BODY(NT(hvec), VL / 2)
}

#ifdef EP_NT512
static inline __attribute__((always_inline)) NT_TGT void
NT(quarter_vec_body)(int nm, const T *const *p, ep_dim_t n, const ep_inc_t *rs, ep_dim_t R,
                     T *o, ep_inc_t sor, int first, int nf, const T *const *f,
                     const ep_inc_t *fs)
{
    NT_SUB_BODY(NT(qvec), VL / 4)
}
#endif
#undef NT_SUB_BODY

// 0 when n is shorter than the narrowest vectors
NT_FN int NT(rows_sub_vec)(int nm, const T *const *p, ep_dim_t n, const ep_inc_t *rs,
                           ep_dim_t R, T *o, ep_inc_t sor, int first, int nf,
                           const T *const *f, const ep_inc_t *fs)
{
    if (n >= VL / 2) {
        if (nm == 1) NT(half_vec_body)(1, p, n, rs, R, o, sor, first, nf, f, fs);
        else NT(half_vec_body)(2, p, n, rs, R, o, sor, first, nf, f, fs);
        return 1;
    }
#ifdef EP_NT512
    if (n >= VL / 4) {
        if (nm == 1) NT(quarter_vec_body)(1, p, n, rs, R, o, sor, first, nf, f, fs);
        else NT(quarter_vec_body)(2, p, n, rs, R, o, sor, first, nf, f, fs);
        return 1;
    }
#endif
    return 0;
}
#endif

// the strides as constants: 1 for both, or 2 for the first and 1 or 2 for
// the second (a product's inputs in either order: the row's product is the
// same); n > VL where a stride is 2
NT_FN void NT(rows_short_vec)(int nm, const T *const *p, ep_dim_t n, const ep_inc_t *rs,
                              ep_dim_t R, T *o, ep_inc_t sor, int first, int nf,
                              const T *const *f, const ep_inc_t *fs, int sx, int sy)
{
    if (nm == 1) {
        if (sx == 2) NT(short_vec_body)(1, 2, 2, p, n, rs, R, o, sor, first, nf, f, fs);
        else NT(short_vec_body)(1, 1, 1, p, n, rs, R, o, sor, first, nf, f, fs);
    } else if (sx == 1 && sy == 1) {
        NT(short_vec_body)(2, 1, 1, p, n, rs, R, o, sor, first, nf, f, fs);
    } else if (sx == 2 && sy == 2) {
        NT(short_vec_body)(2, 2, 2, p, n, rs, R, o, sor, first, nf, f, fs);
    } else {
        // one at stride 2: it goes first
        const T *q[2] = {sx == 2 ? p[0] : p[1], sx == 2 ? p[1] : p[0]};
        const ep_inc_t qs[2] = {sx == 2 ? rs[0] : rs[1], sx == 2 ? rs[1] : rs[0]};
        NT(short_vec_body)(2, 2, 1, q, n, qs, R, o, sor, first, nf, f, fs);
    }
}
#endif

// R elementwise rows: row r, times its scale, into o + r*sor (inputs rs[j]
// apart)
NT_FN void NT(rows_prod)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                         const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, ep_inc_t sor,
                         int first, int nf, const T *const *f, const ep_inc_t *fs, int seq);

#if !CPX
// One short row x (n <= 16, stride sx), the same for every row: gathered
// once, so the kernels for contiguous rows take it ('bij,bkj->bki' (7,6,1)
// F x (7,65502,1) f64, i of A at stride 7: 2.4 ns an element in rows_prod's
// plain loop, 0.3 in periods).  Its own function, so rows_prod's frame and
// its plain loop stay as they are ('iij->j' (1144,1144,3) f32: 5.3 us, 6.9
// with the buffer in rows_prod).
__attribute__((noinline)) NT_FN void
NT(rows_prod_gathered)(const T *x, ep_inc_t sx, ep_dim_t n, const ep_inc_t *rs, ep_dim_t R,
                       T *o, ep_inc_t so, ep_inc_t sor, int first, int nf,
                       const T *const *f, const ep_inc_t *fs, int seq)
{
    T row[16];
    for (ep_dim_t i = 0; i < n; i++)
        row[i] = x[i * sx];
    const T *rp = row;
    const ep_inc_t one = 1;
    NT(rows_prod)(1, &rp, &one, n, rs, R, o, so, sor, first, nf, f, fs, seq);
}
#endif

#if !CPX
// Rows of an input x at a small stride S (3 to NT_DI - 1), times an
// optional contiguous input y, into contiguous output rows: each vector of
// VL elements is S whole vectors of x, its lanes picked by S - 1
// two-source permutes (the masks made once for all rows), where the scalar
// loop waits on a load per element ('abc,cba->abc' (3,19,8862):T x
// (8862,19,3)[::-1] f32, B's rows at stride 3: 17 ns a row of 19, numpy's
// ufunc loop 6-9).  A vector is taken while its S loads end inside the row
// (its last element (n - 1) * S): the rest element by element.
static inline __attribute__((always_inline)) NT_TGT void
NT(picked_rows)(const int S, int nm, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
                ep_dim_t n, ep_dim_t R, T *o, ep_inc_t sor, int first, int nf,
                const T *const *f, const ep_inc_t *fs, NT(ivec) *m)
{
    T sc[2] = {1, 0};
    for (ep_dim_t r = 0; r < R; r++) {
        const T *a = x + r * rx, *b = nm == 2 ? y + r * ry : 0;
        T *d = o + r * sor;
        if (nf) NT(scale)(nf, f, fs, r, sc);
        const T c = sc[0];
        const NT(vec) cv = c - (NT(vec)){0};
        const int fr = first && (r == 0 || sor != 0);
        ep_dim_t i = 0;
        for (; i + VL < n; i += VL) {
            NT(vec) u[NT_DI];
#pragma GCC unroll 8
            for (int k = 0; k < S; k++) u[k] = NT_LD(a + i * S + k * VL);
            NT(vec) t = NT(pick)(u, S, m);
            NT(vec) v = nm == 2 ? cv * (t * NT_LD(b + i)) : cv * t;
            NT_ST(d + i, fr ? v : NT_LD(d + i) + v);
        }
        for (; i < n; i++) {
            T v = nm == 2 ? c * (a[i * S] * b[i]) : c * a[i * S];
            d[i] = fr ? v : d[i] + v;
        }
    }
}

__attribute__((noinline)) NT_FN void
NT(rows_prod_picked)(int S, int nm, const T *x, ep_inc_t rx, const T *y, ep_inc_t ry,
                     ep_dim_t n, ep_dim_t R, T *o, ep_inc_t sor, int first, int nf,
                     const T *const *f, const ep_inc_t *fs)
{
    // the row's elements are row 0 of S rows end to end
    NT(ivec) m[NT_DI];
    NT(pick_masks)(S, 0, m);
    switch (S) {   // S a constant in each: x's vectors stay in registers
    case 3: NT(picked_rows)(3, nm, x, rx, y, ry, n, R, o, sor, first, nf, f, fs, m); break;
    case 4: NT(picked_rows)(4, nm, x, rx, y, ry, n, R, o, sor, first, nf, f, fs, m); break;
    case 5: NT(picked_rows)(5, nm, x, rx, y, ry, n, R, o, sor, first, nf, f, fs, m); break;
    case 6: NT(picked_rows)(6, nm, x, rx, y, ry, n, R, o, sor, first, nf, f, fs, m); break;
    default: NT(picked_rows)(7, nm, x, rx, y, ry, n, R, o, sor, first, nf, f, fs, m);
    }
}
#endif

NT_FN void NT(rows_prod)(int nm, const T *const *p, const ep_inc_t *s, ep_dim_t n,
                         const ep_inc_t *rs, ep_dim_t R, T *o, ep_inc_t so, ep_inc_t sor,
                         int first, int nf, const T *const *f, const ep_inc_t *fs, int seq)
{
    const T *q[EP_NEST_MAXIN];
    T sc[2] = {1, 0};
    if (nm == 1 && nf == 0 && s[0] == 1 && so == 1 && first && sor != 0 &&
        (size_t)n * (1 + CPX) * sizeof(T) <= NT_COPY_ROW_BYTES) {
        // rows only moved ('abcd->abc' of a reversed view: rows of 28 f32
        // 0.7-0.85x numpy through row_prod's set-up per row): a memmove each
        for (ep_dim_t r = 0; r < R; r++)
            memmove(o + (1 + CPX) * r * sor, p[0] + (1 + CPX) * r * rs[0],
                    (size_t)n * (1 + CPX) * sizeof(T));
        return;
    }
#if !CPX
    if (sor == 0 && so == 1 &&
        NT(rows_into_one)(nm, p, s, n, rs, R, o, first, nf, f, fs, seq))
        return;
#else
    (void)seq;
    if (sor == 0 && so == 1 && NT(crows_into_one)(nm, p, s, n, rs, R, o, first, nf, f, fs))
        return;
#endif
#if !CPX
    if (nm == 1 && rs[0] == 0 && s[0] != 1 && n <= 16 && R >= 2 * VL) {
        NT(rows_prod_gathered)(p[0], s[0], n, rs, R, o, so, sor, first, nf, f, fs, seq);
        return;
    }
    if (VL * sizeof(T) == 64 && so == 1 && nm >= 1 && nm <= 2 && n > VL) {
        // one input at a small stride (the other contiguous): its lanes
        // picked by permutes from whole vectors (64-byte vectors: one
        // two-source permute takes any lanes of two)
        int j = s[0] >= 3 && s[0] < NT_DI ? 0 : nm == 2 && s[1] >= 3 && s[1] < NT_DI ? 1 : -1;
        if (j >= 0 && (nm == 1 || s[1 - j] == 1)) {
            NT(rows_prod_picked)((int)s[j], nm, p[j], rs[j], nm == 2 ? p[1 - j] : p[j],
                                 nm == 2 ? rs[1 - j] : 0, n, R, o, sor, first, nf, f, fs);
            return;
        }
    }
    if (nm == 1 && nf == 1 && so == 1 && sor == (ep_inc_t)n && rs[0] == 0 && s[0] == 1 &&
        n <= 16 && n % VL && R >= 2 * VL && NT(period_vectors)(n) <= NT_PERIOD_V) {
        NT(rows_period_prod)(p[0], f[0], fs[0], n, R, o, first);
        return;
    }
    if (n <= 4 * VL && n >= VL && nm >= 1 && nm <= 2 && so == 1 &&
        (s[0] == 1 || (s[0] == 2 && n > VL)) &&
        (s[nm - 1] == 1 || (s[nm - 1] == 2 && n > VL))) {
        NT(rows_short_vec)(nm, p, n, rs, R, o, sor, first, nf, f, fs, (int)s[0],
                           (int)s[nm - 1]);
        return;
    }
#if VL >= 4
    if (n < VL && nm >= 1 && nm <= 2 && so == 1 && s[0] == 1 && s[nm - 1] == 1 &&
        NT(rows_sub_vec)(nm, p, n, rs, R, o, sor, first, nf, f, fs))
        return;
#endif
#endif
    if (n <= 16 && nm <= 2) {
        // short rows (an axpy of 2-16 elements, 'ij,jk->ik' with k = 4,
        // 'i,ij->ij' with j = 12: 0.55-0.73x numpy through row_prod's
        // set-up per row, 0.89-1.13x here):
        // a plain loop per row, none of row_prod's set-up.  The scale is
        // taken into scalars: read back from sc[], the complex one's two
        // halves loaded as one 8-byte word stalled on the two 4-byte stores
        // that made it ('abc,ba->bc' (57,1291,6) c64: 12 ns a row of 6)
        for (ep_dim_t r = 0; r < R; r++) {
            const T *x = nm > 0 ? p[0] + (1 + CPX) * r * rs[0] : 0;
            const T *y = nm > 1 ? p[1] + (1 + CPX) * r * rs[1] : 0;
            ep_inc_t sx = nm > 0 ? (1 + CPX) * s[0] : 0, sy = nm > 1 ? (1 + CPX) * s[1] : 0;
            T s0 = 1, s1 = 0;
            if (nf) {
                T t2[2];
                NT(scale)(nf, f, fs, r, t2);
                s0 = t2[0];
                s1 = t2[1];
            }
            (void)s1;
            T *d = o + (1 + CPX) * r * sor;
            int fr = first && (r == 0 || sor != 0);
            for (ep_dim_t i = 0; i < n; i++) {
#if CPX
                T vr = s0, vi = s1, t;
                if (nm > 0) {
                    t = vr * x[i * sx] - vi * x[i * sx + 1];
                    vi = vr * x[i * sx + 1] + vi * x[i * sx]; vr = t;
                }
                if (nm > 1) {
                    t = vr * y[i * sy] - vi * y[i * sy + 1];
                    vi = vr * y[i * sy + 1] + vi * y[i * sy]; vr = t;
                }
                T *e = d + 2 * i * so;
                if (fr) { e[0] = vr; e[1] = vi; }
                else { e[0] += vr; e[1] += vi; }
#else
                T v = nm == 2 ? s0 * (x[i * sx] * y[i * sy]) : nm == 1 ? s0 * x[i * sx] : s0;
                d[i * so] = fr ? v : d[i * so] + v;
#endif
            }
        }
        return;
    }
    for (ep_dim_t r = 0; r < R; r++) {
        for (int j = 0; j < nm; j++) q[j] = p[j] + (1 + CPX) * r * rs[j];
        if (nf) NT(scale)(nf, f, fs, r, sc);
        NT(row_prod)(nm, q, s, n, o + (1 + CPX) * r * sor, so, sc,
                     first && (r == 0 || sor != 0));
    }
}

#include "ep_nest_short_template.h"
#include "ep_nest_ctile_template.h"

#undef NT_FN
#undef NT_PAIR_SWAP
#undef NT_PAIR_RE
#undef NT_PAIR_IM
#undef NT_REV
#undef NT_SW8
#undef NT_SW4
#undef NT_SW2
#undef NT_SW1
#undef NT_SEQ_N
#undef NT_EVEN
#undef NT_EVEN_LAST
#undef NT_ODD
#undef NT_ODDREV
#undef NT_PODDREV
#undef NT_PREV
#undef NT_PEVEN
#undef NT_CH
#undef NT_SV
#undef NT_PERIOD_N
#undef NT_PERIOD_MIN
#undef NT_PLD
#undef NT_SMALL
#undef NT_HELD
#undef NT_AXPY4
#undef NT_AXPY_SEQ
#undef NT_PERIOD_V
#undef NT_DOTV_BYTES
#undef NT_CDOTV_MAX
#undef NT_PK
#undef NT_PK2
#undef NT_TRANSPOSE
#undef NT_VB
#undef NT_LD
#undef NT_ST
#undef NB
#undef NT_SHARED_MAX
#undef NT
#undef NT_REAL
#undef NT_HALVES
#undef NT_WHOLE8
#undef NT_LDW
#undef NT_DI
#undef T
#undef IT
#undef CPX
#undef VL
#undef NT_TGT
#undef NT_FMA
