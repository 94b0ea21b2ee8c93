"""einplan.plan(): reusable plans with constant operands packed once
(DESIGN.md "Prepacked constants", issue 5).

Every result is checked against numpy.einsum; the packing decision, the
packed size, the reference to the constant, thread-count independence, the
call-time checks, re-planning of the variable side for other strides, out=
and concurrent calls each have their own tests.
"""
import gc
import math
import weakref

import numpy as np
import pytest

import einplan
from einplan import _native
from einplan.plan import OUT, GemmStep
from _einsum_strategies import fill as _rand, run_in_threads  # noqa: E402

K = _native._kernels

HAVE_OMP = K is not None and K.config()["build"].get("openmp", False)
needs_omp = pytest.mark.skipif(not HAVE_OMP, reason="built without OpenMP: always 1 thread")




def _tol(dtype, k):
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return dict(rtol=0, atol=0)
    eps = np.finfo(dtype).eps
    return dict(rtol=50 * eps * max(k, 1) ** 0.5, atol=50 * eps * max(k, 1))


def _check(res, ref, dtype, k):
    assert res.shape == np.shape(ref)
    assert np.result_type(res) == np.result_type(ref), (np.result_type(res), np.result_type(ref))
    np.testing.assert_allclose(res, ref, **_tol(dtype, k))


# ------------------------------------------------------------ the tract case

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bs", [1, 3, 6])
def test_tract_case(dtype, bs):
    rng = np.random.default_rng(bs)
    W = _rand(rng, (96, 72), dtype)
    p = einplan.plan("bij,jk->bik", (bs, 7, 96), W, constants=[1])
    assert p.packed is not None, p.describe()
    assert "prepacked" in p.describe()
    assert p.variables == (0,) and p.constants == (1,)
    for _ in range(3):   # fresh data each call, same plan
        A = _rand(rng, (bs, 7, 96), dtype)
        res = p(A)
        _check(res, np.einsum("bij,jk->bik", A, W), dtype, 96)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bs", [1, 3, 6])
def test_tract_case_one_row_per_batch(dtype, bs):
    """The issue's shape: bij with i = 1, so bs = 1 is m = 1 (the planner's
    GEMV kind).  Whether a GEMV plan prepacks is the lead's call (the packed
    GEMM path is slower than the in-place GEMV today); describe() must say
    which, and the result must be right either way."""
    rng = np.random.default_rng(bs + 10)
    W = _rand(rng, (96, 72), dtype)
    p = einplan.plan("bij,jk->bik", (bs, 1, 96), W, constants=[1])
    if bs > 1:
        assert p.packed is not None, p.describe()
    assert ("prepacked" in p.describe()) == (p.packed is not None)
    assert p.variables == (0,) and p.constants == (1,)
    for _ in range(3):   # fresh data each call, same plan
        A = _rand(rng, (bs, 1, 96), dtype)
        res = p(A)
        _check(res, np.einsum("bij,jk->bik", A, W), dtype, 96)
    for V in (np.asfortranarray(A), np.ascontiguousarray(A[::-1])[::-1],
              np.ascontiguousarray(A[:, :, ::-1])[:, :, ::-1]):
        _check(p(V), np.einsum("bij,jk->bik", A, W), dtype, 96)
    out = np.empty((bs, 1, 72), dtype, order="F")
    assert p(A, out=out) is out
    _check(out, np.einsum("bij,jk->bik", A, W), dtype, 96)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tract_case_large_w_fringes_and_blocks(dtype):
    """K > KC and N > NC (several packed k and n blocks) and an n fringe."""
    bk = K.blocking(dtype)
    k_ext = bk["kc"] + 5
    n_ext = bk["nc"] + bk["nr"] + 3
    if k_ext * n_ext > 6_000_000:       # an unusual blocking: keep the test fast
        pytest.skip(reason=f"blocking {bk} makes this test too large")
    rng = np.random.default_rng(1)
    W = _rand(rng, (k_ext, n_ext), dtype)
    p = einplan.plan("bij,jk->bik", (2, 3, k_ext), W, constants=[1])
    assert p.packed is not None
    A = _rand(rng, (2, 3, k_ext), dtype)
    _check(p(A), np.einsum("bij,jk->bik", A, W), dtype, k_ext)
    # a re-planned variable side reads the same packed blocks
    Af = np.asfortranarray(A)
    _check(p(Af), np.einsum("bij,jk->bik", A, W), dtype, k_ext)


def test_tract_shapes_or_arrays_templates_agree():
    rng = np.random.default_rng(2)
    W = _rand(rng, (40, 30), np.float64)
    A = _rand(rng, (3, 5, 40), np.float64)
    p_shape = einplan.plan("bij,jk->bik", (3, 5, 40), W, constants=[1])
    p_array = einplan.plan("bij,jk->bik", A, W, constants=[1])
    p_farr = einplan.plan("bij,jk->bik", np.asfortranarray(A), W, constants=[1])
    ref = np.einsum("bij,jk->bik", A, W)
    for p in (p_shape, p_array, p_farr):
        assert p.packed is not None
        _check(p(A), ref, np.float64, 40)
        _check(p(np.asfortranarray(A)), ref, np.float64, 40)
    # a template is only a template: the plan does not use its data
    p_array2 = einplan.plan("bij,jk->bik", np.zeros_like(A), W, constants=[1])
    _check(p_array2(A), ref, np.float64, 40)


# ------------------------------------------------------------ other configurations

def _cases():
    """(subscripts, shapes, constants, dtype, expect_packed or None)."""
    return [
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.float64, True),
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.float32, True),
        ("ij,jk->ik", [(9, 16), (16, 12)], [1], np.float64, True),
        ("bij,bjk->bik", [(4, 5, 16), (4, 16, 12)], [1], np.float64, True),
        ("bij,bjk->bik", [(4, 5, 16), (4, 16, 12)], [1], np.float32, True),
        ("i,i->", [(17,), (17,)], [1], np.float64, None),
        ("ij,j->i", [(9, 16), (16,)], [1], np.float64, None),
        # the constant on the A side (the rows of the kernel): copied, not packed
        ("ij,jk->ik", [(9, 16), (16, 12)], [0], np.float64, None),
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [0], np.float64, False),
        # two constants
        ("ij,jk->ik", [(9, 16), (16, 12)], [0, 1], np.float64, False),
        ("ij,jk,kl->il", [(9, 16), (16, 12), (12, 7)], [0, 2], np.float64, False),
        ("ij,jk,kl->il", [(9, 16), (16, 12), (12, 7)], [0, 1, 2], np.float64, False),
        # 3-operand chains with one constant (more than one step)
        ("bij,jk,kl->bil", [(3, 5, 16), (16, 12), (12, 7)], [1], np.float64, False),
        ("ij,jk,kl->il", [(9, 16), (16, 12), (12, 7)], [2], np.float32, False),
        ("ij,jk,kl->il", [(9, 16), (16, 12), (12, 7)], [0], np.float64, False),
        # diagonals, sums, broadcasting
        ("bii,ik->bk", [(3, 6, 6), (6, 5)], [1], np.float64, False),
        ("bij,jjk->bik", [(3, 5, 6), (6, 6, 4)], [1], np.float64, False),
        ("bij,jkl->bik", [(3, 5, 6), (6, 4, 2)], [1], np.float64, False),
        ("...ij,jk->...ik", [(2, 3, 5, 16), (16, 12)], [1], np.float64, None),
        ("ij,jk", [(9, 16), (16, 12)], [1], np.float64, None),
        # complex: B packed once in the 1m form (2x2 real blocks)
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.complex128, True),
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.complex64, True),
        ("bij,bjk->bik", [(4, 5, 16), (4, 16, 12)], [1], np.complex64, True),
        # integer dtypes (no packed kernel)
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.int64, False),
        ("bij,jk->bik", [(3, 5, 16), (16, 12)], [1], np.int32, False),
        ("ij,jk->ik", [(9, 16), (16, 12)], [0], np.int64, False),
        ("ij,jk->ik", [(9, 16), (16, 12)], [1], bool, False),
    ]


def _expect_packed_from_plan(p):
    """What the design says: prepacked exactly when the plan is one real GEMM
    with more than one row whose B operand is the only constant (and no
    diagonals); one row (GEMV) streams B in place instead."""
    plan = p._plan
    if plan.fallback is not None or len(plan.steps) != 1:
        return False
    step = plan.steps[0]
    if not isinstance(step, GemmStep) or step.complex_mode not in ("", "1m") or step.c != OUT:
        return False
    if np.dtype(plan.dtype) not in (np.float32, np.float64, np.complex64, np.complex128):
        return False
    if any(len(set(t)) != len(t) for t in p._spec.inputs):
        return False
    if step.m.extent == 1:
        return False
    return step.b in p.constants and step.a not in p.constants and len(p.constants) == 1


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c[0]}-{c[2]}-{np.dtype(c[3]).name}")
def test_configurations(case):
    subs, shapes, consts, dtype, expect = case
    rng = np.random.default_rng(len(subs) + 7 * len(consts))
    arrays = [_rand(rng, s, dtype) for s in shapes]
    ref = np.einsum(subs, *arrays)
    k = max(max(s) for s in shapes)
    for use_arrays in (False, True):
        templates = [arrays[i] if (i in consts or use_arrays) else shapes[i]
                     for i in range(len(shapes))]
        p = einplan.plan(subs, *templates, constants=consts)
        if expect is not None:
            assert (p.packed is not None) == expect, p.describe()
        assert (p.packed is not None) == _expect_packed_from_plan(p), p.describe()
        if p.packed is not None:
            assert "prepacked" in p.describe()
            assert p.packed_nbytes > 0
        else:
            assert p.packed_nbytes == 0
            assert "not packed" in p.describe() or "no constants" in p.describe()
        variables = [arrays[i] for i in range(len(shapes)) if i not in consts]
        res = p(*variables)
        _check(np.asarray(res), ref, dtype, k)
        assert type(res) is type(ref), (type(res), type(ref))
        # fresh variable data, same plan
        new_vars = [_rand(rng, arrays[i].shape, dtype) for i in p.variables]
        ops = list(arrays)
        for i, v in zip(p.variables, new_vars):
            ops[i] = v
        _check(np.asarray(p(*new_vars)), np.einsum(subs, *ops), dtype, k)


def test_constants_common_dtype_default_for_shapes():
    """A shape's dtype is the constants' dtype (here float32)."""
    rng = np.random.default_rng(3)
    W = _rand(rng, (16, 12), np.float32)
    p = einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[1])
    A = _rand(rng, (2, 3, 16), np.float32)
    res = p(A)
    assert res.dtype == np.float32
    _check(res, np.einsum("bij,jk->bik", A, W), np.float32, 16)
    with pytest.raises(ValueError, match="dtype"):
        p(A.astype(np.float64))


def test_explicit_dtype_for_shapes():
    rng = np.random.default_rng(4)
    W = _rand(rng, (16, 12), np.float64)
    p = einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[1], dtype=np.float64)
    A = _rand(rng, (2, 3, 16), np.float64)
    _check(p(A), np.einsum("bij,jk->bik", A, W), np.float64, 16)


def test_scalar_result_is_numpy_scalar():
    rng = np.random.default_rng(5)
    w = _rand(rng, (33,), np.float64)
    x = _rand(rng, (33,), np.float64)
    for consts, args in (([1], ((33,), w)), ([0], (w, (33,)))):
        p = einplan.plan("i,i->", *args, constants=consts)
        res = p(x)
        ref = np.einsum("i,i->", x, w)
        assert type(res) is type(ref)
        np.testing.assert_allclose(res, ref, rtol=1e-13)
    W = _rand(rng, (33, 5), np.float64)
    p = einplan.plan("ij,jk->", (4, 33), W, constants=[1])
    X = _rand(rng, (4, 33), np.float64)
    res = p(X)
    ref = np.einsum("ij,jk->", X, W)
    assert type(res) is type(ref)
    np.testing.assert_allclose(res, ref, rtol=1e-12)


# ------------------------------------------------------------ packed size

def _fringe_bound(K_ext, N_ext, NB, dtype):
    bk = K.blocking(dtype)
    nr, nc = bk["nr"], bk["nc"]
    nc = min(nc, N_ext)
    blocks = math.ceil(N_ext / nc) if N_ext else 0
    return NB * K_ext * blocks * (nr - 1) * np.dtype(dtype).itemsize


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("subs,a_shape,w_shape,nb", [
    ("bij,jk->bik", (77, 1, 512), (512, 1536), 1),    # the tract case
    ("bij,jk->bik", (2, 3, 64), (64, 40), 1),         # an n fringe
    ("bij,jk->bik", (2, 3, 37), (37, 5), 1),          # n < NR: all fringe
    ("bij,bjk->bik", (4, 3, 20), (4, 20, 50), 4),     # batched constant
    ("ij,jk->ik", (3, 700), (700, 30), 1),            # k > KC (float32 KC may be larger)
])
def test_packed_size(dtype, subs, a_shape, w_shape, nb):
    rng = np.random.default_rng(6)
    W = _rand(rng, w_shape, dtype)
    p = einplan.plan(subs, a_shape, W, constants=[1])
    assert p.packed is not None, p.describe()
    K_ext, N_ext = w_shape[-2], w_shape[-1]
    orig = W.nbytes
    fringe = _fringe_bound(K_ext, N_ext, nb, dtype)
    assert p.packed.original_nbytes == orig
    assert p.constant_nbytes == orig
    assert p.packed_nbytes == p.packed.nbytes == p.packed.buffer.nbytes
    assert orig <= p.packed_nbytes <= 1.03 * (orig + fringe), (p.packed_nbytes, orig, fringe)
    assert str(p.packed_nbytes) in p.describe() and str(orig) in p.describe()
    if N_ext % K.blocking(dtype)["nr"] == 0 and N_ext <= K.blocking(dtype)["nc"]:
        assert p.packed_nbytes == orig   # no fringe, no padding at all
    A = _rand(rng, a_shape, dtype)
    _check(p(A), np.einsum(subs, A, W), dtype, K_ext)


def test_packed_buffer_is_aligned_and_opaque():
    W = np.ones((64, 48))
    p = einplan.plan("ij,jk->ik", (5, 64), W, constants=[1])
    assert p.packed.buffer.ctypes.data % 64 == 0
    assert not np.shares_memory(p.packed.buffer, W)


# ------------------------------------------------------------ no reference kept

@pytest.mark.parametrize("subs,shapes,const,packed", [
    ("bij,jk->bik", [(3, 5, 40), (40, 30)], 1, True),
    ("bij,bjk->bik", [(3, 5, 40), (3, 40, 30)], 1, True),
    ("ij,jk->ik", [(5, 40), (40, 30)], 0, False),
    ("bij,jk->bik", [(3, 5, 40), (40, 30)], 0, False),
    ("bij,jk->bik", [(3, 5, 40), (40, 30)], 1, False),   # int64: copied
])
def test_no_reference_to_the_constant(subs, shapes, const, packed):
    rng = np.random.default_rng(7)
    dtype = np.float64 if packed or const == 0 else np.int64
    Wc = _rand(rng, shapes[const], dtype)
    Wsave = Wc.copy()
    wr = weakref.ref(Wc)
    args = [Wc if i == const else s for i, s in enumerate(shapes)]
    p = einplan.plan(subs, *args, constants=[const])
    assert (p.packed is not None) == packed, p.describe()
    del Wc, args
    gc.collect()
    assert wr() is None, "the plan (or something it made) keeps the constant alive"
    V = _rand(rng, shapes[1 - const], dtype)
    ops = [Wsave, V] if const == 0 else [V, Wsave]
    _check(p(V), np.einsum(subs, *ops), dtype, 40)


def test_no_reference_to_a_view_constant_or_its_base():
    """A constant given as a view (transposed W): neither the view nor its
    base stay alive."""
    base = np.random.default_rng(8).standard_normal((30, 40))
    ref_W = base.T.copy()
    wr_base = weakref.ref(base)
    view = base.T
    wr_view = weakref.ref(view)
    p = einplan.plan("bij,jk->bik", (2, 3, 40), view, constants=[1])
    del base, view
    gc.collect()
    assert wr_base() is None and wr_view() is None
    A = np.random.default_rng(9).standard_normal((2, 3, 40))
    _check(p(A), np.einsum("bij,jk->bik", A, ref_W), np.float64, 40)


def test_mutating_the_original_after_planning_has_no_effect():
    rng = np.random.default_rng(10)
    for consts, args in (([1], ((2, 3, 16), None)), ([0], (None, (16, 12)))):
        W = _rand(rng, (2, 3, 16) if consts == [0] else (16, 12), np.float64)
        saved = W.copy()
        a = tuple(W if x is None else x for x in args)
        p = einplan.plan("bij,jk->bik", *a, constants=consts)
        W[...] = np.nan
        V = _rand(rng, a[1 - consts[0]], np.float64)
        ops = [saved, V] if consts == [0] else [V, saved]
        _check(p(V), np.einsum("bij,jk->bik", *ops), np.float64, 16)


# ------------------------------------------------------------ threads

@needs_omp
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_packed_form_independent_of_threads(dtype, restore_threads):
    rng = np.random.default_rng(11)
    W = _rand(rng, (300, 420), dtype)
    einplan.set_num_threads(1)
    p1 = einplan.plan("bij,jk->bik", (6, 100, 300), W, constants=[1])
    einplan.set_num_threads(2)
    p2 = einplan.plan("bij,jk->bik", (6, 100, 300), W, constants=[1])
    assert p1.packed is not None and p2.packed is not None
    assert p1.packed.signature == p2.packed.signature
    assert p1.packed.buffer.tobytes() == p2.packed.buffer.tobytes()
    A = _rand(rng, (6, 100, 300), dtype)
    einplan.set_num_threads(1)
    r1 = p1(A)
    r1b = p2(A)
    einplan.set_num_threads(2)
    r2 = p1(A)
    r2b = p2(A)
    assert np.array_equal(r1, r2) and np.array_equal(r1, r1b) and np.array_equal(r1, r2b)
    _check(r1, np.einsum("bij,jk->bik", A, W), dtype, 300)


# ------------------------------------------------------------ call checks

def test_wrong_count_shape_dtype():
    rng = np.random.default_rng(12)
    W = _rand(rng, (16, 12), np.float64)
    A = _rand(rng, (2, 3, 16), np.float64)
    p = einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[1])
    with pytest.raises(ValueError, match=r"takes 1 variable operand"):
        p()
    with pytest.raises(ValueError, match=r"takes 1 variable operand"):
        p(A, A)
    with pytest.raises(ValueError, match=r"shape \(2, 3, 15\).*\(2, 3, 16\)"):
        p(A[:, :, :15])
    with pytest.raises(ValueError, match=r"shape"):
        p(A[0])
    with pytest.raises(ValueError, match=r"shape"):
        p(A[None])
    with pytest.raises(ValueError, match=r"dtype float32.*float64"):
        p(A.astype(np.float32))
    with pytest.raises(ValueError, match=r"dtype"):
        p(A.astype(np.complex128))
    with pytest.raises(ValueError, match=r"dtype"):
        p(A.astype(np.int64))
    # the plan still works after the errors
    _check(p(A), np.einsum("bij,jk->bik", A, W), np.float64, 16)


def test_wrong_count_shape_dtype_copied_path():
    rng = np.random.default_rng(13)
    M1 = _rand(rng, (9, 16), np.float64)
    p = einplan.plan("ij,jk,kl->il", M1, (16, 12), (12, 7), constants=[0])
    assert p.packed is None
    B, C = _rand(rng, (16, 12), np.float64), _rand(rng, (12, 7), np.float64)
    with pytest.raises(ValueError, match="takes 2 variable operand"):
        p(B)
    with pytest.raises(ValueError, match="shape"):
        p(B, C[:, :6])
    with pytest.raises(ValueError, match="dtype"):
        p(B, C.astype(np.float32))
    _check(p(B, C), np.einsum("ij,jk,kl->il", M1, B, C), np.float64, 16)


def test_plan_construction_errors():
    W = np.ones((16, 12))
    with pytest.raises(ValueError, match="operand positions"):
        einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[2])
    with pytest.raises(ValueError, match="operand positions"):
        einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[-1])
    with pytest.raises(TypeError, match="constant operand 1 must be an array"):
        einplan.plan("bij,jk->bik", (2, 3, 16), (16, 12), constants=[1])
    with pytest.raises(ValueError):
        einplan.plan("bij,jk->bik", (2, 3, 15), W, constants=[1])   # j mismatch


# ------------------------------------------------------------ other strides of the variable

def _variants(A):
    """Views of A's values (same shape) with other stride patterns."""
    b, i, j = A.shape
    big = np.zeros((b, 2 * i, j + 5), A.dtype)
    big[:, ::2, 2:2 + j] = A
    yield "fortran", np.asfortranarray(A)
    yield "rev-b", np.ascontiguousarray(A[::-1])[::-1]
    yield "rev-i", np.ascontiguousarray(A[:, ::-1])[:, ::-1]
    yield "rev-j(contracted)", np.ascontiguousarray(A[:, :, ::-1])[:, :, ::-1]
    yield "sliced", big[:, ::2, 2:2 + j]
    yield "transposed-memory", np.ascontiguousarray(A.transpose(2, 0, 1)).transpose(1, 2, 0)
    yield "broadcast-b", None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bs", [1, 3])
def test_variable_with_other_strides(dtype, bs):
    rng = np.random.default_rng(14 + bs)
    W = _rand(rng, (40, 30), dtype)
    A = _rand(rng, (bs, 7, 40), dtype)
    p = einplan.plan("bij,jk->bik", (bs, 7, 40), W, constants=[1])
    assert p.packed is not None
    ref = np.einsum("bij,jk->bik", A, W)
    for name, V in _variants(A):
        if V is None:   # a stride-0 axis (read-only broadcast view)
            V = np.broadcast_to(A[:1], A.shape)
            r = np.einsum("bij,jk->bik", V, W)
        else:
            np.testing.assert_array_equal(V, A)
            r = ref
        for _ in range(2):   # the re-planned variant is cached: run it twice
            _check(p(V), r, dtype, 40)
        if name != "broadcast-b":
            assert not np.shares_memory(p(V), V)
    # and the planned layout still works after the variants
    _check(p(A), ref, dtype, 40)


@pytest.mark.parametrize("spec,a_shape,w_shape,dtype,packed", [
    ("bij,bjk->bik", (4, 5, 20), (4, 20, 30), np.float64, True),     # batched constant
    ("bij,jk->bik", (3, 7, 40), (40, 30), np.int64, False),          # copied (int64) path
], ids=["batched-constant", "copied-path"])
def test_variable_other_strides(spec, a_shape, w_shape, dtype, packed):
    rng = np.random.default_rng(16)
    W = _rand(rng, w_shape, dtype)
    A = _rand(rng, a_shape, dtype)
    p = einplan.plan(spec, a_shape, W, constants=[1])
    assert (p.packed is not None) == packed
    ref = np.einsum(spec, A, W)
    for name, V in _variants(A):
        if V is None:
            continue
        _check(p(V), ref, dtype, a_shape[-1])


def test_unaligned_variable():
    rng = np.random.default_rng(18)
    W = _rand(rng, (16, 12), np.float64)
    A = _rand(rng, (2, 3, 16), np.float64)
    raw = np.zeros(A.nbytes + 1, np.uint8)
    U = raw[1:].view(np.float64).reshape(A.shape)
    U[...] = A
    assert not U.flags.aligned
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    _check(p(U), np.einsum("bij,jk->bik", A, W), np.float64, 16)


def test_list_variable():
    W = np.arange(12.0).reshape(4, 3)
    p = einplan.plan("ij,jk->ik", (2, 4), W, constants=[1])
    x = [[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0]]
    _check(p(x), np.einsum("ij,jk->ik", np.array(x), W), np.float64, 4)


# ------------------------------------------------------------ out=

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("packed", [True, False])
def test_out(order, packed):
    rng = np.random.default_rng(19)
    dtype = np.float64 if packed else np.int64
    W = _rand(rng, (40, 30), dtype)
    A = _rand(rng, (3, 7, 40), dtype)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    assert (p.packed is not None) == packed
    out = np.full((3, 7, 30), -99 if dtype == np.int64 else np.nan, dtype=dtype, order=order)
    res = p(A, out=out)
    assert res is out
    _check(out, np.einsum("bij,jk->bik", A, W), dtype, 40)
    # a strided out= (every other row of a bigger array)
    big = np.full((3, 14, 30), 7, dtype=dtype)
    view = big[:, ::2]
    assert p(A, out=view) is view
    _check(view, np.einsum("bij,jk->bik", A, W), dtype, 40)
    assert np.all(big[:, 1::2] == 7)   # nothing outside out= is written


@pytest.mark.parametrize("packed", [True, False])
def test_out_wrong_shape_or_type(packed):
    dtype = np.float64 if packed else np.int64
    W = np.ones((40, 30), dtype)
    A = np.ones((3, 7, 40), dtype)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    assert (p.packed is not None) == packed
    for bad in (np.empty((3, 7, 31), dtype), np.empty((3, 30, 7), dtype), np.empty((7, 30), dtype)):
        with pytest.raises(ValueError):
            p(A, out=bad)
    with pytest.raises(TypeError):
        p(A, out=[[0.0]])
    ro = np.empty((3, 7, 30), dtype)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        p(A, out=ro)


def test_out_wrong_dtype_packed():
    W = np.ones((40, 30))
    p = einplan.plan("bij,jk->bik", (3, 7, 40), W, constants=[1])
    with pytest.raises(ValueError, match="dtype"):
        p(np.ones((3, 7, 40)), out=np.empty((3, 7, 30), np.float32))


@pytest.mark.parametrize("packed", [True, False])
def test_out_overlapping_the_variable(packed):
    """out= is the variable operand itself (j == k): numpy.einsum and
    einplan.einsum give the product of the old values; so must a plan.
    K > KC so that the kernel re-reads A after writing the first k block."""
    dtype = np.float64 if packed else np.int64
    kc = K.blocking(np.float64)["kc"]
    n = kc + 16
    rng = np.random.default_rng(20)
    W = _rand(rng, (n, n), dtype)
    A = _rand(rng, (1, 4, n), dtype)
    ref = np.einsum("bij,jk->bik", A, W)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    assert (p.packed is not None) == packed
    A2 = A.copy()
    res = p(A2, out=A2)
    assert res is A2
    _check(A2, ref, dtype, n)


def test_out_scalar_result():
    w = np.arange(5.0)
    p = einplan.plan("i,i->", (5,), w, constants=[1])
    out = np.empty(())
    assert p(np.ones(5), out=out) is out
    assert out[()] == 10.0


# ------------------------------------------------------------ repeat, fresh outputs, threads

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_repeated_calls_identical_and_fresh(dtype):
    rng = np.random.default_rng(21)
    W = _rand(rng, (64, 50), dtype)
    A = _rand(rng, (3, 9, 64), dtype)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    first = p(A)
    for _ in range(5):
        again = p(A)
        assert np.array_equal(first, again)
        assert again is not first and not np.shares_memory(first, again)
        assert again.flags.writeable
    Af = np.asfortranarray(A)
    first_f = p(Af)
    for _ in range(3):
        assert np.array_equal(first_f, p(Af))


def test_concurrent_calls_from_threads():
    rng = np.random.default_rng(22)
    W = _rand(rng, (256, 200), np.float64)
    p = einplan.plan("bij,jk->bik", (3, 40, 256), W, constants=[1])
    As = [_rand(rng, (3, 40, 256), np.float64) for _ in range(6)]
    As += [np.asfortranarray(a) for a in As[:3]]    # re-planned variants, concurrently
    refs = [np.einsum("bij,jk->bik", a, W) for a in As]
    Wc = _rand(rng, (256, 200), np.complex128)
    pc = einplan.plan("bij,jk->bik", (3, 40, 256), Wc, constants=[1])
    Ac = _rand(rng, (3, 40, 256), np.complex128)
    refc = np.einsum("bij,jk->bik", Ac, Wc)
    def work(t):
        for rep in range(15):
            i = (t * 5 + rep) % len(As)
            np.testing.assert_allclose(p(As[i]), refs[i], rtol=1e-10, atol=1e-10)
            if rep % 5 == t % 5:
                out = np.empty((3, 40, 200), order="F")
                p(As[i], out=out)
                np.testing.assert_allclose(out, refs[i], rtol=1e-10, atol=1e-10)
            if rep % 7 == 0:
                np.testing.assert_allclose(pc(Ac), refc, rtol=1e-10, atol=1e-10)

    run_in_threads(work)


def test_zero_variables_all_constant():
    rng = np.random.default_rng(23)
    A = _rand(rng, (3, 5, 16), np.float64)
    W = _rand(rng, (16, 12), np.float64)
    p = einplan.plan("bij,jk->bik", A, W, constants=[0, 1])
    assert p.variables == ()
    _check(p(), np.einsum("bij,jk->bik", A, W), np.float64, 16)
    with pytest.raises(ValueError):
        p(A)


def test_empty_extents():
    W = np.ones((16, 12))
    p = einplan.plan("bij,jk->bik", (0, 5, 16), W, constants=[1])
    res = p(np.ones((0, 5, 16)))
    assert res.shape == (0, 5, 12)
    p = einplan.plan("bij,jk->bik", (2, 5, 0), np.ones((0, 12)), constants=[1])
    res = p(np.ones((2, 5, 0)))
    assert res.shape == (2, 5, 12) and np.all(res == 0)


def test_repr_and_explain():
    W = np.ones((16, 12))
    p = einplan.plan("bij,jk->bik", (2, 3, 16), W, constants=[1])
    assert "bij,jk->bik" in repr(p) and "prepacked" in repr(p)
    text = str(p.explain())
    assert "bij,jk->bik" in text


def test_other_kernel_set_after_packing():
    """The packed form depends on the kernel set: after set_isa() a plan
    packed for another one must not silently misread its buffer -- a clear
    ValueError (it holds no copy to repack from) or a right answer."""
    others = [i for i in K.available_isas() if i != K.isa()]
    if not others:
        pytest.skip(reason="one kernel set only")
    rng = np.random.default_rng(24)
    W = _rand(rng, (40, 30), np.float64)
    A = _rand(rng, (3, 7, 40), np.float64)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1])
    assert p.packed is not None
    ref = np.einsum("bij,jk->bik", A, W)
    prev = K.isa()
    try:
        for other in others:
            K.set_isa(other)
            for V in (A, np.asfortranarray(A)):
                try:
                    res = p(V)
                except ValueError as exc:
                    assert "pack" in str(exc)
                else:
                    _check(res, ref, np.float64, 40)
    finally:
        K.set_isa(prev)
    _check(p(A), ref, np.float64, 40)


@pytest.mark.parametrize("how", ["reversed", "fortran", "broadcast"])
def test_constant_with_other_strides(how):
    rng = np.random.default_rng(25)
    W = _rand(rng, (16, 12), np.float64)
    if how == "reversed":
        Wv = np.ascontiguousarray(W[::-1, ::-1])[::-1, ::-1]
    elif how == "fortran":
        Wv = np.asfortranarray(W)
    else:
        Wv = np.broadcast_to(W[:1], W.shape)
    A = _rand(rng, (2, 3, 16), np.float64)
    p = einplan.plan("bij,jk->bik", A.shape, Wv, constants=[1])
    assert p.packed is not None
    _check(p(A), np.einsum("bij,jk->bik", A, Wv), np.float64, 16)


@pytest.mark.parametrize("order", ["C", "F"])
def test_order_option(order):
    rng = np.random.default_rng(26)
    W = _rand(rng, (16, 12), np.float64)
    A = _rand(rng, (2, 3, 16), np.float64)
    p = einplan.plan("bij,jk->bik", A.shape, W, constants=[1], order=order)
    res = p(A)
    flag = "C_CONTIGUOUS" if order == "C" else "F_CONTIGUOUS"
    assert res.flags[flag]
    _check(res, np.einsum("bij,jk->bik", A, W), np.float64, 16)


def _field(shape, rng, fill=True):
    """A float64 view whose byte strides are not whole elements (the 'a'
    field of a structured array); the 'b' field is a canary."""
    rec = np.zeros(shape, dtype=[("a", "f8"), ("b", "f4")])
    if fill:
        rec["a"] = rng.standard_normal(shape)
    rec["b"] = 7
    return rec, rec["a"]


@pytest.mark.parametrize("packed", [True, False])
def test_variable_and_out_with_strides_not_in_whole_elements(packed):
    rng = np.random.default_rng(27)
    dtype = np.float64
    W = _rand(rng, (4, 3), dtype)
    rec_a, A = _field((2, 5, 4), rng)
    assert A.strides[-1] % A.itemsize != 0
    ref = np.einsum("bij,jk->bik", A, W)
    Wi = (W * 4).astype(np.int64)
    p = einplan.plan("bij,jk->bik", (2, 5, 4), W if packed else Wi, constants=[1])
    if not packed:
        A = (A * 4).astype(np.int64)   # the copied path: einsum handles the layout
        ref = np.einsum("bij,jk->bik", A, Wi)
    assert (p.packed is not None) == packed
    _check(p(A), ref, ref.dtype, 4)
    if packed:
        rec_o, out = _field((2, 5, 3), rng, fill=False)
        for V in (np.ascontiguousarray(A), A):
            assert p(V, out=out) is out
            _check(out, ref, dtype, 4)
            assert np.all(rec_o["b"] == 7), "wrote outside out='s field"
        assert np.all(rec_a["b"] == 7)


def test_constant_with_strides_not_in_whole_elements():
    rng = np.random.default_rng(28)
    _, Wf = _field((4, 3), rng)
    A = _rand(rng, (2, 5, 4), np.float64)
    p = einplan.plan("bij,jk->bik", A.shape, Wf, constants=[1])
    _check(p(A), np.einsum("bij,jk->bik", A, Wf), np.float64, 4)


# ------------------------------------------------------------ compiled runner
@pytest.mark.parametrize("spec,shapes", [("ij,jk->ik", [(3, 3), (3, 3)]), ("i,i->", [(8,), (8,)]),
                                         ("bij,bjk->bik", [(8, 4, 4), (8, 4, 4)]),
                                         ("ij,kj->ik", [(5, 7), (9, 7)])])
def test_plan_runner_matches_general_path(spec, shapes):
    """A constant-free plan of one GEMM or one nest runs through its compiled
    runner (PlanRunner, NestPlanRunner); its results (type, shape, values)
    equal einsum's, and an operand with other strides, dtype or byte order,
    or not an array, falls back to the general path instead of being
    misread."""
    rng = np.random.default_rng(1)
    ops = [rng.standard_normal(s) for s in shapes]
    p = einplan.plan(spec, *shapes)
    assert p._runner is not None
    ref = np.einsum(spec, *ops)
    res = p(*ops)
    assert type(res) is type(ref) and np.shape(res) == np.shape(ref)
    np.testing.assert_allclose(res, ref, rtol=1e-12, atol=1e-12)
    assert p._runner(*ops) is not None            # the compiled path answered
    f_ops = [np.asfortranarray(o) for o in ops]
    if any(f.strides != o.strides for f, o in zip(f_ops, ops)):
        assert p._runner(*f_ops) is None            # strides differ: general path
    np.testing.assert_allclose(p(*f_ops), ref, rtol=1e-12, atol=1e-12)
    assert p._runner(ops[0]) is None                # wrong count: general path raises
    assert p._runner(*[o.astype(np.float32) for o in ops]) is None    # another dtype
    assert p._runner(*[o.tolist() for o in ops]) is None              # not arrays
    swapped = [o.astype(o.dtype.newbyteorder()) for o in ops]         # byte-swapped
    assert p._runner(*swapped) is None
    np.testing.assert_allclose(p(*swapped), ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        p(ops[0])
