"""Complex contractions: the 1m GEMM (one real GEMM of doubled n and k, B
packed as 2x2 real blocks), its layouts, ISAs and threads, the front ends,
prepacked constants, explain, and numpy's complex promotion of real operands
(inf / nan semantics)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import einplan
from einplan import _native
from einplan.plan import GemmStep
from einplan.options import Options
from einplan.planner import make_plan
from einplan.operands import describe_operands
from einplan.spec import parse_spec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gemm_util import describe, rand, smm_in_use, smm_max_n  # noqa: E402

K = _native._kernels
CDTYPES = (np.complex64, np.complex128)


crand = rand   # complex dtypes: both parts normal


def close(got, ref, dt, k):
    """|got - ref| within (k + 4) eps of the magnitude |A|.|B| (from ref's scale)."""
    eps = np.finfo(dt).eps
    scale = max(np.abs(ref).max(), 1.0) * np.sqrt(2)
    err = np.abs(np.asarray(got, np.complex128) - ref).max()
    assert err <= (k + 4) * eps * scale * 4, (err, scale)


def gemm_steps(plan):
    return [s for s in plan.steps if isinstance(s, GemmStep)]


def plan_for(subs, *ops, gemm_only=False, **kw):
    spec, arrays = parse_spec((subs, *ops))
    return make_plan(spec, describe_operands(arrays), Options.make(**kw) if kw else Options(),
                     gemm_only=gemm_only)


@pytest.fixture
def restore():
    prev_t, prev_isa = einplan.get_num_threads(), K.isa()
    yield
    einplan.set_num_threads(prev_t)
    K.set_isa(prev_isa)


# ---------------------------------------------------------------- the kernel

def _layouts(M, N, Kx, dt):
    """(A 'mk', B 'kn', C 'mn' view, C's base) in many layouts: row / column
    major, transposed, sliced, negative strides."""
    A0 = crand((M, Kx), dt, 1)
    B0 = crand((Kx, N), dt, 2)
    yield "row", A0, B0, np.empty((M, N), dt)
    yield "col", np.asfortranarray(A0), np.asfortranarray(B0), np.empty((N, M), dt).T
    yield "neg", crand((M, 2 * Kx), dt, 3)[::-1, ::-2], crand((Kx, N), dt, 4)[::-1, ::-1], \
        np.empty((M, N), dt)[::-1, ::-1]
    yield "sliced", crand((M + 3, Kx * 3), dt, 5)[3:, ::3], crand((N, Kx + 1), dt, 6)[:, 1:].T, \
        np.empty((M * 2, N * 3), dt)[::2, ::3]


@pytest.mark.parametrize("isa", K.available_isas() if K is not None else [])
@pytest.mark.parametrize("dt", CDTYPES)
def test_1m_kernel_layouts_fringes(restore, isa, dt):
    """_native.gemm on complex arrays (the 1m kernel) equals numpy for every
    layout, fringe sizes (m, n not multiples of MR, NR; odd k), alpha / beta,
    1 and 2 threads bitwise equal."""
    K.set_isa(isa)
    for M, N, Kx in [(1, 1, 1), (5, 7, 3), (13, 9, 17), (37, 41, 29), (70, 33, 130)]:
        for name, A, B, C in _layouts(M, N, Kx, dt):
            ref = A.astype(np.complex128) @ B.astype(np.complex128)
            res = []
            for nt in (1, 2):
                einplan.set_num_threads(nt)
                C[...] = np.nan     # beta == 0 never reads C
                _native.gemm(A, B, C, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k"))
                close(C, ref, dt, Kx)
                res.append(C.copy())
                C0 = crand((M, N), dt, 9)
                C[...] = C0
                _native.gemm(A, B, C, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k"),
                             alpha=0.5, beta=-2.0)
                close(C, 0.5 * ref - 2.0 * C0, dt, Kx)
            assert np.array_equal(res[0], res[1]), (isa, name, M, N, Kx)


@pytest.mark.parametrize("dt", CDTYPES)
def test_1m_conjugation_in_packing(dt):
    """conj_a / conj_b conjugate inside B's packing: no copy of either operand."""
    A, B = crand((9, 14), dt, 1), crand((14, 11), dt, 2)
    C = np.empty((9, 11), dt)
    groups = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
    for ca, cb in [(True, False), (False, True), (True, True)]:
        call = K.GemmCall(dt, *groups, conj_a=ca, conj_b=cb)
        call(A, B, C)
        ref = (A.conj() if ca else A).astype(np.complex128) @ (B.conj() if cb else B)
        close(C, ref, dt, 14)
    with pytest.raises(ValueError):
        K.GemmCall(np.float64, *groups, conj_a=True)


def test_1m_small_blocking_all_loops():
    """Several KC / NC / MC blocks with fringes (pc blocks start on whole
    complex elements), every ISA, 1 and 2 threads, batched multi-axis groups."""
    script = textwrap.dedent("""
        import sys, numpy as np
        sys.path.insert(0, sys.argv[1])
        from _gemm_util import describe
        import einplan
        from einplan import _native
        K = _native._kernels
        rng = np.random.default_rng(0)
        def c(*s):
            return rng.standard_normal(s) + 1j * rng.standard_normal(s)
        for isa in K.available_isas():
            K.set_isa(isa)
            for dt in (np.complex64, np.complex128):
                A = c(3, 37, 45).astype(dt)[:, ::-1]          # b m k
                B = c(45, 3, 61).astype(dt)                    # k b n
                ref = np.einsum("bmk,kbn->bmn", A.astype(complex), B.astype(complex))
                res = []
                for nt in (1, 2):
                    einplan.set_num_threads(nt)
                    C = np.full((3, 37, 61), np.nan, dt)
                    _native.gemm(A, B, C, *describe(A, "bmk", B, "kbn", C, "bmn",
                                                    "m", "n", "k", "b"))
                    tol = 60 * np.finfo(dt).eps * np.abs(ref).max()
                    assert np.abs(C - ref).max() < tol, (isa, dt, nt)
                    res.append(C)
                assert np.array_equal(res[0], res[1]), (isa, dt)
        print("OK")
    """)
    env = dict(os.environ, EINPLAN_BLOCKING="12,14,32")
    env.pop("EINPLAN_ISA", None)
    r = subprocess.run([sys.executable, "-c", script, os.path.dirname(os.path.abspath(__file__))],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stderr[-3000:]


def _smm_layouts(nb, M, N, Kx, dt):
    """(name, A 'bmk', B 'bkn', C 'bmn') with C's n unit-stride (the smm
    path's one demand) and A, B in any layout: A's k contiguous, strided,
    reversed or transposed (gathered), B transposed, sliced, reversed; C's
    rows strided or reversed."""
    A0, B0 = crand((nb, M, Kx), dt, 11), crand((nb, Kx, N), dt, 12)
    C = np.empty((nb, M, N), dt)
    yield "row", A0, B0, C
    yield "a_t", crand((nb, Kx, M), dt, 13).transpose(0, 2, 1), \
        crand((nb, N, Kx), dt, 14).transpose(0, 2, 1), C
    yield "neg", crand((nb, M, 2 * Kx), dt, 15)[:, ::-1, ::-2], B0[:, ::-1, ::-1], \
        np.empty((nb, M, N), dt)[:, ::-1]
    yield "sliced", crand((nb, M + 2, Kx), dt, 16)[:, 2:], \
        crand((nb, 2 * Kx, N + 3), dt, 17)[:, ::2, 3:], np.empty((nb, 2 * M, N), dt)[:, ::2]


def _smm_max_n(dt):
    """The widest complex n the smm path takes (the real kernel's n is 2n)."""
    return {np.dtype(np.complex64): 32, np.dtype(np.complex128): 16}[np.dtype(dt)]


def _calls_close(call, A, B, C, ref, dt, Kx, threads):
    """Run ``call`` into C at each thread count, with beta 0 over NaN and
    with alpha 0.5, beta -2 over random C; both close to ``ref``.  Returns
    the beta-0 results, in order."""
    res = []
    for nt in threads:
        C[...] = np.nan                 # beta == 0 never reads C
        call(A, B, C, nthreads=nt)
        close(C, ref, dt, Kx)
        res.append(C.copy())
        C0 = crand(C.shape, dt, 9)
        C[...] = C0
        call(A, B, C, alpha=0.5, beta=-2.0, nthreads=nt)
        close(C, 0.5 * ref - 2.0 * C0, dt, Kx)
    return res


@pytest.mark.parametrize("dt", CDTYPES)
def test_1m_smm_path_layouts_threads_conj(isa, restore, dt):
    """Narrow complex GEMMs run on the smm kernel of the kernel set (B packed
    per batch index and block of k as 2x2 real blocks; A gathered when its k is not
    unit-stride) and equal numpy for every layout, with alpha / beta, conj_a /
    conj_b, 1 and 2 threads bitwise equal (threads over batches and over
    rows).  Kernel sets without smm kernels run the packed path."""
    has_smm = smm_in_use(np.float32)
    # the last two share out over threads: by batches, by rows; (2, 5, 6,
    # 1000) runs k in two or three blocks of packed B
    for nb, M, N, Kx in [(3, 5, 7, 3), (4, 8, 8, 8), (2, 13, _smm_max_n(dt), 9),
                         (2, 5, 6, 1000), (64, 16, 16, 16), (1, 2500, 8, 16)]:
        for name, A, B, C in _smm_layouts(nb, M, N, Kx, dt):
            groups = describe(A, "bmk", B, "bkn", C, "bmn", "m", "n", "k", "b")
            gathered = A.strides[2] != A.itemsize
            smm = has_smm and not (gathered and M * Kx * A.itemsize > 256 << 10)
            for ca, cb in [(False, False), (True, False), (False, True)]:
                call = K.GemmCall(dt, *groups, conj_a=ca, conj_b=cb)
                sched = call.schedule(nthreads=2)
                assert sched["path"] == ("smm" if smm else "gemm"), (isa, name, nb, M, sched)
                if smm and M * N * Kx * nb >= 16 ** 4:
                    assert (sched["threads"], sched["loop"]) == (2, "batch" if nb > 1 else "m")
                a = (A.conj() if ca else A).astype(np.complex128)
                ref = np.matmul(a, (B.conj() if cb else B).astype(np.complex128))
                res = _calls_close(call, A, B, C, ref, dt, Kx, (1, 2))
                assert np.array_equal(res[0], res[1]), (isa, name, ca, cb)


@pytest.mark.parametrize("dt", CDTYPES)
def test_1m_gemv_path_of_a_few_columns(isa, restore, dt):
    """A complex GEMM of one or two columns, A's rows contiguous along a k of
    16385 or more, runs on the GEMV path: A's rows as reals dotted with B's
    columns gathered as 1m's real rows (re, -im / im, re), for B in every
    layout, A's rows reversed, conj_a / conj_b, alpha / beta, two blocks of
    256 rows; a k of 1024 or more for up to 8 rows, all of them reaching
    16385.  Rows of one block at two threads share k (partial sums added
    in thread order: the same bits call after call); more rows share out by
    blocks, bitwise equal to one thread.  Three columns, or A strided along
    k, take other paths."""
    for M, N, Kx in [(2, 2, 40000), (5, 1, 17000), (300, 2, 16500), (3, 3, 20000),
                     (8, 2, 2100), (9, 2, 2100), (3, 2, 2000)]:
        A0 = crand((M, Kx), dt, M)
        B0 = crand((Kx, N), dt, N)
        for name, A, B in [("row", A0, B0), ("Bcol", A0[::-1], np.asfortranarray(B0)),
                           ("Bneg", A0, crand((Kx, 2 * N), dt, 3)[::-1, ::-2]),
                           ("Astrided", crand((M, 2 * Kx), dt, 4)[:, ::2], B0)]:
            C = np.empty((M, N), dt)
            groups = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
            # (a k of 1024 or more for up to 8 rows, m x k at least 16385)
            gemv = N <= 2 and A.strides[1] == A.itemsize and (
                Kx >= 16385 or (Kx >= 1024 and M <= 8 and M * Kx >= 16385))
            for ca, cb in [(False, False), (True, False), (False, True)]:
                call = K.GemmCall(dt, *groups, conj_a=ca, conj_b=cb)
                sched = call.schedule(nthreads=2)
                assert (sched["path"] == "gemv") == gemv, (name, M, N, sched)
                by_k = gemv and M <= 256 and Kx >= 2 * 16385
                if gemv:
                    loop = "k" if by_k else "n" if M > 256 else "none"
                    assert sched["loop"] == loop, (name, M, sched)
                    assert sched["threads"] == (1 if loop == "none" else 2)
                a = (A.conj() if ca else A).astype(np.complex128)
                ref = a @ (B.conj() if cb else B).astype(np.complex128)
                res = _calls_close(call, A, B, C, ref, dt, Kx, (1, 2, 2))
                assert np.array_equal(res[1], res[2]), (name, ca, cb)
                if not by_k:
                    assert np.array_equal(res[0], res[1]), (name, ca, cb)


@pytest.mark.parametrize("dt", CDTYPES)
def test_einsum_complex_few_columns_long_k_take_the_gemv_path(dt):
    """'ijk,jkl->il' of m = n = 2 and k = 716252: planned on the GEMM engine's
    GEMV path (the nest's register tiles would gather along m), named so by
    explain, and equal to numpy."""
    a, b = crand((2, 241, 2972), dt, 0), crand((241, 2972, 2), dt, 1)
    (step,) = plan_for("ijk,jkl->il", a, b).steps
    assert step.engine == "gemm" and step.complex_mode == "1m"
    assert step.kernel.path.value == "gemv"
    text = str(einplan.explain("ijk,jkl->il", a, b))
    assert "two real rows per complex column" in text
    ref = np.einsum("ijk,jkl->il", a.astype(np.complex128), b.astype(np.complex128))
    close(einplan.einsum("ijk,jkl->il", a, b), ref, dt, 716252)


@pytest.mark.parametrize("dt", CDTYPES)
def test_1m_b_packed_by_panel_for_few_rows(isa, restore, dt):
    """Few rows (all of m in one MC block): each NR panel of B is packed right
    before its A panels meet it.  Same packed values and k order as the
    whole-panel path, so bitwise the same result, for every layout; conj_a /
    conj_b equal numpy; 1 and 2 threads bitwise equal."""
    for M, N, Kx in [(1, 70, 9), (13, 100, 300), (77, 150, 64)]:
        for name, A, B, C in _layouts(M, N, Kx, dt):
            groups = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
            C[...] = np.nan
            K.gemm_packed_path(A, B, C, *groups, 0.5, 0.0)
            whole = C.copy()
            for ca, cb in [(False, False), (True, False), (False, True)]:
                call = K.GemmCall(dt, *groups, conj_a=ca, conj_b=cb)
                assert call.schedule(nthreads=1)["b_by_panel"], (isa, name, M, N, Kx)
                ref = (A.conj() if ca else A).astype(np.complex128) @ \
                    (B.conj() if cb else B).astype(np.complex128)
                res = []
                for nt in (1, 2):
                    C[...] = np.nan
                    call(A, B, C, alpha=0.5, nthreads=nt)
                    close(C, 0.5 * ref, dt, Kx)
                    res.append(C.copy())
                assert np.array_equal(res[0], res[1]), (isa, name, ca, cb)
                if not (ca or cb):
                    assert np.array_equal(res[0], whole), (isa, name, M, N, Kx)
    # many rows: B packed whole, shared by the MC blocks
    A, B = crand((3000, 64), dt, 1), crand((64, 200), dt, 2)
    C = np.empty((3000, 200), dt)
    assert not K.GemmCall(dt, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
                          ).schedule()["b_by_panel"]


def test_1m_smm_declines_what_it_cannot_take():
    """The complex smm path needs C's n unit-stride, n within the kernel's
    width (2n reals) and a gathered A that fits its bound: otherwise packed.
    A kernel set without smm kernels packs every case."""
    fits = "smm" if smm_in_use(np.float32) else "gemm"
    dt = np.complex64
    def path(A, la, B, lb, C, lc):
        return K.GemmCall(dt, *describe(A, la, B, lb, C, lc, "m", "n", "k")).schedule()["path"]
    A, B = crand((40, 12), dt, 0), crand((12, 8), dt, 1)
    assert path(A, "mk", B, "kn", np.empty((40, 8), dt), "mn") == fits
    assert path(A, "mk", B, "kn", np.empty((8, 40), dt).T, "mn") == "gemm"    # C's n strided
    over = (smm_max_n(np.float32) or 64) // 2 + 1     # one complex column too wide
    wide = crand((12, over), dt, 2)
    assert path(A, "mk", wide, "kn", np.empty((40, over), dt), "mn") == "gemm"
    big_t = crand((12, 4000), dt, 3).T          # gathered A of 4000 x 24 reals: 384 KB
    assert path(big_t, "mk", B, "kn", np.empty((4000, 8), dt), "mn") == "gemm"
    assert path(big_t.copy(), "mk", B, "kn", np.empty((4000, 8), dt), "mn") == fits


# ---------------------------------------------------------------- einsum

CASES = [
    ("ij,jk->ik", [(40, 30), (30, 50)]),
    ("bij,bjk->bik", [(6, 19, 23), (6, 23, 17)]),
    ("abcd,dbef->aecf", [(6, 7, 8, 9), (9, 7, 5, 4)]),
    ("bij,jk->bik", [(7, 6, 51), (51, 30)]),
    ("ik,jk->ij", [(33, 21), (45, 21)]),
    ("ki,kj->ji", [(21, 33), (21, 45)]),
]


@pytest.mark.parametrize("dt", CDTYPES)
@pytest.mark.parametrize("subs,shapes", CASES)
def test_einsum_complex_gemm_is_1m(dt, subs, shapes):
    """Batched, merged and permuted complex contractions plan one 1m GEMM
    (one kernel call, no float-view split) and equal numpy's result."""
    ops = [crand(s, dt, i) for i, s in enumerate(shapes)]
    (step,) = gemm_steps(plan_for(subs, *ops))
    assert step.complex_mode == "1m"
    ref = np.einsum(subs, *[o.astype(np.complex128) for o in ops])
    kmax = max(max(s) for s in shapes) * 4
    close(einplan.einsum(subs, *ops), ref, dt, kmax)
    # transposed / negative-stride views and an F-order or strided out=
    views = [o[::-1] if o.ndim == 2 else o[:, ::-1] for o in ops]
    ref_v = np.einsum(subs, *[v.astype(np.complex128) for v in views])
    close(einplan.einsum(subs, *views, order="F"), ref_v, dt, kmax)
    out = np.empty(tuple(2 * e for e in ref.shape), dt)[(slice(None, None, 2),) * ref.ndim]
    einplan.einsum(subs, *views, out=out)
    close(out, ref_v, dt, kmax)


def test_one_kernel_call_per_1m_step():
    # every edge above nest.CTILE_EDGE: the packed engine without pricing the nest
    a, b = crand((24, 20), np.complex128, 0), crand((20, 30), np.complex128, 1)
    calls = []
    real = _native.reference_gemm() or _native.compiled_gemm

    def spy(A, B, C, *args, **kw):
        calls.append((A.dtype, B.dtype, C.dtype))
        return real(A, B, C, *args, **kw)

    previous = _native.set_reference_gemm(spy)
    try:
        res = einplan.einsum("ij,jk->ik", a, b)
    finally:
        _native.set_reference_gemm(previous)
    assert calls == [(np.dtype(np.complex128),) * 3]
    close(res, a @ b, np.complex128, 20)


@pytest.mark.parametrize("dt", CDTYPES)
def test_gemv_shapes_take_the_nest_natively(dt):
    """einsum's complex GEMVs run on the loop nest in interleaved complex; on
    the GEMM engine (prepacked plans) they stay 4 real GEMVs on float views."""
    a, v = crand((30, 20), dt, 0), crand(20, dt, 1)
    assert [s.engine for s in plan_for("ij,j->i", a, v).steps] == ["nest"]
    (step,) = gemm_steps(plan_for("ij,j->i", a, v, gemm_only=True))
    assert step.complex_mode == "cc"
    close(einplan.einsum("ij,j->i", a, v), a.astype(complex) @ v, dt, 20)


@pytest.mark.parametrize("dt", CDTYPES)
def test_front_ends(dt):
    a, b = crand((5, 12, 13), dt, 0), crand((13, 7), dt, 1)
    close(einplan.matmul(a, b), np.matmul(a, b), dt, 13)
    close(einplan.dot(a, b), np.dot(a, b), dt, 13)
    close(einplan.tensordot(a, b, 1), np.tensordot(a, b, 1), dt, 13)
    close(einplan.inner(a, b.T), np.inner(a, b.T), dt, 13)
    x, y = crand((6, 7), dt, 2), crand((7, 6), dt, 3)[::-1]
    got = einplan.vdot(x, y)
    assert got.dtype == np.dtype(dt)
    close(got, np.vdot(x, y), dt, 42)
    assert abs(einplan.vdot(x, y) - np.vdot(x.conj(), y)) > 1e-3  # conjugation matters


@pytest.mark.parametrize("dt", CDTYPES)
def test_vdot_conjugates_in_the_kernel(dt, monkeypatch):
    """vdot of complex vectors of one dtype runs the nest with its first
    input conjugated in the kernel: no conjugated copy (np.conjugate is never
    called), for contiguous, strided and reversed vectors; mixed dtypes and
    one-element vectors take the spec with the copy."""
    from einplan import frontends
    calls = []
    real_conj = np.conjugate
    monkeypatch.setattr(frontends.np, "conjugate", lambda a: calls.append(1) or real_conj(a))
    x, y = crand((3001,), dt, 4), crand((6002,), dt, 5)
    for a, b in [(x, y[:3001]), (x, y[::2]), (x[::-1], y[1::2])]:
        close(einplan.vdot(a, b), np.vdot(a, b), dt, 3001)
    assert calls == []
    other = np.complex64 if np.dtype(dt) == np.complex128 else np.complex128
    close(einplan.vdot(x, y[:3001].astype(other)), np.vdot(x, y[:3001].astype(other)), dt, 3001)
    close(einplan.vdot(x[:1], y[:1]), np.vdot(x[:1], y[:1]), dt, 1)
    assert calls == [1, 1]


@pytest.mark.parametrize("dt", CDTYPES)
def test_prepacked_complex_constant(dt):
    """A complex constant B is packed once in the 1m form; calls (also with
    other strides of the variable operand) equal numpy."""
    W = crand((51, 30), dt, 0)
    p = einplan.plan("bij,jk->bik", (7, 6, 51), W, constants=[1])
    assert p.packed is not None and "prepacked" in p.describe()
    x = crand((7, 6, 51), dt, 1)
    close(p(x), np.einsum("bij,jk->bik", x, W.astype(complex)), dt, 51)
    y = crand((7, 12, 51), dt, 2)[:, ::2]
    close(p(y), np.einsum("bij,jk->bik", y, W.astype(complex)), dt, 51)


# ---------------------------------------------------------------- explain

def test_explain_names_the_complex_method():
    a, b = crand((64, 64), np.complex64, 0), crand((64, 64), np.complex64, 1)
    rep = einplan.explain("ij,jk->ik", a, b)
    d = rep.to_dict()
    (k,) = [s["kernel"] for s in d["steps"] if s.get("kernel")]
    cm = k["complex_method"]
    assert cm["method"] == "1m" and cm["real_gemms"] == 1
    assert cm["real_shape"] == [64, 128, 128] and cm["flops"] == 8 * 64 ** 3
    assert "1m method" in str(rep)
    assert json.loads(rep.to_json())["steps"][0]["kernel"]["complex_method"]["method"] == "1m"
    v = crand(64, np.complex64, 2)
    (step,) = einplan.explain("ij,j->i", a, v).to_dict()["steps"]
    assert step["engine"] == "nest" and "complex_method" not in (step.get("kernel") or {})


# ---------------------------------------------------------------- promotion

INF = np.inf


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("optimize", [True, False])
def test_real_operand_is_promoted_to_complex(optimize):
    """numpy multiplies the real operand's zero imaginary part: inf * 0 = nan."""
    a = np.array([[INF + 0j, 1 + 1j]])
    b = np.array([[1.0], [2.0]])
    got = einplan.einsum("ij,jk->ik", a, b, optimize=optimize)
    want = np.einsum("ij,jk->ik", a, b)            # inf+nanj
    assert np.isinf(want.real[0, 0]) and np.isnan(want.imag[0, 0])
    np.testing.assert_array_equal(got, want)
    got = einplan.einsum("ij,jk->ik", b.T, a.T, optimize=optimize)
    np.testing.assert_array_equal(got, np.einsum("ij,jk->ik", b.T, a.T))
    # two real operands computed in complex: (inf+0j)(0+0j) = nan+nanj
    x, y = np.array([[INF]]), np.array([[0.0]])
    got = einplan.einsum("ij,jk->ik", x, y, dtype=complex, optimize=optimize)
    assert np.isnan(got.real[0, 0]) and np.isnan(got.imag[0, 0])
    np.testing.assert_array_equal(got, np.einsum("ij,jk->ik", x, y, dtype=complex))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape", [(4, 5, 6), (30, 20, 10), (1, 6, 8), (7, 6, 1), (3, 1, 4)])
def test_promotion_random_nonfinite(shape):
    """inf / nan in random places: einsum and matmul / dot give numpy's nan
    pattern (einsum: plain sums; BLAS-backed functions: scaled by 1+0j)."""
    M, Kx, N = shape
    rng = np.random.default_rng(sum(shape))
    for t in range(40):
        a = rng.standard_normal((M, Kx)) + 1j * rng.standard_normal((M, Kx))
        b = rng.standard_normal((Kx, N))
        i, j = rng.integers(M), rng.integers(Kx)
        v = rng.choice([INF, -INF, np.nan])
        a[i, j] = complex(v, a[i, j].imag) if t % 2 else complex(a[i, j].real, v)
        for got, want in [(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b)),
                          (einplan.matmul(a, b), np.matmul(a, b)),
                          (einplan.dot(a, b), np.dot(a, b)),
                          (einplan.tensordot(a, b, 1), np.tensordot(a, b, 1))]:
            for part in ("real", "imag"):
                g, w = getattr(got, part), getattr(want, part)
                assert np.array_equal(np.isnan(g), np.isnan(w)), (shape, t, part, got, want)
                assert np.array_equal(np.isinf(g), np.isinf(w)), (shape, t, part, got, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_blas_front_ends_nan_semantics():
    a = np.array([[INF + 0j, 1 + 1j]])
    b = np.array([[1.0], [2.0]])
    for name, args in [("matmul", (a, b)), ("dot", (a, b)), ("inner", (a, b.T)),
                       ("tensordot", (a, b, 1)), ("vdot", (a, b))]:
        got, want = getattr(einplan, name)(*args), getattr(np, name)(*args)
        assert np.isnan(np.real(want)).all() and np.isnan(np.imag(want)).all(), name
        np.testing.assert_array_equal(got, want, err_msg=name)
    # matmul with a single product (k = 1) is numpy's plain product
    x, y = np.array([[INF + 1j]]), np.array([[1 + 0j]])
    np.testing.assert_array_equal(einplan.matmul(x, y), np.matmul(x, y))
