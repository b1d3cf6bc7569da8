r"""How many templates (or samples) are enough, from random subsets of the benchmark's own.

:func:`templates_needed` answers the question "would a rerun with k fresh
templates reproduce the ranking?": two disjoint random subsets of k
templates each rank the models, and the smallest k whose two rankings
reach Kendall's tau-b ≥ ``target`` in at least ``probability`` of the draws
is the answer, with a Monte Carlo interval and, beyond half the task's
templates (what disjoint subsets can show), the variance-components
planner's extrapolation. :func:`samples_needed` asks the same of the
samples (items). :func:`subset_agreement` and
:func:`sample_subset_agreement` keep the other curve: a k-subset against
the full set it is part of.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import subsample as _k
from .._kernels import variance as _kv
from .._statistic import Mask, Role, statistic
from ..errors import InputTypeError, OptionError
from ..results import NeededResult, SubsampleResult
from ._checks import checked, fill_docs
from ._engine import generator

__all__ = [
    "NeededResult",
    "SubsampleResult",
    "needed_table",
    "sample_subset_agreement",
    "samples_needed",
    "smallest_k",
    "subset_agreement",
    "templates_needed",
]

_OUTPUTS = {  # name: (kernel key, core dims with "size" for the subset-size dim)
    "tau": ("tau", ["size", "draw"]),
    "w": ("w", ["size", "draw"]),
    "tau_quantile": ("tau_quantile", ["size", "quantile"]),
    "w_quantile": ("w_quantile", ["size", "quantile"]),
    "p_tau": ("p_tau", ["size"]),
    "tau_undefined": ("tau_undefined", ["size"]),
    "rank_lower": ("rank_lower", ["size", "objects"]),
    "rank_upper": ("rank_upper", ["size", "objects"]),
    "rank_width": ("rank_width", ["size", "objects"]),
    "rank_width_mean": ("rank_width_mean", ["size"]),
    "needed": ("needed", []),
    "n_units": ("n_units", []),
}


def _subset_sizes(function: str, name: str, value):
    """A check that subset sizes are None or a non-empty sequence of integers of at least 1."""
    if value is None:
        return None
    values = np.asarray(value)
    if values.ndim == 1 and values.size and values.dtype.kind in "iu" and (values >= 1).all():
        return values
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be None or a "
        "non-empty sequence of integers of at least 1"
    )


def _probabilities(function: str, name: str, value):
    """A check that quantile levels are a non-empty sequence of numbers in [0, 1]."""
    try:
        values = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        values = np.array([np.nan])
    if values.size and ((values >= 0) & (values <= 1)).all():
        return tuple(float(q) for q in values)
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a "
        "non-empty sequence of numbers between 0 and 1"
    )


_OPTIONS = {
    "n_resamples": o.positive_int,
    "seed": o.seed,
    "target": o.finite,
    "probability": o.unit_interval,
    "confidence_level": o.probability,
    "quantiles": _probabilities,
    "ties": o.one_of(*o.TIES),
    "higher_is_better": o.optional_boolean,
    "nan_policy": o.one_of(*o.NAN_POLICIES),
}
_VALID = {"valid": Mask("template_valid", "template", describe_as="all templates")}


@statistic(
    roles={"template": ("template", -2), "model": ("model", -1)},
    options={**_OPTIONS, "ks": _subset_sizes, "tie_correction": o.boolean},
    masks=_VALID,
    result=SubsampleResult,
)
@fill_docs
def subset_agreement(
    x,
    ks=None,
    *,
    n_resamples=200,
    seed=None,
    target=0.9,
    probability=0.95,
    confidence_level=0.95,
    quantiles=(0.05, 0.5, 0.95),
    template="template",
    model="model",
    valid=None,
    ties="average",
    tie_correction=True,
    higher_is_better=None,
    nan_policy="propagate",
):
    r"""Agreement of random k-template subsets with the full set of templates they are part of.

    This curve measures how close a k-subset comes to the benchmark's own
    all-template ranking, which includes the subset: its agreement rises to
    1 as k reaches the templates the benchmark has, whatever they say. To
    ask whether k fresh templates would reproduce a ranking, use
    :func:`templates_needed`.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., templates, models)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    ks : sequence of int, optional
        Subset sizes. Default: every k from 1 to the largest number of
        templates of any task. A k beyond a task's own count gives NaN there.
    {n_resamples}
        Here: random subsets (draws without replacement) per task and k.
    {seed}
        See Notes for how the draws are made.
    {target}
    {probability}
    {subset_confidence_level}
    quantiles : sequence of float, default (0.05, 0.5, 0.95)
        Quantiles of tau and W over the draws to report.
    template, model : str or int
        Dimension names (axis numbers for NumPy input).
    {valid}
    {ties}
        Applied to models tied on a template (for W) or on a mean (for the
        rank intervals). Tau-b always treats ties as ties.
    {tie_correction}
        Here: of W, as in :func:`rankstats.kendall_w`.
    {higher_is_better}
    {nan_policy}
        Here: a draw that includes a template with a missing score of a
        present model gives NaN (and so does every summary at that k);
        ``omit`` leaves incomplete templates out of the pool (listwise
        deletion).

    Returns
    -------
    xarray.Dataset or SubsampleResult
        Over the task (and any other leading) dims, with new dims ``k``,
        ``draw`` and ``quantile``:

        - ``tau(task, k, draw)``: tau-b between the ranking by the k-template
          mean and the ranking by the mean over all of the task's templates;
        - ``w(task, k, draw)``: Kendall's W of the k templates (NaN for k = 1);
        - ``tau_quantile``, ``w_quantile`` (``task, k, quantile``), over the
          draws where they are defined;
        - ``p_tau(task, k)``: the share of draws with tau ≥ ``target``;
        - ``tau_undefined(task, k)``: the share of draws whose k-template
          means tie every model (tau-b undefined; such a draw does not reach
          the target);
        - ``rank_lower``, ``rank_upper``, ``rank_width`` (``model, task, k``):
          each model's central ``confidence_level`` interval of ranks across
          draws, and
          ``rank_width_mean(task, k)``, its mean over the task's models;
        - ``k_needed(task)``: the smallest k in ``ks`` with
          ``p_tau ≥ probability`` (NaN when none reaches it);
        - ``n_templates(task)``: the templates in the pool.

    Notes
    -----
    **Draws.** For each task (and each slice of any other leading dim) draw
    d orders the task's templates by uniform keys
    ``numpy.random.default_rng(seed).random((n_resamples, *leading, templates))``
    (leading dims in the input's order; templates outside the pool last);
    the subset of size k is the first k templates of that order. Each subset
    is a uniform draw without replacement, subsets of one draw are nested,
    and one cumulative sum along the order gives the means and rank sums
    of every k at once: nothing loops over tasks or draws, and the loop over
    k is in chunks whose working memory stays near 64 MiB.

    **Statistics.** With :math:`R_i` the rank sum of model i over the k
    templates and :math:`D_j = \sum_i (r_{ij} - \bar r_j)^2` for template j,
    :math:`W = \sum_i (R_i - \bar R)^2 / (k \sum_j D_j)`, which is
    :func:`rankstats.kendall_w` on the k templates. Tau-b is
    :func:`rankstats.kendall_tau` between the two vectors of means; means
    closer than :math:`10^{-10}` times the largest absolute score of the task
    tie, so that the order of summation cannot split a tie, and at k equal
    to the task's count the subset mean is the all-template mean itself
    (tau = 1). Rank intervals take NumPy's ``"lower"`` quantile at
    :math:`(1 - c) / 2` and its ``"higher"`` one at :math:`(1 + c) / 2` of
    each model's ranks over the draws, c being ``confidence_level``.

    **Structure.** Padded templates and absent models drop out per task
    before anything is drawn, so each task's curves are those it would get
    alone. A task whose all-template means tie every model gives NaN and a
    :class:`~rankstats.errors.RankstatsWarning`.

    **Memory and time.** Besides the input, the keys and orders take
    :math:`16\,R\,L\,T` bytes (R = ``n_resamples`` draws, L tasks, T
    template positions),
    the chunks over k about 64 MiB, and the outputs :math:`16\,R\,L\,K`
    bytes for ``tau`` and ``w`` over K sizes. Tau-b of each draw costs
    :math:`O(M^2)` by pair signs for fewer than 32 models and
    :math:`O(M \log M)` by sorting and merging (Knight 1966) from 32 models
    on, with the same result; the draws are compared in chunks within the
    same 64 MiB, however many models there are. From 32 models one integer
    sort per draw and k gives the ranks, the ties and the order whose
    inversions are the discordant pairs. On the Mizrahi et al. (2024)
    cube (16 models, 25 tasks, 265 positions) with 200 draws the measured
    peak (tracemalloc) is about 125 MiB for 18 sizes and 150 MiB for all
    265, in about 1 s and 5 s on one core; on a binary cube of 1,024 models,
    4 tasks and 100 templates, 100 draws of every k take about 5 s of CPU
    time (``benchmarks/bench_scaling.py``).

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    templates_needed : whether k fresh templates would reproduce a ranking.
    sample_subset_agreement : the same curve for the samples of a cube.
    smallest_k : the answer for another target, from the same draws.
    rankstats.plot_stability.plot_needed : the curves as a figure.

    Examples
    --------
    >>> import rankstats, rankstats.datasets
    >>> from rankstats.stability.needed import subset_agreement
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> curves = subset_agreement(cube, ks=[1, 5, 20, 50, 100, 150], n_resamples=100,
    ...                           seed=0)
    >>> curves.p_tau.sel(task="snarks").values  # P(tau >= 0.9) for each k
    array([0.06, 0.47, 0.83, 0.94, 1.  , 1.  ])
    >>> curves.k_needed.sel(task=["snarks", "navigate", "homophones"]).values
    array([100., 100.,  50.])
    >>> curves.w_quantile.sel(task="snarks", quantile=0.5).values.round(3)  # median W
    array([  nan, 0.861, 0.819, 0.816, 0.811, 0.811])
    >>> curves.rank_width_mean.sel(task="snarks", k=[1, 100]).values.round(2)
    array([4.32, 0.55])
    """
    return _needed(
        x,
        ks,
        n_resamples,
        seed,
        valid,
        units="template",
        size="k",
        kwargs={
            "tau_target": target,
            "probability": probability,
            "level": confidence_level,
            "ties": ties,
            "correction": tie_correction,
            "nan_policy": nan_policy,
            "higher_is_better": higher_is_better,
        },
        quantiles=quantiles,
    )


@statistic(
    roles={
        "template": ("template", -3),
        "sample": Role(
            "sample",
            -2,
            hint="sample_subset_agreement subsamples the "
            "samples "
            "(items), which a cube of per-template scores lacks",
        ),
        "model": ("model", -1),
    },
    options={**_OPTIONS, "ns": _subset_sizes},
    masks=_VALID,
    result=SubsampleResult,
)
@fill_docs
def sample_subset_agreement(
    x,
    ns=None,
    *,
    n_resamples=200,
    seed=None,
    target=0.9,
    probability=0.95,
    confidence_level=0.95,
    quantiles=(0.05, 0.5, 0.95),
    sample="sample",
    template="template",
    model="model",
    valid=None,
    ties="average",
    higher_is_better=None,
    nan_policy="propagate",
):
    r"""Agreement of random n-sample subsets with all the samples they are part of.

    The counterpart of :func:`subset_agreement` for the items; to ask
    whether n fresh items would reproduce a ranking, use
    :func:`samples_needed`.

    Every template is kept; each draw keeps the same n samples (items) of a
    task under every template and for every model, as a smaller benchmark
    would, and ranks the models by AvgP over those samples.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Per-sample scores. NumPy input is ``(..., templates, samples,
        models)`` unless axes are given.
    ns : sequence of int, optional
        Subset sizes; default every n from 1 to the largest number of
        samples of any task.
    {n_resamples}
        Here: random subsets (draws without replacement) per task and n.
    {seed}
        The draws are made as in :func:`subset_agreement`.
    {target}
    {probability}
    {subset_confidence_level}
    quantiles : sequence of float, default (0.05, 0.5, 0.95)
        Quantiles of tau over the draws to report.
    sample, template, model : str or int
        Dimension names (axis numbers for NumPy input).
    {valid}
    {ties}
        Applied to models tied on a mean (for the rank intervals). Tau-b
        always treats ties as ties.
    {higher_is_better}
    {nan_policy}
        As in :func:`subset_agreement`, with samples in the place of
        templates: ``omit`` leaves out every sample that a present model
        misses under a present template.

    Returns
    -------
    xarray.Dataset or SubsampleResult
        The variables of :func:`subset_agreement` without W, over a subset
        size dim ``n``, with ``n_needed`` and ``n_samples``.

    Notes
    -----
    AvgP over n samples is the mean over templates of each template's mean
    over the n samples; with every cell observed it is the mean over the n
    samples of each sample's mean over templates, which is what the kernel
    subsamples (draws, ties and memory as in :func:`subset_agreement`).

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    subset_agreement : the same for the templates.
    samples_needed : whether n fresh items would reproduce a ranking.

    Examples
    --------
    Four models of increasing skill, 6 templates, 200 items of varying
    difficulty:

    >>> import numpy as np
    >>> from rankstats.stability.needed import sample_subset_agreement
    >>> rng = np.random.default_rng(1)
    >>> skill = np.array([-0.3, 0.0, 0.2, 0.8])
    >>> difficulty = rng.normal(0, 1.5, size=(1, 200, 1))
    >>> p = 1 / (1 + np.exp(difficulty - skill))
    >>> scores = (rng.random((6, 200, 4)) < p).astype(float)
    >>> curves = sample_subset_agreement(scores, ns=[10, 50, 100, 200], n_resamples=100, seed=0)
    >>> curves.p_tau
    array([0.48, 0.87, 1.  , 1.  ])
    >>> float(curves.needed)
    100.0
    >>> curves.rank_width_mean  # mean width of the models' 95% rank intervals
    array([2.25, 0.75, 0.  , 0.  ])
    """
    return _needed(
        x,
        ns,
        n_resamples,
        seed,
        valid,
        units="sample",
        size="n",
        kwargs={
            "tau_target": target,
            "probability": probability,
            "level": confidence_level,
            "ties": ties,
            "nan_policy": nan_policy,
            "higher_is_better": higher_is_better,
        },
        quantiles=quantiles,
    )


def _subsample_result(function: str, name: str, value):
    """A check that ``result`` is what :func:`subset_agreement` or its sample twin gave."""
    if isinstance(value, SubsampleResult) or (
        isinstance(value, xr.Dataset) and "size_dim" in value.attrs
    ):
        return value
    raise InputTypeError(
        f"{function}: {name} must be what subset_agreement or "
        f"sample_subset_agreement returned (got {type(value).__name__})"
    )


@checked(result=_subsample_result, target=o.finite, probability=o.unit_interval)
def smallest_k(result, target=0.9, probability=0.95):
    """The smallest subset size reaching another target, from the draws already made.

    Parameters
    ----------
    result : xarray.Dataset or SubsampleResult
        A result of :func:`subset_agreement` or :func:`sample_subset_agreement`.
    {target}
    {probability}

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        The smallest size in the result's grid that reaches the target, per
        task; NaN where none does. Monotone: a higher ``target`` or
        ``probability`` never gives a smaller size.

    Notes
    -----
    The draws of ``result`` are reused: the share of them with tau-b ≥
    ``target`` is compared with ``probability`` at every size, as
    :func:`subset_agreement` does for its own target.

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    subset_agreement, sample_subset_agreement : the curves this reads.

    Examples
    --------
    >>> import rankstats.datasets
    >>> from rankstats.stability.needed import subset_agreement, smallest_k
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks", "homophones"])
    >>> curves = subset_agreement(cube, ks=[1, 5, 20, 50, 100, 150], n_resamples=100,
    ...                           seed=0)
    >>> curves.k_needed.values
    array([100.,  50.])
    >>> smallest_k(curves, target=0.8).values
    array([20., 20.])
    """
    if isinstance(result, xr.Dataset):
        size = result.attrs["size_dim"]
        reach = (result["tau"] >= target).mean("draw").where(result["p_tau"].notnull())
        ok = reach >= probability
        first = result[size].where(ok).min(size)
        return first.rename(f"{size}_needed")
    reach = np.where(np.isnan(result.p_tau), np.nan, (result.tau >= target).mean(-1))
    ok = reach >= probability
    first = np.argmax(ok, axis=-1)
    return np.where(ok.any(-1), np.asarray(result.k)[first], np.nan)[()]


def _needed(x, sizes, n_resamples, seed, valid, units, size, kwargs, quantiles):
    """Shared body of :func:`subset_agreement` and :func:`sample_subset_agreement`."""
    with_w = units == "template"
    core = list(x.roles)  # (template, [sample,] model): the kernel's core order
    kernel = _k.subsample_curves if with_w else _k.samples_curves
    kwargs = {
        **kwargs,
        "with_w": with_w,
        "statistic": x.name,
        "roles": ("templates", "models") if with_w else ("samples", "models"),
    }
    rng, seed_attr = generator(seed)
    if not x.labelled:
        return _numpy_needed(
            x, sizes, n_resamples, rng, quantiles, kwargs, valid, core, kernel, units
        )
    scores = x.arrays[0]
    if valid is not None:
        scores = scores.where(x.masks["valid"])
    dims = x.dims(*core)
    unit_dim, model = x.roles[units], x.roles["model"]
    lead = [d for d in scores.dims if d not in dims]
    largest = int(scores.notnull().any([d for d in dims if d != unit_dim]).sum(unit_dim).max())
    ks = _sizes(x.name, sizes, largest, scores.sizes[unit_dim], size)
    keys = xr.DataArray(
        rng.random((n_resamples, *(scores.sizes[d] for d in lead), scores.sizes[unit_dim])),
        dims=("draw", *lead, unit_dim),
        coords={"draw": np.arange(n_resamples)},
    )
    if scores.chunks is not None:  # draws follow the scores' chunks over the other dims
        keys = keys.chunk({d: scores.chunksizes[d] for d in lead})
    grid = xr.DataArray(ks, dims=size, coords={size: ks})
    probs = xr.DataArray(list(quantiles), dims="quantile", coords={"quantile": list(quantiles)})
    outputs = {
        name: (key, [{"size": size, "objects": model}.get(d, d) for d in out_dims])
        for name, (key, out_dims) in _OUTPUTS.items()
        if with_w or not name.startswith("w")
    }
    attrs = {
        "target": kwargs["tau_target"],
        "probability": kwargs["probability"],
        "confidence_level": kwargs["level"],
        "n_resamples": n_resamples,
        "seed": seed_attr,
        "ties": kwargs["ties"],
        "higher_is_better": kwargs["higher_is_better"],
        "nan_policy": kwargs["nan_policy"],
        "unit": unit_dim,
        "size_dim": size,
        "valid": x.options["valid"],
    }
    if with_w:
        attrs["tie_correction"] = kwargs["correction"]
    data = _xr.apply_labelled(
        x.name,
        kernel,
        [scores, keys, grid, probs],
        [dims, ["draw", unit_dim], [size], ["quantile"]],
        outputs,
        kwargs=kwargs,
        attrs=attrs,
    )
    data = data.assign_coords(
        {size: ks, "draw": np.arange(n_resamples), "quantile": list(quantiles)}
    )
    return _tidy(data, scores, lead, size, model)


def _sizes(statistic, given, largest_pool, positions, size):
    """The subset sizes asked for (checked), within the positions; by default 1 .. the pool."""
    if given is None:
        return np.arange(1, max(largest_pool, 1) + 1)
    beyond = given[given > positions]
    if beyond.size:
        raise OptionError(
            f"{statistic}: {size}s={given.tolist()!r} is not allowed; {size}={int(beyond[0])} "
            f"is outside 1..{positions}, the positions along the subsampled dimension"
        )
    return np.unique(given)


def _tidy(data, scores, lead, size, model):
    """Name the outputs after the unit they count, and order the dims readably."""
    needed, count = {"k": ("k_needed", "n_templates"), "n": ("n_needed", "n_samples")}[size]
    data = data.rename({"needed": needed, "n_units": count})
    model_coords = {
        name: coord
        for name, coord in scores.coords.items()
        if model in coord.dims and set(coord.dims) <= set(data.dims)
    }
    data = data.assign_coords(model_coords)
    order = [model, *lead, size, "draw", "quantile"]
    return data.transpose(*[d for d in order if d in data.dims])


def _numpy_needed(x, sizes, n_resamples, rng, quantiles, kwargs, valid, core, kernel, units):
    n_core = len(core)
    scores = np.moveaxis(
        np.asarray(x.arrays[0], dtype=float), x.dims(*core), list(range(-n_core, 0))
    )
    if valid is not None:  # a mask over templates, the first core axis
        mask = np.asarray(x.masks["valid"], dtype=bool)
        scores = np.where(mask.reshape(mask.shape + (1,) * (n_core - 1)), scores, np.nan)
    present = ~np.isnan(scores)
    unit_axis = -2
    pool = present.any(tuple(a for a in range(-n_core, 0) if a != unit_axis))
    size = "k" if units == "template" else "n"
    ks = _sizes(x.name, sizes, int(pool.sum(-1).max(initial=0)), scores.shape[unit_axis], size)
    keys = rng.random((n_resamples, *scores.shape[:-n_core], scores.shape[unit_axis]))
    values = _xr.apply_numpy(
        kernel,
        [scores, np.moveaxis(keys, 0, -2), ks, np.asarray(quantiles)],
        [list(range(-n_core, 0)), [-2, -1], [-1], [-1]],
        {key: key for key, _ in _OUTPUTS.values() if kwargs["with_w"] or not key.startswith("w")},
        dict,
        kwargs=kwargs,
    )
    values.setdefault("w", None)
    values.setdefault("w_quantile", None)
    return SubsampleResult(k=ks, **values)


# --------------------------------------------------------------------------- fresh units


#: What :func:`templates_needed` and :func:`samples_needed` ask, in one sentence.
QUESTION = (
    "the smallest number k of fresh {units} such that two leaderboards, each the "
    "mean over k {units} drawn at random, rank the models with Kendall's tau-b ≥ "
    "{target:g} in at least {probability:.0%} of reruns"
)

_FRESH = {
    "n_resamples": o.positive_int,
    "max_resamples": o.positive_int,
    "seed": o.seed,
    "target": o.finite,
    "probability": o.unit_interval,
    "confidence_level": o.probability,
    "higher_is_better": o.optional_boolean,
    "nan_policy": o.one_of(*o.NAN_POLICIES),
    "design": o.one_of("predictive", "disjoint"),
}


@statistic(
    roles={"template": ("template", -2), "model": ("model", -1)},
    options={**_FRESH, "ks": _subset_sizes},
    masks=_VALID,
    result=NeededResult,
)
@fill_docs
def templates_needed(
    x,
    ks=None,
    *,
    n_resamples=200,
    max_resamples=3200,
    seed=None,
    target=0.9,
    probability=0.95,
    confidence_level=0.95,
    template="template",
    model="model",
    valid=None,
    higher_is_better=None,
    nan_policy="propagate",
    design="predictive",
):
    r"""How many templates are enough: whether k fresh templates reproduce the ranking.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Scores. NumPy input is ``(..., templates, models)`` unless axes are
        given; a cube with samples is reduced to per-template scores first.
    ks : sequence of int, optional
        Subset sizes; default every k from 1 to half the largest number of
        templates of any task. A k above half a task's own count gives NaN
        there (beyond what the task's templates can show).
    {n_resamples}
        Here: the draws of the first round; see Notes.
    max_resamples : int, default 3200
        The most draws per task; a task stops earlier once its Monte Carlo
        interval is narrow enough.
    {seed}
    {target}
    {probability}
    {confidence_level}
        Here: of the pointwise (Wilson) intervals of each k's probability,
        from which the Monte Carlo interval of ``k_needed`` is read.
    template, model : str or int
        Dimension names (axis numbers for NumPy input).
    {valid}
    {higher_is_better}
    {nan_policy}
        Here: a draw that includes a template with a missing score of a
        present model gives NaN at that k; ``omit`` leaves incomplete
        templates out of the pool (listwise deletion).
    design : {"predictive", "disjoint"}, default "predictive"
        How each draw picks the two reruns' templates (see Notes).

    Returns
    -------
    xarray.Dataset or NeededResult
        Over the task (and any other leading) dims, with a new dim ``k``:

        - ``p_tau(task, k)``: the share of draws whose two k-template
          leaderboards have tau-b ≥ ``target``, and
          ``p_tau_low``, ``p_tau_high``, its Wilson interval;
          ``tau_mean(task, k)``, the mean tau-b (an undefined tau as 0);
        - ``k_needed(task)``: the smallest k from which on ``p_tau ≥
          probability`` at every size up to ``k_max`` (so that one lucky
          size below the crossing does not decide it); otherwise the answer is
          censored (``censored`` true) and ``k_needed`` holds the bound N of
          "more than N" (see Notes);
        - ``k_needed_low``, ``k_needed_high``: the Monte Carlo interval of
          ``k_needed`` (the same rule applied to the upper, and the lower,
          Wilson bound; NaN where none reaches ``probability``);
        - ``k_planned(task)``: the variance-components planner's answer to
          the same question (:func:`rankstats.stability.plan`'s
          ``n_templates_needed_fixed_samples``), an extrapolation from a
          model; ``k_recommended``: ``k_needed`` where it is not censored,
          else ``k_planned`` when that is above the bound, else NaN;
        - ``k_max``: half the task's templates (rounded down), the largest
          k the subsets show; ``n_templates``; ``n_resamples``:
          the draws made for the task.

    Notes
    -----
    **The question.** Two reruns of a benchmark, each with k templates
    drawn afresh, rank the models by their mean score (AvgP). With
    ``design="predictive"`` (the default) each draw resamples the task's
    n templates with replacement, the uncertainty of the pool itself, then
    draws each rerun's k templates from that resample, independently of the
    other rerun; with ``design="disjoint"`` it compares two disjoint uniform
    subsets of the pool (the templates at the first k even, and the first k
    odd, positions of a random order). Either way the subsets are nested in
    k, so one cumulative sum gives every k, and the agreement does not rise
    to 1 as k approaches the task's own count, unlike
    :func:`subset_agreement`. Disjoint subsets of one pool agree more often
    than two real reruns do: their means are anti-correlated around the
    pool's mean, which is itself only an estimate. In simulations from a
    known random-effects model, reruns with the disjoint design's k reached
    the target in 0.90 to 0.94 of cases on average, and with the predictive
    design's k in 0.95 (docs/stability.md). Tau-b treats means closer than
    :math:`10^{-10}` of the task's largest absolute score as ties; a draw
    whose means tie every model does not reach the target.

    **Censoring.** The subsets show k up to ``k_max``. When no k up
    to it reaches the target, the answer is "more than N" with
    N = max(``k_max``, min(``k_planned`` - 1, ``n_templates``)): the
    subsets rule out k ≤ ``k_max``, and the planner the rest up to the
    templates the task has (never a number at or below what failed).

    **Monte Carlo error.** Draws come in rounds: ``n_resamples``, then as
    many again, doubling, while a task's interval
    ``k_needed_high - k_needed_low`` is wider than max(2, 10% of
    ``k_needed``) and ``max_resamples`` is not reached; only open tasks
    draw again. Each round takes
    ``numpy.random.default_rng(seed).random((draws, *leading, 3, templates))``
    (``(draws, *leading, templates)`` with ``design="disjoint"``) from one
    generator, in order.

    **The planner.** ``k_planned`` is
    :math:`\lceil \sigma^2_{mt,e}\,\rho^* / (\sigma^2_m (1 - \rho^*)) \rceil`
    from the task's variance components (Henderson's method I on the
    per-template scores), with :math:`\rho^*` the correlation of two
    replications at which normal models reach tau-b ≥ ``target`` with
    ``probability`` (:func:`rankstats._kernels.variance.noise_allowed`).

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    subset_agreement : a k-subset against the full set it belongs to.
    samples_needed : the same question for the items.
    rankstats.stability.plan : the decision study (any design).

    Examples
    --------
    >>> import rankstats, rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks", "penguins_in_a_table"])
    >>> needed = templates_needed(cube, seed=0)
    >>> table = needed[["k_needed", "k_needed_low", "k_needed_high", "censored", "k_planned"]]
    >>> print(table.drop_vars("benchmark").to_pandas().to_string())
                         k_needed  k_needed_low  k_needed_high  censored  k_planned
    task
    snarks                  150.0           NaN            NaN      True      151.0
    penguins_in_a_table      54.0          54.0           57.0     False      174.0

    On penguins_in_a_table two reruns with 54 fresh templates each agree
    in 95% of draws (Monte Carlo interval 54 to 57, after 1,600 draws); on
    snarks no size up to half its 162 templates does, and the answer is
    "more than 150", the planner's 151 beside it.
    """
    return _fresh(
        x,
        ks,
        n_resamples,
        max_resamples,
        seed,
        valid,
        "template",
        target,
        probability,
        confidence_level,
        higher_is_better,
        nan_policy,
        design,
    )


@statistic(
    roles={
        "template": ("template", -3),
        "sample": Role(
            "sample",
            -2,
            hint="samples_needed draws samples (items), which a cube of per-template scores lacks",
        ),
        "model": ("model", -1),
    },
    options={**_FRESH, "ns": _subset_sizes},
    masks=_VALID,
    result=NeededResult,
)
@fill_docs
def samples_needed(
    x,
    ns=None,
    *,
    n_resamples=200,
    max_resamples=3200,
    seed=None,
    target=0.9,
    probability=0.95,
    confidence_level=0.95,
    sample="sample",
    template="template",
    model="model",
    valid=None,
    higher_is_better=None,
    nan_policy="propagate",
    design="predictive",
):
    r"""How many samples are enough: whether n fresh items reproduce the ranking.

    The question of :func:`templates_needed` with items in the place of
    templates: every template is kept, and the two leaderboards of a draw
    are the means over two random sets of n items each, drawn as
    :func:`templates_needed` draws templates.

    Parameters
    ----------
    x : array_like, xarray.DataArray or score cube
        Per-sample scores. NumPy input is ``(..., templates, samples,
        models)`` unless axes are given.
    ns : sequence of int, optional
        Subset sizes; default every n up to half the largest number of
        samples of any task.
    {n_resamples}
        Here: the draws of the first round.
    max_resamples : int, default 3200
        The most draws per task.
    {seed}
    {target}
    {probability}
    {confidence_level}
        Here: of the pointwise Wilson intervals.
    sample, template, model : str or int
        Dimension names (axis numbers for NumPy input).
    {valid}
    {higher_is_better}
    {nan_policy}
        As in :func:`templates_needed`, with samples in the place of
        templates.
    design : {"predictive", "disjoint"}, default "predictive"
        As in :func:`templates_needed`.

    Returns
    -------
    xarray.Dataset or NeededResult
        The variables of :func:`templates_needed` over a dim ``n``:
        ``n_needed``, ``n_needed_low``, ``n_needed_high``, ``censored``,
        ``n_planned`` (:func:`rankstats.stability.plan`'s
        ``n_samples_needed_fixed_templates``), ``n_recommended``, ``n_max``,
        ``n_samples``, ``n_resamples``.

    Notes
    -----
    The items are subsampled through each item's mean over the task's
    templates; the planner's number treats the templates as fixed (with
    one template, from the model × item components of that template).
    Draws, rounds, censoring and the Monte Carlo interval are those of
    :func:`templates_needed`.

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    templates_needed : the same question for the templates.
    sample_subset_agreement : an n-subset against all the items.

    Examples
    --------
    Four models of increasing skill, 6 templates, 200 items of varying
    difficulty:

    >>> import numpy as np
    >>> from rankstats.stability.needed import samples_needed
    >>> rng = np.random.default_rng(1)
    >>> skill = np.array([-0.3, 0.0, 0.2, 0.8])
    >>> difficulty = rng.normal(0, 1.5, size=(1, 200, 1))
    >>> p = 1 / (1 + np.exp(difficulty - skill))
    >>> scores = (rng.random((6, 200, 4)) < p).astype(float)
    >>> needed = samples_needed(scores, seed=0)
    >>> needed.needed, needed.censored, needed.planned
    (array(200.), array(True), array(8347.))

    No n up to 100 (half the 200 items) makes two reruns rank the four
    models alike (tau-b ≥ 0.9) in 95% of draws, and the planner, which takes
    the models as drawn from a normal population, asks for 8,347: the answer
    is "more than 200", the items the task has.
    """
    return _fresh(
        x,
        ns,
        n_resamples,
        max_resamples,
        seed,
        valid,
        "sample",
        target,
        probability,
        confidence_level,
        higher_is_better,
        nan_policy,
        design,
    )


def _wilson(hits, draws, level):
    """Wilson score interval of a binomial proportion, vectorised."""
    z = float(_kv.special.ndtri((1 + level) / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits / draws
        centre = (p + z * z / (2 * draws)) / (1 + z * z / draws)
        half = z * np.sqrt(p * (1 - p) / draws + z * z / (4 * draws**2)) / (1 + z * z / draws)
    return centre - half, centre + half


def _first(sizes, ok):
    """The smallest size from which ``ok (..., k)`` holds at every larger size; NaN if none.

    Sizes beyond what the data show (``ok`` false there by NaN) do not count
    against a size: only the sizes up to the last defined one are read.
    """
    # from the last size backwards: ok here and at every larger (defined) size
    held = np.logical_and.accumulate(ok[..., ::-1], axis=-1)[..., ::-1]
    return np.where(held.any(-1), sizes[np.argmax(held, axis=-1)], np.nan)


def _crossing(sizes, hits, draws, probability, level):
    """Point, Monte Carlo interval, open tasks and their windows of ``hits / draws`` ``(L, k)``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits / draws
    low, high = _wilson(hits, draws, level)
    defined = ~np.isnan(p)
    with np.errstate(invalid="ignore"):
        point = _first(sizes, (p >= probability) | ~defined)
        k_low = _first(sizes, (high >= probability) | ~defined)
        k_high = _first(sizes, (low >= probability) | ~defined)
    # a size counts only where it is defined: all-undefined tails give no answer
    last = np.where(
        defined.any(-1),
        sizes[defined.shape[-1] - 1 - np.argmax(defined[..., ::-1], axis=-1)],
        np.nan,
    )
    point, k_low, k_high = (np.where(v <= last, v, np.nan) for v in (point, k_low, k_high))
    width = np.where(np.isnan(point) & np.isnan(k_low), 0.0, k_high - k_low)
    tolerance = np.maximum(2.0, 0.1 * np.nan_to_num(np.where(np.isnan(point), k_low, point)))
    still = ~(width <= tolerance) & ~np.isnan(hits).all(-1)
    # the sizes whose estimates decide the interval: from k_low to k_high (or the last size)
    last = np.where(np.isnan(k_high), np.inf, k_high)
    window = (sizes >= np.nan_to_num(k_low, nan=np.inf)[:, None]) & (sizes <= last[:, None])
    return p, low, high, point, k_low, k_high, still, window & still[:, None]


def _fresh(
    x,
    sizes,
    n_resamples,
    max_resamples,
    seed,
    valid,
    units,
    target,
    probability,
    level,
    higher_is_better,
    nan_policy,
    design,
):
    """Shared body of :func:`templates_needed` and :func:`samples_needed`."""
    core = list(x.roles)
    rng, seed_attr = generator(seed)
    scores = x.arrays[0]
    if x.labelled:
        if valid is not None:
            scores = scores.where(x.masks["valid"])
        dims = x.dims(*core)
        lead = [d for d in scores.dims if d not in dims]
        labelled = scores.transpose(*lead, *dims)
        values = np.asarray(labelled.values, dtype=float)
    else:
        values = np.moveaxis(
            np.asarray(scores, dtype=float), x.dims(*core), list(range(-len(core), 0))
        )
        if valid is not None:
            mask = np.asarray(x.masks["valid"], dtype=bool)
            values = np.where(mask.reshape(mask.shape + (1,) * (len(core) - 1)), values, np.nan)
    blocks = _k.item_means(values) if units == "sample" else values  # (..., units, models)
    lead_shape = blocks.shape[:-2]
    flat = blocks.reshape(-1, *blocks.shape[-2:])
    size = "k" if units == "template" else "n"
    largest = int((~np.isnan(flat).all(-1)).sum(-1).max(initial=0)) // 2
    ks = _sizes(x.name, sizes, max(largest, 1), max(flat.shape[-2] // 2, 1), size)
    kwargs = {
        "tau_target": target,
        "higher_is_better": higher_is_better is not False,
        "nan_policy": nan_policy,
        "statistic": x.name,
        "design": design,
    }
    streams = (3,) if design == "predictive" else ()
    tasks = flat.shape[0]
    hits = np.zeros((tasks, ks.size))
    draws = np.zeros((tasks, ks.size))
    tau_sum = np.zeros((tasks, ks.size))
    wanted = np.ones((tasks, ks.size), dtype=bool)  # the sizes each task still draws
    batch = n_resamples
    found = None
    while wanted.any():
        keys = rng.random((batch, tasks, *streams, flat.shape[-2]))
        rows = np.flatnonzero(wanted.any(-1))
        columns = np.flatnonzero(wanted[rows].any(0))
        found = _k.replication_counts(
            flat[rows], np.moveaxis(keys[:, rows], 0, 1), ks[columns], **kwargs
        )
        take = wanted[np.ix_(rows, columns)]
        cell = (rows[:, None], columns[None, :])
        hits[cell] += np.where(take, found["reached"], 0.0)
        tau_sum[cell] += np.where(take, found["tau_mean"] * batch, 0.0)
        draws[cell] += np.where(take, batch, 0)
        window = _crossing(ks, hits, draws, probability, level)[-1]
        spent = draws.max(-1, initial=0) >= max_resamples
        wanted = window & ~spent[:, None]
        batch = int(min(draws.max(initial=0), max_resamples - draws.max(-1)[~spent].max(initial=0)))
    n_units = (~np.isnan(flat).all(-1)).sum(-1).astype(float)
    k_max = n_units // 2
    beyond = (ks[None, :] > k_max[:, None]) | np.isnan(hits)
    hits[beyond] = np.nan
    p, low, high, point, k_low, k_high, _, _ = _crossing(ks, hits, draws, probability, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau_mean = np.where(beyond, np.nan, tau_sum / draws)
    planned = _planned(values.reshape(-1, *values.shape[-len(core) :]), units, target, probability)
    censored = np.isnan(point) & (k_max >= 1) & ~np.isnan(p).all(-1)
    with np.errstate(invalid="ignore"):
        bound = np.maximum(
            k_max, np.where(np.isnan(planned), k_max, np.minimum(planned - 1, n_units))
        )
        needed = np.where(censored, bound, point)
        recommended = np.where(censored, np.where(planned > bound, planned, np.nan), point)
    out = {
        "p_tau": p,
        "p_tau_low": low,
        "p_tau_high": high,
        "tau_mean": tau_mean,
        "needed": needed,
        "needed_low": k_low,
        "needed_high": k_high,
        "censored": censored,
        "planned": planned,
        "recommended": recommended,
        "max": k_max,
        "units": n_units,
        "n_resamples": draws.max(-1, initial=0),
    }
    out = {name: v.reshape((*lead_shape, *v.shape[1:])) for name, v in out.items()}
    if not x.labelled:
        return NeededResult(k=ks, **out)
    names = {
        "needed": f"{size}_needed",
        "needed_low": f"{size}_needed_low",
        "needed_high": f"{size}_needed_high",
        "planned": f"{size}_planned",
        "recommended": f"{size}_recommended",
        "max": f"{size}_max",
        "units": "n_templates" if units == "template" else "n_samples",
    }
    coords = {d: labelled[d] for d in lead if d in labelled.coords}
    data = xr.Dataset(
        {
            names.get(name, name): ([*lead, size] if v.ndim > len(lead) else lead, v)
            for name, v in out.items()
        },
        coords={**coords, size: ks},
    )
    data.attrs = {
        "statistic": x.name,
        "question": QUESTION.format(units=units + "s", target=target, probability=probability),
        "target": target,
        "probability": probability,
        "confidence_level": level,
        "n_resamples": n_resamples,
        "max_resamples": max_resamples,
        "seed": seed_attr,
        "higher_is_better": str(higher_is_better),
        "nan_policy": nan_policy,
        "unit": units,
        "size_dim": size,
        "design": design,
        "method": (
            "two random subsets of a resample of the pool (model-free, predictive)"
            if design == "predictive"
            else "disjoint random subsets (model-free)"
        )
        + "; beyond half the pool, the variance-components planner (extrapolation)",
    }
    return data


def _planned(values, units, target, probability):
    """The planner's answer to the same question, per task, from ``values (L, [t,] [s,] m)``."""
    from .planning import fresh_units_needed

    return fresh_units_needed(values, units, target, probability)


def _shown(value, censored):
    """A size as a report prints it: ``"> N"`` where censored, "–" where NaN."""
    if value != value:
        return "–"
    return f"> {value:.0f}" if censored else f"{value:.0f}"


def needed_table(data, benchmark=None):
    """The reconciliation table of a report: one recommended number per task, and both methods.

    Parameters
    ----------
    data : xarray.Dataset
        :func:`templates_needed`'s output over ``task`` (or a report with
        its ``templates_*`` variables).
    benchmark : xarray.DataArray or float, optional
        The planner's number for the mean score over the tasks
        (``overall_n_templates_needed_fixed_samples`` of
        :func:`rankstats.stability.plan`), shown as a last row.

    Returns
    -------
    pandas.DataFrame
        Per task: ``templates`` (the task's), ``recommended``, ``subsets``
        (the model-free answer, ``"> N"`` when censored), ``Monte Carlo
        interval``, ``planner`` and ``draws``.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.stability.needed import needed_table, templates_needed
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks", "penguins_in_a_table"])
    >>> print(needed_table(templates_needed(cube, seed=0)).to_string())
                        templates recommended subsets Monte Carlo interval planner draws
    task
    snarks                    162         151   > 150                    –     151   800
    penguins_in_a_table       183          54      54                54–57     174  1600

    """
    import pandas as pd

    names = {
        "k_needed": "templates_needed",
        "censored": "templates_needed_censored",
        "k_needed_low": "templates_needed_low",
        "k_needed_high": "templates_needed_high",
        "k_planned": "templates_planned",
        "k_recommended": "templates_recommended",
        "n_resamples": "templates_needed_resamples",
    }
    if "k_needed" in data:
        data = data.rename({k: v for k, v in names.items() if k in data})
    tasks = data["templates_needed"]["task"].values
    rows = {}
    for i, task in enumerate(tasks):
        one = {name: data[name].values.reshape(-1)[i] for name in names.values()}
        censored = bool(one["templates_needed_censored"])
        low, high = one["templates_needed_low"], one["templates_needed_high"]
        recommended = one["templates_recommended"]
        rows[str(task)] = {
            "templates": _shown(float(data["n_templates"].values.reshape(-1)[i]), False),
            "recommended": (
                _shown(float(recommended), False)
                if recommended == recommended
                else _shown(float(one["templates_needed"]), censored)
            ),
            "subsets": _shown(float(one["templates_needed"]), censored),
            "Monte Carlo interval": "–"
            if low != low
            else f"{low:.0f}–" + ("" if high != high else f"{high:.0f}"),
            "planner": _shown(float(one["templates_planned"]), False),
            "draws": _shown(float(one["templates_needed_resamples"]), False),
        }
    value = np.nan if benchmark is None else float(np.asarray(benchmark).reshape(-1)[0])
    if value == value:
        rows["benchmark mean"] = {
            "templates": "–",
            "recommended": _shown(value, False),
            "subsets": "–",
            "Monte Carlo interval": "–",
            "planner": _shown(value, False),
            "draws": "–",
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "task"
    return frame
