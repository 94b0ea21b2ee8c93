"""cli.py / demo.py through a subprocess: output, exit codes, one-line errors."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from einplan import _native
from einplan.explain import validate


ROOT = Path(__file__).resolve().parents[1]
# no calibration runs: these tests check the command line, not the model
ENV = dict(os.environ, EINPLAN_MODEL_CALIBRATE="0", PYTHONPATH=str(ROOT))


def run(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "einplan", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env or ENV, timeout=timeout)


def test_explain_tract_text():
    p = run("explain", "bij,jk->bik", "77x6x512", "512x1536", "--dtype", "float32")
    assert p.returncode == 0, p.stderr
    assert "m = b*i merged (77 x 6 -> 462), one GEMM" in p.stdout
    assert "77 GEMMs of 6 x 512 x 1536" in p.stdout
    assert p.stderr == ""


def test_explain_json_is_valid():
    p = run("explain", "ab,...b->...a", "600x821", "32x100x821", "--dtype", "float32", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert validate(d) == []
    assert d["steps"][0]["orientation"]["output_transpose"] is False
    assert d["call"]["operands"][0]["dtype"] == "float32"


def test_explain_measure_and_options():
    p = run("explain", "ij,jk->ik", "60x50:F", "50x40", "--out", "60x40", "--measure",
            "--threads", "1")
    assert p.returncode == 0, p.stderr
    assert "F order" in p.stdout and "measured   median" in p.stdout
    assert "given by out=" in p.stdout


def test_explain_frontend():
    p = run("explain", "--function", "matmul", "10x20x30", "30x40", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["call"]["frontend_spec"] == "...ik,...kj->...ij"
    p = run("explain", "--function", "tensordot", "3x4x5", "4x3x6", "--axes", "1,0;0,1")
    assert p.returncode == 0, p.stderr
    assert "abc,bad->cd" in p.stdout


def test_help_shows_examples():
    for args in (["--help"], ["explain", "--help"]):
        p = run(*args)
        assert p.returncode == 0
        assert "examples:" in p.stdout and 'einplan explain "bij,jk->bik"' in p.stdout


@pytest.mark.parametrize("args, words", [
    (["explain", "bij,jk>bik", "77x6x512", "512x1536"], "subscript"),           # bad spec
    (["explain", "bij,jk->bik", "77xq", "512x1536"], "bad shape"),              # bad shape
    (["explain", "bij,jk->bik", "77x6x512", "5x1536"], "broadcast"),            # mismatch
    (["explain", "bij,jk->bik", "77x6x512"], "operand"),                        # missing operand
    (["explain", "ij,jk->ik", "3x4", "4x5", "--dtype", "foo"], "dtype"),
    (["explain"], "spec"),
    (["explain", "ij->i", "3x3", "--bogus"], "unrecognized"),
    (["explain", "ij,jk->ik", "3x4", "4x5", "--threads", "0"], "threads"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_one_line_exit_2(args, words):
    p = run(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("einplan: error: ") and words in lines[0]
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_demo_fast():
    env = dict(ENV, EINPLAN_DEMO_FAST="1")
    env.pop("EINPLAN_MODEL_CALIBRATE")
    p = run("demo", env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    for head in ("1. tract", "2. JAX", "3. TVM", "4. IREE", "5. WebNN"):
        assert head in p.stdout
    assert "m = b*i merged (77 x 6 -> 462), one GEMM" in p.stdout
    assert "C-contiguous: True" in p.stdout
    assert p.stdout.count("numpy") >= 4
    assert "all results agree with numpy" in p.stdout
    assert "[1/5]" in p.stderr and "[5/5]" in p.stderr and "demo finished" in p.stderr


@pytest.mark.parametrize("core", ["Haswell", "SkylakeX"])
def test_demo_names_numpys_blas_and_a_hobbled_one(core):
    # the demo's ratios are against numpy: it says which BLAS kernels numpy runs, and warns
    # when OpenBLAS runs its AVX2 kernels on an AVX-512 CPU (half the peer's speed)
    pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed (the test extra)")
    if core == "SkylakeX" and _native.isa() != "avx512":
        pytest.skip(reason="no AVX-512 on this CPU: OpenBLAS cannot be given its AVX-512 kernels")
    code = "from einplan.demo import _numpy_blas; print(repr(_numpy_blas()))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(ENV, OPENBLAS_CORETYPE=core), timeout=60)
    assert p.returncode == 0, p.stderr
    name, hobbled = eval(p.stdout)
    if "openblas" not in name.lower():
        pytest.skip(reason=f"numpy's BLAS is {name!r}, not OpenBLAS")
    avx512 = _native.isa() == "avx512"
    assert name.endswith(core) or not avx512, name
    assert hobbled == (avx512 and core == "Haswell")


def test_console_script():
    exe = shutil.which("einplan")
    if exe is None:
        pytest.skip(reason="einplan console script not installed")
    p = subprocess.run([exe, "explain", "ij,jk->ik", "3x4", "4x5"], capture_output=True,
                       text=True, env=ENV, timeout=60)
    assert p.returncode == 0 and "step 1/1: gemm" in p.stdout


@pytest.mark.parametrize("args", [
    ("explain", "ij,jk->ik", "99999999999999999999x3", "3x4"),
    ("explain", "ij,jk->ik", "3x3", "3x4", "--optimize", "bogus"),
    ("explain", "ij,jk->ik", "300000x300000", "300000x300000", "--measure"),
    ("explain", "ij,jk->ik", "3x3", "3x4", "--threads", "0"),
    ("explain", "ij,jk->ik", "3x3", "3x4", "--threads", "1.5"),
])
def test_bad_input_exits_2_with_one_line(args):
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr


def test_huge_thread_count_is_capped_not_a_crash():
    p = run("explain", "ij,jk->ik", "30x30", "30x30", "--threads", "100000", "--measure")
    assert p.returncode == 0, p.stderr
    assert "caps the number of threads" in p.stderr
