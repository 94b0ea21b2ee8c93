"""show_config(): what einplan was built with and what it runs on (numpy's
show_config idiom) -- kernel set, tiles, blocking, caches, threads."""
from __future__ import annotations

import json

from . import _native


def show_config(mode: str = "stdout"):
    """Print (mode="stdout") or return (mode="dicts") einplan's configuration."""
    cfg = _native.kernel_config()
    if mode == "dicts":
        return cfg
    if mode != "stdout":
        raise ValueError(f"mode must be 'stdout' or 'dicts', got {mode!r}")
    lines = [
        f"einplan kernels: {cfg['isa']} (available: {', '.join(cfg['available_isas'])})",
        "micro-kernel tiles (MR x NR):",
    ]
    for isa, tiles in cfg["tiles"].items():
        lines.append("  " + f"{isa:8s}" + "  ".join(f"{dt} {mr}x{nr}" for dt, (mr, nr) in tiles.items()))
    lines.append("blocking (ISA in use):")
    for dt, b in cfg["blocking"].items():
        lines.append(f"  {dt}: MR={b['mr']} NR={b['nr']} MC={b['mc']} KC={b['kc']} NC={b['nc']}")
    c = cfg["caches"]
    l3 = f"L3 {c['l3'] // 1024} KiB"
    if c.get("l3_reported", c["l3"]) != c["l3"]:
        l3 += f" counted of {c['l3_reported'] // 1024} KiB reported (at most 16 MiB per CPU)"
    lines.append(f"caches: L1d {c['l1d'] // 1024} KiB, L2 {c['l2'] // 1024} KiB, {l3}")
    lines.append(f"threads: {cfg['threads']}")
    lines.append(f"build: {json.dumps(cfg['build'])}")
    print("\n".join(lines))
    return None
