"""How sure a leaderboard is: resampling, intervals, rank intervals, how many templates suffice.

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

__all__ = [
    "bootstrap",
    "bootstrap_weights",
    "confidence_interval",
    "drawn_templates",
    "intervals",
    "leaderboard",
    "replicates",
    "samples_needed",
    "smallest_k",
    "templates_needed",
    "win_probability",
]
