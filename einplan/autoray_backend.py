"""einplan as autoray's numpy contraction functions (quimb and cotengra dispatch
through autoray).

``register_autoray()`` registers einplan's einsum, tensordot, matmul, dot,
inner, outer and vdot as autoray's implementations for the ``"numpy"``
backend.  Then every ``autoray.do("einsum", ..., like=numpy_array)`` runs
einplan, which covers both of cotengra's numpy implementations:

  * ``tree.contract(arrays, implementation="autoray")``: each pairwise step is
    ``xp.einsum`` / ``xp.tensordot`` of autoray's numpy namespace;
  * ``implementation="cotengra"``: cotengra's own einsum/tensordot, which
    transpose and reshape (numpy copies) and call ``do("matmul")`` (or
    ``do("einsum")`` for what is not a matmul).

cotengra's default ``implementation="auto"`` (what quimb uses) picks
"cotengra" for numpy arrays and "autoray" for every other backend; with
``cotengra_default=True`` (the default) ``register_autoray`` sets cotengra's
default to "autoray", so numpy arrays take einplan's einsum / tensordot
directly, which read transposed operands in place (no copies).  Other
backends see no change: "auto" already meant "autoray" for them.

Arrays of other backends (torch, jax, cupy, ...) are untouched.
``unregister_autoray()`` registers numpy's own functions again and puts
cotengra's default back.
"""
from __future__ import annotations

import importlib

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


_saved_cotengra_default = []   # cotengra's default implementation before ours


def register_autoray(cotengra_default: bool = True) -> None:
    """Make autoray's numpy backend run its contractions on einplan (idempotent);
    ``cotengra_default``: also make cotengra (and so quimb) call autoray's
    einsum / tensordot for numpy arrays (see the module docstring)."""
    _register(_einplan_fn)
    if cotengra_default:
        try:
            ctg_contract = importlib.import_module("cotengra.contract")
        except ImportError:   # cotengra is optional
            return
        current = ctg_contract.get_default_implementation()
        if current != "autoray" and not _saved_cotengra_default:
            _saved_cotengra_default.append(current)
        ctg_contract.set_default_implementation("autoray")


def unregister_autoray() -> None:
    """autoray's numpy backend runs numpy's own contraction functions again,
    and cotengra's default implementation is what it was."""
    _register(lambda name: original(name) if hasattr(np, name) else None)
    if _saved_cotengra_default:
        ctg_contract = importlib.import_module("cotengra.contract")
        ctg_contract.set_default_implementation(_saved_cotengra_default.pop())
