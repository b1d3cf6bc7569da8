"""How the cost of each statistic grows with models, templates and samples, one axis at a time.

A synthetic binary cube (tasks × templates × samples, models of varying skill)
is grown along one axis while the others stay at their base size. For every
function and axis the script prints the time and the peak traced memory of
each size, the growth exponent fitted to the times (least squares of log time
on log size) and the exponent of the algorithm's own cost over the same
sizes (for example n log n over models). It exits with status 1 when a fitted
exponent exceeds the algorithm's by more than ``--slack`` (0.3), or when a
result of the sort-and-merge tau kernel differs from the pair-sign kernel's.

``--report`` also times ``rankstats.report`` at each size (without a profiler,
the best of ``--repeats``) and prints the time of each of its sections (the
functions of ``rankstats.analyses.report`` it calls, from one more, profiled
call). ``--crossover`` times the two tau kernels against each
other, which is how their crossover in ``rankstats._kernels.concordance.use_merge``
and ``rankstats._kernels.subsample.MERGE_FROM`` was chosen.

    .venv/bin/python benchmarks/bench_scaling.py                # a few minutes
    .venv/bin/python benchmarks/bench_scaling.py --quick        # smaller sizes
    .venv/bin/python benchmarks/bench_scaling.py --report --axes models
    .venv/bin/python benchmarks/bench_scaling.py --report --axes models --clock cpu
    .venv/bin/python benchmarks/bench_scaling.py --crossover
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of, peak_memory  # noqa: E402

BASE = {"models": 64, "tasks": 4, "templates": 100, "samples": 100}
GRID = {
    "models": [64, 128, 256, 512, 1024],
    "templates": [50, 100, 200, 400, 800],
    "samples": [100, 400, 1600, 6400],
}
QUICK = {
    "models": [32, 64, 128, 256],
    "templates": [25, 50, 100, 200],
    "samples": [100, 400, 1600],
}


def n_log_n(n):
    return n * math.log2(max(n, 2))


def linear(n):
    return float(n)


def square(n):
    return float(n) ** 2


#: The algorithm's cost along each axis: models, templates, samples.
def _functions():
    import rankstats
    from rankstats.stability import leaderboard
    from rankstats.stability.needed import templates_needed

    return {
        "template_scores": (rankstats.template_scores, (linear, linear, linear)),
        "kendall_w": (lambda c: rankstats.kendall_w(c), (n_log_n, n_log_n, linear)),
        "friedman": (lambda c: rankstats.friedman(c), (n_log_n, n_log_n, linear)),
        "kendall_tau_matrix": (
            lambda c: rankstats.kendall_tau_matrix(c),
            (n_log_n, square, linear),
        ),
        "templates_needed": (
            lambda c: templates_needed(rankstats.template_scores(c), n_resamples=100, seed=0),
            (n_log_n, linear, linear),
        ),
        # its rank sets are M^2 B (see RANK_SETS); held to n log n, which the bootstrap
        # dominates at these sizes
        "leaderboard": (
            lambda c: leaderboard(c, n_resamples=200, seed=0),
            (n_log_n, n_log_n, linear),
        ),
    }


def cube(models, tasks, templates, samples, seed=0):
    """A binary cube: P(correct) from model skill, template effect and item difficulty."""
    import xarray as xr

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, models)[:, None, None, None]
    template = rng.normal(0.0, 0.4, (1, tasks, templates, 1))
    difficulty = rng.normal(0.0, 1.0, (1, tasks, 1, samples))
    p = 1.0 / (1.0 + np.exp(-(skill + template - difficulty)))
    score = (rng.random(p.shape, dtype=np.float32) < p).astype(float)
    ids = np.array([[f"template-{j}" for j in range(templates)]] * tasks)
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), score)},
        coords={
            "model": [f"model-{i}" for i in range(models)],
            "task": [f"task-{i}" for i in range(tasks)],
            "template_id": (("task", "template"), ids),
            "template_is_original": (
                ("task", "template"),
                np.arange(templates)[None].repeat(tasks, 0) == 0,
            ),
        },
        attrs={"score_kind": "binary", "higher_is_better": 1, "metric": "accuracy"},
    )


def slope(sizes, values):
    """Least-squares slope of log(values) on log(sizes)."""
    x, y = np.log(np.asarray(sizes, float)), np.log(np.asarray(values, float))
    return float(np.polyfit(x, y, 1)[0])


#: The line of the report's sections that shows the leaderboard's rank sets, part of
#: ``_stability``: the simultaneous family's largest scaled deviation over every pair of
#: models in every replicate, M^2 B work, where every other step is M log M or less.
RANK_SETS = "(rank sets, M^2 B)"

#: The clocks ``--clock`` chooses from for the report's timings.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def report_sections(c, clock=time.perf_counter, repeats=1):
    """Time of rankstats.report (the best of ``repeats``) and of each section it calls.

    The total is timed without a profiler; the sections come from one more,
    profiled call, so they add up to somewhat more than the total (the
    profiler slows the Python between the array operations). ``clock`` is the
    wall clock, or the process's CPU time, which time given to other processes
    on a shared machine does not inflate.
    """
    import rankstats
    import rankstats.analyses.report as module
    from rankstats._kernels import ranksets

    total = math.inf
    for _ in range(max(1, repeats)):
        start = clock()
        rankstats.report(c)
        total = min(total, clock() - start)
    profile = cProfile.Profile(clock)
    profile.enable()
    rankstats.report(c)
    profile.disable()
    stats = pstats.Stats(profile).stats
    sections = {}
    for (filename, _, name), (_, _, _, cumulative, callers) in stats.items():
        if filename == ranksets.__file__ and name == "rank_sets":
            # within _stability: the one step whose algorithm is quadratic in models
            sections[RANK_SETS] = sections.get(RANK_SETS, 0.0) + cumulative
        if filename != module.__file__ or not name.startswith("_"):
            continue
        # a section is called by report itself
        if any(caller[2] == "report" and caller[0] == module.__file__ for caller in callers):
            sections[name] = sections.get(name, 0.0) + cumulative
    return total, sections


def crossover(repeats):
    """Time both tau kernels: one pair of rankings, all pairs of m rows, subsample curves."""
    from rankstats._kernels import concordance as k
    from rankstats._kernels import subsample as sub

    rng = np.random.default_rng(0)
    print("\ncrossover: seconds, pair-sign kernel against sort-and-merge kernel")
    print(f"{'case':<34}{'signs':>10}{'merge':>10}{'faster':>8}")

    def row(label, fn, *inputs, option="kernel"):
        ts = best_of(lambda: fn(*inputs, **{option: "signs"}), repeats)[0]
        tm = best_of(lambda: fn(*inputs, **{option: "merge"}), repeats)[0]
        print(f"{label:<34}{ts:>10.4f}{tm:>10.4f}{'merge' if tm < ts else 'signs':>8}")

    for n in (4, 8, 16, 32, 64, 128):
        x = rng.integers(0, 5, (5000, n)).astype(float)
        y = rng.integers(0, 5, (5000, n)).astype(float)
        row(f"tau_pair 5000 x {n}", k.tau_pair, x, y)
    for m, n in ((100, 16), (100, 32), (100, 64), (100, 256), (400, 64), (400, 256), (1600, 16)):
        row(f"tau_matrix {m} rows x {n}", k.tau_matrix, rng.random((1, m, n)))
    for m in (16, 32, 48, 64, 128):
        row(
            f"subsample 4 x 30 x {m}, 100 draws",
            sub.subsample_curves,
            rng.random((4, 30, m)),
            rng.random((4, 100, 30)),
            np.arange(1, 31),
            np.array([0.5]),
            option="tau_kernel",
        )


def int8_memory(models=16, samples=10_000):
    """Peak traced memory of the per-template statistics and the bootstrap on an int8 cube.

    The cube itself is not traced (it exists before the call); the peak is
    what the call adds, outputs included. Each result must equal the
    float64 cube's, and the peak stay below the int8 cube's own size (so that
    input and work together stay below twice it).
    """
    import rankstats
    from rankstats.stability import leaderboard

    c = cube(models, 4, 100, samples)
    c8 = c.assign(score=c["score"].astype(np.int8))
    size = c8["score"].nbytes
    failures = []
    print(
        f"\n== a binary cube of {models} models x 4 tasks x 100 templates x {samples} samples "
        f"held as int8 ({size / 2**20:.0f} MiB)"
    )
    for name, fn in (
        ("template_scores", rankstats.template_scores),
        ("kendall_w", rankstats.kendall_w),
        ("friedman", rankstats.friedman),
        ("kendall_tau_matrix", rankstats.kendall_tau_matrix),
        ("leaderboard", lambda x: leaderboard(x, n_resamples=200, seed=0)),
    ):
        peak = peak_memory(lambda fn=fn: fn(c8))
        a, b = fn(c8), fn(c)
        names = list(a.data_vars) if hasattr(a, "data_vars") else [None]
        equal = all(
            np.array_equal(
                (a if v is None else a[v]).values, (b if v is None else b[v]).values, equal_nan=True
            )
            for v in names
        )
        print(
            f"{name:<20} peak {peak / 2**20:8.1f} MiB = {peak / size:.2f}x the int8 cube; "
            f"equal to the float64 cube's: {'yes' if equal else 'NO'}"
        )
        if peak >= size or not equal:
            failures.append(f"{name} on the int8 cube: peak {peak / size:.2f}x, equal {equal}")
    return failures


def check_equal(sizes):
    """Merge and sign kernels give identical outputs on cubes of the benchmark's kind."""
    import rankstats
    from rankstats._kernels import concordance as k
    from rankstats._kernels import subsample as sub

    failures = []
    for models in sizes:
        scores = (
            rankstats.template_scores(cube(models, 2, 30, 50))
            .transpose("task", "template", "model")
            .values
        )
        for name in ("tau", "pvalue", "n_objects"):
            a = k.tau_matrix(scores, kernel="signs")[name]
            b = k.tau_matrix(scores, kernel="merge")[name]
            if not np.array_equal(a, b, equal_nan=True):
                failures.append(f"tau_matrix {name} at {models} models")
        keys = np.random.default_rng(1).random((2, 50, 30))
        ks, q = np.arange(1, 31), np.array([0.05, 0.5, 0.95])
        a = sub.subsample_curves(scores, keys, ks, q, tau_kernel="signs")
        b = sub.subsample_curves(scores, keys, ks, q, tau_kernel="merge")
        for name in a:
            if not np.array_equal(a[name], b[name], equal_nan=True):
                failures.append(f"subsample_curves {name} at {models} models")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axes", nargs="*", default=list(GRID), choices=list(GRID))
    parser.add_argument("--functions", nargs="+", default=None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--report", action="store_true", help="also time rankstats.report")
    parser.add_argument("--crossover", action="store_true", help="time the two tau kernels")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="wall",
        help="the report's timings: elapsed time, or this process's CPU time",
    )
    parser.add_argument("--slack", type=float, default=0.3)
    parser.add_argument("--no-memory", action="store_true", help="skip the traced peaks")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    grid = QUICK if args.quick else GRID
    functions = _functions()
    if args.functions:
        functions = {name: functions[name] for name in args.functions}
    failures = check_equal([16, 64, 200])
    print("merge kernel equals sign kernel: " + ("yes" if not failures else "NO"))
    if not args.no_memory:
        failures += int8_memory(samples=1_000 if args.quick else 10_000)
    rows = []
    for axis_index, axis in enumerate(args.axes):
        sizes = grid[axis]
        print(
            f"\n== growing {axis} ({', '.join(map(str, sizes))}); others at "
            f"{', '.join(f'{k}={v}' for k, v in BASE.items() if k != axis)}"
        )
        print(
            f"{'function':<20}" + "".join(f"{s:>14}" for s in sizes) + f"{'fitted':>8}{'algo':>7}"
        )
        times = {name: [] for name in functions}
        peaks = {name: [] for name in functions}
        report_times, report_parts = [], []
        for size in sizes:
            shape = {**BASE, axis: size}
            c = cube(shape["models"], shape["tasks"], shape["templates"], shape["samples"])
            for name, (fn, _) in functions.items():
                best, _, _ = best_of(lambda fn=fn, c=c: fn(c), args.repeats)
                if best < 0.5:  # short calls: more timings, since the best counts
                    best = min(best, best_of(lambda fn=fn, c=c: fn(c), 4)[0])
                times[name].append(best)
                peaks[name].append(0 if args.no_memory else peak_memory(lambda fn=fn, c=c: fn(c)))
            if args.report:
                total, parts = report_sections(c, CLOCKS[args.clock], args.repeats)
                report_times.append(total)
                report_parts.append(parts)
            del c
        costs = {"models": 0, "templates": 1, "samples": 2}
        for name, (_, model) in functions.items():
            fitted = slope(sizes, times[name])
            algo = slope(sizes, [model[costs[axis]](s) for s in sizes])
            ok = fitted <= algo + args.slack
            cells = "".join(
                f"{t:>8.3f}s{p / 2**20:>5.0f}M"
                for t, p in zip(times[name], peaks[name], strict=True)
            )
            print(f"{name:<20}{cells}{fitted:>8.2f}{algo:>7.2f}{'' if ok else '  FAIL'}")
            rows.append((axis, name, fitted, algo, ok))
            if not ok:
                failures.append(
                    f"{name} along {axis}: exponent {fitted:.2f} > {algo:.2f} + {args.slack}"
                )
        if args.report:
            fitted = slope(sizes, report_times)
            model = (n_log_n, square, linear)[costs[axis]]
            algo = slope(sizes, [model(s) for s in sizes])
            print(
                f"{'report (' + args.clock + ')':<20}"
                + "".join(f"{t:>13.2f}s" for t in report_times)
                + f"{fitted:>8.2f}{algo:>7.2f}"
            )
            if fitted > algo + args.slack:
                failures.append(
                    f"report along {axis}: exponent {fitted:.2f} > {algo:.2f} + {args.slack}"
                )
            names = sorted(
                {n for parts in report_parts for n in parts},
                key=lambda n: -report_parts[-1].get(n, 0.0),
            )
            for section in names:
                print(
                    f"  {section:<18}"
                    + "".join(f"{parts.get(section, 0.0):>13.2f}s" for parts in report_parts)
                )
            print(
                f"report: largest over smallest size {report_times[-1] / report_times[0]:.1f}x "
                f"for {sizes[-1] / sizes[0]:.0f}x the {axis}"
            )
            if axis == "models" and sizes[-1] // 4 in sizes:
                quarter = sizes.index(sizes[-1] // 4)
                ratio = report_times[-1] / report_times[quarter]
                print(
                    f"report at {sizes[-1]} models over {sizes[-1] // 4}: {ratio:.1f}x "
                    f"(target: at most 4x; n log n grows "
                    f"{n_log_n(sizes[-1]) / n_log_n(sizes[-1] // 4):.1f}x)"
                )
                rest = [
                    t - parts.get(RANK_SETS, 0.0)
                    for t, parts in zip(report_times, report_parts, strict=True)
                ]
                print(
                    f"  without the rank sets (their profiled time): "
                    f"{rest[-1] / rest[quarter]:.1f}x; the rank sets "
                    f"alone {report_parts[-1].get(RANK_SETS, 0.0):.2f} s against "
                    f"{report_parts[quarter].get(RANK_SETS, 0.0):.2f} s"
                )
                if ratio > 4:
                    failures.append(
                        f"report at {sizes[-1]} models takes {ratio:.1f}x its time "
                        f"at {sizes[-1] // 4} (target 4x)"
                    )
        del axis_index
    if args.crossover:
        crossover(max(args.repeats, 3))
    if failures:
        print("\nFAIL\n" + "\n".join(f"- {f}" for f in failures))
        return 1
    print("\nPASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
