"""Figures of how many templates (or samples) are enough (the ``plot`` extra: matplotlib).

Each function draws on a :class:`matplotlib.axes.Axes` (a new figure when none
is given) and returns it; matplotlib is imported on first use.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..errors import DimensionError, OptionError, UnknownNameError
from ..render import task_leaderboard
from ._figure import new_axes as _axes

__all__ = ["plot_k_needed", "plot_needed", "plot_rank_intervals"]

_UNIT_WORDS = {"k": ("templates", "k"), "n": ("samples", "n")}


def _one_task(result: xr.Dataset, task):
    if task is None:
        if "task" in result.dims and result.sizes["task"] != 1:
            raise OptionError("plot_needed: the result has several tasks; pass task=")
        return result.squeeze("task") if "task" in result.dims else result
    if "task" not in result.dims:
        raise DimensionError("plot_needed: the result has no 'task' dimension to select from")
    if task not in result["task"].values:
        raise UnknownNameError(f"plot_needed: no task {task!r} in the result")
    return result.sel(task=task)


def _band(ax, sizes, summary: xr.DataArray, label: str, color: str):
    """The median (nearest quantile to 0.5) as a line, the outer quantiles as a band."""
    q = summary["quantile"].values
    middle = summary.isel(quantile=int(np.argmin(np.abs(q - 0.5)))).values
    ax.plot(sizes, middle, color=color, label=label)
    if q.size > 1:
        ax.fill_between(
            sizes,
            summary.isel(quantile=int(np.argmin(q))).values,
            summary.isel(quantile=int(np.argmax(q))).values,
            color=color,
            alpha=0.2,
            linewidth=0,
        )


def plot_needed(result: xr.Dataset, task=None, ax=None):
    """Tau, W and rank-interval width against the subset size, with the target marked.

    Parameters
    ----------
    result : xarray.Dataset
        From :func:`rankstats.templates_needed` or
        :func:`~rankstats.samples_needed` (the share of draws whose two
        subsets reach the target, against the size, with its
        Monte Carlo band), or from
        :func:`~rankstats.stability.subset_agreement` (tau-b and W of a
        subset against the full set, and the rank-interval width).
    task : str, optional
        The task to draw (required when the result has several).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Tau-b (and W, for templates): median over the draws with a band
        between the outermost reported quantiles; the target tau as a dashed
        line and the smallest size reaching it as a dotted one; the mean
        rank-interval width on a second y axis at the right.

    Examples
    --------
    >>> import rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed
    >>> from rankstats.plot.stability import plot_needed
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks"])
    >>> ax = plot_needed(templates_needed(cube, seed=0))
    >>> ax.get_title()
    'snarks: 162 templates; k needed > 150 (planner: 151)'
    """
    size = result.attrs.get("size_dim", "k")
    words, symbol = _UNIT_WORDS.get(size, ("units", size))
    one = _one_task(result, task)
    sizes = one[size].values
    ax = _axes(ax, (6.0, 3.6))
    if "p_tau_low" in one:
        return _fresh_curve(ax, one, result.attrs, size, words, symbol)
    _band(ax, sizes, one["tau_quantile"], "Kendall's τ-b with all", "C0")
    if "w_quantile" in one:
        _band(ax, sizes, one["w_quantile"], f"Kendall's W of the {symbol} {words}", "C1")
    target = float(result.attrs.get("target", np.nan))
    ax.axhline(target, color="black", linestyle="--", linewidth=0.8, label=f"target τ = {target}")
    needed = float(one[f"{size}_needed"])
    if np.isfinite(needed):
        ax.axvline(needed, color="black", linestyle=":", linewidth=0.8)
    ax.set_xlabel(f"{symbol}: {words} kept")
    ax.set_ylabel("agreement")
    low = one["tau_quantile"].values
    low = float(np.min(low, where=~np.isnan(low), initial=0.0))
    ax.set_ylim(min(0.0, low) - 0.02, 1.02)
    if sizes.max() / max(sizes.min(), 1) > 20:
        ax.set_xscale("log")
    width = ax.twinx()
    width.plot(
        sizes,
        one["rank_width_mean"].values,
        color="C2",
        linestyle="-.",
        label="mean rank-interval width",
    )
    width.set_ylabel("rank-interval width (ranks)", color="C2")
    lines = ax.get_legend_handles_labels()
    extra = width.get_legend_handles_labels()
    ax.legend(
        lines[0] + extra[0],
        lines[1] + extra[1],
        fontsize=7,
        ncols=2,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
    )
    name = f"{one['task'].item()}: " if "task" in one.coords else ""
    count = int(one[f"n_{words}"]) if f"n_{words}" in one else None
    reached = f"{symbol} = {needed:g}" if np.isfinite(needed) else "not reached"
    ax.set_title(
        f"{name}{count} {words}; τ ≥ {target:g} with probability "
        f"{result.attrs.get('probability', np.nan):g} at {reached}",
        fontsize=9,
    )
    return ax


def _fresh_curve(ax, one, attrs, size, words, symbol):
    """:func:`plot_needed` of :func:`rankstats.templates_needed`: P(tau ≥ target) against k."""
    sizes = one[size].values
    probability = float(attrs.get("probability", np.nan))
    target = float(attrs.get("target", np.nan))
    ax.plot(
        sizes,
        one["p_tau"].values,
        color="C0",
        label=f"P(τ-b ≥ {target:g}) between two random sets of {symbol} {words}",
    )
    ax.fill_between(
        sizes,
        one["p_tau_low"].values,
        one["p_tau_high"].values,
        color="C0",
        alpha=0.2,
        linewidth=0,
        label="Monte Carlo interval",
    )
    ax.axhline(
        probability,
        color="black",
        linestyle="--",
        linewidth=0.8,
        label=f"probability {probability:g}",
    )
    needed = float(one[f"{size}_needed"])
    censored = bool(one["censored"])
    planned = float(one[f"{size}_planned"])
    if np.isfinite(needed) and not censored:
        ax.axvline(needed, color="black", linestyle=":", linewidth=0.8)
    ax.set_xlabel(f"{symbol}: {words} in each rerun")
    ax.set_ylabel("share of draws")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    name = f"{one['task'].item()}: " if "task" in one.coords else ""
    count = int(one[f"n_{words}"]) if f"n_{words}" in one else None
    answer = (f"> {needed:g}" if censored else f"{needed:g}") if np.isfinite(needed) else "–"
    plan = f" (planner: {planned:g})" if np.isfinite(planned) else ""
    ax.set_title(f"{name}{count} {words}; {symbol} needed {answer}{plan}", fontsize=9)
    return ax


def plot_k_needed(result: xr.Dataset, ax=None):
    """The smallest subset size reaching the target, per task, beside each task's total.

    Parameters
    ----------
    result : xarray.Dataset
        From :func:`rankstats.templates_needed` or
        :func:`~rankstats.samples_needed`, with a ``task`` dim.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One bar per task, sorted: the size needed over the size available
        (hatched where censored: more than the bar), the planner's number as
        a tick; a cross marks tasks with no answer.

    Examples
    --------
    >>> import rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed
    >>> from rankstats.plot.stability import plot_k_needed
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> ax = plot_k_needed(templates_needed(cube, seed=0, max_resamples=200))
    >>> len(ax.get_yticklabels())
    25
    """
    size = result.attrs.get("size_dim", "k")
    words, symbol = _UNIT_WORDS.get(size, ("units", size))
    needed = result[f"{size}_needed"].to_series()
    total = result[f"n_{words}"].to_series().reindex(needed.index)
    order = needed.fillna(np.inf).sort_values(kind="stable").index
    ax = _axes(ax, (6.0, 0.25 * len(order) + 1.5))
    positions = np.arange(len(order))
    ax.barh(positions, total[order].values, color="lightgrey", label=f"{words} available")
    censored = (
        result["censored"].to_series().reindex(needed.index)[order].to_numpy()
        if "censored" in result
        else np.zeros(len(order), dtype=bool)
    )
    shown = needed[order].fillna(0).values
    ax.barh(
        positions[~censored],
        shown[~censored],
        color="C0",
        label=f"smallest {symbol} reaching the target",
    )
    if censored.any():
        ax.barh(
            positions[censored],
            shown[censored],
            color="white",
            edgecolor="C0",
            hatch="//",
            label="more than this (not reached by the subsets)",
        )
    if f"{size}_planned" in result:
        planned = result[f"{size}_planned"].to_series().reindex(needed.index)[order].values
        ax.scatter(
            planned,
            positions,
            marker="|",
            color="C1",
            s=60,
            label="planner (variance components)",
            zorder=3,
        )
    unreached = needed[order].isna().to_numpy()
    if unreached.any():
        ax.scatter(
            total[order].values[unreached],
            positions[unreached],
            marker="x",
            color="C3",
            label="not reached within the sizes tried",
            zorder=3,
        )
    ax.set_yticks(positions, [str(t) for t in order], fontsize=7)
    ax.set_xlabel(f"{words}")
    ax.set_title(
        f"{words.capitalize()} needed for τ ≥ {result.attrs.get('target', np.nan):g} "
        f"with probability {result.attrs.get('probability', np.nan):g}",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_rank_intervals(board: xr.Dataset, task, ax=None):
    """A task's leaderboard: each model's rank with its interval, tie groups shaded.

    Parameters
    ----------
    board : xarray.Dataset
        A :func:`rankstats.stability.leaderboard`.
    task : str
        The task to draw.

    Examples
    --------
    >>> import numpy as np
    >>> import rankstats
    >>> from rankstats import stability
    >>> from rankstats.plot.stability import plot_rank_intervals
    >>> rng = np.random.default_rng(1)
    >>> cube = rankstats.from_records([
    ...     {"model": m, "task": "t", "template": p, "sample": s,
    ...      "score": float(rng.random() < acc)}
    ...     for m, acc in {"a": 0.8, "b": 0.6, "c": 0.3}.items()
    ...     for p in range(4) for s in range(40)])
    >>> board = stability.leaderboard(cube, n_resamples=200, over="both", seed=0)
    >>> plot_rank_intervals(board, "t").get_title()
    't: ranks with 95% intervals'
    """
    one = task_leaderboard(board, task)
    ax = _axes(ax, (6.0, 0.3 * len(one) + 1.5))
    positions = np.arange(len(one))[::-1]
    groups = one["tie_group"].to_numpy()
    for group in np.unique(groups):
        rows = positions[groups == group]
        if group % 2 == 0:
            ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color="0.92", zorder=0)
    ax.hlines(positions, one["rank_low"], one["rank_high"], color="C0", linewidth=3)
    ax.plot(one["rank"], positions, "o", color="black", markersize=4)
    ax.set_yticks(positions, one.index, fontsize=8)
    ax.set_xlabel("rank (1 = best)")
    level = board.attrs.get("confidence_level", 0.95)
    ax.set_title(f"{task}: ranks with {level:.0%} intervals")
    return ax
