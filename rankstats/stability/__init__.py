"""How sure a leaderboard is: resampling, intervals, rank intervals, variance components, plans.

Built on :mod:`rankstats.statistics`; never the reverse.
"""

from .bootstrap import (
    bootstrap,
    bootstrap_weights,
    confidence_interval,
    drawn_templates,
    intervals,
    leaderboard,
    replicates,
    win_probability,
)
from .needed import samples_needed, smallest_k, templates_needed
from .planning import plan
from .variance import score_intervals, variance_components, variance_summary

__all__ = [
    "bootstrap",
    "bootstrap_weights",
    "confidence_interval",
    "drawn_templates",
    "intervals",
    "leaderboard",
    "plan",
    "replicates",
    "samples_needed",
    "score_intervals",
    "smallest_k",
    "templates_needed",
    "variance_components",
    "variance_summary",
    "win_probability",
]
