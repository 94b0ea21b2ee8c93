"""Shared pytest setup: hypothesis profiles, the thread-count fixtures and
the ISA fixtures.  The tests run on the compiled kernels: without a build
they stop at once with _native's ImportError, which says how to build.

Select with the environment variable HYPOTHESIS_PROFILE (default "ci"):

  ci        derandomized (the same examples every run, so CI is reproducible),
            few examples, no deadline (the first call of a spec plans and may
            be slow; 2-core CI machines are noisy).  Keeps the whole suite in
            a few minutes.
  thorough  many random examples, for a local hunt:
            HYPOTHESIS_PROFILE=thorough pytest tests/test_einsum_props.py
  dev       random (not derandomized), a moderate number of examples.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

import einplan
from einplan import _native

_native._require()

# the kernel sets this CPU can run
ISAS = _native.available_isas()
# the kernel sets a test parametrized by ISA runs: every one, or only the
# one EINPLAN_ISA names (the sanitizer runs a process per kernel set, and
# each would otherwise run every set's parametrized tests again)
RUN_ISAS = ((os.environ["EINPLAN_ISA"],) if os.environ.get("EINPLAN_ISA") in ISAS
            else ISAS)

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=_SLOW_OK)
settings.register_profile(
    "dev", max_examples=150, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def restore_threads():
    """The library's thread count as it was before the test."""
    prev = einplan.get_num_threads()
    yield
    einplan.set_num_threads(prev)
    assert einplan.get_num_threads() == prev


@pytest.fixture
def one_thread(restore_threads):
    """Kernel tests that are about one thread (test_threads.py covers more)."""
    einplan.set_num_threads(1)


@pytest.fixture
def use_isa():
    """Switch the ISA in process; restore the one in use before the test."""
    prev = _native.isa()
    yield _native.set_isa
    _native.set_isa(prev)
    assert _native.isa() == prev


@pytest.fixture(params=RUN_ISAS)
def isa(request, use_isa):
    """Each kernel set this CPU runs, switched on for the test."""
    use_isa(request.param)
    return request.param
