"""Multiple-testing adjustment of p-values: NumPy kernels over the last axis.

A family is the last axis; NaN p-values are not tested and stay out of the
family (they neither count in its size nor receive an adjusted value).
"""

from __future__ import annotations

import numpy as np

from ..errors import ScoreValueError
from .ranking import check_choice

ADJUST_METHODS = ("holm", "bonferroni", "bh", "by", "none")


def check_pvalues(p, statistic: str) -> None:
    """Raise unless every non-NaN value of ``p`` lies in [0, 1]."""
    bad = ~np.isnan(p) & ((p < 0) | (p > 1))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ScoreValueError(
            f"{statistic}: p-values must lie in [0, 1]; found {float(p[where])!r} at index {where} "
            f"and {int(bad.sum()) - 1} other value(s) outside"
        )


def adjust_last(p, method="holm"):
    """Adjust the p-values of every family (last axis) of ``p`` at once.

    Returns an array shaped like ``p``: NaN where ``p`` is NaN (``"none"``
    returns ``p`` itself). The sorted
    p-values are adjusted as :func:`statsmodels.stats.multitest.multipletests`
    does (the same operations in the same order), then scattered back.
    """
    check_choice("method", method, ADJUST_METHODS)
    p = np.asarray(p, dtype=float)
    if p.ndim == 0:
        p = p[None]
    check_pvalues(p, "adjust_pvalues")
    missing = np.isnan(p)
    # NaN sorts last: the valid p-values of a family are its first m sorted positions
    order = np.argsort(np.where(missing, np.inf, p), axis=-1, kind="stable")
    ordered = np.take_along_axis(p, order, axis=-1)
    m = (~missing).sum(axis=-1, keepdims=True).astype(float)
    position = np.arange(1.0, p.shape[-1] + 1.0)
    valid = position <= m
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "none":
            adjusted = ordered
        elif method == "bonferroni":
            adjusted = ordered * m
        elif method == "holm":
            raw = ordered * (m - position + 1.0)
            adjusted = np.maximum.accumulate(np.where(valid, raw, -np.inf), axis=-1)
        else:
            ecdf = position / m
            if method == "by":
                harmonic = np.cumsum(1.0 / position)
                index = np.maximum(m.astype(np.intp) - 1, 0)
                ecdf = ecdf / np.take_along_axis(
                    np.broadcast_to(harmonic, ordered.shape), index, axis=-1
                )
            raw = np.where(valid, ordered / ecdf, np.inf)
            adjusted = np.flip(np.minimum.accumulate(np.flip(raw, -1), axis=-1), -1)
    adjusted = np.where(valid, np.minimum(adjusted, 1.0), np.nan)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return out


def adjust(p, *, method="holm", family_axes=1):
    """Kernel form: the last ``family_axes`` axes of ``p`` form one family each."""
    p = np.asarray(p, dtype=float)
    shape = p.shape
    lead = shape[: p.ndim - family_axes]
    flat = p.reshape(*lead, -1)
    return {"pvalue": adjust_last(flat, method).reshape(shape)}


def adjust_pairs(p, method="holm", family_axes=0):
    """Adjust the upper triangles of ``(..., *family, m, m)`` pair matrices as one family.

    Pairs i < j of every matrix in the last ``family_axes`` axes before the
    matrix axes form one family; the adjusted values are mirrored into the
    lower triangle and the diagonal (no test) is NaN.
    """
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    i, j = np.triu_indices(m, 1)
    upper = p[..., i, j]  # (..., *family, pairs)
    lead = upper.shape[: upper.ndim - family_axes - 1]
    adjusted = adjust_last(upper.reshape(*lead, -1), method).reshape(upper.shape)
    out = np.full(p.shape, np.nan)
    out[..., i, j] = adjusted
    out[..., j, i] = adjusted
    return out


def pairwise_mcnemar(
    x, *, method="exact", correction="holm", nan_policy="propagate", family_axes=0
):
    """McNemar's test between every pair of rows of ``(..., *family, m, samples)``.

    The outputs of :func:`~rankstats._kernels.significance.mcnemar_matrix`
    plus ``pvalue_adjusted``: the pairs i < j of the family axes' matrices
    adjusted together by ``correction`` (mirrored; NaN on the diagonal).
    """
    from .significance import mcnemar_matrix

    check_choice("correction", correction, ADJUST_METHODS)
    out = mcnemar_matrix(x, method=method, nan_policy=nan_policy)
    out["pvalue_adjusted"] = adjust_pairs(out["pvalue"], correction, family_axes)
    return out
