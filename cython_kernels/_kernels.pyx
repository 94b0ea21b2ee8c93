# cython: language_level=3, boundscheck=False, wraparound=False
"""einplan._kernels -- the Python-visible entry points of the C core.

Everything is checked here, before C runs: dtypes, extents (>= 0, products
that fit in int64), and that every offset a descriptor can form lies inside
the memory its array can reach.  A bad descriptor is a ValueError, a failed
allocation a MemoryError -- never a crash.  The GIL is released while C runs.
Imported by einplan/_native.py only.
"""
import operator

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, INT64_MAX
from libc.string cimport memset
from kernels cimport *

cnp.import_array()

ISA_NAMES = ("generic", "avx2", "avx512")
BUILD_INFO = {"openmp": bool(ep_have_openmp())}


cdef ep_dtype_t _dtype_code(cnp.ndarray x) except *:
    if x.dtype == np.float64:
        return EP_FLOAT64
    if x.dtype == np.float32:
        return EP_FLOAT32
    raise TypeError(f"the packed kernels take float32 or float64, not {x.dtype}")


cdef int _fill_group(ep_group_t *g, object axes, int nops, str role) except -1:
    """axes: ((extent, stride_op0, ...), ...) -> g; checks counts and extents."""
    cdef int i, j
    cdef int64_t e
    axes = tuple(axes)
    if len(axes) > EP_MAXDIM:
        raise ValueError(f"group {role} has {len(axes)} axes, more than {EP_MAXDIM}")
    memset(g, 0, sizeof(ep_group_t))
    g.ndim = len(axes)
    for i in range(g.ndim):
        ax = axes[i]
        if len(ax) != nops + 1:
            raise ValueError(f"group {role}: axis {i} needs an extent and {nops} strides, got {ax!r}")
        try:
            # integers only (numpy ints too): a float is a TypeError, never truncated
            ax = tuple(operator.index(v) for v in ax)
            e = ax[0]
            if e < 0:
                raise ValueError(f"group {role}: axis {i} has negative extent {e}")
            g.extent[i] = e
            for j in range(nops):
                g.stride[j][i] = ax[j + 1]
        except OverflowError:
            raise ValueError(f"group {role}: axis {i} {ax!r} does not fit in int64") from None
    return 0


cdef int64_t _group_size(ep_group_t *g, str role) except -1:
    cdef int64_t n = 1
    cdef int i
    for i in range(g.ndim):
        if g.extent[i] != 0 and n > INT64_MAX // g.extent[i]:
            raise ValueError(f"group {role}: the product of its extents overflows int64")
        n *= g.extent[i]
    return n


cdef object _reach(ep_group_t *g, int op, object lohi):
    """Add the lowest and highest offsets group g can form in operand op
    (Python ints: sums of many large spans cannot wrap)."""
    cdef int i
    lo, hi = lohi
    for i in range(g.ndim):
        span = (g.extent[i] - 1) * g.stride[op][i]
        if span < 0:
            lo += span
        else:
            hi += span
    return lo, hi


cdef int _check_bounds(cnp.ndarray x, str name, object lohi) except -1:
    """Offsets lo..hi (elements from x's data pointer) must be memory x reaches."""
    cdef int d
    lo, hi = lohi
    item, xlo, xhi = x.itemsize, 0, 0
    if x.size == 0:
        raise ValueError(f"operand {name} is empty but the descriptor reads it")
    for d in range(x.ndim):
        span = (x.shape[d] - 1) * x.strides[d]
        if span < 0:
            xlo += span
        else:
            xhi += span
    # no real buffer spans 2**62 bytes: such offsets come from a corrupt
    # as_strided view, and pointer arithmetic on them would wrap
    if lo * item < xlo or hi * item > xhi or -lo * item >= 2 ** 62 or hi * item >= 2 ** 62:
        raise ValueError(
            f"operand {name}: the descriptor reaches elements {lo}..{hi} from its data pointer, "
            f"outside the array ({xlo // item}..{xhi // item})")
    return 0


cdef int _check_span(ep_group_t *g, int op, str role) except -1:
    cdef int i
    cdef int64_t s
    for i in range(g.ndim):
        s = g.stride[op][i]
        if s != 0 and g.extent[i] > 1 and abs(s) > INT64_MAX // (g.extent[i] - 1):
            raise ValueError(f"group {role}: extent x stride overflows int64")
    return 0


def gemm(cnp.ndarray A not None, cnp.ndarray B not None, cnp.ndarray C not None, m, n, k, batch,
         double alpha=1.0, double beta=0.0, int nthreads=0):
    """C[batch,m,n] = alpha * A[batch,m,k] B[batch,k,n] + beta * C over role
    groups (see einplan/_native.py for the contract)."""
    cdef ep_gemm_desc_t d
    cdef ep_status_t st
    cdef int64_t M, N, K, NB
    d.dtype = _dtype_code(A)
    if B.dtype != A.dtype or C.dtype != A.dtype:
        raise TypeError(f"A, B and C must share one dtype, got {A.dtype}, {B.dtype}, {C.dtype}")
    if not C.flags.writeable:
        raise ValueError("output array C is read-only")
    _fill_group(&d.m, m, 2, "m")
    _fill_group(&d.n, n, 2, "n")
    _fill_group(&d.k, k, 2, "k")
    _fill_group(&d.batch, batch, 3, "batch")
    M = _group_size(&d.m, "m")
    N = _group_size(&d.n, "n")
    K = _group_size(&d.k, "k")
    NB = _group_size(&d.batch, "batch")
    # stride-0 operands stay in bounds at any extent: bound the work itself
    if int(M) * int(N) * max(int(K), 1) * int(NB) >= 2 ** 63:
        raise ValueError(f"the GEMM's total size (m {M} x n {N} x k {K} x batch {NB}) overflows int64")
    _check_span(&d.m, 0, "m"); _check_span(&d.m, 1, "m")
    _check_span(&d.n, 0, "n"); _check_span(&d.n, 1, "n")
    _check_span(&d.k, 0, "k"); _check_span(&d.k, 1, "k")
    _check_span(&d.batch, 0, "batch"); _check_span(&d.batch, 1, "batch")
    _check_span(&d.batch, 2, "batch")
    if M > 0 and N > 0 and NB > 0:
        if K > 0:
            _check_bounds(A, "A", _reach(&d.k, 0, _reach(&d.m, 0, _reach(&d.batch, 0, (0, 0)))))
            _check_bounds(B, "B", _reach(&d.n, 0, _reach(&d.k, 1, _reach(&d.batch, 1, (0, 0)))))
        _check_bounds(C, "C", _reach(&d.n, 1, _reach(&d.m, 1, _reach(&d.batch, 2, (0, 0)))))
    d.a = cnp.PyArray_DATA(A)
    d.b = cnp.PyArray_DATA(B)
    d.c = cnp.PyArray_DATA(C)
    d.alpha = alpha
    d.beta = beta
    d.nthreads = nthreads
    with nogil:
        st = ep_gemm(&d)
    if st == EP_ERR_NOMEM:
        raise MemoryError("einplan: could not allocate packing buffers")
    if st != EP_OK:
        raise ValueError("einplan: invalid GEMM descriptor")
    return C


def ukr(str isa, cnp.ndarray a not None, cnp.ndarray b not None, cnp.ndarray c not None, int64_t k,
        int64_t rs_c, int64_t cs_c, double alpha=1.0, double beta=0.0):
    """Run one micro-kernel of `isa` on packed panels (test twin of the C
    call).  a: k*MR values, b: k*NR values, both C-contiguous and 64-byte
    aligned; c: MR x NR tile reached through (rs_c, cs_c) from c's data."""
    cdef int code = _isa_code(isa)
    cdef ep_dtype_t dt = _dtype_code(a)
    cdef int mr, nr
    if not ep_isa_supported(code):
        raise ValueError(f"ISA {isa!r} is not supported by this CPU")
    ep_isa_tile(code, dt, &mr, &nr)
    if b.dtype != a.dtype or c.dtype != a.dtype:
        raise TypeError("a, b and c must share one dtype")
    for x, nm, need in ((a, "a", k * mr), (b, "b", k * nr)):
        if not x.flags.c_contiguous or x.size < need or (<size_t>cnp.PyArray_DATA(x)) % 64:
            raise ValueError(f"{nm} must be C-contiguous, 64-byte aligned, >= {need} elements")
    spans = ((mr - 1) * rs_c, (nr - 1) * cs_c)
    _check_bounds(c, "c", (sum(s for s in spans if s < 0), sum(s for s in spans if s > 0)))
    if not c.flags.writeable:
        raise ValueError("c is read-only")
    cdef const void *pa = cnp.PyArray_DATA(a)
    cdef const void *pb = cnp.PyArray_DATA(b)
    cdef void *pc = cnp.PyArray_DATA(c)
    with nogil:
        ep_run_ukr(code, dt, k, pa, pb, pc, rs_c, cs_c, alpha, beta)
    return c


cdef int _isa_code(str name) except -1:
    if name not in ISA_NAMES:
        raise ValueError(f"unknown ISA {name!r}; choose from {ISA_NAMES}")
    return ISA_NAMES.index(name)


def isa():
    """The micro-kernel set in use: "avx512", "avx2" or "generic"."""
    return ep_isa_name(ep_isa()).decode()


def available_isas():
    """The kernel sets this CPU and OS can run, best last."""
    return tuple(n for i, n in enumerate(ISA_NAMES) if ep_isa_supported(i))


def set_isa(str name):
    """Use a kernel set this CPU supports (like EINPLAN_ISA, at run time)."""
    if ep_set_isa(_isa_code(name)) != 0:
        raise ValueError(f"ISA {name!r} is not supported by this CPU")


def tile(str isa, dtype):
    """(MR, NR) of `isa`'s micro-kernel for dtype."""
    cdef int mr, nr
    cdef ep_dtype_t dt = EP_FLOAT32 if np.dtype(dtype) == np.float32 else EP_FLOAT64
    ep_isa_tile(_isa_code(isa), dt, &mr, &nr)
    return mr, nr


def blocking(dtype):
    """dict(mr, nr, mc, kc, nc) for dtype with the ISA in use."""
    cdef ep_blocking_t bk = ep_blocking(EP_FLOAT32 if np.dtype(dtype) == np.float32 else EP_FLOAT64)
    return dict(mr=bk.mr, nr=bk.nr, mc=bk.mc, kc=bk.kc, nc=bk.nc)


def cache_sizes():
    cdef ep_dim_t l1, l2, l3
    ep_cache_sizes(&l1, &l2, &l3)
    return dict(l1d=l1, l2=l2, l3=l3)


def set_num_threads(n):
    n = operator.index(n)
    if not 1 <= n <= 2 ** 31 - 1:
        raise ValueError(f"number of threads must be between 1 and 2**31-1, got {n}")
    ep_set_num_threads(n)


def get_num_threads():
    return ep_get_num_threads()


def config():
    """Everything show_config() prints, as a dict."""
    return dict(isa=isa(), available_isas=available_isas(),
                tiles={isa_: {"float32": tile(isa_, np.float32), "float64": tile(isa_, np.float64)}
                       for isa_ in available_isas()},
                blocking={"float32": blocking(np.float32), "float64": blocking(np.float64)},
                caches=cache_sizes(), threads=get_num_threads(), build=dict(BUILD_INFO))
