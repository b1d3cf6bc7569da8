"""Figures of a report (the ``plot`` extra: matplotlib, imported on first use).

Every function draws on a :class:`matplotlib.axes.Axes` (a new figure when none
is given) and returns the axes; :func:`figures` renders the standard set to PNG
bytes for the HTML report without touching pyplot's global state.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._figure import new_axes as _axes
from ._figure import to_png as _png

__all__ = [
    "figures",
    "plot_divergence",
    "plot_metrics",
    "plot_pair",
    "plot_rank_agreement",
    "plot_summary",
]


def plot_pair(analysis: xr.Dataset, task: str, ax=None):
    """The least agreeing pair of templates of one task (Mizrahi et al. 2024, figure 2).

    Models are ordered by their score under the first template; bars show the
    score under each template, so crossing orders stand out.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.plot.report import plot_pair
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.2], "b": [0.5, 0.6], "c": [0.1, 0.7]}.items()
    ...     for p, s in zip(["p1", "p2"], scores)
    ... ])
    >>> ax = plot_pair(rankstats.report(cube), "t")
    >>> ax.get_title()
    't: templates p1 and p2, τ = -1.00'
    """
    one = analysis.sel(task=task)
    first = one["tau_min_score"].to_series().dropna()
    second = one["tau_min_score_b"].to_series().reindex(first.index)
    order = first.sort_values(ascending=False, kind="stable").index
    ax = _axes(ax, (max(4.0, 0.5 * len(order) + 2), 3.2))
    positions = np.arange(len(order))
    ax.bar(
        positions - 0.2, first[order], width=0.4, label=f"template {one['tau_min_template'].item()}"
    )
    ax.bar(
        positions + 0.2,
        second[order],
        width=0.4,
        label=f"template {one['tau_min_template_b'].item()}",
    )
    ax.set_xticks(positions, order, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(str(analysis.attrs.get("metric", "score")))
    ax.set_title(
        f"{task}: templates {one['tau_min_template'].item()} and "
        f"{one['tau_min_template_b'].item()}, τ = {float(one['tau_min']):.2f}"
    )
    ax.legend(fontsize=8)
    return ax


def plot_divergence(analysis: xr.Dataset, ax=None):
    """Heat map of each model's divergence on each task (Mizrahi et al. 2024, figure 3).

    Cells with |divergence| > 1 are marked with their value.
    """
    data = analysis["divergence"].transpose("model", "task")
    values = data.values
    ax = _axes(ax, (0.45 * data.sizes["task"] + 3, 0.3 * data.sizes["model"] + 2))
    limit = max(1.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0)
    image = ax.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_xticks(
        range(data.sizes["task"]), data["task"].values, rotation=70, ha="right", fontsize=7
    )
    ax.set_yticks(range(data.sizes["model"]), data["model"].values, fontsize=7)
    for i, j in zip(*np.nonzero(np.abs(np.nan_to_num(values)) > 1), strict=True):
        ax.text(j, i, f"{values[i, j]:.1f}", ha="center", va="center", fontsize=6)
    ax.figure.colorbar(image, ax=ax, label="standard deviations from the paraphrases' mean")
    ax.set_title("Divergence of the original templates")
    return ax


def plot_metrics(analysis: xr.Dataset, task: str | None = None, ax=None):
    """MaxP, AvgP, saturation and CPS per model (Mizrahi et al. 2024, figure 4).

    For one task, or averaged over all tasks when ``task`` is None.
    """
    values = analysis["metric_value"]
    over = task
    if task is None:
        over = _tasks_averaged(analysis)
        values = values.mean("task")
    else:
        values = values.sel(task=task)
    frame = values.transpose("model", "metric").to_pandas().dropna(how="all")
    frame = frame.sort_values("maxp", ascending=False, kind="stable")
    ax = _axes(ax, (max(5.0, 0.6 * len(frame) + 2), 3.4))
    positions = np.arange(len(frame))
    width = 0.8 / frame.shape[1]
    labels = {"maxp": "MaxP", "avgp": "AvgP", "saturation": "saturation", "cps": "CPS"}
    for k, metric in enumerate(frame.columns):
        ax.bar(
            positions + (k - 1.5) * width,
            frame[metric],
            width=width,
            label=labels.get(metric, metric),
        )
    ax.set_xticks(positions, frame.index, rotation=60, ha="right", fontsize=8)
    ax.set_title(f"Metrics per model: {over}", fontsize=9 if task is None else None)
    ax.legend(fontsize=8, ncols=4)
    return ax


def _tasks_averaged(analysis: xr.Dataset) -> str:
    """Over which tasks each model's mean runs, grouped: "LMentry + BBH (25 tasks): 11 models".

    Models are grouped by the set of tasks they have a metric on; a set that
    is whole benchmarks is named by them.
    """
    has = analysis["metric_value"].notnull().any("metric").transpose("model", "task").values
    tasks = np.asarray(analysis["task"].values).astype(str)
    benchmark = (
        np.asarray(analysis["task_benchmark"].values).astype(str)
        if "task_benchmark" in analysis
        else np.full(tasks.size, "all")
    )
    sets, counts = np.unique(has[has.any(1)], axis=0, return_counts=True)
    order = np.argsort(-sets.sum(1), kind="stable")
    parts = []
    for row, n in zip(sets[order], counts[order], strict=True):
        names = list(dict.fromkeys(benchmark[row].tolist()))
        whole = all(row[benchmark == name].all() for name in names)
        where = " + ".join(names) + f" ({row.sum()} tasks)" if whole else f"{row.sum()} tasks"
        parts.append(f"{where}: {n} model{'s' if n != 1 else ''}")
    return "mean over each model's tasks, " + "; ".join(parts)


def plot_summary(analysis: xr.Dataset):
    """What the report found per task, in one figure of up to three panels sharing the tasks.

    Kendall's W with the least agreeing pair's tau-b; the models separated
    from all others (a rank set of one place) of those ranked; the templates
    the next round needs (hatched: more than the task's own templates show,
    the planner's number). Panels need the report's stability section.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.plot.report import plot_summary
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "score": s}
    ...     for m, scores in {"a": [0.9, 0.8, 0.2], "b": [0.5, 0.6, 0.7],
    ...                       "c": [0.1, 0.3, 0.4]}.items()
    ...     for p, s in zip(["p1", "p2", "p3"], scores)
    ... ])
    >>> figure = plot_summary(rankstats.report(cube, n_resamples=0))
    >>> [ax.get_title() for ax in figure.axes]
    ["Kendall's W (bar), least agreeing pair's τ-b (|)"]
    """
    from matplotlib.figure import Figure

    tasks = np.asarray(analysis["task"].values).astype(str)
    stability = "rank_low" in analysis
    panels = 3 if stability else 1
    figure = Figure(figsize=(3.6 * panels + 1.6, 0.2 * tasks.size + 1.2), layout="constrained")
    axes = figure.subplots(1, panels, sharey=True, squeeze=False)[0]
    positions = np.arange(tasks.size)
    ax = axes[0]
    ax.barh(positions, analysis["w"].transpose("task").values, color="tab:blue")
    ax.scatter(
        analysis["tau_min"].transpose("task").values, positions, color="tab:red", marker="|", s=60
    )
    ax.axvline(0.0, color="grey", linewidth=0.5)
    ax.set_xlim(-1.0, 1.0)
    ax.set_yticks(positions, tasks, fontsize=7)
    ax.invert_yaxis()
    ax.set_title("Kendall's W (bar), least agreeing pair's τ-b (|)", fontsize=9)
    if stability:
        low = analysis["rank_low"].transpose("task", "model").values
        high = analysis["rank_high"].transpose("task", "model").values
        ranked = np.isfinite(low).sum(1)
        separated = (np.isfinite(low) & (low == high)).sum(1)
        ax = axes[1]
        ax.barh(positions, ranked, color="lightgrey", label="ranked")
        ax.barh(positions, separated, color="tab:green", label="separated from all others")
        ax.set_title("Models with a rank set of one place", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.04))
        ax = axes[2]
        recommended = analysis["templates_recommended"].transpose("task").values
        censored = analysis["templates_needed_censored"].transpose("task").values.astype(bool)
        shown = np.nan_to_num(recommended)
        ax.barh(positions[~censored], shown[~censored], color="tab:orange", label="subsets")
        ax.barh(
            positions[censored],
            shown[censored],
            color="white",
            edgecolor="tab:orange",
            hatch="///",
            label="planner (subsets: more than their bound)",
        )
        ax.set_title("Templates the next round needs", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.04))
    for ax in axes:
        ax.tick_params(axis="x", labelsize=7)
    return figure


def plot_rank_agreement(analysis: xr.Dataset, ax=None):
    """Kendall's W per task, sorted, with the smallest pairwise tau beside it."""
    w = analysis["w"].to_series().sort_values(kind="stable")
    tau = analysis["tau_min"].to_series().reindex(w.index)
    ax = _axes(ax, (6.0, 0.25 * len(w) + 1.5))
    positions = np.arange(len(w))
    templates = (
        str(analysis["convention_templates"].sel(convention="kendall_w").item())
        if "convention_templates" in analysis
        else "all"
    )
    ax.barh(positions, w.values, label=f"Kendall's W ({templates} templates)")
    ax.scatter(
        tau.values, positions, color="black", marker="|", s=60, label="smallest pairwise τ-b"
    )
    ax.axvline(0.0, color="grey", linewidth=0.5)
    ax.set_yticks(positions, w.index, fontsize=7)
    ax.set_xlim(-1.0, 1.0)
    ax.set_title("Do the templates agree on the model ranking?")
    ax.legend(fontsize=8, loc="upper left")
    return ax


def figures(analysis: xr.Dataset) -> dict[str, bytes]:
    """The report's standard figures as PNG bytes, keyed by report section.

    Keys: ``summary`` (:func:`plot_summary`), ``agreement`` (rank agreement
    across tasks), ``pairs:<task>`` (the least agreeing pair of each task),
    ``divergence``, ``metrics``, and with the stability section
    ``stability:<task>`` (rank intervals) and
    ``templates_needed``, ``variance`` (variance components), and with the
    verbalizer sections the figures of
    :func:`rankstats.plot.verbalizer.figures`.
    """
    out = {"summary": _png(plot_summary(analysis))}
    out["agreement"] = _png(plot_rank_agreement(analysis))
    for task in analysis["task"].values:
        if np.isfinite(float(analysis["tau_min"].sel(task=task))):
            out[f"pairs:{task}"] = _png(plot_pair(analysis, str(task)))
    if "divergence" in analysis:
        out["divergence"] = _png(plot_divergence(analysis))
    out["metrics"] = _png(plot_metrics(analysis))
    if "tie_group" in analysis:
        from .stability import plot_k_needed, plot_rank_intervals

        board = xr.Dataset(
            {
                "rank": analysis["metric_rank"].sel(metric="avgp", drop=True),
                "rank_low": analysis["rank_low"],
                "rank_high": analysis["rank_high"],
                "tie_group": analysis["tie_group"],
            }
        )
        for task in analysis["task"].values:
            if analysis["rank_low"].sel(task=task).notnull().any():
                out[f"stability:{task}"] = _png(plot_rank_intervals(board, task))
        needed = xr.Dataset(
            {
                "k_needed": analysis["templates_needed"],
                "n_templates": analysis["n_templates"],
                **(
                    {
                        "censored": analysis["templates_needed_censored"],
                        "k_planned": analysis["templates_planned"],
                    }
                    if "templates_planned" in analysis
                    else {}
                ),
            },
            attrs={
                "size_dim": "k",
                "target": analysis["templates_needed"].attrs.get("target", 0.9),
                "probability": analysis["templates_needed"].attrs.get("probability", 0.95),
            },
        )
        out["templates_needed"] = _png(plot_k_needed(needed))
    if "variance_share" in analysis:
        from .variance import plot_variance_components

        out["variance"] = _png(plot_variance_components(analysis))
    if "group_accuracy" in analysis:
        from .verbalizer import figures as verbalizer_figures

        out.update(verbalizer_figures(analysis))
    return out
