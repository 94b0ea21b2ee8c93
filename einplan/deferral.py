"""Calls einplan hands to numpy's own function, and why.

numpy.einsum / matmul / dot ... honour ``__array_function__`` (a dask array
stays lazy, a CuPy array stays on its device) and ndarray subclasses (an
``np.matrix`` stays a matrix, a ``MaskedArray`` keeps its mask and a masked
dot skips the masked data).  einplan's kernels read plain memory, so such
operands go to numpy's function, which dispatches them as numpy would.  So
do dtypes the front ends do not compute (datetime / timedelta in dot,
tensordot, inner, vdot) and matmul forms einsum cannot express (``dtype=``, a
tuple ``out=``, an ``out=`` with more broadcast dimensions).

Every deferral is counted in ``counts`` (reason -> calls) and named by
``explain`` as a whole-call fallback.
"""
from __future__ import annotations

import threading
from collections import Counter

import numpy as np

counts: Counter = Counter()
_lock = threading.Lock()
_ndarray = np.ndarray


def protocol_reason(args) -> str | None:
    """Why these arguments must go to numpy's function, or None."""
    for x in args:
        cls = x.__class__
        if cls is _ndarray or cls is str or cls is list or cls is tuple or x is None:
            continue
        if isinstance(x, _ndarray):
            return f"{cls.__name__} is an ndarray subclass: numpy's function keeps its semantics"
        if hasattr(cls, "__array_function__") and not isinstance(x, np.generic):
            return f"{cls.__name__} implements __array_function__: numpy dispatches it"
    return None


def time_dtype_reason(args) -> str | None:
    for x in args:
        kind = getattr(getattr(x, "dtype", None), "kind", "")
        if kind in ("m", "M"):
            return f"dtype {x.dtype}: numpy's own loop"
    return None


def defer(reason, function, *args, **kwargs):
    """Count the deferral, then ``function(*args, **kwargs)`` (numpy's)."""
    with _lock:
        counts[reason.split(":")[0]] += 1
    return function(*args, **kwargs)
