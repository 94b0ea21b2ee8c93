"""einplan.explain / model.py: report content for the seed cases, text == dict ==
JSON, the JSON schema, fallbacks, front ends, and (slow) the cost model
against a measured GEMM."""
import json
import os

import numpy as np
import pytest

import einplan
from einplan import _native, model
from einplan.plan import KernelPath, ParallelLoop

from _gemm_util import smm_in_use
from einplan.explain import (SCHEMA, SCHEMA_VERSION, Report, _fmt_bytes, _fmt_time, explain,
                             explain_call, validate)


F32 = np.float32


def tract():
    return explain("bij,jk->bik", (77, 6, 512), (512, 1536), dtype="float32")


def jax():
    return explain("ab,...b->...a", (600, 821), (32, 100, 821), dtype="float32")


def permuted():
    return explain("abcd,dbef->aecf", (8, 9, 10, 11), (11, 9, 12, 13))


# -- seed cases, asserted from to_dict() ------------------------------------------

def test_tract_m_merged_one_gemm():
    # bij,jk->bik, A (77, 6, 512): b and i merge into one m of 462, no batch loop
    d = tract().to_dict()
    (step,) = d["steps"]
    assert step["kind"] == "gemm"
    assert step["shape_mnk"] == {"batch": 1, "m": 462, "n": 1536, "k": 512}
    (merge,) = step["merges"]
    assert merge["role"] == "m" and merge["labels"] == "bi"
    assert merge["extents"] == [77, 6] and merge["extent"] == 462
    assert merge["text"].startswith("m = b*i merged (77 x 6 -> 462), one GEMM")
    alt = step["loop_alternative"]
    assert (alt["gemms"], alt["m"], alt["k"], alt["n"]) == (77, 6, 512, 1536)
    assert "77 GEMMs of 6 x 512 x 1536" in alt["text"]
    assert alt["predicted_s"] > step["cost"]["predicted_s"]
    rows = {r["index"]: r for r in step["roles"]}
    assert rows["b"]["role"] == rows["i"]["role"] == "m"
    assert rows["b"]["merged"] and rows["b"]["group"] == "m[0] = b*i"
    assert (rows["b"]["stride_a"], rows["b"]["stride_b"], rows["b"]["stride_c"]) == (3072, None, 9216)
    assert rows["j"]["role"] == "k" and rows["k"]["role"] == "n"
    assert d["copies"]["bytes"] == 0 and d["fallbacks"] == []


def test_tract_text_reads_as_one_gemm():
    text = str(tract())
    assert "m = b*i merged (77 x 6 -> 462), one GEMM" in text
    assert "77 GEMMs of 6 x 512 x 1536" in text


def test_jax_no_output_transpose():
    # 'ab,...b->...a': w (600, 821) must feed the columns (n = a, C's unit stride)
    d = jax().to_dict()
    (step,) = d["steps"]
    o = step["orientation"]
    assert o["output_transpose"] is False and o["output_copy"] is False
    assert o["swapped"] is True
    assert o["c_unit_index"] == "a" and o["c_unit_role"] == "n"
    assert o["a_operand"].startswith("operand 1") and o["b_operand"].startswith("operand 0")
    assert "no transpose" in o["result"]
    assert d["call"]["output"]["layout"] == "C order"
    assert d["call"]["ellipsis"] == {"A": 0, "B": 1}
    assert d["call"]["spec"] == "ab,ABb->ABa"
    assert d["copies"]["bytes"] == 0


def test_permuted_zero_copies_and_why_not_merged():
    # abcd,dbef->aecf: packed straight from strided layout, nothing copied
    d = permuted().to_dict()
    (step,) = d["steps"]
    assert step["kind"] == "gemm"
    assert d["copies"] == {"bytes": 0, "items": []}
    assert d["fallbacks"] == []
    assert step["kernel"]["bytes_packed"] > 0
    breaks = {(b["role"], b["outer"], b["inner"]): b for b in step["not_merged"]}
    assert ("m", "a", "c") in breaks
    assert breaks[("m", "a", "c")]["operands"] == ["A"]
    assert "stride[a] = 990" in breaks[("m", "a", "c")]["text"]
    assert [m["labels"] for m in step["merges"]] == ["ef"]


def test_report_prints_the_plan_einsum_runs(monkeypatch):
    A = np.ones((77, 6, 512), F32)
    W = np.ones((512, 1536), F32)
    seen = []
    import einplan.api as api
    real = api.run_plan
    monkeypatch.setattr(api, "run_plan", lambda plan, *a, **k: seen.append(plan) or real(plan, *a, **k))
    einplan.einsum("bij,jk->bik", A, W)
    assert explain("bij,jk->bik", A, W).plan is seen[0]
    # shapes describe the same C-order layouts: the same cached Plan
    assert tract().plan is seen[0]


# -- text / dict / JSON agree; the schema --------------------------------------------

CASES = {
    "tract": tract,
    "jax": jax,
    "permuted": permuted,
    "chain": lambda: explain("ij,jk,kl->il", (80, 90), (90, 100), (100, 11)),
    "int_fallback": lambda: explain("ij,jk->ik", np.ones((4, 4), np.int64), np.ones((4, 4), np.int64)),
    "tvm_out": lambda: explain("ncabhw->nchawb", (1, 4, 2, 2, 6, 8), dtype="float32",
                               out=(1, 4, 6, 2, 8, 2)),
    "view": lambda: explain("ij->ji", np.ones((3, 4))),
    "presum": lambda: explain("abc,cd->d", (5, 6, 7), (7, 8)),
    "presum_gemm": lambda: explain("abc,cd->bd", (5, 32, 32), (32, 32)),
    "diagonal": lambda: explain("iij,jk->ik", (6, 6, 7), (7, 8)),
    "complex": lambda: explain("ij,jk->ik", np.ones((9, 9), np.complex64), np.ones((9, 9), F32)),
    # computed in dtype= float32, written to a float64 out= (numpy: the
    # iterator computes in dtype= and casts on the way out)
    "out_cast": lambda: explain("ij,jk->ik", np.ones((9, 9), F32), np.ones((9, 9), F32),
                                dtype=F32, casting="same_kind", out=np.empty((9, 9))),
    "batched": lambda: explain("bij,bjk->bik", (4, 30, 40), (4, 40, 50)),
    "matmul": lambda: explain_call("matmul", (10, 20, 30), (30, 40)),
    "scalar": lambda: explain("i,i->", (100,), (100,)),
}


@pytest.fixture(params=sorted(CASES))
def report(request):
    return CASES[request.param]()


def test_schema_valid(report):
    d = report.to_dict()
    assert d["schema_version"] == SCHEMA_VERSION
    assert validate(d) == []


def test_schema_valid_jsonschema(report):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (the test extra)")
    jsonschema.validate(json.loads(report.to_json()), SCHEMA)


def test_json_is_the_dict(report):
    assert json.loads(report.to_json()) == report.to_dict()
    assert report.to_dict() is not report.to_dict()  # a copy each time


def test_text_carries_the_dict(report):
    d, text = report.to_dict(), str(report)
    assert d["call"]["spec"] in text
    for op in d["call"]["operands"]:
        assert str(tuple(op["shape"])) in text and op["dtype"] in text
    for s in d["steps"]:
        for mg in s["merges"]:
            assert mg["text"] in text
        for br in s["not_merged"]:
            assert br["text"] in text
        for r in s["roles"]:
            assert any(line.split()[:1] == [r["index"]] and r["role"] in line
                       for line in text.splitlines())
        k = s["kernel"]
        if k["mr"]:
            assert f"MR x NR = {k['mr']} x {k['nr']}" in text
            assert f"MC/KC/NC = {k['mc']}/{k['kc']}/{k['nc']}" in text
            assert f"of which {k['fringe_tiles']} fringe" in text
        if s["orientation"]:
            assert s["orientation"]["why"] in text
        assert _fmt_time(s["cost"]["predicted_s"]) in text
    for fb in d["fallbacks"]:
        assert fb["reason"] in text
    assert _fmt_bytes(d["copies"]["bytes"]) in text or d["copies"]["bytes"] == 0
    for c in d["copies"]["items"]:
        assert c["why"] in text
    assert report._repr_markdown_().count(d["call"]["spec"]) >= 1


def test_validator_catches_errors():
    d = tract().to_dict()
    del d["steps"][0]["kernel"]["threads"]
    d["totals"]["flops"] = "many"
    d["surprise"] = 1
    errs = validate(d)
    assert any("threads" in e for e in errs)
    assert any("totals.flops" in e for e in errs)
    assert any("surprise" in e for e in errs)


# -- fallbacks, copies, paths, front ends -----------------------------------------------

def test_fallback_has_its_reason():
    d = CASES["int_fallback"]().to_dict()
    assert d["plan"]["fallback"] and "int64" in d["plan"]["fallback"]
    assert any("int64" in f["reason"] for f in d["fallbacks"])
    assert d["totals"]["predicted_s"] is None


def test_out_cast_is_a_copy_with_a_reason():
    d = CASES["out_cast"]().to_dict()
    assert d["copies"]["bytes"] == 9 * 9 * 4
    assert "dtype" in d["copies"]["items"][0]["why"]
    assert d["steps"][0]["orientation"]["output_copy"] is True
    assert d["fallbacks"]


def test_out_overlapping_an_operand_is_a_copy():
    a = np.ones((20, 20))
    d = explain("ij,jk->ik", a, a, out=a).to_dict()
    assert d["copies"]["bytes"] == 20 * 20 * 8
    assert d["copies"]["items"][0]["why"] == "out= overlaps an operand"


def test_only_einsum_keywords():
    with pytest.raises(TypeError, match="bogus"):
        explain("ij->i", (3, 3), bogus=1)
    d = explain("ij,jk->ik", (3, 4), (4, 5), order="F", casting="unsafe").to_dict()
    assert d["call"]["options"]["order"] == "F"
    assert d["call"]["output"]["layout"] == "F order"


def test_presum_is_a_temporary_and_a_role():
    # a GEMM-engine plan sums 'a' out of the first operand into a temporary
    d = CASES["presum_gemm"]().to_dict()
    kinds = [s["kind"] for s in d["steps"]]
    assert kinds == ["reduce", "gemm"]
    roles = [r["role"] for r in d["steps"][1]["roles"]]
    assert roles.count("summed-first") == 1
    assert d["copies"]["bytes"] == 32 * 32 * 8


def test_nest_sums_in_place_without_a_temporary():
    # the loop nest reads 'abc' once, summing a and b on the way: no temporary
    d = CASES["presum"]().to_dict()
    (step,) = d["steps"]
    assert step["kind"] == "gemv" and step["engine"] == "nest"
    assert d["copies"]["bytes"] == 0 and d["fallbacks"] == []
    assert [r["role"] for r in step["roles"]].count("summed") >= 1


def test_diagonal_is_noted():
    d = CASES["diagonal"]().to_dict()
    (row,) = [r for r in d["steps"][0]["roles"] if r["index"] == "i"]
    assert row["stride_a"] == 6 * 7 + 7 and any("diagonal" in n for n in row["notes"])


def test_chain_path_flops_and_intermediates():
    d = CASES["chain"]().to_dict()
    path = d["plan"]["path"]
    assert len(path) == 2
    assert sum(p["flops"] for p in path) == pytest.approx(d["totals"]["flops"])
    assert path[0]["result_bytes"] == 90 * 11 * 8
    assert d["copies"]["bytes"] == 90 * 11 * 8


def test_tvm_permutation_into_out_no_copies():
    d = CASES["tvm_out"]().to_dict()
    (step,) = d["steps"]
    assert step["kind"] == "copy" and "permutation copy" in step["what"]
    assert d["copies"]["bytes"] == 0 and d["call"]["out_given"]


def test_explain_matmul_shows_the_einsum_spec():
    d = explain.matmul((10, 20, 30), (30, 40)).to_dict()
    assert d["call"]["function"] == "matmul"
    assert d["call"]["frontend_spec"] == "...ik,...kj->...ij"
    assert d["steps"][0]["merges"][0]["extent"] == 200      # the '...' axis and i merge
    t = explain_call("tensordot", np.ones((3, 4, 5)), np.ones((4, 3, 6)), axes=([1, 0], [0, 1]))
    assert t.to_dict()["call"]["frontend_spec"] == "abc,bad->cd"
    with pytest.raises(ValueError, match="unknown function"):
        explain_call("solve", (2, 2), (2,))


def test_explain_vdot_says_where_it_conjugates():
    a = np.ones(100, complex)
    assert "conjugated inside the nest's kernel" in str(explain.vdot(a, a))
    assert "conjugated inside" not in str(explain.vdot(a.real, a.real))


def test_shape_objects_with_strides():
    # a Fortran-order operand given as an object with shape/dtype/strides (bytes)
    a = np.empty((40, 30), order="F")
    d = explain("ij,jk->ik", a, (30, 20)).to_dict()
    assert d["call"]["operands"][0]["strides"] == [1, 40]
    assert d["call"]["operands"][0]["layout"] == "F order"


def test_bad_input_raises_numpy_errors():
    with pytest.raises(ValueError):
        explain("ij,jk->ik", (3, 4), (5, 6))
    with pytest.raises(ValueError):
        explain("ij,jk->iq", (3, 4), (4, 6))


def test_measure_adds_a_timing():
    r = explain("ij,jk->ik", (64, 64), (64, 64), dtype="float32", measure=True)
    m = r.to_dict()["measured"]
    assert m["runs"] >= 5 and m["median_s"] > 0 and m["gflops"] > 0
    assert m["predicted_s"] == r.to_dict()["totals"]["predicted_s"]
    assert "measured   median" in str(r)
    assert validate(r.to_dict()) == []


def test_measure_never_writes_the_callers_out():
    out = np.full((8, 8), 7.0, F32)
    explain("ij,jk->ik", np.ones((8, 8), F32), np.ones((8, 8), F32), out=out, measure=True)
    assert (out == 7.0).all()


# -- the machine model ------------------------------------------------------------------

def test_machine_peak_formula():
    m = model.machine()
    assert m.clock_ghz > 0 and m.fma_units in (1, 2) and m.bandwidth_gbs > 0
    lanes = m.vector_bits // 32
    assert m.peak_gflops("float32") == pytest.approx(lanes * 2 * m.fma_units * m.clock_ghz)
    assert m.peak_gflops("float64", 2) == pytest.approx(m.peak_gflops("float32"))
    assert m.peak_gflops("complex64") == m.peak_gflops("float32")


def test_machine_env_overrides(monkeypatch):
    monkeypatch.setenv("EINPLAN_CLOCK_GHZ", "2.5")
    monkeypatch.setenv("EINPLAN_FMA_UNITS", "2")
    monkeypatch.setenv("EINPLAN_BANDWIDTH_GBS", "12")
    m = model._calibrate()
    assert (m.clock_ghz, m.fma_units, m.bandwidth_gbs) == (2.5, 2, 12.0)
    assert m.clock_source == "EINPLAN_CLOCK_GHZ"


def test_peak_probe_runs_every_isa_and_refuses_others():
    """The probe runs each kernel set this CPU has (a rate of 0 would price
    every plan at infinite time) and refuses the others."""
    have = _native.available_isas()
    for isa in have:
        assert _native.probe_ukr_gflops(isa) > 0
    for isa in {"generic", "avx2", "avx512"} - set(have):
        with pytest.raises(ValueError, match="not supported"):
            _native.probe_ukr_gflops(isa)


@pytest.mark.parametrize("gflops, per_cycle, nominal, units", [
    (95.0, 16, 2.45, 2),    # Zen 3, AVX2: two 256-bit units at 2.97 GHz
    (40.0, 16, 2.45, 1),    # only one unit can explain it (2.5 GHz)
    (118.0, 32, 2.4, 1),    # Zen 4, AVX-512 double-pumped at a 3.7 GHz turbo
    (230.0, 32, 2.4, 2),    # two full-width 512-bit units at 3.6 GHz
])
def test_fma_units_inferred_from_the_probe(gflops, per_cycle, nominal, units):
    u, clock = model.infer_fma_units(gflops, per_cycle, nominal)
    assert u == units
    assert clock == pytest.approx(gflops / (per_cycle * units))
    assert model.infer_fma_units(gflops, per_cycle, nominal, units=1)[0] == 1


def test_b_is_read_in_place_only_while_it_fits_this_cores_share_of_l3():
    """A few rows of A read B in place -- each micro-tile takes a line from
    every k row, which only L3's latency can serve -- while B fits this core's
    share of L3; a larger B is packed (and the result is the same)."""
    caches = _native.kernel_config()["caches"]
    share = caches["l3"] // os.cpu_count() if caches["l3"] > 0 else 2 << 20
    f32 = {"dtype": np.float32}
    n_in = max(16, share // (4 * 427) // 2)
    n_out = share // (4 * 427) * 2
    assert model.gemm_schedule(3, n_in, 427, 1, 1, **f32).direct_b
    assert not model.gemm_schedule(3, n_out, 427, 1, 1, **f32).direct_b
    rng = np.random.default_rng(2)
    A, B = rng.random((427, 3), np.float32), rng.random((427, 4096), np.float32)
    np.testing.assert_allclose(einplan.einsum("jk,ji->ki", A, B), A.T @ B, rtol=1e-4)


def test_one_fma_unit_is_believed_only_after_the_probe_is_repeated(monkeypatch):
    """A probe run on a busy core reads low: a rate that implies one FMA unit
    is measured again, and a later run that implies two is taken; a CPU that
    keeps reading as one unit is still inferred as one."""
    cfg = _native.kernel_config()
    if not {"avx512", "avx2"} & set(cfg["available_isas"]):
        pytest.skip(reason="no SIMD kernel set to probe on this CPU")
    for var in ("EINPLAN_CLOCK_GHZ", "EINPLAN_FMA_UNITS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EINPLAN_BANDWIDTH_GBS", "12")
    monkeypatch.setattr(model, "_cpuinfo", lambda: ("test CPU", 2.45))
    per_cycle = 32 if "avx512" in cfg["available_isas"] else 16
    one_unit, two_units = per_cycle * 2.3, per_cycle * 2 * 2.9
    for rates, units in (([one_unit, two_units], 2), ([one_unit] * 9, 1)):
        runs = iter(rates)
        calls = []

        def fake_probe(isa):
            calls.append(isa)
            return next(runs), "a fake probe"
        monkeypatch.setattr(model, "_ukr_gflops", fake_probe)
        m = model._calibrate()
        assert m.fma_units == units
        assert len(calls) == (2 if units == 2 else 1 + model.PROBE_RETRIES)


def test_schedule_is_ep_gemms_own():
    """The schedule explain prints is the C core's decision (ep_gemm_schedule)."""
    f32 = {"dtype": np.float32}
    s = model.gemm_schedule(462, 1536, 512, 1, 2, **f32)
    # m = 462 (58 panels of 8): the two threads split m
    assert (s.path, s.threads, s.loop, s.kc, s.nc) == (KernelPath.GEMM, 2, ParallelLoop.M,
                                                       512, 1536)
    # 77 GEMMs of 6 x 512 x 1536 (9.4 MFLOP each): enough to share out whole
    assert model.gemm_schedule(6, 1536, 512, 77, 2, **f32).loop == ParallelLoop.BATCH
    # 3 GEMMs of 256^3 (odd count) and 2 of 512^3 (> 1e8 flops): split inside each
    assert model.gemm_schedule(256, 256, 256, 3, 2, **f32).loop == ParallelLoop.M
    assert model.gemm_schedule(512, 512, 512, 2, 2, **f32).loop == ParallelLoop.M
    # 3 GEMMs of 6 x 512 x 1536: all threads share each GEMM, split n
    assert model.gemm_schedule(6, 1536, 512, 3, 2, **f32).loop == ParallelLoop.N
    # many small GEMMs (< 4 MFLOP each): one whole GEMM per thread
    assert model.gemm_schedule(6, 100, 64, 77, 2, **f32).loop == ParallelLoop.BATCH
    # tiny batched blocks: the in-place smm path; one GEMV; a tiny GEMM on one thread
    assert model.gemm_schedule(8, 8, 8, 500, 2).path == (KernelPath.SMM if smm_in_use()
                                                         else KernelPath.GEMM)
    assert model.gemm_schedule(1, 300, 300, 1, 2).path == KernelPath.GEMV
    tiny = model.gemm_schedule(70, 70, 70, 1, 2)
    assert (tiny.threads, tiny.loop, tiny.path) == (1, ParallelLoop.NONE, KernelPath.GEMM)
    # one row panel: B read in place (every kernel set); 300 rows: packed
    assert model.gemm_schedule(6, 70, 70, 1, 2).direct_b
    assert not model.gemm_schedule(300, 70, 70, 1, 2).direct_b


@pytest.mark.slow
def test_predicted_vs_measured_gemm_within_3x():
    """The model's predicted time of a 1024^3 float32 GEMM (1 thread) is
    within a factor of 3 of the measured median (timing-sensitive: slow)."""
    old = einplan.get_num_threads()
    einplan.set_num_threads(1)
    try:
        r = explain("ij,jk->ik", (1024, 1024), (1024, 1024), dtype="float32", measure=True)
    finally:
        einplan.set_num_threads(old)
    m = r.to_dict()["measured"]
    assert 1 / 3 <= m["measured_over_predicted"] <= 3, str(r)


def test_report_type():
    r = tract()
    assert isinstance(r, Report) and r["schema_version"] == SCHEMA_VERSION
    assert "gemm" in repr(r)
