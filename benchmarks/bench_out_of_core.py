"""Out-of-core: statistics of a binary cube far larger than memory, from a netCDF file.

Writes (once) a synthetic binary cube of ``models × tasks × templates × samples``
cells, stored as int8 with -1 for missing (10⁹ cells by default: 16 × 25 × 250 ×
10,000), then, in a fresh process, opens it lazily with chunks of one (model,
task), computes per-template scores, Kendall's W, Friedman's test and the
prompt metrics for every task, and reports wall time and peak resident memory.
Then, in another fresh process, it bootstraps the same file over samples (n_resamples = 1000
by default: AvgP, Kendall's W and every model's rank in every replicate) and
reports the same. Target: peak memory under 2 GB for each.

Run from the repository root::

    python benchmarks/bench_out_of_core.py [--cells-scale 1.0] [--path /tmp/cube.nc]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

WRITE = """
import sys, numpy as np, xarray as xr, dask.array as da, rankstats
from rankstats.cube import provenance
models, tasks, templates, samples, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(0)
accuracy = da.from_array(rng.random((models, tasks, templates, 1)) * 0.8 + 0.1,
                         chunks=(1, 1, templates, 1))
draws = da.random.default_rng(1).random((models, tasks, templates, samples),
                                        chunks=(1, 1, templates, samples))
cube = xr.Dataset(
    {"score": (("model", "task", "template", "sample"), (draws < accuracy).astype("f8"))},
    coords={"model": [f"m{i}" for i in range(models)], "task": [f"t{i}" for i in range(tasks)],
            "template_id": (("task", "template"),
                            np.array([[str(j) for j in range(templates)]] * tasks, dtype=object)),
            "sample_id": (("task", "sample"),
                          np.array([[str(j) for j in range(samples)]] * tasks, dtype=object))})
cube.attrs = provenance("binary", True, "accuracy", "synthetic out-of-core benchmark")
rankstats.validate(cube, values=False)
rankstats.save(cube, path)
"""

READ = """
import json, resource, sys, time, rankstats
start = time.perf_counter()
cube = rankstats.open_cube(sys.argv[1], chunks={"model": 1, "task": 1})
scores = rankstats.template_scores(cube)
w = rankstats.kendall_w(scores)
f = rankstats.friedman(scores)
m = rankstats.prompt_metrics(scores)
import dask
w, f, m = dask.compute(w, f, m)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": elapsed, "peak_bytes": peak, "mean_w": float(w.statistic.mean()),
                  "cells": int(cube.score.size)}))
"""

BOOTSTRAP = """
import json, resource, sys, time, rankstats
from rankstats import stability
start = time.perf_counter()
cube = rankstats.open_cube(sys.argv[1], chunks={"model": 1, "task": 1})
reps = stability.replicates(cube, n_resamples=int(sys.argv[2]), over="samples", seed=0,
                            statistics=["avgp", "kendall_w", "rank"])
reps = reps.compute()
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": elapsed, "peak_bytes": peak, "n_resamples": int(sys.argv[2]),
                  "mean_w": float(reps.kendall_w.mean()), "cells": int(cube.score.size)}))
"""


def _run(script, *arguments):
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, arguments)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--path", default="/tmp/rankstats-out-of-core.nc", help="the cube file (written if missing)"
    )
    parser.add_argument(
        "--shape",
        type=int,
        nargs=4,
        default=(16, 25, 250, 10_000),
        metavar=("MODELS", "TASKS", "TEMPLATES", "SAMPLES"),
    )
    parser.add_argument("--target-gb", type=float, default=2.0, help="peak memory allowed")
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=1000,
        help="bootstrap replicates (default 1000; 0 skips the bootstrap)",
    )
    args = parser.parse_args()
    path = Path(args.path)
    if not path.exists():
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", WRITE, *map(str, args.shape), str(path)], check=True)
        print(
            f"wrote {path} ({path.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - start:.0f} s"
        )
    result = _run(READ, path)
    peak_gb = result["peak_bytes"] / 1e9
    print(
        f"{result['cells']:.3g} cells: template scores, W, Friedman and metrics for every "
        f"task in {result['seconds']:.0f} s, peak memory {peak_gb:.2f} GB "
        f"(target < {args.target_gb} GB)"
    )
    peaks = [peak_gb]
    if args.n_resamples:
        boot = _run(BOOTSTRAP, path, args.n_resamples)
        peaks.append(boot["peak_bytes"] / 1e9)
        print(
            f"{boot['cells']:.3g} cells: bootstrap over samples, n_resamples = "
            f"{boot['n_resamples']} "
            f"(AvgP, W and ranks of every replicate) in {boot['seconds']:.0f} s, peak "
            f"memory {peaks[-1]:.2f} GB (target < {args.target_gb} GB)"
        )
    ok = max(peaks) < args.target_gb
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
