"""Bad input: numpy's exception class, a message that names what is wrong, and
never a crash or a hang.

Each invalid call is made to numpy.einsum too, so the expected exception class
is numpy's (checked, not assumed); the message must name the operand, label
or sizes involved.  Oversized and overflowing operands (huge broadcast views,
strides that overflow a pointer) run in a child process with a time limit, so
a segfault or a hang fails the test instead of killing the session.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import einplan


def _raises_like_numpy(args, kwargs=None, match=None):
    """Call numpy.einsum and einplan.einsum; both must raise the same class."""
    kwargs = kwargs or {}
    with pytest.raises(Exception) as np_exc:
        np.einsum(*args, **kwargs)
    with pytest.raises(np_exc.type, match=match) as ep_exc:
        einplan.einsum(*args, **kwargs)
    assert type(ep_exc.value) is np_exc.type, (ep_exc.value, np_exc.value)
    return ep_exc.value


A23 = np.ones((2, 3))
B45 = np.ones((4, 5))


@pytest.mark.parametrize("args, kwargs, match", [
    # label extents that disagree: names the label, the operand and both sizes
    (("ij,jk->ik", A23, B45), {}, r"'j'.*operand 1.*\(4\).*\(3\)"),
    # a diagonal whose extents differ
    (("ii->i", A23), {}, r"operand 0.*'i'.*2 != 3"),
    # more subscripts than dimensions
    (("ijk", A23), {}, r"operand 0.*3 subscripts for 2 dimension"),
    # fewer subscripts and no ellipsis
    (("i", A23), {}, r"operand 0 has 2 dimension"),
    # operand count
    (("ij,jk", A23), {}, r"2 operand\(s\) but 1"),
    (("ij", A23, A23), {}, r"1 operand\(s\) but 2"),
    # characters
    (("i%", A23), {}, r"'%'"),
    (("i.j", A23), {}, r"'\.'"),
    (("ij-<i", A23), {}, r"->"),
    # output labels
    (("ij->ik", A23), {}, r"'k'"),
    (("ij->ii", A23), {}, r"'i' multiple times"),
    (("...ij->ij", np.ones((2, 2, 3))), {}, r"ellipsis"),
    # interleaved form
    ((A23, [0, 52]), {}, r"52"),
    ((A23, [0, -1]), {}, r"-1"),
    ((A23, [0, Ellipsis, Ellipsis]), {}, r"ellipsis"),
    # options
    (("ij", A23), {"order": "W"}, r"order.*'W'"),
    (("ij", A23), {"casting": "blah"}, r"casting.*'blah'"),
    # out= shape
    (("ij,jk->ik", A23, np.ones((3, 4))), {"out": np.empty((2, 5))}, r"\(2, 5\).*\(2, 4\)"),
    # read-only out
    (("ij->ij", A23), {"out": np.broadcast_to(np.empty(3), (2, 3))}, r"read-only"),
])
def test_value_errors_like_numpy(args, kwargs, match):
    exc = _raises_like_numpy(args, kwargs, match)
    assert isinstance(exc, ValueError)


@pytest.mark.parametrize("args, kwargs, match", [
    ((0, 0), {}, None),                                   # subscripts not a string
    ((A23, [0, 1.5]), {}, r"integer or an ellipsis"),     # bad sublist item
    ((A23, [0, True]), {}, r"integer or an ellipsis"),    # bools are rejected
    ((A23, 5), {}, r"list or a tuple"),
    (("ij", A23), {"dtype": "bad_data_type"}, r"bad_data_type"),
    (("ij", A23), {"out": "test"}, r"out"),
    (("ij", A23), {"order": 1}, r"order"),
    (("ij", A23), {"casting": None}, r"casting"),
    # casting violations name the dtypes and the rule
    (("ij,jk->ik", A23, np.ones((3, 4))), {"dtype": np.float32},
     r"float64.*float32.*'safe'"),
    (("ij,jk->ik", A23, np.ones((3, 4))), {"out": np.empty((2, 4), np.int64)},
     r"float64.*int64.*'safe'"),
    (("ij", A23.astype(np.float32)), {"dtype": np.float64, "casting": "no",
                                        "out": np.empty((2, 3))}, r"'no'"),
])
def test_type_errors_like_numpy(args, kwargs, match):
    exc = _raises_like_numpy(args, kwargs, match)
    assert isinstance(exc, TypeError)


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError):
        np.einsum("ij", A23, bad_arg=0)
    with pytest.raises(TypeError, match="bad_arg"):
        einplan.einsum("ij", A23, bad_arg=0)


def test_no_arguments():
    _raises_like_numpy((), match="subscripts")
    _raises_like_numpy(("",), match="operand")


def test_many_none_operands_do_not_crash():
    # numpy gh-4528: this once segfaulted numpy
    _raises_like_numpy((None,) * 63)


def test_errors_leave_out_untouched():
    out = np.full((2, 4), 7.0)
    with pytest.raises(ValueError):
        einplan.einsum("ij,jk->ik", A23, np.ones((4, 4)), out=out)
    assert np.all(out == 7.0)


# -- oversized / overflowing operands: an error, never a crash or a hang --------

# Every case runs in ONE child interpreter (start-up dominates the cost), one
# line of output per case, flushed; a crash or hang shows up as the missing
# lines, and the first missing case is named in the failure.

_PRELUDE = """
import json, sys
import numpy as np, einplan
from numpy.lib.stride_tricks import as_strided
B = lambda shape: np.broadcast_to(np.ones(()), shape)
for case_id, code, classes in json.loads(sys.argv[1]):
    print("START", case_id, flush=True)
    try:
        exec(code)
    except Exception as exc:
        ok = type(exc).__name__ in classes or any(
            c.__name__ in classes for c in type(exc).__mro__)
        print("RESULT", case_id, "RAISED", type(exc).__name__, ok, flush=True)
    else:
        print("RESULT", case_id, "RETURNED", "-", False, flush=True)
"""


def _run_cases(cases, timeout=120):
    """{case_id: (outcome, exception class, ok)} for ``cases`` [(id, code, classes)]."""
    import json
    try:
        proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _PRELUDE,
                               json.dumps(cases)], capture_output=True, text=True,
                              timeout=timeout)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr, rc = f"timed out after {timeout}s (hang)", None
    results, started = {}, None
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["START"]:
            started = parts[1]
        elif parts[:1] == ["RESULT"]:
            results[parts[1]] = (parts[2], parts[3], parts[4] == "True")
            started = None
    return results, started, rc, stderr


# Each result would be 2**64+ elements (or far beyond memory): numpy raises on
# allocation; einplan must too, before any kernel runs.
_HUGE = {
    "outer_2e40": "einplan.einsum('i,j->ij', B((2**40,)), B((2**40,)))",
    "outer_8TiB": "einplan.einsum('i,j->ij', B((2**20,)), B((2**20,)))",
    "ellipsis": "einplan.einsum('...,...->...', B((2**31, 1)), B((1, 2**33)))",
    "batch": "einplan.einsum('bij,bjk->bik', B((2**33, 2, 2)), B((2**33, 2, 2)))",
    "three_outer": "einplan.einsum('i,j,k->ijk', B((2**22,)), B((2**22,)), B((2**22,)))",
    "outer_noopt": "einplan.einsum('i,j->ij', B((2**40,)), B((2**40,)), optimize=False)",
    "matmul": "einplan.matmul(B((2**31, 1)), B((1, 2**31)))",
    "outer_fn": "einplan.outer(B((2**33,)), B((2**33,)))",
    "tensordot": "einplan.tensordot(B((2**20, 2)), B((2, 2**20)), 1)",
}

# as_strided views whose strides claim more bytes than a pointer spans: any
# read through them would wrap the address.  Planning rejects them.
_OVERFLOWING = {
    "positive": "as_strided(np.ones(16), shape=(3, 3), strides=(2**62, 8))",
    "negative": "as_strided(np.ones(16), shape=(3, 3), strides=(-2**62, 8))",
    "mixed": "as_strided(np.ones(16), shape=(3, 3), strides=(2**62, -2**62))",
    "inner": "as_strided(np.ones(16), shape=(3, 3), strides=(8, 2**62))",
}
_OVERFLOW_SPECS = {
    "gemm_A": ("ij,jk->ik", "a, b"),
    "gemm_B": ("ij,jk->ki", "b, a"),
    "dot": ("ij,ij->", "a, b"),
    "sum_all": ("ij->", "a"),          # single-operand reduction (numpy sum)
    "sum_axis": ("ij->i", "a"),
    "trace": ("ii->", "a"),            # diagonal
    "outer": ("ij,kl->ijkl", "a, b"),
}

_CASES = [(f"huge-{k}", code, ["ValueError", "MemoryError"]) for k, code in _HUGE.items()]
_CASES += [(f"strides-{w}-{s}", f"a = {arr}; b = np.ones((3, 3)); einplan.einsum({spec!r}, {ops})",
            ["ValueError"])
           for w, arr in _OVERFLOWING.items() for s, (spec, ops) in _OVERFLOW_SPECS.items()]
_CASES += [("strides-out", "out = as_strided(np.empty(16), shape=(3, 3), strides=(2**62, 8)); "
            "einplan.einsum('ij,jk->ik', np.ones((3, 3)), np.ones((3, 3)), out=out)",
            ["ValueError"])]


@pytest.fixture(scope="module")
def isolated_results():
    return _run_cases(_CASES)


@pytest.mark.parametrize("case_id", [c[0] for c in _CASES])
def test_oversized_or_overflowing_raise(isolated_results, case_id):
    results, crashed_in, rc, stderr = isolated_results
    code = dict((c[0], c[1]) for c in _CASES)[case_id]
    if case_id not in results:
        pytest.fail(f"no result for {case_id} ({code}): the child died in case "
                    f"{crashed_in} (rc={rc}):\n{stderr[-2000:]}")
    outcome, cls, ok = results[case_id]
    assert outcome == "RAISED", f"{code} returned instead of raising"
    assert ok, f"{code} raised {cls}, expected one of {dict((c[0], c[2]) for c in _CASES)[case_id]}"


# The kernel contract (_native.py): "every offset the groups can form is
# checked to lie inside that memory (ValueError otherwise)".  Called directly
# (no planner in front), an operand whose strides span more than a pointer
# can address must be rejected by the C side too, not read through.
_NATIVE_CASES = [
    (f"native-{w}", f"a = {_OVERFLOWING[w]}; b = np.ones((3, 3)); c = np.empty((3, 3)); "
     f"s0, s1 = (st // 8 for st in a.strides); "
     f"einplan._native.gemm(a, b, c, ((3, s0, 3),), ((3, 1, 1),), ((3, s1, 3),))",
     ["ValueError"])
    for w in sorted(_OVERFLOWING)
]


@pytest.mark.parametrize("case_id", [c[0] for c in _NATIVE_CASES])
def test_native_gemm_rejects_overflowing_strides(case_id):
    # one child per case: a crash must not hide the other cases
    case = next(c for c in _NATIVE_CASES if c[0] == case_id)
    results, crashed_in, rc, stderr = _run_cases([case], timeout=60)
    assert case_id in results, f"{case[1]}\ncrashed (rc={rc}):\n{stderr[-1500:]}"
    assert results[case_id][0] == "RAISED" and results[case_id][2], results[case_id]


def test_span_check_accepts_big_legal_layouts():
    # broadcast (stride 0) and zero-size operands span nothing: no error
    a = np.broadcast_to(np.ones(()), (2**40, 3))
    assert einplan.einsum("ij->j", a[:5]).tolist() == [5.0] * 3
    z = np.empty((0, 2**40 // 8))
    assert einplan.einsum("ij->i", z).shape == (0,)
