"""Reproduce the tables of Mizrahi et al. (2024) from their released accuracies.

Each published table is recomputed under every convention that could have
produced it (source copy of the accuracies, template filter, tie method, tie
correction, orientation, ...); the convention that reproduces most cells is
reported, with a verdict per cell, the other conventions that explain a
mismatching cell, and the value rankstats' standard statistics give. No
number is adjusted to fit.
"""

from __future__ import annotations

import itertools
import json
import re
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .. import datasets
from ..errors import RankstatsWarning
from ..statistics.concordance import kendall_tau, kendall_w, rank
from ..statistics.metrics import prompt_metrics
from ..statistics.significance import friedman
from ._compare import Comparison, search

__all__ = ["LEGEND", "PUBLISHED", "published", "reproduce"]

PUBLISHED = Path(__file__).with_name("mizrahi2024_published.json")
TIES = ("average", "min", "max", "dense", "ordinal")
SOURCES = ("csv", "json")
# the release flags correct templates twice: in its paraphrase CSVs and in its JSON copy
VALID = ("valid", "valid (JSON flags)")
TEMPLATES = ("all", *VALID)
BENCHMARKS = {"lmentry": "LMentry", "bbh": "BBH"}
LEGEND = (
    "Conventions: source=csv reads the release's per-template accuracy CSVs, source=json "
    "its aggregated JSON copy; templates=valid keeps the templates marked correct in the "
    "paraphrase CSVs, 'valid (JSON flags)' those marked correct in the JSON copy; ties is "
    "how tied scores are ranked; tie_correction is the tie correction of Kendall's W "
    "and Friedman's test; "
    "blocks=models asks whether the template changes the scores within each model."
)
# the metric columns of the paper's tables, by their names in rankstats
METRIC_COLUMNS = {
    "table_14": {"MaxP": "maxp", "AvgP": "avgp", "Sat": "saturation", "Combined": "cps"},
    "table_4": {"MaxP": "maxp", "AvgP": "avgp", "Sat": "saturation", "Combined": "cps"},
    "ranks": {"maximum": "maxp", "average": "avgp", "saturation": "saturation",
              "combined": "cps"},
}
# the method labels of the accuracy CSVs' companion file, in the paper's words
CSV_METHODS = {"meta_cot": "cot", "meta_desc": "gradual"}


@cache
def published() -> dict:
    """The published values, transcribed verbatim (see ``mizrahi2024_published.json``)."""
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def _printed(table: str, key, columns) -> pd.Series:
    """Printed strings of ``table`` as a Series indexed by (row key, column)."""
    rows = {}
    for row in published()["tables"][table]["rows"]:
        label = key(row)
        if label is None:
            continue
        for column in columns:
            cell = row["values"].get(column)
            if cell is not None:
                rows[(label, column)] = cell["printed"]
    series = pd.Series(rows, dtype=object)
    series.index = pd.MultiIndex.from_tuples(series.index, names=["row", "column"])
    return series


@cache
def _cubes() -> dict[str, xr.Dataset]:
    cubes = {"csv": datasets.load("mizrahi2024"), "json": datasets.load("mizrahi2024-aggregated")}
    # the two copies list models in different orders; align on the CSV's
    cubes["json"] = cubes["json"].sel(model=cubes["csv"]["model"])
    return cubes


def _valid(templates: str) -> xr.DataArray:
    """The templates marked correct, by the paraphrase CSVs' flags or the JSON copy's."""
    flags = _cubes()["csv" if templates == "valid" else "json"]["template_valid"]
    return flags.reset_coords(drop=True)


def _scores(source: str, templates: str) -> xr.DataArray:
    scores = _cubes()[source]["score"]
    return scores if templates == "all" else scores.where(_valid(templates))


def _conventions(**choices):
    """Every combination of the choices, as tuples of (name, value), the first one first."""
    names = list(choices)
    return [tuple(zip(names, values, strict=True))
            for values in itertools.product(*choices.values())]


def _quiet(function, *args, **kwargs):
    # constant template pairs and all-tied slices are expected here; their NaN are the result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        return function(*args, **kwargs)


def _task_key(row):
    return row.get("task")


def table_3_w() -> Comparison:
    """Kendall's W per task (table 3): templates as judges of the models."""
    printed = _printed("table_3", _task_key, ["kendall_w"])
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, templates=TEMPLATES, ties=TIES,
                     tie_correction=(True, False)),
        lambda c: _quiet(kendall_w, _scores(c["source"], c["templates"]), ties=c["ties"],
                         tie_correction=c["tie_correction"], nan_policy="omit").statistic,
        lambda w, task, _: float(w.sel(task=task)),
    )
    return search("table_3_w", "Table 3: Kendall's W per task", printed, candidates,
                  {"source": "csv", "templates": "all", "ties": "average",
                   "tie_correction": True})


def table_3_friedman() -> Comparison:
    """Friedman's p-value per task (table 3)."""
    printed = _printed("table_3", _task_key, ["friedman_p"])
    orientations = {"blocks=models": ("model", "template"),
                    "blocks=templates": ("template", "model")}
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, templates=TEMPLATES, orientation=tuple(orientations),
                     tie_correction=(True, False)),
        lambda c: _quiet(friedman, _scores(c["source"], c["templates"]),
                         blocks=orientations[c["orientation"]][0],
                         treatments=orientations[c["orientation"]][1],
                         tie_correction=c["tie_correction"], nan_policy="omit").pvalue,
        lambda p, task, _: float(p.sel(task=task)),
    )
    return search("table_3_friedman", "Table 3: Friedman p-value per task", printed, candidates,
                  {"source": "csv", "templates": "all", "orientation": "blocks=models",
                   "tie_correction": True})


def _cells(printed: pd.Series, value) -> pd.Series:
    return pd.Series([value(row, column) for row, column in printed.index],
                     index=printed.index, dtype=float)


def _candidates(printed: pd.Series, conventions, compute, lookup) -> dict:
    """``{convention: cells}``: ``compute(convention)`` once, then ``lookup(it, row, column)``."""
    out = {}
    for convention in conventions:
        result = compute(dict(convention))
        out[convention] = _cells(printed, lambda row, column, r=result: lookup(r, row, column))
    return out


def _metrics(source: str, templates: str) -> xr.Dataset:
    return prompt_metrics(_scores(source, templates), nan_policy="omit")


def _filtering_tau(source: str, variant: str, valid: str = "valid") -> xr.Dataset:
    every = _metrics(source, "all")
    valid = _metrics(source, valid)
    return xr.Dataset({
        name: _quiet(kendall_tau, every[name], valid[name], "model", variant=variant,
                     nan_policy="omit").statistic
        for name in ("maxp", "avgp", "saturation", "cps")
    })


def table_14() -> Comparison:
    """Tau between model rankings before and after dropping invalid templates (table 14)."""
    columns = METRIC_COLUMNS["table_14"]
    printed = _printed("table_14", _task_key, list(columns))
    candidates = _candidates(
        printed, _conventions(source=SOURCES, variant=("b", "a", "c"), valid=VALID),
        lambda c: _filtering_tau(c["source"], c["variant"], c["valid"]),
        lambda tau, task, column: float(tau[columns[column]].sel(task=task)),
    )
    return search("table_14", "Table 14: ranking before vs after filtering (Kendall's tau)",
                  printed, candidates, {"source": "csv", "variant": "b", "valid": "valid"})


def table_4() -> Comparison:
    """Table 14 averaged per benchmark, "ends with word" left out for LMentry (table 4)."""
    columns = METRIC_COLUMNS["table_4"]
    printed = _printed("table_4", lambda row: row["benchmark"], list(columns))
    benchmark = _cubes()["csv"]["benchmark"].rename("group")

    def means(c):
        tau = _filtering_tau(c["source"], c["variant"], c["valid"])
        return tau.where(tau["task"] != "ends_with_word").groupby(benchmark).mean("task")

    candidates = _candidates(
        printed, _conventions(source=SOURCES, variant=("b", "a", "c"), valid=VALID), means,
        lambda m, bench, column: float(m[columns[column]].sel(group=BENCHMARKS[bench])),
    )
    return search("table_4", "Table 4: average tau before vs after filtering, per benchmark",
                  printed, candidates, {"source": "csv", "variant": "b", "valid": "valid"})


def _average_ranks(source: str, templates: str, ties: str) -> xr.Dataset:
    metrics = _metrics(source, templates)
    ranked = xr.Dataset({name: rank(metrics[name], "model", ties=ties)
                         for name in ("maxp", "avgp", "saturation", "cps")})
    benchmark = _cubes()["csv"]["benchmark"].rename("group")
    return ranked.groupby(benchmark).mean("task")


def table_15_16(table: str) -> Comparison:
    """Average model rank per metric over a benchmark's tasks (tables 15 and 16)."""
    columns = METRIC_COLUMNS["ranks"]
    benchmark = "LMentry" if table == "table_15" else "BBH"
    printed = _printed(table, lambda row: row.get("model"), list(columns))
    candidates = _candidates(
        printed, _conventions(source=SOURCES, templates=TEMPLATES, ties=TIES),
        lambda c: _average_ranks(c["source"], c["templates"], c["ties"]).sel(group=benchmark),
        lambda ranks, model, column: float(ranks[columns[column]].sel(model=model)),
    )
    number = table.split("_")[1]
    return search(table, f"Table {number}: average model rank per metric, {benchmark}",
                  printed, candidates, {"source": "csv", "templates": "all", "ties": "average"})


def _methods(source: str) -> xr.DataArray:
    methods = _cubes()[source]["template_method"].astype(str)
    return xr.apply_ufunc(np.vectorize(lambda m: CSV_METHODS.get(m, m), otypes=[object]),
                          methods) if source == "csv" else methods


def _best_method_shares(source: str, templates: str, best: str, benchmark: str) -> pd.DataFrame:
    """Per model: the share (%) of its best templates coming from each method."""
    scores = _scores(source, templates)
    methods = _methods(source)
    in_benchmark = _cubes()["csv"]["benchmark"] == benchmark
    scores = scores.where(in_benchmark)
    names = np.array(["default", "rephrase", "cot", "gradual"], dtype=object)
    one_hot = methods == xr.DataArray(names, dims="method", coords={"method": names})
    is_best = (scores == scores.max("template")) & scores.notnull()
    if best == "first":  # only the first best template of each model and task
        position = xr.DataArray(np.arange(scores.sizes["template"]), dims="template")
        first = position.where(is_best).min("template")
        is_best = is_best & (position == first)
    counts = (is_best & one_hot).sum(("task", "template")).transpose("model", "method")
    present = scores.notnull().any(("task", "template"))
    frame = (counts / counts.sum("method") * 100).where(present).to_pandas()
    totals = counts.sum("model")
    frame.loc["all_models"] = (totals / totals.sum() * 100).to_pandas()
    real = (_cubes()[source]["template_id"] != "") & in_benchmark
    if templates != "all":
        real = real & _valid(templates)
    everything = (one_hot & real).sum(("task", "template"))
    frame.loc["all_paraphrases"] = (everything / everything.sum() * 100).to_pandas()
    return frame


def table_17_18(table: str) -> Comparison:
    """Which generation method produced each model's best templates (tables 17 and 18)."""
    benchmark = "LMentry" if table == "table_17" else "BBH"
    columns = ["default", "rephrase", "cot", "gradual"]
    printed = _printed(table, lambda row: row.get("model") or row.get("aggregate"), columns)
    candidates = _candidates(
        printed,
        _conventions(source=("json", "csv"), templates=TEMPLATES, best=("every tie", "first")),
        lambda c: _best_method_shares(c["source"], c["templates"], c["best"], benchmark),
        lambda frame, row, column: (float(frame.loc[row, column]) if row in frame.index
                                    else np.nan),
    )
    number = table.split("_")[1]
    notes = ["The release names two methods 'meta_cot' and 'meta_desc' in its paraphrase CSVs "
             "and 'cot' and 'gradual' in its JSON copy; the CSV labels are read as 'cot' and "
             "'gradual' (the paper's names)."]
    return search(table, f"Table {number}: methods of each model's best templates (%), "
                         f"{benchmark}", printed, candidates,
                  {"source": "json", "templates": "all", "best": "every tie"}, notes)


def _normalised(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"\s+", " ", text).strip().lower()


def table_9_10(table: str) -> Comparison:
    """Kendall's tau between the two example templates of each task (tables 9 and 10)."""
    printed = _printed(table, _task_key, ["tau"])
    rows = {row["task"]: row for row in published()["tables"][table]["rows"]}
    cube = _cubes()["csv"]
    texts = cube["template_text"].to_pandas().map(lambda t: _normalised(str(t)))
    positions = {}
    for task, row in rows.items():
        found = [texts.columns[texts.loc[task] == _normalised(row[f"template_{k}_plain"])]
                 for k in (1, 2)]
        if all(len(f) for f in found):
            positions[task] = (int(found[0][0]), int(found[1][0]))
    candidates = {}
    for convention in _conventions(source=SOURCES, variant=("b", "a", "c")):
        c = dict(convention)
        scores = _scores(c["source"], "all")

        def value(task, _column, scores=scores, c=c):
            if task not in positions:
                return np.nan
            first, second = positions[task]
            one = scores.sel(task=task).reset_coords(drop=True)
            return float(_quiet(kendall_tau, one.isel(template=first),
                                one.isel(template=second), "model", variant=c["variant"],
                                nan_policy="omit").statistic)

        candidates[convention] = _cells(printed, value)
    missing = sorted(set(rows) - set(positions))
    notes = [f"Templates not found by their printed text: {', '.join(missing)}."] if missing else []
    number = table.split("_")[1]
    benchmark = "LMentry" if table == "table_9" else "BBH"
    return search(table, f"Table {number}: tau between two example templates, {benchmark}",
                  printed, candidates, {"source": "csv", "variant": "b"}, notes)


def table_7_8(table: str) -> Comparison:
    """Correct paraphrases per method and their accuracy (tables 7 and 8)."""
    benchmark = "LMentry" if table == "table_7" else "BBH"
    columns = ["n_automatic", "n_correct", "correct_ratio", "accuracy_avg", "accuracy_std"]
    printed = _printed(table, lambda row: (row.get("task") or row.get("aggregate"),
                                           row["method"]), columns)
    spreads = ("templates, ddof=1", "templates, ddof=0", "models x templates, ddof=1",
               "models x templates, ddof=0")
    candidates = _candidates(
        printed, _conventions(source=SOURCES, spread=spreads),
        lambda c: _method_statistics(c["source"], c["spread"], benchmark),
        lambda stats, key, column: float(stats.get((*key, column), np.nan)),
    )
    number = table.split("_")[1]
    return search(table, f"Table {number}: correct paraphrases per method, {benchmark}",
                  printed, candidates, {"source": "csv", "spread": "templates, ddof=1"})


def _method_statistics(source: str, spread: str, benchmark: str) -> dict:
    cube = _cubes()[source]
    tasks = cube["task"].values[cube["benchmark"].values == benchmark]
    methods = _methods(source)
    out = {}
    for task_key in [*tasks, "all_tasks"]:
        selection = tasks if task_key == "all_tasks" else [task_key]
        one = cube.sel(task=selection)
        kind = methods.sel(task=selection)
        real = one["template_id"] != ""
        for method in ("all", "rephrase", "cot", "gradual"):
            mine = real if method == "all" else real & (kind == method)
            correct = mine & one["template_valid"]
            scores = one["score"].where(correct)
            n, k = int(mine.sum()), int(correct.sum())
            if "models x" in spread:
                values = scores.values[~np.isnan(scores.values)]
            else:
                per_template = scores.mean("model")
                values = per_template.values[~np.isnan(per_template.values)]
            ddof = 1 if spread.endswith("1") else 0
            out[(task_key, method, "n_automatic")] = n
            out[(task_key, method, "n_correct")] = k
            out[(task_key, method, "correct_ratio")] = 100 * k / n if n else np.nan
            out[(task_key, method, "accuracy_avg")] = float(np.nanmean(
                scores.values)) if k else np.nan
            out[(task_key, method, "accuracy_std")] = (
                float(np.std(values, ddof=ddof)) if values.size > ddof else np.nan)
    return out


def metric_results(filtering: str) -> Comparison:
    """The released MaxP, AvgP and CPS of the open-source models, recomputed."""
    released = datasets.load("mizrahi2024-metrics")["value"].sel(filtering=filtering)
    tasks = _cubes()["csv"]["task"].values
    frame = released.sel(task=tasks).to_series().dropna()
    printed = pd.Series([f"{value:.6f}" for value in frame], dtype=object,
                        index=pd.MultiIndex.from_tuples(
                            [((model, task), metric) for model, task, metric in frame.index],
                            names=["row", "column"]))
    templates = VALID if filtering == "correct" else ("all",)
    candidates = _candidates(
        printed, _conventions(source=SOURCES, templates=templates),
        lambda c: _metrics(c["source"], c["templates"]),
        lambda metrics, key, column: float(metrics[column].sel(model=key[0], task=key[1])),
    )
    label = "correct paraphrases only" if filtering == "correct" else "no filtering"
    return search(f"metrics_{filtering}", f"Released metric results ({label}), to 6 decimals",
                  printed, candidates, {"source": "csv", "templates": templates[0]})


def reproduce() -> list[Comparison]:
    """Every table the release allows, recomputed and compared with the published values.

    Returns
    -------
    list of Comparison
        One per table (table 3 split into its W and Friedman columns).

    Examples
    --------
    >>> from rankstats.reproduce.mizrahi2024 import table_3_w
    >>> comparison = table_3_w()
    >>> comparison.convention
    {'source': 'csv', 'templates': 'valid', 'ties': 'min', 'tie_correction': False}
    >>> comparison.matched, comparison.total
    (22, 25)
    """
    return [
        table_3_w(),
        table_3_friedman(),
        table_14(),
        table_4(),
        table_15_16("table_15"),
        table_15_16("table_16"),
        table_17_18("table_17"),
        table_17_18("table_18"),
        table_7_8("table_7"),
        table_7_8("table_8"),
        table_9_10("table_9"),
        table_9_10("table_10"),
        metric_results("none"),
        metric_results("correct"),
    ]
