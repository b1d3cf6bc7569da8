"""What a report found, in a few lines per benchmark and one row per task.

The lines read the report's Dataset only: the agreement of the templates
(Kendall's W and the least agreeing pair), the places of the leaderboard the
rank sets settle, how far the original template lies from its paraphrases,
and how many templates the next round needs. Each line names the section it
comes from, so that a rendering can link to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["Line", "benchmark_lines", "next_round", "task_summary"]


@dataclass(frozen=True)
class Line:
    """One finding: its text, and the key of the report section it summarises."""

    text: str
    section: str


def _per_task(analysis: xr.Dataset, name: str) -> np.ndarray:
    return np.asarray(analysis[name].transpose("task").values, dtype=float)


def _per_task_model(analysis: xr.Dataset, name: str) -> np.ndarray:
    return np.asarray(analysis[name].transpose("task", "model").values, dtype=float)


def _benchmarks(analysis: xr.Dataset) -> np.ndarray:
    if "task_benchmark" in analysis:
        return np.asarray(analysis["task_benchmark"].transpose("task").values).astype(str)
    return np.full(analysis.sizes["task"], "all")


def _number(value: float, digits: int = 2) -> str:
    """A value with ``digits`` decimals, a true minus sign, "–" where undefined."""
    if not np.isfinite(value):
        return "–"
    return f"{value:.{digits}f}".replace("-", "−")


def _whole(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.0f}"


def next_round(analysis: xr.Dataset) -> np.ndarray:
    """The templates the next round needs, per task, as text.

    The recommended number (``templates_recommended``); where the task's own
    templates do not reach the target (``templates_needed_censored``), the
    recommendation is the planner's and the subsets say only "more than N".

    Examples
    --------
    >>> import xarray as xr
    >>> from rankstats.analyses._summary import next_round
    >>> data = xr.Dataset({
    ...     "templates_recommended": ("task", [76.0, 315.0, float("nan")]),
    ...     "templates_needed": ("task", [76.0, 226.0, 40.0]),
    ...     "templates_needed_censored": ("task", [False, True, True])})
    >>> next_round(data).tolist()
    ['76', '315 (the subsets: more than 226)', 'more than 40']
    """
    recommended = _per_task(analysis, "templates_recommended")
    needed = _per_task(analysis, "templates_needed")
    censored = np.asarray(analysis["templates_needed_censored"].transpose("task").values, bool)
    shown = np.array([_whole(k) for k in recommended], dtype=object)
    more = np.array([f"more than {_whole(k)}" for k in needed], dtype=object)
    both = np.array(
        [f"{r} (the subsets: {m})" for r, m in zip(shown, more, strict=True)], dtype=object
    )
    return np.where(censored, np.where(np.isfinite(recommended), both, more), shown).astype(object)


def _rank_set(low: float, high: float) -> str:
    return f"{low:.0f}" if low == high else f"{low:.0f}–{high:.0f}"


def _leaders(analysis: xr.Dataset) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Per task: the models whose rank set holds 1 (with their sets), and counts.

    Returns the leaders' text, whether one model alone is first, the models
    separated from all others (a rank set of one place) and the ranked models.
    """
    low = _per_task_model(analysis, "rank_low")
    high = _per_task_model(analysis, "rank_high")
    models = np.asarray(analysis["model"].values).astype(str)
    can_lead = low == 1
    ranked = np.isfinite(low).sum(1)
    alone = (can_lead.sum(1) == 1) & ((can_lead & (high == 1)).sum(1) == 1)
    separated = (np.isfinite(low) & (low == high)).sum(1)
    order = np.argsort(np.where(can_lead, high, np.inf), axis=1, kind="stable")
    text = []
    for t in range(low.shape[0]):
        first = [m for m in order[t] if can_lead[t, m]]
        named = ", ".join(f"{models[m]} [{_rank_set(low[t, m], high[t, m])}]" for m in first[:3])
        text.append(named + (f", +{len(first) - 3} more" if len(first) > 3 else "") or "–")
    return text, alone, separated, ranked


def task_summary(analysis: xr.Dataset) -> pd.DataFrame:
    """One row per task: what each part of the report found there.

    Columns, each present when the report has its section: ``benchmark``,
    ``W`` (Kendall's W), ``least agreeing pair`` (its tau-b and templates),
    ``can be first [rank set]`` (the models whose rank set holds place 1),
    ``separated`` (models whose rank set is one place, of those ranked),
    ``original vs paraphrases`` (median |divergence| over the models, and
    how many lie more than one standard deviation away) and ``templates
    next round`` (see :func:`next_round`).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses._summary import task_summary
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8, 0.2], "b": [0.5, 0.6, 0.7],
    ...                       "c": [0.1, 0.3, 0.4]}.items()
    ...     for p, s in zip(["p1", "p2", "p3"], scores)
    ... ])
    >>> task_summary(rankstats.report(cube, n_resamples=0)).iloc[0].tolist()
    ['all', '0.33', '−0.33 (p1, p3)']
    """
    tasks = pd.Index(np.asarray(analysis["task"].values).astype(str), name="task")
    frame = pd.DataFrame({"benchmark": _benchmarks(analysis)}, index=tasks)
    frame["W"] = [_number(w) for w in _per_task(analysis, "w")]
    tau = _per_task(analysis, "tau_min")
    first = np.asarray(analysis["tau_min_template"].transpose("task").values).astype(str)
    second = np.asarray(analysis["tau_min_template_b"].transpose("task").values).astype(str)
    frame["least agreeing pair"] = [
        f"{_number(v)} ({a}, {b})" if np.isfinite(v) else "–"
        for v, a, b in zip(tau, first, second, strict=True)
    ]
    if "rank_low" in analysis:
        leaders, _, separated, ranked = _leaders(analysis)
        frame["can be first [rank set]"] = leaders
        frame["separated"] = [f"{s} of {n}" for s, n in zip(separated, ranked, strict=True)]
    if "divergence" in analysis:
        size = np.abs(_per_task_model(analysis, "divergence"))
        known = np.isfinite(size)
        median = np.array(
            [
                np.median(row[ok]) if ok.any() else np.nan
                for row, ok in zip(size, known, strict=True)
            ]
        )
        frame["original vs paraphrases"] = [
            f"{_number(m, 1)} sd; {int(far)} of {int(n)} beyond 1" if n else "–"
            for m, far, n in zip(median, (size > 1).sum(1), known.sum(1), strict=True)
        ]
    if "templates_recommended" in analysis:
        frame["templates next round"] = next_round(analysis)
    return frame


def _spread(values: np.ndarray, tasks: np.ndarray, digits: int = 2) -> str:
    """The median of per-task values, with the smallest and largest and their tasks."""
    ok = np.isfinite(values)
    if not ok.any():
        return ""
    low, high = np.nanargmin(values), np.nanargmax(values)
    text = (
        f"median {_number(float(np.median(values[ok])), digits)} over {int(ok.sum())} "
        f"task{'s' if ok.sum() != 1 else ''}"
    )
    if _number(values[low], digits) == _number(values[high], digits):
        return text
    return (
        f"{text}, from {_number(values[low], digits)} ({tasks[low]}) to "
        f"{_number(values[high], digits)} ({tasks[high]})"
    )


def benchmark_lines(analysis: xr.Dataset) -> list[tuple[str, list[Line]]]:
    """A few lines per benchmark: agreement, settled places, divergence, next round.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses._summary import benchmark_lines
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8, 0.2], "b": [0.5, 0.6, 0.7],
    ...                       "c": [0.1, 0.3, 0.4]}.items()
    ...     for p, s in zip(["p1", "p2", "p3"], scores)
    ... ])
    >>> found = benchmark_lines(rankstats.report(cube, n_resamples=0))
    >>> [(name, [line.section for line in lines]) for name, lines in found]
    [('all', ['agreement'])]
    >>> print(found[0][1][0].text)
    Do the templates agree on the model ranking? Kendall's W median 0.33 over 1 task;
    the least agreeing pair: τ = −0.33 on t (templates p1 and p3).
    """
    tasks = np.asarray(analysis["task"].values).astype(str)
    benchmark = _benchmarks(analysis)
    w, tau = _per_task(analysis, "w"), _per_task(analysis, "tau_min")
    first = np.asarray(analysis["tau_min_template"].transpose("task").values).astype(str)
    second = np.asarray(analysis["tau_min_template_b"].transpose("task").values).astype(str)
    stability = "rank_low" in analysis
    if stability:
        leaders, alone, separated, ranked = _leaders(analysis)
        low = _per_task_model(analysis, "rank_low")
        models = np.asarray(analysis["model"].values).astype(str)
    out = []
    for name in dict.fromkeys(benchmark.tolist()):
        mine = benchmark == name
        lines = []
        spread = _spread(w[mine], tasks[mine])
        if spread:
            text = f"Do the templates agree on the model ranking? Kendall's W {spread}"
            if np.isfinite(tau[mine]).any():
                k = np.flatnonzero(mine)[np.nanargmin(tau[mine])]
                text += (
                    f"; the least agreeing pair: τ = {_number(tau[k])} on {tasks[k]} "
                    f"(templates {first[k]} and {second[k]})"
                )
            lines.append(Line(text + ".", "agreement"))
        if stability and (ranked[mine] > 0).any():
            settled = mine & alone
            winners = pd.Series(
                models[np.argmax(low[settled] == 1, axis=1)] if settled.any() else [], dtype=object
            ).value_counts(sort=True)
            who = ", ".join(f"{m} on {c}" for m, c in winners.items())
            n = int((mine & (ranked > 0)).sum())
            text = (
                "Which places are settled? One model alone is first (a rank set of place 1 "
                f"only) on {int(settled.sum())} of {n} task{'s' if n != 1 else ''}"
                + (f" ({who})" if who else "")
            )
            contested = np.flatnonzero(mine & (ranked > 0) & ~alone)
            if contested.size:
                k = contested[0]
                text += f"; on the others several can be ({tasks[k]}: {leaders[k]})"
            share = separated[mine & (ranked > 0)]
            middle = float(np.median(share))
            text += (
                f". A median {middle:g} model{'s' if middle != 1 else ''} per task "
                f"{'are' if middle != 1 else 'is'} separated from all others (a rank set of "
                f"one place; from {share.min()} to {share.max()}, of "
                f"{_ranked_models(ranked[mine & (ranked > 0)])})."
            )
            lines.append(Line(text, "stability"))
        if "divergence" in analysis:
            size = np.abs(_per_task_model(analysis, "divergence")[mine])
            if np.isfinite(size).any():
                far = int((size > 1).sum())
                lines.append(
                    Line(
                        "How far does the original template sit from its paraphrases? "
                        f"A median {_number(float(np.nanmedian(size)), 1)} standard "
                        f"deviations; more than 1 for {far} of {int(np.isfinite(size).sum())} "
                        "model × task pairs.",
                        "divergence",
                    )
                )
        if "templates_recommended" in analysis:
            recommended = _per_task(analysis, "templates_recommended")[mine]
            needed = _per_task(analysis, "templates_needed")[mine]
            censored = np.asarray(
                analysis["templates_needed_censored"].transpose("task").values, dtype=bool
            )[mine]
            named = tasks[mine]

            at = (recommended, needed, censored, named)
            if np.isfinite(recommended).any():
                fewest, most = np.nanargmin(recommended), np.nanargmax(recommended)
                span = (
                    f"From {_at(fewest, *at)} to {_at(most, *at)}"
                    if recommended[fewest] != recommended[most] or censored[[fewest, most]].any()
                    else f"{_whole(recommended[most])} on every task with a number"
                )
                text = (
                    f"How many templates does the next round need? {span}, for two reruns "
                    "to rank the models alike with each task's items as they are"
                )
                overall = analysis.get("overall_templates_for_tau")
                if overall is not None and np.isfinite(float(overall)):
                    text += (
                        f"; {float(overall):.0f} for the mean score over all "
                        f"{analysis.sizes['task']} tasks"
                    )
                if "samples_planned" in analysis:
                    items = _per_task(analysis, "samples_planned")[mine]
                    if np.isfinite(items).any():
                        few, many = np.nanargmin(items), np.nanargmax(items)
                        text = text.replace("templates does", "templates and items does", 1)
                        text += (
                            f"; and from {_whole(items[few])} items on {named[few]} to "
                            f"{_whole(items[many])} on {named[many]} with the templates as "
                            "they are (the planner)"
                        )
                lines.append(Line(text + ".", "templates_needed"))
        out.append((name, lines))
    return out


def _at(k: int, recommended, needed, censored, named) -> str:
    """Task ``k``'s recommended templates, and the subsets' bound where they fall short."""
    if not np.isfinite(recommended[k]):
        return f"more than {_whole(needed[k])} on {named[k]}"
    more = f" (more than {_whole(needed[k])} by its own templates)" if censored[k] else ""
    return f"{_whole(recommended[k])} on {named[k]}{more}"


def _ranked_models(ranked: np.ndarray) -> str:
    values = np.unique(ranked)
    return f"{values[0]} ranked" if values.size == 1 else f"{values.min()}–{values.max()} ranked"
