"""The ``rankstats estimate`` command: the budgeted estimators replayed on a known cube.

Replays the random-assignment estimate of AvgP and the successive-halving
search for MaxP (Mizrahi et al., 2024, section 7) many times on a cube whose
every score is known, and prints how close they come to the exact metrics
and how many model calls they spend, as the paper's tables 19 and 20.

Examples
--------
>>> from collectors.estimate_cli import parse_stages
>>> parse_stages("all:10,100:10,10:rest")
((None, 10), (100, 10), (10, None))
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["add_estimate", "parse_stages", "run"]


def parse_stages(text: str) -> tuple[tuple[int | None, int | None], ...]:
    """``TEMPLATES:SAMPLES`` stages, comma-separated; ``all`` and ``rest`` mean everything."""
    stages = []
    for part in text.split(","):
        keep, colon, size = part.strip().partition(":")
        try:
            stages.append((None if keep == "all" else int(keep),
                           None if size == "rest" else int(size)))
        except ValueError:
            colon = ""
        if not colon:
            raise ValueError(f"--stages {text!r}: expected TEMPLATES:SAMPLES pairs such as "
                             "all:10,100:10,10:rest")
    return tuple(stages)


def add_estimate(commands) -> None:
    """Add ``estimate`` to the ``rankstats`` command's sub-parsers."""
    parser = commands.add_parser(
        "estimate", help="simulate the budgeted AvgP and MaxP estimators on a cube",
        description="Replay the budgeted estimators of AvgP (a random template per sample, "
                    "repeated) and MaxP (successive halving) on a cube whose scores are all "
                    "known, and report their accuracy against the exact metrics and the calls "
                    "they spend. Per-template proportions are turned into samples by Bernoulli "
                    "draws.")
    parser.add_argument("cube", metavar="CUBE",
                        help="a cube file, or the name of an embedded example (mizrahi2024)")
    parser.add_argument("--metric", choices=("avgp", "maxp", "both"), default="both")
    parser.add_argument("--benchmark", metavar="NAME", help="only this benchmark's tasks")
    parser.add_argument("--task", action="append", metavar="TASK", help="only these tasks")
    parser.add_argument("--trials", type=int, default=200, help="replays per model and task")
    parser.add_argument("--repetitions", type=int, default=30,
                        help="largest number of AvgP repetitions (default 30)")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="AvgP error counted as close enough (default 0.01)")
    parser.add_argument("--stages", default="all:10,100:10,10:rest",
                        help="MaxP search stages TEMPLATES:SAMPLES (default: the paper's)")
    parser.add_argument("--samples", type=int,
                        help="samples per task for per-template scores "
                             "(default: the cube's template_samples)")
    parser.add_argument("--correlation", type=float, metavar="RHO",
                        help="for per-template scores: replay on synthetic per-sample scores "
                             "with each template's exact accuracy and this latent correlation "
                             "between templates (0 to 1) instead of independent draws")
    parser.add_argument("--valid", action="store_true", help="only templates marked valid")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", metavar="PATH", help="write the per-case results as CSV")
    parser.set_defaults(run=run)


def _select(cube, arguments):
    if arguments.benchmark:
        if "benchmark" not in cube.coords:
            raise ValueError("--benchmark: the cube has no 'benchmark' coordinate")
        keep = (cube["benchmark"] == arguments.benchmark).values
        if not keep.any():
            known = ", ".join(sorted(set(map(str, cube["benchmark"].values))))
            raise ValueError(f"no tasks of benchmark {arguments.benchmark!r} (benchmarks: "
                             f"{known})")
        cube = cube.isel(task=keep)
    if arguments.task:
        missing = [t for t in arguments.task if t not in cube["task"].values]
        if missing:
            raise ValueError(f"no task(s) {', '.join(missing)} in the cube")
        cube = cube.sel(task=arguments.task)
    return cube


def _stat(values) -> tuple[float, float, int]:
    values = np.asarray(values, dtype=float).ravel()
    values = values[~np.isnan(values)]
    if not values.size:
        return float("nan"), float("nan"), 0
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0, \
        int(values.size)


def _avgp_report(result, repetitions: int) -> list[str]:
    needed = result["repetitions_needed"]
    mean, sd, cases = _stat(needed)
    lines = [f"AvgP, a random template per sample ({result.attrs['trials']} trials per case, "
             f"{cases} model × task cases; samples: {result.attrs['samples']}):",
             f"  repetitions to come within {result.attrs['tolerance']:g} of the exact AvgP: "
             f"mean {mean:.2f} (sd {sd:.2f} across cases), largest {float(needed.max()):.1f}",
             f"  trials never within it in {repetitions} repetitions: "
             f"{100 * float(result['never_within'].mean()):.1f}%"]
    for k in sorted({1, 5, 10, 20, repetitions} & set(range(1, repetitions + 1))):
        one = result.sel(k=k)
        lines.append(f"  k={k:>3}: mean |error| {float(one['error'].mean()):.4f}, "
                     f"spread {float(one['spread'].mean()):.4f}, within "
                     f"{100 * float(one['within'].mean()):.1f}% of trials, calls "
                     f"{float(one['calls'].mean()):,.0f} (all templates: "
                     f"{float(result['full_calls'].mean()):,.0f})")
    lines.append("  per task, mean repetitions needed over models:")
    for task in result["task"].values:
        lines.append(f"    {task}: {float(needed.sel(task=task).mean()):.2f}")
    return lines


def _maxp_report(result) -> list[str]:
    found = result["found"]
    cases = int(found.notnull().sum())
    missed = result["shortfall_when_missed"]
    mean, sd, _ = _stat(missed)
    return [
        f"MaxP, successive halving ({result.attrs['stages']}; {result.attrs['trials']} "
        f"trials per case, {cases} cases; samples: {result.attrs['samples']}):",
        f"  a best template found in {float(found.sum()):.1f} of {cases} cases on average "
        f"({100 * float(found.mean()):.1f}%); in most trials for "
        f"{int((found > 0.5).sum())} cases",
        f"  shortfall when missed: {mean:.4f} (sd {sd:.4f} across cases); mean shortfall "
        f"{float(result['shortfall'].mean()):.4f}",
        f"  mean |estimate - MaxP|: {float(abs(result['estimate'] - result['maxp']).mean()):.4f}",
        f"  calls: {float(result['calls'].mean()):,.0f} per case on average, against "
        f"{float(result['full_calls'].mean()):,.0f} for every template on every sample",
    ]


def run(arguments) -> int:
    """Simulate and print; return the exit status."""
    import rankstats
    from rankstats.errors import RankstatsError
    from rankstats.io import open_cube, write_atomically

    try:
        from pathlib import Path

        if Path(arguments.cube).exists():
            cube = open_cube(arguments.cube)
        elif arguments.cube in rankstats.datasets.available():
            cube = rankstats.datasets.load(arguments.cube)
        else:
            raise FileNotFoundError(f"no cube file at {arguments.cube!r}, and no embedded "
                                    "example of that name")
        cube = _select(cube, arguments)
        stages = parse_stages(arguments.stages)
        valid = True if arguments.valid else None
        frames = []
        if arguments.metric in ("avgp", "both"):
            avg = rankstats.simulate_avgp(cube, repetitions=arguments.repetitions,
                                          trials=arguments.trials, tolerance=arguments.tolerance,
                                          samples=arguments.samples, valid=valid,
                                          correlation=arguments.correlation,
                                          seed=arguments.seed)
            print("\n".join(_avgp_report(avg, arguments.repetitions)))
            frames.append(avg[["avgp", "repetitions_needed", "never_within"]].to_dataframe())
        if arguments.metric in ("maxp", "both"):
            best = rankstats.simulate_maxp(cube, stages=stages, trials=arguments.trials,
                                           samples=arguments.samples, valid=valid,
                                           correlation=arguments.correlation,
                                           seed=arguments.seed + 1)
            print("\n".join(_maxp_report(best)))
            frames.append(best.to_dataframe())
        if arguments.csv:
            import pandas as pd

            frame = pd.concat(frames, axis=1)
            frame = frame.loc[:, ~frame.columns.duplicated()]
            columns = [c for c in frame.columns if frame[c].dtype != object]
            write_atomically(arguments.csv,
                             frame[columns].reset_index().to_csv(index=False).encode("utf-8"))
    except (RankstatsError, ValueError, OSError) as error:
        print(f"rankstats estimate: error: {error}", file=sys.stderr)
        return 2
    return 0
