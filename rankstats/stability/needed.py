r"""How many templates (or samples) are enough: agreement curves from random subsets.

For every task, subsets of k templates are drawn at random without
replacement, ``n_resamples`` times for each k, and each subset is compared with the
whole task: Kendall's W of the k templates, Kendall's tau-b between the model
ranking by the k-template mean (AvgP) and the ranking by the all-template
mean, and how far each model's rank moves across draws. The smallest k whose
tau reaches a target with a given probability is the answer per task.
:func:`samples_needed` asks the same of the samples (items) of a cube that
has them.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import subsample as _k
from .._statistic import Mask, Role, statistic
from ..errors import InputTypeError, OptionError
from ..results import SubsampleResult
from ._checks import checked, fill_docs
from ._engine import generator

__all__ = ["SubsampleResult", "samples_needed", "smallest_k", "templates_needed"]

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
    raise OptionError(f"{function}: {name}={value!r} is not allowed; {name} must be None or a "
                      "non-empty sequence of integers of at least 1")


def _probabilities(function: str, name: str, value):
    """A check that quantile levels are a non-empty sequence of numbers in [0, 1]."""
    try:
        values = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        values = np.array([np.nan])
    if values.size and ((values >= 0) & (values <= 1)).all():
        return tuple(float(q) for q in values)
    raise OptionError(f"{function}: {name}={value!r} is not allowed; {name} must be a "
                      "non-empty sequence of numbers between 0 and 1")


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


@statistic(roles={"template": ("template", -2), "model": ("model", -1)},
           options={**_OPTIONS, "ks": _subset_sizes, "tie_correction": o.boolean},
           masks=_VALID, result=SubsampleResult)
@fill_docs
def templates_needed(
    x, ks=None, *, n_resamples=200, seed=None, target=0.9, probability=0.95,
    confidence_level=0.95, quantiles=(0.05, 0.5, 0.95), template="template", model="model",
    valid=None, ties="average", tie_correction=True, higher_is_better=None,
    nan_policy="propagate",
):
    r"""How many templates are enough: agreement of random k-template subsets with all templates.

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
    samples_needed : the same for the samples of a cube.
    smallest_k : the answer for another target, from the same draws.
    rankstats.plot_stability.plot_needed : the curves as a figure.

    Examples
    --------
    >>> import rankstats, rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed
    >>> cube = rankstats.datasets.load("mizrahi2024")
    >>> curves = templates_needed(cube, ks=[1, 5, 20, 50, 100, 150], n_resamples=100,
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
    return _needed(x, ks, n_resamples, seed, valid, units="template", size="k",
                   kwargs={"tau_target": target, "probability": probability,
                           "level": confidence_level, "ties": ties,
                           "correction": tie_correction, "nan_policy": nan_policy,
                           "higher_is_better": higher_is_better},
                   quantiles=quantiles)


@statistic(roles={"template": ("template", -3),
                  "sample": Role("sample", -2, hint="samples_needed subsamples the samples "
                                 "(items), which a cube of per-template scores lacks"),
                  "model": ("model", -1)},
           options={**_OPTIONS, "ns": _subset_sizes}, masks=_VALID, result=SubsampleResult)
@fill_docs
def samples_needed(
    x, ns=None, *, n_resamples=200, seed=None, target=0.9, probability=0.95,
    confidence_level=0.95, quantiles=(0.05, 0.5, 0.95), sample="sample", template="template",
    model="model", valid=None, ties="average", higher_is_better=None, nan_policy="propagate",
):
    r"""How many samples are enough: agreement of random n-sample subsets with all samples.

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
        The draws are made as in :func:`templates_needed`.
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
        As in :func:`templates_needed`, with samples in the place of
        templates: ``omit`` leaves out every sample that a present model
        misses under a present template.

    Returns
    -------
    xarray.Dataset or SubsampleResult
        The variables of :func:`templates_needed` without W, over a subset
        size dim ``n``, with ``n_needed`` and ``n_samples``.

    Notes
    -----
    AvgP over n samples is the mean over templates of each template's mean
    over the n samples; with every cell observed it is the mean over the n
    samples of each sample's mean over templates, which is what the kernel
    subsamples (draws, ties and memory as in :func:`templates_needed`).

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    templates_needed : the same for the templates.
    rankstats.clustered_se : standard errors clustered by item.

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
    >>> curves = samples_needed(scores, ns=[10, 50, 100, 200], n_resamples=100, seed=0)
    >>> curves.p_tau
    array([0.48, 0.87, 1.  , 1.  ])
    >>> float(curves.needed)
    100.0
    >>> curves.rank_width_mean  # mean width of the models' 95% rank intervals
    array([2.25, 0.75, 0.  , 0.  ])
    """
    return _needed(x, ns, n_resamples, seed, valid, units="sample", size="n",
                   kwargs={"tau_target": target, "probability": probability,
                           "level": confidence_level, "ties": ties, "nan_policy": nan_policy,
                           "higher_is_better": higher_is_better},
                   quantiles=quantiles)


def _subsample_result(function: str, name: str, value):
    """A check that ``result`` is what :func:`templates_needed` or :func:`samples_needed` gave."""
    if isinstance(value, SubsampleResult) or (isinstance(value, xr.Dataset)
                                              and "size_dim" in value.attrs):
        return value
    raise InputTypeError(f"{function}: {name} must be what templates_needed or samples_needed "
                         f"returned (got {type(value).__name__})")


@checked(result=_subsample_result, target=o.finite, probability=o.unit_interval)
def smallest_k(result, target=0.9, probability=0.95):
    """The smallest subset size reaching another target, from the draws already made.

    Parameters
    ----------
    result : xarray.Dataset or SubsampleResult
        A result of :func:`templates_needed` or :func:`samples_needed`.
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
    :func:`templates_needed` does for its own target.

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    templates_needed, samples_needed : the curves this reads.

    Examples
    --------
    >>> import rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed, smallest_k
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks", "homophones"])
    >>> curves = templates_needed(cube, ks=[1, 5, 20, 50, 100, 150], n_resamples=100,
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
    """Shared body of :func:`templates_needed` and :func:`samples_needed` (``x``: the Inputs)."""
    with_w = units == "template"
    core = list(x.roles)  # (template, [sample,] model): the kernel's core order
    kernel = _k.subsample_curves if with_w else _k.samples_curves
    kwargs = {**kwargs, "with_w": with_w, "statistic": x.name,
              "roles": ("templates", "models") if with_w else ("samples", "models")}
    rng, seed_attr = generator(seed)
    if not x.labelled:
        return _numpy_needed(x, sizes, n_resamples, rng, quantiles, kwargs, valid, core, kernel,
                             units)
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
        dims=("draw", *lead, unit_dim), coords={"draw": np.arange(n_resamples)},
    )
    if scores.chunks is not None:  # draws follow the scores' chunks over the other dims
        keys = keys.chunk({d: scores.chunksizes[d] for d in lead})
    grid = xr.DataArray(ks, dims=size, coords={size: ks})
    probs = xr.DataArray(list(quantiles), dims="quantile", coords={"quantile": list(quantiles)})
    outputs = {
        name: (key, [{"size": size, "objects": model}.get(d, d) for d in out_dims])
        for name, (key, out_dims) in _OUTPUTS.items() if with_w or not name.startswith("w")
    }
    attrs = {
        "target": kwargs["tau_target"], "probability": kwargs["probability"],
        "confidence_level": kwargs["level"], "n_resamples": n_resamples, "seed": seed_attr,
        "ties": kwargs["ties"], "higher_is_better": kwargs["higher_is_better"],
        "nan_policy": kwargs["nan_policy"], "unit": unit_dim, "size_dim": size,
        "valid": x.options["valid"],
    }
    if with_w:
        attrs["tie_correction"] = kwargs["correction"]
    data = _xr.apply_labelled(
        x.name, kernel, [scores, keys, grid, probs],
        [dims, ["draw", unit_dim], [size], ["quantile"]], outputs, kwargs=kwargs, attrs=attrs,
    )
    data = data.assign_coords({size: ks, "draw": np.arange(n_resamples),
                               "quantile": list(quantiles)})
    return _tidy(data, scores, lead, size, model)


def _sizes(statistic, given, largest_pool, positions, size):
    """The subset sizes asked for (checked), within the positions; by default 1 .. the pool."""
    if given is None:
        return np.arange(1, max(largest_pool, 1) + 1)
    beyond = given[given > positions]
    if beyond.size:
        raise OptionError(
            f"{statistic}: {size}s={given.tolist()!r} is not allowed; {size}={int(beyond[0])} "
            f"is outside 1..{positions}, the positions along the subsampled dimension")
    return np.unique(given)


def _tidy(data, scores, lead, size, model):
    """Name the outputs after the unit they count, and order the dims readably."""
    needed, count = {"k": ("k_needed", "n_templates"), "n": ("n_needed", "n_samples")}[size]
    data = data.rename({"needed": needed, "n_units": count})
    model_coords = {name: coord for name, coord in scores.coords.items()
                    if model in coord.dims and set(coord.dims) <= set(data.dims)}
    data = data.assign_coords(model_coords)
    order = [model, *lead, size, "draw", "quantile"]
    return data.transpose(*[d for d in order if d in data.dims])


def _numpy_needed(x, sizes, n_resamples, rng, quantiles, kwargs, valid, core, kernel, units):
    n_core = len(core)
    scores = np.moveaxis(np.asarray(x.arrays[0], dtype=float), x.dims(*core),
                         list(range(-n_core, 0)))
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
        kernel, [scores, np.moveaxis(keys, 0, -2), ks, np.asarray(quantiles)],
        [list(range(-n_core, 0)), [-2, -1], [-1], [-1]],
        {key: key for key, _ in _OUTPUTS.values()
         if kwargs["with_w"] or not key.startswith("w")},
        dict, kwargs=kwargs,
    )
    values.setdefault("w", None)
    values.setdefault("w_quantile", None)
    return SubsampleResult(k=ks, **values)
