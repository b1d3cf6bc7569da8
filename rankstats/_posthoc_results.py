"""Frozen result objects of the post-hoc and incomplete-design tests (NumPy inputs)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._results import _Result

__all__ = [
    "BonferroniDunnResult",
    "DurbinResult",
    "NemenyiResult",
    "PairwiseMcNemarResult",
    "SkillingsMackResult",
]


@dataclass(frozen=True, eq=False, repr=False)
class NemenyiResult(_Result):
    """Friedman's test and Nemenyi's all-pairs test (see :func:`rankstats.posthoc.nemenyi`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    average_rank: np.ndarray
    critical_difference: np.ndarray
    q_alpha: np.ndarray
    friedman_statistic: np.ndarray
    friedman_pvalue: np.ndarray
    dof: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class BonferroniDunnResult(_Result):
    """Comparisons with a control (see :func:`rankstats.posthoc.bonferroni_dunn`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    average_rank: np.ndarray
    critical_difference: np.ndarray
    q_alpha: np.ndarray
    friedman_statistic: np.ndarray
    friedman_pvalue: np.ndarray
    dof: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DurbinResult(_Result):
    """Durbin's test and Conover's pairwise tests (see :func:`rankstats.incomplete.durbin`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    f: np.ndarray
    f_dof1: np.ndarray
    f_dof2: np.ndarray
    f_pvalue: np.ndarray
    rank_sum: np.ndarray
    pairwise_statistic: np.ndarray
    pairwise_pvalue: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray
    n_observations: np.ndarray
    balanced: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class SkillingsMackResult(_Result):
    """Skillings and Mack's test (see :func:`rankstats.incomplete.skillings_mack`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    adjusted_rank_sum: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray
    n_observations: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PairwiseMcNemarResult(_Result):
    """McNemar's test on all pairs, corrected (see :func:`rankstats.multitest.pairwise_mcnemar`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n_samples: np.ndarray
