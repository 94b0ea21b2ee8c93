"""A switch for a whole program: numpy's contraction functions routed to einplan.

    einplan.patch_numpy()        numpy.einsum, tensordot, inner, outer, vdot,
                                 dot and matmul now run einplan's
    einplan.restore_numpy()      the original function objects are back
    with einplan.patched(): ...  the same for a block (nests; see below)

Only the module attributes are replaced, so a call reaches einplan when it is
looked up at call time (``np.einsum(...)``, ``numpy.dot(...)``).  Not routed:
the ``@`` operator and ``ndarray.dot`` (they call numpy's C code directly,
never the module attribute), names bound before the patch
(``from numpy import einsum`` at import), and numpy's own internals (numpy
calls its C functions, not the ``numpy`` attributes).

Calls einplan does not take go to the original numpy function, counted in
``fallback_counts()``: operands that are not plain ndarrays or Python / numpy
scalars or lists (np.matrix, MaskedArray, memmap and other subclasses, objects
with ``__array_function__`` / ``__array_ufunc__`` such as dask or cupy
arrays), object arrays, an ``out=`` that is not a plain ndarray, and keyword
arguments einplan's function does not have (matmul's ``dtype=``, ``axes=``,
``where=``, ...).  Calls numpy makes while einplan runs (einplan's own
fallbacks to numpy.einsum) go straight to numpy and are not counted here:
explain names them.

``numpy.matmul`` is a ufunc; while patched it is a ``RoutedUfunc`` that calls
einplan and forwards every attribute (``signature``, ``types``, ``nin``, ...)
to the ufunc, but it is not the ufunc object: code that tests
``ufunc is np.matmul`` inside ``__array_ufunc__`` sees False while patched
(such objects go to the original ufunc, so they receive the real one), and
``isinstance(np.matmul, np.ufunc)`` is False.  numpy's own modules call the C
functions they import, never these attributes, so numpy is unaffected.

Nesting and threads: ``patched()`` blocks count up and down; numpy is patched
while ``patch_numpy()`` is in force or any ``patched()`` block is open, in any
thread (the module attributes are process-wide).  ``restore_numpy()`` ends
``patch_numpy()``'s hold; open ``patched()`` blocks keep theirs.
"""
from __future__ import annotations

import contextlib
import threading
from collections import Counter

import numpy as np

from . import api as _api
from . import frontends as _frontends

__all__ = ["patch_numpy", "restore_numpy", "patched", "is_patched", "fallback_counts",
           "reset_fallback_counts", "original", "ROUTED"]

ROUTED = ("einsum", "tensordot", "inner", "outer", "vdot", "dot", "matmul")

_lock = threading.RLock()
_originals: dict = {}       # name -> numpy's function object, taken at the first patch
_routed: dict = {}          # name -> the routing function installed in numpy
_global_hold = False        # patch_numpy() in force
_block_holds = 0            # open patched() blocks
_fallbacks: Counter = Counter()
_ndarray = np.ndarray
# classes passed to einplan as they are (einplan converts them as numpy does)
_PLAIN = frozenset((_ndarray, str, list, tuple, int, float, complex, bool, type(None),
                    type(Ellipsis)))


class _Busy(threading.local):
    # True while this thread runs einplan: numpy calls made meanwhile (einplan's
    # own fallbacks) go to numpy itself, never back into einplan
    on = False


_busy = _Busy()


def original(name: str):
    """numpy's own function ``name`` (the one patch_numpy replaces), patched or not."""
    with _lock:
        fn = _originals.get(name)
    return fn if fn is not None else getattr(np, name)


def fallback_counts() -> dict:
    """{(function, reason): calls} sent to numpy's own function while patched."""
    with _lock:
        return dict(_fallbacks)


def reset_fallback_counts() -> None:
    with _lock:
        _fallbacks.clear()


def _unsupported(args) -> str | None:
    """Why einplan does not take these operands, or None."""
    for x in args:
        cls = x.__class__
        if cls is _ndarray:
            if x.dtype.hasobject:
                return "object array"
        elif cls not in _PLAIN and not isinstance(x, np.generic):
            return f"operand of type {cls.__module__}.{cls.__qualname__}"
        elif cls is np.object_:
            return "object scalar"
    return None


def _out_unsupported(out) -> str | None:
    if out is None or out.__class__ is _ndarray:
        return None
    return f"out= of type {type(out).__qualname__}"


def _to_numpy(name, reason, args, kwargs):
    with _lock:
        _fallbacks[(name, reason)] += 1
    fn = _originals[name]
    rec = _api._recorder
    if rec is not None:
        return rec.numpy_call(name, reason, fn, args, kwargs)
    return fn(*args, **kwargs)


def _run(fn, args, kwargs, name):
    """Call einplan's ``fn`` with the busy flag set (and the origin named for a profile)."""
    _busy.on = True
    try:
        rec = _api._recorder
        if rec is not None:
            with rec.origin(f"numpy.{name}"):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    finally:
        _busy.on = False


_EINSUM_KW = frozenset(("out", "dtype", "order", "casting", "optimize"))


def _einsum(*operands, **kwargs):
    if _busy.on:
        return _originals["einsum"](*operands, **kwargs)
    why = _unsupported(operands)
    if why is None and kwargs:
        if not _EINSUM_KW.issuperset(kwargs):
            why = f"keyword {sorted(set(kwargs) - _EINSUM_KW)[0]}="
        else:
            why = _out_unsupported(kwargs.get("out"))
    if why is not None:
        return _to_numpy("einsum", why, operands, kwargs)
    return _run(_api.einsum, operands, kwargs, "einsum")


def _two_operand(name, einplan_fn, keywords):
    """The routing function for numpy.<name>(a, b, ...): einplan's ``einplan_fn``
    when the operands and keywords are ones it takes."""
    keywords = frozenset(keywords)

    def routed(*args, **kwargs):
        if _busy.on:
            return _originals[name](*args, **kwargs)
        why = _unsupported(args[:2])
        if why is None and kwargs:
            if not keywords.issuperset(kwargs):
                why = f"keyword {sorted(set(kwargs) - keywords)[0]}="
            else:
                why = _out_unsupported(kwargs.get("out"))
        if why is None and len(args) > 2 and "out" in keywords:
            why = _out_unsupported(args[2])
        if why is not None:
            return _to_numpy(name, why, args, kwargs)
        return _run(einplan_fn, args, kwargs, name)
    return routed


class RoutedUfunc:
    """numpy.matmul while patched: calls go to einplan.matmul (or the ufunc, see
    the module docstring); every attribute is the ufunc's."""

    def __init__(self, ufunc, call):
        self._ufunc = ufunc
        self._call = call
        self.__doc__ = ufunc.__doc__
        self.__wrapped__ = ufunc
        # pickled by reference as numpy.<name>, like the ufunc (dask graphs, ...)
        self.__name__ = self.__qualname__ = ufunc.__name__
        self.__module__ = "numpy"

    def __reduce__(self):
        return self.__name__

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._ufunc, attr)

    def __repr__(self):
        return f"<einplan-routed {self._ufunc!r}>"


def _make_routed(name, orig):
    if name == "einsum":
        fn = _einsum
    elif name == "matmul":
        return RoutedUfunc(orig, _two_operand("matmul", _frontends.matmul, ("out",)))
    else:
        keywords = {"tensordot": ("axes",), "dot": ("out",), "outer": ("out",)}.get(name, ())
        fn = _two_operand(name, getattr(_frontends, name), keywords)
    fn.__name__ = orig.__name__
    fn.__qualname__ = getattr(orig, "__qualname__", orig.__name__)
    fn.__module__ = getattr(orig, "__module__", "numpy")
    fn.__doc__ = orig.__doc__
    fn.__wrapped__ = orig
    return fn


def _apply():
    """Make numpy's attributes match the holds (called with _lock held)."""
    want = _global_hold or _block_holds > 0
    if want:
        for name in ROUTED:
            current = getattr(np, name)
            if current is _routed.get(name):
                continue
            _originals[name] = current
            _routed[name] = _make_routed(name, current)
            setattr(np, name, _routed[name])
    else:
        for name in ROUTED:
            routed = _routed.pop(name, None)
            # a name someone else replaced after us stays theirs
            if routed is not None and getattr(np, name) is routed:
                setattr(np, name, _originals[name])
            _originals.pop(name, None)


def is_patched() -> bool:
    """True while numpy's contraction functions run einplan."""
    with _lock:
        return bool(_routed) and all(getattr(np, n) is _routed.get(n) for n in ROUTED)


def patch_numpy() -> None:
    """Route numpy.einsum, tensordot, inner, outer, vdot, dot and matmul to
    einplan for the whole process (idempotent; ``restore_numpy()`` undoes it).

    The ``@`` operator and ``ndarray.dot`` cannot be routed: they call numpy's C
    implementation without looking up the ``numpy`` module.
    """
    global _global_hold
    with _lock:
        _global_hold = True
        _apply()


def restore_numpy() -> None:
    """Put numpy's own function objects back (idempotent); open ``patched()``
    blocks keep numpy patched until they exit."""
    global _global_hold
    with _lock:
        _global_hold = False
        _apply()


@contextlib.contextmanager
def patched():
    """``with einplan.patched(): ...``: numpy's contraction functions run einplan
    inside the block (see ``patch_numpy``); blocks nest."""
    global _block_holds
    with _lock:
        _block_holds += 1
        _apply()
    try:
        yield
    finally:
        with _lock:
            _block_holds -= 1
            _apply()
