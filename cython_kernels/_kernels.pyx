# cython: language_level=3, boundscheck=False, wraparound=False
"""einplan._kernels -- the Python-visible entry points of the C core.

Everything is checked here, before C runs: dtypes, extents (>= 0, products
that fit in int64), and that every offset a descriptor can form lies inside
the memory its array can reach.  A bad descriptor is a ValueError, a failed
allocation a MemoryError -- never a crash.  The GIL is released while C runs.
Imported by einplan/_native.py only.

One extension module, in four parts:
  _bindings.pxi      the C core's entry points: GEMM descriptors, prepacked
                     B, the permutation copy, kernel sets, threads, config
  _hot_path.pxi      what einsum's per-call path runs in C: the whole-call
                     GEMM runner, the call key, the overlap check, views
  _nest.pxi          the loop-nest engine's descriptors and runner
  _test_only.pxi     entry points only the tests call (one micro-kernel)
"""
import operator
import warnings

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, INT64_MAX
from libc.string cimport memset
from kernels cimport *

cnp.import_array()

ISA_NAMES = ("generic", "avx2", "avx512")
BUILD_INFO = {"openmp": bool(ep_have_openmp())}

include "_bindings.pxi"
include "_hot_path.pxi"
include "_nest.pxi"
include "_test_only.pxi"
