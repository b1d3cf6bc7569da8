"""Rank tests for incomplete block designs (Durbin; Skillings–Mack): kernels over the last axes.

Inputs are ``(..., *blocks, treatments)`` with NaN for the cells a block does
not observe. Ranks are taken within each block over its observed cells only.
A block observing fewer than two treatments carries no ranking and is left
out; a treatment observed in no remaining block is absent.
"""

from __future__ import annotations

import numpy as np

from .concordance import _scipy_stats, chi2_sf, f_sf
from .posthoc import join_blocks
from .ranking import rank_last, warn_nan


class _Design:
    """The observed cells of ``(..., b, t)`` scores and their within-block ranks."""

    def __init__(self, x, ties, higher_is_better):
        observed = ~np.isnan(x)
        self.size = observed.sum(axis=-1).astype(float)  # k_i, per block
        self.used = self.size >= 2
        self.cells = observed & self.used[..., None]
        self.present = self.cells.any(axis=-2)
        self.ranks, _ = rank_last(x, ties, higher_is_better, rows=self.used)
        self.ranks = np.where(self.cells, self.ranks, 0.0)
        self.middle = np.where(self.used, (self.size + 1.0) / 2.0, 0.0)  # (k_i + 1) / 2
        self.n_blocks = self.used.sum(axis=-1).astype(float)
        self.n_treatments = self.present.sum(axis=-1).astype(float)
        self.n_observations = self.cells.sum(axis=(-2, -1)).astype(float)
        cells = self.cells.astype(float)
        self.concurrence = np.swapaxes(cells, -1, -2) @ cells  # lambda_jl; r_j on the diagonal
        self.any_data = observed.any(axis=(-2, -1))


def _balanced(design: _Design):
    """Whether each slice is a balanced (possibly complete) block design."""
    big = np.inf
    size = design.size
    k_max = np.where(design.used, size, -big).max(axis=-1)
    k_min = np.where(design.used, size, big).min(axis=-1)
    t = design.present
    lam = design.concurrence
    diagonal = np.diagonal(lam, axis1=-2, axis2=-1)
    r_max = np.where(t, diagonal, -big).max(axis=-1)
    r_min = np.where(t, diagonal, big).min(axis=-1)
    pair = t[..., :, None] & t[..., None, :] & ~np.eye(t.shape[-1], dtype=bool)
    l_max = np.where(pair, lam, -big).max(axis=(-2, -1))
    l_min = np.where(pair, lam, big).min(axis=(-2, -1))
    return (k_max == k_min) & (r_max == r_min) & ((l_max == l_min) | ~pair.any(axis=(-2, -1)))


def durbin(x, *, ties="average", higher_is_better=True, block_axes=1):
    """Durbin's test and Conover's pairwise comparisons on ``(..., *blocks, t)``.

    T1 = (t - 1) sum_j (R_j - E_j)^2 / (A - C) with R_j the rank sum of
    treatment j, E_j = sum over its blocks of (k_i + 1) / 2, A the sum of
    squared ranks and C = sum_i k_i (k_i + 1)^2 / 4; for a balanced design
    E_j = r (k + 1) / 2 and C = b k (k + 1)^2 / 4 (Conover 1999).
    """
    x = join_blocks(x, block_axes)
    d = _Design(x, ties, higher_is_better)
    rank_sum = d.ranks.sum(axis=-2)
    expected = (d.cells * d.middle[..., None]).sum(axis=-2)
    a = (d.ranks**2).sum(axis=(-2, -1))
    c = (d.size * (d.size + 1.0) ** 2 / 4.0 * d.used).sum(axis=-1)
    t, b, n = d.n_treatments, d.n_blocks, d.n_observations
    spread = np.where(d.present, rank_sum - expected, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t1 = (t - 1.0) * (spread**2).sum(axis=-1) / (a - c)
    few = (t < 2) | (b < 2)
    tied = ~few & (a - c <= 0)
    warn_nan("durbin", few & d.any_data, "fewer than two blocks, or two treatments ranked together")
    warn_nan("durbin", tied & d.any_data, "every block ties all its treatments")
    undefined = few | tied
    t1 = np.where(undefined, np.nan, t1)
    dof = np.where(undefined, np.nan, t - 1.0)
    within = n - b  # b (k - 1) in a balanced design
    f_dof2 = np.where(undefined, np.nan, within - t + 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (t1 / dof) / ((within - t1) / f_dof2)
    balanced = _balanced(d) & ~undefined
    pairwise = _conover_pairs(rank_sum, a - c, t1, within, f_dof2, d, balanced)
    return {
        "statistic": t1,
        "pvalue": chi2_sf(t1, dof),
        "dof": dof,
        "f": f,
        "f_dof1": dof,
        "f_dof2": f_dof2,
        "f_pvalue": f_sf(f, dof, f_dof2),
        "rank_sum": np.where(d.present & ~undefined[..., None], rank_sum, np.nan),
        **pairwise,
        "n_blocks": b,
        "n_treatments": t,
        "n_observations": n,
        "balanced": balanced.astype(float),
    }


def _conover_pairs(rank_sum, a_minus_c, t1, within, dof, design, balanced):
    """|R_i - R_j| / sqrt((A - C) 2 r / dof (1 - T1 / (b (k - 1)))) on Student's t(dof).

    Defined for balanced designs only (r is each treatment's replication);
    NaN elsewhere.
    """
    r = np.diagonal(design.concurrence, axis1=-2, axis2=-1).max(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(a_minus_c * 2.0 * r / dof * (1.0 - t1 / within))
        statistic = np.abs(rank_sum[..., :, None] - rank_sum[..., None, :]) / scale[..., None, None]
    pair = design.present[..., :, None] & design.present[..., None, :] & balanced[..., None, None]
    statistic = np.where(pair, statistic, np.nan)
    eye = np.eye(statistic.shape[-1], dtype=bool)
    statistic = np.where(eye & pair, 0.0, statistic)
    with np.errstate(invalid="ignore"):
        pvalue = 2.0 * _scipy_stats().t.sf(statistic, dof[..., None, None])
    return {"pairwise_statistic": statistic, "pairwise_pvalue": np.where(pair, pvalue, np.nan)}


def skillings_mack(x, *, ties="average", correction=True, higher_is_better=True, block_axes=1):
    """Skillings and Mack's (1981) statistic on ``(..., *blocks, t)``.

    Each observed rank becomes sqrt(12 / (k_i + 1)) (r_ij - (k_i + 1) / 2),
    a missing cell 0; A_j sums them per treatment and SM = A' S^- A with S
    the null covariance of A and S^- its Moore–Penrose inverse, referred to
    chi-square on rank(S) degrees of freedom.
    """
    x = join_blocks(x, block_axes)
    d = _Design(x, ties, higher_is_better)
    weight = np.sqrt(12.0 / (d.size + 1.0))
    centred = np.where(d.cells, d.ranks - d.middle[..., None], 0.0)
    adjusted = (weight[..., None] * centred).sum(axis=-2)
    if correction:
        # the permutation variance of block i's own (tied) ranks, weighted: w_i^2 s_i^2
        variance = (centred**2).sum(axis=-1) / np.where(d.used, d.size, 1.0)
        spread = weight**2 * variance
    else:
        spread = np.where(d.used, d.size - 1.0, 0.0)  # w_i^2 (k_i^2 - 1) / 12
    with np.errstate(invalid="ignore", divide="ignore"):
        off = np.where(d.used, spread / (d.size - 1.0), 0.0)
    cells = d.cells.astype(float)
    # S = diag(sum_i (spread_i + off_i) o_ij) - O' diag(off) O
    covariance = -np.einsum("...ij,...i,...il->...jl", cells, off, cells)
    diagonal = ((spread + off)[..., None] * cells).sum(axis=-2)
    covariance += diagonal[..., None] * np.eye(cells.shape[-1])
    values, vectors = np.linalg.eigh(covariance)
    top = values.max(axis=-1, initial=0.0)
    kept = values > top[..., None] * 1e-10
    projected = np.einsum("...ji,...j->...i", vectors, adjusted)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(kept, projected**2 / values, 0.0).sum(axis=-1)
    dof = kept.sum(axis=-1).astype(float)
    few = (d.n_treatments < 2) | (d.n_blocks < 2)
    tied = ~few & (dof == 0)
    warn_nan(
        "skillings_mack",
        few & d.any_data,
        "fewer than two blocks, or two treatments ranked together",
    )
    warn_nan("skillings_mack", tied & d.any_data, "every block ties all its treatments")
    undefined = few | tied
    statistic = np.where(undefined, np.nan, statistic)
    dof = np.where(undefined, np.nan, dof)
    return {
        "statistic": statistic,
        "pvalue": chi2_sf(statistic, dof),
        "dof": dof,
        "adjusted_rank_sum": np.where(d.present & ~undefined[..., None], adjusted, np.nan),
        "n_blocks": d.n_blocks,
        "n_treatments": d.n_treatments,
        "n_observations": d.n_observations,
    }
