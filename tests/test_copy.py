"""The cache-blocked permutation copy (ep_copy.c) against numpy: every
permutation of small shapes, reversed and sliced views, each element size,
tiles with fringes; and einsum's pure permutation into out= uses it."""
import itertools

import numpy as np
import pytest

import einplan
from einplan import _native


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(70, 33), (5, 37, 3), (2, 3, 40, 1)])
def test_every_permutation(dtype, shape):
    rng = np.random.default_rng(len(shape))
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    for perm in itertools.permutations(range(len(shape))):
        for src in (a.transpose(perm), a[::-1].transpose(perm), a[..., ::2].transpose(perm)):
            buf = np.full((src.size + 8,), 7, dtype)          # guard elements after dst
            dst = buf[:src.size].reshape(src.shape)
            _native.permute_copy(src, dst)
            assert np.array_equal(dst, src)
            assert (buf[src.size:] == 7).all()


def test_rejects_mismatch_and_readonly():
    a = np.zeros((3, 4))
    with pytest.raises(ValueError):
        _native.permute_copy(a, np.zeros((4, 3)))
    with pytest.raises(ValueError):
        _native.permute_copy(a, np.zeros((3, 4), np.float32))
    ro = np.zeros((3, 4))
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        _native.permute_copy(a, ro)


def test_einsum_permutation_into_out():
    """The TVM case shape (shrunk): 'ncabhw->nchawb' into a preallocated out=."""
    x = np.random.default_rng(0).standard_normal((1, 4, 2, 2, 36, 64)).astype(np.float32)
    out = np.full((1, 4, 36, 2, 64, 2), np.nan, np.float32)
    res = einplan.einsum("ncabhw->nchawb", x, out=out)
    assert res is out
    assert np.array_equal(out, np.einsum("ncabhw->nchawb", x))
