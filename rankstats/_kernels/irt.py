r"""An item-response model of per-sample correctness, fitted from a partial design.

For one model and task, the outcome of template t on sample s is

.. math::

   P(y_{ts} = 1) = \operatorname{logistic}(\mu + \gamma_{g(t)} + a_t + b_s),
   \qquad a_t \sim G, \quad b_s \sim N(0, \tau_b^2),

with an optional fixed effect :math:`\gamma_g` per group of templates (a
template covariate such as how a paraphrase was made). Only the cells of a
partial design are observed (NaN elsewhere). :func:`fit_grid` integrates
each template effect over a fixed grid of support points (EM), with
:math:`G` a normal, a two-normal mixture or any distribution on the grid;
:func:`grid_accuracy` and :func:`grid_draws` turn the fit into template
accuracies and posterior draws of them. :func:`fit` is the penalised fit
with normal template effects at their modes (block Newton steps), kept for
fixed prior variances.

Arrays are ``(..., template, sample)``; ``templates`` ``(..., template)``
and ``samples`` ``(..., sample)`` say which positions exist (padding does
not). Everything is vectorised over the leading axes: the observations of
every slice are one flat list, and sums per effect are ``bincount``\ s or
sparse sums.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse, special

from ..errors import OptionError, ScoreValueError

#: Prior variance of the intercept and of the group effects (weak: they are fixed effects).
FIXED_VARIANCE = 100.0
#: Bounds of the empirical-Bayes prior variances (a variance of 0 would freeze the effects).
VARIANCE_BOUNDS = (1e-3, 25.0)


def _flat(y, templates, samples, groups):
    """The observed cells of every slice as flat index arrays."""
    lead = y.shape[:-2]
    n_t, n_s = y.shape[-2:]
    slices = int(np.prod(lead, dtype=np.int64))
    y = y.reshape(slices, n_t, n_s)
    templates = np.broadcast_to(templates, (*lead, n_t)).reshape(slices, n_t)
    samples = np.broadcast_to(samples, (*lead, n_s)).reshape(slices, n_s)
    seen = ~np.isnan(y) & templates[:, :, None] & samples[:, None, :]
    values = y[seen]
    if values.size and (values.min() < 0 or values.max() > 1):
        raise ScoreValueError(
            "the item-response model needs scores in [0, 1] (correct or not, "
            f"or a proportion); found {values.min():g} to {values.max():g}"
        )
    where, t, s = np.nonzero(seen)
    g = None if groups is None else np.broadcast_to(groups, (*lead, n_t)).reshape(slices, n_t)
    return {
        "slices": slices,
        "n_t": n_t,
        "n_s": n_s,
        "y": values,
        "l": where,
        "t": t,
        "s": s,
        "seen": seen,
        "templates": templates,
        "samples": samples,
        "groups": g,
    }


def fit(
    y,
    templates,
    samples,
    groups=None,
    n_groups: int = 0,
    *,
    shared: int = 1,
    variances=None,
    outer: int = 8,
    max_iter: int = 500,
    tolerance: float = 1e-6,
) -> dict:
    """Posterior modes, Laplace variances and empirical-Bayes prior variances.

    ``groups`` ``(..., template)`` integer group of each template (0 ..
    ``n_groups`` - 1), or None for none. ``variances`` ``(tau_a², tau_b²)``
    fixes the prior variances (no empirical Bayes). Returns flat ``(slices,
    ...)`` arrays: ``mu``, ``a``, ``b``, ``gamma`` and their Laplace variances
    ``var_mu``, ``var_a``, ``var_b``, ``var_gamma``; ``tau_a``, ``tau_b`` (prior
    standard deviations), ``cells`` (observed cells), ``iterations`` and the
    flat data.

    The modes: the blocks (intercept, group effects, template effects,
    sample effects) are updated in turn by an exact Newton step each (given
    the others, a block's penalised log-likelihood is a sum of one-parameter
    terms, so its Hessian is diagonal) until no step exceeds ``tolerance``.
    The prior variances: each maximises the marginal likelihood of its
    effects given the other effects' modes, integrated by Gauss-Hermite
    quadrature over a grid of variances (:func:`_marginal_variance`); modes
    and variances alternate ``outer`` times at most. A Laplace (penalised
    quasi-likelihood) update would shrink the variances of binary data with
    few cells per template towards 0.
    """
    d = _flat(np.asarray(y, dtype=float), templates, samples, groups)
    slices, n_t, n_s = d["slices"], d["n_t"], d["n_s"]
    n_g = n_groups if groups is not None else 0
    obs = d["l"]
    if slices % shared:
        raise OptionError(f"shared={shared} does not divide the {slices} slices")
    pools = slices // shared
    index = {
        "mu": (obs, slices),
        "a": (obs * n_t + d["t"], slices * n_t),
        "b": ((obs // shared) * n_s + d["s"], pools * n_s),
    }
    if n_g:
        index["gamma"] = (obs * n_g + d["groups"][obs, d["t"]], slices * n_g)
    theta = {name: np.zeros(size) for name, (_, size) in index.items()}
    fixed = variances is not None
    var = {
        "a": np.full(pools, float(variances[0]) if fixed else 1.0),
        "b": np.full(pools, float(variances[1]) if fixed else 1.0),
    }
    width = {"a": n_t, "b": n_s}

    def precision(name):
        if name == "a":
            return np.repeat(np.repeat(1.0 / var[name], shared), width[name])
        if name == "b":
            return np.repeat(1.0 / var[name], width[name])
        return np.full(index[name][1], 1.0 / FIXED_VARIANCE)

    def eta(without=None):
        return sum(theta[name][i] for name, (i, _) in index.items() if name != without)

    iterations = 0
    for _round in range(1 if fixed else outer):
        for _ in range(max_iter):
            iterations += 1
            step = 0.0
            for name, (i, size) in index.items():
                p = special.expit(eta())
                prec = precision(name)
                grad = np.bincount(i, p - d["y"], size) + prec * theta[name]
                hess = np.bincount(i, p * (1.0 - p), size) + prec
                # a full Newton step can overshoot while the fit is far off: at most 1 on the logit
                delta = np.clip(grad / hess, -1.0, 1.0)
                theta[name] -= delta
                step = max(step, np.max(np.abs(delta), initial=0.0))
            step = max(step, _recentre(theta, var, d, shared, pools, n_t, n_s))
            if step < tolerance:
                break
        if fixed:
            break
        change = 0.0
        for name in ("a", "b"):
            i, _ = index[name]
            new = _marginal_variance(d["y"], eta(without=name), i, obs // shared, pools)
            change = max(change, np.max(np.abs(np.log(new / var[name])), initial=0.0))
            var[name] = new
        if change < 0.02:
            break
    p = special.expit(eta())
    var_of = {
        name: 1.0 / (np.bincount(i, p * (1.0 - p), size) + precision(name))
        for name, (i, size) in index.items()
    }
    gamma = theta.get("gamma", np.zeros(0))
    return {
        **d,
        "mu": theta["mu"],
        "a": theta["a"].reshape(slices, n_t),
        "b": np.repeat(theta["b"].reshape(pools, n_s), shared, 0),
        "gamma": gamma.reshape(slices, n_g),
        "var_mu": var_of["mu"],
        "var_a": var_of["a"].reshape(slices, n_t),
        "var_b": np.repeat(var_of["b"].reshape(pools, n_s), shared, 0),
        "var_gamma": var_of.get("gamma", np.zeros(0)).reshape(slices, n_g),
        "tau_a": np.repeat(np.sqrt(var["a"]), shared),
        "tau_b": np.repeat(np.sqrt(var["b"]), shared),
        "cells": np.bincount(obs, minlength=slices),
        "iterations": iterations,
        "n_groups": n_g,
    }


def _recentre(theta, var, d, shared, pools, n_t, n_s) -> float:
    """Move a common shift between the intercepts and one block of effects, optimally.

    Adding c to every template effect of a slice and -c to its intercept
    leaves every logit unchanged; only the priors see it. Block updates
    crawl along such ridges, so each sweep takes the shift that minimises
    the penalty exactly (and likewise for the sample effects, shared by the
    intercepts of a pool of models). Padded positions hold 0 and stay put.
    Returns the largest shift.
    """
    mu = theta["mu"]
    a = theta["a"].reshape(-1, n_t)
    t_in = d["templates"]
    prec_a = np.repeat(1.0 / var["a"], shared)
    if "gamma" in theta:
        # with groups: the templates of a group against its effect, then the groups against
        # the intercept (every template is in a group, so these are the ridges)
        gamma = theta["gamma"].reshape(len(mu), -1)
        member = t_in[:, None, :] & (d["groups"][:, None, :] == np.arange(gamma.shape[1])[:, None])
        total = np.where(member, a[:, None, :], 0.0).sum(-1)
        c = (prec_a[:, None] * total - gamma / FIXED_VARIANCE) / (
            prec_a[:, None] * member.sum(-1) + 1.0 / FIXED_VARIANCE
        )
        a -= np.where(member, c[:, :, None], 0.0).sum(1)
        gamma += c
        f = (gamma.sum(-1) - mu) / (gamma.shape[1] + 1.0)
        gamma -= f[:, None]
        mu += f
        c = np.concatenate([c.ravel(), f])
    else:
        c = (prec_a * np.where(t_in, a, 0.0).sum(-1) - mu / FIXED_VARIANCE) / (
            prec_a * t_in.sum(-1) + 1.0 / FIXED_VARIANCE
        )
        a -= np.where(t_in, c[:, None], 0.0)
        mu += c
    b = theta["b"].reshape(pools, n_s)
    s_in = d["samples"].reshape(pools, shared, n_s)[:, 0]
    prec_b = 1.0 / var["b"]
    mu_pool = mu.reshape(pools, shared)
    e = (prec_b * np.where(s_in, b, 0.0).sum(-1) - mu_pool.sum(-1) / FIXED_VARIANCE) / (
        prec_b * s_in.sum(-1) + shared / FIXED_VARIANCE
    )
    b -= np.where(s_in, e[:, None], 0.0)
    mu_pool += e[:, None]
    return float(max(np.max(np.abs(c), initial=0.0), np.max(np.abs(e), initial=0.0)))


#: The grid of prior standard deviations searched, and the Gauss-Hermite nodes.
SD_GRID = np.geomspace(0.05, 4.0, 21)
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(20)


def _marginal_variance(y, offset, effect, obs, slices) -> np.ndarray:
    """The variance of one block of effects that maximises their marginal likelihood.

    Each effect u (a template's or a sample's) enters the logit of its
    observed cells as ``offset + u`` with u ~ N(0, sd²); its marginal
    likelihood is integrated by Gauss-Hermite quadrature, summed over the
    effects of a slice, for every sd of :data:`SD_GRID`, and the best sd is
    refined by a parabola through its neighbours (in log sd).
    """
    units, column = np.unique(effect, return_inverse=True)
    owner = np.zeros(units.size, dtype=np.int64)
    owner[column] = obs
    # cells -> effects, as a sparse sum (np.add.at is slow)
    summed = sparse.csr_matrix(
        (np.ones(effect.size), (column, np.arange(effect.size))), shape=(units.size, effect.size)
    )
    total = np.zeros((slices, SD_GRID.size))
    for g, sd in enumerate(SD_GRID):
        u = np.sqrt(2.0) * sd * _NODES  # (K,)
        z = offset[:, None] + u[None, :]
        ll = y[:, None] * z - np.logaddexp(0.0, z)  # (cells, K)
        per_unit = summed @ ll
        top = per_unit.max(-1, keepdims=True)
        log_marginal = top[:, 0] + np.log(np.exp(per_unit - top) @ _WEIGHTS) - 0.5 * np.log(np.pi)
        total[:, g] = np.bincount(owner, log_marginal, slices)
    best = np.clip(total.argmax(-1), 1, SD_GRID.size - 2)
    rows = np.arange(slices)
    left, mid, right = (total[rows, best - 1], total[rows, best], total[rows, best + 1])
    curvature = left - 2.0 * mid + right
    with np.errstate(invalid="ignore", divide="ignore"):
        shift = np.where(curvature < 0, 0.5 * (left - right) / curvature, 0.0)
    spacing = np.log(SD_GRID[1] / SD_GRID[0])
    sd = np.exp(np.log(SD_GRID[best]) + np.clip(shift, -1.0, 1.0) * spacing)
    return np.clip(sd**2, *VARIANCE_BOUNDS)


def _mean_by_slice(values, inside, slices, width):
    count = inside.reshape(slices, width).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return values.reshape(slices, width).sum(-1) / count


def sorted_quantiles(x: np.ndarray, quantiles) -> np.ndarray:
    """``np.nanquantile`` (linear) along the last axis, appended as a new last axis; fast.

    NaN sort last, so each row's quantiles interpolate between its first
    ``count`` sorted values. A row without any value gives NaN.
    """
    x = np.sort(x, axis=-1)
    count = (~np.isnan(x)).sum(-1, keepdims=True)
    where = np.asarray(quantiles, dtype=float) * np.maximum(count - 1, 0)
    low = np.floor(where).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(count - 1, 0))
    frac = where - low
    lo = np.take_along_axis(x, low, -1)
    hi = np.take_along_axis(x, high, -1)
    return np.where(count > 0, lo + frac * (hi - lo), np.nan)


def summaries(draws: np.ndarray, templates: np.ndarray, quantiles, confidence_level: float) -> dict:
    """Quantiles across templates, AvgP and MaxP of each draw; their means and intervals.

    ``draws`` ``(..., draws, template)``; ``templates`` ``(..., template)``.
    Returns ``(..., quantile)`` arrays ``quantile``, ``quantile_low``,
    ``quantile_high`` and ``(...)`` arrays for ``avgp`` and ``maxp`` with
    their ``_low`` and ``_high``.
    """
    x = np.where(templates[..., None, :], draws, np.nan)
    empty = ~templates.any(-1)
    x = np.where(empty[..., None, None], 0.0, x)
    q = sorted_quantiles(x, quantiles)  # (..., draws, quantile)
    values = {"quantile": q, "avgp": np.nanmean(x, -1), "maxp": np.nanmax(x, -1)}
    tail = (1.0 - confidence_level) / 2.0
    out = {}
    for name, v in values.items():
        axis = -2 if name == "quantile" else -1
        lo, hi = np.quantile(v, [tail, 1.0 - tail], axis=axis)
        nan = empty[..., None] if name == "quantile" else empty
        out[name] = np.where(nan, np.nan, v.mean(axis))
        out[f"{name}_low"] = np.where(nan, np.nan, lo)
        out[f"{name}_high"] = np.where(nan, np.nan, hi)
    return out


def observed_summaries(
    y: np.ndarray, templates: np.ndarray, samples: np.ndarray, quantiles
) -> dict:
    """The plain estimates from the observed cells alone: no model.

    Each template's accuracy is the mean of its observed cells (templates
    without any are left out), AvgP the mean of every observed cell, MaxP
    the best template mean. ``y`` ``(..., template, sample)``, NaN unobserved.
    """
    seen = ~np.isnan(y) & templates[..., :, None] & samples[..., None, :]
    count = seen.sum(-1)
    total = np.where(seen, y, 0.0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        avgp = total.sum(-1) / count.sum(-1)
    has = count > 0
    filled = np.where(has.any(-1)[..., None], means, 0.0)
    q = np.moveaxis(
        np.nanquantile(np.where(has, filled, np.nan) if has.any() else filled, quantiles, axis=-1),
        0,
        -1,
    )
    none = ~has.any(-1)
    maxp = np.where(none, np.nan, np.where(has, means, -np.inf).max(-1))
    return {
        "template_accuracy": means,
        "quantile": np.where(none[..., None], np.nan, q),
        "avgp": np.where(none, np.nan, avgp),
        "maxp": maxp,
        "calls": seen.sum((-2, -1)),
    }


def random_design(templates: np.ndarray, samples: np.ndarray, budget: int, rng) -> np.ndarray:
    """A random partial design of ``budget`` cells per slice, balanced over samples.

    Every sample gets ``budget // samples`` distinct templates drawn
    uniformly, and ``budget % samples`` samples drawn at random get one
    more (at most every template). Returns a boolean ``(..., template,
    sample)`` mask.
    """
    n_t, n_s = templates.shape[-1], samples.shape[-1]
    lead = np.broadcast_shapes(templates.shape[:-1], samples.shape[:-1])
    templates = np.broadcast_to(templates, (*lead, n_t))
    samples = np.broadcast_to(samples, (*lead, n_s))
    n_samples = samples.sum(-1)
    per, extra = np.divmod(budget, np.maximum(n_samples, 1))
    order = _rank(np.where(samples, rng.random((*lead, n_s)), np.inf), -1)
    quota = per[..., None] + (order < extra[..., None])
    keys = np.where(templates[..., :, None], rng.random((*lead, n_t, n_s)), np.inf)
    rank = _rank(keys, -2)
    return (rank < quota[..., None, :]) & templates[..., :, None] & samples[..., None, :]


def _rank(keys, axis):
    return np.argsort(np.argsort(keys, axis=axis), axis=axis)


def halving_stages(n_templates: int, n_samples: int, budget: int) -> tuple:
    """Successive-halving stages that spend at most about ``budget`` calls.

    Halve the templates each stage (down to 2) and give each stage an equal
    share of what is left of the budget, at least one new sample per
    template still in; stop adding stages when the rest cannot score every
    template left once, or the samples run out. The first stage scores every
    template (``n_templates`` calls at least, whatever the budget).
    """
    keeps = []
    k = n_templates
    while True:
        keeps.append(k)
        if k <= 2:
            break
        k = -(-k // 2)
    stages, left, used = [], budget, 0
    for i, keep in enumerate(keeps):
        if i and (left < keep or used >= n_samples):
            break
        size = max(1, left // ((len(keeps) - i) * keep))
        size = min(size, n_samples - used)
        stages.append((None if i == 0 else keep, size))
        left -= keep * size
        used += size
    return tuple(stages)


# ---- template effects integrated over a grid ---------------------------------------------------

#: Support points of the template-effect prior, on the logit scale.
GRID = np.linspace(-6.0, 6.0, 49)
#: The prior families of the template effects, as ``fit_grid(prior=...)`` names them.
PRIORS = ("normal", "normal-per-model", "mixture", "nonparametric")
#: The families ``prior="auto"`` chooses among (a normal per model is rarely told from a
#: pooled one by a few cells per template).
AUTO = (0, 2, 3)
#: Cells per template (on average over a pool) below which the normal is kept without
#: trying other shapes.
SHAPE_CELLS = 3.0
#: How much better (in held-out log marginal likelihood) another family must predict
#: than the pooled normal to replace it.
FAMILY_MARGIN = 3.0


def _normal_weights(sd) -> np.ndarray:
    """A centred normal discretised on :data:`GRID`, ``(..., K)`` for ``sd`` ``(...)``."""
    sd = np.asarray(sd, dtype=float)[..., None]
    # each support point takes the mass of its cell, so a normal narrower than the grid's
    # spacing is still a distribution (a point mass at 0 in the limit)
    edges = np.r_[-np.inf, 0.5 * (GRID[1:] + GRID[:-1]), np.inf]
    return np.maximum(np.diff(special.ndtr(edges / sd), axis=-1), 1e-300)


def _posterior(log_prior, loglik, unit_slice):
    """Posterior weights on the grid of each template, and its log marginal likelihood."""
    log_joint = log_prior[unit_slice] + loglik
    top = log_joint.max(-1, keepdims=True)
    joint = np.exp(log_joint - top)
    total = joint.sum(-1, keepdims=True)
    return joint / total, top[:, 0] + np.log(total[:, 0])


def _profile(loglik, owner, n_owner, sds=None) -> np.ndarray:
    """Log marginal likelihood of centred normal priors summed per owner, ``(n_owner, sds)``."""
    sds = SD_GRID if sds is None else np.asarray(sds, dtype=float)
    if not loglik.size:
        return np.zeros((n_owner, sds.size))
    prior = np.where(
        (sds > 0)[:, None],
        _normal_weights(np.where(sds > 0, sds, 1.0)),
        (GRID == 0.0)[None, :].astype(float),
    )
    top = loglik.max(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        value = top + np.log(np.exp(loglik - top) @ prior.T)
    return np.stack([np.bincount(owner, v, n_owner) for v in value.T], -1)


def _best_sd(profile) -> np.ndarray:
    """The sd of :data:`SD_GRID` with the largest profile, refined by a parabola in log sd."""
    n = SD_GRID.size
    best = np.clip(profile.argmax(-1), 1, n - 2)
    rows = np.arange(profile.shape[0])
    left, mid, right = profile[rows, best - 1], profile[rows, best], profile[rows, best + 1]
    curvature = left - 2.0 * mid + right
    with np.errstate(invalid="ignore", divide="ignore"):
        shift = np.where(curvature < 0, 0.5 * (left - right) / curvature, 0.0)
    spacing = np.log(SD_GRID[1] / SD_GRID[0])
    return np.exp(np.log(SD_GRID[best]) + np.clip(np.nan_to_num(shift), -1.0, 1.0) * spacing)


def _prior_step(
    family, loglik, unit_slice, unit_pool, slices, pools, shared, prior, steps, sds=None
):
    """The template prior of each pool given the templates' likelihoods on the grid.

    ``family`` ``(pools,)`` indices into :data:`PRIORS`. A normal's sd is
    ``sds`` (``(pool sd (pools,), model sd (slices,))``, NaN where unknown) or
    else maximises the marginal likelihood (its profile over :data:`SD_GRID`);
    the mixture and the nonparametric prior take ``steps`` EM steps from
    ``prior`` (the mixture refitted to the pooled posterior at each), then,
    given ``sds``, are rescaled about their mean to the pool's sd. Returns
    prior weights ``(slices, K)``.
    """
    choice = np.repeat(family, shared)
    pool_sd, slice_sd = (np.full(pools, np.nan), np.full(slices, np.nan)) if sds is None else sds
    if np.isnan(pool_sd).any():
        pool_sd = np.where(np.isnan(pool_sd), _best_sd(_profile(loglik, unit_pool, pools)), pool_sd)
    out = _normal_weights(np.repeat(pool_sd, shared))
    if (choice == 1).any():
        if np.isnan(slice_sd).any():
            slice_sd = np.where(
                np.isnan(slice_sd), _best_sd(_profile(loglik, unit_slice, slices)), slice_sd
            )
        out = np.where((choice == 1)[:, None], _normal_weights(slice_sd), out)
    if (choice == 2).any() or (choice == 3).any():
        # templates without a cell (a model never run) only echo the prior: left out
        seen = np.any(loglik != 0.0, -1).astype(float)
        count = np.bincount(unit_pool, seen, pools)[:, None]
        mass = sparse.csr_matrix(
            (seen, (unit_pool, np.arange(unit_pool.size))), shape=(pools, unit_pool.size)
        )
        free = prior
        for _ in range(steps):
            weights, _ = _posterior(np.log(free), loglik, unit_slice)
            with np.errstate(invalid="ignore", divide="ignore"):
                pooled = np.asarray(mass @ weights) / count
            pooled = np.where(count > 0, pooled, free[::shared])
            if (family == 2).any():
                pooled = np.where((family == 2)[:, None], _two_normals(pooled), pooled)
            free = np.maximum(np.repeat(pooled, shared, 0), 1e-300)
        if sds is not None:
            # the shape from the marginal likelihood, the spread from the pairs of cells
            target = np.repeat(pool_sd, shared)
            free = _rescaled(free, target / np.maximum(_sd_of(free), 1e-3))
        out = np.where((choice >= 2)[:, None], free, out)
    return out / out.sum(-1, keepdims=True)


#: How many values of the template prior's spread the draws integrate over.
SLOTS = 8
#: The template sds the pairwise estimating equation is solved on.
PAIR_SDS = np.geomspace(0.05, 4.0, 41)


def _pairwise_sd(p, y, summed, owner, n_owner) -> np.ndarray:
    r"""The template sd that matches the covariance of outcomes within templates.

    Two cells of one template covary through its effect alone (the samples
    differ), so :math:`\sum_{i<j} (y_i - m_i)(y_j - m_j)` over the pairs of
    cells of each template has expectation :math:`\sum_{i<j}
    \operatorname{cov}_\tau(y_i, y_j)`, both computed on the grid for each
    sd of :data:`PAIR_SDS` (:math:`m` the probability averaged over the
    normal prior). The root of their difference, interpolated in log sd, is
    the estimate, per owner (pool or model). The equation involves the fitted
    offsets only through differences within a template, so the shrinkage of
    the sample effects' modes, which biases a plug-in marginal likelihood
    towards no spread when each template has one or two cells, cancels to
    first order. Owners without a pair of cells in any template get NaN.
    """
    prior = _normal_weights(PAIR_SDS)  # (J, K)
    total = np.asarray(summed @ p)  # (units, K)
    square = np.asarray(summed @ p**2)
    m = p @ prior.T  # (cells, J)
    r = y[:, None] - m
    observed = 0.5 * (np.asarray(summed @ r) ** 2 - np.asarray(summed @ r**2))
    predicted = 0.5 * (
        (total**2 - square) @ prior.T - np.asarray(summed @ m) ** 2 + np.asarray(summed @ m**2)
    )
    gap = np.stack(
        [np.bincount(owner, v, n_owner) for v in (observed - predicted).T], -1
    )  # (owners, J)
    pairs = np.bincount(owner, np.asarray(summed.sum(1)).ravel() > 1, n_owner) > 0
    # the gap falls as the sd grows; its first sign change, linearly in log sd
    below = gap <= 0
    first = np.where(below.any(-1), below.argmax(-1), PAIR_SDS.size - 1)
    hi = np.clip(first, 1, PAIR_SDS.size - 1)
    rows = np.arange(n_owner)
    g0, g1 = gap[rows, hi - 1], gap[rows, hi]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip(np.nan_to_num(g0 / (g0 - g1)), 0.0, 1.0)
    log_sd = np.log(PAIR_SDS[hi - 1]) + frac * np.log(PAIR_SDS[hi] / PAIR_SDS[hi - 1])
    sd = np.where(first == 0, PAIR_SDS[0], np.exp(log_sd))
    return np.where(pairs, sd, np.nan)


#: The z of the within-template covariance above which a spread counts as identified
#: (one-sided 5%).
Z_IDENTIFIED = 1.645


def _pair_z(p, y, cell_unit, unit_pool, n_units, pools) -> np.ndarray:
    """How clearly the outcomes covary within templates, per pool: a z statistic.

    The sum over the pairs of cells of each template of their residual
    products at no template spread (``p`` at the grid's 0), over its null
    standard error; above :data:`Z_IDENTIFIED`, a spread is identified.
    """
    m = p[:, GRID.size // 2]
    r, v = y - m, m * (1.0 - m)

    def pairs(x):
        return 0.5 * (
            np.bincount(cell_unit, x, n_units) ** 2 - np.bincount(cell_unit, x**2, n_units)
        )

    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.bincount(unit_pool, pairs(r), pools) / np.sqrt(
            np.bincount(unit_pool, pairs(v), pools)
        )
    return np.nan_to_num(z)


def _two_normals(counts, steps: int = 10) -> np.ndarray:
    """The mixture of two normals closest to a histogram on :data:`GRID`, discretised.

    EM for a two-component normal mixture on the support points weighted by
    ``counts`` ``(pools, K)``; it starts from the histogram's normal with a
    second, lower component (a minority of bad templates is the usual
    departure). The sds are kept at half the grid's spacing at least.
    """
    mass = counts / np.maximum(counts.sum(-1, keepdims=True), 1e-300)
    centre = mass @ GRID
    sd = np.sqrt(np.maximum(mass @ GRID**2 - centre**2, 1e-4))
    share = np.stack([np.full_like(centre, 0.8), np.full_like(centre, 0.2)], -1)
    mean = np.stack([centre + 0.25 * sd, centre - 1.5 * sd], -1)
    spread = np.stack([0.8 * sd, sd], -1)
    floor = 0.5 * (GRID[1] - GRID[0])
    for _ in range(steps):
        z = (GRID[None, None, :] - mean[..., None]) / spread[..., None]
        dens = share[..., None] * np.exp(-0.5 * z**2) / spread[..., None]
        resp = dens / np.maximum(dens.sum(1, keepdims=True), 1e-300)
        weight = resp * mass[:, None, :]
        total = np.maximum(weight.sum(-1), 1e-12)
        share = total / total.sum(-1, keepdims=True)
        mean = (weight @ GRID) / total
        spread = np.sqrt(np.maximum((weight @ GRID**2) / total - mean**2, floor**2))
    edges = np.r_[-np.inf, 0.5 * (GRID[1:] + GRID[:-1]), np.inf]
    cdf = special.ndtr((edges[None, None, :] - mean[..., None]) / spread[..., None])
    return np.maximum((share[..., None] * np.diff(cdf, axis=-1)).sum(1), 1e-300)


def _rescaled(prior, scale) -> np.ndarray:
    """The distribution of ``scale`` × (effect - mean) + mean, split between grid points."""
    mean = prior @ GRID
    moved = mean[:, None] + scale[:, None] * (GRID[None, :] - mean[:, None])
    position = np.clip((moved - GRID[0]) / (GRID[1] - GRID[0]), 0.0, GRID.size - 1.0)
    low = np.minimum(np.floor(position).astype(np.int64), GRID.size - 2)
    frac = position - low
    rows = np.repeat(np.arange(prior.shape[0]), GRID.size)
    out = np.zeros_like(prior)
    np.add.at(out, (rows, low.ravel()), (prior * (1.0 - frac)).ravel())
    np.add.at(out, (rows, low.ravel() + 1), (prior * frac).ravel())
    return np.maximum(out, 1e-300)


def _sd_of(prior) -> np.ndarray:
    return np.sqrt(np.maximum(prior @ GRID**2 - (prior @ GRID) ** 2, 0.0))


def _choose_family(loglik, unit_slice, unit_t, unit_pool, slices, pools, shared, prior):
    """Per pool, the prior family fitted to half the templates that best predicts the other half.

    Two folds (even and odd template positions), each family fitted on one
    and scored by the log marginal likelihood of the other, both ways; the
    pooled normal stays unless another family beats it by
    :data:`FAMILY_MARGIN`. Returns ``(family (pools,), scores (pools, families))``.
    """
    fold = (unit_t % 2).astype(bool)
    score = np.full((pools, len(PRIORS)), -np.inf)
    score[:, list(AUTO)] = 0.0
    for f in AUTO:
        for held in (False, True):
            keep = fold != held
            fitted = _prior_step(
                np.full(pools, f),
                loglik[keep],
                unit_slice[keep],
                unit_pool[keep],
                slices,
                pools,
                shared,
                prior,
                15,
            )
            _, marginal = _posterior(np.log(fitted), loglik[~keep], unit_slice[~keep])
            score[:, f] += np.bincount(unit_pool[~keep], marginal, pools)
    gain = score - score[:, :1]
    best = gain.argmax(-1)
    return np.where(gain[np.arange(pools), best] > FAMILY_MARGIN, best, 0), score


def fit_grid(
    y,
    templates,
    samples,
    groups=None,
    n_groups: int = 0,
    *,
    shared: int = 1,
    prior: str = "auto",
    max_iter: int = 100,
    tolerance: float = 1e-2,
) -> dict:
    r"""The item-response model with its template effects integrated over a grid: EM.

    Each template effect :math:`a` is integrated out exactly over the support
    points of :data:`GRID` under a prior :math:`G` of the model's pool, so
    the prior is fitted by its marginal likelihood, not from the modes of
    the effects: with one or two cells per template the modes say almost
    nothing about the spread (a Laplace or penalised quasi-likelihood
    update shrinks it towards 0), while the marginal likelihood still
    identifies it. The intercepts, group effects and sample effects are
    penalised modes of the expected log-likelihood (one Newton step each
    per EM iteration); the sample effects' prior variance is the
    Laplace-EM update (pooled over models they have many cells each).

    ``prior`` is one of :data:`PRIORS` or ``"auto"``: ``"normal"`` a centred
    normal shared by the models of a pool; ``"normal-per-model"`` one per
    model; ``"mixture"`` two normals; ``"nonparametric"`` any distribution
    on the grid (the pool's NPMLE, by EM). The spread of each is the root of
    the pairwise estimating equation (:func:`_pairwise_sd`), consistent
    however few cells a template has but noisy where the pairs of cells
    within templates hardly show a spread (:func:`_pair_z` below
    :data:`Z_IDENTIFIED`: ``identified`` False).
    ``"auto"`` fits the normal, then, where templates have
    :data:`SHAPE_CELLS` cells or more, keeps the family
    that best predicts held-out templates (:func:`_choose_family`) and
    refits with it. The normal is the nonparametric prior restricted to one
    shape, and stays where the
    effects are normal.

    Returns flat ``(slices, ...)`` arrays: ``mu``, ``b``, ``gamma``,
    ``var_mu``, ``var_b``; ``prior`` ``(slices, K)``; ``tau_a`` (the prior's
    standard deviation), ``tau_b``; ``family`` (index into :data:`PRIORS`);
    ``identified`` (:func:`_pair_z` above :data:`Z_IDENTIFIED`: the
    outcomes covary within templates, a one-sided 5% test); ``profile`` the pool's log
    marginal likelihood of normal priors on :data:`SD_GRID`; per template
    unit (the templates that exist, ``unit_slice``, ``unit_t``):
    ``loglik`` on the grid; ``cell_p`` the probability of every observed
    cell at every support point; ``cells``, ``iterations`` and the flat data.
    """
    d = _flat(np.asarray(y, dtype=float), templates, samples, groups)
    slices, n_t, n_s = d["slices"], d["n_t"], d["n_s"]
    if slices % shared:
        raise OptionError(f"shared={shared} does not divide the {slices} slices")
    if prior != "auto" and prior not in PRIORS:
        raise OptionError(f"prior={prior!r} is not allowed; it must be auto or one of {PRIORS}")
    pools = slices // shared
    n_g = n_groups if groups is not None else 0
    obs, t, s, yv = d["l"], d["t"], d["s"], d["y"]
    unit_slice, unit_t = np.nonzero(d["templates"])
    unit_of = np.full(slices * n_t, -1)
    unit_of[unit_slice * n_t + unit_t] = np.arange(unit_slice.size)
    cell_unit = unit_of[obs * n_t + t]
    n_units = unit_slice.size
    unit_pool = unit_slice // shared
    # cells -> templates, as a sparse sum (np.add.at is slow)
    summed = sparse.csr_matrix(
        (np.ones(obs.size), (cell_unit, np.arange(obs.size))), shape=(n_units, obs.size)
    )
    b_index = (obs // shared) * n_s + s
    g_index = obs * n_g + d["groups"][obs, t] if n_g else None
    pool_samples = d["samples"].reshape(pools, shared, n_s)[:, 0]
    cells = np.bincount(obs, minlength=slices)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.clip(np.bincount(obs, yv, slices) / cells, 0.02, 0.98)
    mu = np.where(cells > 0, special.logit(rate), 0.0)
    # the sample effects start at their smoothed log-odds, as an additive model would
    pool_rate = special.logit(
        (np.bincount(b_index, yv, pools * n_s) + 1.0)
        / (np.bincount(b_index, minlength=pools * n_s) + 2.0)
    ) - np.repeat(mu.reshape(pools, shared).mean(-1), n_s)
    b = np.where(d["samples"].reshape(pools, shared, n_s)[:, 0].ravel(), pool_rate, 0.0)
    gamma = np.zeros(slices * n_g)
    var_b = np.ones(pools)
    family = (
        np.zeros(pools, dtype=np.int64) if prior == "auto" else np.full(pools, PRIORS.index(prior))
    )
    current = _normal_weights(np.ones(slices))

    def offsets():
        o = mu[obs] + b[b_index]
        return o + gamma[g_index] if n_g else o

    def likelihood():
        x = offsets()[:, None] + GRID[None, :]
        e = np.exp(-np.abs(x))
        loglik = yv[:, None] * x - np.maximum(x, 0.0) - np.log1p(e)
        p = np.where(x >= 0, 1.0, e) / (1.0 + e)
        return np.asarray(summed @ loglik), p

    def newton(loglik, p, prior):
        """One EM step of the fixed and sample effects; returns the largest change."""
        nonlocal var_b
        weights, _ = _posterior(np.log(prior), loglik, unit_slice)
        w = weights[cell_unit]
        ep = np.einsum("ck,ck->c", w, p)
        epq = np.einsum("ck,ck->c", w, p * (1.0 - p))
        prec_b = np.repeat(1.0 / var_b, n_s)
        hess_b = np.bincount(b_index, epq, pools * n_s) + prec_b
        grad = np.bincount(b_index, ep - yv, pools * n_s) + prec_b * b
        # each block given the last: the expected probabilities follow a step to first order
        delta = np.clip(grad / hess_b, -1.0, 1.0)
        b[:] -= delta
        ep -= epq * delta[b_index]
        step = np.max(np.abs(delta), initial=0.0)
        grad = np.bincount(obs, ep - yv, slices) + mu / FIXED_VARIANCE
        hess = np.bincount(obs, epq, slices) + 1.0 / FIXED_VARIANCE
        delta = np.clip(grad / hess, -1.0, 1.0)
        mu[:] -= delta
        ep -= epq * delta[obs]
        step = max(step, np.max(np.abs(delta), initial=0.0))
        if n_g:
            grad = np.bincount(g_index, ep - yv, slices * n_g) + gamma / FIXED_VARIANCE
            hess = np.bincount(g_index, epq, slices * n_g) + 1.0 / FIXED_VARIANCE
            delta = np.clip(grad / hess, -1.0, 1.0)
            gamma[:] -= delta
            step = max(step, np.max(np.abs(delta), initial=0.0))
        # the sample effects and the intercepts share a common shift that only the priors
        # see: give it to the intercepts (the weaker prior), as the penalty would
        bb = b.reshape(pools, n_s)
        count = pool_samples.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = np.nan_to_num(np.where(pool_samples, bb, 0.0).sum(-1) / count)
            bb -= np.where(pool_samples, centre[:, None], 0.0)
            mu[:] += np.repeat(centre, shared)
            second = np.where(pool_samples, bb**2 + 1.0 / hess_b.reshape(pools, n_s), 0.0)
            var_b = np.nan_to_num(np.clip(second.sum(-1) / count, *VARIANCE_BOUNDS), nan=1.0)
        return step

    iterations = 0
    stage = 0 if prior == "auto" else 1
    while True:
        for _ in range(max_iter):
            iterations += 1
            loglik, p = likelihood()
            sds = (
                _pairwise_sd(p, yv, summed, unit_pool, pools),
                _pairwise_sd(p, yv, summed, unit_slice, slices)
                if (family == 1).any()
                else np.full(slices, np.nan),
            )
            new = _prior_step(
                family, loglik, unit_slice, unit_pool, slices, pools, shared, current, 10, sds
            )
            change = np.max(np.abs(_sd_of(new) - _sd_of(current)), initial=0.0)
            current = new
            step = newton(loglik, p, current)
            if max(step, change) < tolerance:
                break
        if stage:
            break
        stage = 1
        # the outcomes of a template with k binary cells carry k moments of its prior at
        # most: with fewer than SHAPE_CELLS per template there is no shape to choose
        seen = np.bincount(cell_unit, minlength=n_units) > 0
        per_template = np.bincount(obs // shared, minlength=pools) / np.maximum(
            np.bincount(unit_pool, seen, pools), 1
        )
        if not (per_template >= SHAPE_CELLS).any():
            break
        loglik, p = likelihood()
        family, _ = _choose_family(
            loglik, unit_slice, unit_t, unit_pool, slices, pools, shared, current
        )
        family = np.where(per_template >= SHAPE_CELLS, family, 0)
        if not family.any():
            break
    loglik, p = likelihood()
    profile = _profile(loglik, unit_pool, pools)
    identified = _pair_z(p, yv, cell_unit, unit_pool, n_units, pools) > Z_IDENTIFIED
    epq = np.einsum(
        "ck,ck->c", _posterior(np.log(current), loglik, unit_slice)[0][cell_unit], p * (1 - p)
    )
    hess_b = np.bincount(b_index, epq, pools * n_s) + np.repeat(1.0 / var_b, n_s)
    return {
        **d,
        "mu": mu,
        "b": np.repeat(b.reshape(pools, n_s), shared, 0),
        "gamma": gamma.reshape(slices, n_g),
        "var_mu": 1.0 / (np.bincount(obs, epq, slices) + 1.0 / FIXED_VARIANCE),
        "var_b": np.repeat((1.0 / hess_b).reshape(pools, n_s), shared, 0),
        "prior": current,
        "tau_a": _sd_of(current),
        "tau_b": np.repeat(np.sqrt(var_b), shared),
        "family": np.repeat(family, shared),
        "identified": np.repeat(identified, shared),
        "profile": np.repeat(profile, shared, 0),
        "loglik": loglik,
        "unit_slice": unit_slice,
        "unit_t": unit_t,
        "cell_unit": cell_unit,
        "cell_p": p,
        "cells": cells,
        "iterations": iterations,
        "n_groups": n_g,
    }


def grid_accuracy(f: dict) -> dict:
    """Each template's accuracy at every support point of its effect, ``(units, K)``.

    Observed cells count as observed; an unobserved cell counts its
    probability at the support point. Returns ``mean`` (the template's
    accuracy at each point), ``var`` (the Bernoulli variance of its
    unobserved outcomes there) and ``weights`` (the posterior of the
    effect), per template unit.
    """
    slices, n_t = f["templates"].shape
    unit_slice, unit_t = f["unit_slice"], f["unit_t"]
    s_in = f["samples"]
    n = s_in.sum(-1).astype(float)
    base = f["mu"][:, None] + f["b"]  # (slices, sample)
    groups = np.zeros((slices, n_t), dtype=np.int64)
    shift = np.zeros((slices, 1))
    if f["n_groups"]:
        groups = np.clip(f["groups"], 0, None)
        shift = f["gamma"]
    # every sample's probability at every support point, per group of templates
    x = base[:, None, None, :] + shift[:, :, None, None] + GRID[None, None, :, None]
    p = special.expit(x)
    inside = s_in[:, None, None, :]
    total_p = np.where(inside, p, 0.0).sum(-1)  # (slices, groups, K)
    total_v = np.where(inside, p * (1.0 - p), 0.0).sum(-1)
    n_units = unit_slice.size
    cells = f["cell_unit"]
    summed = sparse.csr_matrix(
        (np.ones(cells.size), (cells, np.arange(cells.size))), shape=(n_units, cells.size)
    )
    seen_p = np.asarray(summed @ f["cell_p"])
    seen_v = np.asarray(summed @ (f["cell_p"] * (1.0 - f["cell_p"])))
    seen_y = np.bincount(cells, f["y"], n_units)
    g = groups[unit_slice, unit_t]
    nu = n[unit_slice][:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (seen_y[:, None] + total_p[unit_slice, g] - seen_p) / nu
        var = np.maximum(total_v[unit_slice, g] - seen_v, 0.0) / nu**2
    weights, _ = _posterior(np.log(f["prior"]), f["loglik"], unit_slice)
    return {"mean": np.clip(mean, 0.0, 1.0), "var": var, "weights": weights}


def grid_draws(f: dict, table: dict, n_draws: int, rng, chunk: int = 32) -> np.ndarray:
    """Joint draws of every template's accuracy, ``(slices, draws, template)``.

    Each draw takes the normal prior's sd from its marginal likelihood
    (:data:`SD_GRID`, flat in log sd: the spread is integrated over, not
    plugged in) where the family is a normal, each template's effect from its
    posterior on the grid under that prior, a common shift of the model's
    intercept from its Laplace posterior, and the Bernoulli noise of the
    template's unobserved outcomes. NaN where a template does not exist.
    """
    slices, n_t = f["templates"].shape
    unit_slice, unit_t = f["unit_slice"], f["unit_t"]
    n_units = unit_slice.size
    out = np.full((slices, n_draws, n_t), np.nan)
    if not n_units:
        return out
    normal = f["family"] == 0
    # the spread's posterior on SD_GRID, and the templates' posterior under each sd
    profile = f["profile"] - f["profile"].max(-1, keepdims=True)
    chance = np.exp(profile)
    chance /= chance.sum(-1, keepdims=True)
    # the pairwise sd sits where the plug-in likelihood is biased low: the spread's
    # posterior is moved there (in log sd), keeping its width
    scale = np.maximum(f["tau_a"], SD_GRID[0]) / np.exp(chance @ np.log(SD_GRID))
    # the spread's posterior by SLOTS equally likely values (its quantiles, in log sd)
    levels = (np.arange(SLOTS) + 0.5) / SLOTS
    cumulative = np.cumsum(chance, -1)
    log_sd = (
        np.stack([np.interp(levels, c, np.log(SD_GRID)) for c in cumulative])
        + np.log(scale)[:, None]
    )  # (slices, SLOTS)
    cdf = np.empty((SLOTS, n_units, GRID.size))
    for j in range(SLOTS):
        prior = np.where(normal[:, None], _normal_weights(np.exp(log_sd[:, j])), f["prior"])
        cdf[j] = _posterior(np.log(prior), f["loglik"], unit_slice)[0].cumsum(-1)
    cdf[..., -1] = 1.0
    flat = (np.minimum(cdf, 1.0) + np.arange(SLOTS * n_units).reshape(SLOTS, n_units, 1)).ravel()
    step = GRID[1] - GRID[0]
    sd_mu = np.sqrt(f["var_mu"])
    rows = np.arange(n_units)[:, None]
    for start in range(0, n_draws, chunk):
        k = min(chunk, n_draws - start)
        pick = rng.integers(0, SLOTS, (slices, k))[unit_slice]  # (units, k)
        # inverse cdf by one sorted search: row r's cdf lives in [r, r + 1] of a flat array
        u = rng.random((n_units, k))
        row = pick * n_units + rows
        effect = np.searchsorted(flat, row + u) - row * GRID.size
        shift = sd_mu[:, None] * rng.standard_normal((slices, k))
        position = np.clip(effect + shift[unit_slice] / step, 0.0, GRID.size - 1.0)
        low = np.minimum(np.floor(position).astype(np.int64), GRID.size - 2)
        frac = position - low
        mean = table["mean"][rows, low] * (1 - frac) + table["mean"][rows, low + 1] * frac
        var = table["var"][rows, low] * (1 - frac) + table["var"][rows, low + 1] * frac
        value = mean + np.sqrt(var) * rng.standard_normal((n_units, k))
        block = np.full((slices, n_t, k), np.nan)
        block[unit_slice, unit_t] = np.clip(value, 0.0, 1.0)
        out[:, start : start + k] = np.swapaxes(block, 1, 2)
    return out
