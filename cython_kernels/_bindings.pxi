# _bindings.pxi -- the C core's entry points (ep_api.h), each checking its
# arguments before C runs (part of einplan._kernels, see _kernels.pyx).

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


cdef int _reach_ok(cnp.ndarray x, int64_t lo, int64_t hi) except -1:
    """Fast check at each call: elements lo..hi from x's data pointer lie in
    the memory x's own shape and strides reach (all in C, no Python ints)."""
    cdef int d, nd = cnp.PyArray_NDIM(x)
    cdef int64_t item = cnp.PyArray_ITEMSIZE(x), xlo = 0, xhi = 0, span
    cdef cnp.npy_intp *shape = cnp.PyArray_DIMS(x)
    cdef cnp.npy_intp *strides = cnp.PyArray_STRIDES(x)
    if cnp.PyArray_SIZE(x) == 0:
        raise ValueError("an operand is empty but the descriptor reads it")
    for d in range(nd):
        if __builtin_mul_overflow(<int64_t>(shape[d] - 1), <int64_t>strides[d], &span):
            raise ValueError("an operand's strides overflow int64")
        if span < 0:
            xlo += span
        else:
            xhi += span
    # lo, hi were bounded by 2**62 / item at construction: no overflow here
    if lo * item < xlo or hi * item > xhi:
        raise ValueError(
            f"the descriptor reaches elements {lo}..{hi} from an operand's data pointer, "
            f"outside the array ({xlo // item}..{xhi // item})")
    return 0


cdef void _double_strides(ep_group_t *grp, int nops):
    cdef int i, j
    for i in range(grp.ndim):
        for j in range(nops):
            # an extent-1 axis is never stepped: its stride may be anything
            grp.stride[j][i] = 2 * grp.stride[j][i] if grp.extent[i] > 1 else 0


cdef int _as_1m(ep_groups_t *g) except -1:
    """Complex groups (strides in complex elements, already checked) -> the
    real groups of the 1m GEMM (ep_api.h): strides doubled, n and k each
    get an inner (re, im) axis -- stride 1 in C and A, 0 in B (its packing
    reads both parts of the element)."""
    _double_strides(&g.m, 2)
    _double_strides(&g.n, 2)
    _double_strides(&g.k, 2)
    _double_strides(&g.batch, 3)
    if g.n.ndim >= EP_MAXDIM or g.k.ndim >= EP_MAXDIM:
        raise ValueError(f"a complex GEMM's n and k groups take at most {EP_MAXDIM - 1} axes")
    g.n.extent[g.n.ndim] = 2
    g.n.stride[EP_N_B][g.n.ndim] = 0
    g.n.stride[EP_N_C][g.n.ndim] = 1
    g.n.ndim += 1
    g.k.extent[g.k.ndim] = 2
    g.k.stride[EP_K_A][g.k.ndim] = 1
    g.k.stride[EP_K_B][g.k.ndim] = 0
    g.k.ndim += 1
    return 0


cdef extern from *:
    bint __builtin_mul_overflow(int64_t a, int64_t b, int64_t *res) nogil


cdef inline bint _of_type(cnp.ndarray x, int type_num):
    """x holds native-byte-order elements of type_num (the kernels load
    machine words: a byte-swapped float64 has float64's type number too)."""
    return cnp.PyArray_TYPE(x) == type_num and cnp.PyArray_ISNOTSWAPPED(x)


_B_WAYS = {EP_B_PACKED: "packed", EP_B_IN_PLACE: "in place", -1: "measuring"}


cdef object _schedule_dict(const ep_schedule_t *s, int dtype):
    """An ep_schedule_t as a dict, its enums by their C names (ep_api.h).
    ``direct_b``: B's full panels are read in place by a call made now;
    ``b_measured``: None when the schedule fixes that, else the way the
    process measured faster for calls of its kind ('in place', 'packed') or
    'measuring' while it still times both."""
    cdef int now = ep_b_way_now(s, dtype)
    return dict(path=("empty", "gemm", "gemv", "smm")[<int>s.path], threads=s.nthreads,
                loop=("none", "batch", "m", "n", "k")[<int>s.loop],
                mr=s.bk.mr, nr=s.bk.nr, mc=s.bk.mc, kc=s.bk.kc, nc=s.bk.nc,
                direct_b=now == EP_B_IN_PLACE,
                b_measured=_B_WAYS[now] if s.direct_b == EP_B_MEASURED else None,
                b_by_panel=bool(s.b_by_panel), M=s.M, N=s.N, K=s.K, NB=s.NB,
                for_threads=s.for_threads)


cdef class GemmCall:
    """One GEMM descriptor, validated once (extents, overflow, strides) and
    then run many times on arrays of the planned dtype and layout: the plan
    cache keeps these, so a call only checks dtypes, bounds and writeability
    in C before the kernel runs.  See einplan/_native.py for the contract."""
    cdef ep_groups_t groups
    cdef ep_gemm_desc_t d
    cdef ep_schedule_t sched       # made once, when the plan is made (d.sched)
    cdef ep_schedule_t sched_packed    # the same with B prepacked (with_packed_b)
    cdef int64_t lo[3]
    cdef int64_t hi[3]
    cdef int type_num
    cdef bint reads_ab, writes_c
    cdef readonly object dtype
    cdef readonly int64_t M, N, K, NB

    def __init__(self, dtype, m, n, k, batch, bint conj_a=False, bint conj_b=False):
        self.dtype = np.dtype(dtype)
        if self.dtype == np.float64 or self.dtype == np.complex128:
            self.d.dtype = EP_FLOAT64
        elif self.dtype == np.float32 or self.dtype == np.complex64:
            self.d.dtype = EP_FLOAT32
        else:
            raise TypeError(f"the packed kernels take float32, float64, complex64 or "
                            f"complex128, not {self.dtype}")
        if (conj_a or conj_b) and self.dtype.kind != "c":
            raise ValueError("conj_a / conj_b need a complex dtype")
        self.type_num = self.dtype.num
        _fill_group(&self.groups.m, m, 2, "m")
        _fill_group(&self.groups.n, n, 2, "n")
        _fill_group(&self.groups.k, k, 2, "k")
        _fill_group(&self.groups.batch, batch, 3, "batch")
        self.M = _group_size(&self.groups.m, "m")
        self.N = _group_size(&self.groups.n, "n")
        self.K = _group_size(&self.groups.k, "k")
        self.NB = _group_size(&self.groups.batch, "batch")
        # stride-0 operands stay in bounds at any extent: bound the work itself
        if int(self.M) * int(self.N) * max(int(self.K), 1) * int(self.NB) >= 2 ** 63:
            raise ValueError(f"the GEMM's total size (m {self.M} x n {self.N} x k {self.K} x "
                             f"batch {self.NB}) overflows int64")
        _check_span(&self.groups.m, 0, "m"); _check_span(&self.groups.m, 1, "m")
        _check_span(&self.groups.n, 0, "n"); _check_span(&self.groups.n, 1, "n")
        _check_span(&self.groups.k, 0, "k"); _check_span(&self.groups.k, 1, "k")
        _check_span(&self.groups.batch, 0, "batch"); _check_span(&self.groups.batch, 1, "batch")
        _check_span(&self.groups.batch, 2, "batch")
        reach = (_reach(&self.groups.k, 0, _reach(&self.groups.m, 0, _reach(&self.groups.batch, 0, (0, 0)))),
                 _reach(&self.groups.n, 0, _reach(&self.groups.k, 1, _reach(&self.groups.batch, 1, (0, 0)))),
                 _reach(&self.groups.n, 1, _reach(&self.groups.m, 1, _reach(&self.groups.batch, 2, (0, 0)))))
        item = self.dtype.itemsize
        for i in range(3):
            lo, hi = reach[i]
            # no real buffer spans 2**62 bytes: such offsets come from a
            # corrupt as_strided view, and pointer arithmetic would wrap
            if -lo * item >= 2 ** 62 or hi * item >= 2 ** 62:
                raise ValueError(f"operand {'ABC'[i]}: the descriptor reaches elements {lo}..{hi}, "
                                 "beyond any buffer")
            self.lo[i] = lo
            self.hi[i] = hi
        self.writes_c = self.M > 0 and self.N > 0 and self.NB > 0
        self.reads_ab = self.writes_c and self.K > 0
        self.d.b_packed = NULL
        self.d.g = &self.groups
        if self.dtype.kind == "c":
            _as_1m(&self.groups)
            self.d.cplx = (EP_CPLX_1M | (EP_CPLX_CONJ_A if conj_a else 0)
                           | (EP_CPLX_CONJ_B if conj_b else 0))
        # the schedule for the thread count in effect now; ep_gemm runs it
        # on every call that asks for the same count (else it schedules again)
        self.d.nthreads = 0
        ep_gemm_schedule(&self.d, &self.sched)
        self.d.b_packed = <void *>1        # only tested for NULL
        ep_gemm_schedule(&self.d, &self.sched_packed)
        self.d.b_packed = NULL
        self.d.sched = &self.sched

    cdef int _check(self, cnp.ndarray A, object B, cnp.ndarray C) except -1:
        if (not _of_type(A, self.type_num) or not _of_type(C, self.type_num)
                or (B is not None and not _of_type(<cnp.ndarray>B, self.type_num))):
            raise TypeError(f"A, B and C must be {self.dtype} arrays in native byte "
                            f"order, got {A.dtype}, {getattr(B, 'dtype', 'prepacked')}, "
                            f"{C.dtype}")
        if (not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISALIGNED(C)
                or (B is not None and not cnp.PyArray_ISALIGNED(<cnp.ndarray>B))):
            # a misaligned element load is undefined behaviour in C
            raise ValueError("A, B and C must be aligned to their itemsize")
        if not cnp.PyArray_ISWRITEABLE(C):
            raise ValueError("output array C is read-only")
        if self.reads_ab:
            _reach_ok(A, self.lo[0], self.hi[0])
            if B is not None:
                _reach_ok(<cnp.ndarray>B, self.lo[1], self.hi[1])
        if self.writes_c:
            _reach_ok(C, self.lo[2], self.hi[2])
        return 0

    cdef int _run(self, ep_gemm_desc_t *d, int nthreads) except -1:
        cdef ep_status_t st
        d.nthreads = nthreads
        with nogil:
            st = ep_gemm(d)
        if st == EP_ERR_NOMEM:
            raise MemoryError("einplan: could not allocate packing buffers")
        if st != EP_OK:
            raise ValueError("einplan: invalid GEMM descriptor")
        return 0

    def __call__(self, cnp.ndarray A not None, cnp.ndarray B not None, cnp.ndarray C not None,
                 double alpha=1.0, double beta=0.0, int nthreads=0):
        """C = alpha * A.B + beta * C for this descriptor; returns C."""
        cdef ep_gemm_desc_t d = self.d
        d.alpha = alpha
        d.beta = beta
        self._check(A, B, C)
        d.a = cnp.PyArray_DATA(A)
        d.b = cnp.PyArray_DATA(B)
        d.c = cnp.PyArray_DATA(C)
        self._run(&d, nthreads)
        return C

    def run(self, cnp.ndarray A not None, cnp.ndarray B not None, cnp.ndarray C not None):
        """C = A.B (alpha 1, beta 0): the hot path of a cached plan."""
        cdef ep_gemm_desc_t d = self.d
        d.alpha = 1.0
        d.beta = 0.0
        self._check(A, B, C)
        d.a = cnp.PyArray_DATA(A)
        d.b = cnp.PyArray_DATA(B)
        d.c = cnp.PyArray_DATA(C)
        self._run(&d, 0)
        return C

    def with_packed_b(self, cnp.ndarray A not None, PackedB B not None, cnp.ndarray C not None,
                      double alpha=1.0, double beta=0.0, int nthreads=0):
        """The same GEMM with B given as a PackedB made for this descriptor."""
        cdef ep_gemm_desc_t d = self.d
        d.alpha = alpha
        d.beta = beta
        if B.signature != self.signature():
            raise ValueError("this packed operand was packed for another layout, dtype or "
                             "kernel set; pack it again")
        self._check(A, None, C)
        d.a = cnp.PyArray_DATA(A)
        d.b = NULL
        d.b_packed = cnp.PyArray_DATA(B.buffer)
        d.sched = &self.sched_packed
        d.c = cnp.PyArray_DATA(C)
        self._run(&d, nthreads)
        return C

    def schedule(self, int nthreads=0, bint b_prepacked=False):
        """What ep_gemm will do with this descriptor (the very decision it
        runs): path ('gemm', 'gemv', 'smm', 'empty'), threads, the loop they
        share out ('none', 'batch', 'm', 'n', 'k'), effective blocking, and whether
        B is read in place."""
        cdef ep_gemm_desc_t d = self.d
        cdef ep_schedule_t s
        d.nthreads = nthreads
        d.b_packed = <void *>1 if b_prepacked else NULL   # only tested for NULL
        ep_gemm_schedule(&d, &s)
        return _schedule_dict(&s, d.dtype)

    def call_schedule(self, int nthreads=0, bint b_prepacked=False):
        """The schedule ep_gemm runs for a call asking for ``nthreads``
        (0: the library's setting), on a prepacked B (``with_packed_b``) or
        not, and whether it is the one made with the descriptor."""
        cdef ep_gemm_desc_t d = self.d
        cdef ep_schedule_t now
        d.nthreads = nthreads
        if b_prepacked:
            d.b_packed = <void *>1             # only tested for NULL
            d.sched = &self.sched_packed
        cdef const ep_schedule_t *s = ep_call_schedule(&d, &now)
        return _schedule_dict(s, d.dtype), s == d.sched

    def planned(self):
        """The schedule made with the descriptor (``schedule()`` for the
        thread count then in effect), which ep_gemm runs on every call that
        asks for that thread count; ``for_threads`` is that count."""
        return _schedule_dict(&self.sched, self.d.dtype)

    def signature(self):
        """What a prepacked B depends on: dtype, kernel set, blocking, k/n/batch extents."""
        return (self.dtype.str, isa(), tuple(blocking(self.dtype).values()),
                int(self.K), int(self.N), int(self.NB))

    def pack_b(self, cnp.ndarray B not None):
        """Pack B once into the kernel's panel format (a PackedB that holds no
        reference to B)."""
        cdef ep_gemm_desc_t d = self.d
        cdef ep_status_t st
        if not _of_type(B, self.type_num):
            raise TypeError(f"B must be a {self.dtype} array, got {B.dtype}")
        if not cnp.PyArray_ISALIGNED(B):
            raise ValueError("B must be aligned to its itemsize")
        if self.reads_ab:
            _reach_ok(B, self.lo[1], self.hi[1])
        cdef int64_t elems = ep_packed_b_size(&d)
        item = self.dtype.itemsize
        raw = np.empty(elems * item + 64, dtype=np.uint8)
        off = (-raw.ctypes.data) % 64              # 64-byte aligned panels
        buf = raw[off:off + elems * item]
        d.b = cnp.PyArray_DATA(B)
        cdef void *pbuf = cnp.PyArray_DATA(buf)
        with nogil:
            st = ep_pack_b_all(&d, pbuf)
        if st == EP_ERR_NOMEM:
            raise MemoryError("einplan: could not allocate packing scratch")
        return PackedB(buf, self.signature(), B.nbytes)


cdef class PackedB:
    """B in the micro-kernel's panel format, packed once (opaque)."""
    cdef readonly cnp.ndarray buffer
    cdef readonly object signature
    cdef readonly int64_t original_nbytes

    def __init__(self, cnp.ndarray buffer, signature, int64_t original_nbytes):
        self.buffer = buffer
        self.signature = signature
        self.original_nbytes = original_nbytes

    @property
    def nbytes(self):
        return self.buffer.nbytes

    def __repr__(self):
        return (f"<PackedB {self.buffer.nbytes} bytes (original {self.original_nbytes}) "
                f"for {self.signature}>")


def gemm(cnp.ndarray A not None, cnp.ndarray B not None, cnp.ndarray C not None, m, n, k, batch,
         double alpha=1.0, double beta=0.0, int nthreads=0):
    """C[batch,m,n] = alpha * A[batch,m,k] B[batch,k,n] + beta * C over role
    groups, in one go (see einplan/_native.py for the contract)."""
    if A.dtype.kind != "c":
        _dtype_code(A)
    if B.dtype != A.dtype or C.dtype != A.dtype:
        raise TypeError(f"A, B and C must share one dtype, got {A.dtype}, {B.dtype}, {C.dtype}")
    return GemmCall(A.dtype, m, n, k, batch)(A, B, C, alpha, beta, nthreads)


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


def probe_ukr_gflops(str isa, dtype, int reps=100, double seconds=0.02):
    """Best GFLOP/s of one core running `isa`'s micro-kernel for dtype on
    panels in L1: runs of `reps` calls timed in C, repeated for `seconds`
    (the machine model's peak measurement)."""
    cdef int code = _isa_code(isa)
    cdef ep_dtype_t dt = EP_FLOAT32 if np.dtype(dtype) == np.float32 else EP_FLOAT64
    cdef double rate
    if not ep_isa_supported(code):
        raise ValueError(f"ISA {isa!r} is not supported by this CPU")
    with nogil:
        rate = ep_probe_ukr_gflops(code, dt, reps, seconds)
    if rate <= 0:
        raise MemoryError("no memory for the probe's panels")
    return rate


def blocking(dtype):
    """dict(mr, nr, mc, kc, nc) for dtype with the ISA in use."""
    cdef ep_blocking_t bk = ep_blocking(EP_FLOAT32 if np.dtype(dtype) == np.float32 else EP_FLOAT64)
    return dict(mr=bk.mr, nr=bk.nr, mc=bk.mc, kc=bk.kc, nc=bk.nc)


def cache_sizes():
    """Bytes of L1d, L2 and the L3 the kernels count on (at most 16 MiB per
    online CPU), and the L3 the system reports (l3_reported)."""
    cdef ep_dim_t l1, l2, l3, r1, r2, r3
    ep_cache_sizes(&l1, &l2, &l3)
    ep_cache_sizes_reported(&r1, &r2, &r3)
    return dict(l1d=l1, l2=l2, l3=l3, l3_reported=r3)


def set_num_threads(n):
    """Threads for the kernels: an integer >= 1; above max_threads() it is
    capped there with a RuntimeWarning."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"number of threads must be >= 1, got {n}")
    if n > ep_max_threads():
        warnings.warn(f"einplan caps the number of threads at {ep_max_threads()} "
                      f"(asked for {n})", RuntimeWarning, stacklevel=3)
        n = ep_max_threads()
    ep_set_num_threads(n)


def max_threads():
    return ep_max_threads()


def in_forked_child():
    """True in a forked child that runs single-threaded: the OpenMP runtime's
    threads could not be released before the fork (see ep_threads.c)."""
    return bool(ep_in_forked_child())


def get_num_threads():
    return ep_get_num_threads()


def config():
    """Everything show_config() prints, as a dict."""
    return dict(isa=isa(), available_isas=available_isas(),
                tiles={isa_: {"float32": tile(isa_, np.float32), "float64": tile(isa_, np.float64)}
                       for isa_ in available_isas()},
                blocking={"float32": blocking(np.float32), "float64": blocking(np.float64)},
                caches=cache_sizes(), threads=get_num_threads(), build=dict(BUILD_INFO))


def permute_copy(cnp.ndarray src not None, cnp.ndarray dst not None, *, int nthreads=0,
                 stream=None):
    """dst[...] = src, same shape and dtype, any strides (a permuted view of
    src copies into dst's layout): a cache-blocked copy in C.  Both arrays'
    own shapes and strides bound every access.  For tests: `nthreads` > 0
    forces that many threads whatever the size, `stream` True / False forces
    non-temporal stores on / off (None: when dst is half the L3 or more)."""
    cdef int nd = cnp.PyArray_NDIM(src), x
    cdef int64_t item = cnp.PyArray_ITEMSIZE(src)
    cdef ep_dim_t ext[64]
    cdef ep_inc_t ss[64]
    cdef ep_inc_t ds[64]
    cdef ep_status_t st
    cdef ep_copy_opts_t opt
    sshape, dshape = (<object>src).shape, (<object>dst).shape
    if src.dtype != dst.dtype or sshape != dshape:
        raise ValueError(f"permute_copy needs equal shapes and dtypes, got {sshape} "
                         f"{src.dtype} and {dshape} {dst.dtype}")
    if src.dtype.hasobject or item not in (1, 2, 4, 8, 16):
        raise TypeError(f"permute_copy cannot copy {src.dtype}")
    if not cnp.PyArray_ISWRITEABLE(dst):
        raise ValueError("output array is read-only")
    if nd > 64:
        raise ValueError("permute_copy handles at most 64 axes")
    for x in range(nd):
        if cnp.PyArray_STRIDES(src)[x] % item or cnp.PyArray_STRIDES(dst)[x] % item:
            raise ValueError("strides must be whole elements")
        ext[x] = cnp.PyArray_DIMS(src)[x]
        ss[x] = cnp.PyArray_STRIDES(src)[x] // item
        ds[x] = cnp.PyArray_STRIDES(dst)[x] // item
    opt.nthreads = nthreads
    opt.stream = -1 if stream is None else (1 if stream else 0)
    cdef const void *ps = cnp.PyArray_DATA(src)
    cdef void *pd = cnp.PyArray_DATA(dst)
    with nogil:
        st = ep_copy_ex(nd, ext, ss, ds, <int>item, ps, pd, &opt)
    if st != EP_OK:
        raise ValueError("einplan: invalid copy")
    return dst


def copy_schedule(shape, src_strides, dst_strides, int itemsize, *, int nthreads=0,
                  stream=None):
    """What permute_copy does with this shape and these strides (in
    elements), the very decision it runs: kind ('empty', 'run', 'tile',
    'interleave', 'transpose'), ISA, threads, non-temporal stores, rows
    (interleave: src rows zipped; transpose: the tile edge), axes left after
    merging."""
    cdef ep_dim_t ext[64]
    cdef ep_inc_t ss[64]
    cdef ep_inc_t ds[64]
    cdef ep_copy_opts_t opt
    cdef ep_copy_schedule_t sc
    cdef int nd = len(shape), x
    if nd > 64 or len(src_strides) != nd or len(dst_strides) != nd:
        raise ValueError("copy_schedule needs at most 64 axes and a stride for each")
    if itemsize not in (1, 2, 4, 8, 16):
        raise ValueError(f"copy_schedule cannot copy {itemsize}-byte elements")
    for x in range(nd):
        ext[x] = shape[x]
        ss[x] = src_strides[x]
        ds[x] = dst_strides[x]
    opt.nthreads = nthreads
    opt.stream = -1 if stream is None else (1 if stream else 0)
    ep_copy_schedule(nd, ext, ss, ds, itemsize, &opt, &sc)
    return dict(kind=("empty", "run", "tile", "interleave", "transpose")[<int>sc.kind],
                isa=ISA_NAMES[sc.isa], threads=sc.nthreads, stream=bool(sc.stream),
                rows=sc.rows, ndim=sc.ndim)
