"""Rank confidence sets of many estimates with a full covariance: time and memory.

``rankstats.stability.rank_sets(estimates, covariance=...)`` on ``--objects`` (4,096)
estimates with a dense, correlated covariance (a factor model: every pair correlated)
and ``--n-resamples`` (1,000) normal draws, simultaneous sets with a top-k set, and the
same with independent standard errors. Targets: at most 10 s and 2 GB (peak resident
memory of the process, which holds the covariance itself) for the full covariance.

The sets are checked in the same run against the definition: every bound is a rank
(1..M), low <= rank of the estimate <= high, and the top-k set holds the best
``--top-k`` estimates.

    .venv/bin/python benchmarks/bench_rank_sets.py
    .venv/bin/python benchmarks/bench_rank_sets.py --objects 1024 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of, peak_memory

from rankstats import stability

RESULTS = Path(__file__).parent / "results"


def case(m, seed):
    """Estimates 0.02 apart in truth, with a covariance of 8 shared factors plus noise."""
    rng = np.random.default_rng(seed)
    loading = rng.normal(0, 0.01, (m, 8))
    covariance = loading @ loading.T
    covariance[np.diag_indices(m)] += rng.uniform(0.0004, 0.0016, m)
    truth = np.linspace(1.0, 0.0, m) * 0.02 * m / 50
    estimate = truth + np.linalg.cholesky(covariance) @ rng.standard_normal(m)
    return estimate, covariance


def rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=4096)
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-memory", action="store_true", help="skip the traced peak")
    parser.add_argument("--name", default="rank_sets")
    args = parser.parse_args(argv)

    estimate, covariance = case(args.objects, 0)
    before = rss_gb()

    def full():
        return stability.rank_sets(
            estimate, covariance=covariance, top_k=args.top_k, n_resamples=args.n_resamples, seed=1
        )

    def independent():
        return stability.rank_sets(
            estimate,
            standard_errors=np.sqrt(np.diag(covariance)),
            top_k=args.top_k,
            n_resamples=args.n_resamples,
            seed=1,
        )

    rows, failures = [], []
    for name, fn in (("covariance", full), ("standard_errors", independent)):
        cpu = time.process_time()
        seconds, times, found = best_of(fn, args.repeats)
        cpu = (time.process_time() - cpu) / args.repeats
        peak_rss = rss_gb()
        traced = None if args.no_memory else peak_memory(fn) / 2**30
        low, high, rank = (found[v].values for v in ("rank_low", "rank_high", "rank"))
        m = args.objects
        ok = bool(
            ((1 <= low) & (low <= rank) & (rank <= high) & (high <= m)).all()
            and found["in_top_k"].values[rank <= args.top_k].all()
        )
        width = float((high - low).mean())
        rows.append(
            {
                "input": name,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "times": times,
                "peak_rss_gb": peak_rss,
                "traced_peak_gb": traced,
                "mean_width": width,
                "in_top_k": int(found["in_top_k"].sum()),
                "valid": ok,
            }
        )
        if not ok:
            failures.append(f"{name}: sets break the definition")
        if name == "covariance" and seconds > 10:
            failures.append(f"covariance: {seconds:.1f} s > 10 s")
        if name == "covariance" and peak_rss > 2:
            failures.append(f"covariance: peak RSS {peak_rss:.2f} GB > 2 GB")
    print(
        f"{args.objects} objects, {args.n_resamples} normal draws, top_k={args.top_k} "
        f"(RSS before: {before:.2f} GB)"
    )
    print(
        f"{'input':16} {'seconds':>8} {'CPU s':>8} {'peak RSS GB':>12} {'traced GB':>10} "
        f"{'mean width':>11} {'in top k':>9}"
    )
    for row in rows:
        traced = "-" if row["traced_peak_gb"] is None else f"{row['traced_peak_gb']:.2f}"
        print(
            f"{row['input']:16} {row['seconds']:8.2f} {row['cpu_seconds']:8.2f} "
            f"{row['peak_rss_gb']:12.2f} "
            f"{traced:>10} {row['mean_width']:11.1f} {row['in_top_k']:9d}"
        )
    print("PASS" if not failures else "FAIL: " + "; ".join(failures))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(
        json.dumps(
            {
                "objects": args.objects,
                "n_resamples": args.n_resamples,
                "rows": rows,
                "failures": failures,
                "python": platform.python_version(),
                "numpy": np.__version__,
                "platform": platform.platform(),
            },
            indent=1,
        )
    )
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
