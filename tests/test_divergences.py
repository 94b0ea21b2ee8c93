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


def _zero_stride_out(f):
    base = np.zeros(1)
    out = np.lib.stride_tricks.as_strided(base, (3, 2), (0, 0), writeable=True)
    f("ij,jk->ik", np.arange(9.0).reshape(3, 3), np.ones((3, 2)), out=out)
    return base


def test_zero_stride_out_accumulates_like_numpy():
    np.testing.assert_array_equal(_zero_stride_out(einplan.einsum),
                                  _zero_stride_out(np.einsum))


@pytest.mark.parametrize("n", [63, 64, 70])
def test_too_many_operands(n):
    ops = [np.ones(1)] * n
    spec = ",".join(["i"] * n)
    ref = _outcome(np.einsum, spec, *ops)
    got = _outcome(einplan.einsum, spec, *ops)
    assert ref[0] == got[0] and (ref[0] == "ok" or ref[1] is got[1])
    inter = sum(([o, [0]] for o in ops), [])
    assert _outcome(einplan.einsum, *inter)[0] == _outcome(np.einsum, *inter)[0]


def test_non_ascii_subscripts_raise_unicode_encode_error():
    with pytest.raises(UnicodeEncodeError):
        np.einsum("i\u00e9->", np.ones((2, 2)))
    with pytest.raises(UnicodeEncodeError):
        einplan.einsum("i\u00e9->", np.ones((2, 2)))


def test_matmul_forms_numpy_accepts():
    from einplan import deferral
    A, B = np.ones((2, 3, 4)), np.ones((4, 5))
    before = sum(deferral.counts.values())
    out = np.zeros((2, 2, 3, 5))
    assert einplan.matmul(A, B, out=out) is out and (out == 4).all()
    assert einplan.matmul(A, B, dtype=np.float32).dtype == np.float32
    t = (np.zeros((2, 3, 5)),)
    assert einplan.matmul(A, B, out=t) is t[0] and (t[0] == 4).all()
    assert sum(deferral.counts.values()) == before + 3


def test_tensordot_beyond_52_letters():
    big = np.ones((1,) * 30)
    assert einplan.tensordot(big, big, axes=0).shape == np.tensordot(big, big, axes=0).shape


@pytest.mark.parametrize("name", ["dot", "inner", "vdot", "tensordot"])
def test_timedelta_in_front_ends(name):
    td = np.arange(3).astype("m8[s]")
    args = (td, np.arange(3)) + ((1,) if name == "tensordot" else ())
    ref = getattr(np, name)(*args)
    got = getattr(einplan, name)(*args)
    assert type(got) is type(ref) and got == ref


def test_subclasses_and_protocols_go_to_numpy_counted_and_explained():
    from einplan import deferral
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    assert type(einplan.matmul(m, m)) is np.matrix
    assert type(einplan.dot(m, m)) is np.matrix
    ma = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])
    got, ref = einplan.dot(ma, ma), np.dot(ma, ma)
    assert isinstance(got, np.ma.MaskedArray)
    np.testing.assert_array_equal(got.mask, ref.mask)
    np.testing.assert_array_equal(got.filled(0), ref.filled(0))
    assert deferral.counts["MaskedArray is an ndarray subclass"] >= 1
    rep = einplan.explain_call("dot", ma, ma).to_dict()
    assert "MaskedArray" in rep["fallbacks"][0]["reason"]


def test_dask_arrays_stay_lazy():
    da = pytest.importorskip("dask.array", reason="dask is not installed (the clients extra)")
    x = da.ones((4, 4), chunks=2)
    for got in (einplan.einsum("ij,jk->ik", x, x), einplan.matmul(x, x), einplan.dot(x, x)):
        assert isinstance(got, da.Array)
        np.testing.assert_array_equal(got.compute(), np.full((4, 4), 4.0))


def test_views_of_structured_and_string_dtypes():
    st = np.zeros((2, 3), dtype=[("a", "f8"), ("b", "i4")])
    st2 = np.zeros((2, 3), dtype=[("x", "f8"), ("y", "i4")])
    for arr in (st, st2, np.array([["a", "bb"], ["c", "d"]], dtype="T")):
        for spec in ("ij->ji", "ij") + (("ii->i",) if arr.shape[0] == arr.shape[1] else ()):
            ref, got = np.einsum(spec, arr), einplan.einsum(spec, arr)
            assert got.dtype == ref.dtype and got.shape == ref.shape
            assert (got == ref).all()
    td = np.arange(4).astype("m8[s]").reshape(2, 2)
    assert einplan.einsum("ij->", td, dtype="f8", casting="unsafe") == 6.0
