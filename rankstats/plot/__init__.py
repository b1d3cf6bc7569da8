"""Figures (the ``plot`` extra: matplotlib, imported on first use, never pyplot).

Every plotting function draws on a :class:`matplotlib.axes.Axes` (a new
figure when none is given) and returns the axes; :func:`to_png` renders one to
PNG bytes.
"""

from ._figure import to_png
from .edits import plot_edit_rules
from .estimators import plot_estimator_errors
from .frontier import plot_cost_frontier
from .posthoc import plot_critical_difference
from .report import figures, plot_divergence, plot_metrics, plot_pair, plot_rank_agreement
from .stability import plot_k_needed, plot_needed, plot_rank_intervals
from .variance import plot_variance_components
from .verbalizer import plot_cot, plot_groups, plot_tasks, plot_verbalizers

__all__ = [
    "figures",
    "plot_cost_frontier",
    "plot_cot",
    "plot_critical_difference",
    "plot_divergence",
    "plot_edit_rules",
    "plot_estimator_errors",
    "plot_groups",
    "plot_k_needed",
    "plot_metrics",
    "plot_needed",
    "plot_pair",
    "plot_rank_agreement",
    "plot_rank_intervals",
    "plot_tasks",
    "plot_variance_components",
    "plot_verbalizers",
    "to_png",
]
