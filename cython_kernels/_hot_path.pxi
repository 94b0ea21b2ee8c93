# _hot_path.pxi -- what einsum's per-call path runs in C (part of
# einplan._kernels, see _kernels.pyx): a whole one-GEMM plan call
# (PlanRunner), the call key, the out= overlap check, operand views.

cdef class PlanRunner:
    """A whole plan call in C for the common case -- one real GEMM from
    ``nops`` operands into a fresh output -- for reusable plan objects, whose
    per-call budget is a microsecond: operands are compared with the planned
    shapes, strides and dtype (then the descriptor's bounds hold), the output
    is allocated, the kernel runs.  Returns None when an operand does not
    match, so the caller takes the general path (and its error messages)."""
    cdef GemmCall call
    cdef int nops, a_idx, b_idx, type_num, out_nd, scalar
    cdef int nd[8]
    cdef cnp.npy_intp dims[8][64]
    cdef cnp.npy_intp strides[8][64]
    cdef cnp.npy_intp out_dims[64]
    cdef object perm

    def __init__(self, GemmCall call not None, templates, int a_idx, int b_idx, out_shape, perm,
                 bint scalar):
        cdef int i, j
        if len(templates) > 8 or len(out_shape) > 64:
            raise ValueError("PlanRunner handles at most 8 operands and 64 output axes")
        self.call = call
        self.nops = len(templates)
        self.a_idx, self.b_idx = a_idx, b_idx
        self.type_num = call.type_num
        for i, (shape, strides) in enumerate(templates):
            self.nd[i] = len(shape)
            for j in range(len(shape)):
                self.dims[i][j] = shape[j]
                self.strides[i][j] = strides[j]
        self.out_nd = len(out_shape)
        for j in range(self.out_nd):
            self.out_dims[j] = out_shape[j]
        self.perm = perm
        self.scalar = scalar

    def __call__(self, *args):
        cdef int i, j
        cdef cnp.ndarray x
        cdef ep_gemm_desc_t d
        cdef ep_status_t st
        if len(args) != self.nops:
            return None
        for i in range(self.nops):
            if type(args[i]) is not np.ndarray:
                return None
            x = <cnp.ndarray>args[i]
            if (not _of_type(x, self.type_num) or cnp.PyArray_NDIM(x) != self.nd[i]
                    or not cnp.PyArray_ISALIGNED(x)):
                return None
            for j in range(self.nd[i]):
                if (cnp.PyArray_DIMS(x)[j] != self.dims[i][j]
                        or cnp.PyArray_STRIDES(x)[j] != self.strides[i][j]):
                    return None
        C = cnp.PyArray_EMPTY(self.out_nd, self.out_dims, self.type_num, 0)
        if self.perm is not None:
            C = C.transpose(self.perm)
        d = self.call.d
        d.alpha = 1.0
        d.beta = 0.0
        d.nthreads = 0
        d.a = cnp.PyArray_DATA(<cnp.ndarray>args[self.a_idx])
        d.b = cnp.PyArray_DATA(<cnp.ndarray>args[self.b_idx])
        d.c = cnp.PyArray_DATA(<cnp.ndarray>C)
        with nogil:
            st = ep_gemm(&d)
        if st != EP_OK:
            raise MemoryError("einplan: could not allocate packing buffers")
        if self.scalar:
            return C[()]
        return C


# einplan.einsum looks a call up by (subscripts, shapes, strides, dtypes,
# flags) before anything else.  Built in Python that key cost ~0.65 us for
# two operands (~0.95 us with out=) -- a third of a small call -- so it is
# one bytes object written here straight from the array structs.

cdef enum:
    _KEY_MAX = 1024       # int64 words; longer keys (many operands) -> None
    _NPY_HALF = 23

cdef extern from "numpy/arrayobject.h":
    bint PyArray_CheckExact(object op)

cdef extern from "Python.h":
    object PyBytes_FromStringAndSize(const char *v, Py_ssize_t n)


cdef inline bint _plain_type(int t):
    # builtin numbers, bool and object: type number, byte order and size say
    # all; datetimes (units), structured, string and user dtypes do not
    return t <= cnp.NPY_CLONGDOUBLE or t == cnp.NPY_OBJECT or t == _NPY_HALF


cdef inline Py_ssize_t _put_array(int64_t *buf, Py_ssize_t n, object op, bint writeable):
    """Append op's description at buf[n:]; the new length, or -1 (no key)."""
    cdef cnp.ndarray x = <cnp.ndarray>op
    cdef int d, nd = cnp.PyArray_NDIM(x)
    cdef int t = cnp.PyArray_TYPE(x)
    cdef int flags = cnp.PyArray_FLAGS(x)
    if not _plain_type(t) or n + 4 + 2 * nd > _KEY_MAX:
        return -1
    buf[n] = nd
    buf[n + 1] = t
    buf[n + 2] = (<int64_t>cnp.PyArray_ISNOTSWAPPED(x) << 32) | <int64_t>cnp.PyArray_ITEMSIZE(x)
    buf[n + 3] = ((flags & cnp.NPY_ARRAY_ALIGNED) != 0) | (
        ((flags & cnp.NPY_ARRAY_WRITEABLE) != 0) << 1 if writeable else 0)
    n += 4
    for d in range(nd):
        buf[n + d] = cnp.PyArray_DIMS(x)[d]
        buf[n + nd + d] = cnp.PyArray_STRIDES(x)[d]
    return n + 2 * nd


def call_key(tuple operands, out):
    """The hot-path key of ``einsum(subscripts, *arrays, out=out)``:
    ``(subscripts, bytes)``, or None when the call does not qualify (not a
    string spec, an operand or out= not exactly an ndarray, an unusual dtype)."""
    cdef int64_t buf[_KEY_MAX]
    cdef Py_ssize_t i, n = 0, nops = len(operands)
    if nops == 0 or type(operands[0]) is not str:
        return None
    for i in range(1, nops):
        op = operands[i]
        if not PyArray_CheckExact(op):
            return None
        n = _put_array(buf, n, op, False)
        if n < 0:
            return None
    if out is not None:
        # out='s writeable flag is part of the key: a read-only out= must
        # reach the check that rejects it
        if not PyArray_CheckExact(out) or n + 1 > _KEY_MAX:
            return None
        buf[n] = -1
        n = _put_array(buf, n + 1, out, True)
        if n < 0:
            return None
    return (operands[0], PyBytes_FromStringAndSize(<char *>buf, n * 8))


cdef inline void _byte_bounds(cnp.ndarray x, Py_ssize_t *lo, Py_ssize_t *hi):
    cdef int d
    cdef Py_ssize_t s, e
    cdef char *p = <char *>cnp.PyArray_DATA(x)
    lo[0] = <Py_ssize_t>p
    hi[0] = <Py_ssize_t>p + cnp.PyArray_ITEMSIZE(x)
    for d in range(cnp.PyArray_NDIM(x)):
        e = cnp.PyArray_DIMS(x)[d]
        if e == 0:
            hi[0] = lo[0]
            return
        s = (e - 1) * cnp.PyArray_STRIDES(x)[d]
        if s < 0:
            lo[0] += s
        else:
            hi[0] += s


def may_overlap(cnp.ndarray a not None, cnp.ndarray b not None):
    """numpy.may_share_memory(a, b) (memory bounds intersect), without its
    Python-level overhead: the hot path asks it for out= against each operand."""
    cdef Py_ssize_t alo, ahi, blo, bhi
    _byte_bounds(a, &alo, &ahi)
    _byte_bounds(b, &blo, &bhi)
    return alo < ahi and blo < bhi and alo < bhi and blo < ahi


from cpython.ref cimport Py_INCREF, PyObject, PyTypeObject

cdef extern from "numpy/arrayobject.h":
    PyTypeObject PyArray_Type
    object PyArray_NewFromDescr(PyTypeObject *subtype, void *descr, int nd,
                                cnp.npy_intp *dims, cnp.npy_intp *strides, void *data,
                                int flags, PyObject *obj)


def operand_view(cnp.ndarray src not None, shape, strides):
    """A view of ``src`` from its data pointer with these shape and byte
    strides (a diagonal 'ii->i', a permutation 'ij->ji'), as numpy.einsum
    returns it: its base is src's (views collapse to the owner), writeable
    exactly when src is.  The caller's shape and strides stay inside src."""
    cdef int nd = len(shape), j
    cdef cnp.npy_intp dims[64]
    cdef cnp.npy_intp st[64]
    if nd > 64 or len(strides) != nd:
        raise ValueError("operand_view takes at most 64 axes and a stride for each")
    for j in range(nd):
        dims[j] = shape[j]
        st[j] = strides[j]
    descr = src.dtype
    Py_INCREF(descr)   # PyArray_NewFromDescr steals it
    cdef int flags = cnp.NPY_ARRAY_WRITEABLE if cnp.PyArray_ISWRITEABLE(src) else 0
    view = PyArray_NewFromDescr(&PyArray_Type, <void *>descr, nd, dims, st,
                                cnp.PyArray_DATA(src), flags, NULL)
    cnp.set_array_base(<cnp.ndarray>view, src)
    return view
