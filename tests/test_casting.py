"""numpy.einsum's dtype and casting rules (operand dtypes x dtype= x out= x casting=).

The rules are numpy's iterator's: compute in ``dtype=`` or in
``np.result_type(operands..., out)``, cast each operand under ``casting``,
and ``out=`` both ways under ``casting``.  An explicit path finder with mixed
dtypes runs numpy's pairwise path, as numpy does.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import einplan
import fuzz_differential as fuzz

DTYPES = ["?", "i1", "u1", "i4", "i8", "f2", "f4", "f8", "c8", "c16", ">f8", ">i4"]
NATIVE = [d for d in DTYPES if not d.startswith(">")]


def test_bool_operands_sum_in_the_out_dtype():
    a = np.array([True, True])
    s = np.array(True)
    for kw in ({"out": np.zeros((), np.complex64)}, {"dtype": np.complex64},
               {"out": np.zeros((), np.int64)}):
        got = einplan.einsum("a,->", a, s, **kw)
        assert got == np.einsum("a,->", a, s, **kw) == 2


@pytest.mark.parametrize("args, kw", [
    ((np.float64(1.5),), {"dtype": "float64", "out": np.zeros((), np.complex128)}),
    ((np.array(True),), {"dtype": "float32", "out": np.zeros((), np.float64)}),
    ((np.ones(3, np.int8),), {"dtype": "i1", "out": np.zeros((), "f8"),
                              "casting": "same_kind"}),
])
def test_0d_casting_of_out_is_checked_both_ways(args, kw):
    spec = ",".join("" if np.ndim(a) == 0 else "i" for a in args) + "->"
    with pytest.raises(TypeError):
        np.einsum(spec, *args, **kw)
    with pytest.raises(TypeError, match="could not be cast"):
        einplan.einsum(spec, *args, **kw)


def test_requested_dtype_is_computed_in_native_byte_order():
    a = np.ones(3, np.complex128)
    got = einplan.einsum("i->", a, dtype=">c16", casting="no")
    assert got.dtype == np.einsum("i->", a, dtype=">c16", casting="no").dtype


@pytest.mark.parametrize("spec, dtype, shapes", [
    ("ij->j", ">f8", [(4, 3)]),                 # loop nest
    ("ij,jk->ik", ">f4", [(5, 4), (4, 6)]),     # GEMM
    ("ij,jk->ik", ">i4", [(5, 4), (4, 6)]),     # integers: numpy's loop
    ("ij,ij->i", ">c16", [(3, 3), (3, 3)]),
])
def test_byte_swapped_dtype_gives_that_dtype_and_the_right_values(spec, dtype, shapes):
    # numpy's loops write native values into the byte-swapped result
    # (1e-320s for 'ij->j'); einplan's result has the dtype asked for and
    # the values of the native computation
    kind = np.dtype(dtype).kind
    ops = [(np.arange(np.prod(s)).reshape(s) % 7).astype("i2" if kind == "i" else "f2")
           for s in shapes]
    got = einplan.einsum(spec, *ops, dtype=dtype)
    assert got.dtype == np.einsum(spec, *ops, dtype=dtype).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.einsum(spec, *ops, dtype=np.dtype(dtype).newbyteorder("=")))
    if np.dtype(dtype).kind != "i":
        copies = einplan.explain(spec, *ops, dtype=dtype).to_dict()["copies"]
        assert any("byte-swapped" in c["what"] for c in copies["items"])


def test_explicit_optimize_true_has_numpys_pairwise_semantics():
    # numpy's optimize=True is its 'greedy' pairwise path, which casts per
    # pair and into out=; left out, einplan keeps optimize=False's rules
    a = np.arange(1, 4)
    args = ("i,i->", a, a.astype(float))
    want = np.einsum(*args, out=np.zeros((), "i8"), optimize=True)
    assert einplan.einsum(*args, out=np.zeros((), "i8"), optimize=True) == want == 14
    with pytest.raises(TypeError):
        np.einsum(*args, out=np.zeros((), "i8"))
    with pytest.raises(TypeError):
        einplan.einsum(*args, out=np.zeros((), "i8"))


@pytest.mark.parametrize("optimize", [True, "greedy", ["einsum_path", (0, 1)]])
def test_path_finder_broadcasts_into_a_larger_out_as_numpy(optimize):
    a = np.arange(3.0)
    want = np.einsum("i,i->", a, a, out=np.zeros(2), optimize=optimize)
    out = np.zeros(2)
    assert einplan.einsum("i,i->", a, a, out=out, optimize=optimize) is out
    np.testing.assert_array_equal(out, want)
    report = einplan.explain("i,i->", a, a, out=np.zeros(2), optimize=optimize).to_dict()
    assert any("out= of shape (2,)" in f["reason"] for f in report["fallbacks"])
    with pytest.raises(ValueError):
        einplan.einsum("i,i->", a, a, out=np.zeros(2))


def test_signature_reads_as_numpys():
    import inspect
    params = inspect.signature(einplan.einsum).parameters
    assert repr(params["casting"].default) == "'safe'"
    assert repr(params["optimize"].default) == "True"


@settings(max_examples=400, deadline=None)
@given(ops=st.lists(st.sampled_from(DTYPES), min_size=1, max_size=3),
       dtype=st.sampled_from([None] + DTYPES), out=st.sampled_from([None] + DTYPES),
       casting=st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]),
       optimize=st.sampled_from([None, True, False, "greedy", "optimal"]),
       spec_kind=st.sampled_from(["reduce", "gemm"]))
def test_dtype_casting_matrix_matches_numpy(ops, dtype, out, casting, optimize, spec_kind):
    rng = np.random.default_rng(len(ops))
    if spec_kind == "gemm" and len(ops) >= 2:
        terms = ["ij", "jk", "kl"][:len(ops)]
        spec = ",".join(terms) + "->i" + terms[-1][-1]
        shapes = [(3, 4), (4, 5), (5, 2)][:len(ops)]
        oshape = (3, shapes[-1][1])
    else:
        spec = ",".join("i" for _ in ops) + "->"
        shapes = [(5,)] * len(ops)
        oshape = ()
    arrays = [fuzz._operand(rng, s, d) for s, d in zip(shapes, ops)]
    kw = {"casting": casting}
    if optimize is not None:
        kw["optimize"] = optimize
    if dtype is not None:
        kw["dtype"] = dtype
    o = None if out is None else np.zeros(oshape, out)
    why = fuzz.compare(spec, arrays, kw, o)
    assert why is None, why


def test_small_differential_fuzz_run():
    diffs = fuzz.run(1500, seed=12345)
    assert not diffs, [d[:2] for d in diffs[:5]]


def test_reusable_plan_with_byte_swapped_operands():
    A = np.arange(16.0).reshape(4, 4)
    expected = A @ (2 * np.eye(4))
    for consts in ((), (1,)):
        b = (2 * np.eye(4)).astype(">f8")
        if consts:
            p = einplan.plan("ij,jk->ik", (4, 4), b, constants=consts)
        else:
            p = einplan.plan("ij,jk->ik", (4, 4), (4, 4))
        for a in (A.astype(">f8"), A):
            args = (a,) if consts else (a, b)
            np.testing.assert_array_equal(p(*args), expected)
            np.testing.assert_array_equal(p(*args), expected)   # the runner's hot path
        if not consts:
            np.testing.assert_array_equal(p(A.astype(">f8"), np.eye(4)), A)


def test_gemm_descriptor_rejects_byte_swapped_arrays():
    from einplan import _native
    # m (extent, A stride, C stride), n (extent, B, C), k (extent, A, B)
    call = _native.prepare_gemm(np.dtype(np.float64), [(4, 4, 4)], [(4, 1, 1)],
                                [(4, 1, 4)], [])
    np.testing.assert_array_equal(call(np.eye(4), np.eye(4), np.empty((4, 4))), np.eye(4))
    A = np.ones((4, 4), ">f8")
    with pytest.raises(TypeError):
        call(A, np.ones((4, 4)), np.empty((4, 4)))
