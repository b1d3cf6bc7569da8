r"""The decision study: how many templates and samples a leaderboard needs.

From the components of :func:`rankstats.stability.variance_components`,
:func:`plan` predicts for any number of templates and samples the error
variance of every model's score, the generalizability coefficient, the
expected Kendall tau between the leaderboard and a replication of it (new
templates, new samples), and the probability that two models a given
distance apart come out in the right order; and it finds the cheapest
design that reaches a target tau.
"""

from __future__ import annotations

import inspect

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import variance as _kv
from ..errors import DimensionError, OptionError
from ._checks import Dims, checked
from ._facets import COMPONENT, component_names, facets_of

__all__ = ["fresh_units_needed", "plan"]

N_TEMPLATES, N_SAMPLES, DIFFERENCE = "n_templates", "n_samples", "difference"
#: The options of :func:`plan` that :func:`plan_from` takes.
OPTIONS = (
    "target_tau",
    "probability",
    "template_cost",
    "sample_cost",
    "n_templates",
    "n_samples",
    "differences",
    "max_templates",
    "max_samples",
)


def _sizes(function: str, name: str, value):
    """A check that design sizes are a non-empty sequence of integers of at least 1."""
    values = np.asarray(value)
    if values.ndim == 1 and values.size and values.dtype.kind in "iu" and (values >= 1).all():
        return values.astype(int)
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a "
        "non-empty sequence of integers of at least 1"
    )


def _differences(function: str, name: str, value):
    try:
        values = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        values = np.array([np.nan])
    if values.size and np.isfinite(values).all() and (values > 0).all():
        return values
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a "
        "non-empty sequence of positive numbers (score differences)"
    )


def _non_negative(function: str, name: str, value):
    value = o.finite(function, name, value)
    if value < 0:
        raise OptionError(
            f"{function}: {name}={value!r} is not allowed; {name} must be a number of at least 0"
        )
    return value


def design_now(x, observed, k, levels=None):
    """Each model's mean score and the observed templates and samples of ``x (..., f_1..f_k)``.

    ``levels`` is :func:`rankstats._kernels.variance.observed_levels`, when the caller has it.
    """
    axes = tuple(range(-k + 1, 0))
    count = observed.sum(axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        # summed where observed: no zero-filled copy of the cube
        means = x.sum(axes, where=observed) / np.where(count > 0, count, np.nan)
    if levels is None:
        levels = _kv.observed_levels(observed, k)
    return {
        "model_mean": means,
        "n_templates_now": levels[..., 1],
        "n_samples_now": levels[..., 2] if k == 3 else np.full(levels.shape[:-1], np.nan),
    }


def _point_kernel(x, *, k):
    observed = ~np.isnan(x)
    return {"estimate": _kv.henderson(x, k, observed)[0], **design_now(x, observed, k)}


def design_outputs(dims):
    """The outputs of :func:`design_now`, as :func:`rankstats._xr.apply_labelled` takes them."""
    return {
        "model_mean": ("model_mean", [dims.model]),
        "n_templates_now": ("n_templates_now", []),
        "n_samples_now": ("n_samples_now", []),
    }


def task_first(x, function, dims):
    """The scores ``(task, ...)`` and their facets; a dimension beyond the cube's is refused."""
    scores, facets = facets_of(x, function, dims)
    if dims.task not in scores.dims:
        scores = scores.expand_dims(dims.task)
    scores = scores.transpose(dims.task, ...)
    lead = [d for d in scores.dims if d not in facets]
    if lead != [dims.task]:
        raise DimensionError(
            f"{function}: the scores have dimensions beyond the cube's "
            f"({', '.join(d for d in lead if d != dims.task)}); select one "
            "position of each first"
        )
    return scores, facets


def _study(c, nt, ns, differences):
    """Every D-study quantity of components ``c (..., C)`` at sizes broadcasting with them."""
    relative = _kv.relative_error(c, nt, ns)
    absolute = _kv.absolute_error(c, nt, ns)
    g = _kv.coefficient(c[..., 0], relative)
    return {
        "relative_error": relative,
        "absolute_error": absolute,
        "g_coefficient": g,
        "dependability": _kv.coefficient(c[..., 0], absolute),
        "tau": _kv.replication_tau(g),
        "tau_truth": _kv.replication_tau(np.sqrt(g)),
        "p_ordered": _kv.ordered_correctly(differences, relative[..., None]),
    }


def _overall(components, model_mean, relative_now):
    """The components of the mean over tasks, every task with the same design.

    Errors are independent across tasks, so each error component of the
    mean is the sum of the tasks' over T²; the models' universe variance is
    the variance of their mean scores less the error variance at the tasks'
    own designs (method of moments).
    """
    valid = np.isfinite(components).all(-1)
    count = valid.sum()
    if count < 2:
        return np.full(components.shape[-1], np.nan), int(count)
    c = np.clip(components[valid], 0, None)
    scored = np.isfinite(model_mean[:, valid])
    seen = scored.sum(1)
    # a model's mean over the tasks it has (none: it drops out)
    mean = np.where(scored, model_mean[:, valid], 0.0).sum(1)[seen > 0] / seen[seen > 0]
    spread = np.var(mean, ddof=1) if mean.size > 1 else np.nan
    overall = c.sum(0) / count**2
    overall[0] = spread - relative_now[valid].sum() / count**2
    return overall, int(count)


def _fixed_templates(c, n_templates):
    """Universe and per-item error variances with the templates held fixed (3 facets)."""
    c = np.clip(c, 0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        return c[..., 0] + c[..., 3] / n_templates, c[..., 4] + c[..., 6] / n_templates


def _fixed_samples_variances(c, n_samples, k):
    """Universe and per-template error variances with the samples held fixed."""
    c = np.clip(c, 0, None)
    if k == 2:
        return c[..., 0], c[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return c[..., 0] + c[..., 4] / n_samples, c[..., 3] + c[..., 6] / n_samples


def _one_template(x):
    """Model and item components ``(L, 3)`` of ``x (L, model, template, sample)``: templates pooled.

    With one template (or templates whose share cannot be estimated) the
    items are planned with the templates held fixed: the model × item
    array of each model's mean over the templates it has.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        count = (~np.isnan(x)).sum(-2)
        means = np.where(count > 0, np.nansum(x, axis=-2) / np.maximum(count, 1), np.nan)
    return _kv.henderson(means, 2)[0]


def _n_models(x, k):
    """Models with a score, per leading position of ``x (..., model, f_2..f_k)``."""
    return (~np.isnan(x)).any(axis=tuple(range(-k + 1, 0))).sum(-1)


def fresh_units_needed(values, units, target=0.9, probability=0.95, most=None):
    r"""The planner's number of fresh templates (or items) for a rerun that reproduces the ranking.

    Parameters
    ----------
    values : numpy.ndarray
        ``(L, templates, models)`` per-template scores (``units="template"``)
        or ``(L, templates, samples, models)`` per-sample scores
        (``units="sample"``), each leading position a task.
    units : {"template", "sample"}
        What is drawn afresh; the other facet is held fixed.
    target, probability : float
        Two reruns must reach tau-b ≥ ``target`` with ``probability``
        (``probability=None``: an expected tau of ``target``).
    most : int, optional
        Larger answers are NaN.

    Returns
    -------
    numpy.ndarray
        ``(L,)``: :func:`rankstats._kernels.variance.units_needed` with the
        universe and per-unit error variances of the task's components, the
        held facet's effects counted in the universe; NaN where they cannot
        be estimated or the models' variance is not positive.

    Notes
    -----
    This is :func:`plan`'s ``n_templates_needed_fixed_samples`` (and
    ``n_samples_needed_fixed_templates``), the extrapolation beside
    :func:`rankstats.templates_needed`'s model-free answer.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats.stability.planning import fresh_units_needed
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.normal(size=(1, 1, 8)) + rng.normal(0, 0.5, size=(1, 30, 8))
    >>> fresh_units_needed(scores, "template")
    array([1025.])
    """
    values = np.asarray(values, dtype=float)
    if units == "template":
        x = np.swapaxes(values, -1, -2)  # (L, model, template)
        c = _kv.henderson(x, 2)[0]
        universe, per_unit = c[..., 0], c[..., 2]
        m = _n_models(x, 2)
    else:
        x = np.moveaxis(values, -1, -3)  # (L, model, template, sample)
        c = _kv.henderson(x, 3)[0]
        n_t = _kv.observed_levels(~np.isnan(x), 3)[..., 1].astype(float)
        universe, per_unit = _fixed_templates(c, n_t)
        pooled = _one_template(x)
        fallback = np.isnan(c).any(-1)
        universe = np.where(fallback, pooled[..., 0], universe)
        per_unit = np.where(fallback, pooled[..., 2], per_unit)
        m = _n_models(x, 3)
    rho = _kv.replication_rho(target, probability, m)
    return _kv.units_needed(universe, per_unit, rho, most)


@checked(
    target_tau=o.probability,
    probability=o.optional(o.unit_interval),
    template_cost=_non_negative,
    sample_cost=_non_negative,
    n_templates=_sizes,
    n_samples=_sizes,
    differences=_differences,
    max_templates=o.positive_int,
    max_samples=o.positive_int,
)
def plan(
    x,
    target_tau=0.9,
    template_cost=1.0,
    sample_cost=1.0,
    *,
    probability=0.95,
    n_templates=(1, 2, 5, 10, 20, 50, 100),
    n_samples=(10, 50, 100, 500, 1000),
    differences=(0.01, 0.02, 0.05),
    max_templates=1000,
    max_samples=100_000,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""How many templates and samples each task needs for a leaderboard that replicates.

    Parameters
    ----------
    x : score cube or xarray.DataArray
        Scores ``(model, task, template[, sample])``. Without ``sample``
        (per-template scores only) samples are no facet: only templates are
        planned, over the benchmark's own samples.
    target_tau : float, default 0.9
        The Kendall tau-b between the leaderboard and a replication of it
        that the designs must reach.
    probability : float or None, default 0.95
        The probability with which a replication must reach
        ``target_tau`` (the question of :func:`rankstats.templates_needed`);
        None asks instead for an expected tau of ``target_tau``.
    template_cost, sample_cost : float, default 1.0
        Cost of one template and of one sample; a design of ``n_t``
        templates and ``n_s`` samples costs ``template_cost * n_t +
        sample_cost * n_s`` per task.
    n_templates, n_samples : sequence of int
        The designs to predict (the grid of the outputs).
    differences : sequence of float, default (0.01, 0.02, 0.05)
        Score differences for ``p_ordered``.
    max_templates, max_samples : int
        The largest design the search for the cheapest one considers.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset
        Over ``task`` (each also with an ``overall_`` twin without ``task``,
        for the mean score over tasks, each task with the same design):

        - ``universe``: the models' variance (of their universe scores);
        - ``n_templates_now``, ``n_samples_now``: the task's own design, and
          ``relative_error_now``, ``absolute_error_now``,
          ``g_coefficient_now``, ``dependability_now``, ``tau_now``,
          ``tau_truth_now`` at it;
        - over ``(task, n_templates[, n_samples])``: ``relative_error``,
          ``absolute_error``, ``g_coefficient``, ``dependability``, ``tau``
          (expected tau with a replication), ``tau_truth`` (with the
          ranking by universe scores) and, over ``difference`` too,
          ``p_ordered``;
        - ``n_templates_needed``, ``n_samples_needed``, ``cost``: the
          cheapest design with ``tau ≥ target_tau`` (NaN when none within
          the limits); ``n_templates_needed_fixed_samples``: the templates
          needed with the task's own samples.

        The attribute ``samples`` says whether samples are a facet.

    Notes
    -----
    The decision study of generalizability theory (Brennan 2001, ch. 4),
    with the models as the objects measured and templates and samples as
    random facets crossed with them, every model scored on the same
    ``n_t`` templates and ``n_s`` samples. From the components σ²
    (negative ones as 0):

    .. math:: \sigma^2_\delta = \frac{\sigma^2_{mt}}{n_t} + \frac{\sigma^2_{ms}}{n_s}
              + \frac{\sigma^2_{mts,e}}{n_t n_s}, \qquad
              \sigma^2_\Delta = \sigma^2_\delta + \frac{\sigma^2_t}{n_t}
              + \frac{\sigma^2_s}{n_s} + \frac{\sigma^2_{ts}}{n_t n_s},

    the relative and absolute error variances of a model's score, and the
    generalizability coefficient :math:`E\rho^2 = \sigma^2_m/(\sigma^2_m + \sigma^2_\delta)`
    (dependability :math:`\Phi` with :math:`\sigma^2_\Delta`). Two
    replications share the models' universe scores and nothing else, so
    for two models the score differences of the replications correlate
    with :math:`E\rho^2`; under normality the chance that they agree in
    order is :math:`1/2 + \arcsin(E\rho^2)/\pi`, hence (Greiner's relation)

    .. math:: E[\tau] = \frac{2}{\pi} \arcsin E\rho^2

    between the leaderboard and its replication, and
    :math:`(2/\pi)\arcsin\sqrt{E\rho^2}` with the ranking by universe
    scores. This holds for models drawn from a normal population with
    variance :math:`\sigma^2_m`; the simulation in ``tests/test_plan.py``
    checks it. Two models ``d`` apart are ordered correctly with probability
    :math:`\Phi(d / \sqrt{2\sigma^2_\delta})`.

    The cheapest design: a tau target is a coefficient target
    :math:`\rho^* = \sin(\pi\tau/2)`; for each ``n_t`` up to ``max_templates``
    the fewest samples reaching it follow in closed form, and the cheapest
    pair wins. Without samples ``n_t = ⌈σ²_{mt,e} ρ^*/(σ²_m (1 - ρ^*))⌉``.

    Unlike :func:`rankstats.templates_needed`, which subsamples the
    benchmark's own templates and compares with their full set (so it
    cannot look past the templates it has, and needs no model), this is a
    model-based extrapolation to any design, new samples included.

    References
    ----------
    .. [1] Brennan, R. L. (2001). Generalizability Theory. Springer.
    .. [2] Greiner, R. (1909). Über das Fehlersystem der Kollektivmasslehre.
       Zeitschrift für Mathematik und Physik 57, 121-158 (tau = 2/π arcsin ρ).
    .. [3] Kendall, M. G. (1948). Rank Correlation Methods. Griffin.

    See Also
    --------
    variance_components, score_intervals, rankstats.templates_needed

    Examples
    --------
    >>> import rankstats
    >>> from rankstats import stability
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> planned = stability.plan(cube, target_tau=0.9)
    >>> planned.attrs["samples"]
    'not a facet: per-template scores only, over a fixed set of samples'
    >>> planned.n_templates_needed.sel(task=["word_before", "sports_understanding"]).values
    array([239., 273.])
    >>> expected = stability.plan(cube, target_tau=0.9, probability=None)
    >>> expected.n_templates_needed.sel(task=["word_before", "sports_understanding"]).values
    array([64., 24.])
    >>> round(float(planned.overall_tau_now), 3)
    0.988
    """
    dims = Dims(model, task, template, sample)
    scores, facets = task_first(x, "plan", dims)
    with np.errstate(all="ignore"):  # empty tasks: NaN, with their reason in ``reason``
        found = _xr.apply_labelled(
            "plan",
            _point_kernel,
            [scores],
            [facets],
            {"estimate": ("estimate", [COMPONENT]), **design_outputs(dims)},
            kwargs={"k": len(facets)},
            sizes={COMPONENT: 2 ** len(facets) - 1},
        ).compute()
    return plan_from(
        found,
        scores,
        facets,
        dims,
        target_tau=target_tau,
        probability=probability,
        template_cost=template_cost,
        sample_cost=sample_cost,
        n_templates=n_templates,
        n_samples=n_samples,
        differences=differences,
        max_templates=max_templates,
        max_samples=max_samples,
    )


def plan_from(
    found,
    scores,
    facets,
    dims,
    *,
    target_tau,
    probability=None,
    template_cost,
    sample_cost,
    n_templates,
    n_samples,
    differences,
    max_templates,
    max_samples,
):
    """:func:`plan` from the components and current design ``found`` for ``scores (task, ...)``."""
    k = len(facets)
    c = found["estimate"].transpose(dims.task, COMPONENT).values
    nt_now = found["n_templates_now"].values.astype(float)
    ns_now = found["n_samples_now"].values.astype(float)
    diffs = np.asarray(differences, dtype=float)
    nt = np.asarray(n_templates, dtype=float)
    ns = np.asarray(n_samples, dtype=float)
    model_mean = found["model_mean"].transpose(dims.model, dims.task).values
    n_models = np.isfinite(model_mean).sum(0)
    if k == 3:
        grid_c, grid_t, grid_s = c[:, None, None, :], nt[None, :, None], ns[None, None, :]
        grid_dims = [N_TEMPLATES, N_SAMPLES]
    else:
        grid_c, grid_t, grid_s = c[:, None, :], nt[None, :], None
        grid_dims = [N_TEMPLATES]
    rho = _kv.replication_rho(target_tau, probability, n_models)
    with np.errstate(invalid="ignore", divide="ignore"):
        now = _study(c, nt_now, ns_now if k == 3 else None, diffs)
        grid = _study(grid_c, grid_t, grid_s, diffs)
        best = _kv.cheapest(c, rho, template_cost, sample_cost, max_templates, max_samples)
        fixed = _kv.units_needed(*_fixed_samples_variances(c, ns_now, k), rho, max_templates)
        pooled = None
        if k == 3:
            universe, per_item = _fixed_templates(c, nt_now)
            pooled = _one_template(scores.transpose(dims.task, *facets).values)
            fallback = np.isnan(c).any(-1)
            universe = np.where(fallback, pooled[:, 0], universe)
            per_item = np.where(fallback, pooled[:, 2], per_item)
            items = _kv.units_needed(universe, per_item, rho, max_samples)
        else:
            items = np.full(len(c), np.nan)
        overall_c, n_tasks = _overall(c, model_mean, now["relative_error"])
        o_rho = _kv.replication_rho(
            target_tau, probability, np.array(int(np.isfinite(model_mean).any(1).sum()))
        )
        ns_mean = np.nanmean(ns_now) if k == 3 and np.isfinite(ns_now).any() else np.nan
        nt_mean = np.nanmean(nt_now) if np.isfinite(nt_now).any() else np.nan
        o_now = _study(overall_c, nt_mean, ns_mean if k == 3 else None, diffs)
        o_grid = _study(overall_c, nt[:, None] if k == 3 else nt, ns if k == 3 else None, diffs)
        o_best = _kv.cheapest(
            overall_c, o_rho, template_cost, sample_cost, max_templates, max_samples
        )
        o_fixed = _kv.units_needed(
            *_fixed_samples_variances(overall_c, ns_mean, k), o_rho, max_templates
        )
        o_items = (
            _kv.units_needed(*_fixed_templates(overall_c, nt_mean), o_rho, max_samples)
            if k == 3
            else np.nan
        )
    reasons = _reasons(scores, facets, dims, c, pooled, n_models, nt_now, ns_now, k)

    T = [dims.task]
    variables = {
        "universe": (T, c[:, 0]),
        "n_templates_now": (T, nt_now),
        "n_samples_now": (T, ns_now),
    }
    for name, value in now.items():
        variables[f"{name}_now"] = (T + ([DIFFERENCE] if name == "p_ordered" else []), value)
    for name, value in grid.items():
        variables[name] = (T + grid_dims + ([DIFFERENCE] if name == "p_ordered" else []), value)
    for name, value in zip(("n_templates_needed", "n_samples_needed", "cost"), best, strict=True):
        variables[name] = (T, value)
    variables["n_templates_needed_fixed_samples"] = (T, fixed)
    variables["n_samples_needed_fixed_templates"] = (T, items)
    variables["target_g_coefficient"] = (T, rho)
    variables["reason"] = (T, reasons)
    variables["overall_universe"] = ((), overall_c[0])
    for name, value in o_now.items():
        variables[f"overall_{name}_now"] = ([DIFFERENCE] if name == "p_ordered" else [], value)
    for name, value in o_grid.items():
        variables[f"overall_{name}"] = (
            grid_dims + ([DIFFERENCE] if name == "p_ordered" else []),
            value,
        )
    for name, value in zip(("n_templates_needed", "n_samples_needed", "cost"), o_best, strict=True):
        variables[f"overall_{name}"] = ((), value)
    variables["overall_n_templates_needed_fixed_samples"] = ((), o_fixed)
    variables["overall_n_samples_needed_fixed_templates"] = ((), o_items)
    coords = {dims.task: scores[dims.task].values, N_TEMPLATES: nt.astype(int), DIFFERENCE: diffs}
    if k == 3:
        coords[N_SAMPLES] = ns.astype(int)
    data = xr.Dataset(variables, coords=coords)
    data = data.assign_coords({COMPONENT: component_names(facets)})
    data["components"] = ((dims.task, COMPONENT), c)
    data.attrs = {
        "statistic": "plan",
        "target_tau": target_tau,
        "probability": "None" if probability is None else probability,
        "question": "the smallest design at which the leaderboard and a replication of it "
        + (
            f"reach an expected Kendall tau-b of {target_tau:g}"
            if probability is None
            else f"have Kendall's tau-b ≥ {target_tau:g} with probability {probability:g}"
        ),
        "template_cost": template_cost,
        "sample_cost": sample_cost,
        "max_templates": max_templates,
        "max_samples": max_samples,
        "facets": " ".join(facets),
        "overall_tasks": n_tasks,
        "samples": "a facet"
        if k == 3
        else "not a facet: per-template scores only, over a fixed set of samples",
        "tau": "expected Kendall tau with a replication (new templates and samples): "
        "(2/pi) arcsin(g_coefficient), models normal with variance universe",
        "fixed": "n_templates_needed_fixed_samples: fresh templates, the task's own samples "
        "held fixed (the question of templates_needed); n_samples_needed_fixed_templates: "
        "fresh samples, the task's own templates held fixed (that of samples_needed)",
        "overall": "the mean score over the tasks with finite components, every task with "
        "the same design; universe variance by the method of moments",
    }
    return data


def default_options(**given) -> dict:
    """:func:`plan`'s own defaults of :data:`OPTIONS`, with ``given`` in their place."""
    parameters = inspect.signature(plan).parameters
    return {name: parameters[name].default for name in OPTIONS} | given


def _reasons(scores, facets, dims, c, pooled, n_models, nt_now, ns_now, k):
    """Per task, why nothing (or only the items) could be planned; "" where all is estimated."""
    out = []
    for t in range(len(c)):
        if n_models[t] == 0:
            out.append("no scores")
        elif n_models[t] < 2:
            out.append("fewer than two models: no ranking to reproduce")
        elif k == 3 and ns_now[t] < 2:
            out.append("fewer than two samples: the item variance cannot be estimated")
        elif nt_now[t] < 2:
            out.append(
                "one template: its share of the variance (template and model × template) "
                "cannot be estimated, so the templates cannot be planned"
                + (
                    "; the items needed hold the template fixed, and a second template "
                    "would show how far a change of template moves the ranking"
                    if k == 3 and pooled is not None and np.isfinite(pooled[t, 0])
                    else ""
                )
            )
        elif not np.isfinite(c[t]).all():
            out.append("missing cells confound the effects: no components")
        elif not c[t, 0] > 0:
            out.append("the models' scores do not differ (no model variance)")
        else:
            out.append("")
    return np.array(out, dtype=object)
