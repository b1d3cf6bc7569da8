r"""AvgP and MaxP on a budget: estimate them from a fraction of the model calls.

Two estimators of Mizrahi et al. (2024, section 7), each in two forms: a
*driver* that spends a real budget through any scoring function (a collector
running a model), and a *simulation* that replays it many times on a cube
whose every score is known, to measure how close it comes to the exact metric.

AvgP by random assignment
    Each sample of the task is answered under one template drawn uniformly
    at random; the mean score is one estimate of AvgP. Repeating it k times
    (k random templates per sample) and averaging gives the estimate after k
    rounds (k × n calls instead of templates × n).
MaxP by successive halving
    Score every template on a few samples, keep the best ones for a few more
    samples, and so on; the best template of the last stage is the estimate
    of the best template, its mean score the estimate of MaxP. The paper's
    search is ``PAPER_STAGES``: all templates on 10 samples, the best 100 on
    10 more, the best 10 on the rest.

Examples
--------
>>> import rankstats
>>> cube = rankstats.datasets.load("mizrahi2024").isel(task=[0, 1], model=[0, 1])
>>> avg = rankstats.simulate_avgp(cube, templates_per_sample=10, n_resamples=50, seed=0)
>>> bool((abs(avg.estimate.isel(k=-1) - avg.avgp) < 0.02).all())
True
>>> best = rankstats.simulate_maxp(cube, n_resamples=20, seed=0)
>>> sorted(best.data_vars)[:4]
['calls', 'estimate', 'found', 'full_calls']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import xarray as xr

from .. import _options as o
from .. import _xr
from .._kernels import budget as _k
from ..errors import CubeError, DimensionError, InputTypeError, OptionError, ScoreValueError
from ..results import AvgPEstimate, MaxPEstimate
from ..stability._checks import checked
from ..stability._engine import generator

__all__ = [
    "PAPER_STAGES",
    "AvgPEstimate",
    "MaxPEstimate",
    "estimate_avgp",
    "estimate_maxp",
    "simulate_avgp",
    "simulate_maxp",
]

#: The search of Mizrahi et al. (2024, section 7): ``(templates kept, new samples)`` per stage;
#: None means every template still in, or every sample left.
PAPER_STAGES: tuple[tuple[int | None, int | None], ...] = ((None, 10), (100, 10), (10, None))

#: A scoring function: the scores of (template id, sample id) pairs, in order; NaN = no score.
Scorer = Callable[[Sequence[tuple[str, str]]], Sequence[float]]


def _stages(function: str, name: str, value) -> tuple[tuple[int | None, int | None], ...]:
    """A check that ``stages`` is a non-empty sequence of (templates, samples) pairs."""

    def refuse(why):
        raise OptionError(f"{function}: {name}={value!r} is not allowed; {why}")

    try:
        stages = list(value)
    except TypeError:
        refuse("give a sequence of (templates, samples) stages")
    if not stages:
        refuse("give at least one (templates, samples) stage")
    checked = []
    for i, stage in enumerate(stages):
        try:
            keep, size = stage
        except (TypeError, ValueError):
            refuse(f"stage {i + 1} must be (templates, samples), not {stage!r}")
        for what, count in (("templates", keep), ("samples", size)):
            if count is not None and (
                not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1
            ):
                refuse(f"stage {i + 1}: {what} must be a positive integer or None, not {count!r}")
        checked.append((None if keep is None else int(keep), None if size is None else int(size)))
    return tuple(checked)


def _templates_mask(function: str, name: str, value):
    """A check that ``valid`` is None, True, or a boolean mask over templates."""
    if value is None or value is True or isinstance(value, (xr.DataArray, np.ndarray, list, tuple)):
        return value
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be None, True "
        "(the cube's template_valid) or a boolean mask over templates"
    )


def _positive(function: str, name: str, value) -> float:
    """A check that the value is a finite number above 0."""
    value = o.finite(function, name, value)
    if value > 0:
        return value
    raise OptionError(
        f"{function}: {name}={value!r} is not allowed; {name} must be a number above 0"
    )


def _scorer(function: str, name: str, value):
    if callable(value):
        return value
    raise InputTypeError(
        f"{function}: {name} must be a callable that scores (template, "
        f"sample) pairs (got {type(value).__name__})"
    )


def _ids(function: str, name: str, value) -> list[str]:
    """A check that ``templates`` / ``samples`` are distinct ids, at least one."""
    if isinstance(value, str):
        raise OptionError(
            f"{function}: {name}={value!r} is not allowed; {name} must be a "
            "sequence of ids, not one string"
        )
    values = [str(v) for v in value]
    if not values or len(set(values)) != len(values):
        raise OptionError(
            f"{function}: {name} is not allowed: {name} must be at least one "
            f"id, none repeated (got {len(values)} ids, "
            f"{len(values) - len(set(values))} repeated)"
        )
    return values


#: The checks of the simulations (the drivers check their own ids and scorer).
_SIMULATION = {
    "n_resamples": o.positive_int,
    "samples": o.optional(o.positive_int),
    "valid": _templates_mask,
    "correlation": o.optional(o.unit_interval),
    "sample_sd": o.optional(_positive),
    "stages": _stages,
}


def _prepared(cube, valid, samples, function: str, correlation=None, rng=None, sample_sd=None):
    """The scores (templates masked by ``valid``), whether per sample, and n per slice.

    With ``correlation`` or ``sample_sd`` given, per-template proportions are
    first turned into synthetic per-sample scores
    (:func:`rankstats._kernels.budget.synthetic_samples`,
    :func:`rankstats._kernels.budget.item_model_samples`).
    """
    if correlation is not None and sample_sd is not None:
        raise OptionError(
            f"{function}: correlation and sample_sd are two models of the same samples; give one"
        )
    scores = _xr.score_variable(cube, function)
    if "template" not in scores.dims:
        raise DimensionError(
            f"{function}: the scores have no 'template' dimension "
            f"(dims: {', '.join(map(str, scores.dims))})"
        )
    scores = scores.load().astype(float)
    if valid is True and "template_valid" not in scores.coords:
        raise CubeError(
            f"{function}: valid=True needs the cube's 'template_valid' coordinate, which it lacks"
        )
    if valid is not None:
        mask = scores["template_valid"] if valid is True else valid
        if not isinstance(mask, xr.DataArray):
            mask = xr.DataArray(np.asarray(mask, dtype=bool), dims=["template"])
        scores = scores.where(mask.fillna(False).astype(bool))
    per_sample = "sample" in scores.dims
    lead = [d for d in scores.dims if d not in ("template", "sample")]
    for name, given in (("correlation", correlation), ("sample_sd", sample_sd)):
        if per_sample and given is not None:
            raise OptionError(
                f"{function}: {name}={given!r} is not allowed: it applies to "
                "per-template scores only; this cube has per-sample scores, "
                "which are replayed as observed"
            )
    if per_sample:
        n = None
    else:
        values = scores.values[~np.isnan(scores.values)]
        if values.size and (values.min() < 0 or values.max() > 1):
            raise CubeError(
                f"{function}: per-template scores must be proportions in [0, 1] to "
                "simulate samples from them (found "
                f"{values.min():g} to {values.max():g})"
            )
        if samples is None:
            if "template_samples" not in scores.coords:
                raise CubeError(
                    f"{function}: the cube has per-template scores and no 'template_samples' "
                    "coordinate; say how many samples each task has with samples=N"
                )
            counts = scores["template_samples"].max("template")
        else:
            counts = xr.DataArray(samples)
        n = counts.broadcast_like(scores.isel(template=0, drop=True)).transpose(*lead).values
        if np.any(np.isnan(n.astype(float))):
            n = np.where(np.isnan(n.astype(float)), 0, n)
        n = n.astype(np.int64)
        if correlation is not None or sample_sd is not None:
            ordered = scores.transpose(*lead, "template")
            values = (
                _k.synthetic_samples(ordered.values, n, float(correlation), rng)
                if correlation is not None
                else _k.item_model_samples(ordered.values, n, float(sample_sd), rng)
            )
            scores = xr.DataArray(
                values,
                dims=(*lead, "template", "sample"),
                coords=ordered.coords,
                attrs=ordered.attrs,
            )
            return scores, True, None
    return scores, per_sample, n


def _template_truth(scores: xr.DataArray) -> xr.DataArray:
    return _xr.mean_over(scores, "sample") if "sample" in scores.dims else scores


@checked(templates_per_sample=o.positive_int, tolerance=_positive, **_SIMULATION)
def simulate_avgp(
    cube,
    *,
    templates_per_sample: int = 20,
    n_resamples: int = 200,
    tolerance: float = 0.01,
    samples: int | None = None,
    valid=None,
    correlation: float | None = None,
    sample_sd: float | None = None,
    seed=None,
) -> xr.Dataset:
    r"""Simulate the random-assignment estimate of AvgP on a cube whose scores are all known.

    Parameters
    ----------
    cube : score cube or xarray.DataArray
        With per-sample scores, each round uses the observed score of the
        (template, sample) cells it draws. With per-template proportions
        (a study's released accuracies), each sample's outcome is drawn as
        Bernoulli of its template's score (see Notes).
    templates_per_sample : int, default 20
        The largest number k of random templates each sample is scored
        under (k rounds of the estimator, k × samples calls); the results
        run over k = 1 .. ``templates_per_sample``.
    n_resamples : int, default 200
        Independent runs of the estimator per model and task (simulation
        draws).
    tolerance : float, default 0.01
        The error counted as close enough (0.01: one accuracy point, as in
        the paper's table 19).
    samples : int, optional
        Samples per task for per-template scores; by default the largest
        ``template_samples`` of each task.
    valid : None, True or array_like of bool, default None
        Templates to draw from: all (None), those marked ``template_valid``
        (True), or a mask over ``template``.
    correlation : float in [0, 1], optional
        For per-template scores: instead of independent Bernoulli draws,
        build one synthetic table of per-sample 0/1 scores in which every
        template has exactly its accuracy and samples are hard or easy for
        all templates alike, with latent correlation ``correlation`` (see
        Notes), and replay the estimator on it as observed.
    sample_sd : float, optional
        For per-template scores: draw per-sample outcomes from an
        item-difficulty model instead (sample difficulties
        :math:`b_i \sim N(0, \text{sample\_sd}^2)` shared by the templates,
        each template's ability fitted so that its expected accuracy is its
        score; see Notes), and replay the estimator on them as observed.
    {seed}

    Returns
    -------
    xarray.Dataset
        Over ``model``, ``task`` (and any other dim) and ``k`` (1 to
        ``templates_per_sample``): ``avgp`` (exact), ``estimate`` (mean over
        the runs of the estimate after k rounds), ``spread`` (its standard
        deviation over the runs), ``error`` (mean absolute error),
        ``within`` (share of runs within ``tolerance``), ``calls`` (k ×
        samples), and per model and task ``k_needed`` (mean over the runs
        of the first k within tolerance; runs that never get there are
        left out), ``never_within`` (their share) and ``full_calls``
        (templates × samples).

    Notes
    -----
    With template scores :math:`p_1..p_T` and each sample answered under a
    uniform template, a sample succeeds with probability
    :math:`\bar p = \mathrm{AvgP}`, so one round's estimate is unbiased.
    For per-template scores the outcomes of different samples are drawn
    independently (the released data do not say how they correlate), which
    makes one round exactly Binomial(n, AvgP) / n.

    Real outcomes are correlated across templates: a hard sample is hard
    under every wording. ``correlation`` models this with a latent value
    :math:`\sqrt{\rho} z_s + \sqrt{1-\rho} e_{ts}` per template and sample
    (standard normals, :math:`z_s` shared); template t succeeds on the
    :math:`\mathrm{round}(p_t n)` samples with the smallest values, so its
    accuracy is exactly :math:`p_t` and the exact metrics are unchanged.

    ``sample_sd`` models the same with difficulties: template t succeeds on
    sample i with probability :math:`\operatorname{logistic}(\theta_t - b_i)`,
    :math:`\theta_t` solving :math:`\frac1n \sum_i
    \operatorname{logistic}(\theta_t - b_i) = p_t`
    (:func:`rankstats._kernels.budget.item_model_samples`). The exact
    metrics are those of the drawn table (close to, not equal to, the
    released ones). On the 160 LMentry model × task cases of Mizrahi et al.
    (2024), the paper's search found a best template in 130 (table 20, on
    the real outputs); replayed with independent draws it finds one in 68.9
    on average (43%), with ``sample_sd`` 1, 2 and 3 in 121.4, 124.9 and
    130.2 (76, 78 and 81%; ``rankstats estimate mizrahi2024 --benchmark
    LMentry --n-resamples 200 --seed 0 --sample-sd SD``).

    References
    ----------
    Mizrahi et al. (2024), State of What Art? A Call for Multi-Prompt LLM
    Evaluation, TACL, section 7 and table 19.

    See Also
    --------
    estimate_avgp : the same estimator spending a real budget.
    rankstats.avgp : the exact metric.

    Examples
    --------
    >>> import numpy as np, xarray as xr, rankstats
    >>> scores = xr.DataArray(np.array([[1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]),
    ...                       dims=("template", "sample"))
    >>> result = rankstats.simulate_avgp(scores, templates_per_sample=30, n_resamples=100,
    ...                                  seed=1)
    >>> float(result.avgp)
    0.5
    >>> bool(abs(result.estimate.sel(k=30) - 0.5) < 0.02)
    True
    """
    rng, seed_attr = generator(seed)
    scores, per_sample, n = _prepared(
        cube, valid, samples, "simulate_avgp", correlation, rng, sample_sd
    )
    core = ["template", "sample"] if per_sample else ["template"]

    def kernel(x, n_samples):
        truth = _k.masked_mean(_k.template_means(x, per_sample), _k.pools(x, per_sample)[0])
        each = _k.avgp_repetitions(
            x,
            per_sample=per_sample,
            n_samples=n_samples,
            repetitions=templates_per_sample,
            trials=n_resamples,
            rng=rng,
        )
        k = np.arange(1, templates_per_sample + 1)
        running = np.cumsum(each, -1) / k
        error = running - truth[..., None, None]
        needed = _k.first_within(error, tolerance)
        present = ~np.isnan(truth)[..., None]
        never = np.where(present[..., 0], np.isnan(needed).mean(-1), np.nan)
        reached = ~np.isnan(needed)
        n_used = (
            _k.pools(x, True)[1].sum(-1) if per_sample else np.broadcast_to(n_samples, truth.shape)
        )
        n_templates = _k.pools(x, per_sample)[0].sum(-1)
        spread = (
            running.std(axis=-2, ddof=1)
            if n_resamples > 1
            else np.full(running.shape[:-2] + running.shape[-1:], np.nan)
        )
        return {
            "avgp": truth,
            "estimate": np.swapaxes(running, -1, -2).mean(-1),
            "spread": spread,
            "error": np.abs(np.swapaxes(error, -1, -2)).mean(-1),
            "within": np.where(
                present,
                (np.abs(np.swapaxes(error, -1, -2)) < tolerance - _k.EQUAL).mean(-1),
                np.nan,
            ),
            "calls": np.where(present, n_used[..., None] * k, np.nan),
            "k_needed": _k.masked_mean(np.nan_to_num(needed), reached),
            "never_within": never,
            "full_calls": np.where(present[..., 0], n_used * n_templates, np.nan),
        }

    outputs = {
        name: (name, ["k"] if name in ("estimate", "spread", "error", "within", "calls") else [])
        for name in (
            "estimate",
            "spread",
            "error",
            "within",
            "calls",
            "avgp",
            "k_needed",
            "never_within",
            "full_calls",
        )
    }
    result = _xr.apply_labelled(
        "simulate_avgp",
        kernel,
        [scores],
        [core],
        outputs,
        kwargs={"n_samples": n},
        attrs={
            "method": "random template per sample, repeated",
            "n_resamples": n_resamples,
            "tolerance": tolerance,
            "seed": seed_attr,
            "samples": _samples_note(per_sample, correlation, sample_sd),
            "reference": "Mizrahi et al. (2024), section 7, table 19",
        },
    )
    return result.assign_coords(k=np.arange(1, templates_per_sample + 1))


@checked(**_SIMULATION)
def simulate_maxp(
    cube,
    *,
    stages=PAPER_STAGES,
    n_resamples: int = 200,
    samples: int | None = None,
    valid=None,
    correlation: float | None = None,
    sample_sd: float | None = None,
    seed=None,
) -> xr.Dataset:
    """Simulate the successive-halving search for the best template on a cube.

    Parameters
    ----------
    cube : score cube or xarray.DataArray
        Per-sample scores (used as observed) or per-template proportions
        (each sample drawn as Bernoulli of the template's score,
        independently; see :func:`simulate_avgp`).
    stages : sequence of (templates, samples), default PAPER_STAGES
        Stage i scores the ``templates`` best templates so far (None: all
        still in) on ``samples`` new samples (None: all left). Default
        :data:`PAPER_STAGES`.
    n_resamples : int, default 200
        Independent searches per model and task (simulation draws, each
        with its own random sample order and tie breaks).
    samples : int, optional
        Samples per task for per-template scores, as in
        :func:`simulate_avgp`.
    valid : None, True or array_like of bool, default None
        Templates to search, as in :func:`simulate_avgp`.
    correlation : float in [0, 1], optional
        Synthetic per-sample scores for per-template proportions, as in
        :func:`simulate_avgp`.
    sample_sd : float, optional
        Per-sample outcomes from an item-difficulty model, as in
        :func:`simulate_avgp`.
    {seed}

    Returns
    -------
    xarray.Dataset
        Per model and task: ``maxp`` (exact), ``estimate`` (mean over the
        searches of the chosen template's score on the samples it was
        scored on), ``found`` (share of searches whose choice is a best
        template), ``shortfall`` (mean of MaxP minus the chosen template's
        exact score), ``shortfall_when_missed`` (the same over the searches
        that missed; NaN if none did), ``calls`` (mean cells scored) and
        ``full_calls`` (templates × samples).

    Notes
    -----
    No (template, sample) cell is scored twice: each stage takes new samples
    from a random order of the task's samples. Templates are ranked by their
    mean over every sample scored so far; ties are broken at random.

    References
    ----------
    Mizrahi et al. (2024), State of What Art? A Call for Multi-Prompt LLM
    Evaluation, TACL, section 7 and table 20.

    See Also
    --------
    estimate_maxp : the same search spending a real budget.
    rankstats.maxp : the exact metric.

    Examples
    --------
    >>> import numpy as np, xarray as xr, rankstats
    >>> scores = xr.DataArray(np.array([0.2, 0.9, 0.5, 0.4]), dims=("template",))
    >>> result = rankstats.simulate_maxp(scores, stages=[(None, 20), (2, None)],
    ...                                  samples=100, n_resamples=200, seed=0)
    >>> float(result.maxp), float(result.found) > 0.95
    (0.9, True)
    >>> float(result.calls), float(result.full_calls)
    (240.0, 400.0)
    """
    rng, seed_attr = generator(seed)
    scores, per_sample, n = _prepared(
        cube, valid, samples, "simulate_maxp", correlation, rng, sample_sd
    )
    hib = _xr.higher_is_better_of(cube, None)
    core = ["template", "sample"] if per_sample else ["template"]

    def kernel(x, n_samples):
        truth = _k.template_means(x, per_sample)
        run = _k.successive_halving(
            x,
            per_sample=per_sample,
            n_samples=n_samples,
            stages=stages,
            trials=n_resamples,
            rng=rng,
            higher_is_better=hib,
        )
        outcome = _k.search_outcome(truth, run["chosen"], hib)
        present = ~np.isnan(outcome["best"])
        missed = outcome["found"] == 0
        n_used = (
            _k.pools(x, True)[1].sum(-1)
            if per_sample
            else np.broadcast_to(n_samples, present.shape)
        )
        everything = np.ones_like(run["observed"], bool)
        return {
            "maxp": outcome["best"],
            "estimate": _k.masked_mean(run["observed"], everything),
            "found": _k.masked_mean(outcome["found"], everything),
            "shortfall": _k.masked_mean(outcome["shortfall"], everything),
            "shortfall_when_missed": _k.masked_mean(outcome["shortfall"], missed),
            "calls": np.where(present, run["calls"].mean(-1), np.nan),
            "full_calls": np.where(present, n_used * _k.pools(x, per_sample)[0].sum(-1), np.nan),
        }

    names = (
        "calls",
        "estimate",
        "found",
        "full_calls",
        "maxp",
        "shortfall",
        "shortfall_when_missed",
    )
    return _xr.apply_labelled(
        "simulate_maxp",
        kernel,
        [scores],
        [core],
        {name: (name, []) for name in names},
        kwargs={"n_samples": n},
        attrs={
            "method": "successive halving",
            "stages": _stages_text(stages),
            "n_resamples": n_resamples,
            "seed": seed_attr,
            "samples": _samples_note(per_sample, correlation, sample_sd),
            "reference": "Mizrahi et al. (2024), section 7, table 20",
        },
    )


def _samples_note(per_sample: bool, correlation, sample_sd=None) -> str:
    if sample_sd is not None and per_sample:
        return f"synthetic per-sample scores, item-difficulty model with sample_sd {sample_sd:g}"
    if correlation is not None and per_sample:
        return f"synthetic per-sample scores, latent correlation {correlation:g}"
    return "observed" if per_sample else "Bernoulli of per-template scores"


def _stages_text(stages) -> str:
    return ", ".join(
        f"{'all' if keep is None else keep} templates on "
        f"{'the remaining' if size is None else size} samples"
        for keep, size in stages
    )


class _Memo:
    """Scores each (template, sample) pair once; later requests are answered from memory."""

    def __init__(self, score: Scorer):
        self.score = score
        self.known: dict[tuple[str, str], float] = {}

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        new = list(dict.fromkeys(p for p in pairs if p not in self.known))
        if new:
            values = list(self.score(new))
            if len(values) != len(new):
                raise ScoreValueError(
                    f"the scorer returned {len(values)} scores for {len(new)} pairs"
                )
            self.known.update(zip(new, (float(v) for v in values), strict=True))
        return np.array([self.known[p] for p in pairs], dtype=float)


@checked(score=_scorer, templates=_ids, samples=_ids, templates_per_sample=o.positive_int)
def estimate_avgp(
    score: Scorer,
    templates: Sequence[str],
    samples: Sequence[str],
    *,
    templates_per_sample: int = 20,
    seed=None,
) -> AvgPEstimate:
    """Estimate AvgP of one model on one task by random template assignment.

    Parameters
    ----------
    score : callable
        ``score(pairs) -> scores``: the scores of a list of (template id,
        sample id) pairs, in order (NaN where none could be had). Called once
        per round with the pairs not scored before, so a collector can run
        each batch concurrently.
    templates, samples : sequence of str
        The task's template and sample ids (distinct, at least one each).
    templates_per_sample : int, default 20
        How many random templates every sample is scored under: the rounds
        of the estimator, each giving every sample one template drawn
        uniformly (at most ``templates_per_sample × len(samples)`` calls).
    {seed}

    Returns
    -------
    AvgPEstimate
        ``estimate`` (mean of the rounds), ``rounds`` (each round's
        estimate), ``running`` (the estimate after k rounds), ``spread``
        (standard deviation of the first k rounds' estimates; NaN for
        k = 1) and ``calls`` (distinct pairs scored).

    Notes
    -----
    A round's estimate is the mean score of the samples under their drawn
    templates, an unbiased estimate of AvgP (see :func:`simulate_avgp`);
    a pair drawn again in a later round is answered from memory, not
    scored twice.

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    simulate_avgp : how close this comes, replayed on a known cube.

    Examples
    --------
    >>> import rankstats
    >>> accuracy = {"t1": 1.0, "t2": 0.0}
    >>> result = rankstats.estimate_avgp(lambda pairs: [accuracy[t] for t, _ in pairs],
    ...                                  ["t1", "t2"], [str(i) for i in range(50)],
    ...                                  templates_per_sample=4, seed=0)
    >>> result.calls <= 100, round(result.estimate, 1)
    (True, 0.4)
    """
    rng = np.random.default_rng(seed)
    memo = _Memo(score)
    each = np.empty(templates_per_sample)
    for r in range(templates_per_sample):
        picks = rng.integers(len(templates), size=len(samples))
        values = memo([(templates[t], s) for t, s in zip(picks, samples, strict=True)])
        each[r] = _k.masked_mean(values, ~np.isnan(values))
    k = np.arange(1, templates_per_sample + 1)
    running = np.cumsum(each) / k
    spread = np.array([np.std(each[:i], ddof=1) if i > 1 else np.nan for i in k])
    return AvgPEstimate(float(running[-1]), each, running, spread, len(memo.known))


@checked(score=_scorer, templates=_ids, samples=_ids, stages=_stages, higher_is_better=o.boolean)
def estimate_maxp(
    score: Scorer,
    templates: Sequence[str],
    samples: Sequence[str],
    *,
    stages=PAPER_STAGES,
    higher_is_better: bool = True,
    seed=None,
) -> MaxPEstimate:
    """Find the best template of one model on one task by successive halving.

    Parameters
    ----------
    score : callable
        As in :func:`estimate_avgp`; called once per stage.
    templates, samples : sequence of str
        The task's template and sample ids (distinct, at least one each).
    stages : sequence of (templates, samples), default PAPER_STAGES
        As in :func:`simulate_maxp`; default :data:`PAPER_STAGES`.
    higher_is_better : bool, default True
        Whether a higher score is better.
    {seed}
        It orders the samples and breaks ties.

    Returns
    -------
    MaxPEstimate
        ``template`` (the winner), ``estimate`` (its mean score over the
        samples it was scored on), ``stages`` (per stage: templates, samples,
        calls) and ``calls`` (pairs scored in all).

    Notes
    -----
    Templates are ranked by their mean over every sample scored so far;
    each stage takes new samples from one random order of the samples, so
    no pair is scored twice (see :func:`simulate_maxp`).

    References
    ----------
    {mizrahi2024}

    See Also
    --------
    simulate_maxp : how often this finds the best template, replayed on a
        known cube.

    Examples
    --------
    >>> import rankstats
    >>> accuracy = {"a": 0.2, "b": 0.9, "c": 0.5}
    >>> result = rankstats.estimate_maxp(
    ...     lambda pairs: [accuracy[t] for t, _ in pairs], list(accuracy),
    ...     [str(i) for i in range(10)], stages=[(None, 2), (1, None)], seed=0)
    >>> result.template, result.estimate, result.calls
    ('b', 0.9, 14)
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(samples))
    memo = _Memo(score)
    candidates = np.ones(len(templates), bool)
    hits = np.zeros(len(templates))
    seen = np.zeros(len(templates))
    start, history = 0, []
    for keep, size in stages:
        if keep is not None:
            candidates, _ = _k.keep_best(
                candidates, hits, seen, keep, rng.random(len(templates)), higher_is_better
            )
        end = len(samples) if size is None else min(start + size, len(samples))
        chosen = np.flatnonzero(candidates)
        batch = [samples[i] for i in order[start:end]]
        pairs = [(templates[t], s) for t in chosen for s in batch]
        values = memo(pairs).reshape(len(chosen), len(batch))
        scored = ~np.isnan(values)
        hits[chosen] += np.where(scored, values, 0.0).sum(-1)
        seen[chosen] += scored.sum(-1)
        history.append({"templates": len(chosen), "samples": len(batch), "calls": len(pairs)})
        start = end
    best = int(_k.best_of(candidates, hits, seen, rng.random(len(templates)), higher_is_better))
    estimate = hits[best] / seen[best] if seen[best] else float("nan")
    return MaxPEstimate(templates[best], float(estimate), tuple(history), len(memo.known))
