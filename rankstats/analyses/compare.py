r"""Paired comparison of two runs: which is better on each model and task, and by how much.

Two runs (two cubes, e.g. two lm-evaluation-harness runs, or two templates,
models or other labels of one cube) are compared on what they share: the
same models, tasks and items (samples), and the same templates where both
have several. For each model and task :func:`compare` gives the paired mean
difference A - B, its bootstrap interval over items (and templates), a test
(McNemar's exact test for binary scores on one template, else the bootstrap
test), the p-values adjusted across tasks, the minimum detectable effect
for the observed data, and a verdict. What is not shared is dropped and
logged, never silently.

:func:`compare_tables` and :func:`compare_markdown` lay the result out for
``--json``, ``--csv`` and the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from .. import _options as o
from .._kernels.multitest import adjust_last
from .._kernels.significance import mcnemar_pair
from .._statistic import documented
from .._xr import higher_is_better_of
from ..errors import (
    CoordinateMismatchError,
    CubeError,
    DimensionError,
    InputTypeError,
    OptionError,
)
from ..stability.resampling import confidence_interval, replicates
from ..validation import score_kind_of

__all__ = ["compare", "compare_markdown", "compare_tables", "mcnemar_mde"]

#: The verdicts, in the order the docs give them.
VERDICTS = ("A better", "B better", "no detectable difference", "not tested")
#: The columns of the drop log (``drop_<column>`` in the result).
DROP_COLUMNS = ("task", "model", "what", "count", "which", "why")
#: Labels listed in full in a drop-log row; longer lists end with how many more.
_MOST_LISTED = 20
_AXES = ("task", "template", "sample")
_CHECKS = {
    "p_adjust": o.one_of(*o.P_ADJUST),
    "alpha": o.probability,
    "power": o.probability,
    "confidence_level": o.probability,
    "n_resamples": o.positive_int,
    "seed": o.seed,
}


# --------------------------------------------------------------------------- power


@documented
def mcnemar_mde(n, discordance, alpha=0.05, power=0.8):
    r"""The smallest difference of paired proportions McNemar's test detects with ``power``.

    Parameters
    ----------
    n : int or array_like
        Number of paired items.
    discordance : float or array_like
        :math:`\psi = (b + c) / n`, the share of items on which the two runs
        disagree.
    {alpha}
        Two-sided.
    power : float, default 0.8
        The probability of rejecting at the returned effect, strictly
        between 0 and 1.

    Returns
    -------
    numpy.ndarray or float
        :math:`|p_{10} - p_{01}|`, the difference of the two runs' accuracies,
        NaN where ``n`` is too small for the formula or ``discordance`` is 0.
        A value above ``discordance`` cannot occur at this discordance (every
        discordant item would have to go one way): no effect is detectable.

    Notes
    -----
    Connor (1987, eq. 3; Lachin 2011, eq. 5.52) gives the number of pairs for
    McNemar's test at level :math:`\alpha` and power :math:`1 - \beta` as

    .. math:: n = \frac{\left(z_{1-\alpha/2}\sqrt{\psi} + z_{1-\beta}
              \sqrt{\psi - \delta^2}\right)^2}{\delta^2}.

    Solving for :math:`\delta` at the observed :math:`\psi` gives

    .. math:: \delta = \sqrt{\psi}\, \frac{z_{1-\alpha/2}\sqrt{n} + z_{1-\beta}
              \sqrt{n - z_{1-\alpha/2}^2 + z_{1-\beta}^2}}{n + z_{1-\beta}^2}.

    The formula is asymptotic; the exact test is a little more conservative,
    so its power at this :math:`\delta` is somewhat below ``power`` for small
    n (``tests/test_compare.py`` measures it by simulation).

    References
    ----------
    .. [1] Connor, R. J. (1987). Sample size for testing differences in
       proportions for the paired-sample design. Biometrics 43(1), 207-211.
    .. [2] Lachin, J. M. (2011). Biostatistical Methods: The Assessment of
       Relative Risks, 2nd ed. Wiley, section 5.8.

    Examples
    --------
    >>> from rankstats.analyses.compare import mcnemar_mde
    >>> round(float(mcnemar_mde(400, 0.2)), 4)
    0.0625
    """
    from .._kernels.records import connor_mde

    checked = o.check_options(
        "mcnemar_mde",
        {"alpha": o.probability, "power": o.probability},
        {"alpha": alpha, "power": power},
    )
    # one formula for compare, plan and the record audit
    delta = connor_mde(n, discordance, checked["alpha"], checked["power"])
    return delta if delta.ndim else float(delta)


# --------------------------------------------------------------------------- inputs


def _scores(x, run: str) -> xr.DataArray:
    """The run's scores with their attrs; every run needs task and sample dimensions."""
    if isinstance(x, xr.Dataset):
        if "score" not in x:
            raise InputTypeError(f"compare: run {run} has no 'score' variable")
        scores = x["score"].assign_attrs({**x.attrs, **x["score"].attrs})
    elif isinstance(x, xr.DataArray):
        scores = x
    else:
        raise InputTypeError(
            f"compare: run {run} must be a score cube (xarray.Dataset) or an "
            f"xarray.DataArray, not {type(x).__name__}"
        )
    for dim in ("task", "sample"):
        if dim not in scores.dims:
            raise DimensionError(
                f"compare: run {run} has no {dim!r} dimension (dimensions: "
                f"{', '.join(map(str, scores.dims))}); the comparison pairs per-sample scores"
            )
    if "template" not in scores.dims:
        scores = scores.expand_dims("template", axis=-1)
    return scores


def _attribute(scores: xr.DataArray, run: str, name: str):
    if name not in scores.attrs:
        return None
    try:
        if name == "score_kind":
            return score_kind_of(scores)
        return higher_is_better_of(scores, None)
    except CubeError as error:
        raise CubeError(f"compare: run {run}: {error}") from None


def _check_alike(a: xr.DataArray, b: xr.DataArray) -> dict:
    """The shared score kind, direction and metric; a CubeError naming any mismatch."""
    found = {}
    for name in ("score_kind", "higher_is_better", "metric"):
        first = _attribute(a, "A", name) if name != "metric" else a.attrs.get(name)
        second = _attribute(b, "B", name) if name != "metric" else b.attrs.get(name)
        if first is not None and second is not None and first != second:
            raise CubeError(
                f"compare: the runs differ in {name}: A has {first!r}, B has "
                f"{second!r}; only scores of the same {name} can be compared"
            )
        found[name] = first if first is not None else second
    if found["higher_is_better"] is None:
        found["higher_is_better"] = True
    return found


def _split(cube, between) -> tuple[xr.DataArray, xr.DataArray, str, str]:
    """Two runs inside one cube: the positions ``between`` names along one dimension."""
    if not isinstance(between, Mapping) or len(between) != 1:
        raise OptionError(
            "compare: between must be one {dimension: (label_a, label_b)}, e.g. "
            f"{{'template': ('1', '2')}}, not {between!r}"
        )
    ((dim, labels),) = between.items()
    if isinstance(labels, str) or len(labels) != 2 or labels[0] == labels[1]:
        raise OptionError(
            f"compare: between={{{dim!r}: ...}} needs two different labels, not {labels!r}"
        )
    scores = _scores(cube, "the cube")
    if dim in ("task", "sample"):
        raise OptionError(
            f"compare: between cannot name {dim!r}: the runs are paired on the "
            "tasks and samples they share"
        )
    if dim == "template":
        ids = _template_ids(scores)
        runs = []
        for label in labels:
            match = ids == str(label)
            if not match.any():
                raise OptionError(
                    f"compare: no task has a template with template_id {str(label)!r}"
                )
            where = xr.DataArray(match.argmax(-1), dims="task")
            run = scores.isel(template=where).where(xr.DataArray(match.any(-1), dims="task"))
            run = run.drop_vars(
                [c for c in run.coords if "template" in run[c].dims or c == "template"]
            )
            run = run.expand_dims("template", axis=-1)
            run = run.assign_coords(
                template_id=(
                    ("task", "template"),
                    np.full((run.sizes["task"], 1), str(label), dtype=object),
                )
            )
            runs.append(run.assign_attrs(scores.attrs))
        return runs[0], runs[1], f"template {labels[0]}", f"template {labels[1]}"
    if dim not in scores.dims:
        raise DimensionError(
            f"compare: between names {dim!r}, which is not a dimension of the "
            f"cube ({', '.join(map(str, scores.dims))})"
        )
    present = [str(v) for v in scores[dim].values]
    for label in labels:
        if str(label) not in present:
            raise OptionError(
                f"compare: between={{{dim!r}: ...}}: no {dim} {label!r} "
                f"(the cube has {', '.join(present[:10])}"
                f"{', ...' if len(present) > 10 else ''})"
            )
    runs = [
        scores.isel({dim: present.index(str(label))}, drop=True).assign_attrs(scores.attrs)
        for label in labels
    ]
    return runs[0], runs[1], f"{dim} {labels[0]}", f"{dim} {labels[1]}"


def _template_ids(scores: xr.DataArray) -> np.ndarray:
    """``(task, template)`` text ids: the ``template_id`` coordinate, else the positions."""
    if "template_id" in scores.coords:
        return np.asarray(
            scores["template_id"].transpose("task", "template").values, dtype=object
        ).astype(str)
    return np.broadcast_to(
        np.arange(scores.sizes["template"]).astype(str),
        (scores.sizes["task"], scores.sizes["template"]),
    )


def _sample_ids(scores: xr.DataArray) -> np.ndarray | None:
    if "sample_id" not in scores.coords:
        return None
    return np.asarray(scores["sample_id"].transpose("task", "sample").values, dtype=object).astype(
        str
    )


def _labels(scores: xr.DataArray, dim: str) -> list[str]:
    if dim in scores.coords:
        return [str(v) for v in scores[dim].values]
    return [str(i) for i in range(scores.sizes[dim])]


def _listed(labels) -> str:
    labels = [str(label) for label in labels]
    shown = ", ".join(labels[:_MOST_LISTED])
    return shown + (
        f", ... ({len(labels) - _MOST_LISTED} more)" if len(labels) > _MOST_LISTED else ""
    )


class _Log:
    """The drop log: one row per task (and label), what was dropped, how many, which, why."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, what: str, which, why: str, *, task: str = "", model: str = "") -> None:
        which = list(which)
        if which:
            self.rows.append(
                {
                    "task": str(task),
                    "model": str(model),
                    "what": what,
                    "count": len(which),
                    "which": _listed(which),
                    "why": why,
                }
            )

    def summary(self) -> str:
        if not self.rows:
            return "nothing"
        return "; ".join(
            f"{row['count']} {row['what']}"
            + (f" of task {row['task']}" if row["task"] else "")
            + (f" for {row['model']}" if row["model"] else "")
            + (f": {row['which']}" if row["which"] else "")
            + f" ({row['why']})"
            for row in self.rows
        )

    def dataset(self) -> xr.Dataset:
        columns = {name: [row[name] for row in self.rows] for name in DROP_COLUMNS}
        return xr.Dataset(
            {
                f"drop_{name}": ("drop", np.array(values, dtype=int if name == "count" else object))
                for name, values in columns.items()
            }
        )


# --------------------------------------------------------------------------- alignment


def _present(scores: xr.DataArray, dim: str) -> np.ndarray:
    return np.asarray(scores.notnull().any([d for d in scores.dims if d != dim]).values)


def _shared_labels(a, b, dim, log) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Positions in A and in B of the labels both runs have scores for; the rest logged."""
    first, second = _labels(a, dim), _labels(b, dim)
    here_a = {label for label, on in zip(first, _present(a, dim), strict=True) if on}
    here_b = {label for label, on in zip(second, _present(b, dim), strict=True) if on}
    shared = [label for label in first if label in here_a and label in here_b]
    plural = "models" if dim == "model" else "tasks" if dim == "task" else f"{dim} labels"
    log.add(
        plural,
        [label for label in first if label in here_a and label not in here_b],
        "only in run A",
    )
    log.add(
        plural,
        [label for label in second if label in here_b and label not in here_a],
        "only in run B",
    )
    if not shared:
        raise CoordinateMismatchError(
            f"compare: no overlap: the runs share no {dim} with scores (A has "
            f"{_listed(sorted(here_a)) or 'none'}; B has {_listed(sorted(here_b)) or 'none'})"
        )
    return (
        np.array([first.index(label) for label in shared]),
        np.array([second.index(label) for label in shared]),
        shared,
    )


def _pair_positions(ids_a, real_a, ids_b, real_b, single, what, tasks, log):
    """Positions of each task paired by id: ``(index_a, index_b)`` ``(task, width)``, -1 padded.

    ``single`` marks the tasks where each run has one real position: those
    two are paired whatever their ids (two templates of one task, say).
    """

    def frame(ids, real, run):
        task, position = np.nonzero(real)
        keys = np.where(single[task], "", ids[task, position]).astype(object)
        found = pd.DataFrame({"task": task, "key": keys, "position": position})
        repeated = found.duplicated(["task", "key"])
        if repeated.any():
            row = found[repeated].iloc[0]
            raise CubeError(
                f"compare: run {run}, task {tasks[row.task]}: {what} id "
                f"{row.key!r} occurs more than once; ids must be unique in a task"
            )
        return found

    merged = frame(ids_a, real_a, "A").merge(
        frame(ids_b, real_b, "B"),
        on=["task", "key"],
        how="outer",
        suffixes=("_a", "_b"),
        indicator=True,
    )
    for side, run, other in (("left_only", "a", "B"), ("right_only", "b", "A")):
        lost = merged[merged["_merge"] == side]
        for task, rows in lost.groupby("task", sort=True):
            ids = (ids_a if run == "a" else ids_b)[task, rows[f"position_{run}"].astype(int)]
            log.add(f"{what}s", ids, f"not in run {other}", task=tasks[task])
    both = merged[merged["_merge"] == "both"].sort_values(["task", "position_a"])
    slot = both.groupby("task").cumcount().to_numpy()
    width = int(slot.max(initial=-1)) + 1
    index_a = np.full((len(tasks), max(width, 1)), -1)
    index_b = np.full((len(tasks), max(width, 1)), -1)
    task = both["task"].to_numpy()
    index_a[task, slot] = both["position_a"].to_numpy().astype(int)
    index_b[task, slot] = both["position_b"].to_numpy().astype(int)
    return index_a, index_b


def _take(values: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """``values`` reindexed along ``axis`` by ``(task, width)`` positions, NaN at -1."""
    shape = [1] * values.ndim
    shape[-3] = index.shape[0]
    shape[axis] = index.shape[1]
    where = index.reshape(shape)
    out = np.take_along_axis(values, np.maximum(where, 0), axis=axis)
    return np.where(where >= 0, out, np.nan)


def _align(a: xr.DataArray, b: xr.DataArray, log: _Log):
    """Both runs on their shared labels, tasks, templates and samples: ``(*cells, T, P, S)``."""
    cells = [d for d in a.dims if d not in _AXES]
    if sorted(cells) != sorted(d for d in b.dims if d not in _AXES):
        raise DimensionError(
            f"compare: the runs have different dimensions: A "
            f"{tuple(map(str, a.dims))}, B {tuple(map(str, b.dims))}"
        )
    labels = {}
    for dim in [*cells, "task"]:
        first, second, labels[dim] = _shared_labels(a, b, dim, log)
        a, b = a.isel({dim: first}), b.isel({dim: second})
    tasks = labels["task"]
    order = [*cells, *_AXES]
    a, b = a.transpose(*order), b.transpose(*order)
    values_a = np.asarray(a.values, dtype=float)
    values_b = np.asarray(b.values, dtype=float)
    over = tuple(range(len(cells)))
    # templates: by id, or the only template of each side
    ids_a, ids_b = _template_ids(a), _template_ids(b)
    real_a = ~np.isnan(values_a).all((*over, -1))
    real_b = ~np.isnan(values_b).all((*over, -1))
    single = (real_a.sum(-1) == 1) & (real_b.sum(-1) == 1)
    tmpl_a, tmpl_b = _pair_positions(ids_a, real_a, ids_b, real_b, single, "template", tasks, log)
    _refuse_nothing_shared(tmpl_a, "template", ids_a, real_a, ids_b, real_b)
    values_a, values_b = _take(values_a, tmpl_a, -2), _take(values_b, tmpl_b, -2)
    template_id = np.where(
        tmpl_a >= 0, ids_a[np.arange(len(tasks))[:, None], np.maximum(tmpl_a, 0)], ""
    ).astype(object)
    template_id = np.where(
        single[:, None] & (tmpl_a >= 0), _single_label(ids_a, tmpl_a, ids_b, tmpl_b), template_id
    )
    # samples: by sample_id when both runs have it, else by position
    sid_a, sid_b = _sample_ids(a), _sample_ids(b)
    matched_by = "sample_id" if sid_a is not None and sid_b is not None else "position"
    if matched_by == "position":
        sid_a = np.broadcast_to(
            np.arange(a.sizes["sample"]).astype(str), (len(tasks), a.sizes["sample"])
        )
        sid_b = np.broadcast_to(
            np.arange(b.sizes["sample"]).astype(str), (len(tasks), b.sizes["sample"])
        )
    real_a = ~np.isnan(values_a).all((*over, -2))
    real_b = ~np.isnan(values_b).all((*over, -2))
    none = np.zeros(len(tasks), dtype=bool)
    smp_a, smp_b = _pair_positions(sid_a, real_a, sid_b, real_b, none, "item", tasks, log)
    _refuse_nothing_shared(smp_a, f"sample (matched by {matched_by})", sid_a, real_a, sid_b, real_b)
    values_a, values_b = _take(values_a, smp_a, -1), _take(values_b, smp_b, -1)
    both = ~np.isnan(values_a) & ~np.isnan(values_b)
    if not both.any():
        raise CoordinateMismatchError(
            "compare: no overlap: the runs share models, tasks, templates and samples, but no "
            "score is present in both runs at the same model, task, template and sample"
        )
    sample_id = np.where(
        smp_a >= 0, sid_a[np.arange(len(tasks))[:, None], np.maximum(smp_a, 0)], ""
    ).astype(object)
    coords = {dim: labels[dim] for dim in cells}
    coords["task"] = tasks
    coords["template_id"] = (("task", "template"), template_id)
    coords["sample_id"] = (("task", "sample"), sample_id)
    return values_a, values_b, cells, coords, matched_by


def _refuse_nothing_shared(index_a, what, ids_a, real_a, ids_b, real_b) -> None:
    """Refuse runs whose shared tasks pair no ``what`` at all: nothing would be compared.

    A task that pairs none is logged and left "not tested"; when no task pairs
    any, the comparison is empty, which is an error as no shared model is.
    """
    if (index_a >= 0).any():
        return

    def held(ids, real):
        return _listed(sorted({str(i) for i in np.asarray(ids)[np.asarray(real)]})) or "none"

    raise CoordinateMismatchError(
        f"compare: no overlap: the runs share no {what} on any task they share (A has "
        f"{held(ids_a, real_a)}; B has {held(ids_b, real_b)})"
    )


def _single_label(ids_a, index_a, ids_b, index_b) -> np.ndarray:
    """``"a"`` or ``"a vs b"``: the label of a pair of lone templates."""
    rows = np.arange(ids_a.shape[0])[:, None]
    first = ids_a[rows, np.maximum(index_a, 0)].astype(object)
    second = ids_b[rows, np.maximum(index_b, 0)].astype(object)
    return np.where(first == second, first, first + " vs " + second)


# --------------------------------------------------------------------------- statistics


def _means(values, paired):
    """Mean over the paired templates of the mean over each template's paired items.

    A model that lacks a whole template another model has gets NaN
    (``nan_policy="propagate"``, as :func:`rankstats.stability.replicates`).
    """
    count = paired.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_template = np.where(paired, values, 0.0).sum(-1) / count
    real = paired.any((*tuple(range(paired.ndim - 3)), -1))
    hole = real & (count == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(real, per_template, 0.0).sum(-1) / real.sum(-1)
    return np.where(hole.any(-1) | (real.sum(-1) == 0), np.nan, mean)


def _bootstrap(difference, cells, coords, over, n_resamples, seed, confidence_level):
    """Replicates of the mean difference from the resampling engine, and their interval."""
    dims = [*cells, *_AXES]
    scores = xr.DataArray(
        difference, dims=dims, coords={k: v for k, v in coords.items() if k != "sample_id"}
    )
    added = "model" not in cells
    if added:
        scores = scores.expand_dims("model")
    reps = replicates(scores, n_resamples=n_resamples, over=over, seed=seed, statistics=("avgp",))
    interval = confidence_interval(
        reps["avgp"], reps["avgp_estimate"], confidence_level=confidence_level
    )
    draws = reps["avgp"]
    if added:
        draws, interval = draws.squeeze("model", drop=True), interval.squeeze("model", drop=True)
    order = [*cells, "task"]
    draws = np.asarray(draws.transpose(*order, "replicate").values, dtype=float)
    return (
        draws,
        *(
            np.asarray(interval[name].transpose(*order).values, dtype=float)
            for name in ("low", "high", "standard_error")
        ),
    )


def _bootstrap_pvalue(draws):
    r"""Two-sided p-value of the percentile bootstrap test of no difference.

    :math:`\\min(1, 2 \\min(1 + \\#\\{\\delta^* \\le 0\\}, 1 + \\#\\{\\delta^* \\ge 0\\})
    / (B + 1))`: the smallest level whose percentile interval excludes 0
    (Efron and Tibshirani 1993, section 16.4), with the count of the
    observed data added so that p > 0.
    """
    n = draws.shape[-1]
    below = (draws <= 0).sum(-1)
    above = (draws >= 0).sum(-1)
    p = np.minimum(1.0, 2.0 * (1.0 + np.minimum(below, above)) / (n + 1.0))
    return np.where(np.isnan(draws).any(-1), np.nan, p)


@documented
def compare(
    a,
    b=None,
    *,
    between=None,
    p_adjust="holm",
    alpha=0.05,
    power=0.8,
    confidence_level=0.95,
    n_resamples=1000,
    seed=None,
):
    r"""Compare two runs item by item: paired differences, intervals, tests, detectable effects.

    Parameters
    ----------
    a, b : score cube or xarray.DataArray
        The two runs, with per-sample scores (``task`` and ``sample``
        dimensions; ``template`` where there are several). They are paired
        on the models (and any other label dimension), tasks, templates and
        samples both have scores for. Give ``b=None`` and ``between`` to
        compare two runs inside one cube.
    between : dict, optional
        ``{dimension: (label_a, label_b)}`` with ``b`` omitted: run A is the
        cube at ``label_a``, run B at ``label_b``. ``{"template": ("1",
        "2")}`` compares the templates whose ``template_id`` is ``"1"`` and
        ``"2"`` in each task; ``{"model": ("x", "y")}`` two models (the
        result then has no ``model`` dimension); any dimension with labels
        works the same way (a seed, a number of shots). Not ``task`` or
        ``sample``: those are what the runs are paired on.
    {p_adjust}
        Applied across the tasks, separately for each model.
    {alpha}
        Also the level of the minimum detectable effect.
    power : float, default 0.8
        The power at which the minimum detectable effect is computed.
    {confidence_level}
    {n_resamples}
        Bootstrap replicates of the paired difference.
    {seed}

    Returns
    -------
    xarray.Dataset
        Over the shared models (and other label dimensions) and tasks:

        - ``score_a``, ``score_b``: each run's mean on the paired items (the
          mean over templates of the mean over items);
        - ``difference``: ``score_a - score_b``;
        - ``low``, ``high``, ``standard_error``: the percentile bootstrap
          interval at ``confidence_level`` and the replicates' standard
          deviation;
        - ``test``: ``"mcnemar"`` (binary scores, one template each) or
          ``"bootstrap"`` (every other case);
        - ``pvalue``, ``pvalue_adjusted`` (``p_adjust`` across tasks);
        - ``b``, ``c``: items A gets right and B wrong, and the reverse
          (McNemar only, NaN otherwise);
        - ``mde``: the minimum detectable effect, as an absolute difference
          of scores, at ``alpha`` and ``power`` for the observed data; NaN
          where the runs never differ (no discordant item; no variation
          between replicates), which leaves nothing to scale it by;
        - ``n_items``: items both runs score; ``n_unpaired``: scores one run
          has and the other lacks on a shared item and template, left out;
        - ``verdict``: ``"A better"``, ``"B better"``, ``"no detectable
          difference"``, or ``"not tested"`` where no item is paired;
        - ``n_templates(task)``: the templates paired in each task;
        - ``drop_task``, ``drop_model``, ``drop_what``, ``drop_count``,
          ``drop_which``, ``drop_why`` over ``drop``: everything left out
          (models, tasks, templates or items only one run has), one row each.

        The attrs record the options, the drawn ``seed``, ``over`` (what was
        resampled), ``a`` and ``b``, ``score_kind``, ``higher_is_better``,
        ``metric``, ``items_matched_by`` (``"sample_id"`` or ``"position"``)
        and ``dropped``, the drop log in one line.

    Raises
    ------
    CubeError
        The runs differ in ``score_kind``, ``higher_is_better`` or
        ``metric``, or an id repeats within a task.
    CoordinateMismatchError
        Nothing to compare: the runs share no model or no task with scores,
        no template or no sample on any shared task, or no score present in
        both at the same place. (A task sharing none of them while another
        does is logged, and its verdicts are "not tested".)
    DimensionError, InputTypeError, OptionError
        A run lacks per-sample scores; inputs of the wrong kind; an option
        out of range.

    Notes
    -----
    **Pairing.** Templates pair by ``template_id``; where each run has a
    single template in a task, those two pair whatever their ids (two
    prompts, or two runs of one prompt). Items pair by ``sample_id`` where
    both runs have it, else by position. A task whose runs share no
    template or no item is dropped.

    **Difference and interval.** The difference of each model and task is
    the mean over paired templates of the mean paired difference over
    items. It is bootstrapped by :func:`rankstats.stability.replicates`
    over the items, and over the templates too (independently, the two-way
    bootstrap) when some task pairs several; every model shares a task's
    draws. For one task and one template the draws, and so the percentile
    interval, are those of :func:`scipy.stats.bootstrap` with
    ``paired=True`` and the same seed.

    **Test.** With binary scores and one template each, McNemar's exact test
    (:func:`rankstats.mcnemar`) on the discordant counts b and c; its
    minimum detectable effect is Connor's (:func:`mcnemar_mde`) at the
    observed discordance :math:`(b + c) / n`. Otherwise the percentile
    bootstrap test: :math:`p = \min(1, 2 \min(1 + \#\{\delta^* \le 0\},
    1 + \#\{\delta^* \ge 0\}) / (B + 1))`, which rejects at level
    :math:`\alpha` exactly when the :math:`1 - \alpha` percentile interval
    excludes 0; its minimum detectable effect is
    :math:`(z_{1-\alpha/2} + z_{power})\, \mathrm{SE}` (Bloom 1995) with
    the bootstrap standard error. The verdict is the sign of the difference
    (read through ``higher_is_better``) where the adjusted p-value is below
    ``alpha``. The minimum detectable effect is that of one test at
    ``alpha``; an adjusted family needs somewhat larger effects.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika 12(2).
    .. [2] Connor, R. J. (1987). Sample size for testing differences in
       proportions for the paired-sample design. Biometrics 43(1), 207-211.
    .. [3] Bloom, H. S. (1995). Minimum detectable effects: a simple way to
       report the statistical power of experimental designs. Evaluation
       Review 19(5), 547-556.
    .. [4] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall.

    See Also
    --------
    rankstats.mcnemar, rankstats.adjust_pvalues, rankstats.stability.replicates

    Examples
    --------
    >>> import rankstats
    >>> records = [{"model": "m", "task": "t", "template": p, "sample": f"s{i}",
    ...             "score": float(i % (2 if p == "plain" else 3) != 0)}
    ...            for p in ("plain", "fancy") for i in range(60)]
    >>> cube = rankstats.from_records(records)
    >>> result = rankstats.compare(cube, between={"template": ("fancy", "plain")}, seed=0)
    >>> round(float(result.difference.sel(model="m", task="t")), 4)
    0.1667
    >>> one = result.sel(model="m", task="t")
    >>> int(one.b), int(one.c), str(one.test.item()), round(float(one.pvalue), 4)
    (20, 10, 'mcnemar', 0.0987)
    >>> str(one.verdict.item())
    'no detectable difference'
    >>> round(float(one.mde), 3)  # differences below this are not detectable at power 0.8
    0.251
    """
    checked = o.check_options(
        "compare",
        _CHECKS,
        {
            "p_adjust": p_adjust,
            "alpha": alpha,
            "power": power,
            "confidence_level": confidence_level,
            "n_resamples": n_resamples,
            "seed": seed,
        },
    )
    if checked["n_resamples"] < 2:
        raise OptionError(
            f"compare: n_resamples={n_resamples!r} is not allowed; n_resamples must be at least 2"
        )
    if b is None:
        if between is None:
            raise InputTypeError(
                "compare: give two runs, or one cube and between={dimension: (label_a, label_b)}"
            )
        first, second, name_a, name_b = _split(a, between)
    else:
        if between is not None:
            raise InputTypeError(
                "compare: between= compares two runs inside one cube; give "
                "either b or between, not both"
            )
        first, second = _scores(a, "A"), _scores(b, "B")
        name_a, name_b = "run A", "run B"
    kinds = _check_alike(first, second)
    log = _Log()
    values_a, values_b, cells, coords, matched_by = _align(first, second, log)
    paired = ~np.isnan(values_a) & ~np.isnan(values_b)
    n_unpaired = (np.isnan(values_a) != np.isnan(values_b)).sum((-2, -1))
    difference_cells = np.where(paired, values_a - values_b, np.nan)
    n_templates = paired.any((*tuple(range(len(cells))), -1)).sum(-1)
    over = "both" if (n_templates > 1).any() else "samples"

    score_a, score_b = _means(values_a, paired), _means(values_b, paired)
    draws, low, high, standard_error = _bootstrap(
        difference_cells,
        cells,
        coords,
        over,
        checked["n_resamples"],
        checked["seed"],
        checked["confidence_level"],
    )
    mcnemar = (kinds["score_kind"] == "binary") & (n_templates == 1)
    shape = score_a.shape
    b_count = np.full(shape, np.nan)
    c_count = np.full(shape, np.nan)
    pvalue = _bootstrap_pvalue(draws)
    n_items = paired.any(-2).sum(-1)
    mde = _normal_mde(standard_error, checked["alpha"], checked["power"])
    if mcnemar.any():
        first_a = np.where(paired, values_a, np.nan)[..., 0, :]
        first_b = np.where(paired, values_b, np.nan)[..., 0, :]
        tested = mcnemar_pair(first_a, first_b, method="exact", nan_policy="propagate")
        b_count = np.where(mcnemar, tested["b"], np.nan)
        c_count = np.where(mcnemar, tested["c"], np.nan)
        pvalue = np.where(mcnemar, tested["pvalue"], pvalue)
        with np.errstate(invalid="ignore", divide="ignore"):
            discordance = (tested["b"] + tested["c"]) / tested["n_samples"]
        mde = np.where(
            mcnemar,
            mcnemar_mde(tested["n_samples"], discordance, checked["alpha"], checked["power"]),
            mde,
        )
    none_paired = n_items == 0
    pvalue = np.where(none_paired, np.nan, pvalue)
    adjusted = adjust_last(pvalue, checked["p_adjust"])
    difference = score_a - score_b
    better_a = difference > 0 if kinds["higher_is_better"] else difference < 0
    verdict = np.where(
        adjusted < checked["alpha"], np.where(better_a, VERDICTS[0], VERDICTS[1]), VERDICTS[2]
    ).astype(object)
    verdict = np.where(np.isnan(adjusted), VERDICTS[3], verdict)
    _log_unpaired(log, n_unpaired, cells, coords)

    dims = [*cells, "task"]
    test = np.where(mcnemar, "mcnemar", "bootstrap").astype(object)
    test = np.broadcast_to(test, shape)
    data = {
        "score_a": (dims, score_a),
        "score_b": (dims, score_b),
        "difference": (dims, difference),
        "low": (dims, low),
        "high": (dims, high),
        "standard_error": (dims, standard_error),
        "test": (dims, np.array(test, dtype=object)),
        "pvalue": (dims, pvalue),
        "pvalue_adjusted": (dims, adjusted),
        "b": (dims, b_count),
        "c": (dims, c_count),
        "mde": (dims, mde),
        "n_items": (dims, n_items),
        "n_unpaired": (dims, n_unpaired),
        "verdict": (dims, verdict),
        "n_templates": ("task", n_templates),
    }
    result = xr.Dataset(data, coords={dim: coords[dim] for dim in dims})
    result = xr.merge([result, log.dataset()], combine_attrs="drop")
    seed_attr = (
        "Generator"
        if isinstance(checked["seed"], np.random.Generator)
        else "None"
        if checked["seed"] is None
        else checked["seed"]
    )
    result.attrs = {
        "statistic": "compare",
        "a": name_a,
        "b": name_b,
        "score_kind": str(kinds["score_kind"]),
        "higher_is_better": str(kinds["higher_is_better"]),
        "metric": str(kinds["metric"]),
        "between": "" if between is None else str(dict(between)),
        "p_adjust": checked["p_adjust"],
        "family": "task",
        "alpha": checked["alpha"],
        "power": checked["power"],
        "confidence_level": checked["confidence_level"],
        "method": "percentile",
        "n_resamples": checked["n_resamples"],
        "seed": seed_attr,
        "over": over,
        "items_matched_by": matched_by,
        "dropped": log.summary(),
    }
    return result


def _normal_mde(standard_error, alpha, power):
    """Bloom's MDE; NaN where the replicates never vary (the runs never differ: no scale)."""
    from scipy import stats

    scale = np.where(standard_error > 0, standard_error, np.nan)
    return (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * scale


def _log_unpaired(log: _Log, n_unpaired, cells, coords) -> None:
    """One row per label and task with scores one run lacks on shared items."""
    for where in np.argwhere(n_unpaired > 0):
        label = ", ".join(str(coords[dim][i]) for dim, i in zip(cells, where[:-1], strict=True))
        count = int(n_unpaired[tuple(where)])
        log.rows.append(
            {
                "task": str(coords["task"][where[-1]]),
                "model": label,
                "what": "scores",
                "count": count,
                "which": "",
                "why": "one run lacks the score of a shared item",
            }
        )


# --------------------------------------------------------------------------- layout


def compare_tables(result: xr.Dataset) -> dict[str, pd.DataFrame]:
    """The result of :func:`compare` as tables: ``comparison`` and ``dropped``.

    Parameters
    ----------
    result : xarray.Dataset
        What :func:`compare` returns.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``comparison``: one row per model (and other label) and task, indexed
        by them; ``dropped``: the drop log, one row per thing left out (empty
        when nothing was).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.compare import compare_tables
    >>> records = [{"model": "m", "task": "t", "template": p, "sample": str(i),
    ...             "score": float(i % 2)} for p in ("x", "y") for i in range(10)]
    >>> cube = rankstats.from_records(records)
    >>> tables = compare_tables(rankstats.compare(cube, between={"template": ("x", "y")}, seed=0))
    >>> tables["comparison"]["verdict"].tolist(), len(tables["dropped"])
    (['no detectable difference'], 0)
    """
    cells = [d for d in result["difference"].dims]
    columns = [
        name
        for name in (
            "score_a",
            "score_b",
            "difference",
            "low",
            "high",
            "standard_error",
            "test",
            "pvalue",
            "pvalue_adjusted",
            "b",
            "c",
            "mde",
            "n_items",
            "n_unpaired",
            "verdict",
        )
    ]
    comparison = result[columns].to_dataframe()[columns]
    comparison = comparison.join(result["n_templates"].to_dataframe(), on="task")
    comparison = comparison.reorder_levels(cells) if len(cells) > 1 else comparison
    dropped = pd.DataFrame(
        {name: result[f"drop_{name}"].values for name in DROP_COLUMNS}, columns=list(DROP_COLUMNS)
    )
    return {"comparison": comparison, "dropped": dropped}


def _number(value, digits=3) -> str:
    value = float(value)
    return "" if np.isnan(value) else f"{value:.{digits}f}"


def _pvalue(value) -> str:
    value = float(value)
    return "" if np.isnan(value) else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _cell(value) -> str:
    """A markdown table cell: a label's own ``|`` (``default|run=2``) must not end the cell."""
    return str(value).replace("|", "\\|")


def compare_markdown(result: xr.Dataset) -> str:
    """The result of :func:`compare` as markdown: the comparisons, then what was dropped.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.analyses.compare import compare_markdown
    >>> records = [{"model": "m", "task": "t", "template": p, "sample": str(i),
    ...             "score": float(i % 2)} for p in ("x", "y") for i in range(10)]
    >>> cube = rankstats.from_records(records)
    >>> text = compare_markdown(rankstats.compare(cube, between={"template": ("x", "y")}, seed=0))
    >>> print(text.splitlines()[0])
    # A: template x vs B: template y
    >>> "Nothing was dropped" in text
    True
    """
    attrs = result.attrs
    lines = [
        f"# A: {attrs['a']} vs B: {attrs['b']}",
        "",
        f"Paired on shared items (matched by {attrs['items_matched_by']}); "
        f"{attrs['metric']}, {attrs['score_kind']}, "
        f"{'higher' if attrs['higher_is_better'] == 'True' else 'lower'} is better. "
        f"Difference A - B with its {attrs['confidence_level']:g} percentile bootstrap "
        f"interval ({attrs['n_resamples']} resamples over {attrs['over']}, seed "
        f"{attrs['seed']}); p-values adjusted by {attrs['p_adjust']} across tasks; "
        f"verdict at alpha {attrs['alpha']:g}; MDE: minimum detectable effect at power "
        f"{attrs['power']:g} (blank where the runs never differ).",
        "",
    ]
    table = compare_tables(result)["comparison"].reset_index()
    cells = [d for d in result["difference"].dims]
    header = [*cells, "items", "A", "B", "A - B [interval]", "test", "p", "p adj", "MDE", "verdict"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in table.itertuples(index=False):
        row = row._asdict()
        interval = f"{_number(row['difference'])} [{_number(row['low'])}, {_number(row['high'])}]"
        lines.append(
            "| "
            + " | ".join(
                [
                    *(_cell(row[d]) for d in cells),
                    str(int(row["n_items"])),
                    _number(row["score_a"]),
                    _number(row["score_b"]),
                    interval,
                    str(row["test"]),
                    _pvalue(row["pvalue"]),
                    _pvalue(row["pvalue_adjusted"]),
                    _number(row["mde"]),
                    str(row["verdict"]),
                ]
            )
            + " |"
        )
    lines.append("")
    dropped = compare_tables(result)["dropped"]
    if dropped.empty:
        lines.append(
            "Nothing was dropped: both runs have the same models, tasks, templates and items."
        )
    else:
        lines += [
            "## Dropped (not in both runs)",
            "",
            "| task | model | what | count | which | why |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            "| " + " | ".join(_cell(value) for value in row) + " |"
            for row in dropped.itertuples(index=False)
        ]
    return "\n".join(lines)
