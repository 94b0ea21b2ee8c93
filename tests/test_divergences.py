"""Corner cases where einplan once differed from numpy: the exception class
or the result must be numpy's."""
from __future__ import annotations

import numpy as np
import pytest

import einplan

A = np.ones((2, 2))


def _outcome(f, *args, **kw):
    try:
        return "ok", f(*args, **kw)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "raise", type(e)


@pytest.mark.parametrize("optimize", [0, 1, 2.5, np.True_, ("greedy",), "dp", "auto", "bogus",
                                      None, ("greedy", 100), ("dp", 5), "optimal",
                                      ["einsum_path", (0, 1)], ["einsum_path", (0, 1), (0, 1)]])
@pytest.mark.parametrize("spec, n", [("ij,jk->ik", 2), ("ij,jk,kl->il", 3),
                                     ("ij,kl,mn->ijklmn", 3), ("ij->", 1)])
def test_optimize_values_numpy_rejects(optimize, spec, n):
    ops = (A,) * n
    ref = _outcome(np.einsum, spec, *ops, optimize=optimize)
    got = _outcome(einplan.einsum, spec, *ops, optimize=optimize)
    assert ref[0] == got[0], (ref, got)
    if ref[0] == "raise":
        assert got[1] is ref[1]
    else:
        np.testing.assert_allclose(got[1], ref[1])
