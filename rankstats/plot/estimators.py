"""The budgeted estimators' errors across budgets (the ``plot`` extra: matplotlib)."""

from __future__ import annotations

import numpy as np

from ..errors import InputTypeError
from ._figure import new_axes as _axes

__all__ = ["plot_estimator_errors"]

_STYLES = {
    "random-avgp": ("tab:blue", "o"),
    "halving-maxp": ("tab:orange", "s"),
    "irt": ("tab:green", "^"),
}


def plot_estimator_errors(result, targets=("5%", "50%", "95%", "maxp"), ax=None):
    """Mean absolute error against the budget, one line per estimator and target.

    Parameters
    ----------
    result : xarray.Dataset
        From :func:`rankstats.simulate_estimators`.
    targets : sequence of str
        The targets drawn (among ``result.target``), one line style each.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        Budget (cells per model and task) on a log axis, error on the other;
        a colour per estimator, a line style per target, the standard
        errors as bars.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.plot.estimators import plot_estimator_errors
    >>> cube = rankstats.planted_cube(models=3, templates=12, samples=12, seed=0)
    >>> out = rankstats.simulate_estimators(cube, budgets=[12, 24], n_resamples=2, seed=0)
    >>> ax = plot_estimator_errors(out)
    >>> ax.get_xlabel()
    'evaluations per model and task (budget)'
    """
    if not {"error", "estimator", "budget", "target"} <= set(result.variables):
        raise InputTypeError(
            "plot_estimator_errors: give the Dataset simulate_estimators "
            "returns (error over estimator, budget and target)"
        )
    ax = _axes(ax, (6.5, 4.0))
    known = [str(t) for t in result["target"].values]
    chosen = [t for t in targets if t in known] or known
    dashes = ["-", "--", ":", "-."]
    budgets = np.asarray(result["budget"].values, dtype=float)
    for method in result["estimator"].values:
        colour, marker = _STYLES.get(str(method), ("tab:gray", "x"))
        for i, target in enumerate(chosen):
            error = result["error"].sel(estimator=method, target=target).values
            if np.isnan(error).all():
                continue
            se = result["error_se"].sel(estimator=method, target=target).values
            ax.errorbar(
                budgets,
                error,
                yerr=np.nan_to_num(se),
                color=colour,
                marker=marker,
                linestyle=dashes[i % len(dashes)],
                capsize=2,
                label=f"{method}: {target}",
            )
    ax.set_xscale("log")
    ax.set_xticks(budgets)
    ax.set_xticklabels([f"{b:g}" for b in budgets])
    ax.set_xlabel("evaluations per model and task (budget)")
    ax.set_ylabel("mean |estimate - full-data value|")
    ax.legend(fontsize="small", ncol=2)
    return ax
