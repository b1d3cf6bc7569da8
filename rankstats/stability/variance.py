r"""Variance components of a score cube (generalizability theory), and intervals built on them.

Within each task the scores form a crossed model × template × sample array.
:func:`variance_components` splits their variance into the part due to the
models, to the templates, to the samples (items), to each two-way
interaction and to the rest, per task, with parametric bootstrap intervals;
:func:`score_intervals` turns the components into each model's standard
error "over both" templates and samples; :func:`variance_summary` is the
small table a report shows. The decision study (how many templates and
samples a leaderboard needs) is :func:`rankstats.stability.plan`.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import variance as _kv
from ..errors import RankstatsWarning
from ._checks import Dims, checked
from ._engine import generator
from ._facets import COMPONENT, component_names, facets_of
from .planning import default_options, design_now, design_outputs, plan_from, task_first

__all__ = ["score_intervals", "variance_components", "variance_summary"]

#: How the components are estimated, as the attributes record it.
METHOD = (
    "Henderson method I (method of moments for crossed random effects; the ANOVA "
    "expected-mean-squares estimators on a complete task); missing cells left out, "
    "none imputed; negative estimates kept"
)
INTERVALS = (
    "parametric bootstrap: normal effects with the estimated variances (negative as "
    "0) on the task's observed cells, re-estimated; each component's mean square per "
    "cell inverted as a scale pivot, less the larger effects' part, clipped at 0"
)


def _estimate_kernel(x, seeds, *, k, n_resamples, confidence_level, design=False):
    observed = ~np.isnan(x)
    estimate, mean, n = _kv.henderson(x, k, observed)
    reps = _kv.simulate(estimate, observed, n_resamples, seeds, k)
    low, high = _kv.scale_interval(
        estimate, reps, _kv.mean_square_weights(observed, k), confidence_level
    )
    levels = _kv.observed_levels(observed, k)
    found = {
        "estimate": estimate,
        "low": low,
        "high": high,
        "mean": mean,
        "n_cells": n,
        "n_missing": levels.prod(-1) - n,
    }
    if design:  # what plan needs besides the components, from the same pass
        found.update(design_now(x, observed, k, levels))
    return found


def _seeds(scores, lead, seed):
    rng, seed_attr = generator(seed)
    shape = [scores.sizes[d] for d in lead]
    seeds = xr.DataArray(
        rng.integers(0, 2**63 - 1, size=shape, dtype=np.int64),
        dims=lead,
        coords={d: scores[d] for d in lead if d in scores.coords},
    )
    if scores.chunks is not None:
        seeds = seeds.chunk({d: scores.chunksizes[d] for d in lead})
    return seeds, seed_attr


def _warn_undefined(data, dims, function):
    bad = data["estimate"].isnull().any(COMPONENT)
    if bool(bad.any()):
        where = bad.to_series()
        shown = ", ".join(map(str, where[where].index[:5])) + (", ..." if where.sum() > 5 else "")
        warnings.warn(
            f"{function}: no components for {int(where.sum())} slice(s) ({shown}): a "
            "facet with fewer than two observed levels, or missing cells that "
            "confound two effects",
            RankstatsWarning,
            stacklevel=5,
        )


@checked(n_resamples=o.positive_int)
def variance_components(
    x,
    n_resamples=1000,
    *,
    seed=None,
    confidence_level=0.95,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Split each task's score variance into model, template, sample and interaction parts.

    Parameters
    ----------
    x : score cube or xarray.DataArray
        Scores ``(model, task, template[, sample])``; other dimensions are
        carried along like tasks. Without ``sample`` (per-template scores
        only) the components are model, template and their interaction
        with the error.
    {n_resamples}
        Here: parametric bootstrap replicates per task.
    {seed}
    {confidence_level}
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset
        Over ``(component, task)``: ``estimate``, ``low``, ``high``; over
        ``task``: ``mean`` (grand mean), ``n_cells`` (observed scores) and
        ``n_missing`` (cells of present models on real templates and
        samples that hold no score, left out). ``component`` is ``model``,
        ``template``, ``sample``, ``model:template``, ``model:sample``,
        ``template:sample`` and ``model:template:sample+error``: with one
        score per cell the three-way interaction and the error cannot be
        told apart, so the last component is their sum (without samples,
        ``model:template+error``).

    Notes
    -----
    The model is the crossed random-effects model of generalizability
    theory (Brennan 2001): every model, template and sample effect and
    every interaction is a random draw with its own variance,

    .. math:: x_{mpi} = \mu + a_m + b_p + c_i + (ab)_{mp} + (ac)_{mi} + (bc)_{pi} + e_{mpi}.

    **Estimates.** Henderson's method I, the method of moments for
    all-random models: for every margin A (model, template, ..., model ×
    template, ...) the quadratic form :math:`T_A = \sum_a y_{a\cdot}^2/n_a` of
    the level totals is equated to its expectation and the differences
    :math:`T_A - T_\emptyset` are solved for the seven variances. On a task
    with every cell observed these are exactly the ANOVA
    (expected-mean-squares) estimators, and equal the REML estimates when
    none is negative. On an incomplete task nothing is imputed or deleted
    listwise: the missing cells are left out (``n_missing`` counts them;
    padding and absent models are not cells) and the estimators stay
    unbiased if cells are missing at random. Estimates can be negative (a
    variance too small to tell from 0); they are kept as they are, and the
    decision study treats them as 0. A task where a facet has fewer than
    two observed levels, or whose missing cells confound two effects, gets
    NaN and a :class:`~rankstats.errors.RankstatsWarning`.

    **Intervals.** A parametric bootstrap: each replicate draws normal
    effects with the estimated variances (negative ones as 0) on the task's
    observed cells and estimates again. Each component is a mean square
    per cell, :math:`Y_r`, less the part :math:`S_r` that the effects
    containing it add (in a complete task
    :math:`E[MS_r]/c_r = \sigma^2_r + S_r`). Y is a scale family, so
    :math:`Y/E[Y]` is taken to vary as :math:`Y^*/Y_+` does over the
    replicates (``+``: from the components clipped at 0), which gives
    :math:`[Y Y_+/q_{hi} - S, Y Y_+/q_{lo} - S]` with q the quantiles of
    :math:`Y^*`, clipped at 0 (exact for the error component of a complete
    task with normal effects). Binary scores are not normal: the
    components are still unbiased, the intervals approximate. Coverage of
    planted values by simulation (``tests/test_variance_components.py``,
    quoted in the user guide's "Rank stability" page): 92.8% to 97.2% for
    every component of complete 10 × 8 × 30, 6 × 5 × 20 and 5 × 4 × 10
    cubes at the 95% level, 91.5% to 94.5% with a tenth of the cells
    missing.

    Cost: one pass over the cube per margin for the estimates. A task
    whose observed levels are fully crossed draws its replicates' mean
    squares directly (independent scaled chi-squares under normality, the
    same distribution as a simulated task); a task with missing cells
    simulates whole tasks, ``n_resamples`` times its cells in normal draws
    (in blocks of about 10 million). 1000 replicates of a complete binary
    cube of 16 models × 25 tasks × 240 templates × 100 samples take about
    8 s on two cores, of the Mizrahi et al. cube under 0.1 s.

    References
    ----------
    .. [1] Brennan, R. L. (2001). Generalizability Theory. Springer.
    .. [2] Henderson, C. R. (1953). Estimation of variance and covariance
       components. Biometrics 9(2), 226-252.
    .. [3] Searle, S. R., Casella, G., & McCulloch, C. E. (1992). Variance
       Components. Wiley (ch. 5, Henderson's methods).

    See Also
    --------
    score_intervals : a model's standard error from the components.
    plan : how many templates and samples a leaderboard needs.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(0)
    >>> m, t, s = 8, 6, 30
    >>> scores = (rng.normal(0, 1.0, (m, 1, 1)) + rng.normal(0, 0.5, (1, t, 1))
    ...           + rng.normal(0, 0.7, (1, 1, s)) + rng.normal(0, 0.3, (m, t, s)))
    >>> cube = xr.DataArray(scores[:, None], dims=("model", "task", "template", "sample"))
    >>> vc = stability.variance_components(cube, n_resamples=200, seed=0)
    >>> vc[["estimate", "low", "high"]].sel(task=0).to_dataframe().round(3)
                                 estimate    low   high
    component
    model                           0.369  0.168  1.237
    template                        0.172  0.062  0.861
    sample                          0.323  0.209  0.597
    model:template                 -0.000  0.000  0.001
    model:sample                    0.001  0.000  0.005
    template:sample                -0.000  0.000  0.003
    model:template:sample+error     0.087  0.080  0.096

    The planted variances were 1, 0.25, 0.49, 0, 0, 0 and 0.09 (eight
    models and six templates say little about their variances).
    """
    dims = Dims(model, task, template, sample)
    scores, facets = facets_of(x, "variance_components", dims)
    return _components(
        scores, facets, dims, "variance_components", n_resamples, seed, confidence_level
    )


def _components(scores, facets, dims, function, n_resamples, seed, confidence_level, design=False):
    """:func:`variance_components` of checked ``scores``.

    With ``design``, also :func:`rankstats.stability.planning.design_now`'s
    variables, from the same pass over the scores.
    """
    lead = [d for d in scores.dims if d not in facets]
    seeds, seed_attr = _seeds(scores, lead, seed)
    outputs = {
        name: (name, [COMPONENT] if name in ("estimate", "low", "high") else [])
        for name in ("estimate", "low", "high", "mean", "n_cells", "n_missing")
    }
    if design:
        outputs.update(design_outputs(dims))
    data = _xr.apply_labelled(
        function,
        _estimate_kernel,
        [scores, seeds],
        [facets, []],
        outputs,
        kwargs={
            "k": len(facets),
            "n_resamples": n_resamples,
            "confidence_level": confidence_level,
            "design": design,
        },
        sizes={COMPONENT: 2 ** len(facets) - 1},
    )
    data = data.assign_coords({COMPONENT: component_names(facets)})
    data = data.transpose(COMPONENT, *lead, ...)
    data.attrs.update(
        {
            "statistic": "variance_components",
            "facets": " ".join(facets),
            "method": METHOD,
            "intervals": INTERVALS,
            "n_resamples": n_resamples,
            "seed": seed_attr,
            "confidence_level": confidence_level,
            "confounded": f"{':'.join(facets)} interaction and error (one score per cell)",
            "samples": "a facet"
            if len(facets) == 3
            else "not a facet: per-template scores only, over a fixed set of samples",
        }
    )
    if scores.chunks is None:
        _warn_undefined(data, dims, function)
    return data


# --------------------------------------------------------------------------- intervals


def _score_kernel(x, *, k, z):
    estimate = _kv.henderson(x, k)[0]
    observed = ~np.isnan(x)
    axes = tuple(range(-k + 1, 0))
    count = observed.sum(axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(observed, x, 0.0).sum(axes) / np.where(count > 0, count, np.nan)
    se = np.sqrt(_kv.score_variance(estimate, observed, k))
    return {"score": score, "se": se, "low": score - z * se, "high": score + z * se}


@checked(method=o.one_of("components", "bootstrap"), n_resamples=o.positive_int)
def score_intervals(
    x,
    method="components",
    *,
    confidence_level=0.95,
    n_resamples=1000,
    seed=None,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Each model's score with its standard error and interval over templates and samples.

    Parameters
    ----------
    x : score cube or xarray.DataArray
        Scores ``(model, task, template[, sample])``.
    method : {"components", "bootstrap"}, default "components"
        From the variance components (see Notes), or the two-way bootstrap
        of :func:`intervals` (``over="both"``, percentile, by AvgP).
    {confidence_level}
    {n_resamples}
        Used by ``method="bootstrap"`` only.
    {seed}
        Used by ``method="bootstrap"`` only.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset
        Over ``(model, task)``: ``score`` (the mean of the model's scores),
        ``se``, ``low`` and ``high``; the attribute ``method`` says how.

    Notes
    -----
    The target is the model's universe score: its mean over all templates
    and samples the benchmark's could have been drawn from. Its error
    variance in a task with ``n_t`` templates and ``n_s`` samples, every
    cell observed, is the absolute error variance of generalizability
    theory,

    .. math:: \sigma^2_\Delta = \frac{\sigma^2_t + \sigma^2_{mt}}{n_t}
              + \frac{\sigma^2_s + \sigma^2_{ms}}{n_s}
              + \frac{\sigma^2_{ts} + \sigma^2_{mts,e}}{n_t n_s},

    with the components of :func:`variance_components` (negative ones as
    0); with missing cells each effect is weighted by the shares of the
    model's cells in its levels. The interval is ``score ± z se`` with z
    the normal quantile. The two-way bootstrap resamples templates and
    samples independently; its variance counts the
    :math:`\sigma^2_{ts} + \sigma^2_{mts,e}` term about twice over
    (McCullagh 2000) and shrinks the templates' and samples' own
    variances by (n - 1)/n. Without samples the components give
    :math:`(\sigma^2_t + \sigma^2_{mt,e})/n_t`, over templates only.
    Coverage of the universe scores by 95% intervals, six models, 400
    simulated cubes (normal effects): 93.6% from the components and 87.1%
    by the bootstrap over 3 templates × 20 samples, 95.4% and 93.4% over
    10 × 50, 95.6% and 95.0% over 30 × 100 (``tests/test_variance_components.py``,
    ``-m slow``).

    References
    ----------
    .. [1] McCullagh, P. (2000). Resampling and exchangeable arrays.
       Bernoulli 6(2), 285-301.
    .. [2] Brennan, R. L. (2001). Generalizability Theory. Springer.

    See Also
    --------
    variance_components, intervals

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(1)
    >>> scores = (np.array([0.6, 0.5, 0.3])[:, None, None] + rng.normal(0, 0.05, (1, 5, 1))
    ...           + rng.normal(0, 0.1, (1, 1, 40)) + rng.normal(0, 0.1, (3, 5, 40)))
    >>> cube = xr.DataArray(scores[:, None], dims=("model", "task", "template", "sample"))
    >>> ci = stability.score_intervals(cube)
    >>> ci.se.sel(task=0).values.round(3)
    array([0.026, 0.026, 0.026])
    >>> ci.low.sel(task=0).values.round(3), ci.high.sel(task=0).values.round(3)
    (array([0.541, 0.447, 0.258]), array([0.641, 0.547, 0.358]))
    """
    dims = Dims(model, task, template, sample)
    if method == "bootstrap":
        from .resampling import intervals

        scores, facets = facets_of(x, "score_intervals", dims)
        over = "both" if len(facets) == 3 else "templates"
        ci = intervals(
            scores,
            n_resamples,
            over,
            seed=seed,
            confidence_level=confidence_level,
            statistics=["avgp"],
            model=model,
            task=task,
            template=template,
            sample=sample,
        )
        data = xr.Dataset(
            {
                "score": ci["avgp"],
                "se": ci["avgp_se"],
                "low": ci["avgp_low"],
                "high": ci["avgp_high"],
            }
        )
        data.attrs = {
            **ci.attrs,
            "statistic": "score_intervals",
            "method": "bootstrap",
            "over": over,
        }
        return data
    scores, facets = facets_of(x, "score_intervals", dims)
    data = _xr.apply_labelled(
        "score_intervals",
        _score_kernel,
        [scores],
        [facets],
        {name: (name, [dims.model]) for name in ("score", "se", "low", "high")},
        kwargs={"k": len(facets), "z": float(_kv.normal_quantile(confidence_level))},
    )
    data = data.transpose(dims.model, ...)
    data.attrs.update(
        {
            "statistic": "score_intervals",
            "method": "components",
            "confidence_level": confidence_level,
            "se": "absolute error variance from the variance components",
            "facets": " ".join(facets),
        }
    )
    return data


# --------------------------------------------------------------------------- report


@checked(n_resamples=o.positive_int, target_tau=o.probability)
def variance_summary(
    x,
    n_resamples=200,
    *,
    seed=None,
    confidence_level=0.95,
    target_tau=0.9,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    """What a report shows of the variance components: shares and the templates needed.

    Parameters
    ----------
    x : score cube or xarray.DataArray
        Scores ``(model, task, template[, sample])``.
    {n_resamples}
        Of the components' bootstrap.
    {seed}
    {confidence_level}
    target_tau : float, default 0.9
        The expected replication tau the plan aims at.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset
        Over ``(component, task)``: ``variance_share`` (each component's
        share of the task's variance, negative estimates as 0),
        ``variance_estimate``, ``variance_low``, ``variance_high`` (of
        :func:`variance_components`); over ``task``: ``g_coefficient`` and
        ``replication_tau`` (expected Kendall tau with a replication) at the
        task's own design, ``templates_for_tau``, the planner's fresh
        templates (the task's own samples held fixed) for two reruns to
        reach tau-b ≥ ``target_tau`` with probability 0.95, the question of
        :func:`rankstats.templates_needed` (``overall_templates_for_tau``:
        for the mean score over the tasks), and
        ``variance_cells_missing``, the missing cells left out. The names do not
        clash with those of :func:`rankstats.report`'s Dataset, so the two
        merge.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats import stability
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> summary = stability.variance_summary(cube, n_resamples=50, seed=0)
    >>> summary.variance_share.sel(task="word_before").to_series().round(2)
    component
    model                   0.46
    template                0.18
    model:template+error    0.36
    Name: variance_share, dtype: float64
    """
    dims = Dims(model, task, template, sample)
    scores, facets = task_first(x, "variance_summary", dims)
    # one pass of the moment equations serves both the components and the plan
    vc = _components(
        scores, facets, dims, "variance_summary", n_resamples, seed, confidence_level, design=True
    )
    design = ["model_mean", "n_templates_now", "n_samples_now"]
    planned = plan_from(
        vc[["estimate", *design]].compute(),
        scores,
        facets,
        dims,
        **default_options(target_tau=target_tau),
    )
    vc = vc.drop_vars(design)
    positive = vc["estimate"].clip(min=0)
    data = xr.Dataset(
        {
            "variance_share": positive / positive.sum(COMPONENT),
            "variance_estimate": vc["estimate"],
            "variance_low": vc["low"],
            "variance_high": vc["high"],
            "g_coefficient": planned["g_coefficient_now"].drop_vars(COMPONENT, errors="ignore"),
            "replication_tau": planned["tau_now"].drop_vars(COMPONENT, errors="ignore"),
            "templates_for_tau": planned["n_templates_needed_fixed_samples"].drop_vars(
                COMPONENT, errors="ignore"
            ),
            "variance_cells_missing": vc["n_missing"],
            "overall_templates_for_tau": planned["overall_n_templates_needed_fixed_samples"],
        }
    )
    data.attrs = {**vc.attrs, "statistic": "variance_summary", "target_tau": target_tau}
    return data
