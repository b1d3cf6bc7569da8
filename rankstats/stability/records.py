r"""The record history of a leaderboard: which new records were real improvements.

Given every model's per-sample scores and its submission date,
:func:`record_history` walks the history in date order, finds each step
that set a new record, tests it against the record it replaced with an
exact paired test conditioned on the event that made it a step, adjusts the
p-values over the steps (Holm by default), and says what the benchmark can
resolve: the minimum detectable difference of each step's pair and the
items a one- and a two-point gap would need.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels import records as _kr
from .._kernels.multitest import adjust_last
from .._statistic import documented
from .._xr import higher_is_better_of
from ..errors import (
    CoordinateMismatchError,
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
    UnknownNameError,
)

__all__ = ["record_history"]

_NAME = "record_history"
#: The verdicts of a step.
VERDICTS = ("improvement", "no detectable improvement")
EXACT, ENUMERATED, SIGNFLIP = "exact sign test", "exact sign-flip", "sign-flip"
METHOD = (
    "each record against the record it replaced: exact paired test conditional on the "
    "event that made the step a record (the new record beats the old one, which held the "
    "record until then; same_date says how a date's several submissions are handled); "
    "p-values adjusted over the steps"
)
#: How a date with several submissions is tested: its challenger is the best of them.
SAME_DATE = {
    "bonferroni": "submissions of one date are one step: the best of the date (ties: the one "
    "listed first) is the challenger; its p-value, given that it beats the record, is "
    "multiplied by the number of the date's submissions",
    "condition": "submissions of one date are one step: the best of the date (ties: the one "
    "listed first) is the challenger; the test conditions on its being the best of its date",
}
_AXES = ("model", "task", "template", "sample")


def _scores(x) -> xr.DataArray:
    if isinstance(x, xr.Dataset):
        if "score" not in x:
            raise InputTypeError(f"{_NAME}: the cube has no 'score' variable")
        scores = x["score"].assign_attrs({**x.attrs, **x["score"].attrs})
        for name in x.coords:
            if name not in scores.coords and set(x[name].dims) <= set(scores.dims):
                scores = scores.assign_coords({name: x[name]})
    elif isinstance(x, xr.DataArray):
        scores = x
    else:
        raise InputTypeError(
            f"{_NAME}: x must be a score cube (xarray.Dataset) or an xarray.DataArray, "
            f"not {type(x).__name__}"
        )
    for dim in ("model", "task", "sample"):
        if dim not in scores.dims:
            raise DimensionError(
                f"{_NAME}: the scores have no {dim!r} dimension (dimensions: "
                f"{', '.join(map(str, scores.dims))}); the record test pairs per-sample scores"
            )
    extra = [d for d in scores.dims if d not in _AXES]
    if extra:
        raise DimensionError(
            f"{_NAME}: the scores have dimensions beyond the cube's ({', '.join(extra)}); "
            "select one position of each first"
        )
    if "template" not in scores.dims:
        scores = scores.expand_dims("template")
    return scores


def _date_values(scores: xr.DataArray, dates, models: list[str]) -> np.ndarray:
    """One date per model, in the order of ``models``; an error naming any model without one."""
    if dates is None or isinstance(dates, str):
        name = "date" if dates is None else dates
        if name not in scores.coords or scores[name].dims != ("model",):
            raise UnknownNameError(
                f"{_NAME}: no model coordinate {name!r} holds the dates; give dates= a "
                "mapping or pandas.Series of model -> date, or the name of a model coordinate"
            )
        values = list(scores[name].values)
    elif isinstance(dates, (Mapping, pd.Series)):
        given = {str(k): v for k, v in dict(dates).items()}
        lacking = [m for m in models if m not in given]
        if lacking:
            raise MissingValueError(
                f"{_NAME}: dates gives no date for {len(lacking)} model(s): "
                f"{', '.join(lacking[:10])}"
            )
        values = [given[m] for m in models]
    else:
        raise InputTypeError(
            f"{_NAME}: dates must be None (the cube's 'date' coordinate), the name of a model "
            f"coordinate, or a mapping / pandas.Series of model -> date, not {type(dates).__name__}"
        )
    missing = [m for m, v in zip(models, values, strict=True) if v is None or pd.isna(v) or v == ""]
    if missing:
        raise MissingValueError(
            f"{_NAME}: {len(missing)} model(s) have no date: {', '.join(missing[:10])}; "
            "the record history needs every date (select the dated models first)"
        )
    return np.array(values, dtype=object)


def _date_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """Integer codes increasing with the date, the dates as text, and how they were ordered."""
    kinds = {type(v) for v in values}
    if all(
        issubclass(k, (int, float, np.integer, np.floating)) and not issubclass(k, bool)
        for k in kinds
    ):
        keys = np.asarray(values, dtype=float)
        how = "as numbers"
    elif all(issubclass(k, (datetime.date, np.datetime64, pd.Timestamp)) for k in kinds):
        keys = pd.to_datetime(pd.Series(values)).to_numpy()
        how = "as dates"
    else:
        text = [str(v) for v in values]
        try:
            keys = pd.to_datetime(pd.Series(text), format="ISO8601").to_numpy()
            how = "as dates"
        except (ValueError, TypeError):
            if len({len(t) for t in text}) != 1:
                raise OptionError(
                    f"{_NAME}: the dates {', '.join(sorted(set(text))[:5])} are neither "
                    "numbers, ISO 8601 dates nor stamps of one fixed width (such as "
                    "20251205 or 2026-11-27T03-43-18.207845) that sort as text"
                ) from None
            keys = np.array(text, dtype=object)
            how = "as text of one width"
    _, codes = np.unique(keys, return_inverse=True)
    return codes.reshape(-1), np.array([str(v) for v in values], dtype=object), how


def _items(scores: xr.DataArray, task):
    """Per-item scores ``(M, N)`` over the cells every model has, item weights and the drop count.

    An item is a (task, sample); its score is the mean over the templates
    every model has for it. Each kept task weighs the same (the benchmark
    mean), each of its items ``1 / n_t`` of that.
    """
    if task is not None:
        tasks = [str(t) for t in scores["task"].values]
        if str(task) not in tasks:
            raise UnknownNameError(
                f"{_NAME}: no task {task!r} (the cube has {', '.join(tasks[:10])}"
                f"{', ...' if len(tasks) > 10 else ''})"
            )
        scores = scores.isel(task=[tasks.index(str(task))])
    values = np.asarray(scores.transpose(*_AXES).values, dtype=float)
    empty = np.isnan(values).all((1, 2, 3))
    if empty.any():
        names = [str(m) for m in scores["model"].values[empty]]
        raise MissingValueError(
            f"{_NAME}: no score for {', '.join(names[:10])}"
            + (f" on task {task!r}" if task is not None else "")
            + "; select the models with scores first"
        )
    shared = ~np.isnan(values).any(0)  # (T, P, S): a cell every model has
    real = ~np.isnan(values).all(0)
    dropped = int((real & ~shared).sum())
    n_templates = shared.sum(1)  # (T, S)
    item = n_templates > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        per_item = np.where(shared[None], values, 0.0).sum(2) / n_templates[None]
    per_task = item.sum(1)
    kept = per_task > 0
    if not kept.any():
        raise CoordinateMismatchError(
            f"{_NAME}: no item is scored for every model; the models share nothing to compare"
        )
    weight = np.where(item & kept[:, None], 1.0 / np.maximum(per_task, 1)[:, None], 0.0)
    weight = weight / kept.sum()
    keep = weight.reshape(-1) > 0
    y = per_item.reshape(per_item.shape[0], -1)[:, keep]
    return y, weight.reshape(-1)[keep], dropped, int(kept.sum())


@documented
def record_history(
    x,
    dates=None,
    *,
    task=None,
    alpha=0.05,
    p_adjust="holm",
    power=0.8,
    gaps=(0.01, 0.02),
    n_resamples=10_000,
    seed=None,
    higher_is_better=None,
    same_date="bonferroni",
):
    r"""Audit every step of a leaderboard's history that set a new record.

    Parameters
    ----------
    x : score cube or xarray.DataArray
        Per-sample scores ``(model, task, [template,] sample)``.
    dates : None, str, mapping or pandas.Series
        Each model's submission date: None reads the cube's ``date``
        coordinate on ``model``; a string names another model coordinate; a
        mapping or Series gives model -> date. Dates may be datetimes, ISO
        8601 text, numbers, or stamps of one fixed width that sort as text
        (``20251205``). Every model needs one.
    task : str, optional
        Audit one task's leaderboard; by default the benchmark mean, every
        task weighing the same.
    {alpha}
        Also the level of the minimum detectable difference.
    {p_adjust}
        Applied over the steps.
    power : float, default 0.8
        The power of the minimum detectable difference and of the items needed.
    gaps : sequence of float, default (0.01, 0.02)
        Score gaps (0.01: one point of accuracy) for which to give the items needed.
    {n_resamples}
        Sign patterns of the Monte Carlo test (steps whose items do not all
        weigh the same); the exact test draws none.
    {seed}
    higher_is_better : bool, optional
        None reads the cube's attribute (else True).
    same_date : {"bonferroni", "condition"}, default "bonferroni"
        How a date with several submissions is tested; its challenger is
        the best of them. ``"bonferroni"``: the test given that the
        challenger beats the record, its p-value multiplied by the number
        of the date's submissions. ``"condition"``: the test given, in
        addition, that the challenger is the best of its date: exact, with
        no factor, but nearly powerless when a date mate scores close to it.

    Returns
    -------
    xarray.Dataset
        Over ``step`` (1, 2, ... in date order), one row per new record:
        ``record``, ``previous`` (the record it replaced), ``date``,
        ``previous_date``, ``score``, ``previous_score``, ``margin`` (score
        minus previous score), ``n_date_models`` (models submitted on the
        record's date), ``n_discordant``, ``wins``, ``losses`` (items on
        which the two differ, and on which the new record is better, worse),
        ``lower``, ``upper`` (the selection event: the margin range, every
        other score held fixed, in which this step is a step), ``test``,
        ``pvalue`` (selective), ``pvalue_adjusted``, ``verdict``
        (``"improvement"`` where the adjusted p-value is below ``alpha``,
        else ``"no detectable improvement"``), ``mde`` (the minimum
        detectable difference of the pair) and ``items_needed(step, gap)``.
        Over ``model``: ``model_score``, ``model_date``, ``sets_record``.
        Scalars ``resolution_mde`` and ``resolution_items_needed(gap)``:
        the same at the median discordance (or spread) of the steps. The
        attrs record the options, ``first_record``, ``n_items``, ``n_tasks``,
        ``dropped_cells``, ``date_order`` and ``same_date``.

    Raises
    ------
    MissingValueError
        A model without a date, or without any score.
    DimensionError, InputTypeError, UnknownNameError, OptionError
        Scores without samples; inputs of the wrong kind; an unknown task or
        date coordinate; an option out of range or dates that do not sort.
    CoordinateMismatchError
        No item scored for every model.

    Notes
    -----
    **The chain.** Models are taken in date order. The models of one date
    form one step: the best of them (ties: the one listed first) is the
    challenger, and it sets a record when it scores above the best of every
    earlier date (scores within :math:`10^{-9}` of the largest absolute
    score count as tied). The first date's best is the first record and is
    not tested. Only items every model scores are used (``dropped_cells``
    counts the others), so every score and every pair is on the same items.

    **The selective test.** Step :math:`A \to B` is tested under the
    item-wise null that, on every item, the outcomes of A and B are
    exchangeable (the two are equally good on each item). Given the pair
    of outcomes of each item (unordered) and every other model's scores,
    the margin :math:`D = S_B - S_A = \sum_i w_i (y_{Bi} - y_{Ai})` then
    has the sign-flip distribution :math:`D^* = \sum_i s_i w_i |y_{Bi} -
    y_{Ai}|` with independent fair signs, while :math:`S_A + S_B` and the
    other scores stay fixed. The step happens exactly when :math:`D^*`
    lies in an interval :math:`E` (``lower``, ``upper``): B beats A, B is
    the best of its date (with ``same_date="condition"``), and A set its
    record and held it until B's date
    (:func:`rankstats._kernels.records.selection_bounds` derives the
    bounds). The selective p-value is :math:`P(D^* \ge D \mid D^* \in E)`,
    uniform or conservative given that the step occurred, the exact
    conditional test of Fithian, Sun and Taylor (2014) for a selection
    event, here a permutation one; the conditioning on the winner's own
    selection follows Andrews, Kitagawa and McCloskey (2024), whose
    estimate :func:`rankstats.stability.winner_interval` gives. When all
    discordant items weigh the same (binary scores on one task, or on tasks
    of equal size), :math:`D^* = u(2X - n)` with
    :math:`X \sim \mathrm{Bin}(n, 1/2)` over the :math:`n` discordant
    items and the test is exact (``test = "exact sign test"``, McNemar's
    exact test conditioned on the event). Otherwise, with at most 16
    discordant items, every sign pattern is counted (``"exact
    sign-flip"``); with more, ``n_resamples`` random sign patterns give
    :math:`(1 + \#\{D^* \ge D, D^* \in E\}) / (1 + \#\{D^* \in E\})`,
    valid for any number of draws (``"sign-flip"``).

    **Same-date submissions.** With ``same_date="bonferroni"`` the event
    leaves out "B is the best of its date" and the p-value is multiplied by
    the date's :math:`g` submissions: whichever of them is the challenger,
    :math:`P(\text{reject} \mid \text{step}) \le \sum_j (\alpha/g)
    P(j \text{ beats A}) / P(\text{step}) \le \alpha`, as each
    :math:`P(j \text{ beats A}) \le P(\text{step})`. With ``"condition"``
    the event holds it and no factor is paid; the price is power when a
    date mate is close, as the event then leaves the margin little room.
    Either way, conditioning on A's tenure (the upper bound) makes the test
    exact where the record test given only :math:`D > 0` is conservative.

    **Error control.** Each step's p-value is valid given the step; the
    ``p_adjust`` adjustment runs over the steps that occurred. Measured by
    simulation (``python tests/test_records.py``: 2,000 histories of 12
    models on 300 binary items each), the family-wise error of the
    Holm-adjusted audit at ``alpha = 0.05`` is 0.023 when all models are
    equally good (0.000 with three models a date, 0.006 with
    ``same_date="condition"``), and a real gain of 0.8 on the logit scale is
    found with probability 0.84 (docs/records.md has the table).

    **Resolution.** ``mde`` is the difference McNemar's test detects with
    ``power`` at level ``alpha`` at the pair's discordance (Connor 1987; the
    number :func:`rankstats.analyses.compare.mcnemar_mde` gives, and
    :func:`rankstats.compare` reports for one template), for binary scores;
    otherwise Bloom's :math:`(z_{1-\alpha/2} + z_{power})\,\sigma_d /
    \sqrt{n}` with the standard deviation of the weighted per-item
    differences (as ``compare``'s bootstrap one, without resampling).
    ``items_needed`` solves the same formulas for the items. The selective
    test's critical value is about the two-sided one, so these are its
    detectable gaps too.

    References
    ----------
    .. [1] Fithian, W., Sun, D. and Taylor, J. (2014). Optimal inference
       after model selection. arXiv:1410.2597.
    .. [2] Andrews, I., Kitagawa, T. and McCloskey, A. (2024). Inference on
       winners. The Quarterly Journal of Economics 139(1), 305-358.
    .. [3] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics 6(2), 65-70.
    .. [4] Connor, R. J. (1987). Sample size for testing differences in
       proportions for the paired-sample design. Biometrics 43(1), 207-211.

    See Also
    --------
    rankstats.compare, rankstats.stability.winner_interval, rankstats.stability.plan

    Examples
    --------
    Three submissions on one task of 40 items: B beats A on 12 items and
    loses 2, C beats B on 3 and loses 1.

    >>> import numpy as np, rankstats
    >>> from rankstats.stability import record_history
    >>> a = np.r_[np.ones(20), np.zeros(20)]
    >>> b = a.copy(); b[20:32] = 1; b[:2] = 0
    >>> c = b.copy(); c[32:35] = 1; c[2] = 0
    >>> records = [{"model": m, "task": "t", "template": "p", "sample": i, "score": s[i]}
    ...            for m, s in (("A", a), ("B", b), ("C", c)) for i in range(40)]
    >>> cube = rankstats.from_records(records)
    >>> dates = {"A": "2025-01-10", "B": "2025-03-02", "C": "2025-06-30"}
    >>> audit = record_history(cube, dates)
    >>> audit[["record", "previous", "n_discordant", "wins"]].to_pandas()
         record previous  n_discordant  wins
    step
    1         B        A            14    12
    2         C        B             4     3
    >>> audit.pvalue.round(4).values.tolist(), audit.verdict.values.tolist()
    ([0.0164, 1.0], ['improvement', 'no detectable improvement'])
    >>> round(float(audit.pvalue_adjusted[0]), 4), round(float(audit.mde[0]), 3)
    (0.0327, 0.254)

    Compare with SciPy: the first step's p-value is the binomial tail given
    a record, :math:`P(X \ge 12 \mid X > 7)` for :math:`X \sim \mathrm{Bin}(14, 1/2)`
    (A was the first record, so nothing bounds it from above), where the
    unconditional one-sided tail would be 0.0065; the second step, 3 wins
    in 4, cannot be told from chance at all once it is known to be a record:

    >>> from scipy import stats
    >>> round(float(stats.binom.sf(11, 14, 0.5) / stats.binom.sf(7, 14, 0.5)), 4)
    0.0164
    >>> round(float(stats.binom.sf(11, 14, 0.5)), 4)
    0.0065
    """
    checked = o.check_options(
        _NAME,
        {
            "alpha": o.probability,
            "p_adjust": o.one_of(*o.P_ADJUST),
            "power": o.probability,
            "n_resamples": o.positive_int,
            "seed": o.seed,
            "same_date": o.one_of(*SAME_DATE),
        },
        {
            "alpha": alpha,
            "p_adjust": p_adjust,
            "power": power,
            "n_resamples": n_resamples,
            "seed": seed,
            "same_date": same_date,
        },
    )
    try:
        gap_values = np.asarray(gaps, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        gap_values = np.array([np.nan])
    if not gap_values.size or not (np.isfinite(gap_values).all() and (gap_values > 0).all()):
        raise OptionError(
            f"{_NAME}: gaps={gaps!r} is not allowed; gaps must be a non-empty sequence of "
            "positive score differences"
        )
    scores = _scores(x)
    higher = higher_is_better_of(scores, higher_is_better)
    models = [str(m) for m in scores["model"].values]
    if len(set(models)) != len(models):
        raise OptionError(f"{_NAME}: model labels repeat; each model needs its own label")
    codes, date_text, how = _date_codes(_date_values(scores, dates, models))
    y, weight, dropped, n_tasks = _items(scores, task)
    sign = 1.0 if higher else -1.0
    oriented = sign * y
    score = oriented @ weight  # (M,)
    tol = _kr.tolerance(score)
    chain = _kr.record_chain(score, codes, tol)
    previous, new = chain["previous"], chain["new"]
    k = previous.size
    bounds = _kr.selection_bounds(score, codes, previous, new, tol)
    mates = np.bincount(codes, minlength=codes.max() + 1)
    factor = np.ones(k)
    if checked["same_date"] == "bonferroni":
        # condition only on beating the record (and on its tenure); pay for the date's size
        bounds["lower"] = np.zeros(k)
        bounds["lower_strict"] = np.ones(k, dtype=bool)
        factor = mates[codes[new]].astype(float)

    difference = oriented[new] - oriented[previous]  # (K, N), new minus old, oriented
    contribution = np.abs(difference) * weight[None, :]
    discordant = contribution > tol
    n_disc = discordant.sum(1)
    wins = (discordant & (difference > 0)).sum(1)
    losses = n_disc - wins
    margin = score[new] - score[previous]
    big = np.where(discordant, contribution, -np.inf).max(1, initial=-np.inf)
    small = np.where(discordant, contribution, np.inf).min(1, initial=np.inf)
    exact = (n_disc > 0) & (big - small <= tol)
    pvalue = np.ones(k)
    if exact.any():
        found = _kr.binomial_pvalues(n_disc, wins, np.where(exact, big, 1.0), bounds, tol)
        pvalue = np.where(exact, found["pvalue"], pvalue)
    # few discordant items of unequal weight: every sign pattern
    enumerated = ~exact & (n_disc <= _kr.MOST_ENUMERATED)
    if enumerated.any():
        columns = np.flatnonzero(enumerated)
        width = max(int(n_disc[columns].max()), 1)
        # each step's discordant items first, zero-padded to a common width
        order = np.argsort(~discordant[columns], axis=1, kind="stable")[:, :width]
        padded = np.take_along_axis(
            np.where(discordant[columns], contribution[columns], 0.0), order, axis=1
        )
        pvalue[columns] = _kr.enumerated_pvalues(
            padded, margin[columns], {name: value[columns] for name, value in bounds.items()}, tol
        )
    drawn = "None"
    sampled = ~exact & ~enumerated
    if sampled.any():
        rng = np.random.default_rng(checked["seed"])
        columns = np.flatnonzero(sampled)
        found = _kr.signflip_pvalues(
            contribution[columns].T,
            margin[columns],
            {name: value[columns] for name, value in bounds.items()},
            tol,
            checked["n_resamples"],
            rng,
        )
        pvalue[columns] = found["pvalue"]
        drawn = (
            "Generator"
            if isinstance(checked["seed"], np.random.Generator)
            else str(checked["seed"])
        )
    pvalue = np.minimum(1.0, factor * pvalue)
    adjusted = adjust_last(pvalue, checked["p_adjust"]) if k else pvalue
    verdict = np.where(adjusted < checked["alpha"], VERDICTS[0], VERDICTS[1]).astype(object)

    # resolution: Connor's McNemar formula for binary scores, Bloom's otherwise
    n_items = y.shape[1]
    binary = bool(np.isin(y, (0.0, 1.0)).all()) and np.allclose(weight, weight[0])
    a, pw = checked["alpha"], checked["power"]
    if binary:
        spread = n_disc / n_items  # discordance psi
        mde = _kr.connor_mde(n_items, spread, a, pw)
        needed = _kr.connor_items(gap_values[None, :], spread[:, None], a, pw)
    else:
        # SD of the per-item differences on the scale of an unweighted mean
        per_item = difference * weight[None, :] * n_items
        spread = per_item.std(1, ddof=1) if n_items > 1 else np.full(k, np.nan)
        mde = _kr.normal_mde(spread, n_items, a, pw)
        needed = _kr.normal_items(gap_values[None, :], spread[:, None], a, pw)
    middle = float(np.median(spread)) if k else np.nan
    if binary:
        resolution = _kr.connor_mde(n_items, middle, a, pw)
        resolution_needed = _kr.connor_items(gap_values, middle, a, pw)
    else:
        resolution = _kr.normal_mde(middle, n_items, a, pw)
        resolution_needed = _kr.normal_items(gap_values, middle, a, pw)

    shown = sign * score
    label = np.array(models, dtype=object)
    step = ("step",)
    sets_record = np.zeros(len(models), dtype=bool)
    sets_record[np.r_[chain["first"], new].astype(int)] = True
    result = xr.Dataset(
        {
            "record": (step, label[new]),
            "previous": (step, label[previous]),
            "date": (step, date_text[new]),
            "previous_date": (step, date_text[previous]),
            "score": (step, shown[new]),
            "previous_score": (step, shown[previous]),
            "margin": (step, shown[new] - shown[previous]),
            "n_date_models": (step, mates[codes[new]]),
            "n_discordant": (step, n_disc),
            "wins": (step, wins),
            "losses": (step, losses),
            "lower": (step, bounds["lower"]),
            "upper": (step, bounds["upper"]),
            "test": (
                step,
                np.where(exact, EXACT, np.where(enumerated, ENUMERATED, SIGNFLIP)).astype(object),
            ),
            "pvalue": (step, pvalue),
            "pvalue_adjusted": (step, adjusted),
            "verdict": (step, verdict),
            "mde": (step, mde),
            "items_needed": (("step", "gap"), needed),
            "model_score": (("model",), shown),
            "model_date": (("model",), date_text),
            "sets_record": (("model",), sets_record),
            "resolution_mde": ((), float(resolution)),
            "resolution_items_needed": (("gap",), resolution_needed),
        },
        coords={"step": np.arange(1, k + 1), "gap": gap_values, "model": models},
        attrs={
            "statistic": _NAME,
            "method": METHOD,
            "same_date": SAME_DATE[checked["same_date"]],
            "first_record": models[chain["first"]],
            "first_record_date": str(date_text[chain["first"]]),
            "task": "benchmark mean" if task is None else str(task),
            "n_tasks": n_tasks,
            "n_items": n_items,
            "dropped_cells": dropped,
            "date_order": how,
            "higher_is_better": str(higher),
            "alpha": checked["alpha"],
            "power": checked["power"],
            "p_adjust": checked["p_adjust"],
            "family": "step",
            "n_resamples": checked["n_resamples"],
            "seed": drawn,
            "mde": "Connor's McNemar formula at each pair's discordance"
            if binary
            else "Bloom's normal formula with the SD of the per-item differences",
        },
    )
    return result
