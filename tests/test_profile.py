"""einplan.profile and `einplan profile`: what a program's contractions cost."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import einplan
from einplan import api

RNG = np.random.default_rng(3)


def _program():
    a, b = RNG.random((40, 50)), RNG.random((50, 60))
    for _ in range(3):
        einplan.einsum("ij,jk->ik", a, b)
    einplan.dot(a, b)
    einplan.contract("ij,jk->ik", a, b, alpha=2.0)
    with einplan.patched():
        np.tensordot(a, b, 1)
        np.einsum("ii->i", a[:40, :40])
        np.dot(np.asmatrix(a), b)          # handed back to numpy: a fallback row
    return a, b


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_profile_records_every_entry_point():
    with einplan.profile() as prof:
        _program()
    assert api._recorder is None          # nothing left on the hot path
    d = prof.to_dict()
    rows = d["rows"]
    assert d["calls"] == 8 and sum(r["calls"] for r in rows) == 8
    by_via = {}
    for r in rows:
        for via, n in r["via"].items():
            by_via[via] = by_via.get(via, 0) + n
    assert by_via == {"einplan.einsum": 4, "einplan.contract": 1, "numpy.tensordot": 1,
                      "numpy.einsum": 1, "numpy.dot": 1}
    totals = [r["total_s"] for r in rows]
    assert totals == sorted(totals, reverse=True)
    (ij,) = [r for r in rows if r["call"] == "ij,jk->ik" and r["kind"] == "einsum"]
    assert ij["calls"] == 3 and ij["shapes"] == [[40, 50], [50, 60]]
    assert ij["dtypes"] == ["float64", "float64"] and ij["layouts"] == ["C order", "C order"]
    # engine and kernel come from the explain report of the same plan
    rep = einplan.explain("ij,jk->ik", (40, 50), (50, 60)).to_dict()
    assert ij["engine"] == "+".join(s["kind"] for s in rep["steps"])
    assert rep["steps"][0]["kernel"]["isa"] in ij["kernel"]
    assert ij["rate_unit"] in ("GFLOP/s", "GB/s") and ij["rate"] > 0 and ij["pct_limit"] > 0
    (fb,) = [r for r in rows if r["kind"] == "numpy"]
    assert fb["fallbacks"] == ["operand of type numpy.matrix"] and fb["engine"] == "numpy"
    text = str(prof)
    assert "ij,jk->ik 40x50,50x60" in text and "FALLBACK" in text
    json.loads(prof.to_json())


def test_compare_replays_each_distinct_call():
    with einplan.profile() as prof:
        a = RNG.random((30, 30))
        for _ in range(4):
            einplan.einsum("ij,jk->ik", a, a)
        einplan.einsum("ij->", a)
    whole = prof.compare(budget_s=0.01)
    rows = prof.rows()
    assert all(r["compare"]["einplan_s"] > 0 and r["compare"]["numpy_s"] > 0 for r in rows)
    want = sum(r["compare"]["numpy_s"] * r["calls"] for r in rows) / sum(
        r["compare"]["einplan_s"] * r["calls"] for r in rows)
    assert whole["speedup"] == pytest.approx(want)
    assert "speedup" in str(prof) and "whole program" in str(prof)
    assert prof.to_dict()["calls"] == 5       # the replays are not recorded


def test_compare_replays_close_calls_in_turn():
    """Calls within ``close`` of parity get ``confirm_rounds`` more replays,
    einplan and numpy in turn; the others keep their first replay."""
    a = RNG.random((30, 30))
    for close, rounds in ((1e9, 3), (1.0, 1)):    # every call close / none
        with einplan.profile() as prof:
            einplan.einsum("ij,jk->ik", a, a)
            einplan.einsum("ij->", a)
        prof.compare(budget_s=0.01, confirm_rounds=2, close=close)
        rows = prof.rows()
        assert [r["compare"]["rounds"] for r in rows] == [rounds] * len(rows)
        assert all(r["compare"]["speedup"] == pytest.approx(
            r["compare"]["numpy_s"] / r["compare"]["einplan_s"]) for r in rows)


def test_compare_holds_numpys_blas_to_einplans_threads(monkeypatch):
    """The replays run numpy's BLAS on as many threads as einplan's (a pool
    sized when numpy loaded would otherwise race a program pinned to one
    thread); the pool is given back afterwards and the count is reported."""
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    if not blas or os.cpu_count() < 2:
        pytest.skip(reason="needs numpy's BLAS pool and 2 cores to hold it to fewer threads")
    profile_mod = sys.modules["einplan.profile"]
    seen, real = [], profile_mod.original("einsum")

    def spy(name):
        def einsum(*a, **k):
            seen.append(max(p["num_threads"] for p in threadpoolctl.threadpool_info()
                            if p["user_api"] == "blas"))
            return real(*a, **k)
        return einsum if name == "einsum" else profile_mod.original(name)
    old = einplan.get_num_threads()
    a = RNG.random((60, 60))
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        einplan.set_num_threads(1)
        try:
            with einplan.profile() as prof:
                einplan.einsum("ij,jk->ik", a, a)
            monkeypatch.setattr(profile_mod, "original", spy)
            whole = prof.compare(budget_s=0.01)
        finally:
            einplan.set_num_threads(old)
        after = max(p["num_threads"] for p in threadpoolctl.threadpool_info()
                    if p["user_api"] == "blas")
    assert seen and set(seen) == {1}
    assert after == 2
    assert whole["threads"] == {"einplan": 1, "numpy_blas": 1}
    assert "numpy's BLAS held to 1 thread(s)" in str(prof)


def test_nested_calls_are_recorded_once():
    with einplan.profile() as prof:
        with einplan.patched():
            np.matmul(RNG.random((5, 6)), RNG.random((6, 7)))
    (row,) = prof.rows()
    assert row["calls"] == 1 and row["via"] == {"numpy.matmul": 1}


def test_plot_writes_a_file(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (optional) not installed")
    with einplan.profile() as prof:
        einplan.einsum("ij,jk->ik", np.ones((4, 4)), np.ones((4, 4)))
    path = prof.plot(tmp_path / "p.png")
    assert os.path.getsize(path) > 1000


def test_cli_profile(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, numpy as np\n"
        "a = np.ones((20, 30)); b = np.ones((30, 10))\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    np.einsum('ij,jk->ik', a, b)\n"
        "sys.exit(3)\n")
    out = tmp_path / "p.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(einplan.__file__)), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-m", "einplan", "profile", "--compare", "--json",
                          str(out), str(script), "5"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 3, res.stderr        # the script's own exit status
    assert "ij,jk->ik 20x30,30x10" in res.stdout and "speedup" in res.stdout
    d = json.loads(out.read_text())
    (row,) = d["rows"]
    assert row["calls"] == 5 and row["via"] == {"numpy.einsum": 5}
    assert row["compare"]["speedup"] > 0
    bad = subprocess.run([sys.executable, "-m", "einplan", "profile", str(tmp_path / "no.py")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "no such script" in bad.stderr
