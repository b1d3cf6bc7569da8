r"""How stable is a leaderboard? Bootstrap intervals, rank intervals and win probabilities.

A score cube is resampled within each task: over its samples (items), over
its templates, or over both at once (a two-way bootstrap: items and templates
drawn independently). A draw is a vector of counts per unit, so a replicate
never copies the cube: per-template scores are one matrix product of the
scores with the sample counts, and statistics over templates weight each
template by its count (AvgP is a weighted mean, MaxP the best template drawn
at least once, Kendall's W counts a template drawn twice as two judges).
Padding positions get weight 0, and each task draws from its own real
samples and templates.

Functions:

* :func:`bootstrap_weights`: the draws, seeded;
* :func:`bootstrap`: per-replicate per-template scores, with the template counts;
* :func:`drawn_templates`: the same with every drawn template a column of its
  own, so that any statistic of rankstats (or any function over templates)
  can be bootstrapped as it is;
* :func:`replicates`: every statistic (per-template score, MaxP, AvgP,
  saturation, CPS, Kendall's W, the models' ranks) in every replicate;
* :func:`intervals`: percentile or BCa intervals of all of them;
* :func:`confidence_interval`: the interval of any statistic from its replicates;
* :func:`leaderboard`: rank confidence sets, tie groups, top-k sets and Chatbot-Arena ranks;
* :func:`win_probability`: how often each model outranks each other one.

Each takes a cube (or an ``xarray.DataArray`` of scores) and returns a
Dataset whose attributes record ``n_resamples``, ``seed``, ``over``,
``method`` and ``confidence_level``; NumPy arrays ``(..., model, template,
sample)`` (``(..., model, template)`` for ``over="templates"``, leading axes
being tasks) give NumPy results.

Every option is checked before anything is drawn (an
:class:`~rankstats.errors.OptionError` names it and what is allowed), on
dask-chunked cubes too.

Cost: on a binary cube of the paper's size (16 models x 25 tasks x 240
templates x 100 samples), ``n_resamples=1000`` replicates of the per-template scores,
W and the ranks take about 2 s and 480 MiB on two cores, most of the memory
being the float32 per-template replicates; every statistic with BCa over
samples and templates about 5 s (``benchmarks/bench_stability.py``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .. import _xr
from .._kernels import intervals as _ki
from .._kernels import resample as _kr
from ..errors import DimensionError, InputTypeError, OptionError
from ..results import (
    BootstrapResult,
    BootstrapWeightsResult,
    ConfidenceIntervalResult,
    IntervalsResult,
    LeaderboardResult,
    ReplicatesResult,
    WinProbabilityResult,
)
from . import _engine as _b
from . import ranksets as _rs
from ._checks import REPLICATE, Dims, checked, fields_of, replicate_dim

__all__ = [
    "bootstrap",
    "bootstrap_weights",
    "confidence_interval",
    "drawn_templates",
    "intervals",
    "leaderboard",
    "replicates",
    "win_probability",
]

_CI_FIELDS = ("low", "high", "bias_correction", "acceleration", "standard_error")


# --------------------------------------------------------------------------- draws


@checked(numpy=fields_of(BootstrapWeightsResult))
def bootstrap_weights(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    """Draw the bootstrap counts of every task's samples and/or templates.

    Parameters
    ----------
    x : score cube, xarray.DataArray or array_like
        Scores ``(model, task, template[, sample])``; only which positions
        are real matters: a sample (template) is real in a task when some
        model has a score there, padding is not drawn.
        {numpy_cube}
    {n_resamples}
        Each is one bootstrap replicate; at least 2.
    over : {"samples", "templates", "both"}, default "samples"
        What is resampled within each task: the samples (items), the
        templates, or both, independently (a two-way bootstrap).
    {seed}
        The same seed gives the same counts.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset or BootstrapWeightsResult
        ``sample_weight(replicate, task, sample)`` and/or
        ``template_weight(replicate, task, template)``: int32 counts, summing
        to each task's number of real units; 0 on padding. NumPy input gives
        ``(..., n_resamples, unit)`` arrays, None for what is not drawn.

    Notes
    -----
    Task t draws ``n_t`` of its ``n_t`` real units with replacement; draw j
    names the task's j-th real position. When every task has the same n the
    draws are ``rng.integers(0, n, size=(n_resamples, tasks, n))``;
    otherwise ``floor(u * n_t)`` of ``u = rng.random((n_resamples, tasks,
    max n))``, the first ``n_t`` of each task counting. Samples are drawn first, then templates,
    from one Generator. For a cube of one task this is exactly the
    resampling of :func:`scipy.stats.bootstrap` with the same seed (samples,
    then templates, being its two data arguments).

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall.
    .. [2] Owen, A. B. (2007). The pigeonhole bootstrap. Annals of Applied
       Statistics 1(2), 386-411 (resampling rows and columns independently).

    See Also
    --------
    bootstrap : the per-template scores these counts give.
    scipy.stats.bootstrap : the same draws for one task.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from rankstats import stability
    >>> scores = xr.DataArray(np.ones((2, 3, 4)), dims=("model", "template", "sample"))
    >>> draws = stability.bootstrap_weights(scores, n_resamples=3, seed=0)
    >>> draws.sample_weight.values
    array([[0, 1, 2, 1],
           [3, 1, 0, 0],
           [1, 0, 1, 2]], dtype=int32)
    >>> stability.bootstrap_weights(scores.values, n_resamples=3, seed=0).sample_weight
    array([[0, 1, 2, 1],
           [3, 1, 0, 0],
           [1, 0, 1, 2]], dtype=int32)
    """
    dims = Dims(model, task, template, sample)
    scores = _b.prepare(x, over, dims, "bootstrap_weights")
    return _b.draw(scores, n_resamples, over, seed, dims)


# --------------------------------------------------------------------------- replicates


def _bootstrap_numpy(function, bound, lead, dims):
    """:func:`bootstrap` of a NumPy cube: the scores, and the draws that made them."""
    values = dict(bound.arguments)
    cube = values.pop("x")
    score, draws = _bootstrap(
        cube,
        values["n_resamples"],
        values["over"],
        values["seed"],
        values["weights"],
        values["dtype"],
        dims,
    )
    fields = {
        "score": score.transpose(dims.task, dims.model, dims.template, REPLICATE).values,
        "template_weight": score.template_weight.transpose(
            dims.task, REPLICATE, dims.template
        ).values,
        "sample_weight": (
            draws.sample_weight.transpose(dims.task, REPLICATE, dims.sample).values
            if "sample_weight" in draws
            else np.zeros((len(cube), score.sizes[REPLICATE], 0), dtype=np.int32)
        ),
    }
    return BootstrapResult(**{k: v.reshape(tuple(lead) + v.shape[1:]) for k, v in fields.items()})


@checked(numpy=_bootstrap_numpy)
def bootstrap(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    weights=None,
    dtype=np.float32,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Per-replicate per-template scores of a cube resampled within each task.

    Parameters
    ----------
    x : score cube, xarray.DataArray or array_like
        Scores.
        {numpy_cube}
    {bootstrap_resamples}
    {over}
    {seed}
    {weights}
    dtype : numpy dtype, default float32
        Of the returned scores; float32 holds k/n of binary scores to 6e-8.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.DataArray or BootstrapResult
        ``score(replicate, model, task, template)``, with the coordinate
        ``template_weight(replicate, task, template)``: how often each
        template was drawn (1 on real templates when only samples are
        resampled, 0 on padding). Statistics over templates must use these
        weights (:func:`replicates` does): MaxP over templates with weight
        > 0, AvgP weighted, a template drawn twice two judges of W. For
        ``over="templates"`` the scores are the original ones, repeated
        without copying. NumPy input gives ``score (..., model, template,
        replicate)``, ``template_weight (..., replicate, template)`` and
        ``sample_weight (..., replicate, sample)`` (empty when not drawn).

    Notes
    -----
    With sample counts :math:`w_{sr}`, the score of model m, template p in
    replicate r is :math:`\sum_s w_{sr} x_{mps} / \sum_s w_{sr}` over the
    samples the model has: one matrix product per task, no loop over
    replicates. Memory: ``n_resamples x models x tasks x templates`` values
    of ``dtype`` (384 MB for 16 x 25 x 240 in float32 at 1000 resamples).

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall.

    See Also
    --------
    replicates : every statistic of every replicate.
    drawn_templates : the drawn templates as columns, for any statistic.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> correct = np.array([[[1, 1, 0, 1], [0, 1, 0, 1]]], dtype=float)  # 1 model, 2 templates
    >>> result = stability.bootstrap(correct, n_resamples=3, seed=0)
    >>> result.score[0]
    array([[0.5 , 1.  , 0.75],
           [0.5 , 0.25, 0.5 ]], dtype=float32)
    """
    dims = Dims(model, task, template, sample)
    return _bootstrap(x, n_resamples, over, seed, weights, dtype, dims)[0]


@checked()
def drawn_templates(boot, *, template="template", task="task"):
    """The replicates of :func:`bootstrap` with each drawn template as a column of its own.

    Parameters
    ----------
    boot : xarray.DataArray
        What :func:`bootstrap` returns (it carries ``template_weight``).
    template, task : str
        Dimension names.

    Returns
    -------
    xarray.DataArray
        The same dims; along ``template``, slot k of a replicate and task
        holds the k-th drawn template (a template drawn twice fills two
        slots, in position order), NaN past the task's templates. The
        coordinate ``drawn_template(replicate, task, template)`` names the
        original position (-1 for an empty slot); the per-template
        coordinates of the cube (``template_id`` ...) are dropped, as slots
        are not templates.

    Notes
    -----
    Any statistic over templates then sees a template drawn twice as two
    judges, without weights: ``rankstats.kendall_w(drawn)`` or
    ``rankstats.friedman(drawn)`` give every replicate's value at once.
    :func:`replicates` computes its statistics from the weights instead,
    without this copy (``n_resamples x models x tasks x templates`` values).

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall (a replicate as the resampled data set).

    See Also
    --------
    bootstrap, replicates

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> import rankstats
    >>> from rankstats import stability
    >>> scores = xr.DataArray([[0.9, 0.5, 0.7], [0.4, 0.6, 0.8]], dims=("model", "template"))
    >>> boot = stability.bootstrap(scores, n_resamples=2, over="templates", seed=1)
    >>> boot.template_weight.values          # replicate 0 draws template 1 twice, 2 once
    array([[0, 2, 1],
           [2, 0, 1]], dtype=int32)
    >>> drawn = stability.drawn_templates(boot)
    >>> drawn.drawn_template.values
    array([[1, 1, 2],
           [0, 0, 2]])
    >>> rankstats.avgp(drawn).values.round(3)   # (replicate, model)
    array([[0.567, 0.667],
           [0.833, 0.533]])
    """
    if not isinstance(boot, xr.DataArray) or "template_weight" not in boot.coords:
        raise InputTypeError(
            "drawn_templates: give the DataArray bootstrap returns (it "
            "carries the template_weight coordinate)"
        )
    if template not in boot.dims:
        raise DimensionError(
            f"drawn_templates: the template dimension {template!r} is not "
            f"among the input's dimensions ({', '.join(map(str, boot.dims))})"
        )
    weight = boot.template_weight
    order = [d for d in weight.dims if d != template] + [template]
    positions = xr.DataArray(_kr.drawn_positions(weight.transpose(*order).values), dims=order)
    picked = boot.drop_vars([name for name, c in boot.coords.items() if template in c.dims])
    values = picked.isel({template: positions.clip(min=0)})
    values = values.where(positions >= 0)
    values = values.assign_coords(drawn_template=positions)
    return values.transpose(*boot.dims).assign_attrs(boot.attrs)


def _bootstrap(x, n_resamples, over, seed, weights, dtype, dims):
    scores = _b.prepare(x, over, dims, "bootstrap")
    draws = _b.draws_for(scores, n_resamples, over, seed, weights, dims)
    attrs = _b.base_attrs(draws, over, statistic="bootstrap", dtype=np.dtype(dtype).name)
    n = int(draws.attrs["n_resamples"])
    if over == "templates":  # the scores do not move: repeat them without copying
        score = scores.astype(dtype).expand_dims({REPLICATE: n})
    else:
        kwargs = _b.engine_kwargs(x, "average", None, "propagate", False)
        score = _b.run(scores, draws, over, ("score",), kwargs, dims, attrs, dtype)["score"]
    if "template_weight" in draws:
        template_weight = draws["template_weight"]
    else:
        real = _b.real_mask(scores, dims.template, dims).astype(np.int32)
        template_weight = real.expand_dims({REPLICATE: n})
    score = score.assign_coords(template_weight=template_weight.variable)
    score = score.transpose(REPLICATE, *[d for d in scores.dims if d in score.dims])
    score.attrs = attrs
    return score.rename("score"), draws


@checked(numpy=fields_of(ReplicatesResult, "model", "template", "sample", REPLICATE))
def replicates(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    weights=None,
    statistics=None,
    by="avgp",
    ties="average",
    jackknife=False,
    higher_is_better=None,
    nan_policy="propagate",
    dtype=np.float32,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Every statistic of every bootstrap replicate, with the point estimates.

    Parameters
    ----------
    x : score cube, xarray.DataArray or array_like
        Scores.
        {numpy_cube}
    {bootstrap_resamples}
    {over}
    {seed}
    {weights}
    statistics : str or sequence of str, optional
        Among ``"score"`` (per-template score; not with
        ``over="templates"``, where it does not vary), ``"avgp"``,
        ``"maxp"``, ``"saturation"``, ``"cps"``, ``"kendall_w"`` and
        ``"rank"``. Default: all that apply.
    by : {"avgp", "maxp", "saturation", "cps"}, default "avgp"
        The score the models are ranked on for ``"rank"``.
    {ties}
        Applied to the models' ranks (W always uses average ranks,
        tie-corrected).
    jackknife : bool, default False
        Also compute each statistic's BCa acceleration from leave-one-out
        replicates (needed by ``intervals(..., method="bca")``).
    {higher_is_better}
    {nan_policy}
        Applied to per-template scores missing among present models and
        templates, as by :func:`rankstats.prompt_metrics` (listwise) and
        :func:`rankstats.kendall_w` (incomplete templates left out).
    dtype : numpy floating dtype, default numpy.float32
        Of the per-template score replicates.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset or ReplicatesResult
        For each statistic ``s``: ``s`` with a leading ``replicate`` dim,
        ``s_estimate`` on the original data and, with ``jackknife``,
        ``s_acceleration``; and the draws ``template_weight`` and/or
        ``sample_weight``. NumPy input gives a
        :class:`~rankstats.results.ReplicatesResult` with the replicates
        last (None for the statistics not asked for).

    Notes
    -----
    Per-template scores, MaxP, AvgP, saturation and CPS are the definitions
    of :func:`rankstats.prompt_metrics` with every template weighted by its
    count; Kendall's W (judges: templates, objects: models) counts a
    template drawn k times as k judges, so its rank sums are count-weighted
    and its tie correction too. All models, and any extra dimension (seeds,
    shots), share a task's draws: the comparisons are paired. Working memory
    stays near 256 MiB per chunk of tasks (a task needing more is done
    alone), plus the outputs. Sums are exact float32 when scores are
    integers (binary) and float64 otherwise.

    A dask-chunked cube (``open_cube(path, chunks={"model": 1, "task": 1})``)
    resampled over samples is bootstrapped in two passes, so memory follows
    the chunks rather than the tasks: the per-template sums over samples of
    the original data and of every draw (linear in the samples) are computed
    one (model, task) chunk at a time, then the statistics from those
    ``models × templates × (1 + n_resamples)`` sums, one task at a time. Results equal
    the in-memory ones (float32 sums for cubes whose ``score_kind`` is
    ``binary``). With ``jackknife=True`` a task's samples are held at once.

    References
    ----------
    .. [1] Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., &
       Stanovsky, G. (2024). State of What Art? A Call for Multi-Prompt LLM
       Evaluation. TACL 12, 933-949 (MaxP, AvgP, saturation, CPS).

    See Also
    --------
    intervals, leaderboard, win_probability : what the replicates are for.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(0)
    >>> correct = (rng.random((3, 4, 60)) < [[[0.8]], [[0.6]], [[0.4]]]).astype(float)
    >>> reps = stability.replicates(correct, n_resamples=200, seed=0,
    ...                             statistics=["avgp", "rank"])
    >>> reps.avgp.shape, reps.avgp_estimate.round(3)
    ((3, 200), array([0.742, 0.567, 0.388]))
    >>> (reps.rank == 1).mean(axis=-1)    # how often each model comes first
    array([1., 0., 0.])
    """
    dims = Dims(model, task, template, sample)
    statistics = _b.statistics_for(statistics, over)
    scores = _b.prepare(x, over, dims, "bootstrap")
    draws = _b.draws_for(scores, n_resamples, over, seed, weights, dims)
    kwargs = _b.engine_kwargs(x, ties, higher_is_better, nan_policy, bool(jackknife), by)
    attrs = _b.base_attrs(
        draws,
        over,
        statistics=" ".join(statistics),
        by=by,
        ties=ties,
        jackknife=bool(jackknife),
        higher_is_better=kwargs["higher_is_better"],
        nan_policy=nan_policy,
    )
    data = _b.run(scores, draws, over, statistics, kwargs, dims, attrs, dtype)
    data = data.assign({name: draws[name] for name in draws.data_vars})
    data.attrs["statistic"] = "bootstrap replicates"
    return data


# --------------------------------------------------------------------------- intervals


def _ci_kernel(replicates, estimate, *acceleration, **kwargs):
    return _ki.confidence_interval(
        replicates, estimate, acceleration[0] if acceleration else None, **kwargs
    )


@checked(dim=replicate_dim)
def confidence_interval(
    replicates,
    estimate,
    acceleration=None,
    *,
    dim=REPLICATE,
    method="percentile",
    confidence_level=0.95,
    interpolation="linear",
):
    r"""Percentile or BCa interval of a statistic from its bootstrap replicates.

    Parameters
    ----------
    replicates : array_like or xarray.DataArray
        The statistic in every replicate, along ``dim`` (NumPy: the axis
        number ``dim``, the last one by default, as scipy's
        ``bootstrap_distribution``).
    estimate : array_like or xarray.DataArray
        The statistic on the original data, shaped like one replicate.
    acceleration : array_like or xarray.DataArray, optional
        BCa's acceleration :math:`a` (from the jackknife, as
        :func:`replicates` with ``jackknife=True`` gives it); 0 if omitted.
    dim : str or int, default "replicate"
        The dimension (NumPy: axis) along which the replicates lie; at
        least two.
    method : {"percentile", "bca"}, default "percentile"
        The percentile interval, or Efron's bias-corrected and accelerated
        one.
    {confidence_level}
    interpolation : {"linear", "outward"}, default "linear"
        ``linear``: the type-7 quantile of scipy and NumPy. ``outward``: the
        order statistic just outside it, so bounds are values the replicates
        take (used for ranks).

    Returns
    -------
    xarray.Dataset or ConfidenceIntervalResult
        ``low``, ``high``, ``bias_correction`` (:math:`z_0`; NaN for the
        percentile method), ``acceleration`` and ``standard_error`` (the
        replicates' standard deviation).

    Notes
    -----
    With :math:`\alpha = (1 - \text{confidence level}) / 2` and B
    replicates, the percentile interval is the :math:`\alpha` and
    :math:`1 - \alpha` quantiles of the replicates.
    BCa (Efron 1987) takes the quantiles at

    .. math:: \alpha_{1,2} = \Phi\left(z_0 + \frac{z_0 \pm z_\alpha}
              {1 - a (z_0 \pm z_\alpha)}\right), \qquad
              z_0 = \Phi^{-1}\left(\frac{\#\{\theta^* < \hat\theta\} +
              \#\{\theta^* \le \hat\theta\}}{2B}\right),

    which is what :func:`scipy.stats.bootstrap` computes (ties count half).
    An interval is NaN, with a :class:`~rankstats.errors.RankstatsWarning`,
    when a replicate is NaN, or for BCa when every replicate lies on one side
    of the estimate.

    References
    ----------
    .. [1] Efron, B. (1987). Better bootstrap confidence intervals. JASA
       82(397), 171-185.
    .. [2] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall, ch. 14.

    See Also
    --------
    scipy.stats.bootstrap : the same intervals for one statistic at a time.
    intervals : the intervals of every statistic of a cube.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> replicates = np.arange(1.0, 101.0)
    >>> ci = stability.confidence_interval(replicates, 50.0)
    >>> float(ci.low), float(ci.high)
    (3.475, 97.525)
    """
    kwargs = {
        "method": method,
        "confidence_level": confidence_level,
        "interpolation": interpolation,
    }
    if _xr.is_labelled(replicates):
        return _labelled_interval(
            replicates, estimate, acceleration, dim, kwargs, "bootstrap interval"
        )
    axis = _xr.numpy_axis("confidence_interval", "replicates", dim, REPLICATE, -1)
    _enough_replicates(np.shape(replicates)[axis] if np.ndim(replicates) else 0)
    arrays = [replicates, estimate] + ([] if acceleration is None else [acceleration])
    axes = [[axis], []] + ([] if acceleration is None else [[]])
    return _xr.apply_numpy(
        _ci_kernel,
        arrays,
        axes,
        {f: f for f in _CI_FIELDS},
        ConfidenceIntervalResult,
        kwargs=kwargs,
    )


def _labelled_interval(replicates, estimate, acceleration, dim, kwargs, statistic):
    """:func:`confidence_interval` of labelled replicates; warnings name ``statistic``."""
    arrays = [replicates, _b.as_labelled(estimate)]
    core = [[dim], []]
    if acceleration is not None:
        arrays.append(_b.as_labelled(acceleration))
        core.append([])
    _xr.check_dims("confidence_interval", replicates, {"replicates": dim})
    _enough_replicates(replicates.sizes[dim])
    return _xr.apply_labelled(
        "confidence_interval",
        _ci_kernel,
        arrays,
        core,
        {name: (name, []) for name in _CI_FIELDS},
        kwargs={**kwargs, "statistic": statistic},
        attrs={**kwargs, "n_resamples": replicates.sizes[dim]},
    )


def _enough_replicates(n: int) -> None:
    if n < 2:
        raise DimensionError(
            f"confidence_interval: an interval needs at least two replicates "
            f"along the replicate dimension; got {n}"
        )


def _interval(reps, name, method, confidence_level, interpolation="linear"):
    """The interval Dataset of statistic ``name`` of a replicates Dataset.

    Replicates made with ``nan_policy="omit"`` leave out, per model and task,
    the replicates in which the statistic is undefined (a model none of whose
    scored templates was drawn): see :func:`left_out_replicates`.
    """
    acceleration = None
    if method == "bca":
        if f"{name}_acceleration" not in reps:
            raise OptionError(
                f"method='bca' needs the jackknife acceleration of {name!r}; compute the "
                "replicates with jackknife=True"
            )
        acceleration = reps[f"{name}_acceleration"]
    kwargs = {
        "method": method,
        "confidence_level": confidence_level,
        "interpolation": interpolation,
        "omit": reps.attrs.get("nan_policy") == "omit",
    }
    return _labelled_interval(
        reps[name],
        reps[f"{name}_estimate"],
        acceleration,
        REPLICATE,
        kwargs,
        f"{method} interval of {name}",
    )


def _replicates_of(
    x,
    statistics,
    n_resamples,
    over,
    seed,
    weights,
    by,
    ties,
    bca,
    higher_is_better,
    nan_policy,
    dims,
    dtype=np.float32,
):
    """``x`` if it already holds replicates (checked), else the replicates of cube ``x``."""
    if _b.is_replicates(x):
        have = x.attrs["statistics"].split()
        missing = [s for s in statistics if s not in have]
        if missing:
            raise OptionError(f"the replicates lack statistic(s) {missing}; they hold {have}")
        if "rank" in statistics and x.attrs.get("by") != by:
            raise OptionError(
                f"the replicates rank the models by {x.attrs.get('by')!r}, not by={by!r}"
            )
        return x
    return replicates(
        x,
        n_resamples,
        over,
        seed=seed,
        weights=weights,
        statistics=statistics,
        by=by,
        ties=ties,
        jackknife=bca,
        higher_is_better=higher_is_better,
        nan_policy=nan_policy,
        dtype=dtype,
        model=dims.model,
        task=dims.task,
        template=dims.template,
        sample=dims.sample,
    )


@checked(numpy=fields_of(IntervalsResult, "model", "template"))
def intervals(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    weights=None,
    method="percentile",
    confidence_level=0.95,
    statistics=None,
    by="avgp",
    ties="average",
    higher_is_better=None,
    nan_policy="propagate",
    dtype=np.float32,
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""Bootstrap intervals of per-template scores, MaxP, AvgP, saturation, CPS, W and ranks.

    Parameters
    ----------
    x : score cube, xarray.DataArray, array_like, or the Dataset of :func:`replicates`
        A cube is resampled first (as :func:`replicates`, with the jackknife
        when ``method="bca"``); given replicates are used as they are.
        {numpy_cube}
    {bootstrap_resamples}
    {over}
    {seed}
    {weights}
    method : {"percentile", "bca"}, default "percentile"
        The percentile interval, or Efron's bias-corrected and accelerated
        one (see :func:`confidence_interval`).
    {confidence_level}
    statistics : str or sequence of str, optional
        The statistics to give intervals of, as in :func:`replicates`.
        Default: all that apply (those the replicates hold, for replicates).
    by : {"avgp", "maxp", "saturation", "cps"}, default "avgp"
        The score the models are ranked on for ``"rank"``.
    {ties}
        Applied to the models' ranks.
    {higher_is_better}
    {replicate_nan_policy}
    dtype : numpy floating dtype, default numpy.float32
        Of the per-template score replicates.
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset or IntervalsResult
        For each statistic ``s``: the estimate ``s``, ``s_low``, ``s_high``
        and ``s_se`` (the bootstrap standard error). Attributes record
        ``n_resamples``, ``seed``, ``over``, ``method`` and
        ``confidence_level``. NumPy input gives a
        :class:`~rankstats.results.IntervalsResult` (None for the
        statistics not asked for).

    Notes
    -----
    Rank intervals take the order statistics just outside the type-7
    quantiles (``interpolation="outward"`` of :func:`confidence_interval`),
    so their bounds are ranks the replicates take. Ranks are discrete: BCa
    counts replicates equal to the estimate half below, half above (as
    scipy does), and the jackknife of a rank is often constant
    (acceleration 0); prefer the percentile method for ranks.

    What the intervals are worth, from simulations (``tests/test_stability.py``:
    cubes drawn from a known model, each task one repetition, 95% intervals;
    the figures are those of the large, ``slow``-marked runs):

    * over samples, templates fixed: per-template scores and AvgP cover the
      true value (the expectation over items) in 94.5% and 94.4% of draws;
    * over templates, per-template scores exact: AvgP covers the mean over
      the population of templates in 93.5% (percentile) and 94.0% (BCa) of
      draws with 40 templates, 92% with 20 and 91% with 10: few templates
      under-cover, as any percentile interval of a mean of few values;
    * over both: AvgP covers the population mean (over items and templates)
      in 95.9%, a little conservative, as two-way bootstraps are: they count
      the item-by-template noise twice (McCullagh 2000). Resampling only the
      samples (86%) or only the templates (80%) under-covers that mean;
    * MaxP, saturation and CPS: the maximum is not a smooth statistic and
      its bootstrap is biased (over samples the replicates of MaxP exceed
      the estimate, over templates they never do). With five templates of
      equal true accuracy, MaxP's interval covered the true maximum in 61%
      of draws (94% when one template stands out): do not read these as
      confidence intervals;
    * Kendall's W over samples: resampling the items adds noise to every
      template's ranking of the models, so the replicates of W fall below
      the estimate (on a synthetic cube of the paper's size, all of them);
      its percentile interval then excludes the estimate and BCa is
      undefined (NaN, with a warning). Over templates W's replicates are
      centred on the estimate;
    * model ranks: see :func:`leaderboard`.

    References
    ----------
    .. [1] McCullagh, P. (2000). Resampling and exchangeable arrays.
       Bernoulli 6(2), 285-301.

    See Also
    --------
    confidence_interval : the interval of one statistic.
    scipy.stats.bootstrap : the same intervals for one statistic of one task.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(0)
    >>> correct = (rng.random((3, 4, 60)) < [[[0.8]], [[0.6]], [[0.4]]]).astype(float)
    >>> ci = stability.intervals(correct, n_resamples=500, seed=0,
    ...                          statistics=["avgp", "rank"])
    >>> ci.avgp.round(3), ci.avgp_low.round(3), ci.avgp_high.round(3)
    (array([0.742, 0.567, 0.388]), array([0.688, 0.5  , 0.317]), array([0.792, 0.629, 0.454]))
    >>> ci.rank_low, ci.rank_high
    (array([1., 2., 3.]), array([1., 2., 3.]))
    """
    dims = Dims(model, task, template, sample)
    if _b.is_replicates(x) and statistics is None:
        wanted = tuple(x.attrs["statistics"].split())
    else:
        wanted = _b.statistics_for(statistics, over)
    reps = _replicates_of(
        x,
        wanted,
        n_resamples,
        over,
        seed,
        weights,
        by,
        ties,
        method == "bca",
        higher_is_better,
        nan_policy,
        dims,
        dtype,
    )
    variables = {}
    for name in wanted:
        interpolation = "outward" if name == "rank" else "linear"
        ci = _interval(reps, name, method, confidence_level, interpolation)
        variables[name] = reps[f"{name}_estimate"]
        variables[f"{name}_low"] = ci["low"]
        variables[f"{name}_high"] = ci["high"]
        variables[f"{name}_se"] = ci["standard_error"]
    data = xr.Dataset(variables)
    data.attrs = _b.run_attrs(
        reps, method, confidence_level, "bootstrap intervals", statistics=" ".join(wanted)
    )
    return data


# --------------------------------------------------------------------------- leaderboards


@checked(numpy=fields_of(LeaderboardResult, "model"))
def leaderboard(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    confidence_level=0.95,
    weights=None,
    by="avgp",
    method="percentile",
    rank_sets="simultaneous",
    top_k=None,
    ties="average",
    higher_is_better=None,
    nan_policy="propagate",
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""A leaderboard with score intervals, rank confidence sets and tie groups, per task.

    Parameters
    ----------
    x : score cube, xarray.DataArray, array_like, or the Dataset of :func:`replicates`
        Replicates must hold ``by`` and ``rank`` (ranked by ``by``).
        {numpy_cube}
    {bootstrap_resamples}
    {over}
    {seed}
    {confidence_level}
    {weights}
    by : {"avgp", "maxp", "saturation", "cps"}, default "avgp"
        The score the leaderboard ranks.
    method : {"percentile", "bca"}, default "percentile"
        Interval method of the scores.
    rank_sets : {"simultaneous", "marginal", "bootstrap"}, default "simultaneous"
        What ``rank_low`` and ``rank_high`` are (see Notes): confidence sets
        that cover every model's true rank at once with probability
        ``confidence_level`` (``"simultaneous"``), or each model's on its
        own (``"marginal"``), both from the paired bootstrap of every
        pairwise score difference (Mogstad et al. 2024); or the percentile
        intervals of the bootstrap ranks (``"bootstrap"``), a measure of
        stability that is no confidence set among near ties.
    top_k : int, optional
        Also say which models may be among the best ``top_k``
        (``in_top_k``).
    {ties}
        Applied to the models' ranks.
    {higher_is_better}
    {replicate_nan_policy}
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset or LeaderboardResult
        Over ``(model, task)``: ``score``, ``score_low``, ``score_high``;
        ``rank`` (of the point estimates), ``rank_low``, ``rank_high``;
        ``tie_group`` and ``arena_rank``; with ``top_k``, ``in_top_k``
        (see Notes). The attributes ``rank_sets``, ``rank_method`` and
        ``tie_groups`` say which rules made them. Sort a task's board with
        ``.sortby("rank")``; read the ranks as ``board["rank"]``
        (``board.rank`` is the Dataset method).

    Notes
    -----
    **Rank sets** (``rank_sets="simultaneous"`` or ``"marginal"``): for
    models j and k, :math:`t_{jk} = (\hat\theta_j - \hat\theta_k) / \hat\sigma_{jk}`,
    with :math:`\hat\sigma_{jk}` the standard deviation over the replicates
    of :math:`\theta^*_j - \theta^*_k`. j is *surely better* than k when
    :math:`t_{jk} > c`, c being the ``confidence_level`` quantile over the
    replicates of the largest
    :math:`((\theta^*_j - \theta^*_k) - (\hat\theta_j - \hat\theta_k)) / \hat\sigma_{jk}`
    over the comparisons in play: every ordered pair (simultaneous), or the
    pairs of one model (marginal, one c per model). Stepwise (Romano & Wolf
    2005; the procedure of the csranks R package), the comparisons settled
    are removed and c recomputed until nothing new is settled. Then

    .. math:: \text{rank\_low}_j = 1 + \#\{k \text{ surely better than } j\},\qquad
              \text{rank\_high}_j = M - \#\{k \text{ surely worse than } j\}

    among the M models present in the task. Unless some comparison is
    settled the wrong way, which happens with probability at most
    1 - ``confidence_level`` (asymptotically), the sets hold every model's
    true rank, whatever the tie rule. Every model, task and extra
    dimension at once, in blocks of replicates bounded in memory; models
    absent from a task drop out.

    **Rank intervals** (``rank_sets="bootstrap"``): the outward percentile
    interval of the model's rank over the replicates (order statistics).
    Centred on the observed rank, they are too narrow among near ties.

    **Tie groups** (``tie_group``), numbered 1, 2, ... from the best, are
    contiguous runs of the leaderboard. With simultaneous or marginal rank
    sets: in point-estimate order a group ends after position p exactly
    when the simultaneous test separates every model up to p from every
    model after it, so two models in different groups are always
    separated by the test, and models with equal true scores are split
    with probability at most 1 - ``confidence_level``. A group is what no
    such test orders, not a set of models shown to be equal. With
    ``"bootstrap"`` rank intervals: each interval is widened to contain
    its point-estimate rank, two models are linked when their intervals
    overlap (a shared end counting), and the groups are the connected
    components; no error control.

    **Top k** (``in_top_k``): the models whose *simultaneous* lower rank
    bound is at most ``top_k``, whatever ``rank_sets`` is: a set that holds
    every true top-``top_k`` model with probability ``confidence_level``
    (the projection set of Mogstad et al. 2024).

    **Missing scores** (``nan_policy="omit"``): a model present on a task
    but missing some template's score is scored over its other templates;
    a replicate that draws none of them leaves its score undefined. That
    replicate is left out of the model's score interval, and out of its
    task's rank sets (listwise: the sets compare every pair in the same
    replicates; see :func:`rankstats._kernels.ranksets.rank_sets`). The
    attribute ``replicates_left_out`` says how many, per task ("" for none);
    :func:`left_out_replicates` gives them per model and task.

    **Arena rank** (``arena_rank``, the rule of the Chatbot Arena
    leaderboard): 1 + the number of models whose score interval lies
    entirely above this model's, i.e. whose lower bound is strictly greater
    than this model's upper bound (below, when lower is better).

    **Coverage** (simulations in ``tests/test_ranksets.py`` and
    ``docs/stability.md``, binary scores from a logit model with model,
    template, item and interaction effects, 95% sets, over samples):
    among sixteen models 0.003 apart (5 templates x 50 items) the
    simultaneous sets covered all sixteen true ranks at once in 99.75% of
    2000 draws, the marginal ones the worst-served model's in 99.2%, the
    bootstrap intervals all sixteen in 12.8%; among sixteen equal models
    the simultaneous test called some pair "surely better" in 5.7% of
    draws, and the tie groups never split equal models. Over few templates
    the level is not kept (26% of draws with a false separation among
    sixteen equal models over 5 templates, 12% over 10, about 6-7% over
    20 or 40): see the docs' "Honest limits".
    Rank sets by MaxP, saturation or CPS inherit the bias of a maximum's
    bootstrap (see :func:`intervals`).

    References
    ----------
    .. [1] Mogstad, M., Romano, J. P., Shaikh, A. M., & Wilhelm, D. (2024).
       Inference for ranks with applications to mobility across
       neighbourhoods and academic achievement across countries. Review of
       Economic Studies 91(1), 476-518.
    .. [2] Romano, J. P., & Wolf, M. (2005). Exact and approximate stepdown
       methods for multiple hypothesis testing. JASA 100(469), 94-108.
    .. [3] Chiang, W.-L., Zheng, L., Sheng, Y., et al. (2024). Chatbot Arena:
       An open platform for evaluating LLMs by human preference. ICML.

    See Also
    --------
    win_probability : how often each model outranks each other one.
    intervals : intervals of every statistic.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(1)
    >>> truth = np.array([0.80, 0.76, 0.62, 0.58, 0.45])[:, None, None]
    >>> correct = (rng.random((5, 4, 40)) < truth).astype(float)
    >>> board = stability.leaderboard(correct, n_resamples=400, seed=0, top_k=2)
    >>> board.rank, board.rank_low, board.rank_high
    (array([1., 2., 3., 4., 5.]), array([1., 1., 3., 3., 5.]), array([2., 2., 4., 4., 5.]))
    >>> board.tie_group, board.in_top_k
    (array([1., 1., 2., 2., 3.]), array([ True,  True, False, False, False]))
    """
    dims = Dims(model, task, template, sample)
    reps = _replicates_of(
        x,
        (by, "rank"),
        n_resamples,
        over,
        seed,
        weights,
        by,
        ties,
        method == "bca",
        higher_is_better,
        nan_policy,
        dims,
    )
    score = _interval(reps, by, method, confidence_level)
    rank = (
        _interval(reps, "rank", "percentile", confidence_level, "outward")
        if rank_sets == "bootstrap"
        else None
    )
    higher = _xr.boolean_attribute(reps, "higher_is_better", True)
    omit = reps.attrs.get("nan_policy") == "omit"
    sets = _rs.rank_set_variables(
        reps, by, rank_sets, confidence_level, top_k, higher, dims, rank, omit=omit
    )
    arena = _xr.apply_labelled(
        "leaderboard",
        _arena_kernel,
        [score["low"], score["high"]],
        [[dims.model]] * 2,
        {"arena_rank": ("arena_rank", [dims.model])},
        kwargs={"higher_is_better": higher},
    )
    variables = {
        "score": reps[f"{by}_estimate"],
        "score_low": score["low"],
        "score_high": score["high"],
        "rank": reps["rank_estimate"],
        "rank_low": sets["rank_low"],
        "rank_high": sets["rank_high"],
        "tie_group": sets["tie_group"],
        "arena_rank": arena["arena_rank"],
    }
    extra = {}
    if top_k is not None:
        variables["in_top_k"] = sets["in_top_k"]
        extra = {"top_k": top_k, "in_top_k": "simultaneous lower rank bound <= top_k"}
    if omit:
        extra["replicates_left_out"] = _left_out_text(left_out_replicates(reps, by, dims))
    data = xr.Dataset(variables)
    order = [d for d in reps[f"{by}_estimate"].dims]
    data = data.transpose(*order)
    data.attrs = _b.run_attrs(
        reps,
        method,
        confidence_level,
        "leaderboard",
        score=by,
        rank_sets=rank_sets,
        rank_method=_rs.RANK_SET_RULES[rank_sets],
        tie_groups=_rs.TIE_GROUP_RULES[rank_sets],
        arena_rank="1 + models whose score interval lies strictly above",
        **extra,
    )
    return data


def left_out_replicates(reps, by="avgp", dims=None):
    """How many replicates ``nan_policy="omit"`` leaves out, per task and per model.

    Parameters
    ----------
    reps : xarray.Dataset
        What :func:`replicates` returns; it must hold ``by``.
    by : str, default "avgp"
        The score ranked.
    dims : Dims, optional
        Dimension names (default ``model``, ``task``).

    Returns
    -------
    xarray.Dataset
        ``model_left_out(model, task, ...)``: the replicates in which the
        model's score is undefined although its estimate is not (over
        templates, no template it has a score on was drawn): they are left
        out of its interval; ``task_left_out(task, ...)``: the replicates in
        which some present model's score is undefined, left out of the
        task's rank sets (listwise, as the sets compare every pair in the
        same replicates); ``n_resamples``: the replicates drawn.

    Notes
    -----
    Only ``nan_policy="omit"`` leaves replicates out; under ``"propagate"``
    the same replicates make the intervals and rank sets NaN.
    """
    dims = dims or Dims("model", "task", "template", "sample")
    undefined = reps[by].isnull() & reps[f"{by}_estimate"].notnull()
    per_model = undefined.sum(REPLICATE)
    per_task = undefined.any(dims.model).sum(REPLICATE)
    return xr.Dataset(
        {"model_left_out": per_model, "task_left_out": per_task},
        attrs={"n_resamples": int(reps.sizes[REPLICATE])},
    )


def _left_out_text(left_out) -> str:
    """One line saying which tasks' rank sets left replicates out ("" when none)."""
    counts = left_out["task_left_out"]
    if not bool((counts > 0).any()):
        return ""
    n = left_out.attrs["n_resamples"]
    flat = counts.to_series()
    flat = flat[flat > 0]
    return "; ".join(
        f"{', '.join(map(str, key)) if isinstance(key, tuple) else key}: {int(value)} of {n}"
        for key, value in flat.items()
    )


def _arena_kernel(low, high, *, higher_is_better):
    return {"arena_rank": _ki.arena_ranks(low, high, higher_is_better=higher_is_better)}


def _win_kernel(replicates, *, higher_is_better):
    return _ki.win_probabilities(replicates, higher_is_better=higher_is_better)


@checked(numpy=fields_of(WinProbabilityResult, "model", "model_b"))
def win_probability(
    x,
    n_resamples=1000,
    over="samples",
    *,
    seed=None,
    weights=None,
    by="avgp",
    higher_is_better=None,
    nan_policy="propagate",
    model="model",
    task="task",
    template="template",
    sample="sample",
):
    r"""How often each model outranks each other one across bootstrap replicates.

    Parameters
    ----------
    x : score cube, xarray.DataArray, array_like, or the Dataset of :func:`replicates`
        Replicates must hold ``by``.
        {numpy_cube}
    {bootstrap_resamples}
    {over}
    {seed}
    {weights}
    by : {"avgp", "maxp", "saturation", "cps"}, default "avgp"
        The score compared.
    {higher_is_better}
    {replicate_nan_policy}
    model, task, template, sample : str
        Dimension names.

    Returns
    -------
    xarray.Dataset or WinProbabilityResult
        Over ``(model, model_b, task)``: ``win``, the share of replicates in
        which ``model`` scores strictly better than ``model_b``; ``tie``,
        the share in which they score the same; and ``n_replicates``. For
        every pair, ``win[a, b] + win[b, a] + tie[a, b] == 1``.

    Notes
    -----
    One comparison array ``(..., model, model_b, replicate)`` per chunk of
    tasks; no loop over pairs or replicates. NaN for a model absent from
    the task.

    References
    ----------
    .. [1] Chiang, W.-L., Zheng, L., Sheng, Y., et al. (2024). Chatbot Arena:
       An open platform for evaluating LLMs by human preference. ICML
       (pairwise win-rate matrices of bootstrapped ratings).

    See Also
    --------
    leaderboard : rank intervals and tie groups.

    Examples
    --------
    >>> import numpy as np
    >>> from rankstats import stability
    >>> rng = np.random.default_rng(2)
    >>> truth = np.array([0.80, 0.78, 0.60])[:, None, None]
    >>> correct = (rng.random((3, 5, 80)) < truth).astype(float)
    >>> p = stability.win_probability(correct, n_resamples=400, seed=0)
    >>> p.win.round(2)
    array([[0.  , 0.63, 1.  ],
           [0.34, 0.  , 1.  ],
           [0.  , 0.  , 0.  ]])
    >>> p.tie.round(2)[0, 1]     # 0.63 + 0.34 + 0.03 = 1
    np.float64(0.03)
    """
    dims = Dims(model, task, template, sample)
    reps = _replicates_of(
        x,
        (by,),
        n_resamples,
        over,
        seed,
        weights,
        by,
        "average",
        False,
        higher_is_better,
        nan_policy,
        dims,
    )
    pair = f"{dims.model}_b"
    higher = _xr.boolean_attribute(reps, "higher_is_better", True)
    data = _xr.apply_labelled(
        "win_probability",
        _win_kernel,
        [reps[by]],
        [[dims.model, REPLICATE]],
        {name: (name, [dims.model, pair]) for name in ("win", "tie", "n_replicates")},
        kwargs={"higher_is_better": higher},
        new_dims={pair: dims.model},
    )
    order = [d for d in reps[f"{by}_estimate"].dims]
    data = data.transpose(dims.model, pair, *[d for d in order if d != dims.model])
    data.attrs = _b.run_attrs(reps, None, None, "win_probability", score=by)
    return data
