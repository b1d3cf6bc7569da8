r"""Variance components of a crossed random design, and the decision study built on them.

The scores of one task are a crossed array ``(..., model, template[, sample])``
with NaN where a cell is missing, under the random-effects model

.. math:: x_{mpi} = \mu + a_m + b_p + c_i + (ab)_{mp} + (ac)_{mi} + (bc)_{pi} + e_{mpi}

(without samples: :math:`x_{mp} = \mu + a_m + b_p + e_{mp}`). With one score
per cell the highest interaction and the error are confounded: the last
component is their sum.

:func:`henderson` estimates the components by Henderson's method I, the
method of moments for all-random models: the quadratic forms
:math:`T_A = \sum_a y_{a\cdot}^2 / n_a` of every margin A (the totals of each
level of A over the cells it observes) are equated to their expectations,

.. math:: E[T_A] = N\mu^2 + \sum_r \sigma^2_r \sum_{a, l} n_{a l}^2 / n_a,

``n_al`` counting the observed cells in level a of A and level l of effect r,
and the differences :math:`T_A - T_\emptyset` are solved for the components.
On a complete array these are the ANOVA (expected-mean-squares) estimators;
on an incomplete one, missing cells are left out and no cell is imputed.
Estimates may be negative; they are returned as they are.

Every function reduces the trailing facet axes and keeps all leading axes
(tasks, replicates), with no loop over them.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from scipy import special

from ..errors import InputTypeError

#: Condition number above which a task's moment equations are taken as singular.
MAX_CONDITION = 1e10


def subsets(k: int) -> list[tuple[int, ...]]:
    """Every subset of ``range(k)``, by size then position: the margins of a k-way array."""
    return [s for r in range(k + 1) for s in itertools.combinations(range(k), r)]


def effects(k: int) -> list[tuple[int, ...]]:
    """The random effects of a k-way crossed array: every non-empty subset (the last is error)."""
    return subsets(k)[1:]


def _margin(values, keep, k):
    """Sum over the facet axes not in ``keep`` (keeping dims, so margins broadcast)."""
    axes = tuple(a - k for a in range(k) if a not in keep)
    return values.sum(axis=axes, keepdims=True) if axes else values


def margins(values, k):
    """Every margin of ``values``: :func:`_margin` for each of :func:`subsets`, by subset.

    Only the margins one facet below the cells read the whole array; each
    smaller margin sums the smallest larger one already found (exact for
    counts and 0/1 scores; otherwise equal up to the order of the additions).
    """
    full = tuple(range(k))
    found = {full: values}
    for s in sorted(subsets(k)[:-1], key=len, reverse=True):
        parents = [p for p in found if len(p) == len(s) + 1 and set(s) < set(p)]
        parent = min(parents, key=lambda p: found[p].size)
        (axis,) = set(parent) - set(s)
        found[s] = found[parent].sum(axis=axis - k, keepdims=True)
    return found


def _complete_counts(observed, k):
    """:func:`margins` of an all-true ``observed``, without a pass over it."""
    lead, sizes = observed.shape[:-k], observed.shape[-k:]
    counts = {}
    for s in subsets(k)[:-1]:  # the finest margin is ``observed`` itself
        shape = lead + tuple(n if f in s else 1 for f, n in enumerate(sizes))
        cells = int(np.prod([n for f, n in enumerate(sizes) if f not in s]))
        counts[s] = np.full(shape, cells, dtype=np.int64)
    counts[tuple(range(k))] = observed
    return counts


def _total(values, k):
    return values.sum(axis=tuple(range(-k, 0)))


def _ratio(numerator, denominator):
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, numerator / safe, 0.0)


def _union(s, r):
    return tuple(sorted(set(s) | set(r)))


def _crossed_coefficients(levels, k):
    """The coefficients of :func:`design` where the observed levels are fully crossed.

    With ``L(A)`` the product of the observed levels of the facets in A and
    ``N = L(all)``, every cell of margin ``s | r`` holds ``N / L(s | r)``
    observations and every cell of margin ``s`` ``N / L(s)``, so the sum
    over the cells of ``s | r`` of the squared count over the count is
    ``N L(s) / L(s | r)``: no pass over the cells is needed.
    """
    levels = np.asarray(levels, dtype=float)

    def product(facets):
        return np.prod(levels[..., list(facets)], axis=-1) if facets else np.ones(levels.shape[:-1])

    total = product(range(k))
    # a facet with no observed level gives 0 / 0: NaN coefficients, which the callers
    # report as "no components" for that slice
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack(
            [
                np.stack([total * product(s) / product(_union(s, r)) for r in effects(k)], axis=-1)
                for s in subsets(k)
            ],
            axis=-2,
        )


def design(observed, k):
    """The moment equations of the pattern ``observed (..., f_1, ..., f_k)`` (0/1 floats).

    Returns ``(counts, A, good)``: the observed cells of every margin, the
    matrix ``A[..., A, r]`` of the coefficient of component r in
    ``E[T_A - T_0]`` (one row per non-empty margin A), and where the
    equations can be solved: every facet has two observed levels and ``A``
    is not singular.
    """
    if observed.ndim == k:  # one slice: the holes below are found by leading position
        counts, A, good = design(observed[None], k)
        return {s: c[0] for s, c in counts.items()}, A[0], good[0]
    if observed.all():  # complete: every margin's counts are products of the sizes
        counts = _complete_counts(observed, k)
    else:
        counts = margins(observed, k)
    levels = np.stack([(counts[(f,)] > 0).sum(axis=tuple(range(-k, 0))) for f in range(k)], axis=-1)
    K = _crossed_coefficients(levels, k)
    crossed = _total(counts[()], k) == levels.prod(-1)
    if not crossed.all():
        # a pattern with holes: every coefficient is a sum over the cells of a margin
        lead = np.nonzero(~crossed)
        rows = []
        for s in subsets(k):
            rows.append(
                np.stack(
                    [
                        _total(
                            _ratio(counts[_union(s, r)][lead].astype(float) ** 2, counts[s][lead]),
                            k,
                        )
                        for r in effects(k)
                    ],
                    axis=-1,
                )
            )
        K[lead] = np.stack(rows, axis=-2)
    A = K[..., 1:, :] - K[..., :1, :]
    good = (levels >= 2).all(-1)
    eye = np.eye(A.shape[-1])
    good &= np.linalg.cond(np.where(good[..., None, None], A, eye)) < MAX_CONDITION
    return counts, np.where(good[..., None, None], A, eye), good


def solve(y, counts, A, good, k, inverse=None):
    """The components from the zero-filled scores ``y`` and :func:`design`'s output.

    ``inverse`` (``1/counts``, 0 where a level is unobserved) saves the
    divisions when the same pattern is solved again.
    """
    inverse = inverse or inverse_counts(counts)
    full = tuple(range(k))
    sums = margins(y, k)
    T = np.stack(
        [
            _sum_of_squares(y, k) if s == full else _total(sums[s] ** 2 * inverse[s], k)
            for s in subsets(k)
        ],
        axis=-1,
    )
    components = np.linalg.solve(A, (T[..., 1:] - T[..., :1])[..., None])[..., 0]
    return np.where(good[..., None], components, np.nan)


def _sum_of_squares(y, k):
    """``(y * y)`` summed over the k facet axes, without a cube-sized ``y * y``."""
    letters = "abcdefgh"[:k]
    return np.einsum(f"...{letters},...{letters}->...", y, y)


def inverse_counts(counts):
    """``1/n`` of every margin's counts, 0 where a level has no observed cell."""
    # the finest margin is the cells themselves: :func:`solve` squares those directly
    finest = max(counts, key=len)
    return {s: _ratio(1.0, c) for s, c in counts.items() if s != finest}


def observed_levels(observed, k):
    """``(..., k)``: how many levels of each facet of ``observed (..., f_1..f_k)`` hold a cell."""
    return np.stack(
        [observed.any(axis=tuple(a - k for a in range(k) if a != f)).sum(-1) for f in range(k)],
        axis=-1,
    )


def henderson(x, k, observed=None):
    """Henderson method I estimates of the components of ``x (..., f_1, ..., f_k)``.

    Returns ``(components (..., 2**k - 1), mean (...), n_cells (...))``;
    NaN components where the moment equations are singular (a facet with
    fewer than two observed levels, or a pattern that confounds effects).
    ``observed`` is ``~np.isnan(x)``, when the caller has it already.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim < k:
        raise InputTypeError(f"variance components: need {k} facet axes, got shape {x.shape}")
    if observed is None:
        observed = ~np.isnan(x)
    # a complete array is its own zero-filled copy: a cube-sized array is costly to make
    y = x if observed.all() else np.where(observed, x, 0.0)
    counts, A, good = design(observed, k)
    n = counts[()].reshape(x.shape[:-k])
    mean = _total(y, k) / np.where(n > 0, n, np.nan)
    return solve(y, counts, A, good, k), mean, n


def anova(x, k):
    r"""Balanced ANOVA (expected-mean-squares) estimates of a complete array, for checking.

    The textbook formulas (Brennan 2001, ch. 3), one score per cell: the
    sums of squares of the effects by inclusion-exclusion of the margins'
    means, and :math:`E[MS_s] = \sum_{r \supseteq s} c_r \sigma^2_r`
    with :math:`c_r` the cells per level of r; same order as :func:`henderson`.
    """
    x = np.asarray(x, dtype=float)
    sizes = x.shape[-k:]

    def per_level(s):
        return float(np.prod([sizes[a] for a in range(k) if a not in s]))

    means = {s: _margin(x, s, k) / per_level(s) for s in subsets(k)}
    ms = {}
    for s in effects(k):
        effect = sum((-1) ** (len(s) - len(t)) * means[t] for t in subsets(k) if set(t) <= set(s))
        dof = float(np.prod([sizes[a] - 1 for a in s]))
        ms[s] = per_level(s) * _total(effect**2, k) / dof
    found = {}
    for s in sorted(effects(k), key=len, reverse=True):
        above = sum(per_level(r) * found[r] for r in found if set(s) < set(r))
        found[s] = (ms[s] - above) / per_level(s)
    return np.stack([found[s] for s in effects(k)], axis=-1)


# --------------------------------------------------------------------------- bootstrap


def _block_size(cells: int, budget: float = 1e7) -> int:
    return max(1, int(budget // max(cells, 1)))


def simulate(components, observed, n_resamples, seeds, k):
    """Parametric bootstrap replicates ``(..., component, replicate)`` of :func:`henderson`.

    Each replicate draws normal effects with the variances ``components``
    (negative ones as 0) on the observed pattern ``observed (..., f_1..f_k)``
    and estimates them again. ``seeds`` (one integer per leading position)
    give each task a stream of its own, so the draws do not depend on how
    the tasks are chunked. A task whose observed levels are fully crossed
    (no missing cell) takes a shortcut with the same distribution: its
    mean squares are independent scaled chi-squares under normality, so
    they are drawn directly (:func:`mean_square_draws`) instead of whole
    tasks.
    """
    observed = np.asarray(observed, dtype=bool)
    lead, sizes = observed.shape[:-k], observed.shape[-k:]
    flat = observed.reshape(-1, *sizes)
    tasks = flat.shape[0]
    components = np.asarray(components, dtype=float).reshape(tasks, -1)
    # one stream per task, so that a task's draws do not depend on its neighbours or on how
    # the tasks are chunked; the estimates are computed for every task at once
    generators = [np.random.default_rng(int(s)) for s in np.asarray(seeds).reshape(-1)]
    levels = observed_levels(flat, k)
    complete = flat.sum(axis=tuple(range(1, k + 1))) == levels.prod(-1)
    out = np.full((tasks, components.shape[-1], n_resamples), np.nan)
    if complete.any():
        out[complete] = mean_square_draws(
            components[complete],
            levels[complete],
            n_resamples,
            [g for g, c in zip(generators, complete, strict=True) if c],
            k,
        )
    if not complete.all():
        out[~complete] = _simulate_tasks(
            components[~complete],
            flat[~complete],
            n_resamples,
            [g for g, c in zip(generators, complete, strict=True) if not c],
            k,
        )
    return out.reshape(*lead, components.shape[-1], n_resamples)


def mean_square_draws(components, levels, n_resamples, generators, k):
    r"""Replicates of the components of complete tasks, from their mean squares.

    With :math:`L_f` levels per facet, effect r has :math:`\prod_{f \in r}(L_f - 1)`
    degrees of freedom and :math:`E[MS_r]/c_r = (W\sigma^2)_r`
    (:func:`mean_square_weights`); under normality the mean squares are
    independent, :math:`MS_r \sim E[MS_r]\,\chi^2_{df}/df`, and the
    components follow from them by the triangular system W.
    ``components (tasks, C)``, ``levels (tasks, k)``; returns ``(tasks, C, B)``.
    """
    rules = effects(k)
    dof = np.stack([np.prod(levels[:, list(r)] - 1, axis=-1) for r in rules], axis=-1)
    weights = _weights_from_levels(
        np.stack([np.prod(levels[:, list(r)], axis=-1) for r in rules], axis=-1), k
    )
    expected = np.einsum("trc,tc->tr", weights, np.clip(np.nan_to_num(components), 0, None))
    ok = (dof > 0).all(-1)
    safe = np.where(dof > 0, dof, 1).astype(float)
    draws = np.stack(
        [
            g.chisquare(d[:, None], size=(len(d), n_resamples))
            for g, d in zip(generators, safe, strict=True)
        ]
    )
    y = expected[..., None] * draws / safe[..., None]
    found = np.linalg.solve(weights[:, None], np.moveaxis(y, -1, 1)[..., None])[..., 0]
    return np.where(ok[:, None, None], np.moveaxis(found, 1, -1), np.nan)


def _simulate_tasks(components, flat, n_resamples, generators, k):
    """:func:`simulate` of tasks with missing cells: whole tasks drawn and estimated again."""
    tasks, sizes = flat.shape[0], flat.shape[1:]
    sd = np.sqrt(np.clip(np.nan_to_num(components), 0, None))
    counts, A, good = design(flat.astype(float), k)
    counts = {s: c[:, None] for s, c in counts.items()}
    A, good = A[:, None], good[:, None]
    inverse = inverse_counts(counts)
    shapes = [tuple(sizes[a] if a in r else 1 for a in range(k)) for r in effects(k)]
    out = np.empty((tasks, len(shapes), n_resamples))
    block = _block_size(flat[0].size * max(tasks, 1))
    mask = flat[:, None].astype(float)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        y = np.empty((tasks, size, *sizes))
        for t, g in enumerate(generators):
            g.standard_normal(out=y[t])  # the error, the largest effect, drawn in place
            y[t] *= sd[t, -1]
            for j, shape in enumerate(shapes[:-1]):
                y[t] += sd[t, j] * g.standard_normal((size, *shape))
        y *= mask
        out[..., start : start + size] = np.moveaxis(solve(y, counts, A, good, k, inverse), 1, -1)
    return out


def _weights_from_levels(levels, k):
    """:func:`mean_square_weights` from the numbers of levels ``(..., C)`` of every effect."""
    contains = np.array([[set(r) <= set(q) for q in effects(k)] for r in effects(k)])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = levels[..., :, None] / levels[..., None, :]
    return np.where(contains, ratio, 0.0)


def mean_square_weights(observed, k):
    r"""``W (..., C, C)`` turning components into each effect's mean square per cell.

    In a complete task :math:`E[MS_r]/c_r = \sum_{r' \supseteq r} (c_{r'}/c_r) \sigma^2_{r'}`
    with :math:`c_r` the cells per level of r, and :math:`c_{r'}/c_r` is the
    ratio of the numbers of levels, :math:`L_r / L_{r'}`; the observed
    levels stand in for L when cells are missing.
    """
    observed = np.asarray(observed, dtype=bool)  # no float copy of a cube-sized pattern
    levels = np.stack(
        [
            observed.any(axis=tuple(a - k for a in range(k) if a not in r), keepdims=True).sum(
                axis=tuple(range(-k, 0))
            )
            for r in effects(k)
        ],
        axis=-1,
    )
    return _weights_from_levels(levels, k)


def scale_interval(estimate, replicates, weights, confidence_level):
    r"""Intervals of variance components from parametric bootstrap replicates.

    Each component :math:`\hat\sigma^2_r` is a mean square per cell,
    :math:`Y_r = (W\hat\sigma^2)_r` (:func:`mean_square_weights`), less the
    part :math:`S_r = Y_r - \hat\sigma^2_r` that the effects containing r add
    to it. Y is a scale family (a scaled chi-square under normality), so
    :math:`Y/E[Y]` varies as :math:`Y^*/Y_+` does in the bootstrap, ``+``
    meaning from the components clipped at 0; inverting that pivot and
    taking S off gives
    :math:`[Y Y_+/q_{hi} - S, Y Y_+/q_{lo} - S]` with q the quantiles of
    :math:`Y^*`, clipped at 0. In a complete task with normal effects the
    pivot is exact for the error component and close for the others.
    Returns ``(low, high)``.
    """
    tail = (1 - confidence_level) / 2
    y = np.einsum("...rc,...c->...r", weights, estimate)
    plus = np.einsum("...rc,...c->...r", weights, np.clip(estimate, 0, None))
    y_star = np.einsum("...rc,...cb->...rb", weights, replicates)
    q_lo = np.quantile(y_star, tail, axis=-1)
    q_hi = np.quantile(y_star, 1 - tail, axis=-1)
    shift = y - estimate
    pivot = (q_lo > 0) & (y > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(pivot, y * plus / q_hi - shift, np.quantile(replicates, tail, axis=-1))
        high = np.where(pivot, y * plus / q_lo - shift, np.quantile(replicates, 1 - tail, axis=-1))
    return np.clip(low, 0, None), np.clip(high, 0, None)


# --------------------------------------------------------------------------- decision study


def relative_error(components, n_templates, n_samples=None):
    """Relative error variance of a model's mean over ``n_templates`` (× ``n_samples``).

    ``components`` ``(..., 7)`` in :func:`henderson`'s order for model,
    template, sample (or ``(..., 3)`` for model, template); the design
    sizes broadcast against the leading axes.
    """
    c = np.clip(components, 0, None)
    if c.shape[-1] == 3:
        return c[..., 2] / n_templates
    return c[..., 3] / n_templates + c[..., 4] / n_samples + c[..., 6] / (n_templates * n_samples)


def absolute_error(components, n_templates, n_samples=None):
    """Absolute error variance: the relative one plus the facets' own effects."""
    c = np.clip(components, 0, None)
    relative = relative_error(components, n_templates, n_samples)
    if c.shape[-1] == 3:
        return relative + c[..., 1] / n_templates
    return (
        relative
        + c[..., 1] / n_templates
        + c[..., 2] / n_samples
        + c[..., 5] / (n_templates * n_samples)
    )


def coefficient(universe, error):
    """Generalizability (or dependability) coefficient ``universe / (universe + error)``."""
    universe = np.clip(universe, 0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        return universe / (universe + error)


def replication_tau(rho):
    r"""Kendall's tau between two bivariate-normal replications of correlation ``rho``.

    Greiner's relation :math:`\tau = (2/\pi) \arcsin\rho`.
    """
    return 2 / np.pi * np.arcsin(np.clip(rho, -1, 1))


def rho_for_tau(tau):
    """The correlation whose replication tau is ``tau`` (inverse of :func:`replication_tau`)."""
    return np.sin(np.pi * np.asarray(tau, dtype=float) / 2)


def ordered_correctly(difference, relative):
    """Probability that two models ``difference`` apart are ordered right: Φ(d / √(2 σ²_δ))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return special.ndtr(np.abs(difference) / np.sqrt(2 * relative))


def cheapest(components, target_rho, template_cost, sample_cost, max_templates, max_samples):
    """The cheapest ``(n_templates, n_samples)`` with a generalizability coefficient ≥ target.

    For each number of templates 1..``max_templates`` the fewest samples
    that reach it are found in closed form; the cheapest pair is returned
    per leading position as ``(n_templates, n_samples, cost)``, NaN where no
    design within the limits reaches the target. Without a sample facet
    (3 components) ``n_samples`` is NaN and only templates are planned.
    """
    c = np.clip(components, 0, None)
    nt = np.arange(1, max_templates + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        budget = c[..., 0] * (1 - target_rho) / target_rho  # largest relative error allowed
        if c.shape[-1] == 3:
            needed = np.ceil(c[..., 2] / budget - 1e-9)
            needed = np.where(budget > 0, np.maximum(needed, 1), np.nan)
            needed = np.where(needed <= max_templates, needed, np.nan)
            return needed, np.full_like(needed, np.nan), needed * template_cost
        b = budget[..., None]
        left = b - c[..., 3, None] / nt
        ns = np.ceil((c[..., 4, None] + c[..., 6, None] / nt) / left - 1e-9)
        ns = np.where(left > 0, np.maximum(ns, 1), np.inf)
        ns = np.where(ns <= max_samples, ns, np.inf)
        cost = template_cost * nt + sample_cost * ns
    best = np.argmin(np.where(np.isfinite(cost), cost, np.inf), axis=-1)
    pick = np.take_along_axis(cost, best[..., None], -1)[..., 0]
    reached = np.isfinite(pick)
    n_t = np.where(reached, nt[best], np.nan)
    n_s = np.where(reached, np.take_along_axis(ns, best[..., None], -1)[..., 0], np.nan)
    return n_t, n_s, np.where(reached, pick, np.nan)


def score_variance(components, observed, k):
    r"""Variance of each model's mean score about its universe score, from the components.

    ``observed (..., model, f_2, ..., f_k)`` is the pattern; each effect r
    other than the model's own adds :math:`\sigma^2_r \sum_l (n_{ml}/N_m)^2`
    over its levels l, :math:`n_{ml}` counting the model's cells in level l
    and :math:`N_m` all its cells (:math:`1/n_t` for a template effect in a
    complete task). Returns ``(..., model)``.
    """
    o = np.asarray(observed, dtype=float)
    n_m = _margin(o, (0,), k)
    other = tuple(range(-k + 1, 0))
    total = np.zeros(o.shape[: -k + 1] if k > 1 else o.shape)
    for j, r in enumerate(effects(k)):
        if r == (0,):
            continue
        share = _margin(o, tuple(sorted(set(r) | {0})), k)
        weight = _ratio(share**2, n_m**2).sum(axis=other)
        total = total + np.clip(components[..., j, None], 0, None) * weight
    return np.where(n_m.sum(axis=other) > 0, total, np.nan)


def normal_quantile(confidence_level):
    return special.ndtri((1 + confidence_level) / 2)


# ---------------------------------------------------------------- replication probability

#: The most models :func:`noise_allowed` simulates; more models are simulated as this many,
#: which asks for more units than they need (tau-b concentrates as models are added).
MOST_MODELS = 100
#: The noise-to-signal ratios (error over universe variance) :func:`noise_allowed` searches.
NOISE_RANGE = (1e-7, 10.0)


def replication_taus(n_models, noise, n_resamples=2000, seed=0):
    r"""Tau-b between two replications ``(len(noise), n_resamples)`` of ``n_models`` normal models.

    Universe scores :math:`u \sim N(0, 1)`, each replication :math:`u + \sqrt{e}\,\epsilon`
    with independent standard normal errors, for every noise-to-signal ratio
    ``e`` in ``noise`` with the same random numbers (common random numbers,
    so that the curve over ``e`` is smooth). No ties occur.
    """
    rng = np.random.default_rng(seed)
    m = int(n_models)
    u, first, second = (rng.standard_normal((n_resamples, m)) for _ in range(3))
    root = np.sqrt(np.asarray(noise, dtype=float))[:, None, None]
    a = u + root * first
    b = u + root * second
    order = np.argsort(a, axis=-1)
    ranks = np.argsort(np.argsort(np.take_along_axis(b, order, axis=-1), axis=-1), axis=-1)
    from .tau_merge import inversions

    discordant = inversions(ranks.astype(np.int32))
    return 1.0 - 4.0 * discordant / (m * (m - 1))


@functools.lru_cache(maxsize=512)
def noise_allowed(target, probability, n_models):
    r"""The largest noise-to-signal ratio at which two replications agree often enough.

    Returns the largest :math:`e = \sigma^2_\delta/\sigma^2_u` (error over
    universe variance of the models' scores) with
    :math:`P(\tau_b \ge` ``target``:math:`) \ge` ``probability`` between two
    replications of ``n_models`` models drawn from a normal population
    (:func:`replication_taus`, 2,000 draws, seed 0), found by 30 bisections
    of :math:`\log e` in :data:`NOISE_RANGE`; NaN for fewer than two models
    or when even the smallest ratio fails. Cached: the same arguments give
    the same number, in every output that asks.
    """
    m = min(int(n_models), MOST_MODELS)
    if m < 2:
        return float("nan")
    low, high = np.log(NOISE_RANGE)

    def reaches(log_e):
        return (replication_taus(m, [np.exp(log_e)])[0] >= target - 1e-12).mean() >= probability

    if not reaches(low):
        return float("nan")
    if reaches(high):
        return float(NOISE_RANGE[1])
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if reaches(middle) else (low, middle)
    return float(np.exp(low))


def replication_rho(target, probability, n_models):
    r"""The correlation two replications need: :math:`1 / (1 + e)`, e from :func:`noise_allowed`.

    ``probability=None`` asks instead for an expected tau of ``target``
    (Greiner: :math:`\sin(\pi\tau/2)`). Vectorised over ``n_models``.
    """
    n_models = np.asarray(n_models)
    if probability is None:
        return np.broadcast_to(rho_for_tau(target), n_models.shape).astype(float)
    flat = np.nan_to_num(n_models.reshape(-1), nan=0).astype(int)
    found = {m: noise_allowed(float(target), float(probability), int(m)) for m in set(flat)}
    noise = np.array([found[m] for m in flat], dtype=float).reshape(n_models.shape)
    return 1.0 / (1.0 + noise)


def units_needed(universe, per_unit, rho, most=None):
    r"""The fewest units n with :math:`u / (u + e/n) \ge \rho`.

    That is :math:`\lceil e\rho / (u(1-\rho)) \rceil`.

    ``universe`` (u) is the variance the replications share, ``per_unit``
    (e) the error variance of one unit (template or item), negative
    estimates as 0; at least 1. NaN where u is not positive or ρ is NaN,
    and above ``most`` when given.
    """
    u = np.clip(np.asarray(universe, dtype=float), 0, None)
    e = np.clip(np.asarray(per_unit, dtype=float), 0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.maximum(np.ceil(e * rho / (u * (1 - rho)) - 1e-9), 1.0)
    n = np.where((u > 0) & np.isfinite(rho) & np.isfinite(e), n, np.nan)
    if most is not None:
        n = np.where(n <= most, n, np.nan)
    return n
