"""Differential property tests: einplan.einsum against numpy.einsum.

Random specs (1 to 4 operands, repeated labels, ellipsis, implicit and
explicit output, size-0 and size-1 axes, broadcasting), random operand
layouts (C, Fortran, negative strides, sliced views, permuted axes, stride-0
broadcasts), dtypes (float32/64, complex64/128, int64, bool and mixtures),
``out=`` in any writeable layout, ``order=``, ``dtype=``/``casting=``, and
invalid input (same exception class as numpy).  numpy runs with its default
``optimize=False`` as the oracle.  Values must agree within the rounding bound
of a k-term sum (see _einsum_strategies.assert_matches_numpy).

Hypothesis profiles: tests/conftest.py (HYPOTHESIS_PROFILE=ci|dev|thorough).
"""
import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import einplan
from _einsum_strategies import (DTYPES, FLOAT_DTYPES, LAYOUTS, assert_matches_numpy,
                                einsum_specs, in_layout, nest_specs)

OPTIMIZE = [None, True, False, "greedy", "optimal"]   # None: left out


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return "err", exc


def _operands(draw, shapes, dtypes, layouts=LAYOUTS):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    ops = []
    for shape, dtype in zip(shapes, dtypes):
        layout = draw(st.sampled_from(layouts))
        ops.append(in_layout(rng, shape, dtype, layout))
        note(f"operand {len(ops) - 1}: shape {shape} {np.dtype(dtype)} {layout} "
             f"strides {ops[-1].strides}")
    return ops


def _dtypes(draw, n, choices=DTYPES):
    if draw(st.booleans()):  # one dtype for all operands
        return [draw(st.sampled_from(choices))] * n
    return [draw(st.sampled_from(choices)) for _ in range(n)]  # mixed


@given(st.data())
def test_random_specs_match_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(), label="spec")
    ops = _operands(data.draw, shapes, _dtypes(data.draw, len(shapes)))
    optimize = data.draw(st.sampled_from(OPTIMIZE), label="optimize")
    # an explicit path finder with mixed dtypes is numpy's pairwise path
    # (intermediates in the pair's dtype); einplan's default is numpy's default
    expected = _numpy_reference(subscripts, ops, optimize)
    got = einplan.einsum(subscripts, *ops, **({} if optimize is None else
                                               {"optimize": optimize}))
    assert_matches_numpy(got, expected, subscripts, ops)


@given(st.data())
def test_two_operand_contractions_match_numpy(data):
    # the GEMM path proper: exactly two operands, float dtypes, bigger extents
    subscripts, shapes = data.draw(einsum_specs(min_ops=2, max_ops=2, allow_zero=False),
                                   label="spec")
    ops = _operands(data.draw, shapes, _dtypes(data.draw, 2, FLOAT_DTYPES))
    expected = np.einsum(subscripts, *ops, optimize=False)
    assert_matches_numpy(einplan.einsum(subscripts, *ops), expected, subscripts, ops)


@given(st.data())
def test_three_or_more_operands_match_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(min_ops=3, max_ops=5, max_dims=3),
                                   label="spec")
    ops = _operands(data.draw, shapes, _dtypes(data.draw, len(shapes), FLOAT_DTYPES))
    optimize = data.draw(st.sampled_from(OPTIMIZE), label="optimize")
    # an explicit path finder with mixed dtypes is numpy's pairwise path
    # (intermediates in the pair's dtype); einplan's default is numpy's default
    expected = _numpy_reference(subscripts, ops, optimize)
    got = einplan.einsum(subscripts, *ops, **({} if optimize is None else
                                               {"optimize": optimize}))
    assert_matches_numpy(got, expected, subscripts, ops)


@given(st.data())
def test_nest_patterns_match_numpy(data):
    # the loop-nest engine's patterns in every float dtype and layout, into a
    # fresh output or an out= of any layout
    subscripts, shapes = data.draw(nest_specs(), label="spec")
    dt = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    ops = _operands(data.draw, shapes, [dt] * len(shapes))
    expected = np.einsum(subscripts, *ops, optimize=False)
    if data.draw(st.booleans(), label="out=") and np.ndim(expected):
        out = in_layout(np.random.default_rng(0), np.shape(expected), dt,
                        data.draw(st.sampled_from(("C", "F", "negative", "sliced", "permuted"))))
        got = einplan.einsum(subscripts, *ops, out=out)
        assert_matches_numpy(got, expected, subscripts, ops, out=out)
    else:
        assert_matches_numpy(einplan.einsum(subscripts, *ops), expected, subscripts, ops)


def _numpy_reference(subscripts, ops, optimize):
    """numpy's result for einplan's call: an omitted optimize (None here) has
    numpy's default (optimize=False) semantics; an explicit path finder
    (True included) with mixed dtypes is numpy's pairwise path
    (intermediates in the pair's dtype), whose 0-d results einplan returns
    as scalars like numpy's single loop."""
    mixed = len({np.asarray(op).dtype for op in ops}) > 1
    opt = optimize if (mixed and optimize not in (None, False)) else False
    res = np.einsum(subscripts, *ops, optimize=opt)
    return res[()] if isinstance(res, np.ndarray) and res.ndim == 0 else res


def _to_sublists(subscripts, ops):
    """'ab,b...->a...' -> [op0, [26, 27], op1, [27, Ellipsis], [26, Ellipsis]]."""
    def conv(term):
        out, i = [], 0
        while i < len(term):
            if term[i] == ".":
                out.append(Ellipsis)
                i += 3
                continue
            c = term[i]
            out.append(ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26)
            i += 1
        return out

    lhs, arrow, rhs = subscripts.partition("->")
    args = []
    for term, op in zip(lhs.split(","), ops):
        args += [op, conv(term)]
    if arrow:
        args.append(conv(rhs))
    return args


@given(st.data())
def test_interleaved_form_matches_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(max_ops=3), label="spec")
    ops = _operands(data.draw, shapes, [np.float64] * len(shapes))
    args = _to_sublists(subscripts, ops)
    expected = np.einsum(*args, optimize=False)
    assert_matches_numpy(einplan.einsum(*args), expected, subscripts, ops)


_OUT_LAYOUTS = ("C", "F", "negative", "sliced", "permuted")  # writeable ones


@given(st.data())
def test_out_matches_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(max_ops=3), label="spec")
    dtypes = _dtypes(data.draw, len(shapes), FLOAT_DTYPES + [np.int64])
    ops = _operands(data.draw, shapes, dtypes)
    expected = np.einsum(subscripts, *ops, optimize=False)
    res_dt = np.asarray(expected).dtype
    # out of the result dtype, or a wider one numpy's 'safe' casting accepts
    wider = [d for d in (np.float64, np.complex128) if np.can_cast(res_dt, d)]
    out_dt = data.draw(st.sampled_from([res_dt] + wider), label="out dtype")
    layout = data.draw(st.sampled_from(_OUT_LAYOUTS), label="out layout")
    out = in_layout(np.random.default_rng(0), np.shape(expected), out_dt, layout)
    out_np = out.copy()
    out[...] = 7  # garbage einplan must overwrite
    # numpy's single-loop semantics (omitted or False); a path finder's
    # pairwise casting into out= is compared by tests/test_casting.py
    optimize = data.draw(st.sampled_from([None, False]), label="optimize")
    got = einplan.einsum(subscripts, *ops, out=out,
                         **({} if optimize is None else {"optimize": optimize}))
    np.einsum(subscripts, *ops, out=out_np, optimize=False)
    assert got is out
    assert_matches_numpy(got, out_np, subscripts, ops, out=out)


@given(st.data())
def test_order_matches_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(max_ops=3), label="spec")
    ops = _operands(data.draw, shapes, _dtypes(data.draw, len(shapes), FLOAT_DTYPES))
    order = data.draw(st.sampled_from("CFAKcfak"), label="order")
    expected = np.einsum(subscripts, *ops, order=order, optimize=False)
    got = einplan.einsum(subscripts, *ops, order=order)
    assert_matches_numpy(got, expected, subscripts, ops)
    if isinstance(expected, np.ndarray):
        if order in "Cc" and expected.flags.c_contiguous:
            assert got.flags.c_contiguous, got.strides
        if order in "Ff" and expected.flags.f_contiguous:
            assert got.flags.f_contiguous, got.strides


@given(st.data())
def test_dtype_and_casting_match_numpy(data):
    subscripts, shapes = data.draw(einsum_specs(max_ops=3), label="spec")
    ops = _operands(data.draw, shapes, _dtypes(data.draw, len(shapes)))
    dtype = data.draw(st.sampled_from([None, np.float32, np.float64, np.complex128,
                                       np.int64]), label="dtype")
    casting = data.draw(st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]),
                        label="casting")
    kind, expected = _outcome(lambda: np.einsum(subscripts, *ops, dtype=dtype,
                                                casting=casting, optimize=False))
    got_kind, got = _outcome(lambda: einplan.einsum(subscripts, *ops, dtype=dtype,
                                                    casting=casting))
    if kind == "err":
        assert got_kind == "err", f"numpy raised {expected!r}, einplan returned"
        assert type(got) is type(expected) or isinstance(got, type(expected)), (got, expected)
        return
    assert got_kind == "ok", f"einplan raised {got!r}, numpy returned"
    assume(not (dtype is not None and np.dtype(dtype).kind in "iu"
                and any(op.dtype.kind in "fc" for op in ops)))  # truncation: exact only
    assert_matches_numpy(got, expected, subscripts, ops, dtype=dtype)


# -- invalid input: the same exception class as numpy --------------------------

_SUBSCRIPT_CHARS = "abiAB.,->"


@given(text=st.text(_SUBSCRIPT_CHARS + " %1", max_size=12),
       shapes=st.lists(st.lists(st.integers(0, 3), max_size=3), min_size=0, max_size=3))
def test_fuzzed_subscripts_error_class_matches_numpy(text, shapes):
    ops = [np.ones(tuple(s)) for s in shapes]
    kind, expected = _outcome(lambda: np.einsum(text, *ops, optimize=False))
    got_kind, got = _outcome(lambda: einplan.einsum(text, *ops))
    note(f"numpy: {expected!r}\neinplan: {got!r}")
    assert got_kind == kind
    if kind == "err":
        assert type(got) is type(expected)
    else:
        assert_matches_numpy(got, expected, text, ops)


@given(sublists=st.lists(st.lists(st.one_of(st.integers(-2, 53), st.just(Ellipsis),
                                            st.sampled_from([True, 1.0, "a", None])),
                                  max_size=3), min_size=1, max_size=3),
       with_out=st.booleans())
def test_fuzzed_sublists_error_class_matches_numpy(sublists, with_out):
    ops = [np.ones((2,) * len([x for x in s if x is not Ellipsis])) for s in sublists]
    args = []
    for op, sub in zip(ops, sublists):
        args += [op, sub]
    if with_out:
        args.append(sublists[0])
    kind, expected = _outcome(lambda: np.einsum(*args, optimize=False))
    got_kind, got = _outcome(lambda: einplan.einsum(*args))
    note(f"numpy: {expected!r}\neinplan: {got!r}")
    assert got_kind == kind
    if kind == "err":
        assert type(got) is type(expected)


# -- fixed regressions found by the properties above / numpy's suite -----------

def test_0d_out_with_optimal_path():
    # numpy gh-31350 (test_einsum_0d_out): numpy's pairwise path writes into
    # out= as its own ufuncs do; its single loop (optimize=False, and
    # einplan's default) keeps casting='safe'
    a = np.ones(7)
    out = np.array(0.0)
    assert einplan.einsum("i,i->", a, a, out=out, optimize="optimal") is out
    assert out == 7
    for opt in ("optimal", "greedy", ["einsum_path", (0, 1)]):
        iout = np.array(0)
        assert einplan.einsum("i,i->", a, a, out=iout, optimize=opt) is iout
        assert iout == 7
    with pytest.raises(TypeError):  # float64 -> int64 is not 'safe'
        einplan.einsum("i,i->", a, a, out=np.array(0))
    with pytest.raises(TypeError):
        einplan.einsum("i,i->", a, a, out=np.array(0), optimize=False)


def test_pure_view_shares_base_and_writeability():
    a = np.arange(9.0).reshape(3, 3)
    d = einplan.einsum("ii->i", a)
    assert d.base is a.base
    d[0] = 100
    assert a[0, 0] == 100
    a.flags.writeable = False
    assert not einplan.einsum("ij->ji", a).flags.writeable


def test_fully_reduced_size1_output_into_out():
    # 'i->' style reduction written into an out of shape (1,) and (1, 1)
    a = np.arange(4.0, dtype=np.float32)
    for shape, spec in (((1,), "i,j->j"), ((1, 1), "i,jk->jk")):
        b = np.ones(shape)
        out = np.empty(shape, np.float64)
        assert einplan.einsum(spec, a, b, out=out) is out
        np.testing.assert_array_equal(out, np.einsum(spec, a, b))


@pytest.mark.parametrize("order", ["c", "f", "a", "k", None, b"C"])
def test_order_is_case_insensitive_like_numpy(order):
    a = np.ones((2, 3), order="F")
    got = einplan.einsum("ij,jk->ik", a, np.ones((3, 4)), order=order)
    expected = np.einsum("ij,jk->ik", a, np.ones((3, 4)), order=order)
    np.testing.assert_array_equal(got, expected)
    if str(order).upper() in ("C", "F"):
        assert got.flags[str(order).upper() + "_CONTIGUOUS"]


def test_order_k_follows_numpy_layout():
    # numpy's test_output_order: Fortran inputs -> neither C nor F for 'K'
    a = np.ones((2, 3, 5), order="F")
    b = np.ones((4, 3), order="F")
    for opt in (True, False):
        got = einplan.einsum("...ft,mf->...mt", a, b, order="K", optimize=opt)
        assert not got.flags.c_contiguous and not got.flags.f_contiguous


@pytest.mark.parametrize("path, exc", [
    (["einsum_path", (0, 1)], RuntimeError),            # leaves 2 operands
    (["einsum_path", (0, 5), (0, 1)], IndexError),      # position out of range
    (["einsum_path", (0, 1), (0, 1), (0, 1)], IndexError),
])
def test_invalid_explicit_path_like_numpy(path, exc):
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    with pytest.raises(exc):
        np.einsum("ab,bc,cd->ad", *ops, optimize=path)
    with pytest.raises(exc):
        einplan.einsum("ab,bc,cd->ad", *ops, optimize=path)
