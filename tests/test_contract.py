"""einplan.contract: C = alpha * einsum(a, b) + beta * C with BLAS semantics."""
import numpy as np
import pytest

import einplan
from einplan import scaled_update as contract_mod
from einplan.scaled_update import contract

from _gemm_util import rand

RNG = np.random.default_rng(7)


def _rand(shape, dtype=np.float64):
    return rand(shape, dtype, rng=RNG)


CASES = [
    ("ij,jk->ik", (30, 40), (40, 50)),
    ("abij,bjkl->aikl", (4, 5, 6, 7), (5, 7, 3, 2)),
    ("bik,bkj->bij", (3, 9, 11), (3, 11, 13)),
    ("ij,ij->", (8, 9), (8, 9)),
    ("ijk,k->ij", (5, 6, 7), (7,)),
    ("iij,jk->ik", (6, 6, 5), (5, 4)),        # diagonal of a: strides of one GEMM
    ("ijk,jl->il", (6, 7, 5), (7, 4)),        # pre-sum over k, then a GEMM
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("subs, sa, sb", CASES)
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (2.5, 0.0), (-0.5, 1.0), (1.5, -2.0)])
def test_alpha_beta_match_numpy(subs, sa, sb, dtype, alpha, beta):
    a, b = _rand(sa, dtype), _rand(sb, dtype)
    ref = np.einsum(subs, a.astype(np.complex128), b.astype(np.complex128))
    rtol = 1e-4 if dtype == np.float32 else 1e-11
    c0 = _rand(np.shape(ref), dtype)
    out = c0.copy()
    got = contract(subs, a, b, alpha=alpha, beta=beta, out=out)
    assert got is out
    np.testing.assert_allclose(out, alpha * ref + beta * c0, rtol=rtol, atol=rtol)
    if beta == 0:
        fresh = contract(subs, a, b, alpha=alpha)
        assert isinstance(fresh, np.ndarray) and fresh.dtype == dtype
        np.testing.assert_allclose(fresh, alpha * ref, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("subs, sa, sb", CASES)
def test_beta_zero_never_reads_c(subs, sa, sb):
    a, b = _rand(sa), _rand(sb)
    out = np.full(np.shape(np.einsum(subs, a, b)), np.nan)
    contract(subs, a, b, alpha=2.0, beta=0.0, out=out)
    np.testing.assert_allclose(out, 2.0 * np.einsum(subs, a, b), rtol=1e-12, atol=1e-12)


def test_gemm_steps_take_alpha_beta_in_the_kernel(monkeypatch):
    # a one-GEMM plan must not reach the second pass
    monkeypatch.setattr(contract_mod, "scale_accumulate",
                        lambda *a, **k: pytest.fail("second pass on a GEMM plan"))
    a, b = _rand((20, 30)), _rand((30, 10))
    c = _rand((20, 10))
    want = 3.0 * a @ b - 0.5 * c
    contract("ij,jk->ik", a, b, alpha=3.0, beta=-0.5, out=c)
    np.testing.assert_allclose(c, want, rtol=1e-12)
    # complex with every edge above nest.CTILE_EDGE (a shorter one may take the nest)
    z, bz = _rand((20, 30), np.complex128), _rand((30, 24)).astype(np.complex128)
    cz = np.ones((20, 24), np.complex128)
    contract("ij,jk->ik", z, bz, alpha=2.0, beta=1.0, out=cz)
    np.testing.assert_allclose(cz, 2.0 * z @ bz + 1.0, rtol=1e-12)


def test_non_gemm_plans_use_the_named_second_pass(monkeypatch):
    seen = []
    real = contract_mod.scale_accumulate
    monkeypatch.setattr(contract_mod, "scale_accumulate",
                        lambda *a, **k: seen.append(a[0]) or real(*a, **k))
    a, b, c = _rand((6, 7, 5)), _rand((7, 4)), _rand((6, 4))
    want = 2.0 * np.einsum("ijk,jl->il", a, b) + 3.0 * c
    contract("ijk,jl->il", a, b, alpha=2.0, beta=3.0, out=c)
    assert seen == ["ijk,jl->il"]
    np.testing.assert_allclose(c, want, rtol=1e-12)


def test_pytblis_semantics():
    a, b = _rand((4, 5)), _rand((5, 6))
    with pytest.raises(ValueError, match="beta must be 0"):
        contract("ij,jk->ik", a, b, beta=1.0)
    with pytest.raises(ValueError):
        contract("ij,jk->ik", a, b, out=np.empty((4, 7)))
    ro = np.empty((4, 6))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        contract("ij,jk->ik", a, b, out=ro)
    s = contract("ij,ij->", a, a)
    assert isinstance(s, np.ndarray) and s.shape == ()
    np.testing.assert_allclose(s, (a * a).sum(), rtol=1e-12)
    z = _rand((4, 5), np.complex128)
    np.testing.assert_allclose(contract("ij,jk->ik", z, b, conja=True), z.conj() @ b,
                               rtol=1e-12)
    # a complex alpha promotes a real product
    r = contract("ij,jk->ik", a, b, alpha=1j)
    assert r.dtype == np.complex128
    np.testing.assert_allclose(r, 1j * (a @ b), rtol=1e-12)


def test_overlapping_out_and_cast_out():
    a = _rand((8, 8))
    want = 2.0 * a @ a + a
    contract("ij,jk->ik", a, a, alpha=2.0, beta=1.0, out=a)
    np.testing.assert_allclose(a, want, rtol=1e-12)
    b32 = _rand((8, 8), np.float32)
    out = np.zeros((8, 8), np.float64)
    contract("ij,jk->ik", b32, b32, out=out)
    np.testing.assert_allclose(out, b32.astype(np.float64) @ b32, rtol=1e-5)


def test_matches_pytblis_where_installed():
    pytblis = pytest.importorskip("pytblis", reason="pytblis not installed")
    a, b = _rand((7, 8, 9)), _rand((9, 8, 5))
    c1, c2 = _rand((7, 5)), None
    c2 = c1.copy()
    pytblis.contract("ijk,kjl->il", a, b, alpha=0.5, beta=2.0, out=c1)
    einplan.contract("ijk,kjl->il", a, b, alpha=0.5, beta=2.0, out=c2)
    np.testing.assert_allclose(c2, c1, rtol=1e-12)


def test_einsum_out_keeps_overwrite_semantics():
    a, b = _rand((5, 6)), _rand((6, 7))
    out = np.full((5, 7), 99.0)
    einplan.einsum("ij,jk->ik", a, b, out=out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
