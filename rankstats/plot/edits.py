"""Heat map of minimal template edits: edit × model mean differences (extra ``plot``).

matplotlib is imported on first use, inside the functions.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["plot_edit_rules"]


def plot_edit_rules(rules: xr.Dataset, *, top: int | None = 20, min_tasks: int = 1, ax=None):
    """Each edit's mean score difference per model, as in figure 7 of Mizrahi et al. (2024).

    Parameters
    ----------
    rules : xarray.Dataset
        The result of :func:`rankstats.edit_rules`.
    top : int or None, default 20
        How many edits to draw, in the order of ``rules`` (most tasks first).
    min_tasks : int, default 1
        Leave out edits seen in fewer tasks.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        Rows are edits (labelled with their number of tasks and pairs),
        columns models; the colour is the mean of ``score_b - score`` over
        the edit's pairs, diverging around 0.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.edits import edit_rules, minimal_edits
    >>> from rankstats.plot.edits import plot_edit_rules
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": p, "template_text": text, "score": s}
    ...      for m, row in {"m1": [0.54, 0.12], "m2": [0.19, 0.81]}.items()
    ...      for p, text, s in zip(["a", "b"], ["Use {x}.", "Use {x}:"], row)])
    >>> ax = plot_edit_rules(edit_rules(minimal_edits(cube)))
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ["'.' → ':'  (1 task, 1 pair)"]
    """
    from ._figure import new_axes as _axes

    keep = np.asarray(rules["n_tasks"].values >= min_tasks, dtype=bool)
    shown = rules.isel(rule=keep)
    if top is not None:
        shown = shown.isel(rule=slice(0, int(top)))
    values = shown["mean_difference"].transpose("rule", "model").values
    n_rules, n_models = values.shape
    ax = _axes(ax, (0.55 * n_models + 4.5, 0.3 * n_rules + 1.8))
    finite = values[np.isfinite(values)]
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    limit = limit if limit > 0 else 1.0
    image = ax.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    labels = [
        f"{rule}  ({tasks} task{'' if tasks == 1 else 's'}, "
        f"{pairs} pair{'' if pairs == 1 else 's'})"
        for rule, tasks, pairs in zip(
            shown["rule"].values, shown["n_tasks"].values, shown["n_pairs"].values, strict=True
        )
    ]
    ax.set_yticks(range(n_rules), labels, fontsize=7)
    ax.set_xticks(range(n_models), shown["model"].values, rotation=60, ha="right", fontsize=7)
    for i, j in zip(*np.nonzero(np.isfinite(values)), strict=True):
        dark = abs(values[i, j]) > 0.6 * limit  # light text on the deepest colours
        ax.text(
            j,
            i,
            f"{values[i, j]:+.2f}",
            ha="center",
            va="center",
            fontsize=5.5,
            color="white" if dark else "black",
        )
    metric = rules.attrs.get("metric", "score")
    ax.figure.colorbar(image, ax=ax, label=f"mean {metric} difference (after − before)")
    ax.set_title("Minimal template edits: mean effect per model")
    return ax
