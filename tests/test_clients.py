"""Real clients on einplan: PySCF, quimb / cotengra through autoray, einops.

Installed by the ``clients`` extra (``pip install -e ".[test,clients]"``); a
test is skipped, with the package named, only where that package is missing.
"""
import numpy as np
import pytest

import einplan
from einplan import patching


def _need(name):
    return pytest.importorskip(name, reason=f"{name} not installed (the 'clients' extra)")


@pytest.fixture
def pyscf_on_einplan(monkeypatch):
    """PySCF with numpy patched and lib.einsum / lib.contract on einplan."""
    _need("pyscf")
    from pyscf.lib import numpy_helper
    monkeypatch.setattr(numpy_helper, "EINSUM_BACKEND", "pytblis")
    monkeypatch.setattr(numpy_helper, "pytblis", einplan.tblis, raising=False)
    with einplan.patched():
        yield


def _rccsd_energy():
    from pyscf import cc, gto, scf
    mol = gto.M(atom="O 0 0 0; H 0 0.757 0.587; H 0 -0.757 0.587", basis="6-31g",
                verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    mycc = cc.RCCSD(mf)
    mycc.conv_tol = 1e-10
    mycc.kernel()
    return mycc.e_corr


@pytest.fixture
def pyscf_own_path(monkeypatch):
    _need("pyscf")
    from pyscf.lib import numpy_helper
    monkeypatch.setattr(numpy_helper, "EINSUM_BACKEND", None)   # PySCF's own einsum


def test_pyscf_rccsd_energy_equals_unpatched(pyscf_own_path, monkeypatch):
    reference = _rccsd_energy()
    from pyscf.lib import numpy_helper
    monkeypatch.setattr(numpy_helper, "EINSUM_BACKEND", "pytblis")
    monkeypatch.setattr(numpy_helper, "pytblis", einplan.tblis, raising=False)
    patching.reset_fallback_counts()
    with einplan.patched(), einplan.profile() as prof:
        energy = _rccsd_energy()
    assert abs(energy - reference) < 1e-10
    d = prof.to_dict()
    vias = set()
    for r in d["rows"]:
        vias |= set(r["via"])
    # PySCF's np.einsum calls and its lib.einsum (the pytblis backend) reached einplan
    assert {"numpy.einsum", "einplan.einsum"} <= vias, vias
    assert d["calls"] > 100
    assert all(r["calls"] > 0 and r["total_s"] >= 0 for r in d["rows"])


def test_quimb_and_cotengra_through_autoray_equal_numpy():
    ctg = _need("cotengra")
    _need("autoray")
    from cotengra.contract import get_default_implementation

    from einplan.autoray_backend import unregister_autoray
    inputs, output, shapes, size_dict = ctg.utils.rand_equation(14, 3, n_out=2, seed=4)
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in shapes]
    eq = ctg.utils.inputs_output_to_eq(inputs, output)
    ref = np.einsum(eq, *arrays, optimize="greedy")
    tree = ctg.array_contract_tree(inputs, output, size_dict)
    default = get_default_implementation()
    einplan.register_autoray()
    try:
        # quimb calls cotengra without an implementation: numpy arrays now
        # take autoray's einsum / tensordot, i.e. einplan's
        assert get_default_implementation() == "autoray"
        with einplan.profile() as prof:
            got_autoray = tree.contract(arrays, implementation="autoray")
            got_default = tree.contract(arrays)
        np.testing.assert_allclose(got_autoray, ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got_default, ref, rtol=1e-10, atol=1e-12)
        assert prof.to_dict()["calls"] >= 2 * (len(arrays) - 1) - 2
        qtn = _need("quimb.tensor")
        peps = qtn.PEPS.rand(3, 3, bond_dim=2, seed=5)
        with einplan.profile() as prof:
            norm = peps.H @ peps
        assert prof.to_dict()["calls"] > 0
    finally:
        unregister_autoray()
    assert get_default_implementation() == default
    assert norm == pytest.approx(peps.H @ peps, rel=1e-10)


def test_einops_einsum_under_patched():
    einops = _need("einops")
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((4, 7, 16)), rng.standard_normal((16, 5))
    ref = einops.einsum(x, w, "b t d, d e -> b t e")
    with einplan.patched(), einplan.profile() as prof:
        got = einops.einsum(x, w, "b t d, d e -> b t e")
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    (row,) = prof.rows()
    assert row["via"] == {"numpy.einsum": 1} and row["shapes"] == [[4, 7, 16], [16, 5]]
