# The loop-nest engine's entry points (included by _kernels.pyx): a
# descriptor validated once (NestCall), run per call after checking dtypes,
# bounds and writeability in C; NestRunner is a whole einsum call on it
# (allocate the output, run) for the hot path of a cached plan.

cdef extern from "ep_nest.h" nogil:
    enum: EP_NEST_MAXIN
    ctypedef struct ep_nest_desc_t:
        int dtype
        int nin
        int ndim
        ep_dim_t extent[EP_MAXDIM]
        ep_inc_t stride[9][EP_MAXDIM]
        int split
        int nthreads
        int tile
        int tile_row
        int transposed
        ep_dim_t block
        int block_outer
        int short_loop
        int across
        int conj
        int isa
        const void *in_ "in"[8]
        void *out
    ep_status_t ep_nest(const ep_nest_desc_t *d)
    ep_status_t ep_nest_run(const ep_nest_desc_t *d, const void **ins, void *out, int isa)
    int ep_nest_threads(const ep_nest_desc_t *d)
    int ep_nest_row_isa(const ep_nest_desc_t *d, int isa)
    int ep_nest_streams(const ep_nest_desc_t *d, int isa)
    int ep_nest_stream_loads(const ep_nest_desc_t *d, int isa)
    int ep_stream_report(int kind, double *gbs_one, double *gbs_four)
    int ep_load_report(int kind, double *gbs_whole, double *gbs_halves)

# A nest of fewer element visits runs holding the GIL: releasing and taking it
# back costs about what such a call computes.
cdef enum:
    NEST_NOGIL_VISITS = 16384

cdef extern from "numpy/arrayobject.h":
    object PyArray_Scalar(void *data, cnp.dtype descr, PyObject *base)

_NEST_DTYPES = {"float32": 0, "float64": 1, "complex64": 2, "complex128": 3}


cdef class NestCall:
    """out = sum over the loops of prod(inputs): ``loops`` outer to inner,
    each (extent, stride_in0, ..., stride_out) in elements (see ep_nest.h)."""
    cdef ep_nest_desc_t d
    cdef int64_t lo[9]
    cdef int64_t hi[9]
    cdef int64_t off[9]
    cdef readonly int type_num, nin
    cdef readonly object dtype
    cdef bint empty, small

    def __init__(self, dtype, int nin, loops, int split, int nthreads, int tile,
                 int64_t block=0, int short_loop=0, int tile_row=0, bint conj=False,
                 offsets=None, bint transposed=False, bint block_outer=False, int across=0):
        cdef int i, j
        self.dtype = np.dtype(dtype)
        if self.dtype.name not in _NEST_DTYPES:
            raise TypeError(f"the loop-nest engine takes float32/64 or complex64/128, not {self.dtype}")
        if not 0 < nin <= EP_NEST_MAXIN:
            raise ValueError(f"a nest takes 1..{EP_NEST_MAXIN} inputs, got {nin}")
        loops = tuple(loops)
        if len(loops) > EP_MAXDIM:
            raise ValueError(f"a nest has at most {EP_MAXDIM} loops")
        memset(&self.d, 0, sizeof(ep_nest_desc_t))
        self.d.dtype = _NEST_DTYPES[self.dtype.name]
        self.type_num = self.dtype.num
        self.nin = nin
        self.d.nin = nin
        self.d.ndim = len(loops)
        self.d.split = split if -1 <= split < len(loops) else -1
        self.d.nthreads = max(nthreads, 1)
        self.d.tile = max(tile, 0)
        self.d.tile_row = max(tile_row, 0)
        self.d.transposed = transposed
        self.d.block = max(block, 0)
        self.d.block_outer = block_outer
        self.d.short_loop = short_loop
        self.d.across = max(across, 0)
        self.d.conj = conj
        self.d.isa = -1
        lo = [0] * (nin + 1)
        hi = [0] * (nin + 1)
        total = 1
        self.empty = False
        for i, lp in enumerate(loops):
            lp = tuple(operator.index(v) for v in lp)
            if len(lp) != nin + 2:
                raise ValueError(f"loop {i} needs an extent and {nin + 1} strides, got {lp!r}")
            if lp[0] < 0:
                raise ValueError(f"loop {i} has negative extent {lp[0]}")
            self.empty |= lp[0] == 0
            total *= lp[0]
            if total >= 2 ** 62 or any(abs(v) >= 2 ** 62 for v in lp):
                raise ValueError("the nest's total size overflows int64")
            self.d.extent[i] = lp[0]
            for j in range(nin + 1):
                span = (lp[0] - 1) * lp[j + 1] if lp[0] > 0 else 0
                if span < 0:
                    lo[j] += span
                else:
                    hi[j] += span
                self.d.stride[j][i] = lp[j + 1]
        if total >= 2 ** 62:
            raise ValueError("the nest's total size overflows int64")
        self.small = total * nin < NEST_NOGIL_VISITS
        item = self.dtype.itemsize
        # each operand's first element, in elements from its array's data
        # pointer (a loop walked in the opposite direction starts at its end)
        offsets = tuple(operator.index(v) for v in offsets) if offsets else (0,) * (nin + 1)
        if len(offsets) != nin + 1:
            raise ValueError(f"the nest needs {nin + 1} offsets, got {len(offsets)}")
        for j in range(nin + 1):
            if abs(offsets[j]) >= 2 ** 61:
                raise ValueError(f"operand {j}: offset {offsets[j]} beyond any buffer")
            self.off[j] = offsets[j]
            lo[j] += offsets[j]
            hi[j] += offsets[j]
        for j in range(nin + 1):
            if -lo[j] * item >= 2 ** 62 or hi[j] * item >= 2 ** 62:
                raise ValueError(f"operand {j}: the nest reaches elements {lo[j]}..{hi[j]}, "
                                 "beyond any buffer")
            self.lo[j] = lo[j]
            self.hi[j] = hi[j]

    cdef int _run(self, tuple ins, cnp.ndarray out, int isa) except -1:
        if len(ins) != self.nin:
            raise ValueError(f"the nest takes {self.nin} inputs, got {len(ins)}")
        if cnp.PyArray_TYPE(out) != self.type_num:
            raise TypeError(f"the output must be {self.dtype}, got {out.dtype}")
        if not cnp.PyArray_ISWRITEABLE(out):
            raise ValueError("output array is read-only")
        if self.empty:
            return 0
        _reach_ok(out, self.lo[self.nin], self.hi[self.nin])
        return self._run_into(ins, <char *>cnp.PyArray_DATA(out)
                              + self.off[self.nin] * cnp.PyArray_ITEMSIZE(out), isa)

    cdef int _run_into(self, tuple ins, void *optr, int isa) except -1:
        """Run on ``ins`` into ``optr``, the output's first element, which
        the caller has checked (or owns, as a 0-d result's scalar)."""
        cdef const void *ptrs[8]
        cdef cnp.ndarray x
        cdef int j
        cdef ep_status_t st
        for j in range(self.nin):
            x = ins[j]
            if cnp.PyArray_TYPE(x) != self.type_num:
                raise TypeError(f"inputs must be {self.dtype}, got {x.dtype}")
            _reach_ok(x, self.lo[j], self.hi[j])
            ptrs[j] = <char *>cnp.PyArray_DATA(x) + self.off[j] * cnp.PyArray_ITEMSIZE(x)
        if self.small:
            st = ep_nest_run(&self.d, ptrs, optr, isa)
        else:
            with nogil:
                st = ep_nest_run(&self.d, ptrs, optr, isa)
        if st == EP_ERR_NOMEM:
            raise MemoryError("einplan: no memory for the nest's copy buffers")
        if st != EP_OK:
            raise ValueError("einplan: invalid nest descriptor")
        return 0

    def __call__(self, tuple ins, cnp.ndarray out not None, isa=None):
        """Run the nest on these arrays (``isa``: a kernel set to force, for tests)."""
        cdef int code = -1
        if isa is not None:
            code = _isa_code(isa)
            if not ep_isa_supported(code):
                raise ValueError(f"ISA {isa!r} is not supported by this CPU")
        self._run(ins, out, code)
        return out

    def threads(self):
        """The threads a call runs with now (the plan's cap, the library's setting)."""
        return ep_nest_threads(&self.d)

    def row_isa(self):
        """The kernel set whose row kernels a call runs with now."""
        return ISA_NAMES[ep_nest_row_isa(&self.d, -1)]

    def streams(self):
        """Whether its row sums stream an operand from memory (one past half
        of L3): the kind of rows, whose order stream_order(kind) reports
        ('sums', 'long sums', 'dots', 'long dots', 'into one', 'strided'),
        'complex' for
        complex dot rows always read one after another, None not."""
        return _STREAM_KINDS[ep_nest_streams(&self.d, -1)]

    def stream_loads(self):
        """Whether it is one contiguous row whose loads (whole vectors or
        halves) are measured: 'products' (past L2), 'sums' (past L3), the
        kinds load_width reports; None not."""
        return _LOAD_KINDS[ep_nest_stream_loads(&self.d, -1)]


_STREAM_STATES = {0: "four", 1: "one", 2: "measuring"}
_STREAM_KINDS = (None, "sums", "long sums", "dots", "long dots", "into one", "strided",
                 "complex")


def stream_order(kind):
    """(order, GB/s one row at a time, GB/s four rows at a time) of the row
    kernels of ``kind`` (NestCall.streams(): 'sums', 'long sums', 'dots',
    'long dots', 'into one', 'strided') when they stream an operand from memory: 'one' or
    'four' once measured (or fixed by EINPLAN_STREAM_ROWS), 'measuring'
    before; the rates measured so far."""
    if kind not in _STREAM_KINDS[1:7]:
        raise ValueError(f"no measured stream order for rows of kind {kind!r}")
    cdef double one = 0, four = 0
    cdef int st = ep_stream_report(_STREAM_KINDS.index(kind), &one, &four)
    return _STREAM_STATES.get(st, "measuring"), one, four


_LOAD_STATES = {0: "whole", 1: "halves"}
_LOAD_KINDS = (None, "products", "sums")


def load_width(kind="products"):
    """(way, GB/s whole, GB/s in halves) of the contiguous rows of ``kind``
    ('products' past L2 or 'sums' past L3) on 64-byte vectors: 'whole' or
    'halves' (each vector loaded as two 32-byte halves) once measured (or
    fixed by EINPLAN_STREAM_LOADS), 'measuring' before; the rates measured
    so far."""
    cdef double whole = 0, halves = 0
    cdef int st = ep_load_report(_LOAD_KINDS.index(kind), &whole, &halves)
    return _LOAD_STATES.get(st, "measuring"), whole, halves


cdef class NestRunner:
    """A whole einsum call that is one nest into a fresh output: allocate
    (``mem_shape``, transposed by ``perm``), run, return (a scalar for a 0-d
    result).  The hot-path key has already matched the operands' layouts."""
    cdef NestCall call
    cdef int out_nd
    cdef cnp.npy_intp out_dims[64]
    cdef object perm, idx
    cdef bint scalar, into_slot

    def __init__(self, NestCall call not None, idx, mem_shape, perm, bint scalar):
        self.call = call
        self.idx = tuple(idx)
        self.out_nd = len(mem_shape)
        if self.out_nd > 64:
            raise ValueError("at most 64 output axes")
        for j in range(self.out_nd):
            self.out_dims[j] = mem_shape[j]
        self.perm = perm
        self.scalar = scalar
        cdef int o = call.nin
        self.into_slot = (scalar and self.out_nd == 0 and not call.empty
                          and call.lo[o] == 0 and call.hi[o] == 0 and call.off[o] == 0)

    def __call__(self, operands):
        return self._go(operands)

    cdef object _go(self, operands):
        # a 0-d result is summed into the runner's own slot and returned as
        # numpy's scalar, with no array allocated and indexed for it
        cdef double slot[2]
        if self.into_slot:
            self.call._run_into(tuple([operands[i] for i in self.idx]), slot, -1)
            return PyArray_Scalar(slot, self.call.dtype, NULL)
        out = cnp.PyArray_EMPTY(self.out_nd, self.out_dims, self.call.type_num, 0)
        ins = tuple([operands[i] for i in self.idx])
        self.call._run(ins, <cnp.ndarray>out, -1)
        if self.perm is not None:
            out = out.transpose(self.perm)
        if self.scalar:
            return out[()]
        return out


cdef class NestPlanRunner(NestRunner):
    """A NestRunner for reusable plan objects, called with the operands
    themselves: they are compared with the planned shapes, strides and dtype
    first (then the descriptor's reach holds), all in C -- a plan call's
    budget is a microsecond.  Returns None when an operand does not match, so
    the caller takes the general path (and its error messages)."""
    cdef int nops
    cdef int nd[8]
    cdef cnp.npy_intp dims[8][64]
    cdef cnp.npy_intp strides[8][64]

    def __init__(self, NestCall call not None, idx, mem_shape, perm, bint scalar, templates):
        cdef int i, j
        NestRunner.__init__(self, call, idx, mem_shape, perm, scalar)
        if len(templates) > 8 or any(len(shape) > 64 for shape, _ in templates):
            raise ValueError("NestPlanRunner handles at most 8 operands of 64 axes")
        self.nops = len(templates)
        for i, (shape, strides) in enumerate(templates):
            self.nd[i] = len(shape)
            for j in range(len(shape)):
                self.dims[i][j] = shape[j]
                self.strides[i][j] = strides[j]

    def __call__(self, *args):
        cdef int i, j
        cdef cnp.ndarray x
        if len(args) != self.nops:
            return None
        for i in range(self.nops):
            if type(args[i]) is not np.ndarray:
                return None
            x = <cnp.ndarray>args[i]
            if (not _of_type(x, self.call.type_num) or cnp.PyArray_NDIM(x) != self.nd[i]
                    or not cnp.PyArray_ISALIGNED(x)):
                return None
            for j in range(self.nd[i]):
                if (cnp.PyArray_DIMS(x)[j] != self.dims[i][j]
                        or cnp.PyArray_STRIDES(x)[j] != self.strides[i][j]):
                    return None
        return self._go(args)
