"""``rankstats estimate CUBE``: the budgeted estimators, spent once or replayed on a known cube.

Three modes:

* ``--method M --budget N``: each estimator named (``random-avgp``,
  ``halving-maxp``, ``irt``) spends N evaluations per model and task on
  the cube's cells (``irt`` without ``--budget`` reads a partial cube as it
  is) and its estimates are printed with the evaluations spent;
* ``--simulate``: partial designs drawn from a complete per-sample cube at
  several budgets, and each estimator's error against the full-data value
  (:func:`rankstats.simulate_estimators`); ``--figure PATH`` draws it;
* neither: the paper's replay of the random-assignment estimate of AvgP and
  the successive-halving search for MaxP (Mizrahi et al., 2024, section 7)
  many times, with how close they come to the exact metrics and how many
  model calls they spend, as the paper's tables 19 and 20.

Examples
--------
>>> from rankstats.cli.estimate import parse_stages
>>> parse_stages("all:10,100:10,10:rest")
((None, 10), (100, 10), (10, None))
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..errors import CubeError
from ._shared import (
    UsageError,
    add_cube_argument,
    add_output,
    add_output_options,
    integer,
    load_cube,
    noted,
    prints_markdown,
    unit_interval,
    write_tables,
)

__all__ = ["PAPER_STAGES", "add", "parse_budgets", "parse_stages", "run"]

#: The estimators ``--method`` names.
METHODS = ("random-avgp", "halving-maxp", "irt")

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
            stages.append(
                (None if keep == "all" else int(keep), None if size == "rest" else int(size))
            )
        except ValueError:
            colon = ""
        if not colon:
            raise argparse.ArgumentTypeError(
                f"expected TEMPLATES:SAMPLES pairs such as {PAPER_STAGES}, not {text!r}"
            )
    return tuple(stages)


def parse_budgets(text: str) -> tuple[int, ...]:
    """Budgets, comma-separated positive integers (an argparse ``type``).

    >>> parse_budgets("100,200")
    (100, 200)
    """
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(
            f"expected positive integers separated by commas, such as 100,200, not {text!r}"
        )
    return values


def add(commands) -> None:
    """Add ``estimate`` to the sub-parsers."""
    parser = commands.add_parser(
        "estimate",
        help="simulate the budgeted AvgP and MaxP estimators on a cube",
        description="Replay the budgeted estimators of AvgP (a random template per sample, "
        "repeated) and MaxP (successive halving) on a cube whose scores are all "
        "known, and report their accuracy against the exact metrics and the calls "
        "they spend. Per-template proportions are turned into samples by Bernoulli "
        "draws. Tables: avgp (per model and task), avgp_k (per number k of "
        "templates per sample), maxp.",
    )
    add_cube_argument(parser)
    parser.add_argument(
        "--metric",
        choices=("avgp", "maxp", "both"),
        default="both",
        help="which estimator to replay (default both)",
    )
    parser.add_argument("--benchmark", metavar="NAME", help="only this benchmark's tasks")
    parser.add_argument(
        "--task", action="append", metavar="TASK", help="only these tasks (repeatable)"
    )
    parser.add_argument(
        "--templates-per-sample",
        type=integer(1),
        default=30,
        metavar="K",
        help="AvgP: the largest number k of random templates each sample is "
        "scored under (default 30)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.01,
        help="AvgP error counted as close enough (default 0.01)",
    )
    parser.add_argument(
        "--stages",
        type=parse_stages,
        default=PAPER_STAGES,
        help=f"MaxP search stages TEMPLATES:SAMPLES (default: the paper's, {PAPER_STAGES})",
    )
    parser.add_argument(
        "--samples",
        type=integer(1),
        help="samples per task for per-template scores (default: the cube's template_samples)",
    )
    parser.add_argument(
        "--correlation",
        type=unit_interval,
        metavar="RHO",
        help="for per-template scores: replay on synthetic per-sample scores "
        "with each template's exact accuracy and this latent correlation "
        "between templates (0 to 1) instead of independent draws",
    )
    parser.add_argument("--valid", action="store_true", help="only templates marked valid")
    parser.add_argument(
        "--sample-sd",
        type=float,
        metavar="SD",
        help="for per-template scores: replay on per-sample outcomes drawn from "
        "an item-difficulty model, difficulties N(0, SD^2) shared by the "
        "templates, each template's ability fitted to its accuracy",
    )
    budgeted = parser.add_argument_group(
        "spend a budget (--method, --budget) or compare the estimators (--simulate)"
    )
    budgeted.add_argument(
        "--method",
        action="append",
        choices=METHODS,
        help="an estimator to run (repeatable; default: all three with --budget or --simulate)",
    )
    budgeted.add_argument(
        "--budget",
        type=parse_budgets,
        metavar="N[,N...]",
        help="evaluations per model and task; with --simulate, the budgets "
        "to compare (default 1, 2, 4 and 8 times the samples)",
    )
    budgeted.add_argument(
        "--simulate",
        action="store_true",
        help="draw partial designs from this complete per-sample cube and "
        "print each estimator's error against the full-data value",
    )
    add_output(
        budgeted,
        "--figure",
        metavar="PATH.png",
        help="with --simulate: draw the errors against the budget (needs matplotlib)",
    )
    budgeted.add_argument(
        "--template-covariate",
        metavar="COORD",
        help="irt: a (task, template) coordinate grouping the templates, e.g. template_method",
    )
    budgeted.add_argument(
        "--template-prior",
        choices=("auto", "normal", "normal-per-model", "mixture", "nonparametric"),
        default="auto",
        help="irt: the distribution of the template effects (auto: the normal unless a "
        "mixture or a nonparametric one predicts held-out templates better, or the "
        "mixture where the effects test skewed)",
    )
    add_output_options(
        parser,
        n_resamples=200,
        resamples_help="simulated runs of each estimator per model and task; "
        "with --simulate, partial designs per budget (default "
        "10 there); with --budget, posterior draws of irt",
    )
    # None until run() knows the mode: 10 designs for --simulate, 200 otherwise
    parser.set_defaults(n_resamples=None)
    parser.set_defaults(run=run)


def _select(cube, arguments):
    if arguments.benchmark:
        if "benchmark" not in cube.coords:
            raise UsageError("--benchmark: the cube has no 'benchmark' coordinate")
        keep = (cube["benchmark"] == arguments.benchmark).values
        if not keep.any():
            known = ", ".join(sorted(set(map(str, cube["benchmark"].values))))
            raise UsageError(
                f"--benchmark {arguments.benchmark!r}: no such benchmark (benchmarks: {known})"
            )
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
    return (
        float(values.mean()),
        float(values.std(ddof=1)) if values.size > 1 else 0.0,
        int(values.size),
    )


def _avgp_report(result, largest: int, n_resamples: int) -> list[str]:
    needed = result["k_needed"]
    mean, sd, cases = _stat(needed)
    lines = [
        f"AvgP, a random template per sample ({n_resamples} simulated runs per case, "
        f"{cases} model × task cases; samples: {result.attrs['samples']}):",
        f"  templates per sample (k) to come within {result.attrs['tolerance']:g} of the "
        "exact AvgP: "
        f"mean {mean:.2f} (sd {sd:.2f} across cases), largest {float(needed.max()):.1f}",
        f"  runs never within it with k = {largest}: "
        f"{100 * float(result['never_within'].mean()):.1f}%",
    ]
    for k in sorted({1, 5, 10, 20, largest} & set(range(1, largest + 1))):
        one = result.sel(k=k)
        lines.append(
            f"  k={k:>3}: mean |error| {float(one['error'].mean()):.4f}, "
            f"spread {float(one['spread'].mean()):.4f}, within "
            f"{100 * float(one['within'].mean()):.1f}% of runs, calls "
            f"{float(one['calls'].mean()):,.0f} (all templates: "
            f"{float(result['full_calls'].mean()):,.0f})"
        )
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


def _budgeted(arguments) -> bool:
    return bool(arguments.method or arguments.budget or arguments.simulate)


def run(arguments) -> int:
    """Simulate, print and write."""
    from ..analyses.budget import simulate_avgp, simulate_maxp

    if arguments.n_resamples is None:
        arguments.n_resamples = 10 if arguments.simulate else 200
    if arguments.figure and not arguments.simulate:
        raise UsageError("--figure draws the comparison of --simulate; add --simulate")
    cube = _select(load_cube(arguments.cube), arguments)
    if not bool(cube["score"].notnull().any()):
        raise CubeError(
            f"estimate: {arguments.cube} holds no score on the tasks selected (every model "
            f"is missing on every one of its {cube.sizes['task']} tasks): nothing to estimate"
        )
    if _budgeted(arguments):
        if arguments.simulate:
            return _simulate(cube, arguments)
        return _spend(cube, arguments)
    valid = True if arguments.valid else None
    shown = prints_markdown(arguments)
    tables = {}
    if arguments.metric in ("avgp", "both"):
        avg = noted(
            simulate_avgp,
            cube,
            templates_per_sample=arguments.templates_per_sample,
            n_resamples=arguments.n_resamples,
            tolerance=arguments.tolerance,
            samples=arguments.samples,
            valid=valid,
            correlation=arguments.correlation,
            sample_sd=arguments.sample_sd,
            seed=arguments.seed,
        )
        if shown:
            print(
                "\n".join(_avgp_report(avg, arguments.templates_per_sample, arguments.n_resamples))
            )
        per_case = [name for name in avg.data_vars if "k" not in avg[name].dims]
        tables["avgp"] = _frame(avg[per_case])
        tables["avgp_k"] = _frame(avg[[name for name in avg.data_vars if "k" in avg[name].dims]])
    if arguments.metric in ("maxp", "both"):
        best = noted(
            simulate_maxp,
            cube,
            stages=arguments.stages,
            n_resamples=arguments.n_resamples,
            samples=arguments.samples,
            valid=valid,
            correlation=arguments.correlation,
            sample_sd=arguments.sample_sd,
            seed=arguments.seed + 1,
        )
        if shown:
            print("\n".join(_maxp_report(best, arguments.n_resamples)))
        tables["maxp"] = _frame(best)
    write_tables(
        arguments,
        tables,
        {
            "cube": arguments.cube,
            "metric": arguments.metric,
            "n_resamples": arguments.n_resamples,
            "templates_per_sample": arguments.templates_per_sample,
            "tolerance": arguments.tolerance,
            "seed": arguments.seed,
            "tasks": [str(t) for t in cube["task"].values],
        },
    )
    return 0


def _error_table(result) -> list[str]:
    """The errors as a markdown table: a row per budget and estimator, a column per target."""
    targets = [str(t) for t in result["target"].values]
    lines = [
        "| budget | estimator | calls | " + " | ".join(targets) + " |",
        "|---:|---|---:|" + "---:|" * len(targets),
    ]
    for budget in result["budget"].values:
        for method in result["estimator"].values:
            one = result.sel(budget=budget, estimator=method)
            cells = ["" if np.isnan(v) else f"{v:.4f}" for v in one["error"].values]
            lines.append(
                f"| {int(budget)} | {method} | {float(one['calls']):,.0f} | "
                + " | ".join(cells)
                + " |"
            )
    return lines


def _margins(result) -> list[str]:
    """How much lower the irt error is than random-avgp's, for the quantiles and MaxP."""
    methods = set(map(str, result["estimator"].values))
    if not {"irt", "random-avgp"} <= methods:
        return []
    lines = [
        "",
        "irt against random-avgp (error of random-avgp minus error of irt; "
        "positive: irt is closer; ± twice the standard error of the difference):",
    ]
    for budget in result["budget"].values:
        parts = []
        for target in result["target"].values:
            a = result.sel(budget=budget, target=target, estimator="random-avgp")
            b = result.sel(budget=budget, target=target, estimator="irt")
            margin = float(a["error"] - b["error"])
            se = float(np.hypot(a["error_se"], b["error_se"]))
            parts.append(f"{target} {margin:+.4f} (±{2 * se:.4f})")
        lines.append(f"  budget {int(budget)}: " + ", ".join(parts))
    return lines


def _overspent(result) -> list[str]:
    """A line per estimator and budget whose mean calls exceed the budget (none: nothing)."""
    over = result["over_budget"].to_series()
    over = over[over > 0]
    if over.empty:
        return []
    lines = [
        "",
        "Over the budget (evaluations per model and task, mean; successive halving "
        "scores every template once in its first stage, whatever the budget):",
    ]
    for (method, budget), extra in over.items():
        spent = float(result["calls"].sel(estimator=method, budget=budget))
        lines.append(f"  {method} at budget {int(budget)}: spent {spent:,.1f}, {extra:,.1f} over")
    return lines


def _simulate(cube, arguments) -> int:
    from ..analyses.estimators import simulate_estimators

    methods = arguments.method or METHODS
    n_resamples = arguments.n_resamples
    result = noted(
        simulate_estimators,
        cube,
        budgets=arguments.budget,
        methods=methods,
        n_resamples=n_resamples,
        sample_sd=arguments.sample_sd,
        samples=arguments.samples,
        seed=arguments.seed,
    )
    if prints_markdown(arguments):
        print(
            f"Each estimator's mean absolute error against the full-data value "
            f"({n_resamples} partial designs per budget; every model and task; "
            f"{result.attrs['full_calls']:,.0f} cells per model and task in all):"
        )
        print()
        print("\n".join(_error_table(result) + _margins(result) + _overspent(result)))
    if arguments.figure:
        from ..io import write_atomically
        from ..plot import to_png
        from ..plot.estimators import plot_estimator_errors

        write_atomically(arguments.figure, to_png(plot_estimator_errors(result)))
        if prints_markdown(arguments):
            print(f"figure written to {arguments.figure}")
    write_tables(
        arguments,
        {
            "errors": result[["error", "error_se", "bias"]].to_dataframe(),
            "calls": result[["calls", "over_budget"]].to_dataframe(),
        },
        {
            "cube": arguments.cube,
            "mode": "simulate",
            "methods": list(methods),
            "n_resamples": n_resamples,
            "seed": arguments.seed,
            "budgets": [int(b) for b in result["budget"].values],
        },
    )
    return 0


def _spend(cube, arguments) -> int:
    """Each estimator spends the budget once on the cube's cells; print the estimates."""
    import pandas as pd

    from .._kernels import budget as _kb
    from .._kernels import irt as _ki
    from ..analyses.irt import (
        QUANTILES,
        estimate_distribution,
        per_sample_scores,
        positions,
        random_design,
    )

    methods = arguments.method or METHODS
    budgets = arguments.budget or (None,)
    if len(budgets) > 1:
        raise UsageError("--budget: give one budget without --simulate")
    budget = budgets[0]
    if budget is None and set(methods) - {"irt"}:
        raise UsageError(
            "--budget N is needed for random-avgp and halving-maxp (irt alone "
            "reads a partial cube as it is)"
        )
    scores = per_sample_scores(cube, "rankstats estimate")
    if "halving-maxp" in methods:
        _refuse_budget_below_halving(scores, budget)
    rng = np.random.default_rng(arguments.seed)
    partial = (
        scores if budget is None else scores.where(random_design(scores, budget=budget, seed=rng))
    )
    rows = []
    shown = prints_markdown(arguments)
    for method in methods:
        if method == "irt":
            out = noted(
                estimate_distribution,
                partial,
                n_resamples=arguments.n_resamples,
                template_covariate=arguments.template_covariate,
                template_prior=arguments.template_prior,
                seed=rng,
            )
            frame = out[
                ["avgp", "avgp_low", "avgp_high", "maxp", "maxp_low", "maxp_high", "calls"]
            ].to_dataframe()
            quantiles = out["quantiles"].to_dataframe().unstack("quantile")["quantiles"]
            quantiles.columns = [f"{100 * q:g}%" for q in quantiles.columns]
            frame = frame.join(quantiles)
            # which family of template effects "auto" chose, per model and task
            frame = frame.join(out["template_prior"].to_dataframe()["template_prior"])
        elif method == "random-avgp":
            ordered = partial.transpose(..., "task", "model", "template", "sample")
            templates, samples = positions(ordered)
            got = _ki.observed_summaries(
                ordered.values, templates[..., None, :], samples[..., None, :], QUANTILES
            )
            frame = _frame_of(
                ordered,
                {
                    "avgp": got["avgp"],
                    "maxp": got["maxp"],
                    "calls": got["calls"].astype(float),
                    **{f"{100 * q:g}%": got["quantile"][..., k] for k, q in enumerate(QUANTILES)},
                },
            )
        else:
            ordered = scores.transpose(..., "template", "sample")
            n_t, n_s = ordered.sizes["template"], ordered.sizes["sample"]
            stages = _ki.halving_stages(n_t, n_s, budget)
            run = _kb.successive_halving(
                ordered.values, per_sample=True, n_samples=None, stages=stages, trials=1, rng=rng
            )
            lead = ordered.dims[:-2]
            chosen = run["chosen"][..., 0].ravel()
            ids = (
                ordered["template_id"]
                .broadcast_like(ordered.isel(sample=0, drop=True))
                .transpose(*lead, "template")
                .values.reshape(-1, n_t)
                if "template_id" in ordered.coords
                else None
            )
            best = [
                str(ids[i, c]) if ids is not None and c >= 0 else str(c)
                for i, c in enumerate(chosen)
            ]
            frame = _frame_of(
                ordered,
                {
                    "maxp": run["observed"][..., 0],
                    "calls": run["calls"][..., 0],
                    "template": np.array(best).reshape(chosen.shape),
                },
            )
        frame = frame.reset_index()
        frame.insert(0, "method", method)
        if budget is not None and bool((frame["calls"] > budget).any()):
            # the refusals above keep every method within the budget; say so if one is not
            over = frame.loc[frame["calls"] > budget]
            print(
                f"rankstats: note: {method} spent more than the budget of {budget} "
                f"evaluations on {len(over)} model × task case(s) (up to "
                f"{float(over['calls'].max()):,.0f})",
                file=sys.stderr,
            )
        rows.append(frame)
        if shown:
            print(
                f"{method} ({'every observed cell' if budget is None else f'budget {budget}'}"
                f"; evaluations spent per model and task: mean "
                f"{float(frame['calls'].mean()):,.0f}):"
            )
            columns = [
                c
                for c in (
                    "model",
                    "task",
                    "5%",
                    "50%",
                    "95%",
                    "avgp",
                    "maxp",
                    "template",
                    "template_prior",
                    "calls",
                )
                if c in frame.columns
            ]
            print("\n".join(_markdown(frame[columns])))
            print()
    table = pd.concat(rows, ignore_index=True)
    write_tables(
        arguments,
        {"estimates": table},
        {
            "cube": arguments.cube,
            "mode": "spend",
            "methods": list(methods),
            "budget": budget,
            "seed": arguments.seed,
        },
    )
    return 0


def _refuse_budget_below_halving(scores, budget) -> None:
    """Refuse a budget below what successive halving spends at least: every template once.

    Its first stage scores every template of a task on one sample, so a task
    with n templates costs at least n evaluations per model, whatever the
    budget; spending them silently would report more calls than asked for.
    """
    if budget is None:
        return
    real = scores.notnull().any([d for d in scores.dims if d not in ("task", "template")])
    counts = real.sum("template")
    if "task" not in counts.dims:
        counts = counts.expand_dims(task=["(all)"])
    largest = int(counts.max())
    if budget < largest:
        task = str(counts["task"].values[int(np.argmax(counts.values))])
        raise UsageError(
            f"--budget {budget}: halving-maxp scores every template of a task once in its "
            f"first stage, so it needs at least {largest} evaluations per model and task "
            f"(task {task} has {largest} templates); give --budget {largest} or more, or "
            "leave out --method halving-maxp"
        )


def _frame_of(ordered, columns: dict):
    """Columns over the leading dims of ``ordered`` (all but template and sample), as a frame."""
    import pandas as pd

    lead = list(ordered.dims[:-2])
    index = pd.MultiIndex.from_product([ordered[d].values for d in lead], names=lead)
    return pd.DataFrame(
        {name: np.asarray(value).ravel() for name, value in columns.items()}, index=index
    )


def _markdown(frame) -> list[str]:
    def cell(value, column):
        if isinstance(value, float):
            if np.isnan(value):
                return ""
            return f"{value:,.0f}" if column == "calls" else f"{value:.4f}"
        return str(value)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += [
        "| " + " | ".join(cell(v, c) for v, c in zip(row, frame.columns, strict=True)) + " |"
        for row in frame.itertuples(index=False)
    ]
    return lines
