"""The figure of a cost-accuracy frontier (the ``plot`` extra: matplotlib, on first use)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..errors import InputTypeError
from ._figure import new_axes as _axes

__all__ = ["plot_cost_frontier"]

_NEEDED = ("accuracy", "accuracy_low", "accuracy_high", "cost", "on_frontier", "frontier_set")


def _front_steps(cost, accuracy, higher):
    """The staircase of the point-estimate frontier: best accuracy so far, by cost."""
    order = np.argsort(cost, kind="stable")
    best = (np.maximum if higher else np.minimum).accumulate(accuracy[order])
    return cost[order], best


def plot_cost_frontier(result: xr.Dataset, ax=None, *, annotate=True):
    """Accuracy against cost (log scale): intervals, the frontier's steps, the set that remains.

    Parameters
    ----------
    result : xarray.Dataset
        From :func:`rankstats.stability.cost_frontier`.
    ax : matplotlib.axes.Axes, optional
    annotate : bool, default True
        Write each model's name beside its point.

    Returns
    -------
    matplotlib.axes.Axes
        Each model's accuracy with its interval at cost on a log axis
        (symmetric-log when some cost is 0); the step line of the
        point-estimate frontier; the models that cannot be excluded from
        the frontier filled, those excluded hollow and grey.

    Examples
    --------
    >>> import pandas as pd
    >>> from rankstats import stability
    >>> from rankstats.plot.frontier import plot_cost_frontier
    >>> accuracy = pd.Series({"a": 0.6, "b": 0.7, "c": 0.65})
    >>> price = pd.Series({"a": 1.0, "b": 4.0, "c": 8.0})
    >>> result = stability.cost_frontier(accuracy, price, standard_errors=0.01, seed=0)
    >>> ax = plot_cost_frontier(result)
    >>> ax.get_xscale(), ax.get_title()
    ('log', 'Cost-accuracy frontier: 2 of 3 models cannot be excluded (95%)')
    """
    missing = [name for name in _NEEDED if name not in result]
    if missing:
        raise InputTypeError(
            "plot_cost_frontier: the result lacks "
            f"{', '.join(missing)}; give the Dataset of cost_frontier"
        )
    dim = result["accuracy"].dims[0]
    shown = result.where(result["accuracy"].notnull(), drop=True)
    names = [str(m) for m in shown[dim].values]
    cost = shown["cost"].values.astype(float)
    accuracy = shown["accuracy"].values.astype(float)
    low, high = shown["accuracy_low"].values, shown["accuracy_high"].values
    kept = shown["frontier_set"].values.astype(bool)
    ax = _axes(ax, (6.5, 4.5))
    higher = bool(int(result.attrs.get("higher_is_better", 1)))
    steps_x, steps_y = _front_steps(cost, accuracy, higher)
    ax.step(steps_x, steps_y, where="post", color="C0", linewidth=1, label="frontier (estimates)")
    for mask, style in (
        (kept, {"color": "C0", "label": "cannot be excluded"}),
        (~kept, {"color": "0.6", "label": "excluded", "markerfacecolor": "white"}),
    ):
        if mask.any():
            ax.errorbar(
                cost[mask],
                accuracy[mask],
                yerr=[accuracy[mask] - low[mask], high[mask] - accuracy[mask]],
                fmt="o",
                markersize=5,
                capsize=2,
                linewidth=1,
                **style,
            )
    if annotate:
        for x, y, name, inside in zip(cost, accuracy, names, kept, strict=True):
            ax.annotate(
                name,
                (x, y),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=7,
                color="black" if inside else "0.5",
            )
    if (cost > 0).all():
        ax.set_xscale("log")
    else:
        positive = cost[cost > 0]
        ax.set_xscale("symlog", linthresh=positive.min() if positive.size else 1.0)
    per_evaluation = str(result.attrs.get("cost", "")).startswith("mean cost per evaluation")
    ax.set_xlabel("mean cost per evaluation" if per_evaluation else "cost")
    ax.set_ylabel("accuracy" if higher else "score (lower is better)")
    level = float(result.attrs.get("confidence_level", 0.95))
    ax.set_title(
        f"Cost-accuracy frontier: {int(kept.sum())} of {len(kept)} models cannot be "
        f"excluded ({level:.0%})"
    )
    ax.legend(fontsize=7, loc="best")
    return ax
