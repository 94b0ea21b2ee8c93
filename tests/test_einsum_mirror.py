"""NumPy's own einsum test suite, run against einplan.einsum.

The test file that ships inside the installed numpy
(``numpy/_core/tests/test_einsum.py``) is loaded by path at collection time,
so this suite follows whatever numpy version is installed.  The module is
executed with a private ``__import__`` that hands it a proxy instead of the
``numpy`` module for ``import numpy as np``: the proxy's ``einsum`` is
``einplan.einsum``, every other attribute is numpy's (``np.einsum_path``,
``np.dot``, ``np.testing`` ... stay numpy's, they are the references).

Exclusions are listed in ``EXCLUDED`` with their reason; each must be about
numpy internals, not about einsum's results.  An excluded test is still
collected and reported as skipped with the reason.
"""
from __future__ import annotations

import builtins
import importlib.util
import pathlib
import sys
import types

import numpy
import pytest

import einplan

_NUMPY_TESTS = pathlib.Path(numpy.__file__).parent / "_core" / "tests"
_SOURCE = _NUMPY_TESTS / "test_einsum.py"

# "Class.method" or "function" -> reason.  Only tests of numpy internals.
EXCLUDED = {
    # Tests that call only np.einsum_path: numpy's own path finder and the
    # text of its report.  They never reach einsum, so they cannot test einplan.
    "TestEinsum.test_einsum_sorting_behavior":
        "numpy internals: checks the text of numpy.einsum_path's report; never calls einsum",
    "TestEinsumPath.test_memory_contraints":
        "numpy internals: numpy.einsum_path's memory-limited paths; never calls einsum",
    "TestEinsumPath.test_long_paths":
        "numpy internals: numpy.einsum_path's greedy/optimal paths; never calls einsum",
    "TestEinsumPath.test_edge_paths":
        "numpy internals: numpy.einsum_path's greedy/optimal paths; never calls einsum",
}

# Expected to fail (strict: an unexpected pass is reported), with the reason.
XFAIL = {
    # (none: einsum with an explicit path finder and mixed dtypes or a cast
    # into out= is numpy's own pairwise path, as numpy runs it)
}


class _NumpyProxy(types.ModuleType):
    """``numpy`` with ``einsum`` replaced by ``einplan.einsum``."""

    def __init__(self):
        super().__init__("numpy")
        self.einsum = einplan.einsum

    def __getattr__(self, name):
        return getattr(numpy, name)


def _load():
    proxy = _NumpyProxy()
    real_import = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "numpy" and not fromlist and level == 0:
            return proxy
        return real_import(name, globals, locals, fromlist, level)

    spec = importlib.util.spec_from_file_location("_numpy_test_einsum_mirror", _SOURCE)
    module = importlib.util.module_from_spec(spec)
    module.__dict__["__builtins__"] = dict(builtins.__dict__, __import__=_import)
    spec.loader.exec_module(module)
    assert module.np is proxy, "the numpy test module did not pick up the proxy"
    return module


if not _SOURCE.exists():  # pragma: no cover - numpy installed without its tests
    pytest.skip(reason=f"numpy's einsum tests are not installed ({_SOURCE})",
                allow_module_level=True)

_mirror = _load()
sys.modules.setdefault(_mirror.__name__, _mirror)


def _apply_exclusions(module):
    for name, reason in EXCLUDED.items():
        owner_name, _, attr = name.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        if not hasattr(owner, attr):
            continue  # numpy dropped or renamed it; nothing to skip
        setattr(owner, attr, pytest.mark.skip(reason=reason)(getattr(owner, attr)))
    for name, reason in XFAIL.items():
        owner_name, _, attr = name.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        if hasattr(owner, attr):
            setattr(owner, attr, pytest.mark.xfail(reason=reason, strict=True)(
                getattr(owner, attr)))


_apply_exclusions(_mirror)

# Hand every test class / function of numpy's file to pytest under this module.
for _name, _obj in vars(_mirror).items():
    if _name.startswith("Test") and isinstance(_obj, type):
        globals()[_name] = _obj
    elif _name.startswith("test_") and callable(_obj):
        globals()[_name] = _obj


def test_mirror_uses_einplan():
    """The loaded suite really calls einplan.einsum (not numpy's)."""
    assert _mirror.np.einsum is einplan.einsum
    assert _mirror.np.einsum_path is numpy.einsum_path
    assert any(n.startswith("Test") for n in vars(_mirror))
