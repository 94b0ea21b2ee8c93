"""asv benchmarks for einplan: one bench_<theme>.py per theme, peers as the
``impl`` parameter, threads as ``threads`` (see common.py and ../README.md)."""

import os as _os

# Peers at their best: OpenBLAS does not recognise some AVX-512 CPUs (Zen 5), and an
# environment may pin OPENBLAS_CORETYPE to Haswell; either way numpy's BLAS runs its AVX2
# kernels at half their speed.  On an AVX-512 CPU the suite gives OpenBLAS its AVX-512
# (SkylakeX) kernels before any benchmark module loads numpy, as the repository's
# comparison scripts do; EINPLAN_BENCH_STOCK_BLAS=1 keeps the environment's choice.
if not _os.environ.get("EINPLAN_BENCH_STOCK_BLAS"):
    try:
        with open("/proc/cpuinfo") as _f:
            if " avx512f " in _f.read().replace("\n", " "):
                _os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    except OSError:
        pass
