"""Demšar's critical-difference diagram (the ``plot`` extra: matplotlib, imported on first use)."""

from __future__ import annotations

import numpy as np

from .._kernels.posthoc import clique_runs
from ..errors import MissingValueError, OptionError
from ..statistics.posthoc import _one_slice
from ._figure import new_axes

__all__ = ["plot_critical_difference"]


def plot_critical_difference(result, *, names=None, alpha=None, best="right", ax=None, title=None):
    """Draw Demšar's critical-difference diagram of one :func:`~rankstats.nemenyi` slice.

    The top line is an axis of average ranks with a bar as long as the
    critical difference; each model hangs from its average rank with its
    name; thick bars join the groups of models that do not differ
    significantly.

    Parameters
    ----------
    result : xarray.Dataset or NemenyiResult
        One slice of :func:`rankstats.nemenyi` (select the other
        dims first, e.g. ``result.sel(template=0)``).
    names : sequence, optional
        Model names for a NumPy result (default: the result's labels, or
        positions).
    alpha : float, optional
        Join models whose pairwise ``pvalue`` is at least ``alpha``. Default:
        models whose average ranks differ by at most the critical difference
        (the same decision at the result's own level).
    best : {"right", "left"}
        The side of rank 1. Demšar's figures put the best models on the
        right.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure, without pyplot).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    The groups are the maximal runs of models consecutive in average rank in
    which no pair differs significantly (as Demšar 2006 and Orange draw them;
    see :func:`rankstats.nonsignificant_groups`). For Nemenyi's test
    these are exactly the maximal cliques of the graph of non-significant
    pairs, since a pair differs when its ranks are further apart than the
    critical difference. Models without an average rank are left out.

    References
    ----------
    .. [1] Demšar, J. (2006). Statistical comparisons of classifiers over
       multiple data sets. JMLR, 7, 1-30 (figure 1).

    See Also
    --------
    scikit_posthocs.critical_difference_diagram

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats.statistics.posthoc import nemenyi
    >>> from rankstats.plot.posthoc import plot_critical_difference
    >>> scores = np.array([[0.9, 0.6, 0.3], [0.8, 0.7, 0.2], [0.7, 0.5, 0.6],
    ...                    [0.9, 0.4, 0.1], [0.6, 0.8, 0.2]])
    >>> ax = plot_critical_difference(nemenyi(scores), names=["a", "b", "c"])
    >>> sorted(t.get_text() for t in ax.texts)
    ['1', '2', '3', 'CD', 'a (1.20)', 'b (2.00)', 'c (2.80)']
    """
    if best not in ("right", "left"):
        raise OptionError(f"best={best!r} is not one of 'right', 'left'")
    mean, significant, labels = _one_slice(result, alpha, names)
    cd = (
        float(result["critical_difference"])
        if hasattr(result, "data_vars")
        else float(result.critical_difference)
    )
    runs = clique_runs(mean, significant)
    order = [int(i) for i in runs["order"] if not np.isnan(mean[i])]
    k = len(order)
    if k == 0:
        raise MissingValueError("no model has an average rank in this slice")
    low, high = 1.0, float(max(k, np.ceil(np.nanmax(mean))))

    def x_of(rank):
        return rank if best == "left" else low + high - rank

    groups = [
        (float(mean[runs["order"][i]]), float(mean[runs["order"][runs["stop"][i]]]))
        for i in np.flatnonzero(runs["maximal"])
    ]
    ax = ax if ax is not None else new_axes(None, (7.0, 1.6 + 0.3 * (k + len(groups))))
    line = {"color": "black", "linewidth": 1.0}
    # the axis of average ranks, ticks every half rank, labels every rank
    ax.plot([low, high], [0, 0], **line)
    for tick in np.arange(low, high + 0.25, 0.5):
        size = 0.1 if tick == int(tick) else 0.05
        ax.plot([x_of(tick)] * 2, [0, size], **line)
        if tick == int(tick):
            ax.annotate(
                f"{tick:g}", (x_of(tick), 0.2), ha="center", va="bottom", annotation_clip=False
            )
    # the critical difference, above the axis at the worst end
    if np.isfinite(cd):
        start = x_of(high) if best == "right" else x_of(high) - cd
        ax.plot([start, start + cd], [0.7, 0.7], **line)
        for end in (start, start + cd):
            ax.plot([end, end], [0.6, 0.8], **line)
        ax.text(start + cd / 2, 0.85, "CD", ha="center", va="bottom")
    # the groups, stacked just below the axis
    for level, (first, last) in enumerate(groups):
        y = -0.25 - 0.2 * level
        left, right = sorted((x_of(first), x_of(last)))
        pad = 0.03 * (high - low)
        ax.plot(
            [left - pad, right + pad], [y, y], color="black", linewidth=3.0, solid_capstyle="butt"
        )
    # the models: the better half toward the best side, the rest toward the other
    top = -0.45 - 0.2 * len(groups)
    better = (k + 1) // 2
    for position, j in enumerate(order):
        rank = float(mean[j])
        on_best_side = position < better
        row = position if on_best_side else k - 1 - position
        y = top - 0.35 * row
        toward_right = on_best_side == (best == "right")
        edge = high + 0.25 if toward_right else low - 0.25
        ax.plot([x_of(rank), x_of(rank), edge], [0, y, y], **line)
        ax.text(
            edge + (0.05 if toward_right else -0.05),
            y,
            f"{labels[j]} ({rank:.2f})",
            ha="left" if toward_right else "right",
            va="center",
        )
    ax.set_xlim(low - 0.3 * (high - low) - 0.5, high + 0.3 * (high - low) + 0.5)
    ax.set_ylim(top - 0.35 * better - 0.2, 1.3)
    ax.set_axis_off()
    if title is not None:
        ax.set_title(title)
    return ax
