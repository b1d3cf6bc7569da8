r"""An item-response model of per-sample correctness, fitted from a partial design.

For one model and task, the outcome of template t on sample s is

.. math::

   P(y_{ts} = 1) = \operatorname{logistic}(\mu + \gamma_{g(t)} + a_t + b_s),
   \qquad a_t \sim N(0, \tau_a^2), \quad b_s \sim N(0, \tau_b^2),

with an optional fixed effect :math:`\gamma_g` per group of templates (a
template covariate such as how a paraphrase was made). Only the cells of a
partial design are observed (NaN elsewhere). The effects are the posterior
mode (penalised logistic regression, one L-BFGS run over every slice at
once, since the slices' objectives are separate sums); the prior variances
are set by empirical Bayes (Laplace-EM: :math:`\tau^2 \leftarrow` the mean
of :math:`\hat a_t^2 + 1 / H_{tt}`).

Arrays are ``(..., template, sample)``; ``templates`` ``(..., template)``
and ``samples`` ``(..., sample)`` say which positions exist (padding does
not). Everything is vectorised over the leading axes: the observations of
every slice are one flat list, and sums per effect are ``bincount``\ s.
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


def template_posterior(f: dict) -> dict:
    r"""Each template's accuracy over the task's samples, and what its uncertainty is made of.

    Observed cells count as observed; an unobserved cell counts its
    probability, averaged over the effects' posterior by the probit
    approximation :math:`E\,\sigma(x) \approx \sigma(m / \sqrt{1 + \pi v / 8})`.
    Returns ``mean`` ``(slices, template)`` and the linearised pieces of its
    posterior spread: ``c`` (the derivative with respect to the template's
    own effect, the intercept and its group's effect), ``w`` ``(slices,
    template, sample)`` (with respect to each sample's effect) and
    ``bernoulli`` (the variance of the unobserved outcomes themselves).
    """
    templates, samples, seen = f["templates"], f["samples"], f["seen"]
    eta = f["mu"][:, None, None] + f["a"][:, :, None] + f["b"][:, None, :]
    var = f["var_mu"][:, None, None] + f["var_a"][:, :, None] + f["var_b"][:, None, :]
    if f["n_groups"]:
        g = np.clip(f["groups"], 0, None)
        eta = eta + np.take_along_axis(f["gamma"], g, -1)[:, :, None]
        var = var + np.take_along_axis(f["var_gamma"], g, -1)[:, :, None]
    p = special.expit(eta / np.sqrt(1.0 + np.pi * var / 8.0))
    unseen = ~seen & templates[:, :, None] & samples[:, None, :]
    n = samples.sum(-1).astype(float)[:, None]
    y = np.zeros(seen.shape)
    y[seen] = f["y"]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (y.sum(-1) + np.where(unseen, p, 0.0).sum(-1)) / n
        slope = np.where(unseen, p * (1.0 - p), 0.0) / n[..., None]
        bernoulli = slope.sum(-1) / n
    mean = np.where(templates, mean, np.nan)
    return {"mean": mean, "c": slope.sum(-1), "w": slope, "bernoulli": bernoulli}


def posterior_draws(f: dict, post: dict, n_draws: int, rng, chunk: int = 64) -> np.ndarray:
    """Joint draws of every template's accuracy, ``(slices, draws, template)``.

    The effects are drawn from their (diagonal) Laplace posterior and pushed
    through the linearisation of :func:`template_posterior`: the intercept
    and a group's effect move all its templates together, a sample's effect
    moves every template that has not observed it, a template's own effect
    only itself; the unobserved outcomes add their Bernoulli variance. The
    draws are clipped to [0, 1].
    """
    slices, n_t = post["mean"].shape
    out = np.empty((slices, n_draws, n_t))
    sd_b = np.sqrt(f["var_b"])
    for start in range(0, n_draws, chunk):
        k = min(chunk, n_draws - start)
        shared = np.sqrt(f["var_mu"])[:, None] * rng.standard_normal((slices, k))
        move = shared[:, :, None] * post["c"][:, None, :]
        if f["n_groups"]:
            z = rng.standard_normal((slices, k, f["n_groups"])) * np.sqrt(f["var_gamma"])[:, None]
            g = np.broadcast_to(np.clip(f["groups"], 0, None)[:, None, :], (slices, k, n_t))
            move += np.take_along_axis(z, g, -1) * post["c"][:, None, :]
        own = np.sqrt(f["var_a"] * post["c"] ** 2 + post["bernoulli"])
        move += own[:, None, :] * rng.standard_normal((slices, k, n_t))
        zb = sd_b[:, :, None] * rng.standard_normal((slices, sd_b.shape[-1], k))
        move += np.swapaxes(np.matmul(post["w"], zb), -1, -2)
        out[:, start : start + k] = np.clip(post["mean"][:, None, :] + move, 0.0, 1.0)
    return out


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
    q = np.moveaxis(np.nanquantile(x, quantiles, axis=-1), 0, -1)  # (..., draws, quantile)
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
