"""einplan as autoray's numpy contraction functions (quimb and cotengra dispatch
through autoray).

``register_autoray()`` registers einplan's einsum, tensordot, matmul, dot,
inner, outer and vdot as autoray's implementations for the ``"numpy"``
backend.  Then every ``autoray.do("einsum", ..., like=numpy_array)`` runs
einplan, which covers both of cotengra's numpy implementations:

  * ``tree.contract(arrays, implementation="autoray")``: each pairwise step is
    ``xp.einsum`` / ``xp.tensordot`` of autoray's numpy namespace;
  * ``implementation="cotengra"`` (the default for numpy arrays, and what
    quimb uses): cotengra's own einsum/tensordot, which reshape and call
    ``do("matmul")`` (or ``do("einsum")`` for what is not a matmul).

Arrays of other backends (torch, jax, cupy, ...) are untouched.
``unregister_autoray()`` registers numpy's own functions again.
"""
from __future__ import annotations

import numpy as np

from . import api, frontends
from .patching import original

__all__ = ["register_autoray", "unregister_autoray", "FUNCTIONS"]

FUNCTIONS = ("einsum", "tensordot", "matmul", "dot", "inner", "outer", "vdot")


def _einplan_fn(name):
    return api.einsum if name == "einsum" else getattr(frontends, name)


def _register(pick):
    try:
        import autoray
    except ImportError as exc:   # optional dependency
        raise ImportError("register_autoray needs autoray: pip install autoray") from exc
    for name in FUNCTIONS:
        autoray.register_function("numpy", name, pick(name))
    # namespaces built before the registration keep the functions they loaded
    cache = getattr(autoray.autoray, "_namespace_cache", None)
    if isinstance(cache, dict):
        cache.clear()


def register_autoray() -> None:
    """Make autoray's numpy backend run its contractions on einplan (idempotent)."""
    _register(_einplan_fn)


def unregister_autoray() -> None:
    """autoray's numpy backend runs numpy's own contraction functions again."""
    _register(lambda name: original(name) if hasattr(np, name) else None)
