r"""Confidence sets for ranks from paired bootstrap replicates (Mogstad et al. 2024).

Objects (models) lie along axis -2 of the replicates ``(..., objects, B)``, the
replicates along the last axis; the estimates are ``(..., objects)``. Every
leading position is one ranking (a task), computed at once.

For objects j and k with estimates :math:`\hat\theta` and replicates
:math:`\theta^*`, the standardised difference is
:math:`t_{jk} = (\hat\theta_j - \hat\theta_k) / \hat\sigma_{jk}`, with
:math:`\hat\sigma_{jk}` the standard deviation of :math:`\theta^*_j - \theta^*_k`
over the replicates. The hypothesis :math:`H_{jk}: \theta_j \le \theta_k` is
rejected (j is *surely better* than k) when :math:`t_{jk} > c`, where c is the
``confidence_level`` quantile over the replicates of

.. math:: \max_{(j, k) \in I}
          \frac{(\theta^*_j - \theta^*_k) - (\hat\theta_j - \hat\theta_k)}{\hat\sigma_{jk}},

I being the hypotheses still in play. The *simultaneous* family holds every
ordered pair (so the first step's c is the max-|t| critical value over all
pairs); the *marginal* family of object j holds the pairs (j, k) and (k, j)
only. The stepwise refinement (Romano and Wolf 2005; the ``stepdown=TRUE``
procedure of the csranks R package) removes the rejected hypotheses from I,
recomputes c over the rest, and repeats until nothing new is rejected; a
single step stops after the first. Object j's rank set is then

.. math:: \Bigl[\,1 + \#\{k : H_{kj}\text{ rejected}\},\;
          M - \#\{k : H_{jk}\text{ rejected}\}\Bigr]

among the M objects present. When no true hypothesis is rejected, which
happens with probability at least ``confidence_level`` (asymptotically), every
object's set covers its true rank under any tie rule (between the ``min`` and
the ``max`` rank), simultaneously for all objects (simultaneous family) or for
each object on its own (marginal family).

:func:`normal_rank_sets` runs the same procedure on estimates of known
covariance :math:`\Sigma` (published estimates with their standard errors):
:math:`\hat\sigma_{jk}^2 = \Sigma_{jj} + \Sigma_{kk} - 2\Sigma_{jk}`, and the
critical values from draws of :math:`N(0, \Sigma)`, as the csranks R package
computes them.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..errors import OptionError
from .ranking import warn_nan

#: Bytes of per-replicate pair arrays ``(objects, objects, replicates)`` held at a time.
BUDGET = 64 * 2**20
#: Seed of the standard normal draws of :func:`gaussian_draws`.
GAUSSIAN_SEED = 20240101
#: Relative size below which a difference (or its standard deviation) counts as zero.
TOLERANCE = 1e-10


def _check(confidence_level):
    if not (isinstance(confidence_level, (float, int)) and 0 < confidence_level < 1):
        raise OptionError(
            f"rank sets: confidence_level={confidence_level!r} is not allowed; "
            "confidence_level must be a number strictly between 0 and 1"
        )


class _Pairs:
    """The pairwise quantities of a chunk of rankings: t statistics and scaled deviations.

    ``better`` is ``(s, M, B)`` replicates and ``estimate`` ``(s, M)``, oriented so
    that larger is better, with absent objects already zeroed.
    """

    def __init__(self, replicates, estimate, present, dof, gaussian):
        n = replicates.shape[-1]
        spread = replicates - replicates.mean(-1, keepdims=True)
        if gaussian:  # N(0, covariance of the replicates): spread times standard normals
            self.deviation = gaussian_draws(spread)
        else:
            self.deviation = replicates - estimate[..., None]  # centred at the estimate
        # a matrix product (BLAS), made exactly symmetric as _Sorted needs it
        covariance = spread @ np.swapaxes(spread, 1, 2)
        # held by the object alone, so that _standardise frees it once it is used
        self._covariance = (covariance + np.swapaxes(covariance, 1, 2)) / (2 * (n - 1))
        del covariance
        self._standardise(estimate, present, dof)

    @classmethod
    def normal(cls, held, deviation, estimate, present):
        """The pairs of estimates of known covariance, with draws ``deviation``.

        ``held`` is a list holding the ``(s, M, M)`` covariance alone, which
        is taken from it (so that it is freed once used) and must be exactly
        symmetric; ``deviation`` is ``(s, M, B)`` draws of N(0, covariance)
        (see :func:`normal_rank_sets`). No small-sample correction.
        """
        self = cls.__new__(cls)
        self.deviation = deviation
        self._covariance = held.pop()
        self._standardise(estimate, present, np.full(len(estimate), np.nan))
        return self

    def _standardise(self, estimate, present, dof):
        """The t statistics and inverse standard errors of every pair from ``self._covariance``.

        The covariance is worked in place and released.
        """
        covariance = self._covariance
        del self._covariance
        self.dof = dof
        scale = np.max(np.abs(np.where(present, estimate, 0.0)), axis=-1, initial=0.0)
        scale = np.where(scale > 0, scale, 1.0)[:, None, None]
        variance = np.diagonal(covariance, axis1=-2, axis2=-1).copy()
        # (s, M, M) arrays are worked in place: with thousands of objects each new one
        # costs more to allocate than the arithmetic on it. The operations and their
        # order are those of the formulas in the comments, so every value is the same.
        # se = sqrt(max(var_j + var_k - 2 cov_jk, 0))
        se = np.add(variance[:, :, None], variance[:, None, :])
        covariance *= 2.0
        se -= covariance
        del covariance
        np.maximum(se, 0.0, out=se)
        np.sqrt(se, out=se)
        degenerate = se <= TOLERANCE * scale  # the difference never moves
        # inverse_se = 1 / se, 0 where degenerate
        se[degenerate] = 1.0
        self.inverse_se = np.divide(1.0, se, out=se)
        self.inverse_se[degenerate] = 0.0
        # difference = est_j - est_k, 0 where within the tolerance
        difference = np.subtract(estimate[:, :, None], estimate[:, None, :])
        difference[np.abs(difference) <= TOLERANCE * scale] = 0.0
        # t = difference / se, +-inf where degenerate (NaN, then 0, for no difference)
        with np.errstate(divide="ignore", invalid="ignore"):
            infinite = np.sign(difference[degenerate]) * np.inf
            t = np.multiply(difference, self.inverse_se, out=difference)
            t[degenerate] = infinite
        t[np.isnan(t)] = 0.0
        # the bootstrap variance is a plug-in one (divisor n for n units): t as a t test's
        inflation = np.where(np.isnan(dof), 1.0, np.sqrt((dof + 1.0) / np.fmax(dof, 1e-300)))
        t /= inflation[:, None, None]
        self.t = t
        pair = present[:, :, None] & present[:, None, :]
        m = present.shape[-1]
        self.pairs = pair & ~np.eye(m, dtype=bool)

    def maxima(self, rows, columns, budget):
        """Per replicate, the largest scaled deviation over the hypotheses in play.

        ``rows[s, j, k]`` holds :math:`H_{jk}` in object j's family (the
        simultaneous family is ``rows`` alone, reduced over both axes, when
        ``columns`` is None); ``columns[s, j, k]`` holds :math:`H_{kj}` in
        object j's family. Returns ``(s, B)`` (simultaneous) or ``(s, M, B)``.
        Every pair is scaled for every replicate: the reference that
        :class:`_Sorted` is tested against, and its fallback.
        """
        s, m, n = self.deviation.shape
        step = max(1, budget // max(1, 8 * s * m * m))
        out = np.empty((s, n) if columns is None else (s, m, n))
        for start in range(0, n, step):  # blocks of replicates, for memory
            block = self.deviation[:, :, start : start + step]
            scaled = (block[:, :, None, :] - block[:, None, :, :]) * self.inverse_se[..., None]
            if columns is None:
                out[..., start : start + step] = np.where(rows[..., None], scaled, -np.inf).max(
                    axis=(1, 2)
                )
            else:  # H_kj's deviation is the negative of H_jk's
                own = np.where(rows[..., None], scaled, -np.inf).max(axis=2)
                other = np.where(columns[..., None], -scaled, -np.inf).max(axis=2)
                out[..., start : start + step] = np.maximum(own, other)
        return out


class _Sorted:
    r"""The simultaneous family's maxima, each pair scaled once per replicate, not once per step.

    With the objects in the order of their estimates (best first), every
    present pair j < k (j placed first) holds two hypotheses: :math:`H_{kj}`
    (the worse one better), whose t statistic is at most 0 and which a
    critical value c >= 0 never rejects, and :math:`H_{jk}`, with t >= 0. Its
    deviations are :math:`\pm s_{jk}`, :math:`s_{jk} = (\theta^*_j -
    \theta^*_k - \ldots)\,/\,\hat\sigma_{jk}`. The first step's maximum over all
    ordered pairs is :math:`\max(G, H)` with :math:`G = \max_{j<k} -s_{jk}`
    and :math:`H = \max_{j<k} s_{jk}`, one pass over the upper triangle. A
    later step holds every :math:`H_{kj}` still (it checks this) and the
    :math:`H_{jk}` not yet rejected, mostly the pairs whose t statistics are
    below the last c: its maximum is :math:`\max(G, \max_{\text{in play}}
    s_{jk})`, which scales only the pairs in play. Each value is the same
    product of the same floats as in :meth:`_Pairs.maxima` (``inverse_se`` is
    symmetric, negation exact), so the maxima are equal, not close; a ranking
    where the conditions fail (an asymmetric ``inverse_se``, a non-finite
    deviation, a hypothesis :math:`H_{kj}` rejected) takes the reference path.
    """

    #: Elements scaled per block: a few MiB, so that a block stays in cache.
    BLOCK = 2**18

    def __init__(self, pairs, estimate, present, budget):
        self.pairs = pairs
        s, m, _ = pairs.deviation.shape
        self.block = max(1, min(self.BLOCK, budget // 8))
        self.order = np.argsort(np.where(present, -estimate, np.inf), axis=-1, kind="stable")
        rows = np.arange(s)[:, None, None]
        self.inverse_se = pairs.inverse_se[rows, self.order[:, :, None], self.order[:, None, :]]
        placed = np.take_along_axis(present, self.order, axis=-1)
        position = np.arange(m)
        self.upper = (
            (position[:, None] < position[None, :]) & placed[:, :, None] & placed[:, None, :]
        )
        # the upper triangle's transpose, written in memory order (every step's checks read it)
        self.lower = (
            (position[:, None] > position[None, :]) & placed[:, :, None] & placed[:, None, :]
        )
        self.pair_count = np.count_nonzero(self.upper, axis=(1, 2))  # as many in each triangle
        # (s, B, M): one replicate's deviations contiguous, objects in order
        self.deviation = np.ascontiguousarray(
            np.take_along_axis(pairs.deviation, self.order[:, :, None], axis=1).transpose(0, 2, 1)
        )
        self.usable = np.isfinite(self.deviation).all(axis=(1, 2)) & (
            pairs.inverse_se == np.swapaxes(pairs.inverse_se, 1, 2)
        ).all(axis=(1, 2))
        self.worse = None  # G: per ranking and replicate, the largest -s_jk, j < k
        self.lifted = None  # the level G is kept for (exactly above its _lifted floor); None: all
        # the triangle in tiles, once: every step's bounds come from it
        self.tiles = (
            _Tiles(self.deviation, np.where(self.upper, self.inverse_se, np.nan))
            if m >= TILED_FROM
            else None
        )

    #: Rows of the triangle per block: its columns run from the block's first pair to its last.
    ROWS = 64

    def _scan(self, index, play, smallest, floor=None, level=None):
        """Per replicate, the largest (and, if ``smallest``, the smallest) s_jk.

        Over the pairs j < k of the rankings ``index``, all of them (``play``
        None) or those ``play`` holds (``(len(index), M, M)``, in the sorted
        order). With ``floor`` (``(len(index), B)``, values already reached),
        the largest is that of the floor and the pairs: a pair below the floor
        need not be scaled. With enough objects the pairs are taken in tiles
        whose bounds rule most of them out (:class:`_Tiles`); otherwise, or
        where too few tiles are ruled out, every pair is scaled
        (:meth:`_scan_every_pair`). Both give the same numbers. With ``level``
        (and ``smallest``), the largest is only needed for the ``level``
        quantile of the largest of both: it is raised to at least
        :func:`_lifted` of the smallest's negative (see there).
        """
        if self.tiles is not None:
            worse = (
                self.tiles.largest(True, self.block, rankings=index, level=level)
                if smallest
                else None
            )
            if smallest and level is not None and worse is not None:
                floor = _lifted(worse, level)
            high = (
                self.tiles.largest(False, self.block, floor=floor, rankings=index, play=play)
                if worse is not None or not smallest
                else None
            )
            if high is not None:
                return high, None if worse is None else -worse
        counted = self.upper[index] if play is None else play & self.upper[index]
        weight = np.where(counted, self.inverse_se[index], np.nan)
        high, low = self._scan_every_pair(self.deviation[index], weight, smallest)
        return (high if floor is None else np.fmax(high, floor)), low

    def _scan_every_pair(self, deviation, weight, smallest):
        """:meth:`_scan` with every counted pair scaled.

        Each block of rows is scaled over the columns from its first counted
        pair to its last: the whole triangle at the first step, the band of
        pairs still in play after it.
        """
        s, n, m = deviation.shape
        high, low = np.full((s, n), np.nan), np.full((s, n), np.nan)
        counted = ~np.isnan(weight)
        for top in range(0, m, self.ROWS):  # blocks of rows, for memory
            bottom = min(m, top + self.ROWS)
            columns = np.flatnonzero(counted[:, top:bottom].any(axis=(0, 1)))
            if not columns.size:
                continue
            left, right = columns[0], columns[-1] + 1
            w = weight[:, None, top:bottom, left:right]
            step = max(1, self.block // max(1, s * (bottom - top) * (right - left)))
            for start in range(0, n, step):  # and blocks of replicates
                block = deviation[:, start : start + step]
                scaled = np.subtract(block[:, :, top:bottom, None], block[:, :, None, left:right])
                np.multiply(scaled, w, out=scaled)
                part = slice(start, start + step)
                np.fmax(high[:, part], np.fmax.reduce(scaled, axis=(2, 3)), out=high[:, part])
                if smallest:
                    np.fmin(low[:, part], np.fmin.reduce(scaled, axis=(2, 3)), out=low[:, part])
        return high, low

    def maxima(self, index, active, budget, level=None):
        """``(len(index), B)`` maxima of the simultaneous family over ``active`` (its rankings).

        With ``level``, only their ``level`` quantile is kept (see :func:`_lifted`):
        a maximum below a value that more than the quantile's share of them
        reaches may be returned as any number between its lower bound and
        that value, and the tiles that cannot beat it are not scaled.
        """
        out = np.empty((len(index), self.deviation.shape[1]))
        rows = np.arange(len(index))[:, None, None]
        placed = active[rows, self.order[index][:, :, None], self.order[index][:, None, :]]
        first = self.worse is None
        everything = np.arange(len(self.deviation))
        if first:  # the first step: every present pair in play
            high, low = self._scan(everything, None, smallest=True, level=level)
            self.worse = np.where(np.isnan(low), -np.inf, -low)
            self.lifted = level
        elif self.lifted is not None and level != self.lifted:  # G kept for another quantile
            low = self._scan(everything, None, smallest=True)[1]
            self.worse = np.where(np.isnan(low), -np.inf, -low)
            self.lifted = None
        pairs = self.pair_count[index]
        # every H_kj (the worse-placed one better) still in play: the whole lower triangle
        fast = self.usable[index] & (
            np.count_nonzero(placed & self.lower[index], axis=(1, 2)) == pairs
        )
        if first:  # and nothing else in play but the upper triangle, all of it
            fast &= (np.count_nonzero(placed & self.upper[index], axis=(1, 2)) == pairs) & (
                np.count_nonzero(placed, axis=(1, 2)) == 2 * pairs
            )
            best = np.where(np.isnan(high), -np.inf, high)[index]
        elif fast.any():
            best = np.full(out.shape, -np.inf)
            play = index[fast]
            # only max(G, the pairs in play) is wanted: pairs below G need not be scaled
            floor = self.worse[play] if level is None else _lifted(self.worse[play], level)
            best[fast] = self._scan(play, placed[fast], smallest=False, floor=floor)[0]
            best = np.where(np.isnan(best), -np.inf, best)
        if fast.any():
            out[fast] = np.maximum(self.worse[index[fast]], best[fast])
        if not fast.all():
            rest = index[~fast]
            out[~fast] = _Subset(self.pairs, rest).maxima(active[~fast], None, budget)
        return out


#: Side of the square tiles of pairs that :class:`_Tiles` bounds.
TILE = 8
#: The fewest objects for which :meth:`_Sorted._scan` works by tiles.
TILED_FROM = 64
#: Above this share of a ranking's tiles left after the first bounds, every pair is scaled.
DENSE_SHARE = 0.25


class _Tiles:
    r"""The pairs of a scan in square tiles, each with a bound on its scaled deviations.

    Over a tile of rows J and columns K, every counted pair's
    :math:`(d_j - d_k)\,w_{jk}` is at most
    :math:`\max(0, \max_J d - \min_K d) \cdot \max_{J \times K} w`: the
    rounding of a difference and of a product of non-negative numbers is
    monotone, so the bound holds for the floats too, and it holds for any
    subset of the tile's pairs. Per replicate, a few pairs likely to be large
    are scaled first (:meth:`_candidates`), or a floor already reached is
    given; a tile whose bound does not exceed that value cannot hold the
    maximum and is never scaled. The values found are the same products of
    the same floats as in a scan of every pair, so the maxima are equal.
    The bounds are worked a strip of :data:`STRIP` rows of tiles at a time
    (each strip's values raise the floor of the next), in float32 where
    that is safe (:func:`_bounding`).
    """

    def __init__(self, deviation, weight):
        s, n, m = deviation.shape
        self.plain, self.plain_weight = deviation, weight
        self.blocks = blocks = -(-m // TILE)
        self.pad = pad = blocks * TILE - m
        if pad:  # edge values are in the tile's own range: its bounds stay as tight as they are
            deviation = np.pad(deviation, ((0, 0), (0, 0), (0, pad)), mode="edge")
        self.deviation = deviation.reshape(s, n, blocks, TILE)
        self.weight = self._tiled(weight, np.nan)
        # per tile row, its heaviest weight: the row bounds of _scaled (NaN: no pair)
        self.row_weight = np.fmax.reduce(self.weight, axis=4)
        self.heaviest = np.fmax.reduce(self.row_weight, axis=3).reshape(s, -1)
        self.high, self.low = self.deviation.max(-1), self.deviation.min(-1)
        # each object's partner of largest weight (itself where it has none), for the candidates
        self.partner = self._partner(m)

    def _partner(self, m):
        """``(s, M)``: ``np.argmax`` of each object's weights (NaN as -inf), from the tiles.

        The first tile holding the row's largest weight, then its first column
        holding it: the first index of the largest, as ``np.argmax`` gives it,
        reading each weight once in tile order and the rest per tile.
        """
        s, blocks = len(self.weight), self.blocks
        rows = np.where(np.isnan(self.row_weight), -np.inf, self.row_weight)  # (s, J, K, TILE)
        rows = rows.transpose(0, 1, 3, 2).reshape(s, blocks * TILE, blocks)[:, :m]
        tile = np.argmax(rows, axis=-1)  # (s, M): the first column tile reaching the row's best
        j = np.arange(m)
        found = self.weight[np.arange(s)[:, None], (j // TILE)[None], tile, (j % TILE)[None]]
        column = np.argmax(np.where(np.isnan(found), -np.inf, found), axis=-1)
        return tile * TILE + column

    def _tiled(self, pairs, fill):
        """``(s, M, M)`` pairs as ``(s, J, K, TILE, TILE)``, a tile contiguous for the gathers."""
        if self.pad:
            pairs = np.pad(pairs, ((0, 0), (0, self.pad), (0, self.pad)), constant_values=fill)
        shape = (len(pairs), self.blocks, TILE, self.blocks, TILE)
        return np.ascontiguousarray(pairs.reshape(shape).transpose(0, 1, 3, 2, 4))

    def _candidates(self, flip):
        """``(s, B)``: the largest value over two pairs per object j (NaN: none counted).

        Per replicate, j with the k > j of the smallest deviation (``flip``:
        the largest), and per ranking, j with the k of the largest weight.
        """
        d, w = self.plain, self.plain_weight
        s, _, m = d.shape
        extreme = np.maximum if flip else np.minimum
        # the first k >= j reaching the extreme of d over k >= j, for every j
        reach = extreme.accumulate(d[..., ::-1], axis=-1)[..., ::-1]
        record = np.where(d == reach, np.arange(m), m)
        first = np.minimum.accumulate(record[..., ::-1], axis=-1)[..., ::-1]
        partner = np.minimum(first[..., 1:], m - 1)  # for j < m - 1: some k > j
        other = np.take_along_axis(d, partner, -1)
        found = np.subtract(other, d[..., :-1]) if flip else np.subtract(d[..., :-1], other)
        found *= w[np.arange(s)[:, None, None], np.arange(m - 1), partner]
        best = np.fmax.reduce(found, axis=-1)
        weight = np.take_along_axis(w, self.partner[..., None], -1)[..., 0]
        other = np.take_along_axis(d, np.broadcast_to(self.partner[:, None], d.shape), -1)
        found = np.subtract(other, d) if flip else np.subtract(d, other)
        found *= weight[:, None]
        return np.fmax(best, np.fmax.reduce(found, axis=-1))

    def largest(self, flip, block, floor=None, rankings=None, play=None, level=None):
        r"""``(s, B)``: the largest :math:`\pm(d_j - d_k) w_{jk}` over the counted pairs.

        ``flip`` takes :math:`(d_k - d_j) w_{jk}`; ``floor`` (``(s, B)``) is
        included in the maximum. ``rankings`` picks rankings (all: None) and
        ``play`` (``(len(rankings), M, M)``) the pairs counted among them;
        with ``play``, ``floor`` replaces the candidates. NaN where no pair is
        counted and no floor given; None where the bounds rule out too few
        tiles to pay. With ``level`` (and no ``play``), only the values above
        the candidates' :func:`_lifted` floor are sought: each is exact where
        it exceeds that floor, and its candidate (a lower bound) elsewhere.
        """
        rankings = np.arange(len(self.heaviest)) if rankings is None else np.asarray(rankings)
        heaviest = self.heaviest[rankings]
        kept = None
        if play is not None:
            kept = self._tiled(play, False)
            heaviest = np.where(kept.any(axis=(3, 4)).reshape(len(rankings), -1), heaviest, np.nan)
        with np.errstate(invalid="ignore", over="ignore"):
            lift = None
            if play is None:
                best = self._candidates(flip)[rankings]
                if floor is not None:
                    best = np.fmax(best, floor)
                if level is not None:
                    lower, best = best, _lifted(best, level)
                    lift = best.copy()
            else:
                best = np.array(floor, dtype=float)
            n = self.high.shape[1]
            square = heaviest.reshape(len(rankings), self.blocks, self.blocks)
            if flip:  # (d_k - d_j) w_jk: the bound's rows are the tiles' columns
                square = np.swapaxes(square, 1, 2)
            counted = np.count_nonzero(~np.isnan(square))
            high, low, square, narrow = _bounding(self.high[rankings], self.low[rankings], square)
            strips = _strips(square)
            area = max((weight[0].size for *_, weight in strips), default=1)
            step = max(1, 4 * block // max(1, len(rankings) * area))
            for start in range(0, n, step):  # blocks of replicates: the bounds are (s, B, strip)
                part = slice(start, start + step)
                beat = best[:, part]  # a view: scaling the tiles below raises best
                left_over = 0
                for top, left, weight in strips:  # rows of tiles, the columns they count
                    bottom, right = top + weight.shape[1], left + weight.shape[2]
                    bound = np.subtract(
                        high[:, part, top:bottom, None], low[:, part, None, left:right]
                    )
                    np.maximum(bound, 0.0, out=bound)
                    bound *= weight[:, None]
                    # one flat pass over the mask: np.nonzero of four axes costs several
                    found = np.flatnonzero(bound > _lowered(beat, narrow)[..., None, None])
                    ranking, replicate, row, column = np.unravel_index(found, bound.shape)
                    left_over += len(row)
                    if left_over > DENSE_SHARE * counted * beat.shape[1]:
                        return None
                    if not len(row):
                        continue
                    row += top
                    column += left
                    values = self._scaled(
                        rankings,
                        ranking,
                        replicate + start,
                        column * self.blocks + row if flip else row * self.blocks + column,
                        flip,
                        block,
                        kept,
                        floor=beat[ranking, replicate],
                    )
                    np.fmax.at(beat, (ranking, replicate), values)
        if lift is not None:  # above the lifted floor: found, or a candidate; else the candidate
            best = np.where(best > lift, best, lower)
        return best

    def _scaled(self, rankings, ranking, replicate, tile, flip, block, kept=None, floor=None):
        """The largest scaled deviation in each listed tile of each listed replicate.

        ``ranking`` indexes ``rankings``; ``kept`` (tiled) marks the pairs counted.
        With ``floor`` (one value per listed tile), a value at or below it is
        not needed: each row of a tile is bounded as the tile is, by its own
        deviation against the extreme of the tile's columns times its
        heaviest weight, and only the rows whose bound exceeds the floor are
        scaled. A tile's result is then its largest value where that exceeds
        the floor, and at most the floor (or NaN) otherwise, so that the
        floor's maximum with it is the same.
        """
        rows, columns = np.divmod(tile, self.blocks)
        out = np.full(len(tile), np.nan)
        step = max(1, block // (TILE * TILE))
        for start in range(0, len(tile), step):  # blocks of tiles, for memory
            part = slice(start, start + step)
            local, b = ranking[part], replicate[part]
            r, j, k = rankings[local], rows[part], columns[part]
            mine, theirs = self.deviation[r, b, j], self.deviation[r, b, k]
            if floor is None:
                scaled = (
                    np.subtract(theirs[:, None, :], mine[:, :, None])
                    if flip
                    else np.subtract(mine[:, :, None], theirs[:, None, :])
                )
                np.multiply(scaled, self.weight[r, j, k], out=scaled)
                if kept is not None:
                    np.copyto(scaled, np.nan, where=~kept[local, j, k])
                out[part] = np.fmax.reduce(scaled, axis=(1, 2))
                continue
            # (n, TILE) row bounds: max(0, d_j - min_K d) w_j (flipped: max_K d - d_j)
            spread = (
                np.subtract(theirs.max(1, keepdims=True), mine)
                if flip
                else np.subtract(mine, theirs.min(1, keepdims=True))
            )
            np.maximum(spread, 0.0, out=spread)
            spread *= self.row_weight[r, j, k]
            with np.errstate(invalid="ignore"):
                which, row = np.nonzero(spread > floor[part, None])
            if not which.size:
                continue
            at = (r[which], j[which], k[which], row)
            own = mine[which, row][:, None]
            scaled = np.subtract(theirs[which], own) if flip else np.subtract(own, theirs[which])
            np.multiply(scaled, self.weight[at], out=scaled)
            if kept is not None:
                np.copyto(scaled, np.nan, where=~kept[local[which], j[which], k[which], row])
            found = out[part]
            np.fmax.at(found, which, np.fmax.reduce(scaled, axis=1))
            out[part] = found
        return out


#: Rows of tiles bounded at once by :meth:`_Tiles.largest`; a strip's columns run from
#: its first counted tile to its last (the triangle, or the band still in play).
STRIP = 32
#: Magnitude below which the float32 bounds of :func:`_bounding` are exact enough.
NARROW_RANGE = 1e30
#: A floor is lowered by this relative amount for a float32 bound (see :func:`_lowered`).
NARROW_SLACK = 2.0**-20


def _rounded(values, up):
    """``values`` as float32, rounded up (``up``) or down instead of to the nearest."""
    narrow = values.astype(np.float32)
    wrong = narrow < values if up else narrow > values
    return np.where(wrong, np.nextafter(narrow, np.float32(np.inf if up else -np.inf)), narrow)


def _bounding(high, low, weight):
    r"""The tiles' extremes and heaviest weights in the type the bounds are worked in.

    float32 (``narrow``) where every finite value is below :data:`NARROW_RANGE`:
    the highs and weights are rounded up, the lows down, so that a float32
    bound :math:`\max(0, h - l)\,w` falls short of the float64 one by at most
    a relative :math:`2^{-22}` (one rounding of the difference and one of the
    product, on values no larger than their float64 counterparts' exact
    ones), and :func:`_lowered` lowers the floor by more. A float32 tile may
    then be kept where the float64 bound rules it out, never the reverse;
    the tiles kept are scaled in float64, so the maxima are the same. Half
    the bytes of float64 to read and write, and twice the values per
    instruction. Otherwise float64, as they are.
    """
    values = (np.abs(high), np.abs(low), np.where(np.isnan(weight), 0.0, weight))
    if not all(np.isfinite(v).all() and np.max(v, initial=0.0) < NARROW_RANGE for v in values):
        return high, low, np.ascontiguousarray(weight), False
    return _rounded(high, True), _rounded(low, False), _rounded(weight, True), True


def _lowered(floor, narrow):
    r"""The floor that a float32 bound must exceed so that the float64 one may.

    A float64 bound above a floor f > 0 exceeds :math:`f (1 - 2^{-52})` before
    rounding, so its float32 counterpart exceeds :math:`f (1 - 2^{-22})`, more
    than the floor lowered by :data:`NARROW_SLACK` and rounded down. Floors up
    to 1e-30 (where float32 products may be subnormal), negative or NaN give
    -1, below every bound (which is at least 0): every tile counted is kept.
    In float64, the floor as it is (NaN: -inf).
    """
    if not narrow:
        return np.fmax(floor, -np.inf)
    with np.errstate(invalid="ignore"):
        return np.where(floor > 1e-30, _rounded(floor * (1.0 - NARROW_SLACK), False), -1.0).astype(
            np.float32
        )


def _strips(weight):
    """``(top, left, weight)`` per strip of :data:`STRIP` rows of ``weight`` ``(s, J, K)``.

    ``weight`` is cut to the columns from the strip's first counted (not NaN)
    tile to its last; strips without one are left out.
    """
    counted = ~np.isnan(weight)
    out = []
    for top in range(0, weight.shape[1], STRIP):
        columns = np.flatnonzero(counted[:, top : top + STRIP].any(axis=(0, 1)))
        if columns.size:
            left, right = columns[0], columns[-1] + 1
            out.append((top, left, np.ascontiguousarray(weight[:, top : top + STRIP, left:right])))
    return out


def gaussian_draws(spread, seed=GAUSSIAN_SEED, block=256):
    """``(s, M, B)`` draws of N(0, covariance of ``spread``'s rows), one per replicate.

    Draw g is ``spread @ xi_g / sqrt(B - 1)`` with ``xi_g`` standard normal, so
    its covariance is exactly the replicates' (given them). ``xi`` comes from a
    fixed seed, so the draws are a function of the replicates: the same in
    every chunk of rankings and every dask chunk.
    """
    n = spread.shape[-1]
    rng = np.random.default_rng(seed)
    out = np.empty(spread.shape)
    for start in range(0, n, block):  # blocks of draws: xi is never n x n at once
        xi = rng.standard_normal((min(block, n - start), n))
        out[..., start : start + block] = spread @ xi.T / np.sqrt(n - 1)
    return out


def _lifted(lower, level):
    r"""Floors ``(s, B)`` for maxima of which only the ``level`` quantile is wanted.

    ``lower`` holds lower bounds of the maxima (each a value some pair
    reaches). The quantile (``np.quantile``, linear) of B maxima reads only
    the order statistics at positions :math:`\lfloor q (B - 1) \rfloor` and
    the next, which lie among the top :math:`K = B - \lfloor q (B - 1)
    \rfloor`; τ is the (K + 2)-th largest lower bound (two more, for the
    rounding of q (B - 1)), so at least K + 2 maxima are at least τ. A scan
    with the floor max(lower, τ) returns each maximum above τ exactly, and
    any other as a value between its lower bound and τ: the values above τ
    are the same, and at least K + 2 values are at least τ both ways, so the
    top K (τ where fewer than K exceed it) are the same and with them the
    quantile, bit for bit. A ranking with a
    non-finite lower bound keeps ``lower`` as it is (its quantile then
    replaces non-finite maxima, see :func:`_critical`).
    """
    n = lower.shape[-1]
    top = min(n, n - int(np.floor(level * (n - 1))) + 2)
    tau = np.partition(lower, n - top, axis=-1)[..., n - top]
    tau = np.where(np.isfinite(lower).all(-1), tau, -np.inf)
    return np.fmax(lower, tau[..., None])


def _critical(maxima, confidence_level, dof):
    """The ``confidence_level`` quantile over the last axis; +inf where nothing is in play.

    With ``dof`` (``(s,)``, NaN for none), the quantile is moved from the normal to
    Student's t scale: ``t_dof^-1(Phi(c))``.
    """
    finite = np.isfinite(maxima).any(-1)
    value = np.quantile(np.where(np.isfinite(maxima), maxima, 0.0), confidence_level, axis=-1)
    dof = dof.reshape(dof.shape + (1,) * (value.ndim - 1))
    with np.errstate(invalid="ignore"):
        moved = special.stdtrit(np.where(np.isnan(dof), 1.0, dof), special.ndtr(value))
    value = np.where(np.isnan(dof), value, moved)
    return np.where(finite, value, np.inf)


def _simultaneous(pairs, confidence_level, stepdown, budget, ordered=None):
    """Rejections ``(s, M, M)``: ``[j, k]`` when j is surely better than k; and the last c.

    ``ordered`` (a :class:`_Sorted`) computes the maxima; None: the reference
    :meth:`_Pairs.maxima`, every pair at every step.
    """
    active = pairs.pairs.copy()
    rejected = np.zeros_like(active)
    critical = np.full(active.shape[0], np.inf)
    todo = np.arange(active.shape[0])
    while todo.size:  # steps of the stepdown; every ranking of the chunk at once
        part = _Subset(pairs, todo)
        maxima = (
            part.maxima(active[todo], None, budget)
            if ordered is None
            else ordered.maxima(todo, active[todo], budget, level=confidence_level)
        )
        c = _critical(maxima, confidence_level, part.dof)
        critical[todo] = c
        new = active[todo] & (part.t > c[:, None, None])
        rejected[todo] |= new
        active[todo] &= ~new
        if not stepdown:
            break
        todo = todo[new.any(axis=(1, 2))]
    return rejected, critical


def _marginal(pairs, confidence_level, stepdown, budget):
    """Per object j: rejections of its family ``[j, k]`` (j better) and ``[k, j]`` (k better)."""
    rows, columns = pairs.pairs.copy(), pairs.pairs.copy()
    wins = np.zeros_like(rows)  # wins[s, j, k]: j surely better than k, in j's family
    losses = np.zeros_like(rows)  # losses[s, j, k]: k surely better than j, in j's family
    critical = np.full(rows.shape[:2], np.inf)
    todo = np.arange(rows.shape[0])
    while todo.size:
        part = _Subset(pairs, todo)
        c = _critical(part.maxima(rows[todo], columns[todo], budget), confidence_level, part.dof)
        critical[todo] = c
        won = rows[todo] & (part.t > c[:, :, None])
        lost = columns[todo] & (-part.t > c[:, :, None])
        wins[todo] |= won
        losses[todo] |= lost
        rows[todo] &= ~won
        columns[todo] &= ~lost
        if not stepdown:
            break
        todo = todo[(won | lost).any(axis=(1, 2))]
    return wins, losses, critical


class _Subset:
    """The rankings ``index`` of a :class:`_Pairs`.

    Each array is taken on first use, and is the pairs' own (not a copy)
    when ``index`` is every ranking in order: with thousands of objects the
    ``(s, M, M)`` copies cost more than the step that reads them, and the
    sorted kernel reads only ``t`` and ``dof``.
    """

    def __init__(self, pairs, index):
        self._pairs = pairs
        everything = np.array_equal(index, np.arange(len(pairs.t)))
        self._index = slice(None) if everything else index

    def __getattr__(self, name):
        if name not in ("deviation", "inverse_se", "t", "dof"):
            raise AttributeError(name)
        value = getattr(self._pairs, name)[self._index]
        setattr(self, name, value)
        return value

    maxima = _Pairs.maxima


def groups_from_separation(estimate, separated, present):
    """Tie groups: the finest contiguous runs of the order that only separated pairs split.

    In the order of the estimates (best first; ``estimate`` is oriented so that
    larger is better), a group ends after position p exactly when every object
    up to p is separated from every object after p. Two objects in different
    groups are therefore always a separated pair. Groups are numbered 1, 2, ...
    from the best; NaN for absent objects.
    """
    s, m = estimate.shape
    order = np.argsort(np.where(present, -estimate, np.inf), axis=-1, kind="stable")
    rows = np.arange(s)[:, None, None]
    together = ~separated[rows, order[:, :, None], order[:, None, :]]  # in sorted order
    together &= present[rows[..., 0], order][:, :, None]
    together &= present[rows[..., 0], order][:, None, :]
    position = np.arange(m)
    reach = np.where(
        together & (position[None, None, :] >= position[None, :, None]),
        position[None, None, :],
        position[None, :, None],
    ).max(-1)
    reach = np.maximum.accumulate(reach, axis=-1)
    ends = reach[:, :-1] <= position[None, :-1]
    group_sorted = 1.0 + np.concatenate([np.zeros((s, 1)), np.cumsum(ends, axis=-1)], axis=-1)
    groups = np.empty_like(group_sorted)
    np.put_along_axis(groups, order, group_sorted, axis=-1)
    return np.where(present, groups, np.nan)


def _kept_moments(replicates, undefined):
    """Replicates ``(s, M, B)`` with the mean and covariance of those ``undefined`` leaves.

    See :func:`rank_sets`' Notes; rankings that leave nothing out are returned
    as they are, bit for bit. Also returns the rankings with fewer than two
    kept replicates.
    """
    n = replicates.shape[-1]
    kept = ~undefined
    count = kept.sum(-1)
    changed = undefined.any(-1) & (count >= 2)
    if not changed.any():
        return replicates, count < 2
    part = replicates[changed]
    keep = kept[changed][:, None, :]
    mean = np.where(keep, part, 0.0).sum(-1, keepdims=True) / count[changed][:, None, None]
    stretch = np.sqrt((n - 1.0) / (count[changed] - 1.0))[:, None, None]
    out = replicates.copy()
    out[changed] = np.where(keep, mean + (part - mean) * stretch, mean)
    return out, count < 2


def _fill(
    out, part, pairs, oriented, usable, confidence_level, marginal, stepdown, budget, pair_kernel
):
    """The rank sets, tie groups and critical values of the rankings ``part`` of ``out``."""
    count = usable.sum(-1, keepdims=True).astype(float)
    ordered = _Sorted(pairs, oriented, usable, budget) if pair_kernel == "sorted" else None
    rejected, critical = _simultaneous(pairs, confidence_level, stepdown, budget, ordered)
    del ordered
    low = 1.0 + rejected.sum(1)  # [k, j]: k surely better than j
    high = count - rejected.sum(2)
    out["simultaneous_low"][part], out["simultaneous_high"][part] = low, high
    out["tie_group"][part] = groups_from_separation(
        oriented, rejected | np.swapaxes(rejected, 1, 2), usable
    )
    del rejected
    if marginal:
        wins, losses, critical = _marginal(pairs, confidence_level, stepdown, budget)
        low, high = 1.0 + losses.sum(2), count - wins.sum(2)
        out["critical_value"][part] = critical
    else:
        out["critical_value"][part] = critical[:, None]
    out["low"][part], out["high"][part] = low, high


def rank_sets(
    replicates,
    estimate,
    dof=None,
    *,
    confidence_level=0.95,
    higher_is_better=True,
    marginal=False,
    stepdown=True,
    gaussian=False,
    budget=BUDGET,
    statistic="rank sets",
    pair_kernel="sorted",
    omit=False,
):
    r"""Simultaneous or marginal confidence sets for ranks, tie groups and top-k bounds.

    Parameters
    ----------
    replicates : (..., objects, B) bootstrap replicates of the scores (paired:
        every object's replicate b comes from the same resample).
    estimate : (..., objects) the scores of the original data; NaN marks an
        absent object, which drops out (ranks are among the objects present).
    dof : (...) degrees of freedom of a small-sample correction, optional:
        each critical value c becomes :math:`t_{dof}^{-1}(\Phi(c))`, the
        same tail probability on Student's t scale, and the standard errors
        of the t statistics are multiplied by :math:`\sqrt{(dof + 1) / dof}`
        (NaN or None: neither). The replicates are standardised by a fixed
        standard error, while the t statistics divide by an estimated one,
        and the bootstrap's variance of a mean of n units divides by n, not
        n - 1; with dof = n - 1 this is what a t test of a mean does.
    confidence_level : the coverage sought.
    higher_is_better : whether rank 1 goes to the largest score.
    marginal : each object's own family (its rank set covers its rank with
        the stated probability) instead of the simultaneous family (all sets
        cover at once).
    stepdown : the stepwise refinement; False stops after one step.
    gaussian : take the critical values from normal draws with the
        replicates' covariance (:func:`gaussian_draws`, the parametric
        bootstrap of the csranks R package) instead of the replicates
        themselves. A bootstrap over few units (templates) takes few distinct
        values, and its maxima are bounded; normal draws are not.
    pair_kernel : {"sorted", "dense"}, how the simultaneous family's maxima
        are found: "sorted" (:class:`_Sorted`) scales each pair at most once
        per replicate, after the first step only the pairs in play, and from
        :data:`TILED_FROM` objects only the tiles of pairs whose bounds can
        beat a value already reached (:class:`_Tiles`); "dense" scales every
        pair at every step. Both give the same numbers.
    omit : leave out, per ranking, the replicates in which some present
        object is NaN (listwise deletion of replicates) instead of giving
        the ranking NaN; needs ``gaussian``. The draws then have the mean
        and covariance of the replicates kept (see Notes); fewer than two
        kept give NaN, with a warning.

    Returns
    -------
    dict of arrays over the leading axes and objects: ``low`` and ``high``,
    the rank sets asked for; ``simultaneous_low`` and ``simultaneous_high``
    (the simultaneous sets, from which top-k sets are read);
    ``tie_group`` (from the simultaneous rejections, see
    :func:`groups_from_separation`); ``critical_value`` (the last step's c
    of the object's family). A ranking in which a present object has a NaN
    replicate gives NaN throughout, with a warning (unless ``omit``).

    Notes
    -----
    With ``omit``, the gaussian draws see the replicates only through their
    mean and covariance, so a ranking's left-out replicates are replaced by
    the kept replicates' mean and the kept ones moved away from it by
    :math:`\sqrt{(B - 1) / (k - 1)}` for k kept of B: the mean and the
    covariance (divisor B - 1) are then those of the k kept replicates
    (divisor k - 1), and the arrays keep one shape for every ranking.
    """
    _check(confidence_level)
    if pair_kernel not in ("sorted", "dense"):
        raise OptionError(
            f"rank sets: pair_kernel={pair_kernel!r} is not allowed; "
            "pair_kernel must be 'sorted' or 'dense'"
        )
    replicates = np.asarray(replicates, dtype=float)
    *lead, m, n = replicates.shape
    estimate = np.broadcast_to(np.asarray(estimate, dtype=float), (*lead, m)).reshape(-1, m)
    replicates = replicates.reshape(-1, m, n)
    dof = np.broadcast_to(
        np.asarray(np.nan if dof is None else dof, dtype=float), tuple(lead)
    ).reshape(-1)
    sign = 1.0 if higher_is_better else -1.0
    present = ~np.isnan(estimate)
    undefined = (present[..., None] & np.isnan(replicates)).any(axis=1)  # (rankings, B)
    if omit:
        if not gaussian:
            raise OptionError(
                f"{statistic}: omit=True needs gaussian=True (the left-out "
                "replicates are replaced by moments of the kept ones)"
            )
        replicates, incomplete = _kept_moments(replicates, undefined)
        incomplete &= present.any(-1)
    else:
        incomplete = undefined.any(-1)
    usable = present & ~incomplete[:, None]
    better = np.where(usable[..., None], sign * replicates, 0.0)
    oriented = np.where(usable, sign * estimate, 0.0)
    keys = ("low", "high", "simultaneous_low", "simultaneous_high", "tie_group", "critical_value")
    out = {key: np.full((len(estimate), m), np.nan) for key in keys}
    # per ranking: three (M, B) and about thirteen (M, M) arrays (_Pairs, _Sorted, _Tiles)
    per = max(1, budget // max(1, 8 * m * (3 * n + 13 * m)))
    for start in range(0, len(estimate), per):  # chunks of rankings, for memory
        part = slice(start, start + per)
        pairs = _Pairs(better[part], oriented[part], usable[part], dof[part], gaussian)
        _fill(
            out,
            part,
            pairs,
            oriented[part],
            usable[part],
            confidence_level,
            marginal,
            stepdown,
            budget,
            pair_kernel,
        )
    known = present.any(-1)
    warn_nan(
        statistic,
        incomplete & known,
        "fewer than two replicates leave every present model defined"
        if omit
        else "some replicates of a present model are undefined (NaN)",
        among=known,
    )
    for key in keys:
        out[key] = np.where(usable, out[key], np.nan).reshape(*lead, m)
    return out


#: Smallest eigenvalue, relative to the largest, below which a covariance is not positive
#: semi-definite (the tolerance of ``MASS::mvrnorm``, which the csranks R package calls).
PSD_TOLERANCE = 1e-6


def covariance_factor(covariance, present):
    r"""Per ranking, F with :math:`F F^\top` the covariance of the present objects.

    Parameters
    ----------
    covariance : (s, M, M) exactly symmetric covariances.
    present : (s, M) the objects ranked; the others get zero rows.

    Returns
    -------
    factor : (s, M, M); a row of zeros for an absent object or one of zero
        variance (its draws are its estimate).
    smallest : (s,) the smallest eigenvalue of each covariance over its
        present objects, relative to the largest in absolute value, where it
        is below ``-PSD_TOLERANCE`` (not positive semi-definite); NaN
        elsewhere. An object of zero variance with a non-zero covariance
        counts as -inf.

    Notes
    -----
    The Cholesky factor of the objects of positive variance where it
    exists (positive definite); otherwise the symmetric square root
    :math:`V \operatorname{diag}(\sqrt{\max(\lambda, 0)})` from the
    eigendecomposition, so positive semi-definite covariances (perfectly
    correlated objects) are allowed.
    """
    s = len(covariance)
    variance = np.diagonal(covariance, axis1=-2, axis2=-1)
    largest = np.max(np.where(present, np.abs(variance), 0.0), axis=-1, initial=0.0)
    kept = present & (variance > 0)
    smallest = np.full(s, np.nan)
    # an object of zero variance must have zero covariance with every other
    still = present & ~kept
    if still.any():
        other = np.abs(np.where(still[:, :, None] & present[:, None, :], covariance, 0.0))
        np.einsum("sjj->sj", other)[...] = 0.0
        loose = (other > PSD_TOLERANCE * largest[:, None, None]).any(axis=(1, 2))
        smallest[loose] = -np.inf
    work = np.where(kept[:, :, None] & kept[:, None, :], covariance, 0.0)
    np.einsum("sjj->sj", work)[~kept] = 1.0
    try:
        factor = np.linalg.cholesky(work)
    except np.linalg.LinAlgError:
        factor = np.empty_like(work)
        for r in range(s):  # the rankings that are only semi-definite, one at a time
            try:
                factor[r] = np.linalg.cholesky(work[r])
            except np.linalg.LinAlgError:
                value, vector = np.linalg.eigh(work[r])
                low = value[0] / max(np.max(np.abs(value)), 1e-300)
                if low < -PSD_TOLERANCE and not smallest[r] == -np.inf:
                    smallest[r] = low
                factor[r] = vector * np.sqrt(np.maximum(value, 0.0))
    del work
    factor[~kept] = 0.0
    return factor, smallest


def _diagonal(covariance):
    """Whether every ``(M, M)`` covariance of the stack is diagonal (independent objects)."""
    m = covariance.shape[-1]
    flat = covariance.reshape(len(covariance), -1)[:, :-1].reshape(len(covariance), m - 1, m + 1)
    return not np.any(flat[:, :, 1:])


def normal_rank_sets(
    estimate,
    covariance,
    *,
    n_draws=1000,
    seed=None,
    confidence_level=0.95,
    higher_is_better=True,
    marginal=False,
    stepdown=True,
    budget=BUDGET,
    pair_kernel="sorted",
    draws=None,
    statistic="rank sets",
    describe=None,
):
    r"""Rank sets of estimates with a known covariance (the normal approximation of csranks).

    The same procedure as :func:`rank_sets`, with the pairwise standard
    errors :math:`\hat\sigma_{jk} = \sqrt{\Sigma_{jj} + \Sigma_{kk} - 2\Sigma_{jk}}`
    of the given covariance and the critical values from ``n_draws`` draws
    of :math:`N(0, \Sigma)` (a parametric bootstrap, as ``csranks(x, Sigma)``
    of the csranks R package), no small-sample correction.

    Parameters
    ----------
    estimate : (..., objects); NaN marks an absent object, which drops out.
    covariance : (..., objects, objects) exactly symmetric, positive
        semi-definite over the present objects (see
        :func:`covariance_factor`, which the caller checks).
    n_draws : number of normal draws.
    seed : seed of the standard normals (an int, None or a Generator); one
        ``(objects, n_draws)`` array of them serves every ranking.
    draws : (..., objects, n_draws) the draws of N(0, covariance) to use
        instead (``n_draws`` and ``seed`` are then not used).
    confidence_level, higher_is_better, marginal, stepdown, budget, pair_kernel, statistic
        As in :func:`rank_sets`.
    describe : callable, optional
        ``describe(i)`` names the flat ranking ``i`` in the error raised when
        its covariance is not positive semi-definite.

    Returns
    -------
    dict
        As :func:`rank_sets`.
    """
    _check(confidence_level)
    if pair_kernel not in ("sorted", "dense"):
        raise OptionError(
            f"rank sets: pair_kernel={pair_kernel!r} is not allowed; "
            "pair_kernel must be 'sorted' or 'dense'"
        )
    estimate = np.asarray(estimate, dtype=float)
    *lead, m = estimate.shape
    estimate = estimate.reshape(-1, m)
    covariance = np.broadcast_to(np.asarray(covariance, dtype=float), (*lead, m, m))
    covariance = covariance.reshape(-1, m, m)
    sign = 1.0 if higher_is_better else -1.0
    present = ~np.isnan(estimate)
    oriented = np.where(present, sign * estimate, 0.0)
    if draws is None:
        xi = np.random.default_rng(seed).standard_normal((m, n_draws))
    else:
        draws = np.broadcast_to(
            np.asarray(draws, dtype=float), (*lead, m, np.shape(draws)[-1])
        ).reshape(len(estimate), m, -1)
        n_draws = draws.shape[-1]
    keys = ("low", "high", "simultaneous_low", "simultaneous_high", "tie_group", "critical_value")
    out = {key: np.full((len(estimate), m), np.nan) for key in keys}
    # per ranking: one (M, B) and about fourteen (M, M) arrays (factor, _Pairs, _Sorted)
    per = max(1, budget // max(1, 8 * m * (n_draws + 14 * m)))
    for start in range(0, len(estimate), per):  # chunks of rankings, for memory
        part = slice(start, start + per)
        use = present[part]
        pair = use[:, :, None] & use[:, None, :]
        work = np.where(pair, covariance[part], 0.0)
        # exactly symmetric, as _Sorted needs it: (a + b) / 2 == (b + a) / 2
        work += np.swapaxes(work, 1, 2)
        work *= 0.5
        if draws is None and _diagonal(work):  # independent: the factor is diag(sqrt(var))
            deviation = np.sqrt(np.einsum("sjj->sj", work))[..., None] * xi
        elif draws is None:
            factor, smallest = covariance_factor(work, use)
            bad = np.flatnonzero(~np.isnan(smallest))
            if bad.size:
                where = "" if describe is None else f" ({describe(start + bad[0])})"
                low = smallest[bad[0]]
                raise OptionError(
                    f"{statistic}: the covariance is not positive semi-definite{where}: "
                    + (
                        "an object of zero variance has a non-zero covariance"
                        if low == -np.inf
                        else f"its smallest eigenvalue is {low:.3g} times its largest"
                    )
                )
            deviation = factor @ xi
            del factor
        else:
            deviation = np.where(use[..., None], draws[part], 0.0)
        held = [work]
        del work
        pairs = _Pairs.normal(held, deviation, oriented[part], use)
        del deviation
        _fill(
            out,
            part,
            pairs,
            oriented[part],
            use,
            confidence_level,
            marginal,
            stepdown,
            budget,
            pair_kernel,
        )
        del pairs
    for key in keys:
        out[key] = np.where(present, out[key], np.nan).reshape(*lead, m)
    return out
