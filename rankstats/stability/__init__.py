"""How sure a leaderboard is: resampling, intervals, rank intervals, variance components, plans.

Built on :mod:`rankstats.statistics`; never the reverse.
"""

from .claims import Claim, check_claims, read_claims
from .frontier import cost_frontier
from .needed import (
    sample_subset_agreement,
    samples_needed,
    smallest_k,
    subset_agreement,
    templates_needed,
)
from .planning import plan
from .published import rank_sets, standard_error_leaderboard
from .records import record_history
from .resampling import (
    bootstrap,
    bootstrap_weights,
    confidence_interval,
    drawn_templates,
    intervals,
    leaderboard,
    replicates,
    win_probability,
)
from .variance import score_intervals, variance_components, variance_summary
from .winners import winner_interval

__all__ = [
    "Claim",
    "bootstrap",
    "bootstrap_weights",
    "check_claims",
    "confidence_interval",
    "cost_frontier",
    "drawn_templates",
    "intervals",
    "leaderboard",
    "plan",
    "rank_sets",
    "read_claims",
    "record_history",
    "replicates",
    "sample_subset_agreement",
    "samples_needed",
    "score_intervals",
    "smallest_k",
    "standard_error_leaderboard",
    "subset_agreement",
    "templates_needed",
    "variance_components",
    "variance_summary",
    "win_probability",
    "winner_interval",
]
