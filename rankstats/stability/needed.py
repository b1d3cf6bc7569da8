r"""How many templates (or samples) are enough: agreement curves from random subsets.

For every task, subsets of k templates are drawn at random without
replacement, ``draws`` times for each k, and each subset is compared with the
whole task: Kendall's W of the k templates, Kendall's tau-b between the model
ranking by the k-template mean (AvgP) and the ranking by the all-template
mean, and how far each model's rank moves across draws. The smallest k whose
tau reaches a target with a given probability is the answer per task.
:func:`samples_needed` asks the same of the samples (items) of a cube that
has them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from .. import _xr
from .._kernels import subsample as _k
from ..errors import DimensionError
from ..results import _Result
from ..statistics.metrics import _template_mask

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


@dataclass(frozen=True, eq=False, repr=False)
class SubsampleResult(_Result):
    """Agreement curves of random subsets (see :func:`templates_needed`).

    Arrays are over the input's leading axes, then the subset size ``k``,
    then the draws, quantiles or models; ``w`` and ``w_quantile`` are None
    for :func:`samples_needed`.
    """

    k: np.ndarray
    tau: np.ndarray
    w: np.ndarray | None
    tau_quantile: np.ndarray
    w_quantile: np.ndarray | None
    p_tau: np.ndarray
    tau_undefined: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    rank_width: np.ndarray
    rank_width_mean: np.ndarray
    needed: np.ndarray
    n_units: np.ndarray


def templates_needed(
    x, ks=None, *, draws=200, seed=0, target=0.9, probability=0.95, level=0.95,
    quantiles=(0.05, 0.5, 0.95), template="template", model="model", valid=None,
    ties="average", correction=True, higher_is_better=None, nan_policy="propagate",
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
    draws : int, default 200
        Random subsets per task and k.
    seed : int or numpy.random.Generator, default 0
        Seeds the draws (see Notes for how they are made).
    target, probability : float, default 0.9 and 0.95
        The agreement sought: tau-b ≥ ``target`` in at least ``probability``
        of the draws.
    level : float, default 0.95
        Coverage of each model's rank interval across draws.
    quantiles : sequence of float
        Quantiles of tau and W over the draws to report.
    template, model : str or int
        Dimension names (axis numbers for NumPy input).
    valid : None, True, str or array_like of bool
        Templates to keep, as in :func:`rankstats.prompt_metrics`.
    ties : {"average", "min", "max", "dense", "ordinal"}
        How models tied on a template (for W) or on a mean (for the rank
        intervals) are ranked. Tau-b always treats ties as ties.
    correction : bool, default True
        Tie correction of W, as in :func:`rankstats.kendall_w`.
    higher_is_better : bool, optional
        Direction of the ranks; defaults to the cube's attribute, else True.
    nan_policy : {"propagate", "omit", "raise"}
        Missing scores of a present model under a present template: a draw
        that includes such a template gives NaN (and so does every summary
        at that k); ``omit`` leaves incomplete templates out of the pool
        (listwise deletion); ``raise`` raises.

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
          each model's central ``level`` interval of ranks across draws, and
          ``rank_width_mean(task, k)``, its mean over the task's models;
        - ``k_needed(task)``: the smallest k in ``ks`` with
          ``p_tau ≥ probability`` (NaN when none reaches it);
        - ``n_templates(task)``: the templates in the pool.

    Notes
    -----
    **Draws.** For each task (and each slice of any other leading dim) draw
    d orders the task's templates by uniform keys
    ``numpy.random.default_rng(seed).random((draws, *leading, templates))``
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
    :math:`(1 - \text{level}) / 2` and its ``"higher"`` one at
    :math:`(1 + \text{level}) / 2` of each model's ranks over the draws.

    **Structure.** Padded templates and absent models drop out per task
    before anything is drawn, so each task's curves are those it would get
    alone. A task whose all-template means tie every model gives NaN and a
    :class:`~rankstats.errors.RankstatsWarning`.

    **Memory and time.** Besides the input, the keys and orders take
    :math:`16\,R\,L\,T` bytes (R draws, L tasks, T template positions),
    the chunks over k about 64 MiB, and the outputs :math:`16\,R\,L\,K`
    bytes for ``tau`` and ``w`` over K sizes. On the Mizrahi et al. (2024)
    cube (16 models, 25 tasks, 265 positions) with 200 draws the measured
    peak (tracemalloc) is about 125 MiB for 18 sizes and 150 MiB for all
    265, in about 1 s and 5 s on one core.

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949.

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
    >>> curves = templates_needed(cube, ks=[1, 5, 20, 50, 100, 150], draws=100)
    >>> curves.p_tau.sel(task="snarks").values  # P(tau >= 0.9) for each k
    array([0.06, 0.47, 0.83, 0.94, 1.  , 1.  ])
    >>> curves.k_needed.sel(task=["snarks", "navigate", "homophones"]).values
    array([100., 100.,  50.])
    >>> curves.w_quantile.sel(task="snarks", quantile=0.5).values.round(3)  # median W
    array([  nan, 0.861, 0.819, 0.816, 0.811, 0.811])
    >>> curves.rank_width_mean.sel(task="snarks", k=[1, 100]).values.round(2)
    array([4.32, 0.55])
    """
    return _needed("templates_needed", x, ks, draws, seed, locals(), units=template,
                   size="k", with_w=True)


def samples_needed(
    x, ns=None, *, draws=200, seed=0, target=0.9, probability=0.95, level=0.95,
    quantiles=(0.05, 0.5, 0.95), sample="sample", template="template", model="model",
    valid=None, ties="average", higher_is_better=None, nan_policy="propagate",
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
    sample, template, model : str or int
        Dimension names (axis numbers for NumPy input).
    draws, seed, target, probability, level, quantiles, valid, ties, higher_is_better
        As in :func:`templates_needed`.
    nan_policy : {"propagate", "omit", "raise"}
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

    See Also
    --------
    templates_needed, rankstats.clustered.clustered_se

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
    >>> curves = samples_needed(scores, ns=[10, 50, 100, 200], draws=100)
    >>> curves.p_tau
    array([0.48, 0.87, 1.  , 1.  ])
    >>> float(curves.needed)
    100.0
    >>> curves.rank_width_mean  # mean width of the models' 95% rank intervals
    array([2.25, 0.75, 0.  , 0.  ])
    """
    if _xr.is_labelled(x):
        scores = _xr.scores_of(x, "samples_needed", keep=(sample,))
        if sample not in scores.dims:
            raise DimensionError(
                f"samples_needed: the input has no {sample!r} dimension to subsample "
                f"(dimensions: {', '.join(map(str, scores.dims))})"
            )
    return _needed("samples_needed", x, ns, draws, seed, locals(), units=sample, size="n",
                   with_w=False, extra=template)


def smallest_k(result, target=0.9, probability=0.95):
    """The smallest subset size reaching another target, from the draws already made.

    Parameters
    ----------
    result : xarray.Dataset or SubsampleResult
        A result of :func:`templates_needed` or :func:`samples_needed`.
    target, probability : float
        Tau-b ≥ ``target`` in at least ``probability`` of the draws.

    Returns
    -------
    xarray.DataArray or numpy.ndarray
        The smallest size in the result's grid that reaches the target, per
        task; NaN where none does. Monotone: a higher ``target`` or
        ``probability`` never gives a smaller size.

    Examples
    --------
    >>> import rankstats.datasets
    >>> from rankstats.stability.needed import templates_needed, smallest_k
    >>> cube = rankstats.datasets.load("mizrahi2024").sel(task=["snarks", "homophones"])
    >>> curves = templates_needed(cube, ks=[1, 5, 20, 50, 100, 150], draws=100)
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


def _needed(statistic, x, sizes, draws, seed, params, units, size, with_w, extra=None):
    """Shared dispatch of :func:`templates_needed` and :func:`samples_needed`."""
    model = params["model"]
    best_first = _xr.higher_is_better_of(x, params["higher_is_better"])
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"{statistic}: draws={draws!r} must be a positive integer")
    if not np.isfinite(params["target"]):
        raise ValueError(f"{statistic}: target={params['target']!r} must be a finite number")
    for name in ("probability", "level"):
        if not 0.0 <= params[name] <= 1.0:
            raise ValueError(f"{statistic}: {name}={params[name]!r} must lie in [0, 1]")
    quantiles = np.asarray(params["quantiles"], dtype=float).reshape(-1)
    if quantiles.size == 0 or not ((quantiles >= 0) & (quantiles <= 1)).all():
        raise ValueError(f"{statistic}: quantiles={params['quantiles']!r} must lie in [0, 1]")
    unit_word = "templates" if extra is None else "samples"
    kwargs = {
        "tau_target": float(params["target"]), "probability": float(params["probability"]),
        "level": float(params["level"]), "ties": params["ties"],
        "correction": bool(params.get("correction", True)), "higher_is_better": best_first,
        "nan_policy": params["nan_policy"], "with_w": with_w, "statistic": statistic,
        "roles": (unit_word, "models"),
    }
    kernel = _k.subsample_curves if extra is None else _k.samples_curves
    rng = np.random.default_rng(seed)
    # kernel core dims, and the role each one plays
    roles = {unit_word: units, "models": model} if extra is None else {
        "templates": extra, unit_word: units, "models": model}
    core = list(roles.values())
    if not _xr.is_labelled(x):
        return _numpy_needed(statistic, x, sizes, draws, rng, quantiles, kwargs, params,
                             list(roles), kernel, size)
    scores = _xr.scores_of(x, statistic, keep=tuple(core))
    _xr.check_dims(statistic, scores, roles)
    scores = _masked(x, scores, params["valid"], extra or units, statistic)
    lead = [d for d in scores.dims if d not in core]
    largest = int(scores.notnull().any([d for d in core if d != units]).sum(units).max())
    ks = _sizes(statistic, sizes, largest, scores.sizes[units], size)
    keys = xr.DataArray(
        rng.random((draws, *(scores.sizes[d] for d in lead), scores.sizes[units])),
        dims=("draw", *lead, units), coords={"draw": np.arange(draws)},
    )
    if scores.chunks is not None:  # draws follow the scores' chunks over the other dims
        keys = keys.chunk({d: scores.chunksizes[d] for d in lead})
    grid = xr.DataArray(ks, dims=size, coords={size: ks})
    probs = xr.DataArray(quantiles, dims="quantile", coords={"quantile": quantiles})
    outputs = {
        name: (key, [{"size": size, "objects": model}.get(d, d) for d in dims])
        for name, (key, dims) in _OUTPUTS.items() if with_w or not name.startswith("w")
    }
    attrs = {
        "target": kwargs["tau_target"], "probability": kwargs["probability"],
        "level": kwargs["level"], "draws": draws,
        "seed": int(seed) if isinstance(seed, (int, np.integer)) else str(seed),
        "ties": kwargs["ties"], "higher_is_better": best_first,
        "nan_policy": kwargs["nan_policy"], "unit": units, "size_dim": size,
        "valid": _describe(params["valid"]),
    }
    if with_w:
        attrs["correction"] = kwargs["correction"]
    data = _xr.apply_labelled(
        statistic, kernel, [scores, keys, grid, probs],
        [core, ["draw", units], [size], ["quantile"]], outputs, kwargs=kwargs, attrs=attrs,
    )
    data = data.assign_coords({size: ks, "draw": np.arange(draws), "quantile": quantiles})
    return _tidy(data, scores, lead, size, model)


def _masked(x, scores, valid, template, statistic):
    mask = _template_mask(x, valid, "template_valid", scores, template, statistic)
    return scores if mask is None else scores.where(mask)


def _describe(valid) -> str:
    if valid is None:
        return "all templates"
    return "template_valid" if valid is True else valid if isinstance(valid, str) else "given mask"


def _sizes(statistic, given, largest_pool, positions, size):
    """The subset sizes asked for, checked; by default 1 .. the largest pool."""
    if given is None:
        return np.arange(1, max(largest_pool, 1) + 1)
    values = np.asarray(given)
    if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iu":
        raise ValueError(f"{statistic}: {size} values must be a non-empty sequence of integers")
    bad = values[(values < 1) | (values > positions)]
    if bad.size:
        raise ValueError(
            f"{statistic}: {size}={int(bad[0])} is outside 1..{positions}, the positions "
            "along the subsampled dimension"
        )
    return np.unique(values)


def _tidy(data, scores, lead, size, model):
    """Name the outputs after the unit they count, and order the dims readably."""
    needed, count = {"k": ("k_needed", "n_templates"), "n": ("n_needed", "n_samples")}[size]
    data = data.rename({"needed": needed, "n_units": count})
    model_coords = {name: coord for name, coord in scores.coords.items()
                    if model in coord.dims and set(coord.dims) <= set(data.dims)}
    data = data.assign_coords(model_coords)
    order = [model, *lead, size, "draw", "quantile"]
    return data.transpose(*[d for d in order if d in data.dims])


def _numpy_needed(statistic, x, sizes, draws, rng, quantiles, kwargs, params, roles, kernel,
                  size):
    names = {"templates": "template", "samples": "sample", "models": "model"}
    defaults = dict(zip(roles, range(-len(roles), 0), strict=True))
    axes = [_xr.numpy_axis(statistic, role, params[names[role]], names[role], defaults[role])
            for role in roles]
    scores = np.asarray(x, dtype=float)
    _xr._check_axes(scores, axes)
    scores = np.moveaxis(scores, axes, list(range(-len(axes), 0)))
    if params["valid"] is not None:  # a mask over templates, the first core axis
        mask = np.asarray(params["valid"], dtype=bool)
        scores = np.where(mask.reshape(mask.shape + (1,) * (len(roles) - 1)), scores, np.nan)
    present = ~np.isnan(scores)
    unit_axis = -2
    pool = present.any(tuple(a for a in range(-len(roles), 0) if a != unit_axis))
    ks = _sizes(statistic, sizes, int(pool.sum(-1).max(initial=0)), scores.shape[unit_axis],
                size)
    keys = rng.random((draws, *scores.shape[:-len(roles)], scores.shape[unit_axis]))
    values = _xr.apply_numpy(
        kernel, [scores, np.moveaxis(keys, 0, -2), ks, quantiles],
        [list(range(-len(roles), 0)), [-2, -1], [-1], [-1]],
        {key: key for key, _ in _OUTPUTS.values()
         if kwargs["with_w"] or not key.startswith("w")},
        dict, kwargs=kwargs,
    )
    values.setdefault("w", None)
    values.setdefault("w_quantile", None)
    return SubsampleResult(k=ks, **values)
