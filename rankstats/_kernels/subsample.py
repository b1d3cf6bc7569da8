r"""Subsampling curves: how agreement grows with the number of units (templates or samples) kept.

Blocks are ``(..., units, objects)``: each unit (a template, or a sample) scores
the objects (models). For every slice, every draw and every subset size k the
kernel measures the k-unit subset against the whole block, vectorised over
slices, draws and k.

The subsets are nested random permutations: each draw orders a slice's units
at random (the argsort of uniform keys, units outside the pool last), and the
subset of size k is the first k units of that order. Each k-subset is then a
uniform draw without replacement, and cumulative sums along the order give
the k-unit means and rank sums of every k in one pass.
"""

from __future__ import annotations

import numpy as np

from . import tau_merge as _tm
from .ranking import check_choice, missing_among_present, rank_last, sum_over_tie_groups, warn_nan

#: Working memory per chunk of subset sizes, in bytes (see ``subsample_curves``).
BUDGET = 64 * 2**20
#: Means are compared as multiples of the slice's largest absolute score, rounded to this
#: many decimals: closer means tie, whatever the order they were summed in.
TIE_DECIMALS = 10
#: Models from which tau-b is counted by sort and merge rather than by pair signs; measured
#: by ``benchmarks/bench_scaling.py --crossover`` (see ``benchmarks/README.md``).
MERGE_FROM = 32


def draw_order(pool, keys):
    """Random orders of each slice's units: pool units first, in the order of their keys.

    ``pool`` is ``(..., units)`` bool, ``keys`` ``(..., draws, units)`` uniform
    numbers; returns ``(..., draws, units)`` unit indices.
    """
    return np.argsort(np.where(pool[..., None, :], keys, np.inf), axis=-1)


def _unit_ranks(x, present, poisoned_unit, ties, correction, higher_is_better):
    r"""Each unit's ranks of the objects (0 where absent) and its W denominator term.

    The term is :math:`\sum_i (r_{ij} - \bar r_j)^2`, so that W of any k units
    is :math:`S / (k \sum_j D_j)`: Kendall's tie-corrected denominator, as in
    :func:`rankstats._kernels.concordance.concordance`.
    """
    n = present.sum(-1).astype(float)[..., None]
    ranks, size = rank_last(
        np.where(present[..., None, :], x, np.nan), ties, higher_is_better, fill=0.0
    )
    if not correction:
        term = np.broadcast_to((n**3 - n) / 12.0, ranks.shape[:-1]).copy()
    elif ties == "average":
        term = (n**3 - n - sum_over_tie_groups(size, lambda t: t**3 - t)) / 12.0
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = ranks.sum(-1, keepdims=True) / n[..., None]
        term = (np.where(present[..., None, :], ranks - mean, 0.0) ** 2).sum(-1)
    ranks = np.where(poisoned_unit[..., None], np.nan, ranks)
    return ranks, np.where(poisoned_unit, np.nan, term)


def subsample_curves(
    x,
    keys,
    ks,
    quantiles,
    *,
    tau_target=0.9,
    probability=0.95,
    level=0.95,
    ties="average",
    correction=True,
    higher_is_better=True,
    nan_policy="propagate",
    with_w=True,
    statistic="subset_agreement",
    roles=("units", "objects"),
    budget=BUDGET,
    tau_kernel="auto",
):
    """Agreement of k-unit subsets with the whole block, for every k in ``ks``.

    Parameters
    ----------
    x : (..., units, objects) scores.
    keys : (..., draws, units) uniform random numbers that order the units.
    ks : (k,) subset sizes (positive integers, increasing).
    quantiles : (q,) probabilities for the summaries of tau and W over draws.
    roles : the words for units and objects in warnings.
    tau_kernel : ``"signs"``, ``"merge"`` or ``"auto"`` (merge from ``MERGE_FROM`` objects):
        how tau-b counts pairs; the results are the same.

    Returns
    -------
    dict of arrays over the leading axes: ``tau`` and ``w`` (``(..., k, draws)``;
    W only with ``with_w``), ``tau_quantile``, ``w_quantile`` (``(..., k, q)``),
    ``p_tau``, ``tau_undefined``, ``rank_width_mean`` (``(..., k)``),
    ``rank_lower``, ``rank_upper``, ``rank_width`` (``(..., k, objects)``),
    ``needed`` and ``n_units`` (``(...)``).

    Notes
    -----
    Working memory is about ``budget`` bytes per chunk of subset sizes, plus
    the orders (``8 * draws * units`` bytes per slice) and the outputs.
    """
    check_choice("ties", ties, ("average", "min", "max", "dense", "ordinal"))
    x, keys = np.asarray(x, dtype=float), np.asarray(keys, dtype=float)
    ks = np.asarray(ks).reshape(-1, np.shape(ks)[-1])[0].astype(np.int64)
    quantiles = np.asarray(quantiles, dtype=float).reshape(-1, np.shape(quantiles)[-1])[0]
    lead = np.broadcast_shapes(x.shape[:-2], keys.shape[:-2])
    t, m = x.shape[-2:]
    r = keys.shape[-2]
    x = np.broadcast_to(x, (*lead, t, m)).reshape(-1, t, m)
    keys = np.broadcast_to(keys, (*lead, r, t)).reshape(-1, r, t)

    present, units_present, incomplete = missing_among_present(x, nan_policy, statistic)
    pool = units_present & ~incomplete if nan_policy == "omit" else units_present
    poisoned_unit = incomplete & pool  # only under "propagate"
    n_units = pool.sum(-1)
    n_objects = present.sum(-1)
    keep = present[:, None, :] & pool[..., None]
    values = np.where(keep, x, 0.0)  # holes under "propagate" stay NaN
    scale = np.max(np.abs(np.where(keep, x, 0.0)), axis=(-2, -1), initial=0.0, where=~np.isnan(x))
    scale = np.where(scale > 0, scale, 1.0)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = values.sum(-2) / n_units[:, None]  # (L, m)
    columns = [values]
    if with_w:
        ranks, term = _unit_ranks(x, present, poisoned_unit, ties, correction, higher_is_better)
        columns += [np.where(pool[..., None], ranks, 0.0), np.where(pool, term, 0.0)[..., None]]
    columns.append(poisoned_unit[..., None].astype(float))
    columns = np.concatenate(columns, axis=-1)  # (L, t, c)
    order = draw_order(pool, keys)
    del keys

    check_choice("tau_kernel", tau_kernel, ("auto", "signs", "merge"))
    pairs = _Pairs(reference, scale, present, higher_is_better, tau_kernel, budget)
    out = _Outputs(len(x), r, ks, m, quantiles, with_w)
    carry = np.zeros((len(x), r, columns.shape[-1]))
    cost = len(x) * r * (columns.shape[-1] * 8 + m * 40 + pairs.count * 6)
    step = max(1, budget // max(cost, 1))
    for start in range(0, int(ks.max()), step):
        stop = min(int(ks.max()), start + step)
        block = np.take_along_axis(columns[:, None], order[:, :, start:stop, None], axis=-2)
        for i in range(1, stop - start):  # np.cumsum along the sizes, several times faster
            np.add(block[:, :, i], block[:, :, i - 1], out=block[:, :, i])
        block += carry[:, :, None]
        carry = block[:, :, -1]
        chosen = np.flatnonzero((ks > start) & (ks <= stop))
        if not chosen.size:
            continue
        sums = block[:, :, ks[chosen] - 1 - start]  # (L, r, kk, c)
        k = ks[chosen].astype(float)
        poisoned = sums[..., -1] > 0
        means = sums[..., :m] / k[:, None]
        means = np.where((k == n_units[:, None])[:, None, :, None], reference[:, None, None], means)
        beyond = (k > n_units[:, None])[:, None, :]  # (L, 1, kk)
        ranks, tau = pairs.ranks_tau(means)  # average ranks: tau-b counts ties as ties
        if ties != "average":
            ranks = pairs.ranks(means, ties)
        tau[poisoned | beyond] = np.nan
        ranks[poisoned | beyond] = np.nan
        invalid = beyond[:, 0] | poisoned.any(1)  # (L, kk): out of range, or missing data
        out.put(chosen, "tau", tau)
        out.put_ranks(chosen, ranks, level, invalid)
        if with_w:
            w = _w(sums[..., m : 2 * m], sums[..., 2 * m], k, present, n_objects)
            w[poisoned | beyond] = np.nan
            out.put(chosen, "w", w)
        out.invalid[:, chosen] = invalid
        out.undefined[:, chosen] = np.where(invalid, np.nan, np.isnan(tau).mean(1))
        out.p_tau[:, chosen] = np.where(invalid, np.nan, (tau >= tau_target).mean(1))

    undefined_reference = pairs.undefined | (n_units == 0)
    has_data = present.any(-1)
    units, objects = roles
    warn_nan(
        statistic,
        pairs.constant & has_data & ~pairs.poisoned,
        f"the ranking by the mean over all {units} is constant (all {objects} tie)",
    )
    warn_nan(statistic, (n_objects < 2) & has_data, f"fewer than two {objects}")
    result = out.finish(undefined_reference, probability, with_w)
    result["n_units"] = n_units.astype(float)
    return {key: value.reshape((*lead, *value.shape[1:])) for key, value in result.items()}


def _w(rank_sums, term_sums, k, present, n_objects):
    """Kendall's W of each k-unit subset from its rank sums and summed denominator terms."""
    n = n_objects[:, None, None].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = rank_sums.sum(-1) / n
        spread = np.where(present[:, None, None], rank_sums - mean[..., None], 0.0)
        denominator = k * term_sums
        w = np.maximum((spread**2).sum(-1) / denominator, 0.0)
    w = np.where((w > 1.0) & (w < 1.0 + 1e-12), 1.0, w)
    return np.where((k < 2) | (n < 2) | ~(denominator > 0), np.nan, w)


class _Pairs:
    """The reference ranking, and tau-b of many rankings against it.

    Two ways to count the pairs, with the same integers: the pair signs
    (``"signs"``: every pair i < j expanded, O(m^2) per ranking, fast for few
    models) and sort-and-merge (``"merge"``: :mod:`.tau_merge`, O(m log m)).
    Both start from ranks doubled, so that average ranks are integers: tau-b
    depends only on the order of the values. The rankings are compared in
    chunks of at most ``budget`` bytes of working memory.
    """

    def __init__(self, reference, scale, present, higher_is_better, kernel="auto", budget=BUDGET):
        self.scale, self.higher_is_better = scale, higher_is_better
        self.present = present
        self.budget = budget
        m = reference.shape[-1]
        if kernel == "auto":
            kernel = "merge" if m >= MERGE_FROM else "signs"
        self.merge = kernel == "merge"
        self.poisoned = np.isnan(reference).any(-1) & present.any(-1)
        n_present = present.sum(-1)
        self.n0 = n_present * (n_present - 1) // 2
        reference_ranks = self.ranks(np.where(present, reference, 0.0))
        if self.merge:
            self.count = 0
            self.codes = self._doubled(reference_ranks)
            tied = _tm.pair_counts(self.codes, self.codes, present, terms=False)["x_tie_pairs"]
            tied = tied.astype(np.int64)
            self.ref_tied = tied
            # the low bits of the sort keys of _sorted_counts: each object's reference code
            # (absent objects: one above all) above its column
            self.n_present = n_present
            top = int(self.codes.max(initial=0)) + 1
            self.column_bits = max(1, int(m - 1).bit_length())
            self.code_bits = top.bit_length()
            reference_codes = np.where(present, self.codes.astype(np.int64), top)
            self.low = (reference_codes << self.column_bits) | np.arange(m)
        else:
            self.i, self.j = np.triu_indices(m, 1)
            self.count = self.i.size
            self.valid = present[:, self.i] & present[:, self.j]
            sign, tied = self._signs(reference_ranks, self.valid)
            self.weighted = sign * self.valid  # (L, P)
        self.constant = (self.n0 > 0) & (tied == self.n0)
        self.undefined = self.constant | (self.n0 == 0) | self.poisoned
        self.ref_room = self.n0 - tied

    def ranks(self, means, ties="average"):
        """Ranks of the means (rank 1 best; absent objects and NaN get no rank)."""
        shape = (-1, *([1] * (means.ndim - 1)))
        with np.errstate(invalid="ignore"):
            key = np.round(means / self.scale.reshape(shape), TIE_DECIMALS)
        present = self.present.reshape(self.present.shape[0], *([1] * (means.ndim - 2)), -1)
        return rank_last(np.where(present, key, np.nan), ties, self.higher_is_better)[0]

    @staticmethod
    def _doubled(ranks):
        kind = np.int16 if 2 * ranks.shape[-1] < np.iinfo(np.int16).max else np.int32
        return np.where(np.isnan(ranks), 0.0, 2.0 * ranks).astype(kind)

    def _signs(self, ranks, valid):
        """Pair signs (int8) and the number of tied valid pairs, per ranking."""
        doubled = self._doubled(ranks)
        difference = doubled[..., self.i] - doubled[..., self.j]
        tied = ((difference == 0) & valid).sum(-1)
        return np.sign(difference).astype(np.int8), tied

    def _counts(self, ranks, rows):
        """C - D against the reference and tied pairs of ``(l, n, objects)`` rankings."""
        if self.merge:
            counts = _tm.pair_counts(
                self.codes[rows, None],
                self._doubled(ranks),
                self.present[rows, None],
                terms=False,
                x_tie_pairs=self.ref_tied[rows, None],
            )
            return counts["con_minus_dis"].astype(np.int64), counts["y_tie_pairs"]
        sign, tied = self._signs(ranks, self.valid[rows, None])
        numerator = (sign * self.weighted[rows, None]).sum(-1, dtype=np.int64)
        return numerator, tied

    def _sorted_counts(self, means, rows):
        """Average ranks, C - D against the reference and tied pairs of ``(l, n, objects)`` means.

        One integer sort per ranking does it all. An object's key holds, from
        the highest bits down, its rounded mean (the integer :meth:`ranks`
        compares, as a multiple of ``10**-TIE_DECIMALS``), its code in the
        reference and its column. The sorted keys give the average ranks and
        the tie groups; objects tied on the mean follow the reference's order,
        so the reference codes read in key order have as inversions exactly
        the discordant pairs (Knight 1966, with the roles of x and y swapped).
        Returns None where the keys would not fit in 63 bits.
        """
        m = means.shape[-1]
        # the integer np.round(means / scale, TIE_DECIMALS) computes before dividing it back
        with np.errstate(invalid="ignore"):
            key = means / self.scale[rows].reshape(-1, 1, 1)
        key *= 10.0**TIE_DECIMALS
        np.rint(key, out=key)
        if self.higher_is_better:
            np.negative(key, out=key)
        key[np.isnan(key)] = 0.0  # a poisoned draw: its tau and ranks become NaN
        offset = 2**34  # |means| <= scale: |key| <= 10**10 < offset
        shift = self.code_bits + self.column_bits
        if shift > 62 - 36 or not (np.abs(key) < offset).all():
            return None
        code = key.astype(np.int64)
        del key
        code += offset
        np.copyto(code, 2 * offset, where=~self.present[rows, None])  # absent objects last
        code <<= shift
        code |= self.low[rows, None]
        code.sort(axis=-1)
        position = np.arange(m)  # int64: NumPy accumulates int32 several times slower
        used = position < self.n_present[rows, None, None]
        column = code & ((1 << self.column_bits) - 1)
        x = ((code >> self.column_bits) & ((1 << self.code_bits) - 1)).astype(np.int32)
        code >>= shift
        new = np.ones(code.shape, dtype=bool)  # the first of a tie group
        np.not_equal(code[..., 1:], code[..., :-1], out=new[..., 1:])
        del code
        first = np.maximum.accumulate(np.where(new, position, 0), axis=-1)
        end = np.ones(new.shape, dtype=bool)
        end[..., :-1] = new[..., 1:]
        last = np.minimum.accumulate(np.where(end, position, m)[..., ::-1], axis=-1)[..., ::-1]
        average = (first + last) * 0.5 + 1.0  # = first rank + (group size - 1) / 2
        del last
        tied = np.where(used, position - first, 0).sum(-1, dtype=np.int64)  # sum of t(t-1)/2
        ranks = np.empty(means.shape)
        np.put_along_axis(ranks, column, average, axis=-1)
        np.copyto(ranks, np.nan, where=~self.present[rows, None])
        del average, column
        new[..., 1:] |= x[..., 1:] != x[..., :-1]  # runs tied on both
        first = np.maximum.accumulate(np.where(new, position, 0), axis=-1)
        both = np.where(used, position - first, 0).sum(-1, dtype=np.int64)
        del first, new
        numerator = (
            self.n0[rows, None] - self.ref_tied[rows, None] - tied + both - 2 * _tm.inversions(x)
        )
        return ranks, numerator, tied

    def _chunks(self, rankings, per_ranking):
        """(slices, rankings) index pairs of chunks within the memory budget."""
        slices = len(self.n0)
        rows = max(1, self.budget // per_ranking)  # rankings per chunk
        slice_step = max(1, rows // rankings)
        row_step = min(rows, rankings)
        for first in range(0, slices, slice_step):
            for start in range(0, rankings, row_step):
                yield (
                    np.arange(slices)[first : first + slice_step],
                    slice(first, first + slice_step),
                    slice(start, start + row_step),
                )

    def ranks_tau(self, means):
        """Average ranks of ``(L, draws, kk, objects)`` means and tau-b against the reference.

        The same numbers as :meth:`ranks` followed by :meth:`tau`; with the
        merge kernel, in one sort per ranking.
        """
        if not self.merge:
            ranks = self.ranks(means)
            return ranks, self.tau(ranks)
        slices, draws, kk, m = means.shape
        flat = means.reshape(slices, draws * kk, m)
        ranks = np.empty(flat.shape)
        numerator = np.empty(flat.shape[:-1], dtype=np.int64)
        tied = np.empty(flat.shape[:-1], dtype=np.int64)
        for rows, chosen, part in self._chunks(flat.shape[1], m * 160):
            counted = self._sorted_counts(flat[chosen, part], rows)
            if counted is None:
                ranks[chosen, part] = self.ranks(flat[chosen, part])
                numerator[chosen, part], tied[chosen, part] = self._counts(
                    ranks[chosen, part], rows
                )
            else:
                ranks[chosen, part], numerator[chosen, part], tied[chosen, part] = counted
        ranks = ranks.reshape(means.shape)
        return ranks, self._tau(
            numerator.reshape(slices, draws, kk), tied.reshape(slices, draws, kk)
        )

    def tau(self, ranks):
        """Tau-b of ``(L, draws, kk, objects)`` rankings against the reference."""
        slices, draws, kk, m = ranks.shape
        flat = ranks.reshape(slices, draws * kk, m)
        numerator = np.empty(flat.shape[:-1], dtype=np.int64)
        tied = np.empty(flat.shape[:-1], dtype=np.int64)
        per_ranking = m * 120 if self.merge else m * 8 + self.count * 6
        for rows, chosen, part in self._chunks(flat.shape[1], per_ranking):
            numerator[chosen, part], tied[chosen, part] = self._counts(flat[chosen, part], rows)
        return self._tau(numerator.reshape(slices, draws, kk), tied.reshape(slices, draws, kk))

    def _tau(self, numerator, tied):
        """Tau-b from C - D and the tied pairs of each ranking, NaN where undefined."""
        room = (self.n0[:, None, None] - tied) * self.ref_room[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.clip(numerator / np.sqrt(room), -1.0, 1.0)
        tau[(room <= 0) | self.undefined[:, None, None]] = np.nan
        return tau


class _Outputs:
    """The kernel's output arrays, filled chunk by chunk of subset sizes."""

    def __init__(self, slices, draws, ks, m, quantiles, with_w):
        shape = (slices, ks.size)
        self.ks, self.quantiles = ks, quantiles
        self.tau = np.full((*shape, draws), np.nan)
        self.w = np.full((*shape, draws), np.nan) if with_w else None
        self.p_tau = np.full(shape, np.nan)
        self.invalid = np.ones(shape, dtype=bool)
        self.undefined = np.full(shape, np.nan)
        self.lower = np.full((*shape, m), np.nan)
        self.upper = np.full((*shape, m), np.nan)

    def put(self, chosen, name, values):
        getattr(self, name)[:, chosen] = np.moveaxis(values, 1, -1)

    def put_ranks(self, chosen, ranks, level, invalid):
        # np.quantile's "lower" and "higher" methods, by sorting along the draws: NumPy's
        # SIMD sort of rows of a few hundred draws took a quarter of np.partition's time
        tail, last = (1.0 - level) / 2.0, ranks.shape[1] - 1
        low, high = int(np.floor(tail * last)), int(np.ceil((1.0 - tail) * last))
        ordered = np.moveaxis(ranks, 1, -1).copy()  # draws last and contiguous: faster
        ordered.sort(axis=-1)
        lower, upper = ordered[..., low], ordered[..., high]
        self.lower[:, chosen] = np.where(invalid[..., None], np.nan, lower)
        self.upper[:, chosen] = np.where(invalid[..., None], np.nan, upper)

    def finish(self, undefined_reference, probability, with_w):
        self.tau[undefined_reference] = np.nan
        self.p_tau[undefined_reference] = np.nan
        self.undefined[undefined_reference] = np.nan
        reached = self.p_tau >= probability
        first = np.argmax(reached, axis=-1)
        needed = np.where(reached.any(-1), self.ks[first], np.nan)
        width = self.upper - self.lower
        defined = ~np.isnan(width)
        with np.errstate(invalid="ignore", divide="ignore"):
            width_mean = np.where(defined, width, 0.0).sum(-1) / defined.sum(-1)
        out = {
            "tau_quantile": _quantiles(
                self.tau, self.quantiles, self.invalid | undefined_reference[:, None]
            )
        }
        if with_w:
            out["w"] = self.w
            out["w_quantile"] = _quantiles(self.w, self.quantiles, self.invalid)
        out.update(
            {
                "tau": self.tau,
                "p_tau": self.p_tau,
                "tau_undefined": self.undefined,
                "rank_lower": self.lower,
                "rank_upper": self.upper,
                "rank_width": width,
                "rank_width_mean": width_mean,
                "needed": needed,
            }
        )
        return out


def _quantiles(draws, quantiles, invalid):
    """Quantiles over the defined draws (NaN skipped; NumPy's default, linear method).

    NaN where the size is out of range or the draws are poisoned by missing data.
    """
    ordered = np.sort(draws, axis=-1)  # NaN last
    count = (~np.isnan(draws)).sum(-1)[..., None]  # (L, k, 1)
    position = quantiles * np.maximum(count - 1, 0)  # (L, k, q)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(count - 1, 0))
    low = np.take_along_axis(ordered, below, axis=-1)
    high = np.take_along_axis(ordered, above, axis=-1)
    values = low + (high - low) * (position - below)
    return np.where(invalid[..., None] | (count == 0), np.nan, values)


def item_means(x):
    """Each sample's mean over the present templates of ``(..., templates, samples, objects)``.

    Padded templates (missing for every sample and object) drop out; a
    missing cell of a present template leaves NaN, which the sampling kernel
    treats as a missing value of that sample.
    """
    x = np.asarray(x, dtype=float)
    present = ~np.isnan(x).all(axis=(-2, -1))
    count = present.sum(-1).astype(float)[..., None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present[..., None, None], x, 0.0).sum(-3) / count


def samples_curves(x, keys, ks, quantiles, **kwargs):
    """:func:`subsample_curves` over the samples of ``(..., templates, samples, objects)``."""
    return subsample_curves(item_means(x), keys, ks, quantiles, **kwargs)


# --------------------------------------------------------------------------- replication curves


def _tau_between(a, b, present, kernel):
    """Tau-b between two rankings ``a``, ``b`` ``(L, n, objects)`` of integer keys, per row.

    NaN where either ranking ties every present object. ``kernel``: ``"signs"``
    (every pair, O(m^2)) or ``"merge"`` (:mod:`.tau_merge`, O(m log m)); the
    same integers either way.
    """
    valid = present[:, None, :]
    if kernel == "merge":
        codes_a = _tm.dense_codes(a, valid)
        codes_b = _tm.dense_codes(b, valid)
        counts = _tm.pair_counts(codes_a, codes_b, valid, terms=False)
        numerator = counts["con_minus_dis"]
        tied_a, tied_b = counts["x_tie_pairs"], counts["y_tie_pairs"]
        n = present.sum(-1)[:, None].astype(float)
    else:
        m = a.shape[-1]
        i, j = np.triu_indices(m, 1)
        pair = present[:, None, i] & present[:, None, j]
        sign_a = np.sign(a[..., i] - a[..., j]).astype(np.int8)
        sign_b = np.sign(b[..., i] - b[..., j]).astype(np.int8)
        numerator = (sign_a * sign_b * pair).sum(-1, dtype=np.int64)
        tied_a = ((sign_a == 0) & pair).sum(-1)
        tied_b = ((sign_b == 0) & pair).sum(-1)
        n = present.sum(-1)[:, None].astype(float)
    n0 = n * (n - 1) / 2
    room = (n0 - tied_a) * (n0 - tied_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.clip(numerator / np.sqrt(room), -1.0, 1.0)
    return np.where(room > 0, tau, np.nan)


def _predictive_picks(pool, n_units, keys, reach):
    """The two subsets' units ``(L, r, reach)`` each, drawn from a resample of the pool.

    ``keys (L, r, 3, units)``: the first stream resamples the ``n`` pool units
    with replacement, the others pick each subset's units from that resample;
    nested in k (the first k picks are the subset of size k).
    """
    pool_units = np.argsort(~pool, axis=-1, kind="stable")  # (L, units): the pool first
    n = n_units[:, None, None]

    def position(u):  # uniform numbers to positions 0..n-1 (0 for an empty pool)
        return np.minimum(np.floor(u * n), np.maximum(n - 1, 0)).astype(np.intp)

    resample = np.take_along_axis(
        pool_units[:, None, :], position(keys[:, :, 0]), axis=-1
    )  # (L, r, units); only the first n of each row are ever picked
    return tuple(
        np.take_along_axis(resample, position(keys[:, :, stream, :reach]), axis=-1)
        for stream in (1, 2)
    )


def replication_counts(
    x,
    keys,
    ks,
    *,
    tau_target=0.9,
    higher_is_better=True,
    nan_policy="propagate",
    statistic="templates_needed",
    budget=BUDGET,
    tau_kernel="auto",
    design="disjoint",
):
    r"""How often two random k-unit reruns rank the objects alike, for every k.

    Parameters
    ----------
    x : (..., units, objects) scores.
    keys : (..., draws, units) uniform random numbers that order the units
        (``design="disjoint"``), or (..., draws, 3, units) that pick them
        (``design="predictive"``).
    ks : (k,) subset sizes (positive integers, increasing).
    tau_target : the tau-b a pair of rankings must reach.
    tau_kernel : ``"signs"``, ``"merge"`` or ``"auto"`` (merge: with both rankings drawn,
        sorting and merging was about 7 times faster than the pair signs already at 16
        objects).
    design : ``"predictive"`` or ``"disjoint"`` (see Notes).

    Returns
    -------
    dict of arrays over the leading axes: ``reached`` (``(..., k)``: draws whose
    two subsets' rankings have tau-b ≥ ``tau_target``; NaN where k is beyond
    half the pool or a draw meets a missing value), ``tau_mean`` (``(..., k)``,
    the mean tau-b over the draws, an undefined tau counted as 0), ``n_units``
    and ``k_max`` (``(...)``, half the pool, rounded down).

    Notes
    -----
    ``design="disjoint"``: each draw orders the pool at random (as
    :func:`subsample_curves`); the first subset of size k is the units at the
    first k even positions of the order, the second those at the first k odd
    positions. Both are uniform draws without replacement and disjoint, so a
    subset never shares a unit with the ranking it is compared with.

    ``design="predictive"``: each draw first resamples the pool of n units
    with replacement (``keys[..., 0, :n]``), then takes each subset's k units
    with replacement from that resample (``keys[..., 1, :]`` and
    ``keys[..., 2, :]``), independently of each other. Disjoint subsets of one
    pool understate how far two reruns with fresh units fall apart: their
    means are anti-correlated around the pool's mean (covariance
    :math:`-\sigma^2/n`), and the pool's mean is itself an estimate of the
    population's (variance :math:`\sigma^2/n`). The double resample gives the
    two subsets' means the spread of fresh reruns around the pool's mean
    plus that of the pool's mean around the population's (the bootstrap's
    predictive distribution); on ties and discrete scores it keeps the units'
    own values. Each
    ranking is by the mean over its units; means closer than ``10**-10``
    times the slice's largest absolute score tie. A draw whose rankings tie
    every object (tau-b undefined) does not reach the target.
    """
    check_choice("design", design, ("predictive", "disjoint"))
    x, keys = np.asarray(x, dtype=float), np.asarray(keys, dtype=float)
    ks = np.asarray(ks).reshape(-1).astype(np.int64)
    streams = () if design == "disjoint" else (3,)
    lead = np.broadcast_shapes(x.shape[:-2], keys.shape[: keys.ndim - 2 - len(streams)])
    t, m = x.shape[-2:]
    r = keys.shape[-2 - len(streams)]
    x = np.broadcast_to(x, (*lead, t, m)).reshape(-1, t, m)
    keys = np.broadcast_to(keys, (*lead, r, *streams, t)).reshape(-1, r, *streams, t)
    present, units_present, incomplete = missing_among_present(x, nan_policy, statistic)
    pool = units_present & ~incomplete if nan_policy == "omit" else units_present
    poisoned_unit = incomplete & pool
    n_units = pool.sum(-1)
    k_max = n_units // 2
    keep = present[:, None, :] & pool[..., None]
    values = np.where(keep, x, 0.0)
    scale = np.max(np.abs(values), axis=(-2, -1), initial=0.0, where=~np.isnan(values))
    scale = np.where(scale > 0, scale, 1.0)[:, None, None, None]
    columns = np.concatenate([values, poisoned_unit[..., None].astype(float)], axis=-1)
    reach = min(t // 2, int(ks.max(initial=1)))
    if design == "disjoint":
        order = draw_order(pool, keys)[..., : 2 * reach]
        halves = (order[..., 0::2], order[..., 1::2])  # (L, r, kmax) each: disjoint, nested in k
        del order
    else:
        halves = _predictive_picks(pool, n_units, keys, reach)
    del keys
    check_choice("tau_kernel", tau_kernel, ("auto", "signs", "merge"))
    kernel = "merge" if tau_kernel == "auto" else tau_kernel  # merge: faster from 2 models
    flat_columns = columns.reshape(-1, columns.shape[-1])
    offset = (np.arange(len(x)) * t)[:, None, None]
    reached = np.full((len(x), ks.size), np.nan)
    tau_mean = np.full((len(x), ks.size), np.nan)
    inside = ks[None, :] <= k_max[:, None]
    per_k = (
        len(x)
        * r
        * (
            m * (120 if kernel == "merge" else 24)
            + (m + 1) * 16
            + (0 if kernel == "merge" else m * m * 2)
        )
    )
    step = max(1, budget // max(per_k, 1))
    top = min(int(ks.max(initial=0)), halves[1].shape[-1])
    carry = [np.zeros((len(x), r, m + 1)), np.zeros((len(x), r, m + 1))]
    for start in range(0, top, step):
        stop = min(top, start + step)
        blocks = []
        for h, half in enumerate(halves):
            block = np.take(flat_columns, half[:, :, start:stop] + offset, axis=0)
            block[:, :, 0] += carry[h]
            for i in range(1, stop - start):  # np.cumsum along the sizes, several times faster
                np.add(block[:, :, i], block[:, :, i - 1], out=block[:, :, i])
            carry[h] = block[:, :, -1]
            blocks.append(block)
        chosen = np.flatnonzero((ks > start) & (ks <= stop))
        if not chosen.size:
            continue
        k = ks[chosen]
        first, second = (block[:, :, k - 1 - start] for block in blocks)  # (L, r, kk, c)
        poisoned = (first[..., -1] > 0) | (second[..., -1] > 0)
        factor = 10.0**TIE_DECIMALS / k[:, None]
        with np.errstate(invalid="ignore"):
            a = np.rint(first[..., :m] / scale * factor)
            b = np.rint(second[..., :m] / scale * factor)
        del blocks, first, second
        if higher_is_better is False:
            a, b = -a, -b
        usable = present[:, None, None] & ~np.isnan(a) & ~np.isnan(b)
        a = np.where(usable, a, 0.0)
        b = np.where(usable, b, 0.0)
        flat = (len(x), r * k.size, m)
        tau = _tau_between(a.reshape(flat), b.reshape(flat), present, kernel)
        tau = tau.reshape(len(x), r, k.size)
        ok = ~poisoned.any(1) & inside[:, chosen]  # (L, kk)
        with np.errstate(invalid="ignore"):
            hit = (tau >= tau_target).sum(1).astype(float)
        reached[:, chosen] = np.where(ok, hit, np.nan)
        tau_mean[:, chosen] = np.where(ok, np.nan_to_num(tau).mean(1), np.nan)
    out = {
        "reached": reached,
        "tau_mean": tau_mean,
        "n_units": n_units.astype(float),
        "k_max": k_max.astype(float),
    }
    return {key: value.reshape((*lead, *value.shape[1:])) for key, value in out.items()}
