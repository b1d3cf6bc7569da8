"""Which budgeted estimator to trust at which budget: each replayed on a complete cube.

Three estimators spend a budget of (template, sample) evaluations per model
and task:

``random-avgp``
    Random templates per sample (Mizrahi et al., 2024, section 7): each
    template's accuracy is the mean of its evaluated cells, AvgP the mean
    of every cell, MaxP the best template mean, the quantiles those of the
    template means (templates never drawn left out).
``halving-maxp``
    Successive halving for the best template, its stages fitted to the
    budget (:func:`rankstats._kernels.irt.halving_stages`): MaxP only.
``irt``
    The item-response model of :func:`~rankstats.estimate_distribution`
    on the same cells as ``random-avgp``.

:func:`simulate_estimators` draws partial designs from a cube whose every
cell is known and compares each estimate with the full-data value.

Examples
--------
>>> import rankstats
>>> cube = rankstats.planted_cube(models=4, templates=20, samples=20, seed=0)
>>> out = rankstats.simulate_estimators(cube, budgets=[40], n_resamples=3, seed=0)
>>> sorted(out.data_vars)
['bias', 'calls', 'error', 'error_se', 'over_budget']
>>> out.estimator.values.tolist()
['random-avgp', 'halving-maxp', 'irt']
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import budget as _kb
from .._kernels import irt as _k
from ..errors import CubeError, DimensionError, OptionError
from ..stability._checks import checked
from ..stability._engine import generator
from .budget import _prepared
from .irt import QUANTILES, _fit_and_summarise, _quantiles, per_sample_scores, positions

__all__ = ["METHODS", "simulate_estimators"]

#: The estimators, as ``rankstats estimate --method`` names them.
METHODS = ("random-avgp", "halving-maxp", "irt")


def _methods(function: str, name: str, value) -> tuple[str, ...]:
    values = (value,) if isinstance(value, str) else tuple(value)
    if values and all(v in METHODS for v in values):
        return tuple(dict.fromkeys(values))
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be names "
        f"among {', '.join(METHODS)}"
    )


def _budgets(function: str, name: str, value):
    if value is None:
        return None
    values = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if values and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in values
    ):
        return tuple(int(v) for v in values)
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be positive "
        "integers (cells per model and task)"
    )


def _target_names(quantiles) -> list[str]:
    return [f"{100 * q:g}%" for q in quantiles] + ["avgp", "maxp"]


def truth(y: np.ndarray, templates: np.ndarray, quantiles) -> np.ndarray:
    """The full-data quantiles, AvgP and MaxP of ``(..., template, sample)`` scores."""
    means = _kb.template_means(y, True)
    means = np.where(templates, means, np.nan)
    present = ~np.isnan(means)
    some = present.any(-1)
    filled = np.where(some[..., None], means, 0.0)
    q = np.moveaxis(np.nanquantile(filled, quantiles, axis=-1), 0, -1)
    avgp = _kb.masked_mean(np.nan_to_num(means), present)
    maxp = np.where(some, np.where(present, means, -np.inf).max(-1), np.nan)
    out = np.concatenate([q, avgp[..., None], maxp[..., None]], -1)
    return np.where(some[..., None], out, np.nan)


def _with_samples(cube, sample_sd, samples, function: str, rng):
    """Per-template scores made per-sample by the item-difficulty model; others as given."""
    scores = cube["score"] if isinstance(cube, xr.Dataset) and "score" in cube else cube
    if not isinstance(scores, xr.DataArray) or "sample" in scores.dims:
        if sample_sd is not None:
            raise OptionError(
                f"{function}: sample_sd={sample_sd!r} is not allowed: it applies "
                "to per-template scores only; this cube has per-sample scores"
            )
        return cube
    if sample_sd is None:
        raise DimensionError(
            f"{function}: the cube has per-template scores only; give "
            "sample_sd (and samples) to draw per-sample outcomes from an "
            "item-difficulty model"
        )
    drawn, _, _ = _prepared(cube, None, samples, function, None, rng, sample_sd)
    return drawn.transpose(..., "template", "sample")


@checked(
    budgets=_budgets,
    sample_sd=o.optional(o.finite),
    samples=o.optional(o.positive_int),
    methods=_methods,
    quantiles=_quantiles,
    n_resamples=o.positive_int,
    pool_models=o.boolean,
)
def simulate_estimators(
    cube,
    *,
    budgets=None,
    methods=METHODS,
    quantiles=QUANTILES,
    n_resamples: int = 10,
    pool_models: bool = True,
    sample_sd: float | None = None,
    samples: int | None = None,
    seed=None,
) -> xr.Dataset:
    """Each budgeted estimator's error against the full-data value, across budgets.

    Parameters
    ----------
    cube : score cube or xarray.DataArray
        Per-sample scores in [0, 1], every cell known (a cell that is NaN
        inside the task's templates and samples is simply never observed).
    budgets : sequence of int, optional
        Cells per model and task; by default 1, 2, 4 and 8 times the
        largest task's samples.
    methods : sequence of str, default METHODS
        Among ``"random-avgp"``, ``"halving-maxp"`` and ``"irt"``.
    quantiles : sequence of float, default QUANTILES
        The quantiles across templates compared.
    n_resamples : int, default 10
        Partial designs drawn per budget (and searches, for halving).
    pool_models : bool, default True
        As in :func:`~rankstats.estimate_distribution`.
    sample_sd : float, optional
        For per-template scores (a study's released accuracies): draw one
        table of per-sample outcomes from the item-difficulty model of
        :func:`~rankstats.simulate_avgp` (difficulties N(0, sample_sd²)
        shared by the templates) and compare the estimators on it.
    samples : int, optional
        Samples per task for per-template scores; by default the largest
        ``template_samples`` of each task.
    {seed}

    Returns
    -------
    xarray.Dataset
        Over ``estimator``, ``budget`` and ``target`` (each quantile as
        ``"5%"``, ..., then ``"avgp"`` and ``"maxp"``): ``error`` (mean
        absolute error over the models, tasks and designs), ``error_se``
        (its standard error), ``bias`` (mean signed error), ``calls``
        (mean cells evaluated) and ``over_budget`` (how far ``calls``
        exceeds the budget, 0 within it). NaN where a method does not
        estimate a target (halving estimates MaxP only).

    Notes
    -----
    ``random-avgp`` and ``irt`` read the same designs, drawn by
    :func:`~rankstats.random_design`. Successive halving spends at least
    one call per template in its first stage, so below that budget it
    overspends; ``calls`` says what it spent and ``over_budget`` by how much.

    Raises
    ------
    CubeError
        The cube holds no score at all.

    See Also
    --------
    rankstats.estimate_distribution, rankstats.simulate_avgp, rankstats.simulate_maxp

    Examples
    --------
    >>> import rankstats
    >>> cube = rankstats.planted_cube(models=6, templates=30, samples=30, seed=1)
    >>> out = rankstats.simulate_estimators(cube, budgets=[60], methods=["random-avgp", "irt"],
    ...                                     n_resamples=2, seed=0)
    >>> error = out.error.sel(budget=60)
    >>> bool((error.sel(estimator="irt", target="5%") < error.sel(estimator="random-avgp",
    ...                                                        target="5%")))
    True
    """
    function = "simulate_estimators"
    rng, seed_attr = generator(seed)
    cube = _with_samples(cube, sample_sd, samples, function, rng)
    scores = per_sample_scores(cube, function)
    scores = scores.transpose(..., "task", "model", "template", "sample")
    templates, samples = positions(scores)
    y = scores.values
    lead = y.shape[:-2]
    t_in = np.broadcast_to(templates[..., None, :], lead + templates.shape[-1:])
    s_in = np.broadcast_to(samples[..., None, :], lead + samples.shape[-1:])
    present = ~np.isnan(y).all((-2, -1))
    if not present.any():
        raise CubeError(
            f"{function}: the cube holds no score: every model is missing on every task "
            f"({scores.sizes['model']} models × {scores.sizes['task']} tasks), so there is "
            "nothing to draw partial designs from"
        )
    exact = np.where(present[..., None], truth(y, t_in, quantiles), np.nan)
    if budgets is None:
        largest = int(samples.sum(-1).max()) if samples.size else 1
        budgets = tuple(k * largest for k in (1, 2, 4, 8))
    hib = _xr.higher_is_better_of(cube, None)
    targets = _target_names(quantiles)
    shape = (len(methods), len(budgets), len(targets))
    error, error_se, bias = (np.full(shape, np.nan) for _ in range(3))
    calls = np.full(shape[:2], np.nan)
    for j, budget in enumerate(budgets):
        design = None
        if {"random-avgp", "irt"} & set(methods):
            reps = (n_resamples, *lead)
            design = _k.random_design(
                np.broadcast_to(t_in, reps + t_in.shape[-1:]),
                np.broadcast_to(s_in, reps + s_in.shape[-1:]),
                budget,
                rng,
            )
            partial = np.where(design, y, np.nan)
        for i, method in enumerate(methods):
            if method == "random-avgp":
                out = _k.observed_summaries(partial, t_in, s_in, quantiles)
                estimate = np.concatenate(
                    [out["quantile"], out["avgp"][..., None], out["maxp"][..., None]], -1
                )
                spent = out["calls"]
            elif method == "irt":
                out = _fit_and_summarise(
                    partial, templates, samples, None, 0, pool_models, quantiles, 100, 0.95, rng
                )
                estimate = np.concatenate(
                    [out["quantile"], out["avgp"][..., None], out["maxp"][..., None]], -1
                )
                spent = out["calls"]
            else:
                n_t = int(templates.sum(-1).max()) if templates.size else 1
                n_s = int(samples.sum(-1).max()) if samples.size else 1
                stages = _k.halving_stages(n_t, n_s, budget)
                masked = np.where(t_in[..., :, None] & s_in[..., None, :], y, np.nan)
                run = _kb.successive_halving(
                    masked,
                    per_sample=True,
                    n_samples=None,
                    stages=stages,
                    trials=n_resamples,
                    rng=rng,
                    higher_is_better=hib,
                )
                estimate = np.full((n_resamples, *lead, len(targets)), np.nan)
                estimate[..., -1] = np.moveaxis(run["observed"], -1, 0)
                spent = np.moveaxis(run["calls"], -1, 0)
            diff = np.where(present[..., None], estimate - exact, np.nan)
            diff = diff.reshape(-1, len(targets))
            count = (~np.isnan(diff)).sum(0)
            with np.errstate(invalid="ignore", divide="ignore"):
                error[i, j] = np.where(
                    count > 0, np.nansum(np.abs(diff), 0) / np.maximum(count, 1), np.nan
                )
                bias[i, j] = np.where(count > 0, np.nansum(diff, 0) / np.maximum(count, 1), np.nan)
                spread = np.sqrt(
                    np.nansum((np.abs(diff) - error[i, j]) ** 2, 0) / np.maximum(count - 1, 1)
                )
                error_se[i, j] = np.where(count > 1, spread / np.sqrt(count), np.nan)
            calls[i, j] = float(
                np.mean(np.asarray(spent, float)[np.broadcast_to(present, np.shape(spent))])
            )
    coords = {"estimator": list(methods), "budget": list(budgets), "target": targets}
    dims = ("estimator", "budget", "target")
    return xr.Dataset(
        {
            "error": (dims, error),
            "error_se": (dims, error_se),
            "bias": (dims, bias),
            "calls": (("estimator", "budget"), calls),
            "over_budget": (
                ("estimator", "budget"),
                np.maximum(calls - np.asarray(budgets, float), 0.0),
            ),
        },
        coords=coords,
        attrs={
            "statistic": function,
            "n_resamples": n_resamples,
            "seed": seed_attr,
            "pool_models": str(pool_models),
            "design": "random templates per sample, balanced over samples",
            "full_calls": float(np.mean(t_in.sum(-1) * s_in.sum(-1))),
        },
    )


def onehot_rasch(y: np.ndarray, templates: np.ndarray, samples: np.ndarray, penalty: float = 1.0):
    r"""Each template's accuracy by a fixed-effects Rasch fit per model: the PromptEval baseline.

    As Polo et al. (2024) describe their estimator: for each model alone,
    a logistic regression of correctness on an intercept, one-hot template
    and one-hot sample covariates with an L2 penalty
    (:math:`\tfrac{1}{2} \lambda \lVert \beta \rVert^2` on the template and
    sample coefficients, ``penalty`` :math:`= \lambda`, as scikit-learn's
    ``C = 1 / \lambda``), fitted by SciPy's L-BFGS; a template's accuracy is
    the mean over the task's samples of its observed outcomes and, where a
    cell was not observed, the fitted probability. A comparison baseline,
    one fit per slice (a Python loop by design, as the reference does).

    ``y`` ``(..., template, sample)`` with NaN for unobserved cells;
    ``templates`` ``(..., template)`` and ``samples`` ``(..., sample)`` the
    positions that exist. Returns ``(..., template)`` accuracies (NaN where a
    template does not exist or the slice has no observed cell).

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats.analyses.estimators import onehot_rasch
    >>> y = np.array([[1.0, np.nan, 0.0], [np.nan, 1.0, 1.0]])
    >>> onehot_rasch(y, np.ones(2, bool), np.ones(3, bool)).round(3).tolist()
    [0.578, 0.955]
    """
    from scipy import optimize, sparse, special

    y = np.asarray(y, dtype=float)
    lead = y.shape[:-2]
    n_t, n_s = y.shape[-2:]
    flat = y.reshape(-1, n_t, n_s)
    t_in = np.broadcast_to(templates, (*lead, n_t)).reshape(-1, n_t)
    s_in = np.broadcast_to(samples, (*lead, n_s)).reshape(-1, n_s)
    out = np.full(flat.shape[:2], np.nan)
    for i in range(flat.shape[0]):
        seen = ~np.isnan(flat[i]) & t_in[i][:, None] & s_in[i][None, :]
        t, s = np.nonzero(seen)
        if not t.size:
            continue
        outcome = flat[i][t, s]
        rows = np.arange(t.size)
        design = sparse.csr_matrix(
            (
                np.ones(3 * t.size),
                (np.r_[rows, rows, rows], np.r_[np.zeros(t.size, int), 1 + t, 1 + n_t + s]),
            ),
            shape=(t.size, 1 + n_t + n_s),
        )
        weight = np.full(1 + n_t + n_s, penalty)
        weight[0] = 0.0

        def objective(beta, design=design, outcome=outcome, weight=weight):
            eta = design @ beta
            loss = np.sum(np.logaddexp(0.0, eta) - outcome * eta) + 0.5 * np.sum(weight * beta**2)
            return loss, design.T @ (special.expit(eta) - outcome) + weight * beta

        beta = optimize.minimize(objective, np.zeros(1 + n_t + n_s), jac=True, method="L-BFGS-B").x
        p = special.expit(beta[0] + beta[1 : 1 + n_t, None] + beta[None, 1 + n_t :])
        filled = np.where(seen, flat[i], p)
        with np.errstate(invalid="ignore"):
            means = np.where(s_in[i][None, :], filled, 0.0).sum(-1) / s_in[i].sum()
        out[i] = np.where(t_in[i], means, np.nan)
    return out.reshape(*lead, n_t)
