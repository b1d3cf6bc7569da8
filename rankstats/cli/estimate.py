"""``rankstats estimate CUBE``: the budgeted AvgP and MaxP estimators replayed on a known cube.

Replays the random-assignment estimate of AvgP and the successive-halving
search for MaxP (Mizrahi et al., 2024, section 7) many times on a cube whose
every score is known, and prints how close they come to the exact metrics
and how many model calls they spend, as the paper's tables 19 and 20.

Examples
--------
>>> from rankstats.cli.estimate import parse_stages
>>> parse_stages("all:10,100:10,10:rest")
((None, 10), (100, 10), (10, None))
"""

from __future__ import annotations

import argparse

import numpy as np

from ._shared import (
    UsageError,
    add_cube_argument,
    add_output_options,
    check_outputs,
    integer,
    load_cube,
    noted,
    prints_markdown,
    unit_interval,
    write_tables,
)

__all__ = ["PAPER_STAGES", "add", "parse_stages", "run"]

#: The search stages of the paper, as ``--stages`` takes them.
PAPER_STAGES = "all:10,100:10,10:rest"


def parse_stages(text: str) -> tuple[tuple[int | None, int | None], ...]:
    """``TEMPLATES:SAMPLES`` stages, comma-separated; ``all`` and ``rest`` mean everything.

    An argparse ``type`` too: a malformed value is a usage error naming ``--stages``.
    """
    stages = []
    for part in text.split(","):
        keep, colon, size = part.strip().partition(":")
        try:
            stages.append((None if keep == "all" else int(keep),
                           None if size == "rest" else int(size)))
        except ValueError:
            colon = ""
        if not colon:
            raise argparse.ArgumentTypeError(
                f"expected TEMPLATES:SAMPLES pairs such as {PAPER_STAGES}, not {text!r}")
    return tuple(stages)


def add(commands) -> None:
    """Add ``estimate`` to the sub-parsers."""
    parser = commands.add_parser(
        "estimate", help="simulate the budgeted AvgP and MaxP estimators on a cube",
        description="Replay the budgeted estimators of AvgP (a random template per sample, "
                    "repeated) and MaxP (successive halving) on a cube whose scores are all "
                    "known, and report their accuracy against the exact metrics and the calls "
                    "they spend. Per-template proportions are turned into samples by Bernoulli "
                    "draws. Tables: avgp (per model and task), avgp_k (per number k of "
                    "templates per sample), maxp.")
    add_cube_argument(parser)
    parser.add_argument("--metric", choices=("avgp", "maxp", "both"), default="both",
                        help="which estimator to replay (default both)")
    parser.add_argument("--benchmark", metavar="NAME", help="only this benchmark's tasks")
    parser.add_argument("--task", action="append", metavar="TASK",
                        help="only these tasks (repeatable)")
    parser.add_argument("--templates-per-sample", type=integer(1), default=30, metavar="K",
                        help="AvgP: the largest number k of random templates each sample is "
                             "scored under (default 30)")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="AvgP error counted as close enough (default 0.01)")
    parser.add_argument("--stages", type=parse_stages, default=PAPER_STAGES,
                        help="MaxP search stages TEMPLATES:SAMPLES (default: the paper's, "
                             f"{PAPER_STAGES})")
    parser.add_argument("--samples", type=integer(1),
                        help="samples per task for per-template scores "
                             "(default: the cube's template_samples)")
    parser.add_argument("--correlation", type=unit_interval, metavar="RHO",
                        help="for per-template scores: replay on synthetic per-sample scores "
                             "with each template's exact accuracy and this latent correlation "
                             "between templates (0 to 1) instead of independent draws")
    parser.add_argument("--valid", action="store_true", help="only templates marked valid")
    add_output_options(parser, n_resamples=200,
                       resamples_help="simulated runs of each estimator per model and task")
    parser.set_defaults(run=run)


def _select(cube, arguments):
    if arguments.benchmark:
        if "benchmark" not in cube.coords:
            raise UsageError("--benchmark: the cube has no 'benchmark' coordinate")
        keep = (cube["benchmark"] == arguments.benchmark).values
        if not keep.any():
            known = ", ".join(sorted(set(map(str, cube["benchmark"].values))))
            raise UsageError(f"--benchmark {arguments.benchmark!r}: no such benchmark "
                             f"(benchmarks: {known})")
        cube = cube.isel(task=keep)
    if arguments.task:
        missing = [t for t in arguments.task if t not in cube["task"].values]
        if missing:
            raise UsageError(f"--task {', '.join(map(repr, missing))}: not in the cube")
        cube = cube.sel(task=arguments.task)
    return cube


def _stat(values) -> tuple[float, float, int]:
    values = np.asarray(values, dtype=float).ravel()
    values = values[~np.isnan(values)]
    if not values.size:
        return float("nan"), float("nan"), 0
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0, \
        int(values.size)


def _avgp_report(result, largest: int, n_resamples: int) -> list[str]:
    needed = result["k_needed"]
    mean, sd, cases = _stat(needed)
    lines = [f"AvgP, a random template per sample ({n_resamples} simulated runs per case, "
             f"{cases} model × task cases; samples: {result.attrs['samples']}):",
             f"  templates per sample (k) to come within {result.attrs['tolerance']:g} of the "
             "exact AvgP: "
             f"mean {mean:.2f} (sd {sd:.2f} across cases), largest {float(needed.max()):.1f}",
             f"  runs never within it with k = {largest}: "
             f"{100 * float(result['never_within'].mean()):.1f}%"]
    for k in sorted({1, 5, 10, 20, largest} & set(range(1, largest + 1))):
        one = result.sel(k=k)
        lines.append(f"  k={k:>3}: mean |error| {float(one['error'].mean()):.4f}, "
                     f"spread {float(one['spread'].mean()):.4f}, within "
                     f"{100 * float(one['within'].mean()):.1f}% of runs, calls "
                     f"{float(one['calls'].mean()):,.0f} (all templates: "
                     f"{float(result['full_calls'].mean()):,.0f})")
    lines.append("  per task, mean k needed over models:")
    for task in result["task"].values:
        lines.append(f"    {task}: {float(needed.sel(task=task).mean()):.2f}")
    return lines


def _maxp_report(result, n_resamples: int) -> list[str]:
    found = result["found"]
    cases = int(found.notnull().sum())
    missed = result["shortfall_when_missed"]
    mean, sd, _ = _stat(missed)
    return [
        f"MaxP, successive halving ({result.attrs['stages']}; {n_resamples} simulated runs "
        f"per case, {cases} cases; samples: {result.attrs['samples']}):",
        f"  a best template found in {float(found.sum()):.1f} of {cases} cases on average "
        f"({100 * float(found.mean()):.1f}%); in most runs for "
        f"{int((found > 0.5).sum())} cases",
        f"  shortfall when missed: {mean:.4f} (sd {sd:.4f} across cases); mean shortfall "
        f"{float(result['shortfall'].mean()):.4f}",
        f"  mean |estimate - MaxP|: {float(abs(result['estimate'] - result['maxp']).mean()):.4f}",
        f"  calls: {float(result['calls'].mean()):,.0f} per case on average, against "
        f"{float(result['full_calls'].mean()):,.0f} for every template on every sample",
    ]


def _frame(dataset):
    """The variables of ``dataset`` over its dimensions, as one table (no text columns)."""
    frame = dataset.to_dataframe()
    return frame[[c for c in frame.columns if frame[c].dtype != object]]


def run(arguments) -> int:
    """Simulate, print and write."""
    from ..analyses.budget import simulate_avgp, simulate_maxp

    check_outputs(arguments)
    cube = _select(load_cube(arguments.cube), arguments)
    valid = True if arguments.valid else None
    shown = prints_markdown(arguments)
    tables = {}
    if arguments.metric in ("avgp", "both"):
        avg = noted(simulate_avgp, cube, templates_per_sample=arguments.templates_per_sample,
                    n_resamples=arguments.n_resamples, tolerance=arguments.tolerance,
                    samples=arguments.samples, valid=valid, correlation=arguments.correlation,
                    seed=arguments.seed)
        if shown:
            print("\n".join(_avgp_report(avg, arguments.templates_per_sample,
                                          arguments.n_resamples)))
        per_case = [name for name in avg.data_vars if "k" not in avg[name].dims]
        tables["avgp"] = _frame(avg[per_case])
        tables["avgp_k"] = _frame(avg[[name for name in avg.data_vars
                                       if "k" in avg[name].dims]])
    if arguments.metric in ("maxp", "both"):
        best = noted(simulate_maxp, cube, stages=arguments.stages,
                     n_resamples=arguments.n_resamples, samples=arguments.samples,
                     valid=valid, correlation=arguments.correlation, seed=arguments.seed + 1)
        if shown:
            print("\n".join(_maxp_report(best, arguments.n_resamples)))
        tables["maxp"] = _frame(best)
    write_tables(arguments, tables,
                 {"cube": arguments.cube, "metric": arguments.metric,
                  "n_resamples": arguments.n_resamples,
                  "templates_per_sample": arguments.templates_per_sample,
                  "tolerance": arguments.tolerance, "seed": arguments.seed,
                  "tasks": [str(t) for t in cube["task"].values]})
    return 0
