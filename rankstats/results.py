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
    "AvgPEstimate",
    "BinomialTestResult",
    "BonferroniDunnResult",
    "BootstrapResult",
    "BootstrapWeightsResult",
    "ClusteredDifferenceResult",
    "ClusteredSEResult",
    "CochranQResult",
    "ConfidenceIntervalResult",
    "DivergenceResult",
    "DurbinResult",
    "FriedmanResult",
    "IntervalsResult",
    "KendallTauResult",
    "KendallWResult",
    "LeaderboardResult",
    "MaxPEstimate",
    "McNemarResult",
    "NeededResult",
    "NemenyiResult",
    "PairwiseMcNemarResult",
    "PromptMetricsResult",
    "ReplicatesResult",
    "SkillingsMackResult",
    "SubsampleResult",
    "WinProbabilityResult",
]


def _make_result(result_type: type, values: dict):
    """``result_type(**values)`` for a frozen result class, without its per-field setattr.

    A frozen dataclass sets each field through :func:`object.__setattr__`,
    which costs a microsecond or two on every small call; filling the instance
    dict directly gives the same object. Classes with a ``__post_init__`` and
    calls missing or adding fields take the ordinary constructor (and its
    checks and errors).
    """
    names = _FIELDS.get(result_type)
    if names is None:
        names = _FIELDS[result_type] = (
            None
            if hasattr(result_type, "__post_init__")
            else frozenset(f.name for f in fields(result_type))
        )
    if names is None or len(values) != len(names) or not names.issuperset(values):
        return result_type(**values)
    made = object.__new__(result_type)
    made.__dict__.update(values)
    return made


_FIELDS: dict = {}


class _Result:
    """Shared behaviour: field access by name, a dict view, a compact repr."""

    def to_dict(self) -> dict[str, np.ndarray]:
        """Return the fields as a ``{name: value}`` dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={_short(value)}" for name, value in self.to_dict().items())
        return f"{type(self).__name__}({shown})"


def _short(value) -> str:
    if value is None:
        return "None"
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
    n_dropped: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class CochranQResult(_Result):
    """Cochran's Q test (see :func:`rankstats.cochran_q`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PromptMetricsResult(_Result):
    """MaxP, AvgP, saturation and CPS of every model (see :func:`rankstats.prompt_metrics`)."""

    maxp: np.ndarray
    avgp: np.ndarray
    saturation: np.ndarray
    cps: np.ndarray
    n_templates: np.ndarray


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
    in_top_k: np.ndarray | None = None


class _Partial(_Result):
    """A result some of whose fields a call may leave out (None); the repr skips them."""

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={_short(value)}" for name, value in self.to_dict().items() if value is not None
        )
        return f"{type(self).__name__}({shown})"


@dataclass(frozen=True, eq=False, repr=False)
class BootstrapWeightsResult(_Partial):
    """Bootstrap counts (see ``rankstats.stability.bootstrap_weights``).

    Each field is ``(..., n_resamples, unit)``; None when that unit is not
    resampled.
    """

    sample_weight: np.ndarray | None = None
    template_weight: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ReplicatesResult(_Partial):
    """Every statistic of every replicate (see ``rankstats.stability.replicates``).

    For each statistic ``s``: ``s`` (``(..., replicate)`` last), ``s_estimate``
    and, with the jackknife, ``s_acceleration``; None for the statistics not
    asked for. ``template_weight`` and ``sample_weight`` are the draws.
    """

    score: np.ndarray | None = None
    score_estimate: np.ndarray | None = None
    score_acceleration: np.ndarray | None = None
    avgp: np.ndarray | None = None
    avgp_estimate: np.ndarray | None = None
    avgp_acceleration: np.ndarray | None = None
    maxp: np.ndarray | None = None
    maxp_estimate: np.ndarray | None = None
    maxp_acceleration: np.ndarray | None = None
    saturation: np.ndarray | None = None
    saturation_estimate: np.ndarray | None = None
    saturation_acceleration: np.ndarray | None = None
    cps: np.ndarray | None = None
    cps_estimate: np.ndarray | None = None
    cps_acceleration: np.ndarray | None = None
    kendall_w: np.ndarray | None = None
    kendall_w_estimate: np.ndarray | None = None
    kendall_w_acceleration: np.ndarray | None = None
    rank: np.ndarray | None = None
    rank_estimate: np.ndarray | None = None
    rank_acceleration: np.ndarray | None = None
    template_weight: np.ndarray | None = None
    sample_weight: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class IntervalsResult(_Partial):
    """Bootstrap intervals of every statistic (see ``rankstats.stability.intervals``).

    For each statistic ``s``: the estimate ``s``, ``s_low``, ``s_high`` and
    the bootstrap standard error ``s_se``; None for the statistics not asked
    for.
    """

    score: np.ndarray | None = None
    score_low: np.ndarray | None = None
    score_high: np.ndarray | None = None
    score_se: np.ndarray | None = None
    avgp: np.ndarray | None = None
    avgp_low: np.ndarray | None = None
    avgp_high: np.ndarray | None = None
    avgp_se: np.ndarray | None = None
    maxp: np.ndarray | None = None
    maxp_low: np.ndarray | None = None
    maxp_high: np.ndarray | None = None
    maxp_se: np.ndarray | None = None
    saturation: np.ndarray | None = None
    saturation_low: np.ndarray | None = None
    saturation_high: np.ndarray | None = None
    saturation_se: np.ndarray | None = None
    cps: np.ndarray | None = None
    cps_low: np.ndarray | None = None
    cps_high: np.ndarray | None = None
    cps_se: np.ndarray | None = None
    kendall_w: np.ndarray | None = None
    kendall_w_low: np.ndarray | None = None
    kendall_w_high: np.ndarray | None = None
    kendall_w_se: np.ndarray | None = None
    rank: np.ndarray | None = None
    rank_low: np.ndarray | None = None
    rank_high: np.ndarray | None = None
    rank_se: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class SubsampleResult(_Partial):
    """Agreement curves of random subsets (see :func:`rankstats.templates_needed`).

    Arrays are over the input's leading axes, then the subset size ``k``,
    then the draws, quantiles or models; ``w`` and ``w_quantile`` are None
    for :func:`rankstats.samples_needed`, where ``k`` holds the sample counts.
    """

    k: np.ndarray
    tau: np.ndarray
    w: np.ndarray | None
    tau_quantile: np.ndarray
    w_quantile: np.ndarray | None
    p_tau: np.ndarray
    tau_undefined: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    rank_width: np.ndarray
    rank_width_mean: np.ndarray
    needed: np.ndarray
    n_units: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class NeededResult(_Partial):
    """How many fresh templates or items reproduce a ranking.

    See :func:`rankstats.templates_needed` and :func:`rankstats.samples_needed`.

    Arrays are over the input's leading axes, then the subset size ``k``
    for the curves (``p_tau``, ``p_tau_low``, ``p_tau_high``, ``tau_mean``).
    """

    k: np.ndarray
    p_tau: np.ndarray
    p_tau_low: np.ndarray
    p_tau_high: np.ndarray
    tau_mean: np.ndarray
    needed: np.ndarray
    needed_low: np.ndarray
    needed_high: np.ndarray
    censored: np.ndarray
    planned: np.ndarray
    recommended: np.ndarray
    max: np.ndarray
    units: np.ndarray
    n_resamples: np.ndarray


@dataclass(frozen=True, eq=False)
class AvgPEstimate(_Result):
    """The random-assignment estimate of AvgP (see :func:`rankstats.estimate_avgp`).

    ``rounds`` holds each round's estimate (a round scores every sample
    under one random template), ``running`` the estimate after k rounds and
    ``spread`` the standard deviation of the first k rounds' estimates.
    """

    estimate: float
    rounds: np.ndarray
    running: np.ndarray
    spread: np.ndarray
    calls: int


@dataclass(frozen=True, eq=False)
class MaxPEstimate(_Result):
    """The successive-halving search for the best template (see :func:`rankstats.estimate_maxp`)."""

    template: str
    estimate: float
    stages: tuple[dict, ...]
    calls: int


@dataclass(frozen=True, eq=False, repr=False)
class NemenyiResult(_Result):
    """Friedman's test and Nemenyi's all-pairs test (see :func:`rankstats.nemenyi`)."""

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
    """Comparisons with a control (see :func:`rankstats.bonferroni_dunn`)."""

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
    """Durbin's test and Conover's pairwise tests (see :func:`rankstats.durbin`)."""

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
    """Skillings and Mack's test (see :func:`rankstats.skillings_mack`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    dof: np.ndarray
    adjusted_rank_sum: np.ndarray
    n_blocks: np.ndarray
    n_treatments: np.ndarray
    n_observations: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PairwiseMcNemarResult(_Result):
    """McNemar's test on all pairs, corrected (see :func:`rankstats.pairwise_mcnemar`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n_samples: np.ndarray
    n_dropped: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class ClusteredSEResult(_Result):
    """A mean score with naive and clustered errors (see :func:`rankstats.clustered_se`)."""

    mean_score: np.ndarray
    se_naive: np.ndarray
    se_cluster: np.ndarray
    design_effect: np.ndarray
    n_cells: np.ndarray
    n_clusters: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class ClusteredDifferenceResult(_Result):
    """Paired differences with clustered errors (see :func:`rankstats.clustered_difference`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    difference: np.ndarray
    se_naive: np.ndarray
    se_cluster: np.ndarray
    design_effect: np.ndarray
    dof: np.ndarray
    n_cells: np.ndarray
    n_clusters: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class BinomialTestResult(_Result):
    """The exact binomial test of k in n (see :func:`rankstats.binomial_test`)."""

    statistic: np.ndarray
    pvalue: np.ndarray
    k: np.ndarray
    n: np.ndarray
