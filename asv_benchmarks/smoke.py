"""Run every asv benchmark once, outside asv, on one cheap parameter set each.

`asv check` only imports the suite and checks signatures; this also runs each
setup / time_* / track_* / peakmem_* / teardown, with impl="einplan" (or the
first impl) and threads=1, so a benchmark broken by an API change fails CI.
n/a (NotImplementedError in setup, e.g. while einplan has no plan()) is a skip.

    python smoke.py            # from asv_benchmarks/; exit 1 if any benchmark raised
"""
import importlib
import inspect
import os
import pkgutil
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PREFIXES = ("time_", "track_", "peakmem_", "mem_")


def cheap_params(cls):
    """One parameter combination: the first value of each parameter, except
    impl -> "einplan" when offered and threads -> 1."""
    params = getattr(cls, "params", None)
    names = list(getattr(cls, "param_names", []))
    if not params:
        return ()
    if not isinstance(params[0], (list, tuple)):  # one parameter given as a flat list
        params = [params]
    chosen = []
    for name, values in zip(names or [None] * len(params), params):
        if name == "impl" and "einplan" in values:
            chosen.append("einplan")
        elif name == "threads" and 1 in values:
            chosen.append(1)
        else:
            chosen.append(values[0])
    return tuple(chosen)


def main():
    import benchmarks

    ran = skipped = 0
    failed = []
    t_start = time.perf_counter()
    for mod_info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not mod_info.name.startswith("bench_"):
            continue
        mod = importlib.import_module(f"benchmarks.{mod_info.name}")
        for cls_name, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ != mod.__name__:
                continue
            methods = [m for m in dir(cls) if m.startswith(PREFIXES) and callable(getattr(cls, m))]
            if not methods:
                continue
            args = cheap_params(cls)
            label = f"{mod_info.name}.{cls_name}{args}"
            for meth in methods:
                obj = cls()
                t0 = time.perf_counter()
                try:
                    if hasattr(obj, "setup"):
                        obj.setup(*args)
                except NotImplementedError as e:
                    print(f"n/a   {label}.{meth}: {e}")
                    skipped += 1
                    continue
                except Exception:
                    failed.append(f"{label}.{meth} (setup)")
                    traceback.print_exc()
                    continue
                try:
                    value = getattr(obj, meth)(*args)
                    ran += 1
                    shown = "" if value is None else f" -> {value:.4g}" if isinstance(value, (int, float)) else ""
                    print(f"ok    {label}.{meth} {time.perf_counter() - t0:.2f} s{shown}")
                except Exception:
                    failed.append(f"{label}.{meth}")
                    traceback.print_exc()
                finally:
                    if hasattr(obj, "teardown"):
                        obj.teardown(*args)
    print(f"smoke: {ran} ran, {skipped} n/a, {len(failed)} failed in {time.perf_counter() - t_start:.1f} s")
    for name in failed:
        print(f"FAILED {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
