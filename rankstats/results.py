"""Every result object rankstats returns for NumPy input.

Labelled (xarray) input gives an :class:`xarray.Dataset` with the same
variables; NumPy input gives one of these frozen dataclasses, never a dict or a
tuple. Each field is a NumPy array (0-d for a single slice); a test's
statistic is always in ``statistic``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = [
    "BonferroniDunnResult",
    "BootstrapResult",
    "CochranQResult",
    "ConfidenceIntervalResult",
    "DivergenceResult",
    "DurbinResult",
    "FriedmanResult",
    "KendallTauResult",
    "KendallWResult",
    "LeaderboardResult",
    "McNemarResult",
    "NemenyiResult",
    "PairwiseMcNemarResult",
    "SkillingsMackResult",
    "WinProbabilityResult",
]


class _Result:
    """Shared behaviour: field access by name, a dict view, a compact repr."""

    def to_dict(self) -> dict[str, np.ndarray]:
        """Return the fields as a ``{name: value}`` dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={_short(value)}" for name, value in self.to_dict().items())
        return f"{type(self).__name__}({shown})"


def _short(value) -> str:
    array = np.asarray(value)
    if array.ndim == 0:
        return f"{float(array):.6g}"
    return f"<array shape={array.shape}>"


@dataclass(frozen=True, eq=False, repr=False)
class KendallWResult(_Result):
    """Kendall's W with its chi-square and F tests (see :func:`rankstats.kendall_w`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    chi2: np.ndarray
    dof: np.ndarray
    f: np.ndarray
    f_dof1: np.ndarray
    f_dof2: np.ndarray
    f_pvalue: np.ndarray
    f_kbs_dof1: np.ndarray
    f_kbs_dof2: np.ndarray
    f_kbs_pvalue: np.ndarray
    n_judges: np.ndarray
    n_objects: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class FriedmanResult(_Result):
    """Friedman's test, Kendall's W and the Iman–Davenport F (see :func:`rankstats.friedman`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    kendall_w: np.ndarray
    f: np.ndarray
    f_dof1: np.ndarray
    f_dof2: np.ndarray
    f_pvalue: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class KendallTauResult(_Result):
    """Kendall's tau and its p-value (see :func:`rankstats.kendall_tau`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    n_objects: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class McNemarResult(_Result):
    """McNemar's test on paired binary outcomes (see :func:`rankstats.mcnemar`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n_samples: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class CochranQResult(_Result):
    """Cochran's Q test (see :func:`rankstats.cochran_q`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DivergenceResult(_Result):
    """Divergence of the original template's score (see :func:`rankstats.divergence`)."""

    statistic: np.ndarray
    original: np.ndarray
    paraphrase_mean: np.ndarray
    paraphrase_std: np.ndarray
    n_original: np.ndarray
    n_paraphrases: np.ndarray


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
