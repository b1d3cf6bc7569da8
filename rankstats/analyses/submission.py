r"""A new submission to a leaderboard: its rank set, its margin over the record, its curse.

:func:`check_submission` reads a leaderboard (a score cube of the models on it)
and one new submission (a cube holding the new model), and answers the
questions a leaderboard's maintainers ask of a pull request that adds a model:

- **rank set**: where the submission may truly rank among the board's models
  (simultaneous rank confidence sets, :func:`rankstats.stability.leaderboard`
  per task and :func:`rankstats.stability.rank_sets` on the mean over tasks);
- **margin over the record**: its score minus that of the board's best model,
  with the paired test of :func:`rankstats.compare` on each task (and the
  paired bootstrap of the mean over tasks);
- **winner's curse**: where the submission leads, its selection-adjusted score
  (:func:`rankstats.stability.winner_interval`);
- **what the board can resolve**: the smallest margin the paired test detects,
  the items that would detect the observed one, and the smallest difference
  the board orders correctly with probability ``confidence_level``
  (:func:`rankstats.stability.plan`).

:func:`submission_markdown` lays the result out as the markdown report of
``rankstats submission``, headline first; :func:`submission_tables` as the
tables of ``--json`` and ``--csv``.
"""

from __future__ import annotations

import dataclasses
import math
import secrets

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._xr import higher_is_better_of
from ..errors import (
    CoordinateMismatchError,
    CubeError,
    DimensionError,
    InputTypeError,
    OptionError,
    UnknownNameError,
)

__all__ = ["SubmissionCheck", "check_submission", "submission_markdown", "submission_tables"]

_NAME = "check_submission"
#: The name of the board's score when the board has several tasks.
MEAN = "benchmark mean"
_CHECKS = {
    "over": o.optional(o.one_of("samples", "templates", "both")),
    "alpha": o.probability,
    "power": o.probability,
    "confidence_level": o.probability,
    "n_resamples": o.positive_int,
    "seed": o.seed,
}


@dataclasses.dataclass(frozen=True)
class SubmissionCheck:
    """What :func:`check_submission` found; every table is a :class:`pandas.DataFrame`.

    Attributes
    ----------
    model, record : str
        The submission, and the board's best model before it (the record).
    view : str
        What the board ranks on: its one task, or ``"benchmark mean"`` (the
        mean score over its tasks).
    paired : bool
        Whether the submission scores the board's items, so that it is
        compared with them item by item; else the statement is unpaired.
    leads : bool
        Whether the submission has the best score on the board with it.
    board : DataFrame
        One row per model on ``view``: ``score``, ``standard_error``,
        ``rank``, ``rank_low``, ``rank_high``, ``submission`` (bool).
    tasks : DataFrame
        One row per task and model: the same columns, per task.
    margin : DataFrame
        One row per task (and ``view`` when it is the mean): the submission's
        ``score``, the record's ``record_score``, ``margin`` (submission -
        record), ``low``, ``high``, ``test``, ``pvalue``, ``pvalue_adjusted``,
        ``mde``, ``n_items``, ``verdict``.
    winner : DataFrame
        Where the submission leads, one row on ``view``: ``estimate``,
        ``adjusted_estimate``, ``low``, ``high``, ``naive_low``,
        ``naive_high``; empty otherwise.
    resolve : DataFrame
        One row per task (and the mean): ``n_items``, ``n_templates``,
        ``mde``, ``items_needed`` (to detect the observed margin at ``power``),
        ``resolvable_difference`` and ``p_ordered`` (the plan), ``reason``.
    attrs : dict
        The options and what was used (``seed``, ``over``, ``higher_is_better``,
        ``metric``, ``score_kind``, ``points``: 100 for proportions).
    notes : tuple of str
        What the reader needs to know (tasks left out, an unpaired statement).
    """

    model: str
    record: str
    view: str
    paired: bool
    leads: bool
    board: pd.DataFrame
    tasks: pd.DataFrame
    margin: pd.DataFrame
    winner: pd.DataFrame
    resolve: pd.DataFrame
    attrs: dict
    notes: tuple = ()


# --------------------------------------------------------------------------- inputs


def _cube(x, what: str) -> xr.Dataset:
    if not isinstance(x, xr.Dataset) or "score" not in x:
        raise InputTypeError(f"{_NAME}: {what} must be a score cube (a Dataset with 'score')")
    if "sample" not in x["score"].dims or "task" not in x["score"].dims:
        raise DimensionError(
            f"{_NAME}: {what} has no per-item scores (dimensions "
            f"{', '.join(map(str, x['score'].dims))}); import the per-sample results "
            "(e.g. lm-evaluation-harness with --log_samples)"
        )
    return x


def _scored(cube: xr.Dataset, dim: str) -> list[str]:
    """Labels of ``dim`` with at least one score."""
    present = cube["score"].notnull().any([d for d in cube["score"].dims if d != dim])
    return [str(v) for v in cube[dim].values[present.values]]


def _records(cube: xr.Dataset, models: list[str], tasks: list[str]) -> pd.DataFrame:
    """Long records ``model, task, template, sample, score`` keyed by ids, not positions."""
    scores = cube["score"].sel(model=models, task=tasks)
    frame = scores.to_dataframe(name="score").reset_index()
    frame = frame[frame["score"].notna()]
    template = frame["template_id"] if "template_id" in frame else frame["template"]
    sample = frame["sample_id"] if "sample_id" in frame else frame["sample"]
    return pd.DataFrame(
        {
            "model": frame["model"].astype(str),
            "task": frame["task"].astype(str),
            "template": template.astype(str),
            "sample": sample.astype(str),
            "score": frame["score"].astype(float),
        }
    )


def _alike(board: xr.Dataset, new: xr.Dataset) -> dict:
    found = {}
    for name in ("score_kind", "metric"):
        mine, theirs = board.attrs.get(name), new.attrs.get(name)
        if mine is not None and theirs is not None and str(mine) != str(theirs):
            raise CubeError(
                f"{_NAME}: the board's {name} is {mine!r}, the submission's {theirs!r}: "
                "they are not scores of one metric"
            )
        found[name] = str(mine if mine is not None else theirs)
    hib = higher_is_better_of(board, None)
    if hib != higher_is_better_of(new, None):
        raise CubeError(
            f"{_NAME}: higher_is_better is {hib} on the board and {not hib} in the submission"
        )
    found["higher_is_better"] = hib
    return found


def _submission_model(new: xr.Dataset, model, board_models: list[str]) -> str:
    models = _scored(new, "model")
    if model is None:
        if len(models) != 1:
            raise OptionError(
                f"{_NAME}: the submission holds {len(models)} models "
                f"({', '.join(models[:6])}{', ...' if len(models) > 6 else ''}); "
                "name the new one with model="
            )
        model = models[0]
    elif str(model) not in models:
        raise UnknownNameError(
            f"{_NAME}: model {model!r} is not in the submission (models: "
            f"{', '.join(models[:6]) or 'none with scores'})"
        )
    model = str(model)
    if model in board_models:
        raise CoordinateMismatchError(
            f"{_NAME}: model {model!r} is already on the board; a submission adds a model "
            "the board does not have"
        )
    return model


def _combined(board, new, model, kinds):
    """The board and the submission in one cube, tasks checked; and the notes."""
    board_models = _scored(board, "model")
    if not board_models:
        raise CubeError(f"{_NAME}: the board holds no score")
    board_tasks = _scored(board, "task")
    new_tasks = _scored(new.sel(model=[model]), "task")
    missing = [t for t in board_tasks if t not in new_tasks]
    if missing:
        raise CoordinateMismatchError(
            f"{_NAME}: the submission has no score on the board's task"
            f"{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing[:6]))}"
            f"{', ...' if len(missing) > 6 else ''} (the submission's tasks: "
            f"{', '.join(new_tasks[:6]) or 'none'})"
        )
    notes = []
    extra = [t for t in new_tasks if t not in board_tasks]
    if extra:
        notes.append(
            f"the submission's task{'s' if len(extra) > 1 else ''} "
            f"{', '.join(extra)} {'are' if len(extra) > 1 else 'is'} not on the board: left out"
        )
    records = pd.concat(
        [_records(board, board_models, board_tasks), _records(new, [model], board_tasks)]
    )
    from ..cube import from_records

    cube = from_records(
        records,
        score_kind=kinds["score_kind"] if kinds["score_kind"] != "None" else None,
        higher_is_better=kinds["higher_is_better"],
        metric=kinds["metric"],
        source="leaderboard and submission",
    )
    return cube, board_models, board_tasks, notes


def _item_sets(cube, model):
    """Per task, the items (sample ids) ``model`` has a score on."""
    held = cube["score"].sel(model=model).notnull().any("template")
    ids = cube["sample_id"].values
    return [set(ids[t][held.values[t]]) for t in range(cube.sizes["task"])]


# --------------------------------------------------------------------------- statistics


def _better(hib: bool):
    return np.nanargmax if hib else np.nanargmin


def _paired_draws(reps):
    """Board-score draws ``(M, B)`` and estimates ``(M,)``: the task's, or the mean over tasks."""
    draws = reps["avgp"].transpose("model", "task", ...).values.astype(float)
    estimate = reps["avgp_estimate"].transpose("model", "task").values.astype(float)
    # a mean holds the models scored on every task
    return draws.mean(1), estimate.mean(1)


def _bloom(standard_error, alpha, power):
    from scipy import stats

    if not standard_error > 0:
        return math.nan
    return float((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * standard_error)


def _verdict(margin, adjusted, alpha, hib):
    if not np.isfinite(adjusted):
        return "not tested"
    if adjusted >= alpha:
        return "no detectable difference"
    return "submission better" if (margin > 0) == hib else "record better"


def _items_needed(n_items, mde, margin):
    """Items at which the test's MDE (which scales as 1/sqrt(n)) reaches the observed margin."""
    if not (np.isfinite(mde) and np.isfinite(margin) and margin != 0 and n_items > 0):
        return math.nan
    return float(math.ceil(n_items * (mde / abs(margin)) ** 2))


def check_submission(
    board,
    submission,
    *,
    model=None,
    over=None,
    confidence_level=0.95,
    alpha=0.05,
    power=0.8,
    n_resamples=1000,
    seed=None,
):
    r"""Check a new submission against a leaderboard: rank set, margin, winner's curse, resolution.

    Parameters
    ----------
    board : score cube
        The leaderboard's models, with per-item scores (``task`` and
        ``sample`` dimensions).
    submission : score cube
        The new submission's scores, with the board's metric and tasks.
    model : str, optional
        The new model in ``submission`` (needed when it holds several).
    over : {"samples", "templates", "both"}, optional
        What the bootstrap resamples; default ``"samples"`` (the items).
    confidence_level : float, default 0.95
        Level of the rank sets and intervals.
    alpha : float, default 0.05
        Level of the tests and of the minimum detectable effect.
    power : float, default 0.8
        Power at which the minimum detectable effect is computed.
    n_resamples : int, default 1000
        Bootstrap replicates (at least 20).
    seed : None or int
        One seed for every draw (None: drawn from fresh entropy and recorded
        in ``attrs["seed"]``).

    Returns
    -------
    SubmissionCheck
        The rank sets, the margin over the record, the adjusted score where
        the submission leads, and what the board can resolve.

    Raises
    ------
    UnknownNameError
        ``model`` is not in the submission.
    OptionError
        The submission holds several models and ``model`` is not given; an
        option is out of range.
    CoordinateMismatchError
        The model is already on the board; the submission lacks a task of
        the board.
    CubeError, DimensionError, InputTypeError
        The two differ in metric, ``score_kind`` or direction; a cube has no
        per-item scores; an input is no cube.

    Notes
    -----
    **The board's score** is the mean over templates of the mean over items
    (AvgP) on a one-task board, and the mean of that over the tasks (each
    task weighing the same) on a board of several tasks (``view`` is then
    ``"benchmark mean"``).

    **Paired** (the submission scores exactly the items the record scores,
    on every task): one bootstrap of the board with the submission
    (:func:`rankstats.stability.replicates`, every model sharing each draw)
    gives the per-task leaderboard (:func:`rankstats.stability.leaderboard`)
    and the draws of the board's score. On one task the board's rank sets
    are the leaderboard's; on several, :func:`rankstats.stability.rank_sets`
    with the draws' covariance. The margin over the record on each task is
    :func:`rankstats.compare` of the submission with the record (McNemar's
    exact test for binary scores on one template, else the bootstrap test;
    Holm across tasks); on the mean over tasks it is the same percentile
    bootstrap test on the draws of the paired difference. Where the
    submission leads, :func:`rankstats.stability.winner_interval` with the
    draws' covariance gives its selection-adjusted score.

    **Unpaired** (other items): each model's score gets the standard error
    of a mean of its items (per task, the items' mean over templates;
    over tasks, :math:`\sqrt{\sum_t se_t^2} / T`), and rank sets, margin
    (a two-sided z test) and adjusted score use independent estimates with
    those standard errors.

    **Resolution**: ``mde`` is the minimum detectable effect of the margin's
    test (:func:`rankstats.compare`'s; Bloom's for the mean), and
    ``items_needed`` the items at which it would equal the observed margin
    (the MDE scales as :math:`1/\sqrt{n}`). From :func:`rankstats.stability.plan`,
    ``resolvable_difference`` :math:`= z_{\text{confidence\_level}}
    \sqrt{2\sigma^2_\delta}` is the smallest difference that two models'
    scores on the board have in the right order with probability
    ``confidence_level``, and ``p_ordered`` that probability at the observed
    margin; NaN where the plan cannot estimate the error variance (one
    template per task: ``reason`` says so).

    Measured by simulation (400 boards of three models on two tasks of 100
    binary items, the submission as good as the record, 500 resamples;
    tests/test_submission.py): the test of the margin on the mean over
    tasks rejected in 5.0% at ``alpha=0.05``; where the submission led
    (201 boards), the 95% adjusted interval held its true score in 94.0%.

    The record is chosen as the board's best model: a test that accounts
    for that selection would be stricter than the paired test, which takes
    the record as fixed.

    See Also
    --------
    rankstats.compare, rankstats.stability.leaderboard,
    rankstats.stability.rank_sets, rankstats.stability.winner_interval,
    rankstats.stability.plan

    Examples
    --------
    >>> import numpy as np, rankstats
    >>> from rankstats.analyses.submission import check_submission
    >>> rng = np.random.default_rng(0)
    >>> truth = {"a": 0.60, "b": 0.55, "c": 0.40, "new": 0.75}
    >>> records = [{"model": m, "task": "qa", "template": "p", "sample": f"s{i}",
    ...             "score": float(rng.random() < p)}
    ...            for m, p in truth.items() for i in range(200)]
    >>> cube = rankstats.from_records(records)
    >>> board, new = cube.sel(model=["a", "b", "c"]), cube.sel(model=["new"])
    >>> result = check_submission(board, new, seed=0, n_resamples=500)
    >>> result.record, result.leads, result.paired
    ('a', True, True)
    >>> row = result.margin.iloc[0]
    >>> round(float(row["margin"]), 3), row["test"], row["verdict"]
    (0.2, 'mcnemar', 'submission better')
    """
    checked = o.check_options(
        _NAME,
        _CHECKS,
        {
            "over": over,
            "alpha": alpha,
            "power": power,
            "confidence_level": confidence_level,
            "n_resamples": n_resamples,
            "seed": seed,
        },
    )
    if checked["n_resamples"] < 20:
        raise OptionError(
            f"{_NAME}: n_resamples={n_resamples} is too few for rank sets; give at least 20"
        )
    if isinstance(checked["seed"], np.random.Generator):
        raise OptionError(f"{_NAME}: seed must be an int or None, so each step can repeat it")
    seed = secrets.randbits(32) if checked["seed"] is None else int(checked["seed"])
    board, submission = _cube(board, "the board"), _cube(submission, "the submission")
    kinds = _alike(board, submission)
    model = _submission_model(submission, model, _scored(board, "model"))
    cube, board_models, _, notes = _combined(board, submission, model, kinds)
    hib = kinds["higher_is_better"]
    models = [str(m) for m in cube["model"].values]
    task_order = [str(t) for t in cube["task"].values]
    view = task_order[0] if len(task_order) == 1 else MEAN
    over = checked["over"] or "samples"

    point = cube["score"].mean("sample").mean("template")  # AvgP, to name the record
    board_point = point.sel(model=board_models).mean("task")
    record = str(board_models[int(_better(hib)(board_point.values))])
    new_items, record_items = _item_sets(cube, model), _item_sets(cube, record)
    paired = all(a == b for a, b in zip(new_items, record_items, strict=True))
    common = {"confidence_level": checked["confidence_level"], "seed": seed}
    attrs = {
        "model": model,
        "record": record,
        "view": view,
        "paired": paired,
        "over": over,
        "confidence_level": checked["confidence_level"],
        "alpha": checked["alpha"],
        "power": checked["power"],
        "n_resamples": checked["n_resamples"],
        "seed": seed,
        "p_adjust": "holm",
        "higher_is_better": hib,
        "metric": kinds["metric"],
        "score_kind": kinds["score_kind"],
        "points": 100.0 if kinds["score_kind"] in ("binary", "proportion") else 1.0,
        "tasks": len(task_order),
        "models_on_board": len(board_models),
    }
    if paired:
        found = _paired(cube, model, record, models, task_order, view, over, checked, common)
    else:
        shared = ", ".join(
            f"{task} {len(a & b)} of {len(b)}"
            for task, a, b in zip(task_order, new_items, record_items, strict=True)
        )
        notes.append(
            f"the submission's items are not the board's (items shared with the record: "
            f"{shared}): the statement is unpaired, each model's score with the standard "
            "error of a mean of its own items"
        )
        found = _unpaired(cube, model, record, task_order, view, checked, common)
    board_table, task_table, margin, winner = found
    leads = bool(board_table.loc[model, "rank"] == board_table["rank"].min())
    if not leads:
        winner = winner.iloc[0:0]
    resolve = _resolve(cube, margin, checked)
    for table in (board_table, task_table):
        table["submission"] = table.index.get_level_values("model") == model
    return SubmissionCheck(
        model=model,
        record=record,
        view=view,
        paired=paired,
        leads=leads,
        board=board_table,
        tasks=task_table,
        margin=margin,
        winner=winner,
        resolve=resolve,
        attrs=attrs,
        notes=tuple(notes),
    )


def _paired(cube, model, record, models, tasks, view, over, checked, common):
    from ..stability import leaderboard, rank_sets, replicates, winner_interval
    from .compare import _bootstrap_pvalue as bootstrap_pvalue
    from .compare import compare

    reps = replicates(
        cube,
        checked["n_resamples"],
        over,
        seed=common["seed"],
        statistics=("avgp", "rank"),
    )
    per_task = leaderboard(reps, confidence_level=checked["confidence_level"])
    task_table = (
        per_task[["score", "rank", "rank_low", "rank_high"]]
        .to_dataframe()
        .reorder_levels(["task", "model"])
        .sort_index()
    )
    replicate = next(d for d in reps["avgp"].dims if d not in ("model", "task"))
    standard_errors = reps["avgp"].std(replicate, ddof=1).transpose("task", "model")
    task_table["standard_error"] = standard_errors.to_series().reorder_levels(["task", "model"])
    draws, estimate = _paired_draws(reps)
    present = np.isfinite(estimate)
    covariance = np.cov(draws[present])
    labels = [m for m, p in zip(models, present, strict=True) if p]
    hib = bool(higher_is_better_of(cube, None))
    if len(tasks) == 1:
        board_table = task_table.xs(tasks[0], level="task").copy()
    else:
        sets = rank_sets(
            pd.Series(estimate[present], index=pd.Index(labels, name="model")),
            covariance=pd.DataFrame(covariance, index=labels, columns=labels),
            higher_is_better=hib,
            n_resamples=checked["n_resamples"],
            **common,
        )
        board_table = sets[["estimate", "standard_error", "rank", "rank_low", "rank_high"]]
        board_table = board_table.to_dataframe().rename(columns={"estimate": "score"})
    board_table = board_table[["score", "standard_error", "rank", "rank_low", "rank_high"]]
    compared = compare(
        cube,
        between={"model": (model, record)},
        alpha=checked["alpha"],
        power=checked["power"],
        n_resamples=checked["n_resamples"],
        **common,
    )
    margin = pd.DataFrame(
        {
            "score": compared["score_a"].values,
            "record_score": compared["score_b"].values,
            "margin": compared["difference"].values,
            "low": compared["low"].values,
            "high": compared["high"].values,
            "test": compared["test"].values.astype(str),
            "pvalue": compared["pvalue"].values,
            "pvalue_adjusted": compared["pvalue_adjusted"].values,
            "mde": compared["mde"].values,
            "n_items": compared["n_items"].values.astype(float),
        },
        index=pd.Index([str(t) for t in compared["task"].values], name="task"),
    )
    if len(tasks) > 1:
        j, k = models.index(model), models.index(record)
        difference = draws[j] - draws[k]
        tail = (1 - checked["confidence_level"]) / 2
        p = float(bootstrap_pvalue(difference))
        margin.loc[MEAN] = {
            "score": estimate[j],
            "record_score": estimate[k],
            "margin": estimate[j] - estimate[k],
            "low": float(np.quantile(difference, tail)),
            "high": float(np.quantile(difference, 1 - tail)),
            "test": "bootstrap",
            "pvalue": p,
            "pvalue_adjusted": p,
            "mde": _bloom(float(np.std(difference, ddof=1)), checked["alpha"], checked["power"]),
            "n_items": float(margin["n_items"].sum()),
        }
    margin["verdict"] = [
        _verdict(m, p, checked["alpha"], hib)
        for m, p in zip(margin["margin"], margin["pvalue_adjusted"], strict=True)
    ]
    adjusted = winner_interval(
        pd.Series(estimate[present], index=labels),
        covariance=pd.DataFrame(covariance, index=labels, columns=labels),
        confidence_level=checked["confidence_level"],
        higher_is_better=hib,
    )
    winner = _winner_table(adjusted, view)
    return board_table, task_table, margin, winner


def _winner_table(adjusted, view):
    names = ("estimate", "adjusted_estimate", "low", "high", "naive_low", "naive_high")
    return pd.DataFrame(
        {"model": [str(adjusted["model"].values[0])]}
        | {name: [float(adjusted[name].values[0])] for name in names},
        index=pd.Index([view], name="view"),
    )


def _unpaired(cube, model, record, tasks, view, checked, common):
    from scipy import stats

    from ..stability import rank_sets, winner_interval

    hib = bool(higher_is_better_of(cube, None))
    items = cube["score"].mean("template")  # each item's mean over templates
    count = items.notnull().sum("sample")
    estimate = cube["score"].mean("sample").mean("template")  # AvgP
    spread = items.std("sample", ddof=1)
    standard_error = (spread / np.sqrt(count)).transpose("model", "task")
    estimate = estimate.transpose("model", "task")
    per_task = rank_sets(
        estimate,
        standard_errors=standard_error,
        higher_is_better=hib,
        n_resamples=checked["n_resamples"],
        nan_policy="omit",
        objects="model",
        **common,
    )
    task_table = (
        per_task[["estimate", "standard_error", "rank", "rank_low", "rank_high"]]
        .to_dataframe()
        .rename(columns={"estimate": "score"})
        .reorder_levels(["task", "model"])
        .sort_index()
    )
    mean = estimate.mean("task", skipna=False).to_series()
    mean_se = (np.sqrt((standard_error**2).sum("task", skipna=False)) / len(tasks)).to_series()
    present = mean.notna() & mean_se.notna()
    if len(tasks) == 1:
        board_table = task_table.xs(tasks[0], level="task").copy()
    else:
        sets = rank_sets(
            mean[present].rename_axis("model"),
            standard_errors=mean_se[present],
            higher_is_better=hib,
            n_resamples=checked["n_resamples"],
            **common,
        )
        board_table = sets[["estimate", "standard_error", "rank", "rank_low", "rank_high"]]
        board_table = board_table.to_dataframe().rename(columns={"estimate": "score"})
    board_table = board_table[["score", "standard_error", "rank", "rank_low", "rank_high"]]
    z_interval = stats.norm.ppf(0.5 + checked["confidence_level"] / 2)
    rows = {}
    views = [*tasks, MEAN] if len(tasks) > 1 else tasks
    for name in views:
        if name == MEAN:
            a, b = mean[model], mean[record]
            se = math.hypot(mean_se[model], mean_se[record])
            n = float(count.sel(model=model).sum())
        else:
            a = float(estimate.sel(model=model, task=name))
            b = float(estimate.sel(model=record, task=name))
            se = math.hypot(
                float(standard_error.sel(model=model, task=name)),
                float(standard_error.sel(model=record, task=name)),
            )
            n = float(count.sel(model=model, task=name))
        difference = a - b
        p = float(2 * stats.norm.sf(abs(difference) / se)) if se > 0 else math.nan
        rows[name] = {
            "score": a,
            "record_score": b,
            "margin": difference,
            "low": difference - z_interval * se,
            "high": difference + z_interval * se,
            "test": "z (unpaired)",
            "pvalue": p,
            "pvalue_adjusted": p,
            "mde": _bloom(se, checked["alpha"], checked["power"]),
            "n_items": n,
        }
    margin = pd.DataFrame.from_dict(rows, orient="index").rename_axis("task")
    if len(tasks) > 1:  # Holm across the tasks, as compare adjusts
        from .._kernels.multitest import adjust_last

        margin.loc[tasks, "pvalue_adjusted"] = adjust_last(
            margin.loc[tasks, "pvalue"].to_numpy(), "holm"
        )
    margin["verdict"] = [
        _verdict(m, p, checked["alpha"], hib)
        for m, p in zip(margin["margin"], margin["pvalue_adjusted"], strict=True)
    ]
    board_view = board_table.dropna(subset=["score"])
    adjusted = winner_interval(
        board_view["score"],
        board_view["standard_error"],
        confidence_level=checked["confidence_level"],
        higher_is_better=hib,
    )
    return board_table, task_table, margin, _winner_table(adjusted, view)


def _resolve(cube, margin, checked):
    from scipy import stats

    from ..stability import plan

    differences = np.abs(margin["margin"].to_numpy(dtype=float))
    usable = np.unique(differences[np.isfinite(differences) & (differences > 0)])
    planned = plan(cube, differences=usable if usable.size else [1.0])
    z = stats.norm.ppf(checked["confidence_level"])
    rows = {}
    for name in margin.index:
        if name == MEAN:
            error = float(planned["overall_relative_error_now"])
            ordered = planned["overall_p_ordered_now"]
            n_templates = float(planned["n_templates_now"].mean())
            reason = ""
        else:
            one = planned.sel(task=name)
            error = float(one["relative_error_now"])
            ordered = one["p_ordered_now"]
            n_templates = float(one["n_templates_now"])
            reason = str(one["reason"].item())
        difference = abs(float(margin.loc[name, "margin"]))
        p_ordered = (
            float(ordered.sel(difference=difference, method="nearest"))
            if usable.size and difference > 0
            else math.nan
        )
        row = margin.loc[name]
        rows[name] = {
            "n_items": float(row["n_items"]),
            "n_templates": n_templates,
            "mde": float(row["mde"]),
            "items_needed": _items_needed(row["n_items"], row["mde"], row["margin"]),
            "resolvable_difference": float(z * math.sqrt(2 * error))
            if np.isfinite(error) and error >= 0
            else math.nan,
            "p_ordered": p_ordered,
            "reason": reason,
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("task")


# --------------------------------------------------------------------------- layout


def submission_tables(result: SubmissionCheck) -> dict[str, pd.DataFrame]:
    """The tables of a :class:`SubmissionCheck`: ``board``, ``tasks``, ``margin``, ``winner``, ``resolve``."""  # noqa: E501
    return {
        "board": result.board,
        "tasks": result.tasks,
        "margin": result.margin,
        "winner": result.winner,
        "resolve": result.resolve,
    }


def _score(value, points) -> str:
    value = float(value)
    if not np.isfinite(value):
        return "–"
    return f"{value * points:.1f}" if points != 1 else f"{value:.4g}"


def _signed(value, points) -> str:
    value = float(value)
    if not np.isfinite(value):
        return "–"
    return f"{value * points:+.1f}" if points != 1 else f"{value:+.4g}"


def _p(value) -> str:
    value = float(value)
    if not np.isfinite(value):
        return "–"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _set(row) -> str:
    low, high = row["rank_low"], row["rank_high"]
    if not (np.isfinite(low) and np.isfinite(high)):
        return "–"
    return f"[{int(low)}, {int(high)}]"


def _rank(value) -> str:
    return f"{float(value):g}" if np.isfinite(value) else "–"


def _cell(value) -> str:
    return str(value).replace("|", "\\|")


def submission_markdown(result: SubmissionCheck) -> str:
    """The markdown report of a :class:`SubmissionCheck`: a headline verdict, then the sections.

    Examples
    --------
    >>> import numpy as np, rankstats
    >>> from rankstats.analyses.submission import check_submission, submission_markdown
    >>> rng = np.random.default_rng(0)
    >>> records = [{"model": m, "task": "qa", "template": "p", "sample": f"s{i}",
    ...             "score": float(rng.random() < p)}
    ...            for m, p in {"a": 0.6, "b": 0.5, "new": 0.62}.items() for i in range(100)]
    >>> cube = rankstats.from_records(records)
    >>> text = submission_markdown(check_submission(cube.sel(model=["a", "b"]),
    ...                                             cube.sel(model=["new"]), seed=0))
    >>> print(text.splitlines()[0])
    **new**: rank set [1, 3] of 3 on qa; beats the record a by +5.0 points (paired p = 0.576, McNemar); adjusted score 54.5 [41.1, 65.8]
    """  # noqa: E501
    a = result.attrs
    points = a["points"]
    unit = " points" if points != 1 else ""
    board = result.board
    mine = board.loc[result.model]
    m = len(board.dropna(subset=["score"]))
    head = result.margin.loc[result.view]
    word = (
        "beats"
        if head["margin"] != 0 and (head["margin"] > 0) == a["higher_is_better"]
        else "trails"
    )
    shown = abs(float(head["margin"])) if word == "trails" else float(head["margin"])
    sign = "" if word == "trails" else "+"
    test = {"mcnemar": "McNemar", "bootstrap": "bootstrap test", "z (unpaired)": "z test"}.get(
        head["test"], str(head["test"])
    )
    headline = (
        f"**{result.model}**: rank set {_set(mine)} of {m} on {result.view}; {word} the record "
        f"{result.record} by {sign}{_score(shown, points)}{unit} "
        f"({'paired ' if result.paired else 'unpaired '}p = {_p(head['pvalue'])}, {test})"
    )
    if result.leads and not result.winner.empty:
        w = result.winner.iloc[0]
        headline += (
            f"; adjusted score {_score(w['adjusted_estimate'], points)} "
            f"[{_score(w['low'], points)}, {_score(w['high'], points)}]"
        )
    level = f"{a['confidence_level']:.0%}"
    lines = [headline, ""]
    for note in result.notes:
        lines.append(f"> Note: {note}.")
    if result.notes:
        lines.append("")
    lines += [
        f"Metric {a['metric']} ({a['score_kind']}, "
        f"{'higher' if a['higher_is_better'] else 'lower'} is better"
        f"{', shown ×100' if points != 1 else ''}); {a['models_on_board']} "
        f"model{'s' if a['models_on_board'] > 1 else ''} on the board, "
        f"{a['tasks']} task{'s' if a['tasks'] > 1 else ''}; {a['n_resamples']} bootstrap "
        f"resamples over {a['over']}, seed {a['seed']}.",
        "",
        f"## Rank set ({level} simultaneous, on {result.view})",
        "",
        "| rank | model | score | standard error | rank set |",
        "|---|---|---|---|---|",
    ]
    for name, row in board.sort_values("rank").iterrows():
        label = f"**{name}** (new)" if name == result.model else _cell(name)
        lines.append(
            f"| {_rank(row['rank'])} | {label} | "
            f"{_score(row['score'], points)} | {_score(row['standard_error'], points)} | "
            f"{_set(row)} |"
        )
    if a["tasks"] > 1:
        lines += ["", "Per task, the submission:", "", "| task | score | rank | rank set |"]
        lines.append("|---|---|---|---|")
        for (task, name), row in result.tasks.iterrows():
            if name == result.model:
                lines.append(
                    f"| {_cell(task)} | {_score(row['score'], points)} | "
                    f"{_rank(row['rank'])} | {_set(row)} |"
                )
    lines += [
        "",
        f"## Margin over the record ({result.record})",
        "",
        "| task | submission | record | margin [interval] | test | p | p adjusted | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task, row in result.margin.iterrows():
        lines.append(
            f"| {_cell(task)} | {_score(row['score'], points)} | "
            f"{_score(row['record_score'], points)} | {_signed(row['margin'], points)} "
            f"[{_signed(row['low'], points)}, {_signed(row['high'], points)}] | {row['test']} | "
            f"{_p(row['pvalue'])} | {_p(row['pvalue_adjusted'])} | {row['verdict']} |"
        )
    lines += [
        "",
        f"Intervals at {level}; the tasks' p-values adjusted by Holm across tasks; verdicts "
        f"at alpha {a['alpha']:g}. "
        + (
            "Paired: the submission and the record scored on the same items."
            if result.paired
            else "Unpaired: the submission's items are not the board's."
        )
        + " The record is the board's best model, taken as fixed.",
        "",
        "## Winner's curse",
        "",
    ]
    if result.leads and not result.winner.empty:
        w = result.winner.iloc[0]
        lines.append(
            f"The submission leads with {_score(w['estimate'], points)}; the best score on a "
            "board is biased upwards by its selection. Selection-adjusted (conditional "
            f"inference on winners): {_score(w['adjusted_estimate'], points)}, {level} interval "
            f"[{_score(w['low'], points)}, {_score(w['high'], points)}] (unadjusted "
            f"[{_score(w['naive_low'], points)}, {_score(w['naive_high'], points)}])."
        )
    else:
        lines.append("The submission does not lead the board: no selection to adjust for.")
    lines += [
        "",
        "## What the board can resolve",
        "",
        "| task | items | templates | MDE | items to detect this margin | "
        f"resolvable difference ({level}) | P(ordered) at this margin |",
        "|---|---|---|---|---|---|---|",
    ]
    for task, row in result.resolve.iterrows():
        needed = row["items_needed"]
        lines.append(
            f"| {_cell(task)} | {int(row['n_items'])} | {row['n_templates']:g} | "
            f"{_score(row['mde'], points)} | {int(needed) if np.isfinite(needed) else '–'} | "
            f"{_score(row['resolvable_difference'], points)} | "
            f"{_p(row['p_ordered']) if np.isfinite(row['p_ordered']) else '–'} |"
        )
    lines += [
        "",
        f"MDE: the smallest margin the test detects with power {a['power']:g} at alpha "
        f"{a['alpha']:g}; items to detect this margin: where the MDE (which shrinks as "
        "1/sqrt(items)) reaches the observed one. Resolvable difference: the smallest gap "
        f"two models' scores on this board have in the right order with probability "
        f"{a['confidence_level']:g}, from the variance components (rankstats plan).",
    ]
    unresolved = result.resolve[result.resolve["resolvable_difference"].isna()]
    reasons = {str(r) for r in unresolved["reason"] if r}
    lines += [f"Not planned: {reason}." for reason in sorted(reasons)]
    return "\n".join(lines)
