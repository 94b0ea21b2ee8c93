"""Real programs on einplan, at 1 thread: PySCF coupled cluster, a quimb PEPS
norm and a quimb random-circuit amplitude.

    python docs/bench_clients.py                       # all benchmarks
    python docs/bench_clients.py --only pyscf --cycles 2 --repeat 3
    python docs/bench_clients.py --only pyscf --split  # CPU time: contractions vs the rest
    python docs/bench_clients.py --only quimb
    python docs/bench_clients.py --only circuit
    einplan profile --compare docs/bench_clients.py --only pyscf --paths einplan --cycles 1

PySCF: RCCSD (``pyscf.cc.rccsd``, the einsum-based code) on benzene / cc-pVDZ,
21 occupied and 93 virtual orbitals, a fixed number of CC iterations
(``--cycles``) after one shared integral transformation, on three paths:

  pyscf    PySCF's own einsum path (lib.einsum -> its transpose + dgemm code,
           numpy.einsum for the rest): EINSUM_BACKEND = None
  pytblis  PySCF's pytblis backend (lib.einsum -> pytblis.einsum / contract):
           EINSUM_BACKEND = "pytblis", the default when pytblis is installed
  einplan  lib.einsum on einplan through the same backend hook
           (numpy_helper.pytblis = einplan.tblis, pytblis's API and array
           order) and numpy.einsum & co. patched

The energies after the same iterations must agree (printed, checked to 1e-8).
quimb: the norm <P|P> of a random PEPS, contracted along one cotengra tree,
with numpy and with einplan registered in autoray, for both of cotengra's numpy
implementations: "cotengra" (its own reshape + matmul; the one quimb uses on
plain numpy) and "autoray" (einsum / tensordot per step; quimb's default once
``einplan.register_autoray()`` has run).
circuit: one amplitude <0...0|C|0...0> of a random circuit on a Lx x Ly qubit
grid (random U3 on every qubit, then FSIM gates on one of four coupler layers
per cycle, Sycamore's pattern), complex128, simplified by quimb (ADCRS) and
contracted along a greedy cotengra tree, with the same four variants.

Threads: every library is held to 1 thread (the environment variables below are
set before numpy is imported).  Run with `nice -n 0` on a quiet machine.
"""
import os
import sys

# Peers at their best: on an AVX-512 CPU OpenBLAS gets its AVX-512 (SkylakeX) kernels, which
# it does not pick by itself on some CPUs (Zen 5) or under an OPENBLAS_CORETYPE=Haswell
# environment, unless --stock-blas (set before numpy loads OpenBLAS)
if "--stock-blas" not in sys.argv:
    try:
        with open("/proc/cpuinfo") as _f:
            if " avx512f " in _f.read().replace("\n", " "):
                os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    except OSError:
        pass
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "TBLIS_NUM_THREADS", "EINPLAN_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import einplan  # noqa: E402

MOLECULES = {
    # 21 occupied, 93 virtual orbitals in cc-pVDZ
    "benzene": """C 0.0000 1.3970 0.0000; C 1.2098 0.6985 0.0000; C 1.2098 -0.6985 0.0000;
                  C 0.0000 -1.3970 0.0000; C -1.2098 -0.6985 0.0000; C -1.2098 0.6985 0.0000;
                  H 0.0000 2.4810 0.0000; H 2.1486 1.2405 0.0000; H 2.1486 -1.2405 0.0000;
                  H 0.0000 -2.4810 0.0000; H -2.1486 -1.2405 0.0000; H -2.1486 1.2405 0.0000""",
    # 5 occupied, 19 virtual: a quick check of the script
    "water": "O 0 0 0; H 0 0.757 0.587; H 0 -0.757 0.587",
}


@contextlib.contextmanager
def pyscf_path(name):
    """PySCF's lib.einsum / lib.contract on the named backend."""
    from pyscf.lib import numpy_helper
    saved = numpy_helper.EINSUM_BACKEND, getattr(numpy_helper, "pytblis", None)
    try:
        if name == "pyscf":
            numpy_helper.EINSUM_BACKEND = None
            yield
        elif name == "pytblis":
            import pytblis
            numpy_helper.EINSUM_BACKEND, numpy_helper.pytblis = "pytblis", pytblis
            yield
        else:
            numpy_helper.EINSUM_BACKEND, numpy_helper.pytblis = "pytblis", einplan.tblis
            with einplan.patched():
                yield
    finally:
        numpy_helper.EINSUM_BACKEND, numpy_helper.pytblis = saved


class _CallTimer:
    """CPU seconds spent inside the outermost of the wrapped calls (einsum & co.)."""

    def __init__(self):
        self.depth, self.cpu = 0, 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            self.depth += 1
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu += time.process_time() - t0
                self.depth -= 1
        return timed


@contextlib.contextmanager
def contraction_split(timer):
    """Route lib.einsum, lib.dot and numpy's einsum / dot / tensordot through ``timer``
    (on top of whichever path is active), so a run splits into contractions and the rest."""
    import pyscf.lib as plib
    saved = [(plib, "einsum"), (plib, "dot"), (np, "einsum"), (np, "dot"), (np, "tensordot")]
    saved = [(mod, name, getattr(mod, name)) for mod, name in saved]
    for mod, name, fn in saved:
        setattr(mod, name, timer.wrap(fn))
    try:
        yield
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def bench_pyscf(molecule, basis, cycles, paths, repeat, split=False):
    from pyscf import gto, scf
    from pyscf.cc import rccsd
    mol = gto.M(atom=MOLECULES[molecule], basis=basis, verbose=0)
    t0 = time.perf_counter()
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    cc = rccsd.RCCSD(mf)
    cc.max_cycle = cycles
    cc.conv_tol = 1e-14           # never converged early: every path runs `cycles` iterations
    eris = cc.ao2mo()
    print(f"PySCF RCCSD {molecule}/{basis}: nocc={cc.nocc} nvir={cc.nmo - cc.nocc}, "
          f"{cycles} CC iterations (SCF + integrals {time.perf_counter() - t0:.1f} s)")
    times = {p: [] for p in paths}
    cpu = {p: [] for p in paths}      # (CPU total, CPU in contractions) with --split
    energies = {}
    for _ in range(repeat):
        for p in paths:          # interleaved
            timer = _CallTimer()
            with pyscf_path(p), (contraction_split(timer) if split
                                 else contextlib.nullcontext()):
                t0, c0 = time.perf_counter(), time.process_time()
                e_corr, _, _ = cc.kernel(eris=eris)
                times[p].append(time.perf_counter() - t0)
                cpu[p].append((time.process_time() - c0, timer.cpu))
            energies[p] = e_corr
    med = {p: float(np.median(t)) for p, t in times.items()}
    for p in paths:
        runs = ", ".join(f"{t:.2f}" for t in times[p])
        print(f"  {p:<8} {med[p]:8.2f} s (median of {runs})   e_corr = {energies[p]:.12f}")
    if split:
        print("  CPU seconds (medians): total = contractions (lib.einsum/dot, numpy einsum/dot/"
              "tensordot) + the rest of the program")
        for p in paths:
            tot, con = np.median(np.array(cpu[p]), axis=0)
            print(f"  {p:<8} {tot:8.2f} = {con:8.2f} + {tot - con:6.2f}")
    ref = energies[paths[0]]
    spread = max(abs(e - ref) for e in energies.values())
    print(f"  energies agree to {spread:.1e} {'(OK)' if spread < 1e-8 else '(DIFFER)'}")
    if "einplan" in med and len(med) > 1:
        best = min(v for p, v in med.items() if p != "einplan")
        print(f"  einplan vs the best other path: {best / med['einplan']:.2f}x")
    return med, energies


def bench_quimb(side, bond, repeat):
    import cotengra as ctg
    import quimb.tensor as qtn
    from einplan.autoray_backend import unregister_autoray
    peps = qtn.PEPS.rand(side, side, bond_dim=bond, seed=7)
    tn = peps.H & peps
    arrays = [t.data for t in tn]
    t0 = time.perf_counter()
    tree = tn.contraction_tree(optimize="auto-hq")     # quimb's default for a norm
    print(f"quimb PEPS norm {side}x{side}, bond {bond}: {len(arrays)} tensors, "
          f"{tree.contraction_cost():.3g} flops, largest intermediate "
          f"{tree.max_size():.3g} (cotengra auto-hq tree, found in "
          f"{time.perf_counter() - t0:.0f} s)")
    runs = {}

    def run(label, impl, on_einplan):
        if on_einplan:
            einplan.register_autoray()
        try:
            kw = {"implementation": impl}
            tree.contract(arrays, **kw)                     # warm-up (plans, caches)
            t0 = time.perf_counter()
            val = tree.contract(arrays, **kw)
            runs.setdefault(label, []).append(time.perf_counter() - t0)
            return val
        finally:
            if on_einplan:
                unregister_autoray()
    vals = {}
    for _ in range(repeat):
        for impl in ("cotengra", "autoray"):
            vals[f"numpy/{impl}"] = run(f"numpy/{impl}", impl, False)
            vals[f"einplan/{impl}"] = run(f"einplan/{impl}", impl, True)
    med = {k: float(np.median(v)) for k, v in runs.items()}
    print("  quimb's default after einplan.register_autoray() is implementation=autoray")
    for impl in ("cotengra", "autoray"):
        n, e = med[f"numpy/{impl}"], med[f"einplan/{impl}"]
        rel = abs(vals[f"einplan/{impl}"] - vals[f"numpy/{impl}"]) / abs(vals[f"numpy/{impl}"])
        print(f"  implementation={impl:<9} numpy {n * 1e3:8.1f} ms  einplan {e * 1e3:8.1f} ms"
              f"  speedup {n / e:.2f}x  (values agree to {rel:.1e})")
    return med


def random_circuit(lx, ly, depth, seed=7):
    """A Sycamore-like random circuit: U3 everywhere, FSIM on a cycling coupler layer."""
    import quimb.tensor as qtn
    rng = np.random.default_rng(seed)
    n = lx * ly
    circ = qtn.Circuit(n)
    layers = []
    for dx, dy, parity in ((1, 0, 0), (1, 0, 1), (0, 1, 0), (0, 1, 1)):
        layers.append([(x * ly + y, (x + dx) * ly + y + dy)
                       for x in range(lx - dx) for y in range(ly - dy)
                       if (x * dx + y * dy) % 2 == parity])
    for d in range(depth):
        for q in range(n):
            circ.apply_gate("U3", *rng.uniform(0, 2 * np.pi, 3), q)
        for a, b in layers[d % 4]:
            circ.apply_gate("FSIM", np.pi / 2, np.pi / 6, a, b)
    return circ


def bench_circuit(lx, ly, depth, repeat):
    circ = random_circuit(lx, ly, depth)
    tn = circ.amplitude_tn("0" * (lx * ly))
    tn.full_simplify_(seq="ADCRS")
    t0 = time.perf_counter()
    tree = tn.contraction_tree(optimize="greedy")
    arrays = [t.data for t in tn]
    print(f"quimb random-circuit amplitude {lx}x{ly} qubits, depth {depth}: {len(arrays)} "
          f"tensors ({arrays[0].dtype}), {tree.contraction_cost():.3g} flops, largest "
          f"intermediate {tree.max_size():.3g} (greedy tree, {time.perf_counter() - t0:.1f} s)")
    return _bench_tree(tree, arrays, repeat)


def _bench_tree(tree, arrays, repeat):
    """Time tree.contract on numpy and on einplan (autoray), both implementations."""
    from einplan.autoray_backend import unregister_autoray
    runs, vals = {}, {}
    for r in range(repeat):
        for impl in ("cotengra", "autoray"):
            for on_einplan in (False, True):
                label = f"{'einplan' if on_einplan else 'numpy'}/{impl}"
                slow = label == "numpy/autoray"   # numpy.einsum per step: tens of x slower
                if slow and r:
                    continue                      # one run tells the ratio
                if on_einplan:
                    einplan.register_autoray()
                try:
                    if not slow:
                        tree.contract(arrays, implementation=impl)    # warm-up
                    t0 = time.perf_counter()
                    vals[label] = tree.contract(arrays, implementation=impl)
                    runs.setdefault(label, []).append(time.perf_counter() - t0)
                finally:
                    if on_einplan:
                        unregister_autoray()
    med = {k: float(np.median(v)) for k, v in runs.items()}
    for impl in ("cotengra", "autoray"):
        n, e = med[f"numpy/{impl}"], med[f"einplan/{impl}"]
        rel = abs(vals[f"einplan/{impl}"] - vals[f"numpy/{impl}"]) / abs(vals[f"numpy/{impl}"])
        print(f"  implementation={impl:<9} numpy {n * 1e3:8.1f} ms  einplan {e * 1e3:8.1f} ms"
              f"  speedup {n / e:.2f}x  (values agree to {rel:.1e})")
    best_np = min(med["numpy/cotengra"], med["numpy/autoray"])
    best_ep = min(med["einplan/cotengra"], med["einplan/autoray"])
    print(f"  best of each: numpy {best_np * 1e3:.1f} ms, einplan {best_ep * 1e3:.1f} ms, "
          f"{best_np / best_ep:.2f}x")
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["pyscf", "quimb", "circuit"])
    ap.add_argument("--molecule", default="benzene", choices=sorted(MOLECULES))
    ap.add_argument("--basis", default="cc-pvdz")
    ap.add_argument("--cycles", type=int, default=1,
                    help="CC iterations per run (each repeats the same contractions)")
    ap.add_argument("--paths", default="pyscf,pytblis,einplan")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--split", action="store_true",
                    help="PySCF: also split each path's CPU time into contractions and the rest")
    ap.add_argument("--peps", type=int, default=6, help="PEPS side")
    ap.add_argument("--bond", type=int, default=3)
    ap.add_argument("--stock-blas", action="store_true",
                    help="leave OPENBLAS_CORETYPE as the environment has it")
    ap.add_argument("--circuit", default="4x5x16",
                    help="random circuit LXxLYxDEPTH (qubit grid and cycles)")
    args = ap.parse_args()
    einplan.set_num_threads(1)
    try:
        load = os.getloadavg()[0]
        print(f"load average {load:.2f} on {os.cpu_count()} cpus; einplan isa {einplan.isa()}; "
              f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(auto)')}")
    except OSError:
        pass
    if args.only in (None, "pyscf"):
        bench_pyscf(args.molecule, args.basis, args.cycles, args.paths.split(","), args.repeat,
                    args.split)
    if args.only in (None, "quimb"):
        bench_quimb(args.peps, args.bond, max(args.repeat, 3))
    if args.only in (None, "circuit"):
        lx, ly, depth = (int(x) for x in args.circuit.split("x"))
        bench_circuit(lx, ly, depth, max(args.repeat, 3))


if __name__ == "__main__":
    main()
