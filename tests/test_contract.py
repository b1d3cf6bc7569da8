"""The calling contract every public statistic honours, checked from one table.

Each row of ``STATS`` is a statistic (with the options it is called with);
each test function is one clause of the contract:

* the xarray result equals the NumPy result;
* a dask-chunked input (along a non-core or a core dim) gives the eager
  result, lazily;
* one vectorised call over a ragged cube equals looping over its tasks;
* ``nan_policy`` on a genuine hole: propagate, omit (the documented
  deletion, recomputed on reduced data or by hand) and raise;
* the input's dimension order does not matter, and unknown dims are carried.

Test ids read ``test_<clause>[<statistic>]``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats.results import (
    BinomialTestResult,
    BonferroniDunnResult,
    ClusteredDifferenceResult,
    ClusteredSEResult,
    CochranQResult,
    DivergenceResult,
    DurbinResult,
    FriedmanResult,
    KendallTauResult,
    KendallWResult,
    McNemarResult,
    NemenyiResult,
    PairwiseMcNemarResult,
    PromptMetricsResult,
    SkillingsMackResult,
)

# --------------------------------------------------------------------------- data

MODELS = ("m0", "m1", "m2", "m3", "m4")
# task: (number of templates, number of samples); ragged on purpose
LAYOUT = {"t0": (4, 10), "t1": (3, 12), "t2": (5, 9)}
ABSENT = frozenset({("m4", "t1"), ("m2", "t2")})  # models never run on a task
# The genuine hole: model m1 on task t0, template t0-p1 (a paraphrase); at the
# sample level only sample t0-s3 is missing there.
HOLE_MODEL, HOLE_TASK, HOLE_TEMPLATE, HOLE_POSITION, HOLE_SAMPLE = "m1", "t0", "t0-p1", 1, "t0-s3"
SEED = 20240611


def make_records(seed: int, binary: bool) -> tuple[dict, ...]:
    """Long records of a ragged cube: binary correctness, or continuous scores in [0, 1]."""
    rng = np.random.default_rng(seed)
    records = []
    for model in MODELS:
        for task, (n_templates, n_samples) in LAYOUT.items():
            values = (
                (rng.random((n_templates, n_samples)) < 0.5).astype(float)
                if binary
                else rng.random((n_templates, n_samples))
            )
            if (model, task) in ABSENT:
                continue
            for p in range(n_templates):
                for s in range(n_samples):
                    records.append(
                        {
                            "model": model,
                            "task": task,
                            "template": f"{task}-p{p}",
                            "sample": f"{task}-s{s}",
                            "score": float(values[p, s]),
                            "template_is_original": p == 0,
                        }
                    )
    return tuple(records)


def is_hole(record: Mapping, level: str) -> bool:
    """Whether a record is removed to make the hole (a whole template, or one sample)."""
    at = (record["model"], record["task"], record["template"]) == (
        HOLE_MODEL,
        HOLE_TASK,
        HOLE_TEMPLATE,
    )
    return at and (level == "template" or record["sample"] == HOLE_SAMPLE)


@cache
def records_of(level: str, seed: int = SEED, hole: bool = False) -> tuple[dict, ...]:
    records = make_records(seed, binary=level == "sample")
    if hole:
        records = tuple(r for r in records if not is_hole(r, level))
    return records


@cache
def _cube(level: str, seed: int, hole: bool) -> xr.Dataset:
    return rankstats.from_records(list(records_of(level, seed, hole)))


def scores_of(level: str, seed: int = SEED, hole: bool = False) -> xr.DataArray:
    """The ``score`` DataArray (model, task, template, sample) of a test cube."""
    return _cube(level, seed, hole)["score"]


def cube_without(level: str, drop: Callable[[Mapping], bool]) -> xr.DataArray:
    """The complete (hole-free) cube with the records matching ``drop`` removed."""
    return rankstats.from_records([r for r in records_of(level) if not drop(r)])["score"]


@cache
def task_alone(level: str, task: str) -> xr.DataArray:
    """The scores of one task, built from its records alone: no padding, no absent model."""
    return rankstats.from_records([r for r in records_of(level) if r["task"] == task])["score"]


def pick(scores: xr.DataArray, position: int) -> xr.DataArray:
    """One template position of every task, without the coordinates naming templates."""
    by_template = [name for name, c in scores.coords.items() if "template" in c.dims]
    return scores.isel(template=position).drop_vars(by_template)


# --------------------------------------------------------------------------- table


def _hand_metrics(values: np.ndarray, original: np.ndarray) -> dict[str, float]:
    """MaxP, AvgP, saturation, CPS by hand over the observed templates of one model."""
    observed = values[~np.isnan(values)]
    best, mean = observed.max(), observed.mean()
    saturation = 1.0 - abs(best - mean)
    return {
        "maxp": best,
        "avgp": mean,
        "saturation": saturation,
        "cps": saturation * best,
        "n_templates": float(observed.size),
    }


def _hand_divergence(values: np.ndarray, original: np.ndarray) -> dict[str, float]:
    """The divergence by hand over the observed templates of one model."""
    seen = ~np.isnan(values)
    orig, para = values[seen & original], values[seen & ~original]
    std = para.std(ddof=1)
    return {
        "statistic": (orig.mean() - para.mean()) / std,
        "original": orig.mean(),
        "paraphrase_mean": para.mean(),
        "paraphrase_std": std,
        "n_original": float(orig.size),
        "n_paraphrases": float(para.size),
    }


def _drop_hole_task_template(record):
    return record["task"] == HOLE_TASK and record["template"] == HOLE_TEMPLATE


def _drop_hole_model_task(record):
    return record["task"] == HOLE_TASK and record["model"] == HOLE_MODEL


def _drop_hole_sample(record):
    return _drop_hole_model_task(record) and record["sample"] == HOLE_SAMPLE


def _drop_hole_cell(record):
    """The hole's (template, sample) cell, for every model."""
    return _drop_hole_task_template(record) and record["sample"] == HOLE_SAMPLE


def _hand_clustered(values: np.ndarray, original: np.ndarray) -> dict[str, float]:
    """The mean and its naive and CR1 standard errors by hand over one model's observed cells."""
    seen = ~np.isnan(values)
    y = values[seen]
    n, clusters = y.size, int(seen.any(axis=0).sum())
    residual = np.where(seen, values - y.mean(), 0.0)
    naive = (residual**2).sum() / (n * (n - 1))
    cluster = clusters / (clusters - 1) * (residual.sum(axis=0) ** 2).sum() / n**2
    return {
        "mean_score": y.mean(),
        "se_naive": np.sqrt(naive),
        "se_cluster": np.sqrt(cluster),
        "design_effect": cluster / naive,
        "n_cells": float(n),
        "n_clusters": float(clusters),
    }


def _hand_sensitivity(values: np.ndarray, original: np.ndarray) -> dict[str, float]:
    """ProSA's score by hand: each sample's mean |difference| over its observed template pairs."""
    per_sample = []
    for column in values.T:
        seen = column[~np.isnan(column)]
        pairs = [abs(a - b) for i, a in enumerate(seen) for b in seen[i + 1 :]]
        if pairs:
            per_sample.append(np.mean(pairs))
    return {"prompt_sensitivity": float(np.mean(per_sample))}


def _pvalues(scores: xr.DataArray) -> xr.DataArray:
    """Per-template scores in [0, 1], read as p-values (NaN: untested)."""
    return rankstats.template_scores(scores)


def _binomial_counts(scores: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray]:
    """Correct answers and answers per model, task and template: the binomial test's k and n."""
    return scores.fillna(0.0).sum("sample"), scores.notnull().sum("sample").astype(float)


def _adjusted_pairs(expected: dict) -> dict:
    """``pvalue_adjusted`` of pairwise_mcnemar recomputed from the expected raw p-values."""
    pvalue = expected["pvalue"]
    upper = xr.DataArray(
        np.triu(np.ones((pvalue.sizes["model"],) * 2, dtype=bool), 1), dims=("model", "model_b")
    )
    adjusted = rankstats.adjust_pvalues(pvalue.where(upper), "holm", family=("model", "model_b"))
    values = adjusted.transpose(..., "model", "model_b").values
    mirrored = np.where(upper.values, values, np.swapaxes(values, -1, -2))
    expected["pvalue_adjusted"] = (
        expected["pvalue_adjusted"].transpose(..., "model", "model_b").copy(data=mirrored)
    )
    return expected


@dataclass(frozen=True)
class Stat:
    """One public statistic and how to call it in both forms.

    ``core`` are the input dims the statistic works over, in the order the
    NumPy form expects them last; ``out_core`` the dims the output gains.
    ``pair`` statistics compare template position 0 (x) with position 1 (y).
    ``axes`` names the NumPy form's arguments for the core dims, in order.
    ``deletion`` is what ``nan_policy="omit"`` documents: "listwise" or
    "pairwise" (recomputed on the data reduced by ``reduce``) or "skip"
    (recomputed by hand with ``hand``); None when there is no nan_policy.
    """

    id: str
    func: Callable
    level: str  # "template": per-template scores; "sample": binary per-sample scores
    core: tuple[str, ...]
    axes: tuple[str, ...]
    out_core: tuple[str, ...] = ()
    kwargs: Mapping = field(default_factory=dict)  # options, both forms
    dims: Mapping = field(default_factory=dict)  # dimension names, labelled form
    np_dims: Mapping = field(default_factory=dict)  # dimension names, NumPy form
    pair: bool = False
    np_type: type | None = None
    deletion: str | None = None
    reduce: Callable | None = None
    hand: Callable | None = None
    nan_outputs: tuple[str, ...] = ("statistic", "pvalue")
    shaped_like_input: bool = False  # the output keeps the core axes where the input has them
    # what the statistic takes, if not the scores: p-values, or (k, n) counts
    prepare: Callable | None = None
    # how far the hole reaches: its cell (model, template), or its whole slice (task, and the
    # template when templates are a slice dim), for tests that rank within a slice
    scope: str = "cell"
    fix_expected: Callable | None = None  # recomputes derived outputs of the omit reference
    # the nan_policy of the reference run on the reduced cube: "omit" where the reduced cube
    # lacks the hole's cell for every model, which is still a hole for each of them
    reduce_policy: str = "propagate"

    def inputs(self, scores):
        if self.prepare is not None:
            prepared = self.prepare(scores)
            return prepared if isinstance(prepared, tuple) else (prepared,)
        return (pick(scores, 0), pick(scores, 1)) if self.pair else (scores,)

    def run(self, scores: xr.DataArray, **options):
        """The labelled form on a (sample-level) score DataArray."""
        return self.func(*self.inputs(scores), **self.dims, **self.kwargs, **options)

    def run_numpy(self, scores: xr.DataArray, *, core_first: bool = False, **options):
        """The NumPy form on the same data; returns (leading dims, result).

        The core axes come last, in the order the defaults expect; or, with
        ``core_first``, first and named by axis number.
        """
        if self.level == "template":
            scores = rankstats.template_scores(scores)
        inputs = self.inputs(scores)
        lead = [d for d in inputs[0].dims if d not in self.core]
        order, dims = [*lead, *self.core], dict(self.np_dims)
        if core_first:
            order = [*self.core, *lead]
            for role in dict.fromkeys(self.axes):  # a role of several axes repeats its name
                axes = tuple(i for i, name in enumerate(self.axes) if name == role)
                dims[role] = axes if len(axes) > 1 else axes[0]
        arrays = [x.transpose(*order).values for x in inputs]
        extra = {}
        if self.func is rankstats.divergence:
            mask = xr.broadcast(scores.template_is_original, scores)[0].isel(model=0)
            extra["original"] = mask.transpose(*lead, "template").values
        return lead, self.func(*arrays, **dims, **self.kwargs, **extra, **options)


def _metric(func, hand=_hand_metrics, nan_outputs=("value",), np_type=None, **kwargs):
    return Stat(
        func.__name__,
        func,
        "template",
        ("model", "template"),
        ("model", "template"),
        ("model",),
        kwargs=kwargs,
        np_type=np_type,
        deletion="skip",
        hand=hand,
        nan_outputs=nan_outputs,
    )


def _block_test(func, np_type, control=False, **kwargs):
    """A post-hoc or incomplete-design test: templates as blocks, models as treatments."""
    listwise = "nan_policy" in inspect.signature(func).parameters
    return Stat(
        func.__name__,
        func,
        "template",
        ("template", "model"),
        ("blocks", "treatments"),
        kwargs=kwargs,
        dims={"blocks": "template", **({"control": "m0"} if control else {})},
        np_dims={"control": 0} if control else {},
        np_type=np_type,
        deletion="listwise" if listwise else None,
        reduce=_drop_hole_task_template if listwise else None,
        scope="slice",
    )


_TAU = {"level": "template", "np_type": KendallTauResult, "deletion": "pairwise"}

STATS = [
    Stat(
        "rank",
        rankstats.rank,
        "template",
        ("model",),
        ("dim",),
        ("model",),
        kwargs={"ties": "min"},
        nan_outputs=("value",),
        shaped_like_input=True,
    ),
    Stat(
        "kendall_w",
        rankstats.kendall_w,
        "template",
        ("template", "model"),
        ("judges", "objects"),
        np_type=KendallWResult,
        deletion="listwise",
        reduce=_drop_hole_task_template,
    ),
    Stat(
        "kendall_w-min-uncorrected",
        rankstats.kendall_w,
        "template",
        ("template", "model"),
        ("judges", "objects"),
        kwargs={"ties": "min", "tie_correction": False},
        np_type=KendallWResult,
        deletion="listwise",
        reduce=_drop_hole_task_template,
    ),
    Stat(
        "kendall_w-samples-rank-templates",
        rankstats.kendall_w,
        "sample",
        ("sample", "template"),
        ("judges", "objects"),
        dims={"judges": "sample", "objects": "template"},
        np_type=KendallWResult,
        deletion="listwise",
        reduce=_drop_hole_sample,
    ),
    Stat(
        "kendall_tau",
        rankstats.kendall_tau,
        core=("model",),
        axes=("dim",),
        pair=True,
        reduce=_drop_hole_model_task,
        **_TAU,
    ),
    Stat(
        "kendall_tau-c-asymptotic",
        rankstats.kendall_tau,
        core=("model",),
        axes=("dim",),
        pair=True,
        kwargs={"variant": "c", "method": "asymptotic"},
        reduce=_drop_hole_model_task,
        **_TAU,
    ),
    Stat(
        "kendall_tau_matrix",
        rankstats.kendall_tau_matrix,
        core=("template", "model"),
        axes=("pairs_over", "objects"),
        out_core=("template", "template_b"),
        reduce=_drop_hole_model_task,
        **_TAU,
    ),
    Stat(
        "friedman",
        rankstats.friedman,
        "template",
        ("model", "template"),
        ("blocks", "treatments"),
        np_type=FriedmanResult,
        deletion="listwise",
        reduce=_drop_hole_model_task,
    ),
    *[
        Stat(
            f"mcnemar-{method}",
            rankstats.mcnemar,
            "sample",
            ("sample",),
            ("dim",),
            kwargs={"method": method},
            dims={"dim": "sample"},
            pair=True,
            np_type=McNemarResult,
            deletion="pairwise",
            reduce=_drop_hole_sample,
        )
        for method in ("exact", "midp", "chi2", "chi2_cc")
    ],
    *[
        Stat(
            f"mcnemar-pairs-{method}",
            rankstats.mcnemar,
            "sample",
            ("template", "sample"),
            ("pairs_over", "dim"),
            ("template", "template_b"),
            kwargs={"method": method},
            dims={"dim": "sample", "pairs_over": "template"},
            np_dims={"pairs_over": "template"},
            np_type=McNemarResult,
            deletion="pairwise",
            reduce=_drop_hole_sample,
        )
        for method in ("exact", "midp", "chi2", "chi2_cc")
    ],
    Stat(
        "cochran_q",
        rankstats.cochran_q,
        "sample",
        ("sample", "template"),
        ("blocks", "treatments"),
        np_type=CochranQResult,
        deletion="listwise",
        reduce=_drop_hole_sample,
    ),
    _metric(rankstats.maxp),
    _metric(rankstats.avgp),
    _metric(rankstats.saturation),
    _metric(rankstats.cps),
    _metric(
        rankstats.prompt_metrics,
        nan_outputs=("maxp", "avgp", "saturation", "cps"),
        np_type=PromptMetricsResult,
    ),
    _metric(
        rankstats.divergence,
        _hand_divergence,
        ("statistic", "original", "paraphrase_mean", "paraphrase_std"),
        DivergenceResult,
        ddof=1,
    ),
    _block_test(rankstats.nemenyi, NemenyiResult, ties="min", alpha=0.1),
    _block_test(rankstats.bonferroni_dunn, BonferroniDunnResult, control=True, p_adjust="holm"),
    _block_test(rankstats.durbin, DurbinResult, ties="average"),
    _block_test(rankstats.skillings_mack, SkillingsMackResult, tie_correction=False),
    Stat(
        "adjust_pvalues",
        rankstats.adjust_pvalues,
        "template",
        ("model", "template"),
        ("family", "family"),
        ("model", "template"),
        kwargs={"p_adjust": "bh"},
        dims={"family": ("model", "template")},
        np_dims={"family": (-2, -1)},
        prepare=_pvalues,
        nan_outputs=("value",),
        shaped_like_input=True,
    ),
    Stat(
        "pairwise_mcnemar",
        rankstats.pairwise_mcnemar,
        "sample",
        ("model", "sample"),
        ("pairs_over", "dim"),
        ("model", "model_b"),
        kwargs={"p_adjust": "holm"},
        np_type=PairwiseMcNemarResult,
        deletion="pairwise",
        reduce=_drop_hole_cell,
        fix_expected=_adjusted_pairs,
    ),
    Stat(
        "clustered_se",
        rankstats.clustered_se,
        "sample",
        ("template", "sample"),
        ("template", "sample"),
        kwargs={"small_sample": True},
        np_type=ClusteredSEResult,
        deletion="skip",
        hand=_hand_clustered,
        nan_outputs=("mean_score", "se_naive", "se_cluster", "design_effect"),
    ),
    Stat(
        "clustered_difference",
        rankstats.clustered_difference,
        "sample",
        ("model", "template", "sample"),
        ("pairs_over", "template", "sample"),
        ("model", "model_b"),
        kwargs={"small_sample": False, "use_t": True},
        np_type=ClusteredDifferenceResult,
        deletion="pairwise",
        reduce=_drop_hole_cell,
        reduce_policy="omit",
    ),
    Stat(
        "prompt_sensitivity",
        rankstats.prompt_sensitivity,
        "sample",
        ("template", "sample"),
        ("template", "sample"),
        deletion="skip",
        hand=_hand_sensitivity,
        nan_outputs=("value",),
    ),
    Stat(
        "binomial_test",
        rankstats.binomial_test,
        "sample",
        (),
        (),
        kwargs={"alternative": "greater"},
        np_type=BinomialTestResult,
        prepare=_binomial_counts,
    ),
]

#: What rankstats exports that is not a statistic of data, and so has no row.
NOT_STATISTICS = {
    # errors, warnings, the version, modules
    "CoordinateMismatchError",
    "CubeError",
    "DimensionError",
    "DuplicateKeyError",
    "MissingValueError",
    "RankstatsError",
    "RankstatsWarning",
    "ScoreValueError",
    "__version__",
    "datasets",
    "stability",
    # the cube: build, check, read, write
    "from_records",
    "template_scores",
    "validate",
    "save",
    "open_cube",
    # analyses composed of statistics (tests/test_report.py, test_edits.py, test_verbalizer.py,
    # test_budget.py)
    "report",
    "compare",
    "check_claims",  # tests/test_claims.py
    "minimal_edits",
    "edit_pairs",
    "edit_rules",
    "largest_edits",
    "describe_edit",
    "verbalizer_analysis",
    "estimate_avgp",
    "estimate_maxp",
    "simulate_avgp",
    "simulate_maxp",
    # the distribution across templates from a partial design, and the samples most sensitive
    # to wording (tests/test_irt.py, test_sensitivity.py)
    "estimate_distribution",
    "planted_cube",
    "random_design",
    "simulate_estimators",
    "sensitive_samples",
    "posix",
    # resampling and design planning (tests/test_stability.py, test_templates_needed.py)
    "samples_needed",
    "smallest_k",
    "templates_needed",
    # generalizability theory (tests/test_variance_components.py, test_plan.py)
    "variance_components",
    "plan",
    # helpers of numbers or of a result, not of data (tests/test_posthoc.py)
    "critical_difference",
    "nonsignificant_groups",
}


def table(check: str, keep: Callable[[Stat], bool] = lambda stat: True) -> list:
    """The rows of STATS for one check."""
    return [pytest.param(stat, id=stat.id) for stat in STATS if keep(stat)]


# --------------------------------------------------------------------------- helpers


def outputs(result) -> dict:
    """A result's outputs by name: Dataset variables, result fields, dict items, or one array."""
    if isinstance(result, xr.Dataset):
        return {name: result[name] for name in result.data_vars}
    if isinstance(result, (xr.DataArray, np.ndarray)):
        return {"value": result}
    if isinstance(result, dict):
        return dict(result)
    return result.to_dict()


def assert_close(actual, expected, what: str = "") -> None:
    """Equal to 1e-12, NaN where the other is NaN, same shape."""
    actual, expected = np.asarray(actual, dtype=float), np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(
        actual, expected, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=what
    )


def assert_same_result(actual, expected) -> None:
    """Two labelled results with the same outputs, dims, coordinates and values."""
    got, want = outputs(actual), outputs(expected)
    assert set(got) == set(want)
    for name, value in want.items():
        assert set(got[name].dims) == set(value.dims), name
        xr.testing.assert_allclose(got[name].transpose(*value.dims), value, rtol=1e-12, atol=1e-12)


def affected(var: xr.DataArray, stat: Stat) -> xr.DataArray:
    """Where a result depends on the hole: its task, model and template (either side of a pair).

    A statistic that ranks within a slice (``scope="slice"``) is affected everywhere in the
    hole's task, and at the hole's template where templates are a slice dimension.
    """
    mask = var.task == HOLE_TASK
    at = {
        "model": lambda d: var[d] == HOLE_MODEL,
        "template": lambda d: xr.DataArray(np.arange(var.sizes[d]) == HOLE_POSITION, dims=d),
    }
    for dim, where in at.items():
        sides = [d for d in (dim, f"{dim}_b") if d in var.dims]
        if not sides or (stat.scope == "slice" and dim in stat.core):
            continue
        mask = mask & functools.reduce(operator.or_, [where(d) for d in sides])
    return mask.broadcast_like(var).transpose(*var.dims)


_EVALUATED: list[tuple[int, ...]] = []


def _noting(block: np.ndarray) -> np.ndarray:
    """Identity on a block of scores, noting that it was evaluated."""
    _EVALUATED.append(block.shape)
    return block


def lazily_chunked(scores: xr.DataArray, chunks: Mapping[str, int]) -> xr.DataArray:
    """``scores.chunk(chunks)`` whose score blocks note when they are evaluated."""
    chunked = scores.chunk(chunks)
    return chunked.copy(data=chunked.data.map_blocks(_noting, dtype=float))


def test_table_covers_every_public_statistic():
    statistics = set(rankstats.__all__) - NOT_STATISTICS
    assert NOT_STATISTICS <= set(rankstats.__all__), "a non-statistic is no longer exported"
    missing = statistics - {stat.func.__name__ for stat in STATS}
    assert not missing, f"statistics without a row in STATS: {sorted(missing)}"
    assert {stat.func.__name__ for stat in STATS} == statistics
    assert {
        "rank",
        "kendall_w",
        "friedman",
        "nemenyi",
        "adjust_pvalues",
        "binomial_test",
        "clustered_se",
    } <= statistics
    # mcnemar in both forms with every method
    forms = {
        (bool(stat.dims.get("pairs_over")), stat.kwargs["method"])
        for stat in STATS
        if stat.func is rankstats.mcnemar
    }
    assert forms == {(f, m) for f in (False, True) for m in ("exact", "midp", "chi2", "chi2_cc")}


# --------------------------------------------------------------------------- (a) xarray == NumPy


@pytest.mark.parametrize("stat", table("xarray"))
def test_xarray_equals_numpy(stat):
    scores = scores_of(stat.level)
    labelled = outputs(stat.run(scores))
    lead, result = stat.run_numpy(scores)
    if stat.np_type is not None:
        assert isinstance(result, stat.np_type)
    plain = outputs(result)
    assert set(plain) == set(labelled)
    for name, var in labelled.items():
        assert isinstance(var, xr.DataArray)
        assert_close(var.transpose(*lead, ...).values, plain[name], name)
    # the labelled result keeps the labels of the leading dims
    for name, var in labelled.items():
        for dim in ("model", "task"):
            if dim in var.dims:
                assert list(var[dim].values) == list(scores[dim].values), (name, dim)
    # a whole cube (Dataset) reads its score variable
    if not stat.pair and stat.prepare is None:
        assert_same_result(stat.run(_cube(stat.level, SEED, False)), stat.run(scores))


@pytest.mark.parametrize("stat", table("axes_by_number"))
def test_numpy_axes_by_number(stat):
    """NumPy input with the core axes first, named by axis number, is the same statistic."""
    scores = scores_of(stat.level)
    _, default = stat.run_numpy(scores)
    _, by_number = stat.run_numpy(scores, core_first=True)
    for name, value in outputs(default).items():
        got = outputs(by_number)[name]
        if stat.shaped_like_input:
            first = list(range(len(stat.core)))
            got = np.moveaxis(got, first, [i - len(first) for i in first])
        assert_close(got, value, name)


@pytest.mark.parametrize("stat", table("frozen", lambda stat: stat.np_type is not None))
def test_numpy_result_is_frozen(stat):
    _, result = stat.run_numpy(scores_of(stat.level))
    with pytest.raises(AttributeError):
        result.statistic = 0.0


# --------------------------------------------------------------------------- (b) dask


@pytest.mark.parametrize("chunking", ["task", "core"])
@pytest.mark.parametrize("stat", table("dask"))
def test_dask_equals_eager_and_is_lazy(stat, chunking):
    if chunking == "core" and not stat.core:
        pytest.skip("no core dimension to chunk")
    scores = scores_of(stat.level)
    eager = stat.run(scores)
    chunks = {"task": 1} if chunking == "task" else dict.fromkeys(stat.core, 2)
    chunked = lazily_chunked(scores, chunks)
    assert chunked.chunks is not None
    _EVALUATED.clear()
    lazy = stat.run(chunked)
    assert not _EVALUATED, "the statistic evaluated scores before being computed"
    for name, var in outputs(lazy).items():
        assert isinstance(var.data, da.Array), f"{name} is not a dask array"
    assert_same_result(lazy.compute(), eager)


ran_on: list[str] = []


def _note_worker(block: np.ndarray) -> np.ndarray:
    """Identity on a block of scores, noting the worker that evaluates it."""
    from distributed import get_worker

    ran_on.append(get_worker().address)
    return block


def on_worker(chunked: xr.DataArray) -> xr.DataArray:
    """The same chunked scores, noting the address of the worker that evaluates each block."""
    return chunked.copy(data=chunked.data.map_blocks(_note_worker, dtype=float))


def test_distributed_scheduler_runs_every_statistic():
    distributed = pytest.importorskip("distributed")
    failures = []
    with (
        distributed.LocalCluster(
            processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        stats = list(STATS)
        chunks = {"task": 1}
        lazy = [stat.run(on_worker(scores_of(stat.level).chunk(chunks))) for stat in stats]
        ran_on.clear()
        computed = client.compute(lazy, sync=True)  # one graph, run by the cluster
        assert set(ran_on) == {cluster.workers[0].address}
        for stat, result in zip(stats, computed, strict=True):
            try:
                assert_same_result(result, stat.run(scores_of(stat.level)))
            except AssertionError as error:  # collect, to name every failing statistic
                failures.append(f"{stat.id}: {error}")
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------ (c) vectorised == looped


@pytest.mark.parametrize("stat", table("structure_quiet"))
def test_structure_alone_does_not_warn(stat):
    """Absent models and padding are not degenerate slices: no RankstatsWarning for them."""
    scores = scores_of(stat.level)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rankstats.RankstatsWarning)
        stat.run_numpy(scores)
        stat.run(scores)
        for task in LAYOUT:  # and indeed each task alone does not warn
            stat.run(task_alone(stat.level, task))


@pytest.mark.parametrize("stat", table("looped"))
def test_vectorised_equals_looped_over_tasks(stat):
    full = outputs(stat.run(scores_of(stat.level)))
    for task in LAYOUT:
        alone = task_alone(stat.level, task)
        assert alone.sizes["template"] == LAYOUT[task][0]  # no padding left
        looped = outputs(stat.run(alone))
        for name, var in looped.items():
            whole = full[name].sel(task=[task])
            part = whole
            if "model" in var.dims:
                assert {(m, task) for m in MODELS if m not in var.model} <= ABSENT
                part = part.sel(model=var.model.values)
            if "model_b" in var.dims:
                part = part.sel(model_b=var.model_b.values)
            for dim in ("template", "template_b"):
                if dim in var.dims:
                    part = part.isel({dim: slice(0, var.sizes[dim])})
            part = part.transpose(*var.dims)
            assert_close(part.values, var.values, f"{name} on {task}")
            for coord in ("template_id", "template_id_b"):
                if coord in var.coords:
                    assert part[coord].values.tolist() == var[coord].values.tolist()
            if name in stat.nan_outputs:
                # absent models and padded templates: NaN, never a number
                structure = xr.zeros_like(whole, dtype=bool)
                for dim in ("model", "model_b"):
                    if dim in whole.dims:
                        structure = structure | ~whole[dim].isin(var.model.values)
                for dim in ("template", "template_b"):
                    if dim in whole.dims:
                        structure = structure | xr.DataArray(
                            np.arange(whole.sizes[dim]) >= var.sizes[dim], dims=dim
                        )
                assert bool(whole.where(structure).isnull().all()), f"{name} on {task}"


# --------------------------------------------------------------------------- (d) nan_policy


def _has_nan_policy(stat: Stat) -> bool:
    return stat.deletion is not None


def _hole_free_at_hole(name, base, stat) -> None:
    """The hole-free result has numbers where the hole will be, so NaN there means something."""
    var = base[name]
    assert bool(var.where(affected(var, stat)).notnull().any()), name


@pytest.mark.parametrize("stat", table("propagate", _has_nan_policy))
def test_nan_policy_propagate_is_nan_exactly_at_the_hole(stat):
    base = outputs(stat.run(scores_of(stat.level)))
    holed = outputs(stat.run(scores_of(stat.level, hole=True), nan_policy="propagate"))
    for name in stat.nan_outputs:
        _hole_free_at_hole(name, base, stat)
        var = holed[name]
        at_hole = affected(var, stat)
        assert bool(var.where(at_hole).isnull().all()), f"{name}: a number at the hole"
        xr.testing.assert_allclose(
            var.where(~at_hole), base[name].where(~at_hole), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize("stat", table("omit", _has_nan_policy))
def test_nan_policy_omit_is_the_documented_deletion(stat):
    base = outputs(stat.run(scores_of(stat.level)))
    holed = outputs(stat.run(scores_of(stat.level, hole=True), nan_policy="omit"))
    if stat.deletion in ("listwise", "pairwise"):
        reduced = outputs(
            stat.run(cube_without(stat.level, stat.reduce), nan_policy=stat.reduce_policy)
        )
    else:  # skip: by hand, over the cells this model has
        values = scores_of(stat.level, hole=True)
        if stat.level == "template":
            values = rankstats.template_scores(values)
        values = values.sel(model=HOLE_MODEL, task=HOLE_TASK)
        original = values.template_is_original.values.astype(bool)
        values = values.transpose("template", ...).values
        hand = stat.hand(values, original)
    expected_all = {}
    for name, var in holed.items():
        expected = base[name].transpose(*var.dims)
        at_hole = affected(var, stat)
        if stat.deletion == "skip":
            key = stat.func.__name__ if name == "value" else name
            expected = expected.where(~at_hole, hand[key])
        else:
            other = reduced[name].transpose(*var.dims)
            for dim in ("model", "task"):
                if dim in var.dims:
                    assert other[dim].values.tolist() == var[dim].values.tolist()
            expected = expected.copy(data=np.where(at_hole.values, other.values, expected.values))
        if name == "n_dropped":  # McNemar counts the hole, in each pair it takes part in
            expected = expected + (at_hole & holed["b"].notnull().transpose(*var.dims))
        expected_all[name] = expected
    if stat.fix_expected is not None:
        expected_all = stat.fix_expected(expected_all)
    for name, var in holed.items():
        assert_close(var.values, expected_all[name].transpose(*var.dims).values, name)


@pytest.mark.parametrize("stat", table("raise", _has_nan_policy))
def test_nan_policy_raise_on_a_hole_but_not_on_structure(stat):
    with pytest.raises(rankstats.MissingValueError):
        stat.run(scores_of(stat.level, hole=True), nan_policy="raise")
    # absent models and padding are structure, not missing values
    scores = scores_of(stat.level)
    assert_same_result(stat.run(scores, nan_policy="raise"), stat.run(scores))
    assert_same_result(stat.run(scores, nan_policy="omit"), stat.run(scores))


# --------------------------------------------------------------------------- (e), (f) dims


@pytest.mark.parametrize("stat", table("dim_order"))
def test_dimension_order_does_not_matter(stat):
    scores = scores_of(stat.level)
    flipped = scores.transpose(*reversed(scores.dims))
    assert flipped.dims != scores.dims
    assert_same_result(stat.run(flipped), stat.run(scores))


@pytest.mark.parametrize("stat", table("extra_dims"))
def test_unknown_dims_are_carried_along(stat):
    per_seed = [scores_of(stat.level, seed=seed) for seed in (SEED, SEED + 1)]
    stacked = xr.concat(per_seed, dim=pd.Index(["a", "b"], name="seed"))
    stacked = stacked.transpose("model", "seed", "task", "template", "sample")
    result = outputs(stat.run(stacked))
    for label, scores in zip(("a", "b"), per_seed, strict=True):
        alone = outputs(stat.run(scores))
        for name, var in result.items():
            assert "seed" in var.dims, name
            assert var.seed.values.tolist() == ["a", "b"]
            xr.testing.assert_allclose(
                var.sel(seed=label, drop=True).transpose(*alone[name].dims),
                alone[name],
                rtol=1e-12,
                atol=1e-12,
            )
    # the seeds differ, so the check above cannot pass by accident
    first = next(iter(result.values()))
    assert not first.sel(seed="a").equals(first.sel(seed="b"))


# --------------------------------------------------------------------------- attrs, names, errors

_RECORDED = (
    "method",
    "ties",
    "tie_correction",
    "nan_policy",
    "variant",
    "p_adjust",
    "alpha",
    "small_sample",
    "use_t",
    "alternative",
    "ddof",
)


@pytest.mark.parametrize("stat", table("attrs"))
def test_attrs_record_the_options(stat):
    options = {"nan_policy": "omit"} if stat.deletion else {}
    result = stat.run(scores_of(stat.level), **options)
    recorded = {**stat.kwargs, **options}
    assert recorded or stat.func is rankstats.rank
    for key, value in recorded.items():
        assert key in _RECORDED
        want = str(value) if isinstance(value, bool) else value
        assert result.attrs.get(key) == want, (key, result.attrs)
    if stat.func is rankstats.kendall_w or stat.func is rankstats.friedman:
        assert result.attrs["ties"] == stat.kwargs.get("ties", "average")
        assert result.attrs["tie_correction"] == str(stat.kwargs.get("tie_correction", True))
    if stat.func is rankstats.mcnemar:
        assert result.attrs["method"] == stat.kwargs["method"]
    if isinstance(result, xr.Dataset) or stat.func is not rankstats.rank:
        assert result.attrs["statistic"] == stat.func.__name__


@pytest.mark.parametrize("stat", table("pair_dim", lambda stat: "template_b" in stat.out_core))
def test_pair_matrices_name_the_new_dim(stat):
    scores = scores_of(stat.level)
    result = stat.run(scores)
    for name, var in outputs(result).items():
        assert var.dims[-2:] == ("template", "template_b"), name
    assert result.template_id_b.dims == ("task", "template_b")
    assert result.template_id_b.values.tolist() == scores.template_id.values.tolist()
    assert result.template_id.dims == ("task", "template")
    swapped = result.statistic.rename(template="template_b", template_b="template")
    swapped = swapped.drop_vars(["template_id", "template_id_b"])
    assert_close(swapped.transpose(*result.statistic.dims).values, result.statistic.values)


def _mismatched_pair(stat, scores):
    x, y = stat.inputs(scores)
    return x, y.assign_coords(model=list(reversed(y.model.values)))


def _mismatched_samples(stat, scores):
    x, y = stat.inputs(scores)
    ids = scores.sample_id.values.copy()
    ids[0, [0, 1]] = ids[0, [1, 0]]
    return x, y.assign_coords(sample_id=(("task", "sample"), ids))


def _mismatched_mask(stat, scores):
    mask = xr.DataArray(
        np.ones((3, scores.sizes["template"]), dtype=bool),
        dims=("task", "template"),
        coords={"task": ["t0", "t1", "tX"]},
    )
    key = "original" if stat.func is rankstats.divergence else "valid"
    return (scores,), {key: mask}


def _mismatches(stat: Stat) -> tuple:
    if stat.pair:
        return (
            (_mismatched_pair, _mismatched_samples)
            if stat.level == "sample"
            else (_mismatched_pair,)
        )
    return (_mismatched_mask,) if "valid" in inspect.signature(stat.func).parameters else ()


MISMATCHES = [
    pytest.param(stat, how, id=f"{stat.id}-{how.__name__.strip('_')}")
    for stat in STATS
    for how in _mismatches(stat)
]


@pytest.mark.parametrize(("stat", "how"), MISMATCHES)
def test_mismatched_coordinates_raise(stat, how):
    made = how(stat, scores_of(stat.level))
    inputs, options = made if isinstance(made[-1], dict) else (made, {})
    with pytest.raises(rankstats.CoordinateMismatchError):
        stat.func(*inputs, **stat.dims, **stat.kwargs, **options)


@pytest.mark.parametrize("stat", table("missing_dim", lambda stat: bool(stat.core)))
def test_missing_dim_raises_naming_it(stat):
    dim = stat.core[0]
    scores = scores_of(stat.level).rename({dim: "elsewhere"})
    with pytest.raises(rankstats.DimensionError) as caught:
        stat.run(scores)
    assert repr(dim) in str(caught.value)


# --------------------------------------------------------------------------- options, eagerly

BAD = "not-an-allowed-value"


def _decorated() -> list:
    """Every exported function defined through the statistic decorator, with its options."""
    found = []
    for name in sorted(rankstats.__all__):
        spec = getattr(getattr(rankstats, name, None), "__rankstats_statistic__", None)
        if spec is not None:
            found += [
                pytest.param(name, option, id=f"{name}-{option}") for option in spec["options"]
            ]
    return found


def _call_with(name: str, data, option: str):
    """Call ``name`` with ``data`` for every required argument and a bad value of ``option``."""
    function = getattr(rankstats, name)
    required = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return function(*[data] * len(required), **{option: BAD})


def test_every_statistic_goes_through_the_decorator():
    """Each row's function is defined by the statistic decorator and declares options to check."""
    for stat in STATS:
        spec = getattr(stat.func, "__rankstats_statistic__", None)
        assert spec is not None, f"{stat.id}: not defined through rankstats._statistic.statistic"
        assert spec["options"], f"{stat.id}: declares no option"


@pytest.mark.parametrize(("name", "option"), _decorated())
def test_a_bad_option_raises_before_any_work(name, option):
    """NumPy, xarray and dask input alike: a RankstatsError naming the option, nothing computed."""
    scores = scores_of("sample")
    for data in (scores.values, scores, lazily_chunked(scores, {"task": 1})):
        _EVALUATED.clear()
        with pytest.raises(rankstats.RankstatsError, match=f"{option}={BAD!r}"):
            _call_with(name, data, option)
        assert not _EVALUATED, f"{name} evaluated the scores before checking {option}"


# ------------------------------------------------------------------- options, as NumPy hands them

#: How to call the decorated functions that have no row in STATS (resampling and design
#: planning): the level of their data and the options that keep them small and reproducible.
_OTHER_CALLS = {
    "templates_needed": Stat(
        "templates_needed",
        rankstats.templates_needed,
        "template",
        ("template", "model"),
        ("template", "model"),
        kwargs={"ks": (1, 2), "n_resamples": 5, "seed": 1},
    ),
    "samples_needed": Stat(
        "samples_needed",
        rankstats.samples_needed,
        "sample",
        ("sample", "template", "model"),
        ("sample", "template", "model"),
        kwargs={"ns": (1, 2), "n_resamples": 5, "seed": 1},
    ),
}


def _row_of(name: str) -> Stat:
    """The first STATS row of a decorated function, else its entry in ``_OTHER_CALLS``."""
    rows = [stat for stat in STATS if stat.func.__name__ == name]
    if rows:
        return rows[0]
    assert name in _OTHER_CALLS, f"{name}: no row in STATS nor in _OTHER_CALLS to call it with"
    return _OTHER_CALLS[name]


def _plain_values(name: str, option: str, given) -> list:
    """The plain Python values to try for ``option``, the most telling first.

    Derived from the declaration: a choice tries the row's value, then every allowed value
    other than the default (so a NumPy value that were silently dropped for the default
    would show), then the default; a bool its non-default; other kinds the row's value or
    the default (0 for a seed).
    """
    function = getattr(rankstats, name)
    check = function.__rankstats_statistic__["options"][option]
    default = inspect.signature(function).parameters[option].default
    kind = getattr(check, "kind", None)
    if kind == "text":
        ordered = [given, *(a for a in check.allowed if a != default), default]
    elif kind == "bool":
        ordered = [given, (not default) if isinstance(default, bool) else False]
    elif kind == "seed":
        ordered = [given, 0]
    else:
        ordered = [given, default]
    values = [v for v in dict.fromkeys(ordered, None) if v is not None]
    assert values, (
        f"{name}: option {option!r} has no kind ({kind!r}) and no default to try; "
        "give its check a kind in rankstats._options"
    )
    return values


def _numpy_form(value):
    """The value as NumPy hands it: numpy.str_, numpy.bool_, numpy.int64, numpy.float64, array."""
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, str):
        return np.str_(value)
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    raise AssertionError(f"no NumPy form for {value!r}")


def _same_attrs(got: Mapping, want: Mapping) -> None:
    assert set(got) == set(want), (sorted(got), sorted(want))
    for key, value in want.items():
        assert type(got[key]) is type(value), (key, type(got[key]), type(value))
        assert np.array_equal(np.asarray(got[key]), np.asarray(value)), (key, got[key], value)


def _with(stat: Stat, option: str, value) -> Stat:
    return dataclasses.replace(stat, kwargs={**stat.kwargs, option: value})


@pytest.mark.parametrize(("name", "option"), _decorated())
def test_options_take_numpy_scalars(name, option):
    """numpy.str_, numpy.bool_, numpy.int64 give what the plain Python value gives.

    The attrs record the plain value (a ``str``, not a ``numpy.str_``); labelled and NumPy
    input alike. Every option of every decorated function is covered, from its declaration.
    """
    stat = _row_of(name)
    scores = scores_of(stat.level)
    for plain in _plain_values(name, option, stat.kwargs.get(option)):
        try:
            expected = _with(stat, option, plain).run(scores)
        except (rankstats.RankstatsError, rankstats.RankstatsWarning):
            continue  # a value this row's data or other options do not go with
        break
    else:
        pytest.fail(f"{name}: no value of {option} runs on the contract cube")
    numpy_value = _numpy_form(plain)
    got = _with(stat, option, numpy_value).run(scores)
    if isinstance(expected, xr.Dataset):
        assert_same_result(got, expected)
    else:
        xr.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    _same_attrs(got.attrs, expected.attrs)
    if name in _OTHER_CALLS:
        return
    _, numpy_expected = _with(stat, option, plain).run_numpy(scores)
    _, numpy_got = _with(stat, option, numpy_value).run_numpy(scores)
    for field_name, value in outputs(numpy_expected).items():
        assert_close(outputs(numpy_got)[field_name], value, field_name)


@pytest.mark.parametrize("stat", table("numpy_roles"))
def test_roles_take_numpy_strings(stat):
    """Dimension names given as numpy.str_ name the same dims, recorded as plain text."""
    parameters = inspect.signature(stat.func).parameters
    named = {
        role: parameters[role].default
        for role in stat.func.__rankstats_statistic__["roles"]
        if isinstance(parameters[role].default, str)
    }
    named.update(stat.dims)
    named = {role: np.str_(dim) if isinstance(dim, str) else dim for role, dim in named.items()}
    if not any(isinstance(dim, np.str_) for dim in named.values()):
        pytest.skip("no role named by one dimension")
    scores = scores_of(stat.level)
    expected = stat.run(scores)
    got = stat.func(*stat.inputs(scores), **{**stat.dims, **named}, **stat.kwargs)
    if isinstance(expected, xr.Dataset):
        assert_same_result(got, expected)
    else:
        xr.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    _same_attrs(got.attrs, expected.attrs)
