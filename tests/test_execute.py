"""execute.py (step 3) + api.einsum: results vs numpy.einsum."""
import tracemalloc

import numpy as np
import pytest

from einplan.api import einsum

from _gemm_util import rand




def tol(dtype):
    if np.dtype(dtype) == np.float16:
        return dict(rtol=1e-2, atol=1e-2)
    return dict(rtol=2e-4, atol=2e-4) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-10, atol=1e-10)


def check(subscripts, *ops, **kw):
    got = einsum(subscripts, *ops, **kw)
    want = np.einsum(subscripts, *ops, **{k: v for k, v in kw.items() if k != "optimize"})
    assert type(got) is type(want)
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **tol(want.dtype))
    return got


SPECS = [
    ("ij,jk->ik", [(5, 6), (6, 7)]),
    ("ij,jk->ki", [(5, 6), (6, 7)]),
    ("ij,jk", [(5, 6), (6, 7)]),
    ("ij,kj->ik", [(5, 6), (7, 6)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bij,jk->bik", [(7, 3, 16), (16, 9)]),
    ("abcd,dbef->aecf", [(3, 4, 5, 6), (6, 4, 2, 3)]),
    ("ab,...b->...a", [(6, 8), (3, 4, 8)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(9,), (9,)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,j->i", [(4, 5), (5,)]),
    ("j,ij->i", [(5,), (4, 5)]),
    ("ij,ij->ij", [(4, 5), (4, 5)]),
    ("ij,ij->", [(4, 5), (4, 5)]),
    ("ii,i->i", [(4, 4), (4,)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 5)]),
    ("ab,bc->c", [(3, 4), (4, 5)]),       # 'a' pre-summed
    ("abc,c->ab", [(1, 3, 4), (4,)]),     # size-1 axis
    ("ij,jk->ik", [(4, 1), (5, 6)]),      # broadcast k-axis (1 vs 5)
    ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)]),
    ("ij,jk,kl,lm->mi", [(4, 5), (5, 6), (6, 3), (3, 2)]),
    ("ab,bc,ca->", [(3, 4), (4, 5), (5, 3)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 3), (3, 3, 3, 3), (2, 3), (2, 3)]),
    ("ii->i", [(4, 4)]),
    ("ij->ji", [(4, 5)]),
    ("ij->", [(4, 5)]),
    ("ij->i", [(4, 5)]),
    ("ii->", [(4, 4)]),
    ("i->i", [(4,)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("subscripts, shapes", SPECS, ids=[s for s, _ in SPECS])
def test_matches_numpy(subscripts, shapes, dtype):
    ops = [rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    check(subscripts, *ops)


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal",
                                      ["einsum_path", (1, 2), (0, 1)]])
def test_optimize_values(optimize):
    ops = [rand((4, 5)), rand((5, 6), seed=1), rand((6, 3), seed=2)]
    check("ij,jk,kl->il", *ops, optimize=optimize)


def test_interleaved_form():
    a, b = rand((3, 4)), rand((4, 5), seed=1)
    np.testing.assert_allclose(einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b)


def strided_variants():
    base = rand((8, 10))
    yield "contiguous", base
    yield "fortran", np.asfortranarray(base)
    yield "transposed", rand((10, 8)).T
    yield "negative", base[::-1, ::-1]
    yield "sliced", rand((16, 30))[::2, 3:23:2]
    yield "broadcast", np.broadcast_to(rand((1, 10)), (8, 10))
    yield "zero-stride-col", np.broadcast_to(rand((8, 1)), (8, 10))


@pytest.mark.parametrize("name, a", list(strided_variants()), ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("subscripts", ["ij,jk->ik", "ij,jk->ki", "ij,ij->i", "ij,j->i",
                                        "ji,jk->ik"])
def test_strided_operands(name, a, subscripts):
    other = rand((10, 7), seed=3) if subscripts[1] == "j" else rand((8, 10), seed=3)
    if subscripts.startswith("ij,ij"):
        other = rand((8, 10), seed=3)[::-1]
    if subscripts == "ij,j->i":
        other = rand((10,), seed=3)[::-1]
    if subscripts.startswith("ji"):
        other = rand((8, 7), seed=3)
    check(subscripts, a, other)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "negative"])
def test_out_written_in_place(layout, dtype):
    a, b = rand((5, 6), dtype), rand((6, 7), dtype, seed=1)
    if layout == "C":
        out = np.empty((5, 7), dtype)
    elif layout == "F":
        out = np.empty((5, 7), dtype, order="F")
    elif layout == "strided":
        out = np.empty((10, 21), dtype)[::2, ::3]
    else:
        out = np.empty((5, 7), dtype)[::-1, ::-1]
    res = einsum("ij,jk->ik", a, b, out=out)
    assert res is out
    np.testing.assert_allclose(out, a @ b, **tol(dtype))


def test_out_other_dtype_and_casting():
    a, b = rand((5, 6)), rand((6, 7), seed=1)
    out = np.empty((5, 7), np.complex128)
    assert einsum("ij,jk->ik", a, b, out=out) is out
    np.testing.assert_allclose(out.real, a @ b)
    out32 = np.empty((5, 7), np.float32)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        einsum("ij,jk->ik", a, b, out=out32)
    einsum("ij,jk->ik", a, b, out=out32, casting="same_kind")
    np.testing.assert_allclose(out32, a @ b, rtol=1e-5)


def test_out_scalar_and_single_operand():
    a = rand((4, 4))
    out = np.empty(())
    assert einsum("ij,ij->", a, a, out=out) is out
    np.testing.assert_allclose(out, (a * a).sum())
    out2 = np.empty((4, 4))
    assert einsum("ij->ji", a, out=out2) is out2
    np.testing.assert_array_equal(out2, a.T)


def test_out_overlapping_input():
    a = rand((5, 5))
    want = a @ a
    einsum("ij,jk->ik", a, a.copy(), out=a)
    np.testing.assert_allclose(a, want)


def test_dtype_and_casting_errors_like_numpy():
    a, b = rand((3, 4)), rand((4, 5), seed=1)
    with pytest.raises(TypeError) as ours:
        einsum("ij,jk->ik", a, b, dtype=np.float32)
    with pytest.raises(TypeError) as theirs:
        np.einsum("ij,jk->ik", a, b, dtype=np.float32)
    assert str(ours.value) == str(theirs.value)
    check("ij,jk->ik", a, b, dtype=np.float32, casting="same_kind")
    check("ij,jk->ik", a.astype(np.float32), b.astype(np.float32), dtype=np.float64)
    with pytest.raises(ValueError, match="casting must be one of"):
        einsum("ij,jk->ik", a, b, casting="bogus")
    with pytest.raises(ValueError, match="order must be one of"):
        einsum("ij,jk->ik", a, b, order="X")


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_order(order):
    a, b = rand((5, 6)), rand((6, 7), seed=1)
    res = check("ij,jk->ik", a, b, order=order)
    if order == "F":
        assert res.flags.f_contiguous
    if order in "CA":
        assert res.flags.c_contiguous


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.float16, np.uint8])
def test_fallback_dtypes(dtype):
    a = (rand((3, 4)) * 3).astype(dtype)
    b = (rand((4, 5), seed=1) * 3).astype(dtype)
    check("ij,jk->ik", a, b)


def test_mixed_dtypes():
    a = rand((3, 4)).astype(np.float32)
    check("ij,jk->ik", a, rand((4, 5), seed=1))
    check("ij,jk->ik", (a * 3).astype(np.int32), rand((4, 5), seed=1))
    check("ij,jk->ik", a, rand((4, 5), np.complex64, seed=1))
    check("i,->i", a[0], 2.0)
    check(",ij->ij", 2.0, rand((3, 4)))


def test_zero_size():
    check("ij,jk->ik", rand((0, 4)), rand((4, 5)))
    check("ij,jk->ik", rand((3, 0)), rand((0, 5)))


def test_scalar_result_type():
    a = rand((4,))
    assert type(einsum("i,i->", a, a)) is np.float64
    assert type(einsum("i->", a)) is np.float64


def test_single_operand_views_like_numpy():
    a = rand((4, 4))
    v = einsum("ii->i", a)
    assert np.shares_memory(v, a)
    v = einsum("ij->ji", a)
    assert np.shares_memory(v, a) and v.flags.writeable


def test_no_operand_sized_temporaries():
    # abcd,dbef->aecf (float64, 16^4): packing reads the strided operands,
    # so apart from the output nothing operand-sized is allocated
    a, b = rand((16,) * 4), rand((16,) * 4, seed=1)
    einsum("abcd,dbef->aecf", a, b)  # warm the plan cache
    out_bytes = 16 ** 4 * 8
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        res = einsum("abcd,dbef->aecf", a, b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - before < out_bytes + out_bytes // 4
    np.testing.assert_allclose(res, np.einsum("abcd,dbef->aecf", a, b), rtol=1e-10)
