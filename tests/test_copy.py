"""The permutation copy (ep_copy.c) against numpy, bit for bit: every
permutation of small shapes, reversed and sliced views, each element size;
then each kernel path (portable tiles, contiguous runs, the SIMD zip and
square transpose of every ISA this CPU runs) at its fringes, with 1 and 2
threads, with and without non-temporal stores, into dst at every alignment,
with guard bytes around dst; the schedule ep_copy reports; EINPLAN_ISA at
import; and einsum's pure permutation into out= uses it."""
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import einplan
from einplan import _native

from conftest import ISAS  # noqa: E402

K = _native._kernels

HAVE_OMP = K is not None and K.config()["build"].get("openmp", False)
# every element size ep_copy takes: 1, 2, 4, 8, 16 bytes
SIZES = [np.int8, np.int16, np.float32, np.float64, np.complex128]
GUARD = 0xA5


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


# ------------------------------------------------------------ helpers

def random_bits(shape, dtype, seed=0):
    """Random bytes viewed as dtype: float NaN payloads and signalling NaNs
    included, which any arithmetic on the way would change."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def in_buffer(buf, shape, offset, order, flip=()):
    """A view of `shape` inside `buf`, `offset` elements in, its axes laid out
    in memory in `order` (outer to inner), the axes in `flip` reversed."""
    mem = buf[offset:offset + int(np.prod(shape))].reshape([shape[a] for a in order])
    view = mem.transpose(np.argsort(order))
    for ax in flip:
        view = np.flip(view, ax)
    return view


def check_copy(src, order=None, offset=0, flip=(), **kw):
    """permute_copy(src, dst) for a dst laid out as `order` inside a guarded
    buffer equals numpy's assignment, bit for bit, and writes nothing else."""
    order = tuple(range(src.ndim)) if order is None else order
    n = src.size + offset + 16
    buf = np.frombuffer(bytes([GUARD]) * (n * src.itemsize), src.dtype).copy()
    want = buf.copy()
    dst = in_buffer(buf, src.shape, offset, order, flip)
    in_buffer(want, src.shape, offset, order, flip)[...] = src
    K.permute_copy(src, dst, **kw)
    assert buf.view(np.uint8).tobytes() == want.view(np.uint8).tobytes()


def strides_el(a):
    return [s // a.itemsize for s in a.strides]


def schedule(src, dst, **kw):
    return K.copy_schedule(src.shape, strides_el(src), strides_el(dst), src.itemsize, **kw)


def lanes(isa, itemsize):
    """SIMD lanes of the copy kernels (0: none for this ISA and size)."""
    if isa == "generic" or itemsize not in (4, 8):
        return 0
    return (64 if isa == "avx512" else 32) // itemsize



MODES = [dict(nthreads=t, stream=s) for t in (1, 2) for s in (False, True)]


# ------------------------------------------------------------ each path

@pytest.mark.parametrize("dtype", SIZES)
def test_zip_rows(isa, dtype):
    """dst's inner axis holds R < VL elements and (columns, R) is one
    contiguous dst block: the SIMD zip ('ncabhw->nchawb' has R = 2)."""
    es = np.dtype(dtype).itemsize
    vl = lanes(isa, es)
    for R in (2, 3, 4, 8):
        for n0 in (1, 5, 16, 17, 35, 64, 67):
            x = random_bits((3, R, n0), dtype, seed=R * 100 + n0)
            src = x.transpose(0, 2, 1)                 # (3, n0, R), R inner in dst
            sc = schedule(src, np.empty(src.shape, dtype))
            if vl and R < vl and R in (2, 4, 8) and n0 >= vl:
                assert (sc["kind"], sc["rows"], sc["isa"]) == ("interleave", R, isa)
            else:
                assert sc["kind"] in ("tile", "transpose", "run")   # n0 = 1: one run
            for offset in (0, 1, 3, 6):
                for mode in MODES:
                    check_copy(src, offset=offset, **mode)


@pytest.mark.parametrize("dtype", SIZES)
def test_square_transpose(isa, dtype):
    """Both inner axes long: VL x VL register transposes, with row and
    column fringes, dst rows padded or not."""
    es = np.dtype(dtype).itemsize
    vl = lanes(isa, es)
    for n1, n0 in [(16, 16), (17, 31), (8, 40), (40, 8), (33, 70), (64, 65)]:
        x = random_bits((n1, n0), dtype, seed=n1 * 1000 + n0)
        src = x.T                                      # dst inner: n1, src inner: n0
        sc = schedule(src, np.empty(src.shape, dtype))
        if vl and n1 >= vl and n0 >= vl:
            assert (sc["kind"], sc["rows"]) == ("transpose", vl)
        for offset in (0, 1, 5):
            for mode in MODES:
                check_copy(src, offset=offset, **mode)
        # a dst row of 64 bytes exactly (streamable when aligned)
        if vl:
            x = random_bits((3 * vl, 2 * vl + 1), dtype, seed=7)
            for offset in range(0, 64 // es, max(1, 16 // es)):
                for mode in MODES:
                    check_copy(x.T, offset=offset, **mode)


@pytest.mark.parametrize("dtype", SIZES)
def test_runs(isa, dtype):
    """Inner axis contiguous on both sides: runs (memcpy or streamed)."""
    es = np.dtype(dtype).itemsize
    for c in (256 // es, 300 // es + 1, 1000):
        x = random_bits((3, 4, c), dtype, seed=c)
        src = x.transpose(1, 0, 2)
        assert schedule(src, np.empty(src.shape, dtype))["kind"] == "run"
        for offset in (0, 1, 7):
            for mode in MODES:
                check_copy(src, offset=offset, **mode)
    x = random_bits((5, 3000), dtype, seed=1)       # one merged run, split for threads
    assert schedule(x, np.empty(x.shape, dtype))["ndim"] == 1
    for mode in MODES:
        check_copy(x, **mode)


@pytest.mark.parametrize("dtype", SIZES)
def test_strided_and_reversed(isa, dtype):
    """No unit stride where the SIMD paths need one, negative strides on
    either side, a dst that is not contiguous: portable tiles, or SIMD after
    flipping reversed dst axes."""
    x = random_bits((6, 40, 50), dtype, seed=3)
    srcs = [x.transpose(0, 2, 1), x[:, :, ::-1].transpose(0, 2, 1),
            x[:, ::-1, :].transpose(0, 2, 1), x[:, ::2, ::3].transpose(2, 0, 1),
            x[::-1, ::-1, ::-1].transpose(1, 2, 0), x[..., :1].transpose(2, 1, 0)]
    for src in srcs:
        for order, flip in [(None, ()), ((2, 1, 0), ()), (None, (1,)), (None, (0, 2)),
                            ((1, 0, 2), (2,))]:
            for mode in MODES:
                check_copy(src, order=order, offset=1, flip=flip, **mode)


def test_reversed_dst_keeps_simd(isa):
    """dst axes with negative strides are flipped first (any order will do for
    a copy, and src's stride flips with it), so a reversed out= still gets the
    SIMD kernels: reversed on an outer axis, or on the column axis that src
    also has reversed."""
    x = random_bits((3, 2, 64), np.float32)
    cases = [(x.transpose(0, 2, 1), (0,)),
             (x[:, :, ::-1].transpose(0, 2, 1), (1,)),
             (x[::-1, :, ::-1].transpose(0, 2, 1), (0, 1))]
    for src, flip in cases:
        dst = np.empty(src.shape, np.float32)
        for ax in flip:
            dst = np.flip(dst, ax)
        if lanes(isa, 4):
            assert schedule(src, dst)["kind"] == "interleave"
        for mode in MODES:
            check_copy(src, flip=flip, **mode)


def test_zero_size_and_one_element(isa):
    for shape in [(0, 5), (3, 0, 2), (1, 1), ()]:
        x = random_bits(shape, np.float32)
        dst = np.zeros(shape, np.float32)
        _native.permute_copy(x.T, dst.T)
        assert dst.tobytes() == x.tobytes()
    assert K.copy_schedule((0, 5), (5, 1), (1, 0), 4)["kind"] == "empty"


# ------------------------------------------------------------ the schedule

def test_schedule_tvm_case(isa):
    """What the benchmark case runs: a zip of 2 rows on SIMD ISAs, threads
    by size, non-temporal stores when dst is half the L3 or more."""
    shape = (32, 360, 2, 640, 2)             # (c, h, a, w, b) after n = 1 dropped
    src_st = (921600, 640, 460800, 1, 230400)
    dst_st = (921600, 2560, 1280, 2, 1)
    sc = K.copy_schedule(shape, src_st, dst_st, 4)
    assert sc["ndim"] == 5
    if isa == "generic":
        assert sc["kind"] == "tile" and not sc["stream"]
    else:
        assert (sc["kind"], sc["rows"], sc["isa"]) == ("interleave", 2, isa)
        l3 = K.cache_sizes()["l3"]
        assert sc["stream"] == (np.prod(shape) * 4 >= (l3 // 2 if l3 else 4 << 20))
    assert sc["threads"] == K.get_num_threads()
    # forced
    assert K.copy_schedule(shape, src_st, dst_st, 4, stream=False)["stream"] is False
    assert K.copy_schedule(shape, src_st, dst_st, 4, nthreads=1)["threads"] == 1


def test_schedule_small_copy_is_single_threaded():
    sc = K.copy_schedule((64, 64), (1, 64), (64, 1), 4)
    assert sc["threads"] == 1 and sc["stream"] is False


@pytest.mark.skipif(not HAVE_OMP, reason="built without OpenMP: always 1 thread")
def test_schedule_threads_forced():
    assert K.copy_schedule((64, 64), (1, 64), (64, 1), 4, nthreads=2)["threads"] == 2
    # one unit of work cannot be shared
    assert K.copy_schedule((3,), (1,), (1,), 4, nthreads=2)["threads"] == 1


def test_schedule_merges_axes():
    # (a, b, c) -> (b, a, c) with c contiguous on both sides merges nothing
    # across a and b but keeps c; a plain C-order copy is one run
    assert K.copy_schedule((4, 5, 6), (30, 6, 1), (30, 6, 1), 8)["ndim"] == 1
    assert K.copy_schedule((4, 5, 6), (6, 24, 1), (30, 6, 1), 8)["ndim"] == 3
    # extent-1 axes are dropped
    assert K.copy_schedule((1, 7, 1), (0, 1, 3), (7, 1, 1), 8)["ndim"] == 1


@pytest.mark.parametrize("force", ["generic", "avx2"])
def test_einplan_isa_env(force):
    """EINPLAN_ISA at import picks the copy kernels too."""
    if force not in ISAS:
        pytest.skip(reason=f"{force} is not supported by this CPU")
    code = (
        "import numpy as np; from einplan import _native; K = _native._kernels\n"
        "x = np.arange(2 * 3 * 64, dtype=np.float32).reshape(3, 2, 64)\n"
        "src = x.transpose(0, 2, 1); dst = np.empty(src.shape, np.float32)\n"
        "sc = K.copy_schedule(src.shape, [s // 4 for s in src.strides],\n"
        "                     [s // 4 for s in dst.strides], 4)\n"
        "K.permute_copy(src, dst, nthreads=2, stream=True)\n"
        "assert np.array_equal(dst, src)\n"
        "print(K.isa(), sc['kind'], sc['isa'])\n")
    env = dict(os.environ, EINPLAN_ISA=force)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    want_kind = "tile" if force == "generic" else "interleave"
    assert r.stdout.split() == [force, want_kind, force]


def test_explain_reports_the_copy_kernel(isa):
    """explain's copy step says what ep_copy runs: the same schedule."""
    from einplan.explain import explain
    d = explain("ncabhw->nchawb", (1, 4, 2, 2, 36, 64), dtype="float32",
                out=(1, 4, 36, 2, 64, 2)).to_dict()
    (step,) = d["steps"]
    sc = K.copy_schedule((4, 36, 2, 64, 2), (9216, 64, 4608, 1, 2304),
                         (9216, 256, 128, 2, 1), 4)
    assert step["kernel"]["threads"] == sc["threads"]
    if isa == "generic":
        assert "portable C" in step["what"] and step["kernel"]["isa"] == "generic"
    else:
        assert f"{isa} registers zip 2 source rows" in step["what"]
        assert step["kernel"]["isa"] == isa


# ------------------------------------------------------------ through einsum

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex128])
def test_einsum_permutations_into_out(dtype):
    """Pure permutations into out=, reversed operands and a reversed out=."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((1, 4, 2, 2, 20, 40)) * 30).astype(dtype)
    want = np.einsum("ncabhw->nchawb", x)
    out = np.empty(want.shape, dtype)
    assert einplan.einsum("ncabhw->nchawb", x, out=out) is out
    assert np.array_equal(out, want)
    xr = x[:, :, :, :, ::-1, :]
    out = np.empty(want.shape, dtype)
    einplan.einsum("ncabhw->nchawb", xr, out=out)
    assert np.array_equal(out, np.einsum("ncabhw->nchawb", xr))
    base = np.empty(want.shape, dtype)
    out = base[:, :, ::-1]
    einplan.einsum("ncabhw->nchawb", x, out=out)
    assert np.array_equal(out, want)
    y = (rng.standard_normal((40, 33)) * 30).astype(dtype)
    out = np.empty((33, 40), dtype)
    einplan.einsum("ij->ji", y, out=out)
    assert np.array_equal(out, y.T)
