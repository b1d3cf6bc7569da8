"""Frozen result objects of the resampling functions for NumPy inputs (see rankstats.stability)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._results import _Result

__all__ = [
    "BootstrapResult",
    "ConfidenceIntervalResult",
    "LeaderboardResult",
    "WinProbabilityResult",
]


@dataclass(frozen=True, eq=False, repr=False)
class BootstrapResult(_Result):
    """Per-replicate per-template scores and the draws (see ``rankstats.stability.bootstrap``)."""

    score: np.ndarray
    template_weight: np.ndarray
    sample_weight: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class ConfidenceIntervalResult(_Result):
    """A bootstrap interval (see :func:`rankstats.stability.confidence_interval`)."""

    low: np.ndarray
    high: np.ndarray
    bias_correction: np.ndarray
    acceleration: np.ndarray
    standard_error: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class WinProbabilityResult(_Result):
    """Pairwise win and tie shares (see :func:`rankstats.stability.win_probability`)."""

    win: np.ndarray
    tie: np.ndarray
    n_replicates: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class LeaderboardResult(_Result):
    """Scores, ranks, their intervals and tie groups (see ``rankstats.stability.leaderboard``)."""

    score: np.ndarray
    score_low: np.ndarray
    score_high: np.ndarray
    rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    tie_group: np.ndarray
    arena_rank: np.ndarray
