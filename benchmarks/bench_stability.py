"""Speed, correctness and memory of rankstats' bootstrap on a cube of the paper's size.

Run from the repository root::

    .venv/bin/python benchmarks/bench_stability.py                 # about a minute
    .venv/bin/python benchmarks/bench_stability.py --loop-replicates 50

The cube is synthetic, with the shape of Mizrahi et al. (2024) and item-level scores:
16 models x 25 tasks x up to 240 templates x up to 100 samples, binary. Five models
are absent from five tasks (all-NaN), a third of the tasks have 180-239 real templates
(the rest padded with NaN), and a third have 80-99 real samples.

``replicates``
    ``rankstats.stability.replicates(cube, n_resamples, over, statistics=["score", "kendall_w",
    "rank"])``: per-template scores, Kendall's W and the models' ranks (by AvgP) in
    every replicate, every task at once.
``intervals``
    ``rankstats.stability.intervals`` of the same statistics: the replicates and
    their 95% percentile intervals. Target: under 10 s for n_resamples = 1000.
``reference``
    A Python loop over replicates and tasks, as one would write it with scipy: pick the
    replicate's samples (and, with ``--over both``, templates) by index, from the same
    draws rankstats uses; average; rank the models of every drawn template with
    ``scipy.stats.rankdata`` for W; rank the models' AvgP with ``scipy.stats.rankdata``;
    then ``numpy.percentile`` over the replicates for the intervals. Two forms: the
    textbook one takes each template's tie term from ``numpy.unique`` (as W's
    definition reads); the vectorised one from the variance of the ranks, one array
    expression per task. Structure is removed before timing. The loops run on
    ``--loop-replicates`` replicates and their time is scaled to ``--n-resamples`` (labelled
    EXTRAPOLATED). Target: rankstats at least 50 times faster than the textbook loop;
    the ratio to the vectorised loop is printed for information.

Every statistic of the looped replicates is compared with rankstats' value for the same
replicate (per-template scores within float32 rounding, W and ranks to 1e-10). The
script prints a table, writes ``benchmarks/results/<name>.json`` and exits with
status 1 if a target or a comparison fails.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
RESULTS_DIR = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of, peak_memory  # noqa: E402

TIME_TARGET = 10.0
SPEEDUP_TARGET = 50.0
STATISTICS = ["score", "kendall_w", "rank"]
SCORE_TOLERANCE = 1e-6  # float32 per-template scores
TOLERANCE = 1e-10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def paper_cube(seed: int = 0, models=16, tasks=25, templates=240, samples=100):
    """A synthetic binary cube shaped like the paper's, with padding and absent models."""
    import xarray as xr

    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, 1.0, models)[:, None, None, None]
    task_shift = rng.normal(0.0, 0.5, tasks)[None, :, None, None]
    template_effect = rng.normal(0.0, 0.4, (1, tasks, templates, 1))
    difficulty = rng.normal(0.0, 1.0, (1, tasks, 1, samples))
    logit = ability + task_shift + template_effect - difficulty
    p = 1.0 / (1.0 + np.exp(-logit))
    score = (rng.random(p.shape) < p).astype(float)
    n_templates = np.where(
        np.arange(tasks) % 3 == 0, rng.integers(180, templates, tasks), templates
    )
    n_samples = np.where(np.arange(tasks) % 3 == 1, rng.integers(80, samples, tasks), samples)
    score[:, np.arange(templates)[None, :] >= n_templates[:, None], :] = np.nan
    padded = np.arange(samples)[None, :] >= n_samples[:, None]
    score[:, np.broadcast_to(padded[:, None, :], (tasks, templates, samples))] = np.nan
    score[models - 5 :, :5] = np.nan  # five models never run on five tasks
    cube = xr.Dataset(
        {"score": (("model", "task", "template", "sample"), score)},
        coords={
            "model": [f"model-{i:02d}" for i in range(models)],
            "task": [f"task-{i:02d}" for i in range(tasks)],
        },
        attrs={"score_kind": "binary", "higher_is_better": 1, "metric": "accuracy"},
    )
    return cube


def task_blocks(values):
    """Per task: the present models, real templates and real samples, and their scores.

    Structure is removed here, outside the timed loops, as a user would do once.
    """
    blocks = []
    for t in range(values.shape[1]):
        block = values[:, t]
        models = np.flatnonzero(~np.isnan(block).all(axis=(1, 2)))
        templates = np.flatnonzero(~np.isnan(block).all(axis=(0, 2)))
        samples = np.flatnonzero(~np.isnan(block).all(axis=(0, 1)))
        scores = np.ascontiguousarray(block[np.ix_(models, templates, samples)])
        blocks.append((models, templates, samples, scores))
    return blocks


def reference_loop(blocks, shape, sample_weight, template_weight, replicate_ids, vectorised=False):
    """Per-replicate, per-task statistics with scipy: the loop rankstats replaces.

    ``sample_weight`` (replicate, task, sample) and ``template_weight`` (replicate,
    task, template, or None) are the counts rankstats drew. For every replicate and
    task: pick the drawn samples (and templates) by index, average, rank the models of
    every drawn template with ``scipy.stats.rankdata`` and compute W from its
    definition, and rank the models' AvgP with ``scipy.stats.rankdata``. The textbook
    form takes each template's tie term from ``numpy.unique``; the ``vectorised`` form
    from the ranks' variances, one array expression per task.
    """
    from scipy.stats import rankdata

    n_models, n_tasks, n_templates = shape
    scores = np.full((len(replicate_ids), n_models, n_tasks, n_templates), np.nan)
    w = np.full((len(replicate_ids), n_tasks), np.nan)
    ranks = np.full((len(replicate_ids), n_models, n_tasks), np.nan)
    for k, b in enumerate(replicate_ids):
        for t, (models, templates, samples, block) in enumerate(blocks):
            picked = np.repeat(np.arange(samples.size), sample_weight[b, t, samples])
            x = block[:, :, picked].mean(axis=-1)  # (models, templates)
            scores[k, models[:, None], t, templates] = x
            if template_weight is not None:
                x = x[:, np.repeat(np.arange(templates.size), template_weight[b, t, templates])]
            r = rankdata(-x, axis=0)  # each template ranks the models
            n, m = x.shape
            if vectorised:  # sum of (t^3 - t) = n^3 - n - 12 * (squared deviations of ranks)
                ties = float((n**3 - n) * m - 12.0 * ((r - (n + 1) / 2.0) ** 2).sum())
            else:
                ties = 0.0
                for column in x.T:
                    _, counts = np.unique(column, return_counts=True)
                    ties += float((counts**3 - counts).sum())
            rank_sums = r.sum(axis=1)
            spread = ((rank_sums - rank_sums.mean()) ** 2).sum()
            w[k, t] = 12.0 * spread / (m**2 * (n**3 - n) - m * ties)
            ranks[k, models, t] = rankdata(-np.round(x.mean(axis=1), 12))
    return scores, w, ranks


def compare(name, ours, oracle, tolerance):
    ours, oracle = np.asarray(ours, dtype=float), np.asarray(oracle, dtype=float)
    nan_mismatch = int((np.isnan(ours) != np.isnan(oracle)).sum())
    both = ~np.isnan(ours) & ~np.isnan(oracle)
    error = float(np.abs(ours[both] - oracle[both]).max()) if both.any() else 0.0
    return {
        "statistic": name,
        "compared": int(both.sum()),
        "nan_mismatch": nan_mismatch,
        "max_abs_error": error,
        "tolerance": tolerance,
        "pass": bool(nan_mismatch == 0 and error <= tolerance),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-resamples", type=int, default=1000, help="bootstrap replicates")
    parser.add_argument("--over", choices=["samples", "both"], default="samples")
    parser.add_argument("--repeats", type=int, default=3, help="rankstats calls; best counts")
    parser.add_argument(
        "--loop-replicates",
        type=int,
        default=20,
        help="replicates the reference loop runs (time scaled to --n-resamples)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="stability")
    args = parser.parse_args(argv)

    import scipy
    import xarray as xr

    import rankstats
    from rankstats import stability

    cube = paper_cube(args.seed)
    values = cube["score"].values
    real_templates = int((~np.isnan(values).all(axis=(0, 3))).sum())
    log(
        f"cube: {dict(cube.sizes)}, {real_templates} real templates, "
        f"{int(np.isnan(values).all(axis=(2, 3)).sum())} absent (model, task) pairs"
    )

    def run_replicates():
        return stability.replicates(
            cube,
            n_resamples=args.n_resamples,
            over=args.over,
            seed=args.seed,
            statistics=STATISTICS,
        )

    def run_intervals():
        return stability.intervals(
            cube,
            n_resamples=args.n_resamples,
            over=args.over,
            seed=args.seed,
            statistics=STATISTICS,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stability.intervals(cube.isel(task=[0]), n_resamples=20, over=args.over, seed=0)  # warm-up
        log(f"rankstats replicates, best of {args.repeats} ...")
        rep_seconds, rep_times, reps = best_of(run_replicates, args.repeats)
        log(f"rankstats intervals, best of {args.repeats} ...")
        ci_seconds, ci_times, _ = best_of(run_intervals, args.repeats)

        draws = stability.bootstrap_weights(
            cube, n_resamples=args.n_resamples, over=args.over, seed=args.seed
        )
        sample_weight = draws["sample_weight"].transpose("replicate", "task", "sample").values
        template_weight = (
            draws["template_weight"].transpose("replicate", "task", "template").values
            if "template_weight" in draws
            else None
        )
        n = args.n_resamples
        loop_ids = np.linspace(0, n - 1, min(args.loop_replicates, n)).astype(int)
        blocks = task_blocks(values)
        shape = values.shape[:3]
        loops = {}
        for name, vectorised in (("textbook", False), ("vectorised", True)):
            log(f"{name} loop over {len(loop_ids)} replicates x {len(blocks)} tasks ...")
            gc.collect()
            start = time.perf_counter()
            result = reference_loop(
                blocks, shape, sample_weight, template_weight, loop_ids, vectorised
            )
            loops[name] = (time.perf_counter() - start, result)
        # the intervals of the reference: numpy.percentile over all the replicates
        replicate_scores = (
            reps["score"].transpose("model", "task", "template", "replicate").values.astype(float)
        )
        gc.collect()
        start = time.perf_counter()
        np.percentile(replicate_scores, [2.5, 97.5], axis=-1)
        np.percentile(reps["kendall_w"].values, [2.5, 97.5], axis=0)
        np.percentile(reps["rank"].values, [2.5, 97.5], axis=0)
        percentile_seconds = time.perf_counter() - start
        del replicate_scores
        log("peak memory ...")
        peak_rep = peak_memory(run_replicates)
        peak_ci = peak_memory(run_intervals)

    checks = []
    ours = reps.isel(replicate=loop_ids)
    found = {
        "per-template score": (
            ours["score"].transpose("replicate", "model", "task", "template"),
            SCORE_TOLERANCE,
        ),
        "Kendall's W": (ours["kendall_w"].transpose("replicate", "task"), TOLERANCE),
        "rank (AvgP)": (ours["rank"].transpose("replicate", "model", "task"), TOLERANCE),
    }
    for loop_name, (_, result) in loops.items():
        for (name, (value, tolerance)), oracle in zip(found.items(), result, strict=True):
            checks.append(compare(f"{name} ({loop_name})", value.values, oracle, tolerance))

    failures = []
    print()
    print(f"n_resamples = {args.n_resamples}, over = {args.over!r}, cube {dict(cube.sizes)}")
    print(
        f"{'benchmark':<12} {'reference':<11} {'rankstats s':>12} {'reference s':>13} "
        f"{'ratio':>7}  target"
    )
    ratios = {}
    for loop_name, (measured, _) in loops.items():
        per_replicate = measured / len(loop_ids)
        for name, ours_s, extra in (
            ("replicates", rep_seconds, 0.0),
            ("intervals", ci_seconds, percentile_seconds),
        ):
            ref_s = per_replicate * args.n_resamples + extra
            ratio = ref_s / ours_s
            ratios[f"{name} vs {loop_name} loop"] = ratio
            if loop_name == "textbook":
                ok = ratio >= SPEEDUP_TARGET and (name != "intervals" or ours_s < TIME_TARGET)
                target = f">= {SPEEDUP_TARGET:.0f}x" + (
                    f", < {TIME_TARGET:.0f} s" if name == "intervals" else ""
                )
                verdict = "PASS" if ok else "FAIL"
                if not ok:
                    failures.append(f"{name}: {ours_s:.2f} s, {ratio:.0f}x the textbook loop")
            else:
                target, verdict = "(information)", ""
            print(
                f"{name:<12} {loop_name:<11} {ours_s:>12.2f} {ref_s:>12.1f}* {ratio:>6.0f}x"
                f"  {target}  {verdict}"
            )
    for loop_name, (measured, _) in loops.items():
        print(
            f"* EXTRAPOLATED: the {loop_name} loop ran {len(loop_ids)} of {args.n_resamples} "
            f"replicates in {measured:.2f} s ({measured / len(loop_ids):.4f} s per "
            "replicate), scaled to n_resamples."
        )
    print(
        f"  For intervals the references add numpy.percentile over all {args.n_resamples} "
        "replicates "
        f"({percentile_seconds:.2f} s, measured)."
    )
    print()
    print(f"{'statistic':<34} {'compared':>10} {'NaN mismatch':>13} {'max |error|':>12}  result")
    for check in checks:
        print(
            f"{check['statistic']:<34} {check['compared']:>10} {check['nan_mismatch']:>13} "
            f"{check['max_abs_error']:>12.2e}  {'PASS' if check['pass'] else 'FAIL'}"
        )
        if not check["pass"]:
            failures.append(f"{check['statistic']} differs from the loop")
    print()
    print(
        f"peak traced memory: replicates {peak_rep / 2**20:.0f} MiB, "
        f"intervals {peak_ci / 2**20:.0f} MiB"
    )
    print("PASS" if not failures else "FAIL: " + "; ".join(failures))

    report = {
        "benchmark": "stability",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "args": vars(args),
        "cube": {k: int(v) for k, v in cube.sizes.items()},
        "rankstats_seconds": {"replicates": rep_times, "intervals": ci_times},
        "reference": {
            "replicates_timed": len(loop_ids),
            "measured_seconds": {k: v[0] for k, v in loops.items()},
            "extrapolated_seconds": {
                k: v[0] * args.n_resamples / len(loop_ids) for k, v in loops.items()
            },
            "percentile_seconds": percentile_seconds,
        },
        "ratios": ratios,
        "peak_memory_bytes": {"replicates": peak_rep, "intervals": peak_ci},
        "checks": checks,
        "failures": failures,
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "xarray": xr.__version__,
            "rankstats": rankstats.__version__,
        },
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{args.name}.json").write_text(json.dumps(report, indent=2))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
