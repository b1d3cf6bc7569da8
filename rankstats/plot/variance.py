"""Figures of the variance components (the ``plot`` extra: matplotlib, imported on first use)."""

from __future__ import annotations

import numpy as np

from ..errors import InputTypeError
from ._figure import new_axes as _axes

__all__ = ["plot_variance_components"]


def plot_variance_components(summary, ax=None):
    """Each task's variance split into its components, as stacked horizontal bars.

    Parameters
    ----------
    summary : xarray.Dataset
        From :func:`rankstats.stability.variance_summary` (its
        ``variance_share`` over ``component`` and ``task``; a report's
        Dataset merged with it will do), or from
        :func:`rankstats.variance_components` (shares are then computed
        from ``estimate``, negative estimates as 0).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One bar per task, one colour per component, summing to 1; the
        model's share (what a leaderboard ranks) first.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.stability import variance_summary
    >>> from rankstats.plot.variance import plot_variance_components
    >>> cube = rankstats.datasets.load("mizrahi2024").isel(task=slice(0, 3))
    >>> ax = plot_variance_components(variance_summary(cube, n_resamples=20, seed=0))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['all_words_from_category', 'any_words_from_category', 'ends_with_word']
    """
    if "variance_share" in summary:
        share = summary["variance_share"]
    elif "estimate" in summary:
        positive = summary["estimate"].clip(min=0)
        share = positive / positive.sum("component")
    else:
        raise InputTypeError(
            "plot_variance_components: give the Dataset variance_summary or "
            "variance_components returns (it has 'variance_share' or 'estimate')"
        )
    share = share.transpose("task", "component")
    tasks = [str(t) for t in share["task"].values]
    ax = _axes(ax, (7.0, 0.8 + 0.28 * len(tasks)))
    left = np.zeros(len(tasks))
    rows = np.arange(len(tasks))
    for j, name in enumerate(share["component"].values):
        values = np.nan_to_num(share.isel(component=j).values)
        ax.barh(rows, values, left=left, label=str(name), color=f"C{j}")
        left += values
    ax.set_yticks(rows, tasks)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the task's score variance")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12 - 0.6 / max(len(tasks), 1)),
        ncol=4,
        fontsize="small",
        frameon=False,
    )
    return ax
