r"""Bootstrap and jackknife resampling of score cubes, expressed as weights.

A resample of a task's n units (samples or templates) is a vector of counts:
how often each unit was drawn (a bootstrap replicate: multinomial counts
summing to n) or whether it was kept (a jackknife replicate: every unit but
one). Padding positions get weight 0. Every statistic of a resampled cube is
then an array operation on the original scores and the weights, for all
replicates of all slices at once:

* per-template scores: :math:`s_{mpr} = \sum_s x_{mps} w_{sr} / \sum_s w_{sr}`,
  one matrix product per slice (for a model, only its observed samples count);
* AvgP: the mean over templates weighted by the template counts
  :math:`v_{pr}`; MaxP: the best template among those with :math:`v_{pr} > 0`;
* Kendall's W: every drawn template is a judge and a template drawn twice is
  two judges, so the rank sums are :math:`R_{ir} = \sum_p v_{pr} r_{ipr}` and
  the tie term is :math:`\sum_p v_{pr} T_{pr}`.

Nothing here imports xarray. Scores are ``(..., models, templates[, samples])``
and weights ``(..., replicates, units)``; leading axes are independent slices
(tasks), each with its own draws. Outputs put the replicate axis last.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputTypeError, MissingValueError
from .ranking import NAN_POLICIES, check_choice, rank_last
from .scan import blocks

OVER = ("samples", "templates", "both")
STATISTICS = ("score", "avgp", "maxp", "saturation", "cps", "kendall_w", "rank")
BY = ("avgp", "maxp", "saturation", "cps")
#: Working memory per chunk of slices, in bytes (see :func:`replicate_statistics`).
BUDGET = 64 * 2**20
#: Scores closer than this many decimals, relative to a slice's largest, tie in ranks.
TIE_DECIMALS = 10
#: Draws per block of :func:`draw_counts` (its int64 temporaries take 8 bytes each, three times).
_DRAW_BLOCK = 2**19
#: Cells per block of the pairwise rank comparisons (an (objects, objects, block) array).
_RANK_BLOCK = 2**21


# --------------------------------------------------------------------------- draws


def draw_counts(rng, real, n_replicates: int):
    """Bootstrap counts of the real units of every slice: ``(replicates, slices, units)``.

    ``real`` is ``(slices, units)`` bool; slice t draws ``n_t`` of its ``n_t``
    real units with replacement, draw j naming the j-th real position. When
    every slice has the same n the draws are ``rng.integers(0, n, size=(B,
    slices, n))``, which for one slice is exactly the draw of
    :func:`scipy.stats.bootstrap` (``rng.integers(0, n, (B, n))``). Otherwise
    ``u = rng.random((B, slices, max n))`` and slice t takes
    ``floor(u * n_t)`` of its first ``n_t`` draws.
    """
    real = np.asarray(real, dtype=bool)
    slices, units = real.shape
    n = real.sum(-1)
    width = int(n.max(initial=0))
    counts = np.zeros((n_replicates, slices, units), dtype=np.int32)
    if width == 0 or n_replicates == 0:
        return counts
    equal = bool((n == width).all())
    real_first = None
    if not (real == (np.arange(units) < n[:, None])).all():  # real units are not a prefix
        real_first = np.argsort(~real, axis=-1, kind="stable")  # real positions, in order
    kept = None if equal else np.arange(width) < n[:, None]
    flat = counts.reshape(n_replicates, -1)
    step = max(1, _DRAW_BLOCK // max(1, slices * width))
    # blocks of replicates, for memory: the generator yields the same stream drawn in
    # blocks along the first axis as drawn at once
    for start in range(0, n_replicates, step):
        size = (min(step, n_replicates - start), slices, width)
        if equal:
            block = rng.integers(0, width, size=size)
        else:
            block = (rng.random(size) * n[:, None]).astype(np.int64)
            np.minimum(block, np.maximum(n - 1, 0)[:, None], out=block)
        if real_first is not None:
            block = real_first.ravel()[block + np.arange(slices)[:, None] * units]
        cell = (
            block
            + (np.arange(block.shape[0])[:, None, None] * slices + np.arange(slices)[:, None])
            * units
        )
        if kept is not None:
            cell = cell[np.broadcast_to(kept, cell.shape)]
        flat[start : start + step] = np.bincount(
            cell.ravel(), minlength=block.shape[0] * slices * units
        ).reshape(block.shape[0], -1)
    return counts


def drawn_positions(counts):
    """The templates (units) a replicate drew, in position order: ``(..., units)`` int.

    ``counts`` is ``(..., units)``; slot k of a row names the k-th drawn unit
    (a unit drawn twice fills two slots), and -1 marks the slots past the
    row's total. One ``np.repeat`` over all rows, no loop.
    """
    counts = np.asarray(counts, dtype=np.int64)
    units = counts.shape[-1]
    flat = counts.reshape(-1, units)
    if (flat.sum(-1) > units).any():
        raise InputTypeError(
            "drawn_templates: a replicate draws more templates than the task "
            "has positions; give the weights bootstrap drew"
        )
    drawn = np.repeat(np.tile(np.arange(units), flat.shape[0]), flat.ravel())
    per_row = flat.sum(-1)
    row = np.repeat(np.arange(flat.shape[0]), per_row)
    slot = np.arange(drawn.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    out = np.full(flat.shape, -1, dtype=np.int64)
    out[row, slot] = drawn
    return out.reshape(counts.shape)


def jackknife_weights(real):
    """Leave-one-out weights ``(..., units, units)`` of the real units, and their validity.

    Row k keeps every real unit but the k-th real one (in position order);
    rows k >= n, n the number of real units, are not replicates (``valid``
    ``(..., units)`` is False there).
    """
    real = np.asarray(real, dtype=bool)
    units = real.shape[-1]
    real_first = np.argsort(~real, axis=-1, kind="stable")
    weights = real[..., None, :] & (np.arange(units) != real_first[..., :, None])
    valid = np.arange(units) < real.sum(-1)[..., None]
    return weights, valid


def acceleration(jackknife, valid, family):
    r"""Efron's acceleration from jackknife values over one or two families of units.

    ``jackknife`` is ``(..., J)`` (leave-one-out values along the last axis),
    ``valid`` ``(..., J)`` marks real leave-one-out replicates and ``family``
    ``(J,)`` the family of each row (samples 0, templates 1).

    With :math:`U_i = (n_f - 1)(\bar\theta_f - \theta_{(i)})` over the n_f
    valid rows of family f,

    .. math:: a = \frac{\sum_f \sum_i U_i^3 / n_f^3}{6 (\sum_f \sum_i U_i^2 / n_f^2)^{3/2}},

    the skewness of the statistic's linear approximation when the families
    are resampled independently, over 6: Efron's formula for one family,
    scipy's for several samples. 0 where every jackknife value is equal.
    """
    jackknife = np.asarray(jackknife, dtype=float)
    valid = np.broadcast_to(valid, (*valid.shape[:-1], jackknife.shape[-1]))
    numerator = np.zeros(jackknife.shape[:-1])
    denominator = np.zeros(jackknife.shape[:-1])
    for f in np.unique(family):  # one pass per family of units: at most two
        rows = np.flatnonzero(family == f)
        rows = slice(rows[0], rows[-1] + 1)  # each family's rows are contiguous
        values, ok = jackknife[..., rows], valid[..., rows]
        n = ok.sum(-1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, values, 0.0).sum(-1) / n
            d = np.where(ok, mean[..., None] - values, 0.0)
            d2 = d * d
            ratio = np.where(n > 0, (n - 1.0) / n, 0.0)
            numerator += (d2 * d).sum(-1) * ratio**3
            denominator += d2.sum(-1) * ratio**2
    with np.errstate(invalid="ignore", divide="ignore"):
        a = numerator / (6.0 * denominator * np.sqrt(denominator))
    return np.where(denominator == 0, 0.0, a)


# --------------------------------------------------------------------------- ranks


def pairwise_ranks(x, higher_is_better=True, present=None):
    r"""Average ranks along axis 1 of ``(c, objects, cells)``, by pairwise comparison.

    Returns ``(ranks, tie)``: float32 ranks (1 = best; 0 for absent objects)
    shaped like ``x``, and the ``(c, cells)`` tie terms
    :math:`\sum_g (t_g^3 - t_g)` of each cell. With G_i objects better than
    object i and L_i worse among the n present,
    :math:`r_i = (n + 1 + G_i - L_i) / 2`, and i's tie group has
    :math:`t_i = n - G_i - L_i` members, so
    :math:`\sum_g (t_g^3 - t_g) = \sum_i (t_i^2 - 1)`. The comparisons run in
    blocks of cells that stay in cache; the cost grows as objects squared,
    which for the tens of models of a leaderboard beats sorting each cell.

    Absent objects are NaN in a float ``x``; or, given ``present``
    ``(c, objects)``, they hold a value worse than every present one (so
    that small-integer ``x``, whose comparisons are fastest, can have them).
    """
    c, m, cells = x.shape
    counter = np.int8 if m < 2**7 else np.int16 if m < 2**15 else np.int64
    wide = np.int16 if m < 2**7 else np.int32 if m < 2**15 else np.int64  # 2n + 1 and n^2
    masked = present is None
    if masked:
        here_all = ~np.isnan(x)
        n = here_all.sum(1, dtype=wide)[:, None, :]
        absent = 0
    else:
        present = np.asarray(present, dtype=bool)
        n = present.sum(1, dtype=wide)[:, None, None]
        absent = m - n  # each absent object counts as worse than every present one
    ranks = np.zeros(x.shape, dtype=np.float32 if m < 2**23 else float)
    tie = np.zeros((c, cells))
    step = max(1, _RANK_BLOCK // max(1, c * m * m))
    compare = np.greater if higher_is_better else np.less
    for start in range(0, cells, step):  # blocks of cells, for cache
        block = x[:, :, start : start + step]
        beats = compare(block[:, :, None, :], block[:, None, :, :])  # [k, i]: k better than i
        better = beats.sum(1, dtype=counter).astype(wide)
        worse = beats.sum(2, dtype=counter).astype(wide)
        worse -= absent
        nb = n[:, :, start : start + step] if masked else n
        twice = nb + 1 + better - worse  # twice the rank
        size = nb - better - worse  # i's tie group, i included
        size *= size
        size -= 1
        if masked:
            here = here_all[:, :, start : start + step]
            twice *= here
            size *= here
        np.multiply(twice, 0.5, out=ranks[:, :, start : start + step], casting="unsafe")
        tie[:, start : start + step] = size.sum(1)
    if not masked:
        # an absent object holds the worst value: its "group" of the a absent adds a^2 - 1
        ranks[~present] = 0.0
        tie -= (absent * (absent**2 - 1))[:, :, 0]
    return ranks, tie


# --------------------------------------------------------------------------- structure


class _Chunk:
    """Structure and missing values of a chunk of slices, from its per-template scores.

    Built from the samples (:meth:`from_samples`) or from per-template sums
    over them (:meth:`from_sums`). ``structured`` says whether every present
    model scores every real sample of every real template, so that a weight
    row's sample count is the same in every cell.
    """

    def __init__(self, scores, nan_policy, structured=False):
        self.scores = scores
        self.structured = structured
        missing = np.isnan(scores)
        self.template_real = ~missing.all(1)  # (c, P)
        self.model_present = ~missing.all(2)  # (c, M)
        self.cell = self.model_present[:, :, None] & self.template_real[:, None, :]
        holes = missing & self.cell
        if nan_policy == "raise" and holes.any():
            where = tuple(int(i) for i in np.argwhere(holes)[0])
            raise MissingValueError(
                f"bootstrap: {int(holes.sum())} missing per-template score(s) among present "
                f"models and templates (first at slice, model, template {where}); pass "
                "nan_policy='omit' to drop them or 'propagate' to return NaN"
            )
        propagate = nan_policy == "propagate"
        self.model_poisoned = holes.any(2) & propagate  # (c, M)
        self.w_poisoned = holes.any((1, 2)) & propagate  # (c,)
        self.judges = (
            self.template_real & ~holes.any(1) if nan_policy == "omit" else self.template_real
        )

    @classmethod
    def from_samples(cls, x, nan_policy, work=float):
        """From ``(c, M, P, S)`` scores, keeping them as ``filled``.

        ``filled`` holds the scores in ``work`` with 0 for missing ones: the one copy
        of the chunk every weighted sum reads (a chunk can be most of a machine's
        memory, so there is no other).
        """
        if x.dtype.kind in "biu" and x.shape[-1] > 0:
            # integer or boolean scores (a binary cube held as int8 or bool) have no
            # missing values: no mask and no copy, the weighted sums convert blocks
            chunk = cls(x.sum(-1, dtype=float) / x.shape[-1], nan_policy)
            chunk.observed, chunk.filled = None, x
            chunk.sample_real = np.ones((x.shape[0], x.shape[-1]), dtype=bool)
            chunk.structured = True
            return chunk
        missing = np.isnan(x)
        filled = x.astype(work, order="C")  # laid out for the one matrix product
        filled[missing] = 0.0
        observed = np.logical_not(missing, out=missing)
        count = observed.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = filled.sum(-1, dtype=float) / count
        chunk = cls(np.where(count > 0, scores, np.nan), nan_policy)
        chunk.observed, chunk.filled = observed, filled
        chunk.sample_real = observed.any(axis=(1, 2))  # (c, S)
        n_real = chunk.sample_real.sum(-1)[:, None, None]
        chunk.structured = bool(((count == n_real) | ~chunk.cell).all())
        return chunk

    @classmethod
    def from_sums(cls, total, count, scale, nan_policy):
        """From the original-data row of per-template sums.

        ``total`` and ``count`` are ``(c, M, P)`` sums over the real samples,
        whose number per slice is ``scale`` ``(c,)``.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(count > 0, total / count, np.nan)
        chunk = cls(scores, nan_policy)
        chunk.structured = bool(((count == scale[:, None, None]) | ~chunk.cell).all())
        return chunk


def _largest_magnitude(x) -> float:
    """``max |x|`` (0 when empty) without an ``abs`` copy of ``x`` (nor int8's -128 overflow)."""
    if x.size == 0:
        return 0.0
    return float(max(x.max().item(), -x.min().item()))


def exact_in_float32(x, n_samples: int, n_templates: int, block: int = 1 << 20) -> bool:
    """Whether every weighted sum of ``x`` is an integer below 2**24 (so float32 is exact).

    Read in blocks of ``block`` elements in memory order, so the check copies
    nothing of ``x``, whatever its axis order (a transposed view included).
    """
    if x.dtype.kind in "biu":  # integers: exact when the largest sum is
        largest = _largest_magnitude(x)
        return largest * max(n_samples, 1) * max(n_templates, 1) < 2**24
    largest = 0.0
    for part in blocks(x, block):  # blocks of memory, not of models or tasks
        whole = np.rint(part) == part  # False for NaN, which is no sum's term
        if not whole.all() and not (whole | np.isnan(part)).all():
            return False
        # fmax and fmin skip NaN
        largest = max(
            largest,
            float(np.fmax.reduce(part, initial=-np.inf)),
            -float(np.fmin.reduce(part, initial=np.inf)),
        )
    return largest * max(n_samples, 1) * max(n_templates, 1) < 2**24


#: Bytes of converted scores one block of :func:`weighted_sums` may take.
_CONVERT_BLOCK = 4 * 2**20


def weighted_sums(values, rows, work):
    """``values (c, M, P, S)`` summed under ``rows (c, S, R)``: ``(c, M, P, R)`` in ``work``.

    Scores already in ``work`` and laid out for it go to one matrix product.
    Others (a binary cube held as int8 or bool, or a view of the cube in
    another axis order) are converted to ``work`` a block at a time, so the
    copy takes about ``_CONVERT_BLOCK`` bytes, not a cube's worth. The blocks
    are whole slices while one fits, else models of one slice; each output
    row is the same product either way.
    """
    c, m, p, s = values.shape
    if values.dtype == work and values.flags.c_contiguous:
        return (values.reshape(c, m * p, s) @ rows).reshape(c, m, p, -1)
    out = np.empty((c, m, p, rows.shape[-1]), dtype=work)
    per_model = max(1, p * s * np.dtype(work).itemsize)
    models = max(1, _CONVERT_BLOCK // per_model)
    if models >= m:  # blocks of memory, not of models or tasks
        step = max(1, models // max(m, 1))
        for start in range(0, c, step):
            block = values[start : start + step].astype(work)
            part = out[start : start + step]
            np.matmul(
                block.reshape(len(block), m * p, s),
                rows[start : start + step],
                out=part.reshape(len(part), m * p, -1),
            )
        return out
    for index in range(c):
        for start in range(0, m, models):
            block = values[index, start : start + models].astype(work)
            part = out[index, start : start + models]
            np.matmul(block.reshape(-1, s), rows[index], out=part.reshape(-1, part.shape[-1]))
    return out


def _stack_rows(parts, dtype):
    """Weight rows ``(c, k, units)``, stacked into one ``(c, units, rows)`` array of ``dtype``."""
    c, _, units = np.shape(parts[0])
    total = sum(np.shape(part)[1] for part in parts)
    out = np.empty((c, units, total), dtype=dtype)
    start = 0
    for part in parts:  # the estimate, the draws, and up to two jackknife families
        k = np.shape(part)[1]
        out[:, :, start : start + k] = np.swapaxes(part, 1, 2)
        start += k
    return out


def _jackknife_rows(sample_real, template_real, over):
    """Leave-one-out rows of samples and templates, their validity and family labels."""
    c, n_t = template_real.shape
    n_s = 0 if sample_real is None else sample_real.shape[-1]
    sample_rows, template_rows, valid, family = [], [], [], []
    if over in ("samples", "both"):
        weights, ok = jackknife_weights(sample_real)
        sample_rows.append(weights)
        template_rows.append(np.broadcast_to(template_real[:, None, :], (c, n_s, n_t)))
        valid.append(ok)
        family.append(np.zeros(n_s, dtype=np.int8))
    if over in ("templates", "both"):
        weights, ok = jackknife_weights(template_real)
        template_rows.append(weights)
        if sample_real is not None:
            sample_rows.append(np.broadcast_to(sample_real[:, None, :], (c, n_t, n_s)))
        valid.append(ok)
        family.append(np.ones(n_t, dtype=np.int8))
    return sample_rows, template_rows, np.concatenate(valid, -1), np.concatenate(family)


# --------------------------------------------------------------------------- statistics


class _Values:
    """Per-template scores of every weight row, as ``values / scale``.

    ``values`` is ``(c, M, P, R)`` (``R = 1`` when the scores are fixed). For
    structured slices (each cell holds all samples or none) a row's sample
    count is the same for every cell, so ``values`` holds the weighted sums
    (exact in float32 for integer scores) and ``scale`` ``(c, R)`` the
    counts: ranks and maxima can be taken on ``values`` and divided after.
    Otherwise ``values`` holds the scores and ``scale`` is None. Absent
    models are NaN.
    """

    def __init__(self, x, chunk, sample_rows, work):
        self.scale = self.bound = None
        if sample_rows is None:
            self.values = chunk.scores[..., None]
            return
        c, m, p, s = x.shape
        values = chunk.filled
        total = weighted_sums(values, sample_rows, work)  # (c, M, P, R)
        scale = sample_rows.sum(1, dtype=float)  # every row's sample count
        count = (
            None
            if chunk.structured
            else (chunk.observed.reshape(c, m * p, s).astype(work) @ sample_rows).reshape(
                total.shape
            )
        )
        bound = None
        if work == np.float32:  # integer scores: every sum is an integer up to this
            bound = int(_largest_magnitude(values) * np.max(scale, initial=0.0))
        self._from_sums(total, count, scale, chunk, bound)

    @classmethod
    def from_sums(cls, total, count, scale, chunk, integer=False):
        """From per-template sums ``(c, M, P, R)`` over each row's samples.

        ``total`` sums the scores, ``count`` the observed ones; ``scale``
        ``(c, R)`` is each row's number of real samples. ``integer``: the
        scores are integers, so the sums are exact.
        """
        values = cls.__new__(cls)
        values.scale = values.bound = None
        bound = None
        if integer:
            bound = int(np.max(np.abs(total), initial=0.0, where=~np.isnan(total)))
        values._from_sums(total, None if chunk.structured else count, scale, chunk, bound)
        return values

    def _from_sums(self, total, count, scale, chunk, bound):
        if chunk.structured:
            self.values = total
            self.values[~chunk.model_present] = np.nan
            self.scale = scale
            self.template_real = chunk.template_real
            self.bound = bound
            return
        with np.errstate(invalid="ignore", divide="ignore"):  # the ratio in float64
            ratio = np.divide(total, count, dtype=float)
        self.values = np.where(count > 0, ratio, np.nan)

    def scores(self, rows=slice(None), dtype=float, out=None):
        """Per-template scores of the given rows, ``(c, M, P, rows)``, in ``dtype`` (or ``out``)."""
        values = self.values[..., rows]
        if out is None:
            out = np.empty(values.shape, dtype=dtype)
        if self.scale is None:
            out[...] = values
            return out
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(values, self.scale[:, None, None, rows].astype(out.dtype), out=out)
        np.swapaxes(out, 1, 2)[~self.template_real] = np.nan  # padding holds zero sums
        return out


def _metrics(values, v, chunk, higher_is_better):
    """AvgP, MaxP, saturation and CPS of every row: ``(c, M, R)`` each."""
    x = values.values
    drawn = v > 0  # (c, P, R)
    if values.scale is not None:  # structured: no hole among present models and templates
        total = np.einsum("cmpr,cpr->cmr", x, v.astype(x.dtype)).astype(float)
        count = v.sum(1)[:, None, :]
        penalty = np.where(drawn, 0.0, -np.inf if higher_is_better else np.inf).astype(x.dtype)
        best = (x + penalty[:, None]).max(2) if higher_is_better else (x + penalty[:, None]).min(2)
        scale = values.scale[:, None, :]
        total, best = total / scale, best.astype(float) / scale
    else:
        observed = ~np.isnan(x)
        filled = np.where(observed, x, 0.0)
        if x.shape[-1] == 1:  # fixed per-template scores: matrix products over templates
            total = filled[..., 0] @ v
            count = observed[..., 0].astype(float) @ v
        else:
            weight = np.where(observed, v[:, None], 0.0)
            total = np.einsum("cmpr,cmpr->cmr", filled, weight)
            count = weight.sum(2)
        chosen = observed & drawn[:, None]
        fill = -np.inf if higher_is_better else np.inf
        best = np.where(chosen, x, fill)
        best = best.max(2) if higher_is_better else best.min(2)
    undefined = (count == 0) | chunk.model_poisoned[:, :, None] | ~chunk.model_present[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        average = np.where(undefined, np.nan, total / count)
    best = np.where(undefined, np.nan, best)
    saturation = 1.0 - np.abs(best - average)
    return {"avgp": average, "maxp": best, "saturation": saturation, "cps": saturation * best}


def _comparable(x, bound, chunk, higher_is_better):
    """Scores to rank, as small integers when they are, and the presence mask (or None).

    Integer sums up to ``bound`` compare fastest as int8 or int16; absent
    models then hold a value below (above, when lower is better) every sum.
    """
    if bound is None:
        # sums of non-integer scores that are equal as numbers can differ in their last
        # bits depending on summation order; rounded, they tie in every code path
        return tie_rounded(x, 1), None
    if bound >= np.iinfo(np.int16).max:
        return x, None
    dtype = np.int8 if bound < np.iinfo(np.int8).max else np.int16
    with np.errstate(invalid="ignore"):  # absent models are NaN, overwritten next
        small = x.astype(dtype)
    small[~chunk.model_present] = -bound - 1 if higher_is_better else bound + 1
    return small, chunk.model_present


def _kendall_w(values, v, chunk, higher_is_better):
    """Kendall's W (average ranks, tie-corrected) of every row, drawn templates as judges."""
    v = v * chunk.judges[:, :, None]  # (c, P, R)
    x = values.values
    c, m, _, r = x.shape
    if r == 1:  # fixed per-template scores: rank once, weight by matrix products
        ranks, tie = pairwise_ranks(x[..., 0], higher_is_better)
        rank_sums = ranks.astype(float) @ v
        tie_sums = np.einsum("cp,cpr->cr", tie, v)
    else:
        rank_sums = np.zeros((c, m, r))
        tie_sums = np.zeros((c, r))
        used = np.flatnonzero((v > 0).any(axis=(0, 2)))  # templates drawn in some row
        step = max(1, 8 * _RANK_BLOCK // max(1, c * m * r))
        comparable, present = _comparable(x, values.bound, chunk, higher_is_better)
        for start in range(0, used.size, step):  # blocks of templates, for memory
            chosen = used[start : start + step]
            block = comparable[:, :, chosen]
            ranks, tie = pairwise_ranks(block.reshape(c, m, -1), higher_is_better, present)
            weight = v[:, chosen]
            rank_sums += np.einsum(
                "cmpr,cpr->cmr", ranks.reshape(block.shape), weight.astype(np.float32)
            )
            tie_sums += (tie.reshape(c, -1, r) * weight).sum(1)
    judges = v.sum(1)  # (c, R): drawn judges, with multiplicity
    n = chunk.model_present.sum(1).astype(float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = rank_sums.sum(1) / n
        spread = np.where(chunk.model_present[:, :, None], rank_sums - mean[:, None], 0.0)
        denominator = judges**2 * (n**3 - n) - judges * tie_sums
        w = np.maximum(12.0 * (spread**2).sum(1) / denominator, 0.0)
    w = np.where((w > 1.0) & (w < 1.0 + 1e-12), 1.0, w)
    undefined = (judges < 2) | (n < 2) | ~(denominator > 0) | chunk.w_poisoned[:, None]
    return np.where(undefined, np.nan, w)


def tie_rounded(values, axis):
    """``values`` over the largest absolute value along ``axis``, rounded to TIE_DECIMALS.

    Scores that are equal as rationals (AvgP of differently ordered template
    scores, say) can differ in the last bits of their float sums; after
    this rounding they tie, as the same rule does in the subsampling curves.
    """
    values = np.asarray(values, dtype=float)
    scale = np.max(np.abs(values), axis=axis, keepdims=True, initial=0.0, where=~np.isnan(values))
    return np.round(values / np.where(scale > 0, scale, 1.0), TIE_DECIMALS)


def _leaderboard_ranks(values, ties, higher_is_better):
    """Ranks of the models (axis 1 of ``(c, M, R)``) in every row."""
    ranks, _ = rank_last(np.swapaxes(tie_rounded(values, 1), 1, 2), ties, higher_is_better)
    return np.swapaxes(ranks, 1, 2)


def replicate_statistics(
    x,
    template_weights=None,
    sample_weights=None,
    *,
    statistics=STATISTICS,
    by="avgp",
    ties="average",
    higher_is_better=True,
    nan_policy="propagate",
    jackknife=False,
    score_dtype=np.float32,
    budget=BUDGET,
):
    """Statistics of every bootstrap replicate, with their point estimates and accelerations.

    Parameters
    ----------
    x : (..., models, templates, samples) scores when ``sample_weights`` is
        given, else (..., models, templates) per-template scores.
    template_weights : (..., B, templates) counts, or None (every real template once).
    sample_weights : (..., B, samples) counts, or None (samples not resampled).
    statistics : names among :data:`STATISTICS`.
    by : the statistic the models' ``rank`` is taken on.

    Returns
    -------
    dict of arrays over the leading axes: for each statistic ``name``,
    ``name`` with the replicates last (``score``: ``(..., M, P, B)`` in
    ``score_dtype``; ``avgp`` ... ``rank``: ``(..., M, B)``; ``kendall_w``:
    ``(..., B)``), ``name_estimate`` (the statistic of the original data) and,
    with ``jackknife``, ``name_acceleration``.

    Notes
    -----
    Each chunk of slices stacks its weight rows (the original data, the B
    draws, then, with ``jackknife``, one leave-one-out row per sample and per
    template resampled) and computes every statistic for all rows at once.
    Sums run in float32 when the scores are integers (binary correctness) and
    every weighted sum stays below 2**24, so they are exact; in float64
    otherwise. Working memory is about ``budget`` bytes, or one slice's need
    if larger: about ``24 R M P`` bytes (float32) for R rows, M models and P
    templates, plus the outputs.
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    check_choice("by", by, BY)
    for name in statistics:
        check_choice("statistic", name, STATISTICS)
    if template_weights is None and sample_weights is None:
        raise InputTypeError("replicate_statistics: give template weights, sample weights or both")
    has_samples = sample_weights is not None
    over = ("both" if template_weights is not None else "samples") if has_samples else "templates"
    x = np.asarray(x)
    if not (has_samples and x.dtype.kind in "biu"):  # integers stay as they are (no copy)
        x = np.asarray(x, dtype=float)
    core = x.shape[-3:] if has_samples else x.shape[-2:]
    m, p = core[:2]
    n_boot = np.shape(template_weights if template_weights is not None else sample_weights)[-2]
    lead = np.broadcast_shapes(
        x.shape[: -len(core)],
        *(np.shape(w)[:-2] for w in (template_weights, sample_weights) if w is not None),
    )
    x = np.broadcast_to(x, (*lead, *core)).reshape(-1, *core)
    tw = (
        None
        if template_weights is None
        else np.broadcast_to(template_weights, (*lead, n_boot, p)).reshape(-1, n_boot, p)
    )
    sw = (
        None
        if sample_weights is None
        else np.broadcast_to(sample_weights, (*lead, n_boot, core[-1])).reshape(
            -1, n_boot, core[-1]
        )
    )
    work = np.float32 if exact_in_float32(x, core[-1] if has_samples else 1, p) else float
    wanted = set(statistics) | ({by} if "rank" in statistics else set())
    out = _Outputs(len(x), m, p, n_boot, statistics, jackknife, score_dtype)
    n_jack = (core[-1] if over != "templates" else 0) + (p if over != "samples" else 0)
    rows = 1 + n_boot + (n_jack if jackknife else 0)
    step = max(1, budget // max(1, rows * (24 * m * p + 16 * (p + core[-1]))))
    for start in range(0, len(x), step):  # chunks of slices, for memory
        chunk_slice = slice(start, start + step)
        chunk = (
            _Chunk.from_samples(x[chunk_slice], nan_policy, work)
            if has_samples
            else _Chunk(x[chunk_slice], nan_policy)
        )
        c = len(chunk.template_real)
        t_rows = [
            chunk.template_real[:, None, :],
            np.broadcast_to(chunk.template_real[:, None, :], (c, n_boot, p))
            if tw is None
            else tw[chunk_slice],
        ]
        s_rows = [chunk.sample_real[:, None, :], sw[chunk_slice]] if has_samples else []
        valid = family = None
        if jackknife:
            js, jt, valid, family = _jackknife_rows(
                chunk.sample_real if has_samples else None, chunk.template_real, over
            )
            s_rows += js
            t_rows += jt
        v = _stack_rows(t_rows, float)  # (c, P, R)
        sample_rows = _stack_rows(s_rows, work) if has_samples else None  # (c, S, R)
        values = _Values(x[chunk_slice], chunk, sample_rows, work)
        found = _statistics(values, v, chunk, wanted, by, ties, higher_is_better)
        out.put(chunk_slice, found, n_boot, valid, family)
        del chunk, values, found  # the next chunk's copies must not coexist with these
    return out.finish(lead)


def _statistics(values, v, chunk, wanted, by, ties, higher_is_better):
    """Every wanted statistic of every weight row of a chunk of slices."""
    found = {}
    if "score" in wanted:
        found["score"] = values
    if wanted & {"avgp", "maxp", "saturation", "cps"}:
        found.update(_metrics(values, v, chunk, higher_is_better))
    if "kendall_w" in wanted:
        found["kendall_w"] = _kendall_w(values, v, chunk, higher_is_better)
    if "rank" in wanted:
        found["rank"] = _leaderboard_ranks(found[by], ties, higher_is_better)
    return found


def sample_sums(x, rows, work=float):
    """Per-template sums of ``(..., M, P, S)`` scores, unweighted and under weight rows.

    ``rows`` are ``(..., B, S)`` bootstrap counts of the samples (zero on
    padding). Returns ``(total, count)``, each ``(..., M, P, 1 + B)`` in
    ``work``: the sums of the scores (missing as 0) and of the observed
    indicator, first over all samples, then under each row. Both are linear in
    the samples, so a cube larger than memory is summed one chunk at a time.
    """
    x = np.asarray(x, dtype=float)
    *lead, m, p, s = x.shape
    rows = np.asarray(rows)
    missing = np.isnan(x)
    filled = x.astype(work)
    filled[missing] = 0.0
    observed = np.logical_not(missing, out=missing)
    rows_t = np.swapaxes(rows, -1, -2).astype(work)  # (..., S, B)
    n_rows = 1 + rows.shape[-2]
    total = np.empty((*lead, m * p, n_rows), dtype=work)
    count = np.empty_like(total)
    filled = filled.reshape(*lead, m * p, s)
    observed = observed.reshape(*lead, m * p, s)
    total[..., 0] = filled.sum(-1)
    count[..., 0] = observed.sum(-1)
    np.matmul(filled, rows_t, out=total[..., 1:])
    # draws weigh only real samples, so a cell observed on all of them (or on none)
    # counts each row's weight sum (or 0): no second product needed. A draw's counts
    # sum to the number of real samples.
    n_real = rows[..., :1, :].sum(-1)[..., None]
    if ((count[..., :1] == n_real) | (count[..., :1] == 0)).all():
        weight_sums = rows.sum(-1, dtype=work)[..., None, :]  # (..., 1, B)
        np.multiply(count[..., :1] > 0, weight_sums, out=count[..., 1:])
    else:
        np.matmul(observed.astype(work), rows_t, out=count[..., 1:])
    shape = (*lead, m, p, n_rows)
    return total.reshape(shape), count.reshape(shape)


def replicate_statistics_from_sums(
    total,
    count,
    scale,
    template_weights=None,
    *,
    statistics=STATISTICS,
    by="avgp",
    ties="average",
    higher_is_better=True,
    nan_policy="propagate",
    integer=False,
    score_dtype=np.float32,
    budget=BUDGET,
):
    """:func:`replicate_statistics` over samples (and templates) from per-template sums.

    Parameters
    ----------
    total, count : (..., M, P, 1 + B) arrays from :func:`sample_sums` with the
        weight rows [real samples, draw 1, ..., draw B].
    scale : (..., 1 + B) each row's number of real samples (its weight sum).
    template_weights : (..., B, P) counts when templates are resampled too.
    integer : whether the scores are integers (exact sums; faster ranks).

    Returns
    -------
    As :func:`replicate_statistics` (without jackknife accelerations).
    """
    for name in statistics:
        check_choice("statistic", name, STATISTICS)
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    total, count = np.asarray(total), np.asarray(count)
    *lead, m, p, rows = total.shape
    n_boot = rows - 1
    total = total.reshape(-1, m, p, rows)
    count = count.reshape(-1, m, p, rows)
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (*lead, rows)).reshape(-1, rows)
    tw = (
        None
        if template_weights is None
        else np.broadcast_to(template_weights, (*lead, n_boot, p)).reshape(-1, n_boot, p)
    )
    wanted = set(statistics) | ({by} if "rank" in statistics else set())
    out = _Outputs(len(total), m, p, n_boot, statistics, False, score_dtype)
    step = max(1, budget // max(1, rows * 24 * m * p))
    for start in range(0, len(total), step):  # chunks of slices, for memory
        part = slice(start, start + step)
        chunk = _Chunk.from_sums(
            total[part, ..., 0], count[part, ..., 0], scale[part, 0], nan_policy
        )
        c = len(chunk.template_real)
        v = _stack_rows(
            [
                chunk.template_real[:, None, :],
                np.broadcast_to(chunk.template_real[:, None, :], (c, n_boot, p))
                if tw is None
                else tw[part],
            ],
            float,
        )
        values = _Values.from_sums(
            total[part].astype(np.float32 if integer else float),
            count[part],
            scale[part],
            chunk,
            integer,
        )
        found = _statistics(values, v, chunk, wanted, by, ties, higher_is_better)
        out.put(part, found, n_boot, None, None)
    return out.finish(lead)


class _Outputs:
    """Output arrays of :func:`replicate_statistics`, filled one chunk of slices at a time."""

    def __init__(self, n_slices, m, p, n_boot, statistics, jackknife, score_dtype):
        core = {"score": (m, p), "kendall_w": ()}
        self.statistics, self.jackknife = tuple(statistics), jackknife
        self.arrays = {}
        for name in self.statistics:
            shape = core.get(name, (m,))
            dtype = score_dtype if name == "score" else float
            self.arrays[name] = np.empty((n_slices, *shape, n_boot), dtype=dtype)
            self.arrays[f"{name}_estimate"] = np.empty((n_slices, *shape))
            if jackknife:
                self.arrays[f"{name}_acceleration"] = np.empty((n_slices, *shape))

    def put(self, chunk, found, n_boot, valid, family):
        for name in self.statistics:
            value = found[name]
            if isinstance(value, _Values):  # per-template scores, converted row block by row block
                value.scores(
                    slice(1, 1 + n_boot) if value.values.shape[-1] > 1 else slice(None),
                    out=self.arrays[name][chunk],
                )
                self.arrays[f"{name}_estimate"][chunk] = value.scores(slice(0, 1))[..., 0]
                jack = (
                    value.scores(slice(1 + n_boot, None))
                    if (self.jackknife and value.values.shape[-1] > 1)
                    else None
                )
            else:
                self.arrays[name][chunk] = value[..., 1 : 1 + n_boot]
                self.arrays[f"{name}_estimate"][chunk] = value[..., 0]
                jack = value[..., 1 + n_boot :] if self.jackknife else None
            if self.jackknife:
                if jack is None:  # fixed scores do not move: no skewness
                    self.arrays[f"{name}_acceleration"][chunk] = 0.0
                    continue
                ok = valid.reshape(valid.shape[0], *(1,) * (jack.ndim - 2), valid.shape[-1])
                self.arrays[f"{name}_acceleration"][chunk] = acceleration(jack, ok, family)

    def finish(self, lead):
        return {
            key: value.reshape(tuple(lead) + value.shape[1:]) for key, value in self.arrays.items()
        }
