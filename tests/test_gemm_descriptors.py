"""Bad GEMM descriptors raise ValueError / TypeError before any C runs, and
leave C untouched -- never a crash.  The cases that would read or write out
of bounds if a check were missing run in one subprocess, so a segfault fails
those tests instead of killing the session."""
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _gemm_util import describe  # noqa: E402

from einplan import _native  # noqa: E402

K = _native._kernels

I64 = 2 ** 63


def _ops(dt=np.float64):
    A = np.arange(20, dtype=dt).reshape(4, 5)
    B = np.arange(30, dtype=dt).reshape(5, 6)
    C = np.zeros((4, 6), dtype=dt)
    return A, B, C


def _good(A, B, C):
    return describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")


def _with(**kw):
    """A builder: the good 4x5 @ 5x6 problem with some groups replaced."""
    def build():
        A, B, C = _ops()
        m, n, k, batch = _good(A, B, C)
        g = dict(m=m, n=n, k=k, batch=batch)
        g.update(kw)
        return A, B, C, g
    return build


def _ops_case(fn):
    """A builder from fn(A, B, C) -> (A, B, C, groups dict)."""
    def build():
        return fn(*_ops())
    return build


# ---------------------------------------------------------------- dangerous
# name: (builder, allowed exception names)
VE = ("ValueError",)
VE_TE = ("ValueError", "TypeError")


def _flat_A_sum_of_groups(A, B, C):
    # m alone reaches 12, k alone 8: each inside A's 20 elements, together 20
    A = np.arange(20.0)
    return A, B, C, dict(m=((4, 4, 6),), n=((6, 1, 1),), k=((5, 2, 6),), batch=())


def _reversed_A(A, B, C):
    # A's data pointer is at its last element: forward strides leave it
    A = A[::-1, ::-1]
    return A, B, C, dict(m=((4, 5, 6),), n=((6, 1, 1),), k=((5, 1, 6),), batch=())


def _view_of_bigger(A, B, C):
    # C is a view of a larger buffer: the check is against C's own memory
    big = np.zeros((8, 6))
    C = big[:4]
    return A, B, C, dict(m=((5, 5, 6),), n=((6, 1, 1),), k=((5, 1, 6),), batch=())


def _empty_A_read(A, B, C):
    A = np.empty((4, 0))
    return A, B, C, dict(m=((4, 5, 6),), n=((6, 1, 1),), k=((5, 1, 6),), batch=())


def _broadcast_A_strided(A, B, C):
    # A broadcast (stride 0 along m) but the descriptor walks m with stride 5
    A = np.broadcast_to(np.arange(5.0), (4, 5))
    return A, B, C, dict(m=((4, 5, 6),), n=((6, 1, 1),), k=((5, 1, 6),), batch=())


DANGEROUS = {
    "m_extent_too_large": (_with(m=((5, 5, 6),)), VE),
    "n_extent_too_large": (_with(n=((7, 1, 1),)), VE),
    "k_extent_too_large": (_with(k=((6, 1, 6),)), VE),
    "k_stride_past_end": (_with(k=((5, 2, 6),)), VE),
    "c_stride_past_end": (_with(n=((6, 1, 2),)), VE),
    "a_negative_reach": (_with(m=((4, -5, 6),)), VE),
    "b_negative_reach": (_with(n=((6, -1, 1),)), VE),
    "c_negative_reach": (_with(n=((6, 1, -1),)), VE),
    "batch_reach": (_with(batch=((2, 20, 0, 0),)), VE),
    "batch_negative_reach_c": (_with(batch=((2, 0, 0, -24),)), VE),
    "sum_of_groups_past_end": (_ops_case(_flat_A_sum_of_groups), VE),
    "reversed_view_forward_strides": (_ops_case(_reversed_A), VE),
    "reach_into_base_of_view": (_ops_case(_view_of_bigger), VE),
    "empty_operand_read": (_ops_case(_empty_A_read), VE),
    "broadcast_operand_walked": (_ops_case(_broadcast_A_strided), VE),
    # extents whose product overflows int64 (strides 0: in bounds)
    "m_extent_product_overflow": (_with(m=((2 ** 32, 0, 0), (2 ** 32, 0, 0))), VE),
    "k_extent_product_overflow": (_with(k=((2 ** 62, 0, 0), (4, 0, 0))), VE),
    "batch_extent_product_overflow": (
        _with(batch=((2 ** 31, 0, 0, 0), (2 ** 31, 0, 0, 0), (4, 0, 0, 0))), VE),
    # extent x stride overflows int64 (would wrap to an in-bounds offset)
    "stride_extent_overflow": (_with(m=((2 ** 40, 2 ** 40, 0),)), VE),
    "stride_extent_overflow_wraps_to_zero": (_with(m=((3, 2 ** 63 - 2 ** 62, 0),)), VE),
    "stride_extent_overflow_negative": (_with(k=((2 ** 33, 0, -(2 ** 31)),)), VE),
    "int64_min_stride": (_with(m=((3, -I64, 6),)), VE),
    "int64_min_stride_extent2": (_with(m=((2, -I64, 6),)), VE),
    "int64_max_stride": (_with(n=((2, 1, I64 - 1),)), VE),
    # Python ints that do not fit int64 at all
    "stride_beyond_int64": (_with(m=((4, 2 ** 64 + 5, 6),)), VE_TE),
    "extent_beyond_int64": (_with(n=((2 ** 64 + 6, 1, 1),)), VE_TE),
}


def _run_one(build):
    A, B, C, g = build()
    C0 = C.copy()
    try:
        _native.gemm(A, B, C, g["m"], g["n"], g["k"], g["batch"], 1.0, 0.0)
    except Exception as e:                          # noqa: BLE001
        return type(e).__name__, np.array_equal(C, C0, equal_nan=True)
    return "no error", np.array_equal(C, C0, equal_nan=True)


def _main():
    """Subprocess entry: one line per dangerous case, flushed, so a crash
    shows which case it was."""
    for name, (build, _) in DANGEROUS.items():
        print(f"START {name}", flush=True)
        exc, same = _run_one(build)
        print(f"DONE {name} {exc.replace(' ', '_')} {int(same)}", flush=True)


@pytest.fixture(scope="module")
def dangerous_results():
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); "
            "import test_gemm_descriptors as t; t._main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    done, started = {}, []
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts[0] == "START":
            started.append(parts[1])
        elif parts[0] == "DONE":
            done[parts[1]] = (parts[2], parts[3] == "1")
    return r, done, started


@pytest.mark.parametrize("name", list(DANGEROUS))
def test_dangerous_descriptor_rejected(dangerous_results, name):
    r, done, started = dangerous_results
    if name not in done:
        crashed = started[-1] if started else "?"
        pytest.fail(f"subprocess died (rc {r.returncode}) in case {crashed!r}; "
                    f"stderr: {r.stderr[-2000:]}")
    exc, same = done[name]
    allowed = DANGEROUS[name][1]
    assert exc in allowed, f"{name}: got {exc}, want one of {allowed}"
    assert same, f"{name}: C was modified although the call was refused"


def test_dangerous_subprocess_exits_cleanly(dangerous_results):
    r, done, _ = dangerous_results
    assert r.returncode == 0, r.stderr[-2000:]
    assert set(done) == set(DANGEROUS)


# ---------------------------------------------------------------- in process

def _call(A, B, C, g):
    return _native.gemm(A, B, C, g["m"], g["n"], g["k"], g["batch"], 1.0, 0.0)


def test_good_descriptor_runs():
    A, B, C = _ops()
    _call(A, B, C, dict(zip(("m", "n", "k", "batch"), _good(A, B, C))))
    assert np.array_equal(C, A @ B)


def test_exact_bounds_accepted():
    """The largest in-bounds descriptors (every element reached) pass: the
    bounds check is not off by one."""
    A = np.arange(20.0)
    B, C = _ops()[1:]
    _call(A, B, C, dict(m=((4, 4, 6),), n=((6, 1, 1),), k=((5, 1, 6),), batch=()))
    assert np.array_equal(C, A[np.arange(4)[:, None] * 4 + np.arange(5)] @ B)
    # negative strides reaching exactly to element 0
    A, B, C = _ops()
    Ar = A[::-1, ::-1]
    Cr = np.zeros((4, 6))[::-1, ::-1]
    _call(Ar, B, Cr, dict(m=((4, -5, -6),), n=((6, 1, -1),), k=((5, -1, 6),), batch=()))
    assert np.array_equal(Cr, Ar @ B)


@pytest.mark.parametrize("ext", [-1, -5, -(2 ** 40)])
@pytest.mark.parametrize("role", ["m", "n", "k", "batch"])
def test_negative_extent(role, ext):
    A, B, C = _ops()
    g = dict(zip(("m", "n", "k", "batch"), _good(A, B, C)))
    nst = 3 if role == "batch" else 2
    g[role] = g[role] + ((ext,) + (0,) * nst,)
    with pytest.raises(ValueError):
        _call(A, B, C, g)
    assert (C == 0).all()


@pytest.mark.parametrize("which", ["A", "B", "C"])
@pytest.mark.parametrize("other", [np.float32, np.float16, np.int64, np.complex128])
def test_mismatched_dtypes(which, other):
    ops = dict(zip("ABC", _ops()))
    g = dict(zip(("m", "n", "k", "batch"), _good(*ops.values())))
    ops[which] = ops[which].astype(other)
    C0 = ops["C"].copy()
    with pytest.raises(TypeError):
        _call(ops["A"], ops["B"], ops["C"], g)
    assert np.array_equal(ops["C"], C0)


# (complex64 / complex128 are the kernel's own: the 1m GEMM, tests/test_complex.py)
@pytest.mark.parametrize("dt", [np.int64, np.int32, np.float16, np.clongdouble, np.bool_,
                                np.longdouble, object, ">f8", ">f4", ">c16"])
def test_non_float_dtypes(dt):
    A, B, C = (x.astype(dt) for x in _ops())
    g = dict(zip(("m", "n", "k", "batch"), _good(*_ops())))
    with pytest.raises(TypeError):
        _call(A, B, C, g)


@pytest.mark.parametrize("pos", [0, 1, 2])
@pytest.mark.parametrize("bad", [None, "list"], ids=["None", "list"])
def test_not_arrays(pos, bad):
    """A, B, C must be ndarrays: anything else is a TypeError (an
    AttributeError from inside the checks is not the contract)."""
    ops = list(_ops())
    g = dict(zip(("m", "n", "k", "batch"), _good(*ops)))
    ops[pos] = ops[pos].tolist() if bad == "list" else None
    with pytest.raises(TypeError):
        _call(*ops, g)


def test_read_only_c():
    A, B, C = _ops()
    g = dict(zip(("m", "n", "k", "batch"), _good(A, B, C)))
    C.flags.writeable = False
    with pytest.raises(ValueError):
        _call(A, B, C, g)
    assert (C == 0).all()
    Cb = np.broadcast_to(np.zeros(6), (4, 6))                   # read-only view
    with pytest.raises(ValueError):
        _call(A, B, Cb, dict(g, m=((4, 5, 0),)))


@pytest.mark.parametrize("role,axis", [
    ("m", (4, 5)), ("m", (4, 5, 6, 0)), ("n", (6,)), ("k", (5, 1, 6, 7, 8)),
    ("batch", (1, 0, 0)), ("batch", (1, 0, 0, 0, 0)), ("k", ()),
])
def test_wrong_axis_tuple_length(role, axis):
    """One axis with the wrong number of entries (next to a good one)."""
    A, B, C = _ops()
    g = dict(zip(("m", "n", "k", "batch"), _good(A, B, C)))
    g[role] = g[role] + (axis,)
    with pytest.raises(ValueError):
        _call(A, B, C, g)
    assert (C == 0).all()


@pytest.mark.parametrize("bad", [5, None, "ab", 2.0])
def test_axis_not_a_tuple(bad):
    A, B, C = _ops()
    g = dict(zip(("m", "n", "k", "batch"), _good(A, B, C)))
    g["n"] = (bad,)
    with pytest.raises((TypeError, ValueError)):
        _call(A, B, C, g)
    assert (C == 0).all()


@pytest.mark.parametrize("role", ["m", "n", "k", "batch"])
def test_too_many_axes(role):
    A, B, C = _ops()
    g = dict(zip(("m", "n", "k", "batch"), _good(A, B, C)))
    nst = 3 if role == "batch" else 2
    one = (1,) + (0,) * nst
    g[role] = g[role] + (one,) * (65 - len(g[role]))
    assert len(g[role]) == 65
    with pytest.raises(ValueError):
        _call(A, B, C, g)
    assert (C == 0).all()
    # exactly EP_MAXDIM (64) axes is allowed
    g[role] = g[role][:64]
    _call(A, B, C, g)
    assert np.array_equal(C, A @ B)


def test_64_axis_group_of_extent_two():
    """A k group of 64 axes, 6 of extent 2 (64 terms), the rest extent 1."""
    A = np.arange(64.0).reshape(1, 64)
    B = np.ones((64, 1))
    C = np.zeros((1, 1))
    k = tuple((2, 2 ** (5 - i), 2 ** (5 - i)) for i in range(6)) + ((1, 0, 0),) * 58
    _native.gemm(A, B, C, ((1, 0, 0),), ((1, 0, 0),), k, ())
    assert C[0, 0] == A.sum()


@pytest.mark.parametrize("value", [1.5, 4.9, np.float64(5.0), "5"])
def test_non_integer_extent_or_stride(value):
    """Extents and strides are integers: a float (even integral) or a string
    is a TypeError, not silently truncated."""
    A, B, C = _ops()
    for g in (dict(m=((4, 5, 6),), n=((6, 1, 1),), k=((5, value, 6),), batch=()),
              dict(m=((4, 5, 6),), n=((6, 1, 1),), k=((value, 1, 6),), batch=())):
        with pytest.raises(TypeError):
            _call(A, B, C, g)
        assert (C == 0).all()


def test_numpy_integers_accepted():
    A, B, C = _ops()
    g = dict(m=((np.int64(4), np.int32(5), np.intp(6)),), n=((np.int16(6), 1, 1),),
             k=((5, np.uint8(1), 6),), batch=())
    _call(A, B, C, g)
    assert np.array_equal(C, A @ B)


def test_k_zero_does_not_read_a_or_b():
    """With k == 0 only C is reached: A and B may be empty."""
    A, B = np.empty((4, 0)), np.empty((0, 6))
    C = np.full((4, 6), np.nan)
    _call(A, B, C, dict(m=((4, 0, 6),), n=((6, 0, 1),), k=((0, 1, 1),), batch=()))
    assert (C == 0).all()
    # ... but C still is checked
    with pytest.raises(ValueError):
        _call(A, B, C, dict(m=((5, 0, 6),), n=((6, 0, 1),), k=((0, 1, 1),), batch=()))


_TOTAL_WORK_OVERFLOW = [
    # each group fits int64; their product M*N*K*NB does not
    "((2**32, 0, 0),), ((2**32, 0, 0),), ((1, 0, 0),), ()",
    "((2**21, 0, 0),), ((2**21, 0, 0),), ((2**22, 0, 0),), ()",
    "((2**16, 0, 0),), ((2**16, 0, 0),), ((2**16, 0, 0),), ((2**16, 0, 0, 0),)",
]


def test_total_work_overflow_rejected():
    """Extents whose product over all groups overflows int64 (possible with
    stride-0 operands, which stay in bounds) are refused up front; the C core
    computes M*N*K in int64 and would otherwise run ~2**64 steps.  One
    subprocess with a timeout: a hang fails this test (in 15 s)."""
    lines = ["import numpy as np", "from einplan import _native",
             "A = np.ones(1); B = np.ones(1); C = np.zeros(1)"]
    for g in _TOTAL_WORK_OVERFLOW:
        lines += ["try:", f"    _native.gemm(A, B, C, {g})", "    print('no error', flush=True)",
                  "except Exception as e:", "    print(type(e).__name__, flush=True)"]
    try:
        r = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                           text=True, timeout=15)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        hung = _TOTAL_WORK_OVERFLOW[min(len(out.split()), len(_TOTAL_WORK_OVERFLOW) - 1)]
        pytest.fail(f"not refused: gemm(A, B, C, {hung}) with 1-element operands ran "
                    f"for 15 s (M*N*K*NB overflows int64); earlier cases: {out.split()}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["ValueError"] * len(_TOTAL_WORK_OVERFLOW), r.stdout
