"""Build einplan's one compiled module, einplan._kernels, from cython_kernels/.

    pip install .                   # OpenMP threads when the compiler has them
    EINPLAN_NO_OPENMP=1 pip install .   # single-threaded build
    EINPLAN_SANITIZE=1 pip install -e .  # AddressSanitizer + UBSan build (tests:
                                         # LD_PRELOAD the libasan runtime, see .ci/sanitize)

ISA-specific code is never compiled for the build machine's own CPU (no
native-arch flag): each micro-kernel file under cython_kernels/ukr/ carries its
own `#pragma GCC target(...)`, and the kernel set is chosen at run time by CPU
feature bits (ep_dispatch.c); the other ISA-specific files (cython_kernels/isa/)
do the same.
"""
import glob
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNEL_DIR = "cython_kernels"
# One table of C sources: the framework (ISA-free), the portable kernels and
# the kernel registry, and the x86 code (one file per ISA x dtype, each with
# its own target pragma).
C_SOURCES = [
    # the machine and the threads
    "ep_cpu.c", "ep_dispatch.c", "ep_probe.c", "ep_threads.c",
    # the GEMM: blocking, workspace, schedule, packing, the three paths
    "ep_blocking.c", "ep_workspace.c", "ep_schedule.c", "ep_pack.c",
    "ep_gemm.c", "ep_gemv.c", "ep_smm.c",
    # the loop-nest engine and the permutation copy
    "ep_nest.c", "ep_nest_rows_generic.c", "ep_copy.c",
    "ukr/ep_ukr_ref.c", "ukr/ep_ukr_registry.c",
]
X86_SOURCES = [
    "ukr/ep_ukr_avx2_d6x8.c", "ukr/ep_ukr_avx2_s6x16.c",
    "ukr/ep_ukr_avx512_d8x24.c", "ukr/ep_ukr_avx512_s8x48.c",
    "isa/ep_pack_avx2.c", "isa/ep_copy_avx2.c", "isa/ep_copy_avx512.c",
    "isa/ep_nest_rows_avx2.c", "isa/ep_nest_rows_avx512.c",
]
if platform.machine().lower() in ("x86_64", "amd64", "i686", "x86"):
    C_SOURCES += X86_SOURCES
# EINPLAN_NO_AVX512=1: a build without the AVX-512 kernel set, for a test
# build on a CPU that cannot run it (.ci/sanitize); its sources are a third
# of the compile
NO_AVX512 = os.environ.get("EINPLAN_NO_AVX512", "0") not in ("", "0")
if NO_AVX512:
    C_SOURCES = [s for s in C_SOURCES if "avx512" not in s]
# -falign-loops=32: a hot loop placed across a 32-byte boundary runs up to
# 1.5x slower on Zen 4 (the tile packing's scalar gather in 'abc,acb->ab'
# (3,861,39) f32: 82 us or 55 us, by where unrelated code moved it)
# -g0: no debug information, which the flags Python was built with ask for
# (-g): a fifth of the compile (ep_nest_rows_avx2.c: 194 s, 159 without),
# and nothing a user's build needs; profilers still name the functions
BASE_CFLAGS = ["-O3", "-std=c11", "-fno-strict-aliasing", "-Wno-unused-function",
               "-falign-loops=32", "-g0"]


def openmp_flags():
    """-fopenmp if a test program compiles and links with it, else [] (with a
    clear message).  EINPLAN_NO_OPENMP=1 opts out."""
    if os.environ.get("EINPLAN_NO_OPENMP", "0") not in ("", "0"):
        print("einplan: EINPLAN_NO_OPENMP set: building single-threaded", file=sys.stderr)
        return []
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    src = "#include <omp.h>\nint main(void){int n=0;\n#pragma omp parallel\n{n=omp_get_num_threads();}\nreturn n<1;}\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.c")
        with open(path, "w") as f:
            f.write(src)
        cmd = cc.split() + ["-fopenmp", path, "-o", os.path.join(tmp, "probe")]
        ok = subprocess.run(cmd, capture_output=True).returncode == 0
    if not ok:
        print("einplan: WARNING: the C compiler cannot build OpenMP code "
              f"({' '.join(cmd)} failed); building single-threaded. Install "
              "libgomp/libomp or set EINPLAN_NO_OPENMP=1 to silence this.", file=sys.stderr)
        return []
    return ["-fopenmp"]


OMP = openmp_flags()
# AddressSanitizer + UndefinedBehaviorSanitizer: any report aborts the process
# (-fno-sanitize-recover), so a test run with zero failures had zero reports
SANITIZE = os.environ.get("EINPLAN_SANITIZE", "0") not in ("", "0")
# -g1: line tables only, enough for the reports' file:line stack traces; full
# debug info takes a third of the build (ep_nest_rows_avx512.c: 181 s, 119 s)
SAN_FLAGS = (["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
              "-fno-omit-frame-pointer", "-g1", "-O1"] if SANITIZE else [])
extensions = [
    Extension(
        "einplan._kernels",
        sources=[f"{KERNEL_DIR}/_kernels.pyx"] + [f"{KERNEL_DIR}/{s}" for s in C_SOURCES],
        # headers too: an edited template (isa/ep_copy_simd.h, ...) rebuilds
        depends=sorted(glob.glob(f"{KERNEL_DIR}/*.h") + glob.glob(f"{KERNEL_DIR}/ukr/*.h") + glob.glob(f"{KERNEL_DIR}/isa/*.h")),
        include_dirs=[KERNEL_DIR, numpy.get_include()],
        extra_compile_args=BASE_CFLAGS + OMP + SAN_FLAGS,
        extra_link_args=OMP + SAN_FLAGS[:1],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")]
        + ([("EP_NO_AVX512", "1")] if NO_AVX512 else []),
    )
]

# the sources that take longest to compile (template instantiations per
# ISA and dtype; Cython's output)
LONG_COMPILES = ("ep_nest_rows_avx512", "ep_nest_rows_avx2", "ep_nest_rows_generic", "_kernels.c")


class ParallelBuildExt(build_ext):
    """Compiles the extension's C sources side by side, one compiler process
    per core: the loop-nest row kernels of each ISA take a minute apiece,
    the rest seconds.  The longest start first."""

    def build_extension(self, ext):
        compile_one = self.compiler.compile
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

        def compile_all(sources, *args, **kwargs):
            if (jobs or 1) < 2 or len(sources) < 2:
                return compile_one(sources, *args, **kwargs)
            order = sorted(sources, key=lambda src: not any(x in src for x in LONG_COMPILES))
            with ThreadPoolExecutor(jobs) as pool:
                objs = dict(zip(order, pool.map(
                    lambda src: compile_one([src], *args, **kwargs), order)))
            return [o for src in sources for o in objs[src]]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = compile_one


setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=cythonize(extensions, compiler_directives={"language_level": 3},
                          include_path=[KERNEL_DIR]),
)
