"""Cluster-robust standard errors of mean scores, samples (items) as clusters.

Blocks are ``(..., templates, samples)`` cells of one model (or ``(..., models,
templates, samples)`` for paired differences); the mean is over observed
cells and the clusters are the samples.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..errors import MissingValueError
from .ranking import check_choice, warn_nan

NAN_POLICIES = ("propagate", "omit", "raise")


def _holes(observed):
    """Cells missing among the present templates (rows) and samples (columns) of a block."""
    rows = observed.any(-1)
    columns = observed.any(-2)
    return rows[..., :, None] & columns[..., None, :] & ~observed


def _raise_holes(statistic, holes, where):
    if holes.any():
        first = tuple(int(i) for i in np.argwhere(holes)[0])
        raise MissingValueError(
            f"{statistic}: {int(holes.sum())} missing cell(s) among present templates and "
            f"samples ({where}; first at index {first}); pass nan_policy='omit' to use the "
            "observed cells or 'propagate' to return NaN"
        )


def _factor(clusters, correction):
    """The CR1 small-sample factor G / (G - 1), or 1."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return clusters / (clusters - 1.0) if correction else np.ones_like(clusters)


def cluster_mean(x, *, correction=True, nan_policy="propagate", statistic="clustered_se"):
    """Mean of the observed cells of ``(..., templates, samples)`` with naive and CR1 SEs."""
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    x = np.asarray(x, dtype=float)
    observed = ~np.isnan(x)
    holes = _holes(observed)
    if nan_policy == "raise":
        _raise_holes(statistic, holes, "per model")
    poisoned = holes.any((-2, -1)) if nan_policy == "propagate" else np.zeros(x.shape[:-2], bool)
    cells = observed.sum((-2, -1)).astype(float)
    clusters = observed.any(-2).sum(-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(observed, x, 0.0).sum((-2, -1)) / cells
        residual = np.where(observed, x - mean[..., None, None], 0.0)
        var_naive = (residual**2).sum((-2, -1)) / (cells - 1.0) / cells
        var_cluster = _factor(clusters, correction) * (residual.sum(-2) ** 2).sum(-1) / cells**2
    return _finish(
        statistic,
        mean,
        var_naive,
        var_cluster,
        cells,
        clusters,
        poisoned,
        (cells > 0) & ~poisoned,
        key="mean_score",
    )


def _finish(statistic, estimate, var_naive, var_cluster, cells, clusters, poisoned, telling, key):
    few_cells = cells < 2
    few_clusters = clusters < 2
    constant = ~few_cells & (var_naive == 0)
    warn_nan(statistic, few_clusters & telling, "fewer than two samples (clusters)")
    warn_nan(
        statistic,
        constant & ~few_clusters & telling,
        "the scores are constant (the design effect is 0/0)",
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        design = var_cluster / var_naive
    nan = poisoned | (cells == 0)
    return {
        key: np.where(nan, np.nan, estimate),
        "se_naive": np.where(nan | few_cells, np.nan, np.sqrt(var_naive)),
        "se_cluster": np.where(nan | few_clusters | few_cells, np.nan, np.sqrt(var_cluster)),
        "design_effect": np.where(nan | few_clusters | constant | few_cells, np.nan, design),
        "n_cells": np.where(poisoned, np.nan, cells),
        "n_clusters": np.where(poisoned, np.nan, clusters),
    }


def cluster_difference(
    x, *, correction=True, use_t=False, nan_policy="propagate", statistic="clustered_difference"
):
    """Mean difference of every pair of models of ``(..., models, templates, samples)``.

    Each pair (a, b) is compared on the cells both observe; returns
    ``(..., models, models)`` arrays (row a minus column b).
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    x = np.asarray(x, dtype=float)
    *lead, m, t, s = x.shape
    observed = ~np.isnan(x)
    own_holes = _holes(observed)
    if nan_policy == "raise":
        _raise_holes(statistic, own_holes, "per model")
    # the block of a pair: the templates and samples either model has
    rows, columns = observed.any(-1), observed.any(-2)
    block = (rows[..., :, None, :] | rows[..., None, :, :]).sum(-1) * (
        columns[..., :, None, :] | columns[..., None, :, :]
    ).sum(-1)
    flat = observed.reshape(*lead, m, t * s).astype(float)
    common = flat @ np.swapaxes(flat, -1, -2)  # cells both observe
    present = observed.any((-2, -1))
    both = present[..., :, None] & present[..., None, :]
    unmatched = both & (common < block)
    if nan_policy == "raise":
        _raise_holes(statistic, unmatched, "cells one model of a pair has and the other lacks")
    poisoned = np.zeros_like(both)
    if nan_policy == "propagate":
        poisoned = (
            unmatched
            | own_holes.any((-2, -1))[..., :, None]
            | own_holes.any((-2, -1))[..., None, :]
        )

    # centre each model on its own mean: every quantity below is shift-invariant per pair
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.where(observed, x, 0.0).sum((-2, -1)) / present_count(observed)
    centred = np.where(observed, x - centre[..., None, None], 0.0)
    flat_x = centred.reshape(*lead, m, t * s)
    sums = flat_x @ np.swapaxes(flat, -1, -2)  # [a, b]: a's centred scores on common cells
    squares = (flat_x**2) @ np.swapaxes(flat, -1, -2)
    cross = flat_x @ np.swapaxes(flat_x, -1, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = (sums - np.swapaxes(sums, -1, -2)) / common  # mean of centred differences
        sse = squares + np.swapaxes(squares, -1, -2) - 2.0 * cross - common * shifted**2
        # a model minus itself is 0 exactly, not the rounding left by two matrix products
        sse = np.where(np.eye(m, dtype=bool), 0.0, np.maximum(sse, 0.0))
        var_naive = sse / (common - 1.0) / common
    # per sample: (..., s, m, t) @ (..., s, t, m)
    by_sample = np.moveaxis(centred, -1, -3)
    seen = np.moveaxis(observed, -1, -3).astype(float)
    part = by_sample @ np.swapaxes(seen, -1, -2)
    count = seen @ np.swapaxes(seen, -1, -2)
    score = part - np.swapaxes(part, -1, -2) - np.nan_to_num(shifted)[..., None, :, :] * count
    clusters = (count > 0).sum(-3).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_cluster = _factor(clusters, correction) * (score**2).sum(-3) / common**2
    difference = shifted + centre[..., :, None] - centre[..., None, :]
    diagonal = np.eye(m, dtype=bool)
    off = both & ~diagonal & (common > 0) & ~poisoned
    out = _finish(
        statistic,
        difference,
        var_naive,
        var_cluster,
        common,
        clusters,
        poisoned | ~both,
        off,
        key="difference",
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(diagonal, np.nan, out["difference"] / out["se_cluster"])
    dof = np.where(np.isnan(z), np.nan, clusters - 1.0 if use_t else np.inf)
    if use_t:
        tail = special.stdtr(dof, -np.abs(z))
    else:
        tail = special.ndtr(-np.abs(z))
    out.update(statistic=z, pvalue=np.where(np.isnan(z), np.nan, 2.0 * tail), dof=dof)
    out["design_effect"] = np.where(diagonal, np.nan, out["design_effect"])
    return out


def present_count(observed):
    """Observed cells per block, as float (0 where none)."""
    return observed.sum((-2, -1)).astype(float)
