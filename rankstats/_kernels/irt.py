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
:func:`grid_accuracy` turns the fit into template accuracies (and
:mod:`rankstats._kernels.irt_draws` into posterior draws of them). :func:`fit` is the penalised fit
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
    if np.isnan(x[..., -1:]).any():
        count = (~np.isnan(x)).sum(-1, keepdims=True)
    else:  # NaN sort last: none in any row
        count = np.full((*x.shape[:-1], 1), x.shape[-1])
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
    x = draws if templates.all() else np.where(templates[..., None, :], draws, np.nan)
    empty = ~templates.any(-1)
    if empty.any():
        x = np.where(empty[..., None, None], 0.0, x)
    q = sorted_quantiles(x, quantiles)  # (..., draws, quantile)
    if np.isnan(x).any():
        values = {"quantile": q, "avgp": np.nanmean(x, -1), "maxp": np.nanmax(x, -1)}
    else:
        values = {"quantile": q, "avgp": x.mean(-1), "maxp": x.max(-1)}
    tail = (1.0 - confidence_level) / 2.0
    # every statistic's mean and interval over the draws by one sort: (..., statistic, draw)
    stacked = np.concatenate(
        [np.swapaxes(q, -1, -2), values["avgp"][..., None, :], values["maxp"][..., None, :]], -2
    )
    lo, hi = np.moveaxis(sorted_quantiles(stacked, [tail, 1.0 - tail]), -1, 0)
    mean = stacked.mean(-1)
    n_q = q.shape[-1]
    out = {}
    for name, at in (("quantile", slice(0, n_q)), ("avgp", n_q), ("maxp", n_q + 1)):
        nan = empty[..., None] if name == "quantile" else empty
        out[name] = np.where(nan, np.nan, mean[..., at])
        out[f"{name}_low"] = np.where(nan, np.nan, lo[..., at])
        out[f"{name}_high"] = np.where(nan, np.nan, hi[..., at])
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

#: Support points of the template-effect prior, on the logit scale. A spacing of 0.4
#: logits: the errors of the quantiles across templates on the simulation grid of the
#: tests were the same with 49, 33 and 25 points, and every step of a fit is linear in
#: the number of points (31 also fit a draw's search in 32).
GRID = np.linspace(-6.0, 6.0, 31)
#: e to the support points: a key's odds on the grid are its own odds times these.
_EXP_GRID = np.exp(GRID)
#: The prior families of the template effects, as ``fit_grid(prior=...)`` names them.
PRIORS = ("normal", "normal-per-model", "mixture", "nonparametric")
#: The families ``prior="auto"`` chooses among (a normal per model is rarely told from a
#: pooled one by a few cells per template).
AUTO = (0, 2, 3)
#: Cells per template (on average over a pool) below which the normal is kept without
#: trying other shapes.
SHAPE_CELLS = 3.0
#: EM steps of each shape fitted to half the templates, from the fitted normal. On 30
#: planted cubes each (16 models x 100 templates, 4 and 8 cells per template) the normal
#: was kept as often with 8 as with 15 (90-100% of normal cubes, 83-100% of cubes with
#: model-specific sample difficulties, 0-27% of skewed and bimodal ones); more steps
#: only move the choice from the mixture to the nonparametric.
CHOICE_STEPS = 8
#: How much better (in held-out log marginal likelihood) another family must predict
#: than the pooled normal (or the nonparametric than the mixture) to replace it.
FAMILY_MARGIN = 3.0
#: The skews kappa of the one-parameter family the normal is tested against
#: (:func:`_skewed_weights`): 0 is the normal, +-1 an exponential's shape (skewness
#: -+2); +-0.9 reaches a skewness of 1.46.
SKEWS = np.round(np.linspace(-0.9, 0.9, 19), 2)
#: The log marginal likelihood the best skew must add to the normal's (both at the
#: normal's sd) for the normal to be rejected: half the 95% quantile of chi-squared with
#: one degree of freedom (a likelihood-ratio test at 5%). Measured on planted cubes of
#: 16 models x 100 templates at 4 and 8 cells per template (30 cubes each): normal
#: template effects kept the normal in 87-100% of them (the test and the held-out
#: comparison together), a long lower tail (template_sd x (1 - Exponential(1))) was
#: found in 73% at 4 cells and every one at 8; the held-out comparison alone found 20%
#: at 4 cells.
SKEW_MARGIN = 1.92


def _normal_weights(sd) -> np.ndarray:
    """A centred normal discretised on :data:`GRID`, ``(..., K)`` for ``sd`` ``(...)``."""
    sd = np.asarray(sd, dtype=float)[..., None]
    # each support point takes the mass of its cell, so a normal narrower than the grid's
    # spacing is still a distribution (a point mass at 0 in the limit)
    edges = np.r_[-np.inf, 0.5 * (GRID[1:] + GRID[:-1]), np.inf]
    return np.maximum(np.diff(special.ndtr(edges / sd), axis=-1), 1e-300)


#: Below this total of scaled likelihood times prior a template's posterior is taken in logs
#: (its likelihood and the prior barely overlap: the products lose precision).
_TINY = 1e-250


def _likelihoods(loglik, seen) -> dict:
    """The templates' likelihoods on the grid, scaled by their largest: exponentiated once.

    Every prior the fit tries reuses them, so a posterior is a product and a sum,
    not an exponential per support point. ``seen``: the templates with a cell.
    """
    top = loglik.max(-1) if loglik.size else np.zeros(loglik.shape[0])
    return {"loglik": loglik, "scaled": np.exp(loglik - top[:, None]), "top": top, "seen": seen}


def _in_logs(lik, prior, unit_slice, low):
    """Posterior weights and log marginal likelihoods of the templates ``low``, in logs."""
    with np.errstate(divide="ignore"):
        log_joint = np.log(prior[unit_slice[low]]) + lik["loglik"][low]
    top = log_joint.max(-1, keepdims=True)
    joint = np.exp(log_joint - top)
    total = joint.sum(-1, keepdims=True)
    return joint / total, top[:, 0] + np.log(total[:, 0])


def _posterior(lik, prior, unit_slice):
    """Posterior weights on the grid of each template, and its log marginal likelihood.

    ``lik`` from :func:`_likelihoods`, ``prior`` ``(slices, K)``.
    """
    joint = lik["scaled"] * prior[unit_slice]
    total = joint.sum(-1)
    weights = joint / total[:, None]
    marginal = lik["top"] + np.log(total)
    low = ~(total > _TINY)
    if low.any():
        weights[low], marginal[low] = _in_logs(lik, prior, unit_slice, low)
    return weights, marginal


def _marginal(lik, prior, unit_slice):
    """The log marginal likelihood of each template under ``prior`` ``(slices, K)``."""
    total = np.einsum("uk,uk->u", lik["scaled"], prior[unit_slice])
    marginal = lik["top"] + np.log(total)
    low = ~(total > _TINY)
    if low.any():
        marginal[low] = _in_logs(lik, prior, unit_slice, low)[1]
    return marginal


def _pooled_posterior(lik, prior, unit_slice, unit_pool, pools, mass=None) -> np.ndarray:
    """The posterior weights of the templates with a cell, summed per pool, ``(pools, K)``.

    As :func:`_posterior`, with each template's normalisation folded into the
    sum; ``mass`` (:func:`_sum_by` of ``unit_pool``, reused across calls) holds it.
    """
    joint = lik["scaled"] * prior[unit_slice]
    total = joint.sum(-1)
    low = ~(total > _TINY)
    with np.errstate(divide="ignore"):
        scale = np.where(lik["seen"] & ~low, 1.0 / total, 0.0)
    mass = _sum_by(unit_pool, pools) if mass is None else mass
    mass.data = scale[mass.indices]
    summed = np.asarray(mass @ joint)
    if low.any():
        weights = _in_logs(lik, prior, unit_slice, low)[0]
        summed += _sum_by(unit_pool[low], pools, lik["seen"][low].astype(float)) @ weights
    return summed


def _profile(lik, owner, n_owner, sds=None) -> np.ndarray:
    """Log marginal likelihood of centred normal priors summed per owner, ``(n_owner, sds)``."""
    sds = SD_GRID if sds is None else np.asarray(sds, dtype=float)
    if not lik["scaled"].size:
        return np.zeros((n_owner, sds.size))
    prior = np.where(
        (sds > 0)[:, None],
        _normal_weights(np.where(sds > 0, sds, 1.0)),
        (GRID == 0.0)[None, :].astype(float),
    )
    with np.errstate(divide="ignore"):
        value = lik["top"][:, None] + np.log(lik["scaled"] @ prior.T)
    return np.asarray(_sum_by(owner, n_owner) @ value)


def _sum_by(owner, n_owner, values=None):
    """The sparse ``(n_owner, owner.size)`` matrix that sums rows into their owners'."""
    # built in compressed rows directly (no coordinate format to convert): each owner's
    # row lists its rows in order
    order = np.argsort(owner, kind="stable")
    starts = np.zeros(n_owner + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n_owner), out=starts[1:])
    values = np.ones(owner.size) if values is None else np.asarray(values, dtype=float)[order]
    return sparse.csr_matrix((values, order, starts), shape=(n_owner, owner.size))


def _cells_by_unit(cell_unit, cell_key, n_units: int, n_keys: int, values=None):
    """The sparse ``(n_units, n_keys)`` matrix that sums each template's cells by key.

    The cells come in (slice, template, sample) order (:func:`_flat`): each
    template's cells are one run, their keys increasing, so the matrix is
    built in compressed rows as they stand.
    """
    starts = np.zeros(n_units + 1, dtype=np.int64)
    np.cumsum(np.bincount(cell_unit, minlength=n_units), out=starts[1:])
    values = np.ones(cell_unit.size) if values is None else values
    return sparse.csr_matrix((values, cell_key, starts), shape=(n_units, n_keys))


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


def _prior_step(family, lik, unit_slice, unit_pool, slices, pools, shared, prior, steps, sds=None):
    """The template prior of each pool given the templates' likelihoods on the grid.

    ``family`` ``(pools,)`` indices into :data:`PRIORS`; ``lik`` the
    templates' likelihoods (:func:`_likelihoods`). A normal's sd is
    ``sds`` (``(pool sd (pools,), model sd (slices,))``, NaN where unknown) or
    else maximises the marginal likelihood (its profile over :data:`SD_GRID`);
    the mixture and the nonparametric prior take ``steps`` EM steps from
    ``prior`` (the mixture refitted to the pooled posterior at each), then,
    given ``sds``, are rescaled about their mean to the pool's sd. Returns
    prior weights ``(slices, K)``.
    """
    choice = np.repeat(family, shared)
    pool_sd, slice_sd = (np.full(pools, np.nan), np.full(slices, np.nan)) if sds is None else sds
    # the shapes fitted without sds need no normal (nor its profile)
    if np.isnan(pool_sd).any() and ((choice == 0).any() or sds is not None):
        pool_sd = np.where(np.isnan(pool_sd), _best_sd(_profile(lik, unit_pool, pools)), pool_sd)
    out = _normal_weights(np.repeat(np.nan_to_num(pool_sd, nan=1.0), shared))
    if (choice == 1).any():
        if np.isnan(slice_sd).any():
            slice_sd = np.where(
                np.isnan(slice_sd), _best_sd(_profile(lik, unit_slice, slices)), slice_sd
            )
        out = np.where((choice == 1)[:, None], _normal_weights(slice_sd), out)
    if (choice == 2).any() or (choice == 3).any():
        # templates without a cell (a model never run) only echo the prior: left out
        count = np.bincount(unit_pool, lik["seen"], pools)[:, None]
        mass = _sum_by(unit_pool, pools)
        free = prior
        for _ in range(steps):
            with np.errstate(invalid="ignore", divide="ignore"):
                pooled = _pooled_posterior(lik, free, unit_slice, unit_pool, pools, mass) / count
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
#: The centred normals of :data:`PAIR_SDS` on the grid, ``(J, K)``.
_PAIR_PRIOR = _normal_weights(PAIR_SDS)


def _pair_gap(p, total, c, by_unit, by_key) -> np.ndarray:
    r"""The pairwise estimating equation's gap per owner and sd of :data:`PAIR_SDS`.

    Two cells of one template covary through its effect alone (the samples
    differ), so :math:`\sum_{i<j} (y_i - m_i)(y_j - m_j)` over the pairs of
    cells of each template has expectation :math:`\sum_{i<j}
    \operatorname{cov}_\tau(y_i, y_j)`, both computed on the grid for each
    sd of :data:`PAIR_SDS` (:math:`m` the probability averaged over the
    normal prior); the gap is the first minus the second, summed per owner
    (pool or model). ``p`` ``(keys, K)``: the probabilities of the cells of
    each key (model, group and sample: one offset) on the grid; ``total``
    ``(units, K)`` their sums per template; ``c`` the outcomes per template
    (``unit_y``, ``unit_y2``: sums of y and y²) and per key (``key_y``,
    ``key_n``: sum of y, cells); ``by_unit``, ``by_key`` sparse sums of
    templates and keys into owners.

    With :math:`Y_u, A_u, T_u` the sums over template u's cells of y, m and
    p, the gap of u expands to :math:`\tfrac12 [Y_u^2 - \sum y^2 - 2 Y_u
    A_u + 2 A_u^2 + 2 \sum y m - 2 \sum m^2 - (T_u^2 - \sum p^2) \cdot
    G_\tau]`; every term but :math:`A_u^2` is linear in the cells, so it
    is summed per key (cells sharing an offset) and per owner before the
    product with the priors :math:`G_\tau`.
    """
    prior = _PAIR_PRIOR  # (J, K)
    y = c["unit_y"][:, None]
    per_unit = by_unit @ np.column_stack([y[:, 0] ** 2 - c["unit_y2"], -total * (total + 2.0 * y)])
    per_key = by_key @ (p * (2.0 * c["key_y"][:, None] + c["key_n"][:, None] * p))
    squares = by_unit @ (total @ prior.T) ** 2 - by_key @ (c["key_n"][:, None] * (p @ prior.T) ** 2)
    return 0.5 * (per_unit[:, :1] + (per_unit[:, 1:] + per_key) @ prior.T + 2.0 * squares)


def _pairwise_sd(gap, pairs) -> np.ndarray:
    """The template sd that matches the covariance of outcomes within templates.

    The root of the gap of :func:`_pair_gap` ``(owners, J)``, interpolated in
    log sd, per owner. The equation involves the fitted offsets only through
    differences within a template, so the shrinkage of the sample effects'
    modes, which biases a plug-in marginal likelihood towards no spread when
    each template has one or two cells, cancels to first order. Owners
    without a pair of cells in any template (``pairs`` False) get NaN.
    """
    # the gap falls as the sd grows; its first sign change, linearly in log sd
    below = gap <= 0
    first = np.where(below.any(-1), below.argmax(-1), PAIR_SDS.size - 1)
    hi = np.clip(first, 1, PAIR_SDS.size - 1)
    rows = np.arange(gap.shape[0])
    g0, g1 = gap[rows, hi - 1], gap[rows, hi]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip(np.nan_to_num(g0 / (g0 - g1)), 0.0, 1.0)
    log_sd = np.log(PAIR_SDS[hi - 1]) + frac * np.log(PAIR_SDS[hi] / PAIR_SDS[hi - 1])
    sd = np.where(first == 0, PAIR_SDS[0], np.exp(log_sd))
    return np.where(pairs, sd, np.nan)


#: The z of the within-template covariance above which a spread counts as identified
#: (one-sided 5%).
Z_IDENTIFIED = 1.645


def _pair_z(m, y, cell_unit, unit_pool, n_units, pools) -> np.ndarray:
    """How clearly the outcomes covary within templates, per pool: a z statistic.

    The sum over the pairs of cells of each template of their residual
    products at no template spread (``m``: each cell's probability at the
    grid's 0), over its null standard error; above :data:`Z_IDENTIFIED`, a
    spread is identified.
    """
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


#: The grid's powers 0, 1 and 2, ``(K, 3)``: moments of weights on it by one product.
_POWERS = np.stack([np.ones_like(GRID), GRID, GRID**2], -1)


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
        z = (GRID - mean[..., None]) / spread[..., None]
        dens = np.exp(-0.5 * z * z) * (share / spread)[..., None]
        weight = dens * (mass / np.maximum(dens.sum(1), 1e-300))[:, None, :]
        # each component's mass, first and second moments on the grid, in one product
        moments = weight @ _POWERS
        total = np.maximum(moments[..., 0], 1e-12)
        share = total / total.sum(-1, keepdims=True)
        mean = moments[..., 1] / total
        spread = np.sqrt(np.maximum(moments[..., 2] / total - mean**2, floor**2))
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


def _choose_family(lik, unit_slice, unit_t, unit_pool, slices, pools, shared, prior):
    """Per pool, the prior family fitted to half the templates that best predicts the other half.

    Two folds (even and odd template positions), each family fitted on one
    and scored by the log marginal likelihood of the other, both ways; the
    pooled normal stays unless another family beats it by
    :data:`FAMILY_MARGIN`, or a skew shows in all the templates
    (:func:`_skew_ratio` above :data:`SKEW_MARGIN`, a likelihood-ratio test
    at 5%), which the mixture then models. The nonparametric prior replaces
    the mixture only where it predicts better by :data:`FAMILY_MARGIN` too
    (the simpler shape where the two predict alike). ``prior`` ``(slices,
    K)``: the fitted normal. Returns ``(family (pools,), scores (pools,
    families))``.
    """
    # fit h = 0 is on the odd template positions and scores the even ones, h = 1 the other
    # way; every fit runs at once, as pools of their own: copy c of a slice is slice
    # c * slices + s, so copy c of a pool is c * pools + p
    half = 1 - unit_t % 2
    score = np.full((pools, len(PRIORS)), -np.inf)
    score[:, list(AUTO)] = 0.0
    shapes = [f for f in AUTO if f]  # the families fitted by EM; the normal by its profile
    for families in ([0], shapes):
        n = len(families)
        fitted = _prior_step(
            np.repeat(families, 2 * pools),
            lik if n == 1 else {name: np.concatenate([value] * n) for name, value in lik.items()},
            np.concatenate([unit_slice + slices * (2 * i + half) for i in range(n)]),
            np.concatenate([unit_pool + pools * (2 * i + half) for i in range(n)]),
            2 * n * slices,
            2 * n * pools,
            shared,
            np.tile(prior, (2 * n, 1)),
            CHOICE_STEPS,
        )
        for i, f in enumerate(families):
            # each template scored by the fit on the other half
            marginal = _marginal(lik, fitted, unit_slice + slices * (2 * i + 1 - half))
            score[:, f] += np.bincount(unit_pool, marginal, pools)
    gain = score - score[:, :1]
    best = gain.argmax(-1)
    rows = np.arange(pools)
    shape = np.where(gain[rows, best] > FAMILY_MARGIN, best, 0)
    # the held-out comparison splits the templates and fits many parameters on each half:
    # a skew (a tail of bad templates, the usual departure) shows sooner in the
    # likelihood-ratio test of one parameter on all of them, and the mixture models it
    if (shape == 0).any():
        skewed = _skew_ratio(lik, unit_pool, pools, shared, prior) > SKEW_MARGIN
        shape = np.where((shape == 0) & skewed, 2, shape)
    # among the shapes, the mixture unless the nonparametric predicts better by the margin
    simpler = (shape == 3) & (score[:, 3] - score[:, 2] <= FAMILY_MARGIN)
    return np.where(simpler, 2, shape), score


def _skewed_weights(sd, kappa) -> np.ndarray:
    r"""A skewed distribution of mean 0 and sd ``sd`` discretised on :data:`GRID`, ``(..., K)``.

    The effect is :math:`\sigma [\sqrt{1 - \kappa^2} Z + \kappa (1 - E)]`,
    :math:`Z` standard normal and :math:`E` standard exponential: a normal
    convolved with an exponential (an exponentially modified normal), of
    skewness :math:`-2 \kappa^3`; :math:`\kappa > 0` gives a long lower tail
    (a minority of bad templates), :math:`\kappa < 0` a long upper one and
    :math:`\kappa = 0` the normal. ``sd`` and ``kappa`` broadcast together;
    :math:`|\kappa| < 1`.
    """
    sd, kappa = np.broadcast_arrays(np.asarray(sd, dtype=float), np.asarray(kappa, dtype=float))
    # a spread far below the grid's spacing is a point mass on it whatever the skew
    sd = np.maximum(sd, 1e-3)
    rate = np.maximum(np.abs(kappa) * sd, 1e-12)[..., None]  # the exponential's scale
    s = (sd * np.sqrt(1.0 - kappa**2))[..., None]  # the normal's sd
    edges = np.r_[-np.inf, 0.5 * (GRID[1:] + GRID[:-1]), np.inf]
    # W = rate E + s Z has cdf Phi(w / s) - exp(s² / 2 rate² - w / rate) Phi(w / s - s / rate);
    # the effect is rate - W (kappa > 0) or W - rate (kappa < 0), each of mean 0
    w = np.where(kappa[..., None] >= 0, rate - edges, rate + edges)
    with np.errstate(over="ignore", invalid="ignore"):
        tilt = np.exp(0.5 * (s / rate) ** 2 - w / rate + special.log_ndtr(w / s - s / rate))
        cdf_w = special.ndtr(w / s) - np.where(np.isfinite(w), tilt, 0.0)
    cdf = np.where(kappa[..., None] >= 0, 1.0 - cdf_w, cdf_w)
    # a kappa of 0 has no exponential part: the normal itself, exactly
    cdf = np.where(np.abs(kappa[..., None]) < 1e-6, special.ndtr(edges / np.maximum(s, 1e-12)), cdf)
    return np.maximum(np.diff(cdf, axis=-1), 1e-300)


def _skew_ratio(lik, unit_pool, pools, shared, prior) -> np.ndarray:
    """The log likelihood ratio of the best skew of :data:`SKEWS` over the normal, per pool.

    Each pool's templates under :func:`_skewed_weights` at the sd of its
    fitted normal ``prior`` ``(slices, K)``, for every skew of :data:`SKEWS`
    (0 among them, the normal itself): the largest total log marginal
    likelihood less the normal's. Twice it is about chi-squared with one
    degree of freedom where the effects are normal.
    """
    sd = _sd_of(prior[::shared])  # (pools,)
    weights = _skewed_weights(sd[:, None], SKEWS[None, :])  # (pools, J, K)
    weights /= weights.sum(-1, keepdims=True)
    seen = lik["seen"]
    # the skews one after the other (each a prior per pool); templates without a cell
    # only echo the prior: left out
    total = np.stack(
        [
            np.bincount(unit_pool[seen], _marginal(lik, weights[:, j], unit_pool)[seen], pools)
            for j in range(SKEWS.size)
        ],
        -1,
    )
    return total.max(-1) - total[:, np.argmin(np.abs(SKEWS))]


#: The change of the template prior's sd below which the iterations may stop.
SD_TOLERANCE = 1e-2


def _sample_variance(modes, precision, variance, inside, steps: int = 5) -> np.ndarray:
    """The prior variance of the sample effects by marginal maximum likelihood, per pool.

    Each effect's likelihood is taken as normal about its unpenalised
    estimate: the mode ``modes`` ``(pools, sample)`` with its shrinkage
    undone (``precision`` is the posterior's, the prior's ``1 / variance``
    included; ``inside`` the samples that exist). The estimates are then
    normal with variance v + their own, and v solves its likelihood
    equation by ``steps`` fixed-point steps of the weighted moment
    equation. The EM update (the mean of the squared modes plus their
    posterior variances) has the same fixed point, but moves towards it by
    a fraction of the way per iteration when the effects are not precise.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        own = 1.0 / np.maximum(precision - 1.0 / variance[:, None], 1e-12)
        estimate = modes * (1.0 + own / variance[:, None])
        v = variance
        for _ in range(steps):
            weight = np.where(inside, 1.0 / (v[:, None] + own) ** 2, 0.0)
            v = (weight * (estimate**2 - own)).sum(-1) / weight.sum(-1)
            v = np.clip(np.nan_to_num(v, nan=1.0), *VARIANCE_BOUNDS)
    return v


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
    tolerance: float = 0.05,
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
    per EM iteration); the sample effects' prior variance is their marginal
    maximum likelihood under a normal approximation of each effect's
    likelihood (:func:`_sample_variance`; pooled over models they have many
    cells each). The iterations stop when no effect moves by ``tolerance``
    of its standard error and the prior's sd by :data:`SD_TOLERANCE`.

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
    that best predicts held-out templates, or the mixture where a
    likelihood-ratio test finds the effects skewed (:func:`_choose_family`),
    and refits with it. The normal is the nonparametric prior restricted to
    one shape, and stays where the effects are normal.

    Returns flat ``(slices, ...)`` arrays: ``mu``, ``b``, ``gamma``,
    ``var_mu``, ``var_b``; ``prior`` ``(slices, K)``; ``tau_a`` (the prior's
    standard deviation), ``tau_b``; ``family`` (index into :data:`PRIORS`);
    ``identified`` (:func:`_pair_z` above :data:`Z_IDENTIFIED`: the
    outcomes covary within templates, a one-sided 5% test); ``profile`` the pool's log
    marginal likelihood of normal priors on :data:`SD_GRID`; per template
    unit (the templates that exist, ``unit_slice``, ``unit_t``):
    ``loglik`` on the grid (and ``likelihood``, from :func:`_likelihoods`);
    ``key_p`` the probability at every support point of the observed cells
    of each key (cells of one model, group and sample share their logit;
    ``cell_key`` the key of every cell, ``cell_unit`` its template);
    ``cells``, ``iterations`` and the flat data.

    The work per EM iteration is one exponential and one logarithm per key
    and support point, sparse sums of cells into templates and keys, and an
    exponential per template and support point; every prior tried reuses
    the templates' scaled likelihoods.
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
    # the cells of one model, group and sample share their logit (a key): the logits and
    # probabilities on the grid are computed once per key, and summed into the templates
    # by sparse products (np.add.at is slow)
    width = max(n_g, 1)
    code = (obs * width + (d["groups"][obs, t] if n_g else 0)) * n_s + s
    present = np.zeros(slices * width * n_s, dtype=bool)
    present[code] = True
    keys = np.flatnonzero(present)
    cell_key = (np.cumsum(present) - 1)[code]
    n_keys = keys.size
    key_obs = keys // (width * n_s)
    key_b = (key_obs // shared) * n_s + keys % n_s
    key_g = key_obs * n_g + (keys // n_s) % width if n_g else None
    to_units = _cells_by_unit(cell_unit, cell_key, n_units, n_keys)
    y_to_units = _cells_by_unit(cell_unit, cell_key, n_units, n_keys, yv)
    to_keys = to_units.T.tocsr()
    unit_cells = np.diff(to_units.indptr)
    c = {
        "unit_y": np.bincount(cell_unit, yv, n_units),
        "unit_y2": np.bincount(cell_unit, yv**2, n_units),
        "key_y": np.bincount(cell_key, yv, n_keys),
        "key_n": np.bincount(cell_key, minlength=n_keys).astype(float),
    }
    key_y = c["key_y"]
    seen = unit_cells > 0
    # sums into owners of the pairwise equation: pools (and models, for a normal per model)
    # (built once, where first needed: the models' only for a normal per model)
    owners = {}
    owner_of = {
        "pool": (unit_pool, key_obs // shared, pools),
        "slice": (unit_slice, key_obs, slices),
    }
    has_pairs = {
        "pool": np.bincount(unit_pool, unit_cells > 1, pools) > 0,
        "slice": np.bincount(unit_slice, unit_cells > 1, slices) > 0,
    }
    pool_samples = d["samples"].reshape(pools, shared, n_s)[:, 0]
    cells = np.bincount(obs, minlength=slices)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.clip(np.bincount(obs, yv, slices) / cells, 0.02, 0.98)
    mu = np.where(cells > 0, special.logit(rate), 0.0)
    # the sample effects start at their smoothed log-odds, as an additive model would
    pool_rate = special.logit(
        (np.bincount(key_b, key_y, pools * n_s) + 1.0)
        / (np.bincount(key_b, c["key_n"], pools * n_s) + 2.0)
    ) - np.repeat(mu.reshape(pools, shared).mean(-1), n_s)
    b = np.where(d["samples"].reshape(pools, shared, n_s)[:, 0].ravel(), pool_rate, 0.0)
    gamma = np.zeros(slices * n_g)
    var_b = np.ones(pools)
    family = (
        np.zeros(pools, dtype=np.int64) if prior == "auto" else np.full(pools, PRIORS.index(prior))
    )
    current = _normal_weights(np.ones(slices))

    def offsets():
        o = mu[key_obs] + b[key_b]
        return o + gamma[key_g] if n_g else o

    def likelihood():
        """Each template's log-likelihood on the grid, and each key's probabilities."""
        o = offsets()
        # the odds e^(o + a) = e^o e^a: one exponential per key, not per support point
        # (an offset beyond 300 logits is certain either way, and keeps e^o finite)
        odds = np.exp(np.clip(o, -300.0, 300.0))[:, None] * _EXP_GRID[None, :]
        q = np.add(odds, 1.0)
        np.divide(1.0, q, out=q)  # 1 - p
        # sum over cells of y x + log(1 - p): the y x part is linear in x
        loglik = (
            c["unit_y"][:, None] * GRID[None, :]
            + (y_to_units @ o)[:, None]
            + np.asarray(to_units @ np.log(q))
        )
        p = np.multiply(odds, q, out=odds)
        return _likelihoods(loglik, seen), p, p * q

    def pairwise(p, which):
        if which not in owners:
            units, keys_, n_owner = owner_of[which]
            owners[which] = (_sum_by(units, n_owner), _sum_by(keys_, n_owner))
        by_unit, by_key = owners[which]
        gap = _pair_gap(p, np.asarray(to_units @ p), c, by_unit, by_key)
        return _pairwise_sd(gap, has_pairs[which])

    def newton(lik, p, pq, prior):
        """One EM step of the fixed and sample effects; returns the largest change."""
        nonlocal var_b
        weights, _ = _posterior(lik, prior, unit_slice)
        # every key's cells' posteriors, summed: the expectations are linear in them
        w = np.asarray(to_keys @ weights)
        ep = np.einsum("ck,ck->c", w, p)
        epq = np.einsum("ck,ck->c", w, pq)
        prec_b = np.repeat(1.0 / var_b, n_s)
        hess_b = np.bincount(key_b, epq, pools * n_s) + prec_b
        grad = np.bincount(key_b, ep - key_y, pools * n_s) + prec_b * b
        # each block given the last: the expected probabilities follow a step to first order
        delta = np.clip(grad / hess_b, -1.0, 1.0)
        b[:] -= delta
        ep -= epq * delta[key_b]
        # steps in standard errors: a parameter's precision is how far it has to settle
        step = np.max(np.abs(delta) * np.sqrt(hess_b), initial=0.0)
        grad = np.bincount(key_obs, ep - key_y, slices) + mu / FIXED_VARIANCE
        hess = np.bincount(key_obs, epq, slices) + 1.0 / FIXED_VARIANCE
        delta = np.clip(grad / hess, -1.0, 1.0)
        mu[:] -= delta
        ep -= epq * delta[key_obs]
        step = max(step, np.max(np.abs(delta) * np.sqrt(hess), initial=0.0))
        if n_g:
            grad = np.bincount(key_g, ep - key_y, slices * n_g) + gamma / FIXED_VARIANCE
            hess = np.bincount(key_g, epq, slices * n_g) + 1.0 / FIXED_VARIANCE
            delta = np.clip(grad / hess, -1.0, 1.0)
            gamma[:] -= delta
            step = max(step, np.max(np.abs(delta) * np.sqrt(hess), initial=0.0))
        # the sample effects and the intercepts share a common shift that only the priors
        # see: give it to the intercepts (the weaker prior), as the penalty would
        bb = b.reshape(pools, n_s)
        count = pool_samples.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            centre = np.nan_to_num(np.where(pool_samples, bb, 0.0).sum(-1) / count)
            bb -= np.where(pool_samples, centre[:, None], 0.0)
            mu[:] += np.repeat(centre, shared)
            var_b = _sample_variance(bb, hess_b.reshape(pools, n_s), var_b, pool_samples)
        return step

    iterations = 0
    stage = 0 if prior == "auto" else 1
    latest = None
    while True:
        for _ in range(max_iter):
            iterations += 1
            lik, p, pq = likelihood()
            sds = (
                pairwise(p, "pool"),
                pairwise(p, "slice") if (family == 1).any() else np.full(slices, np.nan),
            )
            new = _prior_step(
                family, lik, unit_slice, unit_pool, slices, pools, shared, current, 10, sds
            )
            change = np.max(np.abs(_sd_of(new) - _sd_of(current)), initial=0.0)
            current = new
            step = newton(lik, p, pq, current)
            if step < tolerance and change < SD_TOLERANCE:
                break
        if stage:
            break
        stage = 1
        # the outcomes of a template with k binary cells carry k moments of its prior at
        # most: with fewer than SHAPE_CELLS per template there is no shape to choose
        per_template = np.bincount(obs // shared, minlength=pools) / np.maximum(
            np.bincount(unit_pool, seen, pools), 1
        )
        if not (per_template >= SHAPE_CELLS).any():
            break
        latest = likelihood()
        family, _ = _choose_family(
            latest[0], unit_slice, unit_t, unit_pool, slices, pools, shared, current
        )
        family = np.where(per_template >= SHAPE_CELLS, family, 0)
        if not family.any():
            break
        latest = None
    # the likelihood at the final estimates (the family's choice saw the same, if it ended)
    lik, p, pq = latest or likelihood()
    profile = _profile(lik, unit_pool, pools)
    identified = (
        _pair_z(p[cell_key, GRID.size // 2], yv, cell_unit, unit_pool, n_units, pools)
        > Z_IDENTIFIED
    )
    epq = np.einsum("ck,ck->c", np.asarray(to_keys @ _posterior(lik, current, unit_slice)[0]), pq)
    hess_b = np.bincount(key_b, epq, pools * n_s) + np.repeat(1.0 / var_b, n_s)
    return {
        **d,
        "mu": mu,
        "b": np.repeat(b.reshape(pools, n_s), shared, 0),
        "gamma": gamma.reshape(slices, n_g),
        "var_mu": 1.0 / (np.bincount(key_obs, epq, slices) + 1.0 / FIXED_VARIANCE),
        "var_b": np.repeat((1.0 / hess_b).reshape(pools, n_s), shared, 0),
        "prior": current,
        "tau_a": _sd_of(current),
        "tau_b": np.repeat(np.sqrt(var_b), shared),
        "family": np.repeat(family, shared),
        "identified": np.repeat(identified, shared),
        "profile": np.repeat(profile, shared, 0),
        "loglik": lik["loglik"],
        "likelihood": lik,
        "unit_slice": unit_slice,
        "unit_t": unit_t,
        "cell_unit": cell_unit,
        "cell_key": cell_key,
        "key_p": p,
        "cells": cells,
        "iterations": iterations,
        "n_groups": n_g,
    }


def grid_accuracy(f: dict) -> dict:
    """Each template's accuracy at every support point of its effect, ``(units, K)``.

    Observed cells count as observed; an unobserved cell counts its
    probability at the support point. Returns ``mean`` (the template's
    accuracy at each point), ``var`` (the Bernoulli variance of its
    unobserved outcomes there), ``weights`` (the posterior of the
    effect) and ``observed`` (the part of the accuracy its observed cells
    give, the same at every point), per template unit.
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
    p = f["key_p"]
    summed = _cells_by_unit(cells, f["cell_key"], n_units, p.shape[0])
    unit_cells = np.diff(summed.indptr)
    seen_p = np.asarray(summed @ p)
    seen_v = np.asarray(summed @ (p * (1.0 - p)))
    seen_y = np.bincount(cells, f["y"], n_units)
    g = groups[unit_slice, unit_t]
    nu = n[unit_slice][:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = seen_y / n[unit_slice]
        mean = (seen_y[:, None] + total_p[unit_slice, g] - seen_p) / nu
        var = np.maximum(total_v[unit_slice, g] - seen_v, 0.0) / nu**2
    # a template with every sample observed has nothing to predict: the difference of the
    # two sums would leave rounding noise (its square root, in the draws, about 1e-9)
    full = unit_cells >= n[unit_slice]
    mean[full] = observed[full, None]
    var[full] = 0.0
    weights, _ = _posterior(f["likelihood"], f["prior"], unit_slice)
    return {
        "mean": np.clip(mean, 0.0, 1.0),
        "var": var,
        "weights": weights,
        "observed": observed,
    }
