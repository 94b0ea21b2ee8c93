"""einplan as a backend of other libraries: opt_einsum and threadpoolctl.

opt_einsum
----------
opt_einsum finds a backend by importing the module named by ``backend=`` and
taking ``einsum``, ``tensordot`` and (optionally) ``transpose`` from it
(``opt_einsum/backends/dispatch.py``).  This module provides all three with
numpy's signatures, so both of these run every pairwise step on einplan::

    opt_einsum.contract(eq, *arrays, backend="einplan.backends")
    opt_einsum.contract(eq, *arrays, backend="einplan")   # einplan.einsum/tensordot,
                                                          # ndarray.transpose

``transpose`` returns a *view* (numpy.transpose): einplan packs its operands
from any strided layout, so the permuted intermediate that opt_einsum hands to
the next step is read in place, never copied.  With ``use_blas=False``
opt_einsum sends every step to ``einsum``, and einplan writes each
intermediate directly in the layout opt_einsum asks for.

threadpoolctl
-------------
einplan's kernels run on OpenMP (libgomp), and its thread count is capped by
``omp_get_max_threads()``, so ``threadpoolctl.threadpool_limits(n)`` limits
einplan in the thread that calls it.  The OpenMP limit is a *per-thread*
setting, though: threads started by a ``ThreadPoolExecutor`` (or dask's
threaded scheduler) do not see it and would each start a full OpenMP team.
:class:`EinplanController` is a threadpoolctl controller for einplan's own,
process-wide thread setting (``einplan.set_num_threads``), which caps every
thread.  :func:`register_threadpoolctl` registers it (threadpoolctl >= 3.5);
its ``user_api`` is ``"openmp"``, so ``threadpool_limits(1)`` and
``threadpool_limits(1, user_api="openmp")`` limit einplan everywhere in the
process.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

from .api import einsum as _einsum
from .frontends import tensordot as _tensordot

__all__ = ["einsum", "tensordot", "transpose", "EinplanController",
           "register_threadpoolctl"]


# -- opt_einsum ---------------------------------------------------------------

def einsum(*operands, **kwargs):
    """numpy.einsum's signature, run by einplan (opt_einsum calls this per step)."""
    return _einsum(*operands, **kwargs)


def tensordot(a, b, axes=2):
    """numpy.tensordot's signature, run by einplan."""
    return _tensordot(a, b, axes=axes)


def transpose(a, axes=None):
    """numpy.transpose: a view, which einplan's next step reads through strides."""
    return np.transpose(a, axes)


# -- threadpoolctl ------------------------------------------------------------

try:
    from threadpoolctl import LibController as _LibController
except ImportError:           # threadpoolctl missing: no controller
    _LibController = None

_registered = False


if _LibController is not None:
    class EinplanController(_LibController):
        """threadpoolctl controller for einplan's process-wide thread count.

        Finds einplan's compiled module (``einplan/_kernels*.so``) among the
        loaded libraries by its exported ``ep_get_num_threads`` /
        ``ep_set_num_threads`` and calls them, so a limit applies to every
        thread of the process (the OpenMP limit applies only to the thread
        that sets it).
        """

        user_api = "openmp"
        internal_api = "einplan"
        filename_prefixes = ("_kernels",)
        check_symbols = ("ep_get_num_threads", "ep_set_num_threads")

        def set_additional_attributes(self):
            get = getattr(self.dynlib, "ep_get_num_threads")
            get.restype, get.argtypes = ctypes.c_int, []
            put = getattr(self.dynlib, "ep_set_num_threads")
            put.restype, put.argtypes = None, [ctypes.c_int]

        def get_num_threads(self):
            return int(self.dynlib.ep_get_num_threads())

        def set_num_threads(self, num_threads):
            self.dynlib.ep_set_num_threads(int(num_threads))

        def get_version(self):
            return getattr(sys.modules.get("einplan"), "__version__", None)
else:  # pragma: no cover - threadpoolctl not installed
    EinplanController = None


def register_threadpoolctl() -> bool:
    """Register :class:`EinplanController` with threadpoolctl (idempotent).

    Returns True when registered (now or before), False when threadpoolctl is
    missing or older than 3.5 (no ``register``); einplan then still follows
    threadpoolctl's OpenMP limit in the calling thread.
    """
    global _registered
    if _registered:
        return True
    if EinplanController is None:
        return False
    import threadpoolctl
    if not hasattr(threadpoolctl, "register"):
        return False
    threadpoolctl.register(EinplanController)
    _registered = True
    return True
