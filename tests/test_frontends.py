"""Tests for einplan.frontends: matmul & co. as einsum specs, checked against numpy.

The spec tests run the generated spec through *numpy.einsum*, so they check the
spec generation independently of einplan's kernels. The wrapper tests at the
end run einplan's own einsum.
"""
import numpy as np
import pytest

from einplan import frontends

from _gemm_util import rand as _rand

RNG = np.random.default_rng(0)


def rand(shape, dtype=np.float64):
    return _rand(shape, dtype, rng=RNG)


def _same_type_shape_dtype(got, expected) -> bool:
    """Type, shape and dtype as numpy's; True when the values are integers
    (then already compared exactly)."""
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    if np.asarray(expected).dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return True
    return False


def assert_same_result(got, expected):
    if not _same_type_shape_dtype(got, expected):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def run_spec(spec_fn, *args):
    subscripts, operands = spec_fn(*args)
    assert isinstance(subscripts, str)
    return np.einsum(subscripts, *operands)


# ---------------------------------------------------------------- matmul

MATMUL_SHAPES = [
    ((3,), (3,)),                 # "k,k->"
    ((2, 3), (3,)),               # "...ik,k->...i"
    ((3,), (3, 4)),               # "k,...kj->...j"
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),          # batch on a only
    ((3,), (5, 3, 4)),            # 1-d a against batched b
    ((5, 2, 3), (3,)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),       # size-1 batch broadcasts
    ((6, 1, 2, 3), (5, 3, 4)),    # batch (6,1) against (5,)
    ((7, 1, 2, 3), (1, 4, 3, 4)),
    ((77, 6, 512), (512, 16)),    # the tract case: merged into one large m later
    ((0, 3), (3, 4)),             # zero-size m
    ((2, 0), (0, 4)),             # zero-size k: zeros
    ((0, 2, 3), (3, 4)),          # zero-size batch
    ((1, 1), (1, 1)),
    ((1,), (1,)),
]


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
def test_matmul_spec(shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(run_spec(frontends.matmul_spec, a, b), np.matmul(a, b))


DTYPE_PAIRS = [
    (np.float32, np.float32), (np.float32, np.float64), (np.int8, np.int8),
    (np.int8, np.uint8), (np.int64, np.float32), (bool, bool), (np.complex64, np.float64),
    (np.complex128, np.complex128), (np.float16, np.float16),
]


@pytest.mark.parametrize("dtype_a, dtype_b", DTYPE_PAIRS)
@pytest.mark.parametrize("spec_fn, numpy_fn, shape_a, shape_b", [
    (frontends.matmul_spec, np.matmul, (2, 3, 4), (4, 5)),
    (frontends.dot_spec, np.dot, (2, 3, 4), (3, 4, 5)),
    (frontends.inner_spec, np.inner, (2, 4), (3, 4)),
    (frontends.outer_spec, np.outer, (2, 3), (4,)),
    (frontends.vdot_spec, np.vdot, (2, 3), (6,)),
    (frontends.tensordot_spec, np.tensordot, (2, 3, 4), (3, 4, 5)),
])
def test_result_dtype_matches_numpy(spec_fn, numpy_fn, shape_a, shape_b, dtype_a, dtype_b):
    a, b = rand(shape_a, dtype_a), rand(shape_b, dtype_b)
    got = np.asarray(run_spec(spec_fn, a, b))
    expected = np.asarray(numpy_fn(a, b))
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    # float16 products are rounded differently by the two paths
    rtol = 1e-2 if np.float16 in (dtype_a, dtype_b) else 1e-5
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_matmul_spec_text():
    # batch broadcasting goes through the ellipsis; 1-d operands lose i / j
    assert frontends.matmul_spec(rand((2, 3)), rand((3, 4)))[0] == "...ik,...kj->...ij"
    assert frontends.matmul_spec(rand((3,)), rand((2, 3, 4)))[0] == "k,...kj->...j"
    assert frontends.matmul_spec(rand((2, 3)), rand((3,)))[0] == "...ik,k->...i"
    assert frontends.matmul_spec(rand((3,)), rand((3,)))[0] == "k,k->"


def test_matmul_spec_accepts_lists():
    subscripts, (a, b) = frontends.matmul_spec([[1, 2]], [[3], [4]])
    assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
    np.testing.assert_array_equal(np.einsum(subscripts, a, b), [[11]])


# ---------------------------------------------------------------- dot, inner

DOT_SHAPES = [
    ((), ()), ((), (3,)), ((2, 3), ()),    # scalars multiply
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
    ((2, 3, 4), (5, 4, 6)),                # a's free axes, then b's (no broadcasting)
    ((2, 1, 4), (3, 2, 4, 6)),
    ((1, 4), (5, 4, 1)),
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (4, 3, 0)),
]


@pytest.mark.parametrize("shape_a, shape_b", DOT_SHAPES)
def test_dot_spec(shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(run_spec(frontends.dot_spec, a, b), np.dot(a, b))


INNER_SHAPES = [
    ((), ()), ((), (3,)), ((2, 3), ()),
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (4, 3)), ((2, 3), (4, 3)),
    ((2, 5, 3), (4, 1, 3)), ((1, 3), (2, 3)),
    ((0, 3), (4, 3)), ((2, 0), (4, 0)),
]


@pytest.mark.parametrize("shape_a, shape_b", INNER_SHAPES)
def test_inner_spec(shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(run_spec(frontends.inner_spec, a, b), np.inner(a, b))


def test_dot_spec_python_scalars():
    # a Python float becomes a float64 0-d array, as in numpy.dot
    b = rand((3,), np.float32)
    assert_same_result(run_spec(frontends.dot_spec, 2.0, b), np.dot(2.0, b))
    assert_same_result(run_spec(frontends.dot_spec, b, 2), np.dot(b, 2))


def test_dot_spec_many_dims_use_ellipsis_for_a():
    a, b = rand((1,) * 30 + (2,)), rand((2, 3))
    subscripts, _ = frontends.dot_spec(a, b)
    assert subscripts == "...k,kl->...l"
    assert_same_result(run_spec(frontends.dot_spec, a, b), np.dot(a, b))


# ---------------------------------------------------------------- tensordot

TENSORDOT_CASES = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),                      # outer product
    ((2, 3), (4, 5), -1),                     # numpy: negative N also means outer
    ((3, 4), (3, 4), 2),                      # full contraction: 0-d array
    ((), (), 0),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (4, 3, 5), ([-2, -1], [-2, 0])),
    ((2, 3, 4), (5, 2), (0, 1)),              # single ints in the pair
    ((2, 3, 4), (5, 2), ((0,), (1,))),
    ((2, 3), (3, 2), ([], [])),
    ((2, 3, 4), (4, 3, 2), (np.array([0, 1, 2]), np.array([2, 1, 0]))),
    ((2, 3), (3, 2), np.int64(1)),
    ((0, 3), (3, 4), 1),
    ((2, 0), (0, 4), 1),
]


@pytest.mark.parametrize("shape_a, shape_b, axes", TENSORDOT_CASES)
def test_tensordot_spec(shape_a, shape_b, axes):
    a, b = rand(shape_a), rand(shape_b)
    got = np.asarray(run_spec(frontends.tensordot_spec, a, b, axes))
    assert_same_result(got, np.tensordot(a, b, axes))


def test_tensordot_spec_text():
    subscripts, _ = frontends.tensordot_spec(rand((2, 3, 4)), rand((4, 3, 5)), ([1, 2], [1, 0]))
    assert subscripts == "abc,cbd->ad"


# ---------------------------------------------------------------- outer, vdot

@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (4,)), ((), ()), ((2, 3), (4,)), ((2, 3), (2, 2)), ((0,), (3,)), ((3,), (0, 2)),
])
def test_outer_spec(shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(run_spec(frontends.outer_spec, a, b), np.outer(a, b))


def test_outer_spec_strided_operand():
    a = rand((4, 6))[:, ::2]
    b = rand((3,))
    assert_same_result(run_spec(frontends.outer_spec, a, b), np.outer(a, b))


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (3,)), ((2, 3), (6,)), ((2, 3), (3, 2)), ((), ()), ((), (1,)), ((0,), (0, 2)),
])
@pytest.mark.parametrize("dtype_a, dtype_b", [
    (np.float64, np.float64), (np.complex128, np.complex128), (np.complex64, np.float32),
    (np.float64, np.complex128), (np.int32, np.int32),
])
def test_vdot_spec(shape_a, shape_b, dtype_a, dtype_b):
    a, b = rand(shape_a, dtype_a), rand(shape_b, dtype_b)
    assert_same_result(run_spec(frontends.vdot_spec, a, b), np.vdot(a, b))


def test_vdot_spec_does_not_modify_input():
    a = rand((3,), np.complex128)
    before = a.copy()
    frontends.vdot_spec(a, a)
    np.testing.assert_array_equal(a, before)


# ---------------------------------------------------------------- errors

ERROR_CASES = [
    # (spec function, numpy function, args)
    (frontends.matmul_spec, np.matmul, ((), (3,))),
    (frontends.matmul_spec, np.matmul, ((3,), ())),
    (frontends.matmul_spec, np.matmul, ((2, 3), (4, 5))),
    (frontends.matmul_spec, np.matmul, ((3,), (4,))),
    (frontends.matmul_spec, np.matmul, ((2, 3), (4,))),
    (frontends.matmul_spec, np.matmul, ((2, 1), (3, 4))),     # k=1 does not broadcast
    (frontends.matmul_spec, np.matmul, ((2, 3), (1, 4))),
    (frontends.matmul_spec, np.matmul, ((2, 3, 4), (3, 4, 5))),  # batch mismatch
    (frontends.dot_spec, np.dot, ((2, 3), (4, 5))),
    (frontends.dot_spec, np.dot, ((3,), (4,))),
    (frontends.dot_spec, np.dot, ((2, 1), (3, 4))),
    (frontends.dot_spec, np.dot, ((2, 3, 4), (5, 3, 6))),
    (frontends.inner_spec, np.inner, ((2, 3), (3, 2))),
    (frontends.inner_spec, np.inner, ((1,), (3,))),
    (frontends.vdot_spec, np.vdot, ((2, 3), (4, 5))),
    (frontends.vdot_spec, np.vdot, ((3,), (4,))),
]


@pytest.mark.parametrize("spec_fn, numpy_fn, shapes", ERROR_CASES)
def test_error_class_matches_numpy(spec_fn, numpy_fn, shapes):
    a, b = (rand(shape) for shape in shapes)
    with pytest.raises(Exception) as numpy_error:
        np.asarray(numpy_fn(a, b))
    with pytest.raises(Exception) as our_error:
        # a batch mismatch surfaces when the spec is parsed, as in einplan.einsum
        run_spec(spec_fn, a, b)
    assert issubclass(numpy_error.type, our_error.type)
    assert our_error.type is ValueError


@pytest.mark.parametrize("shape_a, shape_b, axes", [
    ((2, 3), (3, 2), ([0], [0, 1])),          # ValueError: lengths differ
    ((2, 3), (3, 2), ([0], [0])),             # ValueError: extents differ
    ((2, 3), (3, 2), ([0, 0], [0, 1])),       # ValueError: duplicate axes
    ((2, 3), (3, 2), ([0, -2], [1, -1])),     # ValueError: duplicates after normalizing
    ((2, 3), (3, 2), 3),                      # IndexError: more axes than dims
    ((2, 3), (3, 2), ([5], [0])),             # IndexError: axis out of range
    ((2, 3), (3, 2), ([0, 5], [1, 0])),       # IndexError after the first pair matched
    ((2, 3), (3, 2), 1.5),                    # TypeError
    ((2, 3), (3, 2), ([1.0], [0])),           # TypeError
    ((2, 3), (3, 2), (1,)),                   # ValueError: not a pair
    ((2, 3), (3, 2), ([0], [0], [0])),        # ValueError: not a pair
])
def test_tensordot_error_class_matches_numpy(shape_a, shape_b, axes):
    a, b = rand(shape_a), rand(shape_b)
    with pytest.raises(Exception) as numpy_error:
        np.tensordot(a, b, axes)
    with pytest.raises(Exception) as our_error:
        frontends.tensordot_spec(a, b, axes)
    assert our_error.type is numpy_error.type


def test_error_messages_name_shapes():
    with pytest.raises(ValueError, match=r"\(2,3\) and \(4,5\) not aligned: 3 \(dim 1\) != 4"):
        frontends.dot_spec(rand((2, 3)), rand((4, 5)))
    with pytest.raises(ValueError, match="size 4 is different from 3"):
        frontends.matmul_spec(rand((2, 3)), rand((4, 5)))
    with pytest.raises(ValueError, match="operand 0 does not have enough dimensions"):
        frontends.matmul_spec(np.float64(1.0), rand((3,)))
    with pytest.raises(ValueError, match=r"6 != 20"):
        frontends.vdot_spec(rand((2, 3)), rand((4, 5)))


def test_too_many_labels_is_a_clear_error():
    # numpy.tensordot handles this; einsum has only 52 letters
    a = rand((1,) * 30)
    with pytest.raises(ValueError, match="52"):
        frontends.tensordot_spec(a, a, 0)


# ---------------------------------------------------------------- public wrappers

@pytest.fixture
def einplan_api():
    # the wrappers need einplan.api (and the built kernels behind it)
    return pytest.importorskip("einplan.api", reason="einplan.api not available yet")


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
def test_matmul(einplan_api, shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(frontends.matmul(a, b), np.matmul(a, b))


@pytest.mark.parametrize("shape_a, shape_b", DOT_SHAPES)
def test_dot(einplan_api, shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(frontends.dot(a, b), np.dot(a, b))


@pytest.mark.parametrize("shape_a, shape_b", INNER_SHAPES)
def test_inner(einplan_api, shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(frontends.inner(a, b), np.inner(a, b))


@pytest.mark.parametrize("shape_a, shape_b, axes", TENSORDOT_CASES)
def test_tensordot(einplan_api, shape_a, shape_b, axes):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(frontends.tensordot(a, b, axes), np.tensordot(a, b, axes))


@pytest.mark.parametrize("shape_a, shape_b", [((3,), (4,)), ((2, 3), (2, 2)), ((), ())])
def test_outer(einplan_api, shape_a, shape_b):
    a, b = rand(shape_a), rand(shape_b)
    assert_same_result(frontends.outer(a, b), np.outer(a, b))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_vdot(einplan_api, dtype):
    a, b = rand((2, 3), dtype), rand((6,), dtype)
    assert_same_result(frontends.vdot(a, b), np.vdot(a, b))


LAYOUT_CASES = [
    ("matmul", ((5, 7), (7, 3))), ("matmul", ((4, 5, 7), (4, 7, 3))),
    ("dot", ((5, 7), (7, 3))), ("dot", ((4, 5, 7), (7, 3))),
    ("inner", ((5, 7), (3, 7))), ("tensordot", ((5, 6, 7), (7, 6, 3))),
    ("outer", ((5,), (3,))),
]


@pytest.mark.parametrize("name, shapes", LAYOUT_CASES)
@pytest.mark.parametrize("layout", ["F", "reversed"])
def test_new_results_have_numpys_layout(einplan_api, name, shapes, layout):
    # numpy's products make C-ordered results whatever the operands' layout
    ops = [rand(s) for s in shapes]
    ops = ([np.asfortranarray(x) for x in ops] if layout == "F"
           else [x[(slice(None, None, -1),) * x.ndim] for x in ops])
    args = tuple(ops) + (((1, 2), (1, 0)),) if name == "tensordot" else tuple(ops)
    want = getattr(np, name)(*args)
    got = getattr(frontends, name)(*args)
    assert got.strides == want.strides
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_matmul_out_same_kind(einplan_api):
    a, b = rand((2, 3)), rand((3, 4))
    out = np.empty((2, 4), np.float32)
    assert frontends.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5)
    with pytest.raises(TypeError):  # float -> int is not same_kind (numpy: UFuncTypeError)
        frontends.matmul(a, b, out=np.empty((2, 4), np.int64))


def test_outer_out(einplan_api):
    a, b = rand((2,)), rand((3,))
    out = np.empty((2, 3), np.float32)
    assert frontends.outer(a, b, out=out) is out
    np.testing.assert_allclose(out, np.outer(a, b), rtol=1e-5)


def test_dot_out_must_be_exact(einplan_api):
    a, b = rand((2, 3)), rand((3, 4))
    out = np.empty((2, 4))
    assert frontends.dot(a, b, out=out) is out
    np.testing.assert_allclose(out, np.dot(a, b))
    for bad in (np.empty((2, 4), np.float32), np.empty((4, 2)).T, np.empty((2, 5))):
        with pytest.raises(ValueError):
            np.dot(a, b, out=bad)
        with pytest.raises(ValueError):
            frontends.dot(a, b, out=bad)


# ---------------------------------------------------------------- properties
# The public wrappers against numpy on random shapes (incl. size 0 and 1 and
# broadcasting batch axes), layouts (Fortran, negative, sliced, permuted,
# stride-0) and dtypes; errors must have numpy's exception class.

from hypothesis import given, note  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _einsum_strategies import DTYPES, LAYOUTS, in_layout  # noqa: E402

_EXTENT = st.sampled_from([0, 1, 1, 2, 3, 4, 5, 7])


def _arrays(draw, shapes):
    dts = [draw(st.sampled_from(DTYPES)) for _ in shapes]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ops = []
    for shape, dt in zip(shapes, dts):
        layout = draw(st.sampled_from(LAYOUTS))
        ops.append(in_layout(rng, shape, dt, layout))
        note(f"{tuple(shape)} {np.dtype(dt)} {layout} strides {ops[-1].strides}")
    return ops


def _compare(einplan_fn, numpy_fn, *args, **kwargs):
    try:
        expected = numpy_fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        with pytest.raises(type(exc)):
            einplan_fn(*args, **kwargs)
        return
    got = einplan_fn(*args, **kwargs)
    k = max([1] + [e for op in args if isinstance(op, np.ndarray) for e in op.shape])
    if not _same_type_shape_dtype(got, expected):
        eps = np.finfo(np.asarray(expected).dtype).eps
        scale = max([1.0] + [float(np.max(np.abs(op))) for op in args
                             if isinstance(op, np.ndarray) and op.size])
        np.testing.assert_allclose(got, expected, rtol=8 * k * eps,
                                   atol=8 * k * eps * scale * scale)


@st.composite
def _batch_shapes(draw, core_a, core_b):
    """Broadcast-compatible batch shapes for matmul, size-1 axes included."""
    nb = draw(st.integers(0, 2))
    full = [draw(_EXTENT) for _ in range(nb)]
    ba = [1 if draw(st.booleans()) else e for e in full][draw(st.integers(0, nb)):]
    bb = [1 if draw(st.booleans()) else e for e in full][draw(st.integers(0, nb)):]
    return tuple(ba) + core_a, tuple(bb) + core_b


@given(st.data())
def test_matmul_property(data):
    m, k, n = data.draw(_EXTENT), data.draw(_EXTENT), data.draw(_EXTENT)
    core_a = data.draw(st.sampled_from([(k,), (m, k)]))
    core_b = data.draw(st.sampled_from([(k,), (k, n)]))
    shape_a, shape_b = data.draw(_batch_shapes(core_a, core_b)) \
        if len(core_a) == 2 and len(core_b) == 2 else (core_a, core_b)
    a, b = _arrays(data.draw, [shape_a, shape_b])
    _compare(frontends.matmul, np.matmul, a, b)


@given(st.data())
def test_dot_and_inner_property(data):
    k = data.draw(_EXTENT)
    shape_a = tuple(data.draw(st.lists(_EXTENT, max_size=2))) + (k,)
    shape_b = data.draw(st.sampled_from([(k,), (data.draw(_EXTENT), k, data.draw(_EXTENT))]))
    if data.draw(st.booleans()):
        shape_a = ()  # 0-d operand: elementwise product
    a, b = _arrays(data.draw, [shape_a, shape_b])
    _compare(frontends.dot, np.dot, a, b)
    # inner contracts the LAST axis of both
    b_inner = np.moveaxis(b, -2, -1) if b.ndim > 1 else b
    _compare(frontends.inner, np.inner, a, b_inner)


@given(st.data())
def test_tensordot_property(data):
    shape_a = tuple(data.draw(st.lists(_EXTENT, max_size=4)))
    n_axes = data.draw(st.integers(0, len(shape_a)))
    axes_a = data.draw(st.permutations(range(len(shape_a))))[:n_axes]
    perm_b = data.draw(st.permutations(range(n_axes)))
    extra = tuple(data.draw(st.lists(_EXTENT, max_size=2)))
    shape_b = tuple(shape_a[axes_a[p]] for p in perm_b) + extra
    axes_b = [perm_b.index(i) for i in range(n_axes)]
    a, b = _arrays(data.draw, [shape_a, shape_b])
    axes = data.draw(st.sampled_from([(list(axes_a), axes_b),
                                      ([ax - len(shape_a) for ax in axes_a], axes_b)]))
    _compare(frontends.tensordot, np.tensordot, a, b, axes)


@given(st.data())
def test_outer_and_vdot_property(data):
    shape_a = tuple(data.draw(st.lists(_EXTENT, max_size=3)))
    shape_b = tuple(data.draw(st.lists(_EXTENT, max_size=3)))
    a, b = _arrays(data.draw, [shape_a, shape_b])
    _compare(frontends.outer, np.outer, a, b)
    b2 = _arrays(data.draw, [shape_a])[0]
    _compare(frontends.vdot, np.vdot, a, b2)


@given(st.data())
def test_matmul_out_property(data):
    m, k, n = data.draw(_EXTENT), data.draw(_EXTENT), data.draw(_EXTENT)
    a, b = _arrays(data.draw, [(m, k), (k, n)])
    res = np.matmul(a, b)
    out_layout = data.draw(st.sampled_from(["C", "F", "negative", "sliced", "permuted"]))
    out = in_layout(np.random.default_rng(1), res.shape, res.dtype, out_layout)
    assert frontends.matmul(a, b, out=out) is out
    _compare(lambda *x: out.copy(), lambda *x: res, a, b)
