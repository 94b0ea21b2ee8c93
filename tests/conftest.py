"""Shared pytest setup: hypothesis profiles.

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

from hypothesis import HealthCheck, settings

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
