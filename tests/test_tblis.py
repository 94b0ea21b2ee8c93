"""einplan.tblis: pytblis's API on einplan, with pytblis's array order."""
import threading

import numpy as np
import pytest

import einplan
from einplan import tblis

from _gemm_util import rand

RNG = np.random.default_rng(11)

# numpy's 'K' output of these is neither C- nor F-contiguous
PERMUTED = [
    ("kcbd,ka->abcd", (3, 5, 6, 7), (3, 4)),
    ("kdac,kb->abcd", (3, 7, 4, 6), (3, 5)),
    ("lckd,ilda->akci", (3, 4, 5, 6), (7, 3, 6, 8)),
]


def _operands(sa, sb, dtype=np.float64):
    return rand(sa, dtype, rng=RNG), rand(sb, dtype, rng=RNG)


@pytest.mark.parametrize("subs, sa, sb", PERMUTED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_new_arrays_are_c_ordered_where_numpy_keeps_k(subs, sa, sb, dtype):
    a, b = _operands(sa, sb, dtype)
    ref = np.einsum(subs, a, b)
    assert not ref.flags.c_contiguous          # the case is one where the orders differ
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for got in (tblis.einsum(subs, a, b), tblis.contract(subs, a, b),
                einplan.contract(subs, a, b), tblis.contract(subs, a, b, alpha=-2.0) / -2.0):
        assert got.flags.c_contiguous
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol)
    # einplan.einsum itself keeps its 'K' layout, not pytblis's C order
    assert not einplan.einsum(subs, a, b).flags.c_contiguous


@pytest.mark.parametrize("subs, sa, sb", PERMUTED)
def test_default_array_order_f_inside_the_block(subs, sa, sb):
    a, b = _operands(sa, sb)
    ref = np.einsum(subs, a, b)
    with tblis.use_default_array_order("F"):
        assert tblis.get_default_array_order() == "F"
        for got in (tblis.einsum(subs, a, b), tblis.contract(subs, a, b)):
            assert got.flags.f_contiguous
            np.testing.assert_allclose(got, ref, rtol=1e-12)
        # an explicit order wins over the default
        assert tblis.einsum(subs, a, b, order="C").flags.c_contiguous
    assert tblis.get_default_array_order() == "C"
    assert tblis.einsum(subs, a, b).flags.c_contiguous


def test_default_array_order_is_per_thread():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen["other"] = tblis.einsum("ij,jk->ik", *_operands((3, 4), (4, 5))).flags.f_contiguous
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with tblis.use_default_array_order("F"):
        inside.set()
        done.wait()
    t.join()
    assert seen["other"] is False


def test_order_a_and_k_as_pytblis():
    a = np.asfortranarray(rand((6, 7), np.float64, rng=RNG))
    b = np.asfortranarray(rand((7, 5), np.float64, rng=RNG))
    assert tblis.einsum("ij,jk->ik", a, b, order="A").flags.f_contiguous
    assert tblis.einsum("ij,jk->ik", a, np.ascontiguousarray(b), order="A").flags.c_contiguous
    assert tblis.einsum("ij,jk->ik", a, b, order="K").flags.c_contiguous
    assert tblis.einsum("ij,jk->ik", a, b).flags.c_contiguous


def test_errors_as_pytblis():
    a, b = _operands((3, 4), (4, 5))
    with pytest.raises(TypeError, match="Did not understand"):
        tblis.einsum("ij,jk->ik", a, b, dtype=np.float32)
    with pytest.raises(ValueError, match="order must be"):
        tblis.einsum("ij,jk->ik", a, b, order="X")
    with pytest.raises(ValueError, match="order must be"):
        with tblis.use_default_array_order("K"):
            pass
    with pytest.raises(ValueError, match="beta must be 0"):
        tblis.contract("ij,jk->ik", a, b, beta=1.0)


def test_out_is_written_in_its_own_layout():
    a, b = _operands((3, 5, 6, 7), (3, 4))
    out = np.full((4, 5, 6, 7), np.nan).transpose(0, 2, 1, 3)     # abcd, b and c swapped in memory
    got = tblis.einsum("kcbd,ka->abcd", a, b, out=out)
    assert got is out
    np.testing.assert_allclose(out, np.einsum("kcbd,ka->abcd", a, b), rtol=1e-12)
    c0 = out.copy()
    tblis.contract("kcbd,ka->abcd", a, b, alpha=0.5, beta=2.0, out=out)
    np.testing.assert_allclose(out, 0.5 * np.einsum("kcbd,ka->abcd", a, b) + 2.0 * c0,
                               rtol=1e-12)


def test_tensordot_in_the_default_order():
    a = np.asfortranarray(rand((5, 6, 7), np.float64, rng=RNG))
    b = np.asfortranarray(rand((7, 6, 3), np.float64, rng=RNG))
    ref = np.tensordot(a, b, axes=([1, 2], [1, 0]))
    got = tblis.tensordot(a, b, axes=([1, 2], [1, 0]))
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    with tblis.use_default_array_order("F"):
        got = tblis.tensordot(a, b, axes=([1, 2], [1, 0]))
    assert got.flags.f_contiguous
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_layouts_match_pytblis_where_installed():
    pytblis = pytest.importorskip("pytblis", reason="pytblis not installed")
    for subs, sa, sb in PERMUTED:
        a, b = _operands(sa, sb)
        want = pytblis.einsum(subs, a, b)
        got = tblis.einsum(subs, a, b)
        assert got.strides == want.strides
        np.testing.assert_allclose(got, want, rtol=1e-12)
        want = pytblis.contract(subs, a, b, alpha=0.5)
        got = tblis.contract(subs, a, b, alpha=0.5)
        assert got.strides == want.strides
        np.testing.assert_allclose(got, want, rtol=1e-12)
