r"""Sensitivity of each sample's outcome to the template: mean absolute difference over pairs.

For one sample scored under n templates with scores :math:`x_1..x_n`, the
mean over the :math:`n(n-1)/2` template pairs of :math:`|x_a - x_b|` is, with
the scores sorted ascending :math:`x_{(1)} \le \dots \le x_{(n)}`,

.. math::

   \frac{2}{n(n-1)} \sum_{i=1}^{n} (2i - n - 1)\, x_{(i)},

and for 0/1 scores with k correct, :math:`2k(n-k) / (n(n-1))`: a count
instead of a sort. Blocks are ``(..., template, sample)``; the pairs run
over the templates a sample is observed under.
"""

from __future__ import annotations

import numpy as np

from .clustered import NAN_POLICIES, _holes, _raise_holes
from .ranking import check_choice
from .scan import zeros_and_ones


def per_sample(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's mean absolute difference over pairs of its observed templates.

    Returns ``(..., sample)`` values (NaN where fewer than two templates) and
    the number of templates each sample is observed under.
    """
    x = np.asarray(x, dtype=float)
    observed = ~np.isnan(x)
    n = observed.sum(-2).astype(float)
    pairs = n * (n - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if zeros_and_ones(x, nan=True):
            k = x.sum(-2, where=observed)  # no zero-filled copy of the cube
            mad = 2.0 * k * (n - k) / pairs
        else:
            ordered = np.sort(x, axis=-2)  # NaN last
            rank = np.arange(1, x.shape[-2] + 1, dtype=float).reshape(-1, 1)
            weight = 2.0 * rank - n[..., None, :] - 1.0
            inside = rank <= n[..., None, :]
            total = np.where(inside, weight * np.where(inside, ordered, 0.0), 0.0).sum(-2)
            mad = 2.0 * total / pairs
    return np.where(n >= 2, mad, np.nan), n


def prosa(
    x: np.ndarray, *, nan_policy: str = "propagate", statistic: str = "prompt_sensitivity"
) -> dict:
    """ProSA's PromptSensiScore of ``(..., template, sample)`` blocks: the mean over samples.

    Padded templates and samples (never observed) drop out; a cell missing
    among a block's present templates and samples is a hole: NaN for the
    block (propagate), pairs over the templates the sample has (omit), or
    an error (raise).
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    x = np.asarray(x, dtype=float)
    holes = _holes(~np.isnan(x))
    if nan_policy == "raise":
        _raise_holes(statistic, holes, "per model")
    mad, _ = per_sample(x)
    counted = ~np.isnan(mad)
    items = counted.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(counted, mad, 0.0).sum(-1) / items
    poisoned = holes.any((-2, -1)) if nan_policy == "propagate" else np.zeros(score.shape, bool)
    return {"value": np.where(poisoned | (items == 0), np.nan, score)}


def posix(logprob: np.ndarray, tokens: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    r"""POSIX of each sample: how much the response's log-likelihood moves with the template.

    ``logprob`` ``(..., template, option)``: log P(option | template's
    prompt); ``tokens`` the same shape, each option's length in tokens;
    ``chosen`` ``(..., template)`` the index of each template's response
    (-1 where the template did not answer). With responses :math:`y_j`,
    lengths :math:`L_j` and the n answering templates,

    .. math::

       \frac{1}{n(n-1)} \sum_{j} \frac{1}{L_j} \sum_{i}
           \lvert \log P(y_j \mid x_i) - \log P(y_j \mid x_j) \rvert,

    the inner sum over i computed from the sorted column of option
    :math:`y_j` and its prefix sums (no pair is formed). NaN where fewer
    than two templates answered. Returns ``(...)``.
    """
    logprob = np.asarray(logprob, dtype=float)
    chosen = np.asarray(chosen)
    answered = chosen >= 0
    n = answered.sum(-1)
    # templates that did not answer sort last in every column and add nothing
    values = np.where(answered[..., None], logprob, np.inf)
    order = np.argsort(values, axis=-2, kind="stable")
    ordered = np.take_along_axis(values, order, -2)
    prefix = np.cumsum(np.where(np.isinf(ordered), 0.0, ordered), axis=-2)
    rank = np.argsort(order, axis=-2)
    pick = np.maximum(chosen, 0)
    own = np.take_along_axis(logprob, pick[..., None], -1)[..., 0]  # log P(y_j | x_j)
    r = np.take_along_axis(rank, pick[..., None], -1)[..., 0]  # its place in column y_j
    # prefix[..., k, o] read at (k, o) = (r_j, y_j) and (n - 1, y_j), on the flattened last axes
    width = logprob.shape[-1]
    flat = prefix.reshape(*prefix.shape[:-2], -1)
    below = np.take_along_axis(flat, r * width + pick, -1)
    last = np.maximum(n - 1, 0)[..., None]
    total = np.take_along_axis(flat, last * width + pick, -1)
    count = n[..., None].astype(float)
    spread = own * (r + 1) - below + (total - below) - own * (count - r - 1)
    length = np.take_along_axis(np.asarray(tokens, dtype=float), pick[..., None], -1)[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        per_template = np.where(answered, spread / length, 0.0)
        value = per_template.sum(-1) / (n * (n - 1.0))
    return np.where(n >= 2, value, np.nan)
