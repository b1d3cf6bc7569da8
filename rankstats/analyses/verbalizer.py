"""Instruction following under verbalizer manipulation (Li et al. 2023), read from a cube.

A cube whose templates carry the coordinates ``verbalizer_group`` (natural,
neutral, unnatural), ``verbalizer`` (``golden``, ``1|0``, ``foo|bar``,
``flipped golden``, ...) and optionally ``prompting`` (``direct`` or ``cot``)
holds one template per verbalizer, as :mod:`rankstats_collectors.prompts.verbalizer`
builds them. This module reads those coordinates: accuracy per group, per
verbalizer and per task; the gap between natural and unnatural instructions;
exact binomial tests against random guessing with the share of unparseable
answers; direct against chain-of-thought prompting on the flipped golden
verbalizers; and the shape of each model family's curve across sizes.

Examples
--------
>>> import rankstats
>>> from rankstats.analyses.verbalizer import verbalizer_analysis
>>> rows = [{"model": m, "task": "sst2", "template": f"{g}:{v}", "sample": s,
...          "verbalizer_group": g, "verbalizer": v, "prompting": "direct",
...          "score": float(s < right)}
...         for m, rights in {"small": (9, 2), "large": (10, 7)}.items()
...         for (g, v), right in zip([("natural", "golden"), ("unnatural", "flipped golden")],
...                                  rights)
...         for s in range(10)]
>>> cube = rankstats.from_records(rows, template_attrs=("verbalizer_group", "verbalizer",
...                                                     "prompting"))
>>> result = verbalizer_analysis(cube)
>>> result.group_accuracy.sel(group="unnatural").values.tolist()
[0.2, 0.7]
>>> result.natural_unnatural_gap.values.tolist()
[0.7, 0.3]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .._kernels import verbalizer as _kv
from ..cube import template_scores
from ..errors import CubeError, DimensionError, ScoreValueError
from ..results import BinomialTestResult
from ..statistics.binomial import binomial_test
from ..statistics.multitest import adjust_pvalues
from ..statistics.significance import mcnemar

__all__ = [
    "CONDITIONS",
    "GROUPS",
    "SHAPES",
    "BinomialTestResult",
    "binomial_test",
    "chance_test",
    "cot_comparison",
    "curve_shapes",
    "group_accuracy",
    "report_tables",
    "verbalizer_accuracy",
    "verbalizer_analysis",
]

GROUPS = ("natural", "neutral", "unnatural")
SHAPES = _kv.SHAPES
CONDITIONS = ("natural golden, direct", "flipped golden, direct", "flipped golden, CoT")
_REQUIRED = ("verbalizer_group", "verbalizer")


def _check_cube(cube) -> xr.Dataset:
    if not isinstance(cube, xr.Dataset) or "score" not in cube:
        raise DimensionError(
            "verbalizer analyses need a score cube (an xarray.Dataset with 'score')"
        )
    missing = [name for name in _REQUIRED if name not in cube.coords]
    if missing:
        raise DimensionError(
            f"the cube lacks the template coordinate(s) {missing}: build "
            "its templates with rankstats_collectors.prompts.verbalizer"
        )
    if "unparseable" in cube:
        wrongly = ((cube["unparseable"] == 1) & (cube["score"] > 0)).transpose(
            "model", "task", "template", ...
        )
        if bool(wrongly.any()):
            where = {
                d: i for d, i in zip(wrongly.dims, np.argwhere(wrongly.values)[0], strict=True)
            }
            ids = cube["template_id"].transpose("task", "template").values
            raise ScoreValueError(
                f"{int(wrongly.sum())} unparseable answer(s) are scored as correct, first at "
                f"model={cube['model'].values[where['model']]!r}, "
                f"task={cube['task'].values[where['task']]!r}, "
                f"template={ids[where['task'], where['template']]!r}"
            )
    return cube


def _template_coord(cube, name, default=None) -> xr.Variable:
    if name not in cube.coords:
        return xr.full_like(cube["template_id"], default, dtype=object).variable
    return cube[name].astype(str).variable


def _plain(array: xr.DataArray) -> xr.DataArray:
    """``array`` without the coordinates that lie along ``template`` or ``sample``."""
    return array.drop_vars(
        [n for n, c in array.coords.items() if {"template", "sample"} & set(c.dims)]
    )


def _groups_of(cube) -> np.ndarray:
    present = set(np.unique(cube["verbalizer_group"].values.astype(str))) - {""}
    ordered = [g for g in GROUPS if g in present] + sorted(present - set(GROUPS))
    return np.array(ordered, dtype=object)


def _direct(cube) -> xr.DataArray:
    return xr.DataArray(_template_coord(cube, "prompting", "direct")) == "direct"


def _group_members(cube) -> xr.DataArray:
    """``(task, template, group)``: the direct-prompting templates of each group."""
    groups = _groups_of(cube)
    labels = xr.DataArray(groups, dims="group", coords={"group": groups})
    return (xr.DataArray(_template_coord(cube, "verbalizer_group")) == labels) & _direct(cube)


def _verbalizer_members(cube) -> xr.DataArray:
    """``(task, template, verbalizer)``: the direct templates of each (group, verbalizer)."""
    group = cube["verbalizer_group"].transpose("task", "template").values.astype(str)
    name = cube["verbalizer"].transpose("task", "template").values.astype(str)
    direct = _direct(cube).transpose("task", "template").values
    real = (group != "") & direct
    pairs = pd.DataFrame({"group": group[real], "name": name[real]}).drop_duplicates()
    order = {g: i for i, g in enumerate(_groups_of(cube))}
    pairs = pairs.assign(_order=pairs["group"].map(order)).sort_values("_order", kind="stable")
    repeated = pairs["name"].duplicated(keep=False)
    labels = np.where(repeated, pairs["group"] + " " + pairs["name"], pairs["name"])
    labels = np.asarray(labels, dtype=object)
    coords = {
        "verbalizer": labels,
        "verbalizer_group": ("verbalizer", pairs["group"].to_numpy(dtype=object)),
    }
    want_group = xr.DataArray(
        pairs["group"].to_numpy(dtype=object), dims="verbalizer", coords=coords
    )
    want_name = xr.DataArray(pairs["name"].to_numpy(dtype=object), dims="verbalizer", coords=coords)
    return (
        (xr.DataArray(_template_coord(cube, "verbalizer_group")) == want_group)
        & (xr.DataArray(_template_coord(cube, "verbalizer")) == want_name)
        & _direct(cube)
    )


def _mean_of_cells(scores: xr.DataArray, members: xr.DataArray, over) -> xr.DataArray:
    """Mean of the per-template scores of the member templates, over the dims ``over``."""
    scores = _plain(scores)
    members = _plain(members)
    observed = scores.notnull()
    total = xr.dot(scores.fillna(0.0), members.astype(float), dim=list(over))
    count = xr.dot(observed.astype(float), members.astype(float), dim=list(over))
    return total / count.where(count > 0)


def group_accuracy(cube: xr.Dataset, *, by_task: bool = False) -> xr.DataArray:
    """Each model's accuracy in each verbalizer group (direct prompting).

    Parameters
    ----------
    cube : xarray.Dataset
        A score cube with the template coordinates ``verbalizer_group`` and
        ``verbalizer`` (``prompting`` optional: without it every template is
        direct).
    by_task : bool, default False
        Keep the ``task`` dimension (one accuracy per dataset).

    Returns
    -------
    xarray.DataArray
        ``(model, group)`` or ``(model, task, group)``: the mean of the
        per-template accuracies of the group's templates (the paper's average
        over datasets and verbalizers).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import group_accuracy
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": v, "verbalizer_group": g,
    ...       "verbalizer": v, "score": s}
    ...      for g, v, s in [("natural", "golden", 0.9), ("natural", "1|0", 0.7),
    ...                      ("unnatural", "flipped golden", 0.2)]],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> group_accuracy(cube).values.round(3).tolist()
    [[0.8, 0.2]]
    """
    cube = _check_cube(cube)
    over = ("template",) if by_task else ("task", "template")
    return _mean_of_cells(template_scores(cube), _group_members(cube), over).rename(
        "group_accuracy"
    )


def verbalizer_accuracy(cube: xr.Dataset, *, by_task: bool = False) -> xr.DataArray:
    """Each model's accuracy under each verbalizer (direct prompting), averaged over tasks.

    Returns ``(model, verbalizer)`` (or ``(model, task, verbalizer)``), the
    ``verbalizer`` labels being the verbalizer names (prefixed with their
    group where one name occurs in two groups), with a ``verbalizer_group``
    coordinate along them.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_accuracy
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": t, "template": v, "verbalizer_group": g,
    ...       "verbalizer": v, "score": s}
    ...      for t, scores in {"a": (0.9, 0.1), "b": (0.7, 0.5)}.items()
    ...      for (g, v), s in zip([("natural", "1|0"), ("unnatural", "0|1")], scores)],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> result = verbalizer_accuracy(cube)
    >>> result.verbalizer.values.tolist(), result.values.round(3).tolist()
    (['1|0', '0|1'], [[0.8, 0.3]])
    """
    cube = _check_cube(cube)
    over = ("template",) if by_task else ("task", "template")
    return _mean_of_cells(template_scores(cube), _verbalizer_members(cube), over).rename(
        "verbalizer_accuracy"
    )


def _chance_levels(cube, chance) -> xr.DataArray:
    if chance is not None:
        return xr.DataArray(np.full(cube.sizes["task"], float(chance)), dims="task")
    if "n_labels" in cube.coords:
        labels = cube["n_labels"].astype(float)
        if bool((labels < 2).any()) or bool(labels.isnull().any()):
            raise CubeError(
                f"the task coordinate 'n_labels' must be 2 or more, not {labels.values.tolist()}"
            )
        return _plain(1.0 / labels)
    return xr.DataArray(np.full(cube.sizes["task"], 0.5), dims="task")


def chance_test(
    cube: xr.Dataset,
    *,
    chance: float | None = None,
    alternative: str = "two-sided",
    p_adjust: str = "holm",
    alpha: float = 0.05,
) -> xr.Dataset:
    """Each model against random guessing, per verbalizer group (and per task).

    Parameters
    ----------
    cube : xarray.Dataset
        A binary cube with a ``sample`` dimension and the verbalizer
        coordinates; an ``unparseable(model, task, template, sample)``
        variable (1 = the answer named no label) adds the unparseable shares.
    chance : float, optional
        The accuracy of random guessing. Default: 1 / the task coordinate
        ``n_labels``, else 0.5.
    alternative : {"two-sided", "greater", "less"}
        Of the exact binomial test (:func:`binomial_test`).
    p_adjust : {"holm", "bh", "by", "bonferroni", "none"}
        Multiplicity adjustment over all models and groups
        (:func:`rankstats.adjust_pvalues`).
    alpha : float, default 0.05
        Level of the verdict.

    Returns
    -------
    xarray.Dataset
        Per ``(model, group)``: ``correct``, ``n`` (answers, unparseable ones
        included as wrong), ``accuracy``, ``chance``, ``pvalue``,
        ``pvalue_adjusted``, ``verdict`` ("above chance", "below chance" or
        "not distinguishable" at ``alpha`` after adjustment),
        ``unparseable`` (count) and ``unparseable_share``; the same per task
        with the suffix ``_by_task`` (unadjusted).

    Raises
    ------
    CubeError
        The tasks of one group have different chance levels (the pooled count
        is then not binomial; read the ``_by_task`` tests instead, or pass
        ``chance``).

    Notes
    -----
    Counts pool every sample of every direct-prompting template of the group
    across tasks. The test treats the answers as independent; the same
    samples recur under each verbalizer of a group, so the pooled p-values
    are optimistic when answers to one sample are correlated across
    verbalizers. An unparseable answer counts as wrong, never as correct.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import chance_test
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": "golden", "sample": s,
    ...       "verbalizer_group": "natural", "verbalizer": "golden",
    ...       "score": float(s < 16)} for s in range(20)],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> test = chance_test(cube).sel(model="m", group="natural")
    >>> int(test.correct), int(test.n), round(float(test.pvalue), 4), str(test.verdict.item())
    (16, 20, 0.0118, 'above chance')
    """
    cube = _check_cube(cube)
    if "sample" not in cube["score"].dims:
        raise DimensionError("chance_test counts answers: the cube needs a 'sample' dimension")
    members = _plain(_group_members(cube)).astype(float)
    score = _plain(cube["score"])
    observed = score.notnull().astype(float)
    correct_t = xr.dot(score.fillna(0.0), members, dim=["template", "sample"])
    n_t = xr.dot(observed, members, dim=["template", "sample"])
    levels = _chance_levels(cube, chance)
    used = n_t > 0
    low = levels.where(used).min("task")
    high = levels.where(used).max("task")
    if bool((np.abs(high - low) > 1e-12).any()):
        raise CubeError(
            "the tasks of one verbalizer group have different chance levels "
            f"({sorted(set(levels.values.round(6).tolist()))}); pass chance= or "
            "read the per-task tests"
        )
    correct, n = correct_t.sum("task"), n_t.sum("task")
    overall = binomial_test(correct, n, low.fillna(0.5), alternative=alternative)
    by_task = binomial_test(correct_t, n_t, levels, alternative=alternative)
    adjusted = adjust_pvalues(overall["pvalue"], p_adjust=p_adjust)
    accuracy = overall["statistic"]
    verdict = xr.where(
        adjusted < alpha,
        xr.where(accuracy > low, "above chance", "below chance"),
        "not distinguishable",
    )
    verdict = verdict.where(n > 0, "")
    out = {
        "correct": correct,
        "n": n,
        "accuracy": accuracy,
        "chance": low,
        "pvalue": overall["pvalue"],
        "pvalue_adjusted": adjusted,
        "verdict": verdict,
        "correct_by_task": correct_t,
        "n_by_task": n_t,
        "accuracy_by_task": by_task["statistic"],
        "pvalue_by_task": by_task["pvalue"],
    }
    if "unparseable" in cube:
        flags = _plain(cube["unparseable"]).fillna(0.0)
        bad_t = xr.dot(flags, members, dim=["template", "sample"])
        out.update(
            {
                "unparseable": bad_t.sum("task"),
                "unparseable_share": bad_t.sum("task") / n.where(n > 0),
                "unparseable_by_task": bad_t,
                "unparseable_share_by_task": bad_t / n_t.where(n_t > 0),
            }
        )
    return xr.Dataset(
        out,
        attrs={
            "statistic": "chance_test",
            "alternative": alternative,
            "p_adjust": p_adjust,
            "alpha": alpha,
        },
    )


def _condition_members(cube, natural: str, flipped: str) -> xr.DataArray:
    group = xr.DataArray(_template_coord(cube, "verbalizer_group"))
    name = xr.DataArray(_template_coord(cube, "verbalizer"))
    prompting = xr.DataArray(_template_coord(cube, "prompting", "direct"))
    masks = [
        (group == "natural") & (name == natural) & (prompting == "direct"),
        (group == "unnatural") & (name == flipped) & (prompting == "direct"),
        (group == "unnatural") & (name == flipped) & (prompting == "cot"),
    ]
    labels = np.array(CONDITIONS, dtype=object)
    return xr.concat(
        masks, dim=xr.DataArray(labels, dims="condition", coords={"condition": labels})
    )


def cot_comparison(
    cube: xr.Dataset, *, natural: str = "golden", flipped: str = "flipped golden"
) -> xr.Dataset:
    """Direct against zero-shot chain-of-thought prompting on the flipped golden verbalizers.

    Parameters
    ----------
    cube : xarray.Dataset
        A cube with the verbalizer coordinates and ``prompting`` (``direct``
        and ``cot`` templates).
    natural, flipped : str
        The names of the natural golden verbalizer and of its flipped
        counterpart.

    Returns
    -------
    xarray.Dataset
        ``accuracy(model, condition)`` and ``accuracy_by_task(model, task,
        condition)`` for the conditions "natural golden, direct", "flipped
        golden, direct" and "flipped golden, CoT" (Li et al. 2023, figures 4
        and 5); with a ``sample`` dimension, McNemar's exact test of flipped
        direct (x) against flipped CoT (y) per model over every (task,
        sample) both answer: ``mcnemar_statistic``, ``mcnemar_pvalue``,
        ``direct_only`` (b: right only directly), ``cot_only`` (c),
        ``n_items`` and ``n_items_dropped`` (the items answered under one of
        the two only: left out of the test by pairwise deletion).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import cot_comparison
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": f"{v}:{p}", "sample": s,
    ...       "verbalizer_group": g, "verbalizer": v, "prompting": p,
    ...       "score": float(s < right)}
    ...      for g, v, p, right in [("natural", "golden", "direct", 9),
    ...                             ("unnatural", "flipped golden", "direct", 2),
    ...                             ("unnatural", "flipped golden", "cot", 6)]
    ...      for s in range(10)],
    ...     template_attrs=("verbalizer_group", "verbalizer", "prompting"))
    >>> result = cot_comparison(cube)
    >>> result.accuracy.values.round(2).tolist()
    [[0.9, 0.2, 0.6]]
    >>> one = result.sel(model="m")
    >>> int(one.cot_only), round(float(one.mcnemar_pvalue), 4)
    (4, 0.125)
    """
    cube = _check_cube(cube)
    members = _condition_members(cube, natural, flipped)
    per_task = members.sum("template")
    if bool((per_task > 1).any()):
        task, condition = np.argwhere(per_task.transpose("task", "condition").values > 1)[0]
        raise CubeError(
            f"task {cube['task'].values[task]!r} has several templates for "
            f"{CONDITIONS[condition]!r}"
        )
    scores = template_scores(cube)
    out = {
        "accuracy": _mean_of_cells(scores, members, ("task", "template")),
        "accuracy_by_task": _mean_of_cells(scores, members, ("template",)),
    }
    if "sample" in cube["score"].dims:
        score = _plain(cube["score"])
        picked = score.where(_plain(members)).sum("template", min_count=1)
        items = picked.stack(item=("task", "sample")).reset_index("item", drop=True)
        test = mcnemar(
            items.sel(condition=CONDITIONS[1], drop=True),
            items.sel(condition=CONDITIONS[2], drop=True),
            dim="item",
            nan_policy="omit",
        )
        out.update(
            {
                "mcnemar_statistic": test["statistic"],
                "mcnemar_pvalue": test["pvalue"],
                "direct_only": test["b"],
                "cot_only": test["c"],
                "n_items": test["n_samples"],
                "n_items_dropped": test["n_dropped"],
            }
        )
    return xr.Dataset(
        out, attrs={"statistic": "cot_comparison", "natural": natural, "flipped": flipped}
    )


def curve_shapes(
    values: xr.DataArray,
    cube: xr.Dataset,
    *,
    family: str = "family",
    size: str = "parameters",
    tolerance: float = 0.02,
) -> xr.Dataset:
    """The shape of each model family's curve across model sizes.

    Parameters
    ----------
    values : xarray.DataArray
        Anything with a ``model`` dimension (e.g. :func:`group_accuracy`).
    cube : xarray.Dataset
        The cube (or any object) whose model coordinates ``family`` and
        ``size`` say each model's family and size; models without a family
        (``""``) or size (NaN) are left out.
    family, size : str
        The names of those coordinates. The size may be an order (1, 2, 3)
        where true sizes are unknown.
    tolerance : float, default 0.02
        Differences up to this are no change (2 accuracy points).

    Returns
    -------
    xarray.Dataset
        ``shape(model_family, ...)``: one of :data:`SHAPES` ("" for a family
        with no value); ``curve(model_family, position, ...)`` the values in
        size order with ``curve_model`` and ``curve_size``.

    Notes
    -----
    With a_1, ..., a_m a family's values from the smallest model to the
    largest and t the tolerance, the rule, in order:

    - *flat* when max − min ≤ t;
    - *U-shaped* when some interior a_j lies more than t below both a_1 and
      a_m; *inverted U-shaped* when one lies more than t above both;
      *non-monotonic* when both happen;
    - *scaling* when a_m − a_1 > t; *inverse scaling* when a_1 − a_m > t;
    - else *flat*.

    One model gives *single model*. The rule is descriptive: it does not test
    whether a difference exceeds sampling noise; choose ``tolerance`` above
    the accuracies' standard errors (about 1/(2√n) for n answers).

    Examples
    --------
    >>> import xarray as xr
    >>> from rankstats.analyses.verbalizer import curve_shapes
    >>> models = xr.Dataset(coords={
    ...     "model": ["s", "m", "l", "a", "b"],
    ...     "family": ("model", ["T5", "T5", "T5", "GPT", "GPT"]),
    ...     "parameters": ("model", [1.0, 2.0, 3.0, 1.0, 2.0])})
    >>> accuracy = xr.DataArray([0.6, 0.4, 0.7, 0.8, 0.5], dims="model",
    ...                         coords={"model": models.model})
    >>> curve_shapes(accuracy, models).shape.values.tolist()
    ['U-shaped', 'inverse scaling']
    """
    for name in (family, size):
        if name not in cube.coords or cube[name].dims != ("model",):
            raise DimensionError(f"curve_shapes needs the model coordinate {name!r}")
    if "model_family" in cube.coords or "model_family" in values.coords:
        raise DimensionError(
            "the coordinate 'model_family' would clash with the dimension of "
            "the curve shapes; rename it first "
            "(cube.rename(model_family='family'))"
        )
    families = cube[family].values.astype(str)
    sizes = cube[size].values.astype(float)
    order = pd.Index(values["model"].values)
    take = order.get_indexer(cube["model"].values)
    usable = (families != "") & np.isfinite(sizes) & (take >= 0)
    names = pd.unique(families[usable])
    frame = pd.DataFrame(
        {
            "family": pd.Categorical(families[usable], categories=names),
            "size": sizes[usable],
            "at": take[usable],
            "model": cube["model"].values[usable],
        }
    )
    frame = frame.sort_values(["family", "size"], kind="stable")
    frame["position"] = frame.groupby("family", observed=True).cumcount()
    width = int(frame["position"].max()) + 1 if len(frame) else 0
    lead = values.transpose("model", ...)
    rest = lead.shape[1:]
    padded = np.full((len(names), width, *rest), np.nan)
    row, column = frame["family"].cat.codes.to_numpy(), frame["position"].to_numpy()
    padded[row, column] = lead.values[frame["at"].to_numpy()]
    model_names = np.full((len(names), width), "", dtype=object)
    model_names[row, column] = frame["model"].to_numpy(dtype=object)
    model_sizes = np.full((len(names), width), np.nan)
    model_sizes[row, column] = frame["size"].to_numpy()
    codes = _kv.curve_shape(np.moveaxis(padded, 1, -1), tolerance)
    labels = np.array([*SHAPES, ""], dtype=object)[codes]  # -1 picks the last: ""
    dims = ("model_family", *lead.dims[1:])
    coords = {d: lead[d] for d in lead.dims[1:] if d in lead.coords}
    coords.update(
        {n: c for n, c in lead.coords.items() if n not in lead.dims and "model" not in c.dims}
    )
    coords["model_family"] = np.asarray(names, dtype=object)
    return xr.Dataset(
        {
            "shape": (dims, labels),
            "curve": (("model_family", "position", *lead.dims[1:]), padded),
            "curve_model": (("model_family", "position"), model_names),
            "curve_size": (("model_family", "position"), model_sizes),
        },
        coords=coords,
        attrs={"statistic": "curve_shapes", "tolerance": tolerance, "size": size, "family": family},
    )


def verbalizer_analysis(
    cube: xr.Dataset,
    *,
    chance: float | None = None,
    tolerance: float = 0.02,
    alpha: float = 0.05,
    p_adjust: str = "holm",
    family: str = "family",
    size: str = "parameters",
    natural: str = "golden",
    flipped: str = "flipped golden",
) -> xr.Dataset:
    """Every verbalizer analysis of a cube, as one Dataset (the report's verbalizer section).

    Parameters
    ----------
    cube : xarray.Dataset
        A cube with the template coordinates ``verbalizer_group`` and
        ``verbalizer`` (and ``prompting``; an ``unparseable`` variable, the
        model coordinates ``family`` and ``parameters`` and the task
        coordinate ``n_labels`` enable the parts that need them).
    chance, alpha, p_adjust
        See :func:`chance_test`.
    tolerance, family, size
        See :func:`curve_shapes`.
    natural, flipped
        See :func:`cot_comparison`.

    Returns
    -------
    xarray.Dataset
        ``group_accuracy(model, group)``, ``group_accuracy_by_task(model,
        task, group)``, ``verbalizer_accuracy(model, verbalizer)``,
        ``natural_unnatural_gap(model)`` and ``_by_task``; with samples, the
        :func:`chance_test` variables prefixed ``chance_`` (``chance_pvalue``,
        ``chance_verdict``, ``chance_unparseable_share``, ...); with CoT
        templates, :func:`cot_comparison` prefixed ``cot_``; with families
        and sizes, ``group_shape(model_family, group)``,
        ``verbalizer_shape(model_family, verbalizer)`` and (with CoT)
        ``cot_shape(model_family, condition)``, with the curves
        ``group_curve`` etc. over ``position``.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import verbalizer_analysis
    >>> cube = rankstats.from_records(
    ...     [{"model": m, "task": "t", "template": g, "sample": s, "verbalizer_group": g,
    ...       "verbalizer": v, "score": float(s < right)}
    ...      for m, rights in {"a": (18, 6), "b": (19, 10)}.items()
    ...      for (g, v), right in zip([("natural", "golden"), ("unnatural", "flipped golden")],
    ...                               rights)
    ...      for s in range(20)],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> result = verbalizer_analysis(cube)
    >>> result.chance_verdict.sel(group="unnatural").values.tolist()
    ['not distinguishable', 'not distinguishable']
    >>> result.natural_unnatural_gap.values.round(2).tolist()
    [0.6, 0.45]
    """
    cube = _check_cube(cube)
    groups = group_accuracy(cube)
    groups_by_task = group_accuracy(cube, by_task=True)
    out = {
        "group_accuracy": groups,
        "group_accuracy_by_task": groups_by_task,
        "verbalizer_accuracy": verbalizer_accuracy(cube),
    }
    present = set(groups["group"].values)
    if {"natural", "unnatural"} <= present:
        out["natural_unnatural_gap"] = groups.sel(group="natural", drop=True) - groups.sel(
            group="unnatural", drop=True
        )
        out["natural_unnatural_gap_by_task"] = groups_by_task.sel(
            group="natural", drop=True
        ) - groups_by_task.sel(group="unnatural", drop=True)
    if "sample" in cube["score"].dims:
        test = chance_test(cube, chance=chance, p_adjust=p_adjust, alpha=alpha)
        out.update(
            {
                f"chance_{name}" if name != "chance" else "chance_level": value
                for name, value in test.data_vars.items()
            }
        )
    has_cot = "prompting" in cube.coords and bool((cube["prompting"] == "cot").any())
    if has_cot:
        cot = cot_comparison(cube, natural=natural, flipped=flipped)
        out.update({f"cot_{name}": value for name, value in cot.data_vars.items()})
    shaped = family in cube.coords and size in cube.coords
    if shaped:
        curves = [("group", out["group_accuracy"]), ("verbalizer", out["verbalizer_accuracy"])]
        if has_cot:
            curves.append(("cot", out["cot_accuracy"]))
        for prefix, values in curves:
            result = curve_shapes(values, cube, family=family, size=size, tolerance=tolerance)
            out[f"{prefix}_shape"] = result["shape"]
            out[f"{prefix}_curve"] = result["curve"]
        out["curve_model"] = result["curve_model"]
        out["curve_size"] = result["curve_size"]
        out["shape_tolerance"] = xr.DataArray(float(tolerance))
    analysis = xr.Dataset({name: _plain(value) for name, value in out.items()})
    analysis.attrs = {
        "statistic": "verbalizer_analysis",
        "tolerance": tolerance,
        "alpha": alpha,
        "p_adjust": p_adjust,
        "natural": natural,
        "flipped": flipped,
        "family": family if shaped else "",
        "size": size if shaped else "",
    }
    return analysis


def _by_model(array: xr.DataArray, columns: str) -> pd.DataFrame:
    return array.transpose("model", columns).to_pandas().rename_axis(index="model", columns=None)


def report_tables(analysis: xr.Dataset) -> list[tuple[str, str, str, pd.DataFrame]]:
    """The verbalizer tables of a report: ``(key, title, note, table)`` in reading order.

    ``analysis`` is :func:`verbalizer_analysis` or a :func:`rankstats.report`
    of a cube with verbalizer coordinates; :mod:`rankstats.render` shows
    these tables as the report's verbalizer section.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.verbalizer import report_tables, verbalizer_analysis
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": v, "verbalizer_group": g,
    ...       "verbalizer": v, "score": s}
    ...      for g, v, s in [("natural", "golden", 0.9), ("unnatural", "flipped golden", 0.2)]],
    ...     template_attrs=("verbalizer_group", "verbalizer"))
    >>> [key for key, *_ in report_tables(verbalizer_analysis(cube))]
    ['verbalizer_groups', 'verbalizer_verbalizers', 'verbalizer_tasks']
    """
    out = []
    groups = _by_model(analysis["group_accuracy"], "group")
    if "natural_unnatural_gap" in analysis:
        groups["natural − unnatural"] = analysis["natural_unnatural_gap"].to_series()
    out.append(
        (
            "verbalizer_groups",
            "Instruction following: accuracy per verbalizer group",
            "Each model's accuracy under direct prompting, averaged over the datasets and "
            "the verbalizers of each group: natural (label names, 1|0, yes|no), neutral "
            "(foo|bar, sfo|lax, ...) and unnatural (the natural ones flipped). A large "
            "natural − unnatural gap means the model follows its priors rather than the "
            "instruction (Li et al. 2023, figure 2).",
            groups,
        )
    )
    if "chance_pvalue" in analysis:
        columns = {
            "accuracy": "chance_accuracy",
            "chance": "chance_level",
            "correct": "chance_correct",
            "answers": "chance_n",
            "p": "chance_pvalue",
            "p (adjusted)": "chance_pvalue_adjusted",
            "verdict": "chance_verdict",
            "unparseable": "chance_unparseable_share",
        }
        table = pd.DataFrame(
            {
                label: analysis[name].transpose("model", "group").to_series()
                for label, name in columns.items()
                if name in analysis
            }
        )
        for name in ("correct", "answers"):
            table[name] = table[name].astype(int)
        out.append(
            (
                "verbalizer_chance",
                "Against random guessing",
                f"Exact binomial test of each model's correct answers in each group against "
                f"random guessing, {analysis.attrs.get('p_adjust', 'holm')}-adjusted over "
                "models and groups; unparseable: the share of answers naming no label "
                "(counted as wrong, never as right).",
                table,
            )
        )
    out.append(
        (
            "verbalizer_verbalizers",
            "Accuracy per verbalizer",
            "Each model's accuracy under each verbalizer, averaged over the datasets "
            "(figure 3): natural verbalizers should agree; their flipped counterparts show "
            "which priors a model cannot override.",
            _by_model(analysis["verbalizer_accuracy"], "verbalizer"),
        )
    )
    tasks = analysis["group_accuracy_by_task"].transpose("task", "model", "group")
    tasks = tasks.to_series().unstack("group")[list(analysis["group"].values)]
    if "natural_unnatural_gap_by_task" in analysis:
        gap = analysis["natural_unnatural_gap_by_task"].transpose("task", "model").to_series()
        tasks["natural − unnatural"] = gap
    out.append(
        (
            "verbalizer_tasks",
            "Accuracy per dataset and verbalizer group",
            "Per dataset (task) and model, the accuracy of each group (figure 5).",
            tasks.dropna(how="all"),
        )
    )
    if "cot_accuracy" in analysis:
        table = _by_model(analysis["cot_accuracy"], "condition")
        if "cot_mcnemar_pvalue" in analysis:
            table["right only direct"] = analysis["cot_direct_only"].to_series().astype("Int64")
            table["right only CoT"] = analysis["cot_cot_only"].to_series().astype("Int64")
            table["McNemar p"] = analysis["cot_mcnemar_pvalue"].to_series()
            if "cot_n_items_dropped" in analysis:
                table["items left out"] = (
                    analysis["cot_n_items_dropped"].to_series().astype("Int64")
                )
        out.append(
            (
                "verbalizer_cot",
                "Direct against chain-of-thought prompting",
                "Accuracy with the natural golden verbalizer (direct prompting) and with "
                "the flipped golden one, directly and with zero-shot chain of thought "
                "(\"Let's think step by step.\"; figure 4); McNemar's exact test of the "
                "flipped direct against the flipped CoT answers, item by item; an item "
                "answered under one of the two only is left out of it (pairwise deletion; "
                "items left out).",
                table,
            )
        )
    if "group_shape" in analysis:
        tolerance = (
            float(analysis["shape_tolerance"])
            if "shape_tolerance" in analysis
            else analysis.attrs.get("tolerance", 0.02)
        )
        parts = [analysis["group_shape"].transpose("model_family", "group").to_pandas()]
        parts.append(
            analysis["verbalizer_shape"].transpose("model_family", "verbalizer").to_pandas()
        )
        if "cot_shape" in analysis:
            parts.append(analysis["cot_shape"].transpose("model_family", "condition").to_pandas())
        table = pd.concat(parts, axis=1)
        names = analysis["curve_model"].transpose("model_family", "position").values
        table.insert(0, "models, smallest first", [", ".join(n for n in row if n) for row in names])
        out.append(
            (
                "verbalizer_shapes",
                "Scaling within each model family",
                f"The shape of each family's accuracy curve from its smallest model to "
                f"its largest, with changes of at most {tolerance:g} counted as none: "
                "flat (range within the tolerance), U-shaped (an interior model below both "
                "ends), inverted U-shaped (above both ends), non-monotonic (both), "
                "scaling (the largest above the smallest), inverse scaling (below).",
                table.rename_axis(index="family"),
            )
        )
    return out


def log_drops(
    cube: xr.Dataset, structure, log, *, family: str = "family", size: str = "parameters"
) -> None:
    """Log what the verbalizer sections of the report leave out, and why.

    Templates without a verbalizer group; templates of a group a model lacks
    (its accuracies are over its other templates); answers missing under a
    template the model has (left out of the counts tested against chance);
    items answered under one of the flipped golden direct and CoT templates
    only (left out of McNemar's test); models without a family or size
    (left out of the curve shapes); and the sections the cube cannot have.
    ``structure`` and ``log`` are the report's
    :class:`~rankstats.analyses._left_out.Structure` and ``Log``.
    """
    st = structure
    group = np.asarray(
        xr.DataArray(_template_coord(cube, "verbalizer_group")).transpose("task", "template").values
    ).astype(str)
    grouped = (group != "") & (group != "nan")
    log.templates(
        "verbalizer_groups",
        st,
        st.scored & ~grouped,
        "no verbalizer group (verbalizer_group is empty): left out of every verbalizer table",
    )
    direct = np.asarray(_direct(cube).transpose("task", "template").values, dtype=bool)
    counted = grouped & direct
    hole = st.hole & counted[:, None, :]
    for t, m in np.argwhere(hole.any(-1)):
        log.add(
            "verbalizer_groups",
            "templates",
            st.templates(t, hole[t, m]),
            "no score from this model on them: its accuracies per group, verbalizer and "
            "task are over its other templates",
            task=st.tasks[t],
            model=st.models[m],
        )
    samples = "sample" in cube["score"].dims
    if samples:
        _log_missing_answers(cube, st, log, counted)
    else:
        log.add(
            "verbalizer_chance",
            "section",
            ["verbalizer_chance"],
            "left out: the test "
            "against chance counts answers, and the cube has no sample dimension",
        )
    has_cot = "prompting" in cube.coords and bool((cube["prompting"] == "cot").any())
    if not has_cot:
        log.add(
            "verbalizer_cot",
            "section",
            ["verbalizer_cot"],
            "left out: the cube has no chain-of-thought templates (prompting 'cot')",
        )
    elif samples:
        _log_cot_items(cube, st, log)
    if family in cube.coords and size in cube.coords:
        families = np.asarray(cube[family].values).astype(str)
        sizes = np.asarray(cube[size].values, dtype=float)
        log.add(
            "verbalizer_shapes",
            "models",
            cube["model"].values[(families == "") | ~np.isfinite(sizes)],
            f"no model family ({family!r} is empty) or size ({size!r} is NaN): left out "
            "of the curve shapes",
        )
    else:
        log.add(
            "verbalizer_shapes",
            "section",
            ["verbalizer_shapes"],
            f"left out: the cube has no model coordinates {family!r} and {size!r}",
        )


def _sample_labels(cube, n_tasks: int) -> np.ndarray:
    if "sample_id" in cube.coords:
        return np.asarray(
            cube["sample_id"].transpose("task", "sample").values, dtype=object
        ).astype(str)
    return np.broadcast_to(
        np.arange(cube.sizes["sample"]).astype(str), (n_tasks, cube.sizes["sample"])
    )


def _log_missing_answers(cube, st, log, counted) -> None:
    answered = np.asarray(
        cube["score"].notnull().transpose("task", "model", "template", "sample").values
    )
    asked = answered.any((1, 2))  # (task, sample): not padding
    has = answered.any(-1)  # (task, model, template): the template has answers of the model
    missing = (
        ~answered & has[..., None] & asked[:, None, None, :] & counted[:, None, :, None]
    ).any(2)  # (task, model, sample)
    ids = _sample_labels(cube, len(st.tasks))
    for t, m in np.argwhere(missing.any(-1)):
        log.add(
            "verbalizer_chance",
            "samples",
            ids[t][missing[t, m]].tolist(),
            "no answer from this model under some template of its group that it answered "
            "otherwise: left out of the counts tested against chance",
            task=st.tasks[t],
            model=st.models[m],
        )


def _log_cot_items(cube, st, log) -> None:
    members = _plain(_condition_members(cube, "golden", "flipped golden"))
    score = _plain(cube["score"])
    answered = [
        np.asarray(
            score.where(members.sel(condition=CONDITIONS[k], drop=True))
            .notnull()
            .any("template")
            .transpose("task", "model", "sample")
            .values
        )
        for k in (1, 2)
    ]
    both = answered[0].any(2) & answered[1].any(2)  # (task, model): the two templates exist
    one_side = (answered[0] ^ answered[1]) & both[..., None]
    ids = _sample_labels(cube, len(st.tasks))
    for t, m in np.argwhere(one_side.any(-1)):
        log.add(
            "verbalizer_cot",
            "samples",
            ids[t][one_side[t, m]].tolist(),
            "answered under only one of the flipped golden templates (direct, CoT): left "
            "out of McNemar's test by pairwise deletion",
            task=st.tasks[t],
            model=st.models[m],
        )
