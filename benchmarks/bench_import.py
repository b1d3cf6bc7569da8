"""How long ``import rankstats`` takes beyond xarray's own import, and what it loads.

Each measurement is a fresh interpreter, so nothing is cached in the process; the
median of several runs is reported. Target: well under a second beyond xarray, and
none of torch, transformers, openai, matplotlib loaded.

Run from the repository root: ``python benchmarks/bench_import.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

HEAVY = ("torch", "transformers", "openai", "matplotlib", "pingouin", "dask", "scipy.stats")
PROBE = """
import json, sys, time
start = time.perf_counter()
import {modules}
elapsed = time.perf_counter() - start
print(json.dumps({{"seconds": elapsed, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def measure(modules: str, runs: int) -> tuple[float, list[str]]:
    times, loaded = [], []
    for _ in range(runs):
        code = PROBE.format(modules=modules, heavy=HEAVY)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        result = json.loads(out.stdout)
        times.append(result["seconds"])
        loaded = result["loaded"]
    return statistics.median(times), loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh interpreters per measure")
    parser.add_argument(
        "--target",
        type=float,
        default=0.5,
        help="seconds allowed beyond xarray's import (default 0.5)",
    )
    args = parser.parse_args()
    xarray_seconds, _ = measure("xarray", args.runs)
    both_seconds, loaded = measure("xarray, rankstats", args.runs)
    extra = both_seconds - xarray_seconds
    print(f"import xarray:             {xarray_seconds:.3f} s (median of {args.runs})")
    print(f"import xarray, rankstats:  {both_seconds:.3f} s")
    print(f"rankstats beyond xarray:   {extra:.3f} s (target < {args.target} s)")
    print(f"heavy modules loaded:      {', '.join(loaded) or 'none'}")
    ok = extra < args.target and not loaded
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
