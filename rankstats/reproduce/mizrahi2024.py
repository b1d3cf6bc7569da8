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
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from .. import datasets
from ..errors import RankstatsWarning
from ..statistics.concordance import kendall_tau, kendall_w, rank
from ..statistics.metrics import divergence, prompt_metrics
from ..statistics.significance import friedman
from ._compare import Comparison, agrees, search

__all__ = ["LEGEND", "PUBLISHED", "audit", "paper_conventions", "published", "reproduce"]

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
    "ranks": {"maximum": "maxp", "average": "avgp", "saturation": "saturation", "combined": "cps"},
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
    return [
        tuple(zip(names, values, strict=True)) for values in itertools.product(*choices.values())
    ]


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
        _conventions(source=SOURCES, templates=TEMPLATES, ties=TIES, tie_correction=(True, False)),
        lambda c: (
            _quiet(
                kendall_w,
                _scores(c["source"], c["templates"]),
                ties=c["ties"],
                tie_correction=c["tie_correction"],
                nan_policy="omit",
            ).statistic
        ),
        lambda w, task, _: float(w.sel(task=task)),
    )
    return search(
        "table_3_w",
        "Table 3: Kendall's W per task",
        printed,
        candidates,
        {"source": "csv", "templates": "all", "ties": "average", "tie_correction": True},
    )


def table_3_friedman() -> Comparison:
    """Friedman's p-value per task (table 3)."""
    printed = _printed("table_3", _task_key, ["friedman_p"])
    orientations = {
        "blocks=models": ("model", "template"),
        "blocks=templates": ("template", "model"),
    }
    candidates = _candidates(
        printed,
        _conventions(
            source=SOURCES,
            templates=TEMPLATES,
            orientation=tuple(orientations),
            tie_correction=(True, False),
        ),
        lambda c: (
            _quiet(
                friedman,
                _scores(c["source"], c["templates"]),
                blocks=orientations[c["orientation"]][0],
                treatments=orientations[c["orientation"]][1],
                tie_correction=c["tie_correction"],
                nan_policy="omit",
            ).pvalue
        ),
        lambda p, task, _: float(p.sel(task=task)),
    )
    return search(
        "table_3_friedman",
        "Table 3: Friedman p-value per task",
        printed,
        candidates,
        {
            "source": "csv",
            "templates": "all",
            "orientation": "blocks=models",
            "tie_correction": True,
        },
    )


def _cells(printed: pd.Series, value) -> pd.Series:
    return pd.Series(
        [value(row, column) for row, column in printed.index], index=printed.index, dtype=float
    )


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
    return xr.Dataset(
        {
            name: _quiet(
                kendall_tau, every[name], valid[name], "model", variant=variant, nan_policy="omit"
            ).statistic
            for name in ("maxp", "avgp", "saturation", "cps")
        }
    )


def table_14() -> Comparison:
    """Tau between model rankings before and after dropping invalid templates (table 14)."""
    columns = METRIC_COLUMNS["table_14"]
    printed = _printed("table_14", _task_key, list(columns))
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, variant=("b", "a", "c"), valid=VALID),
        lambda c: _filtering_tau(c["source"], c["variant"], c["valid"]),
        lambda tau, task, column: float(tau[columns[column]].sel(task=task)),
    )
    return search(
        "table_14",
        "Table 14: ranking before vs after filtering (Kendall's tau)",
        printed,
        candidates,
        {"source": "csv", "variant": "b", "valid": "valid"},
    )


def table_4() -> Comparison:
    """Table 14 averaged per benchmark, "ends with word" left out for LMentry (table 4)."""
    columns = METRIC_COLUMNS["table_4"]
    printed = _printed("table_4", lambda row: row["benchmark"], list(columns))
    benchmark = _cubes()["csv"]["benchmark"].rename("group")

    def means(c):
        tau = _filtering_tau(c["source"], c["variant"], c["valid"])
        return tau.where(tau["task"] != "ends_with_word").groupby(benchmark).mean("task")

    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, variant=("b", "a", "c"), valid=VALID),
        means,
        lambda m, bench, column: float(m[columns[column]].sel(group=BENCHMARKS[bench])),
    )
    standard = {"source": "csv", "variant": "b", "valid": "valid"}
    first = search("table_4", "", printed, candidates, standard)
    why = {}
    for key in printed.index[first.cells["verdict"] != "match"]:
        bench, column = key
        values = [
            row["values"][column]["value"]
            for row in published()["tables"]["table_14"]["rows"]
            if row["benchmark"] == bench
            and row["task"] != "ends_with_word"
            and row["values"].get(column)
        ]
        mean = float(np.mean(values))
        if agrees(printed[key], mean):
            why[key] = (
                f"the mean of the paper's own printed Table 14 values ({len(values)} "
                f"tasks: {mean:.4f}), which differ from the release's in places"
            )
    return search(
        "table_4",
        "Table 4: average tau before vs after filtering, per benchmark",
        printed,
        candidates,
        standard,
        why=why,
    )


def _average_ranks(source: str, templates: str, ties: str) -> xr.Dataset:
    metrics = _metrics(source, templates)
    ranked = xr.Dataset(
        {
            name: rank(metrics[name], "model", ties=ties)
            for name in ("maxp", "avgp", "saturation", "cps")
        }
    )
    benchmark = _cubes()["csv"]["benchmark"].rename("group")
    return ranked.groupby(benchmark).mean("task")


def table_15_16(table: str) -> Comparison:
    """Average model rank per metric over a benchmark's tasks (tables 15 and 16)."""
    columns = METRIC_COLUMNS["ranks"]
    benchmark = "LMentry" if table == "table_15" else "BBH"
    printed = _printed(table, lambda row: row.get("model"), list(columns))
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, templates=TEMPLATES, ties=TIES),
        lambda c: _average_ranks(c["source"], c["templates"], c["ties"]).sel(group=benchmark),
        lambda ranks, model, column: float(ranks[columns[column]].sel(model=model)),
    )
    number = table.split("_")[1]
    return search(
        table,
        f"Table {number}: average model rank per metric, {benchmark}",
        printed,
        candidates,
        {"source": "csv", "templates": "all", "ties": "average"},
    )


def _methods(source: str) -> xr.DataArray:
    methods = _cubes()[source]["template_method"].astype(str)
    return (
        xr.apply_ufunc(np.vectorize(lambda m: CSV_METHODS.get(m, m), otypes=[object]), methods)
        if source == "csv"
        else methods
    )


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
    # the row defines its own population: every paraphrase, whatever the table's filter
    real = (_cubes()[source]["template_id"] != "") & in_benchmark
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
        lambda frame, row, column: float(frame.loc[row, column]) if row in frame.index else np.nan,
    )
    number = table.split("_")[1]
    notes = [
        "The release names two methods 'meta_cot' and 'meta_desc' in its paraphrase CSVs "
        "and 'cot' and 'gradual' in its JSON copy; the CSV labels are read as 'cot' and "
        "'gradual' (the paper's names).",
        "The 'all paraphrases' row is over every paraphrase of the benchmark, whatever "
        "templates the other rows keep: it defines its own population.",
    ]
    how = {
        (row, column): "over every paraphrase (the row's own population)"
        for row, column in printed.index
        if row == "all_paraphrases"
    }
    standard = {"source": "json", "templates": "all", "best": "every tie"}
    first = search(table, "", printed, candidates, standard)
    counts = _printed_counts("table_7" if table == "table_17" else "table_8")
    why = {}
    for key in printed.index[first.cells["verdict"] != "match"]:
        if key[0] == "all_paraphrases" and counts:
            share = 100 * counts[key[1]] / counts["all"]
            if agrees(printed[key], share):
                why[key] = (
                    f"the share in the paper's own counts of Table "
                    f"{7 if table == 'table_17' else 8} ({counts[key[1]]:.0f} of "
                    f"{counts['all']:.0f}: {share:.2f}); the release's counts differ"
                )
    return search(
        table,
        f"Table {number}: methods of each model's best templates (%), {benchmark}",
        printed,
        candidates,
        standard,
        notes,
        how=how,
        why=why,
    )


def _printed_counts(table: str) -> dict:
    """The printed number of paraphrases per method over all tasks, the original ones too."""
    counts = {}
    for row in published()["tables"][table]["rows"]:
        if row.get("aggregate") == "all_tasks" and row["values"].get("n_automatic"):
            counts[row["method"]] = float(row["values"]["n_automatic"]["value"])
    if not {"all", "rephrase", "cot", "gradual"} <= set(counts):
        return {}
    counts["default"] = counts["all"] - counts["rephrase"] - counts["cot"] - counts["gradual"]
    return counts


def _normalised(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"\s+", " ", text).strip().lower()


FUZZY = 0.95  # the least similarity at which a printed template text is taken for a release one


def _template_candidates(task: str, printed: str) -> tuple[list[int], str]:
    """Positions of the release's templates of ``task`` whose text is the printed one.

    Every template with exactly the printed text (after normalising quotes,
    spaces and case); when there is none, the most similar ones at a
    similarity of at least :data:`FUZZY` (``difflib``'s ratio), with the
    similarity said in the returned text.
    """
    texts = _texts().loc[task]
    target = _normalised(printed)
    exact = [int(p) for p in texts.index[texts == target]]
    if exact:
        return exact, (f"{len(exact)} templates have the printed text" if len(exact) > 1 else "")
    similarity = texts.map(lambda t: SequenceMatcher(None, t, target).ratio() if t else 0.0)
    best = float(similarity.max())
    if best < FUZZY:
        return [], f"no template has the printed text (best similarity {best:.3f})"
    found = [int(p) for p in similarity.index[similarity == best]]
    braces = (
        " (the same text once placeholder braces are ignored)"
        if all(
            texts[p].replace("{", "").replace("}", "") == target.replace("{", "").replace("}", "")
            for p in found
        )
        else ""
    )
    return found, f"the printed text matches at similarity {best:.3f}{braces}"


@cache
def _texts() -> pd.DataFrame:
    return _cubes()["csv"]["template_text"].to_pandas().map(lambda t: _normalised(str(t)))


def _pair_taus(
    task: str, source: str, variant: str, templates: str = "all"
) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau between every two templates of ``task`` (models that ran it only)."""
    scores = _scores(source, templates).sel(task=task).reset_coords(drop=True)
    scores = scores.dropna("model", how="all").dropna("template", how="all")
    values = scores.transpose("template", "model").values
    first, second = np.triu_indices(values.shape[1], 1)
    signs = np.sign(values[:, first] - values[:, second])
    n = signs.shape[1]
    untied = (signs != 0).sum(1).astype(float)
    dot = signs @ signs.T
    if variant == "b":
        taus = dot / np.sqrt(np.outer(untied, untied))
    elif variant == "a":
        taus = dot / n
    else:  # "c": Stuart's tau-c, with as many distinct values as models
        m = values.shape[1]
        taus = 2 * dot / (m * m * (m - 1) / m)
    return taus, scores["template"].values


def _extreme_pair(task: str, source: str, variant: str, templates: str = "all") -> dict:
    """The task's lowest and highest tau between two templates, and their templates."""
    with np.errstate(invalid="ignore", divide="ignore"):
        taus, positions = _pair_taus(task, source, variant, templates)
    upper = np.triu(np.ones_like(taus, dtype=bool), 1) & np.isfinite(taus)
    ids = _cubes()["csv"]["template_id"].sel(task=task).values
    out = {}
    for name, pick in (("minimum", np.nanargmin), ("maximum", np.nanargmax)):
        flat = pick(np.where(upper, taus, np.inf if name == "minimum" else -np.inf))
        i, j = np.unravel_index(flat, taus.shape)
        out[name] = (float(taus[i, j]), ids[positions[i]], ids[positions[j]], int(upper.sum()))
    return out


def table_9_10(table: str) -> Comparison:
    """Kendall's tau between the two example templates of each task (tables 9 and 10).

    A printed template text can belong to several templates of the release
    (texts repeat) or to none exactly (the paper's text lost a placeholder's
    braces); every candidate pair is tried and the one that reproduces the
    printed tau is named on the row. A printed tau no candidate pair gives is
    compared with the task's lowest and highest tau over all template pairs.
    """
    printed = _printed(table, _task_key, ["tau"])
    rows = {row["task"]: row for row in published()["tables"][table]["rows"]}
    ids = _cubes()["csv"]["template_id"]
    found, said = {}, {}
    for task, row in rows.items():
        pairs = [_template_candidates(task, row[f"template_{k}_plain"]) for k in (1, 2)]
        found[task] = [p for p, _ in pairs]
        said[task] = [text for _, text in pairs]
    conventions = _conventions(source=SOURCES, variant=("b", "a", "c"))
    candidates, how_by, tried = {}, {}, 0
    for convention in conventions:
        c = dict(convention)
        scores = _scores(c["source"], "all")
        values, how = {}, {}
        for task in rows:
            key = (task, "tau")
            one = scores.sel(task=task).reset_coords(drop=True)
            pairs = [(a, b) for a in found[task][0] for b in found[task][1] if a != b]
            tried += len(pairs)
            values[key] = np.nan
            for a, b in pairs:
                tau = float(
                    _quiet(
                        kendall_tau,
                        one.isel(template=a),
                        one.isel(template=b),
                        "model",
                        variant=c["variant"],
                        nan_policy="omit",
                    ).statistic
                )
                if np.isnan(values[key]):
                    values[key] = tau
                if agrees(printed[key], tau):
                    values[key] = tau
                    notes = [
                        f"templates {ids.sel(task=task).values[a]} and "
                        f"{ids.sel(task=task).values[b]}"
                    ]
                    notes += [
                        f"template {k}: {text}"
                        for k, text in zip((1, 2), said[task], strict=True)
                        if text
                    ]
                    if len(pairs) > 1:
                        notes.append(
                            f"the pair reproducing the printed tau of {len(pairs)} candidate pairs"
                        )
                    how[key] = "; ".join(notes)
                    break
            else:
                how[key] = "; ".join(
                    f"template {k}: {text}"
                    for k, text in zip((1, 2), said[task], strict=True)
                    if text
                )
        candidates[convention] = pd.Series(values).reindex(printed.index).astype(float)
        how_by[convention] = how
    standard = {"source": "csv", "variant": "b"}
    result = search(table, "", printed, candidates, standard, tried=tried)
    best = tuple(result.convention.items())
    how = {key: text for key, text in how_by[best].items() if text}
    why = {}
    for key in printed.index[result.cells["verdict"] != "match"]:
        extreme = _extreme_pair(key[0], result.convention["source"], result.convention["variant"])
        for name, (tau, a, b, n) in extreme.items():
            if agrees(printed[key], tau):
                why[key] = (
                    f"the printed tau is the task's {name} over all {n} template pairs "
                    f"(templates {a} and {b}: {tau:.3f}); the printed texts are of "
                    f"other templates"
                )
    number = table.split("_")[1]
    benchmark = "LMentry" if table == "table_9" else "BBH"
    return search(
        table,
        f"Table {number}: tau between two example templates, {benchmark}",
        printed,
        candidates,
        standard,
        how=how,
        why=why,
        tried=tried,
    )


def table_7_8(table: str) -> Comparison:
    """Correct paraphrases per method and their accuracy (tables 7 and 8)."""
    benchmark = "LMentry" if table == "table_7" else "BBH"
    columns = ["n_automatic", "n_correct", "correct_ratio", "accuracy_avg", "accuracy_std"]
    printed = _printed(
        table, lambda row: (row.get("task") or row.get("aggregate"), row["method"]), columns
    )
    spreads = (
        "templates, ddof=1",
        "templates, ddof=0",
        "models x templates, ddof=1",
        "models x templates, ddof=0",
    )
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, spread=spreads, aggregate=AGGREGATES),
        lambda c: _method_statistics(c["source"], c["spread"], benchmark, c["aggregate"]),
        lambda stats, key, column: float(stats.get((*key, column), np.nan)),
    )
    number = table.split("_")[1]
    standard = {"source": "csv", "spread": "templates, ddof=1", "aggregate": "pooled"}
    first = search(table, "", printed, candidates, standard)
    why = _count_explanations(table, printed, first)
    return search(
        table,
        f"Table {number}: correct paraphrases per method, {benchmark}",
        printed,
        candidates,
        standard,
        why=why,
        notes=[
            "aggregate=macro: the 'all tasks' accuracy and sd are the means of "
            "the per-task rows; aggregate=pooled: computed over every template "
            "of every task at once."
        ],
    )


AGGREGATES = ("pooled", "macro")


def _method_statistics(source: str, spread: str, benchmark: str, aggregate: str = "pooled") -> dict:
    """Counts, correct ratio, mean and spread of accuracy per task and method, and over all."""
    out = dict(_pooled_method_statistics(source, spread, benchmark))
    if aggregate == "macro":
        tasks = sorted({key[0] for key in out} - {"all_tasks"})
        for method in ("all", "rephrase", "cot", "gradual"):
            for column in ("accuracy_avg", "accuracy_std"):
                out[("all_tasks", method, column)] = float(
                    np.nanmean([out[(task, method, column)] for task in tasks])
                )
    return out


@cache
def _pooled_method_statistics(source: str, spread: str, benchmark: str) -> dict:
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
            out[(task_key, method, "accuracy_avg")] = (
                float(np.nanmean(scores.values)) if k else np.nan
            )
            out[(task_key, method, "accuracy_std")] = (
                float(np.std(values, ddof=ddof)) if values.size > ddof else np.nan
            )
    return out


def _count_explanations(table: str, printed: pd.Series, comparison: Comparison) -> dict:
    """What the paper's own rows say about a count or ratio the release does not give.

    A method's printed count that the printed total of its task contradicts
    (the methods do not add up to the printed 'all') is a typo when the
    release's count makes them add up; a count the paper's rows agree on is a
    difference between the release and the paper's counts; a ratio or a total
    follows from such counts when the printed numbers give it.
    """
    values = published()["tables"][table]["rows"]
    count = {}
    for row in values:
        key = row.get("task") or row.get("aggregate")
        for column in ("n_automatic", "n_correct"):
            cell = row["values"].get(column)
            if cell is not None:
                count[(key, row["method"], column)] = float(cell["value"])
    cells = comparison.cells
    release = {(row, column): value for (row, column), value in cells["reproduced"].items()}
    why = {}
    methods = ("rephrase", "cot", "gradual")
    tasks = sorted({row[0] for row, _ in cells.index} - {"all_tasks"})

    def printed_sum(method, column):
        parts = [count.get((task, method, column)) for task in tasks]
        return None if None in parts else sum(parts)

    for (row, column), verdict in cells["verdict"].items():
        if verdict == "match":
            continue
        task, method = row
        if column not in ("n_automatic", "n_correct"):
            continue
        mine = release[(row, column)]
        paper = count[(task, method, column)]
        difference = round(mine - paper)
        if task == "all_tasks":
            total = printed_sum(method, column)
            differ = [
                t
                for t in tasks
                if (t, method, column) in count
                and not agrees(
                    f"{count[(t, method, column)]:.0f}", release.get(((t, method), column), np.nan)
                )
            ]
            why[(row, column)] = (
                f"the release holds {difference:+d} against the paper's count; the paper's "
                f"task rows add up to {total:.0f}"
                + (f" and the release differs in: {', '.join(differ)}" if differ else "")
            )
            continue
        # the 'all' row holds the original template beside the three methods
        original = release[((task, "all"), column)] - sum(
            release.get(((task, m), column), 0) for m in methods
        )
        parts = [count.get((task, m, column)) for m in methods]
        total = count.get((task, "all", column))
        if None in parts or total is None:
            continue
        gap = total - sum(parts) - original
        if gap == 0:
            what = "templates" if column == "n_automatic" else "templates marked correct"
            kind = "" if method == "all" else f"{method} "
            why[(row, column)] = (
                f"the release holds {difference:+d} {kind}{what} against the "
                f"paper's count; the paper's rows agree with each other"
            )
        elif method != "all" and paper + gap == mine:
            why[(row, column)] = (
                f"typo: the paper's own total contradicts it: its 'all' row "
                f"({total:.0f}) less the other methods and the original "
                f"template gives {paper + gap:.0f}, the release's count"
            )
        elif method == "all" and total - gap == mine:
            why[(row, column)] = (
                f"typo: the paper's method rows add up to {total - gap:.0f} "
                f"with the original template, the release's count"
            )
    for (row, column), verdict in cells["verdict"].items():
        task, method = row
        if verdict != "match" and column == "correct_ratio":
            n = count.get((task, method, "n_automatic"))
            k = count.get((task, method, "n_correct"))
            if n and k is not None and agrees(printed[(row, column)], 100 * k / n):
                why[(row, column)] = (
                    f"follows from the printed counts ({k:.0f}/{n:.0f}); the "
                    f"release's counts differ"
                )
    return why


def metric_results(filtering: str) -> Comparison:
    """The released MaxP, AvgP and CPS of the open-source models, recomputed."""
    released = datasets.load("mizrahi2024-metrics")["value"].sel(filtering=filtering)
    tasks = _cubes()["csv"]["task"].values
    frame = released.sel(task=tasks).to_series().dropna()
    printed = pd.Series(
        [f"{value:.6f}" for value in frame],
        dtype=object,
        index=pd.MultiIndex.from_tuples(
            [((model, task), metric) for model, task, metric in frame.index],
            names=["row", "column"],
        ),
    )
    templates = VALID if filtering == "correct" else ("all",)
    candidates = _candidates(
        printed,
        _conventions(source=SOURCES, templates=templates),
        lambda c: _metrics(c["source"], c["templates"]),
        lambda metrics, key, column: float(metrics[column].sel(model=key[0], task=key[1])),
    )
    label = "correct paraphrases only" if filtering == "correct" else "no filtering"
    return search(
        f"metrics_{filtering}",
        f"Released metric results ({label}), to 6 decimals",
        printed,
        candidates,
        {"source": "csv", "templates": templates[0]},
        source="release",
    )


@cache
def paper_conventions() -> dict:
    """The conventions under which the paper's statistics reproduce, as the search found them.

    Returns
    -------
    dict
        ``kendall_w`` (Table 3: templates, ties, tie correction),
        ``friedman`` (Table 3's p-values), ``metric_ranks`` (Tables 15 and 16:
        templates and ties of the average ranks), each with the number of
        cells it reproduces.

    Examples
    --------
    >>> paper_conventions()["kendall_w"]
    {'templates': 'valid', 'ties': 'min', 'tie_correction': False, 'reproduces': '22 of 25'}
    """
    out = {}
    for name, comparisons in (
        ("kendall_w", [table_3_w()]),
        ("friedman", [table_3_friedman()]),
        ("metric_ranks", [table_15_16("table_15"), table_15_16("table_16")]),
    ):
        first = comparisons[0]
        convention = {k: v for k, v in first.convention.items() if k != "source"}
        matched = sum(c.matched for c in comparisons)
        total = sum(c.total for c in comparisons)
        out[name] = {**convention, "reproduces": f"{matched} of {total}"}
    return out


def audit() -> pd.DataFrame:
    """Where the release contradicts itself, as far as the packaged copies show it.

    One row per contradiction (see :mod:`rankstats.reproduce._audit`):
    accuracies that differ between the release's two copies, methods named
    differently, the one 'correct' flag written ``0?``, accuracies that are
    not whole multiples of 1/(stated samples), and released MaxP and AvgP
    that the accuracy CSVs contradict.

    Examples
    --------
    >>> found = audit()
    >>> found.groupby("check", sort=False).size().to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'accuracy': 964, 'method_name': 50, 'valid': 1, 'samples': 4534, 'maxp_none': 4,
     'avgp_none': 4, 'maxp_correct': 4, 'avgp_correct': 4}
    """
    from ._audit import from_cubes

    return from_cubes(_cubes()["csv"], _cubes()["json"], datasets.load("mizrahi2024-metrics"))


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
        *(table_21_24(table) for table in OPENAI_TABLES),
        text_claims(),
        metric_results("none"),
        metric_results("correct"),
    ]


OPENAI_TABLES = {  # table: (metric, prompts) of the release's estimates for the OpenAI models
    "table_21": ("avgp", "original"),
    "table_22": ("avgp", "all"),
    "table_23": ("maxp", "original"),
    "table_24": ("maxp", "all"),
}


def _openai() -> xr.DataArray:
    return datasets.load("mizrahi2024-metrics")["openai_estimate"]


def table_21_24(table: str) -> Comparison:
    """The OpenAI models' AvgP and MaxP, original prompts vs all (tables 21 to 24).

    The release holds no per-template accuracies of the OpenAI models, only
    these estimates (``metric results``); the printed values are compared with
    them, not recomputed.
    """
    spec = published()["tables"][table]
    names = spec["openai_models"]
    metric, prompts = OPENAI_TABLES[table]
    printed = _printed(table, _task_key, spec["columns"])
    estimates = _openai().sel(metric=metric, prompts=prompts)
    convention = (("source", "metric results"), ("prompts", prompts))
    candidates = {
        convention: _cells(
            printed,
            lambda task, column: float(estimates.sel(openai_model=names[column], task=task)),
        )
    }
    number = table.split("_")[1]
    label = {"avgp": "AvgP", "maxp": "MaxP"}[metric]
    what = "original prompts" if prompts == "original" else "estimated over all paraphrases"
    return search(
        table,
        f"Table {number}: OpenAI models' {label}, {what} (the release's "
        f"estimates; no per-template accuracies to recompute them from)",
        printed,
        candidates,
        dict(convention),
        source="stated",
    )


def _ranking_agrees(one: pd.Series, other: pd.Series) -> bool:
    """Whether two score vectors order the models the same way (ties by min rank)."""
    return bool(
        (one.rank(method="min", ascending=False) == other.rank(method="min", ascending=False)).all()
    )


def _claim_values() -> dict:
    """Each checkable sentence's number, recomputed: ``{id: (value, how)}``."""
    cube = _cubes()["csv"]
    out = {}
    p = _quiet(
        friedman,
        _scores("csv", "all"),
        blocks="model",
        treatments="template",
        tie_correction=True,
        nan_policy="omit",
    ).pvalue
    out["friedman_significant"] = (
        int((p < 0.05).sum()),
        "tasks with Friedman p < 0.05 under Table 3's convention",
    )
    for templates in (*VALID, "all"):
        negative = sum(
            _extreme_pair(task, "csv", "b", templates)["minimum"][0] < 0
            for task in cube["task"].values
        )
        out.setdefault("negative_tau_tasks", []).append(
            (
                negative,
                (
                    f"of the release's {cube.sizes['task']} tasks, those with a pair of "
                    f"templates of negative tau-b, {templates} templates"
                ),
            )
        )
    lmentry = cube["benchmark"] == "LMentry"
    for templates in ("all", "valid"):
        scores = _scores("csv", templates).where(lmentry, drop=True)
        d = divergence(
            scores.to_dataset(name="score").assign_coords(
                template_is_original=cube["template_is_original"].where(lmentry, drop=True)
            ),
            nan_policy="omit",
        ).statistic.sel(model="alpaca-13b")
        out.setdefault("alpaca_13b_divergence", []).append(
            (
                int((abs(d) > 1).sum()),
                f"LMentry tasks where the divergence exceeds 1 in "
                f"absolute value, {templates} templates",
            )
        )
    estimates = _openai().dropna("task", how="all")
    avg_original = estimates.sel(metric="avgp", prompts="original")
    avg_all = estimates.sel(metric="avgp", prompts="all")
    above = float((avg_original > avg_all).mean()) * 100
    out["openai_original_above_average"] = (
        above,
        "share of the 40 (model, task) cells of Tables 21 and 22 with original > all",
    )
    gain = float((avg_original - avg_all).sel(openai_model="davinci").mean()) * 100
    out["davinci_original_gain"] = (gain, "davinci's mean of Table 21 less Table 22, in points")
    max_all = estimates.sel(metric="maxp", prompts="all")
    max_original = estimates.sel(metric="maxp", prompts="original")
    out["td002_maxp_above_90"] = (
        int((max_all.sel(openai_model="td002") > 0.9).sum()),
        "tasks where text-davinci-002's Table 24 MaxP > 0.90",
    )
    for name, original, metric in (
        ("openai_average_agreement", avg_original, avg_all),
        ("openai_maximum_agreement", max_original, max_all),
    ):
        agree = sum(
            _ranking_agrees(original.sel(task=t).to_pandas(), metric.sel(task=t).to_pandas())
            for t in estimates["task"].values
        )
        out[name] = (
            agree,
            "tasks where the models' order on the original prompts equals "
            "their order on the metric (Tables 21 vs 22, 23 vs 24)",
        )
    first = (max_all == max_all.max("openai_model")).sel(openai_model="gpt-3.5-turbo")
    out["gpt35_first_in_maxp"] = (
        int(first.sum()),
        "tasks where gpt-3.5-turbo has the highest Table 24 MaxP (ties count as first)",
    )
    return out


def text_claims() -> Comparison:
    """The paper's checkable sentences, each a row: the sentence, printed and recomputed.

    A row is the sentence (with its section), its column the claim's id. A
    claim recomputed under several conventions shows the one that agrees,
    else the first, and names the others.
    """
    claims = published()["claims"]
    values = _claim_values()
    rows, recomputed, how = [], [], {}
    for claim in claims:
        key = (f"§{claim['section']}: {claim['sentence']}", claim["id"])
        rows.append(key)
        found = values[claim["id"]]
        if isinstance(found, list):  # several conventions: the one that agrees, else the first
            agreeing = [v for v in found if agrees(claim["printed"], v[0])]
            value, text = (agreeing or found)[0]
            others = "; ".join(
                f"{v} with {t.split(', ')[-1]}" for v, t in found if (v, t) != (value, text)
            )
            text = f"{text} (also tried: {others})" if others else text
        else:
            value, text = found
        recomputed.append(float(value))
        how[key] = f"recomputed: {text}"
    why = {}
    for key, claim, value in zip(rows, claims, recomputed, strict=True):
        if agrees(claim["printed"], value):
            continue
        # a sentence with two numbers whose recomputed values are the other way round
        swapped = [
            other["id"]
            for other_key, other, other_value in zip(rows, claims, recomputed, strict=True)
            if other_key[0] == key[0]
            and other is not claim
            and agrees(claim["printed"], other_value)
            and agrees(other["printed"], value)
        ]
        if swapped:
            why[key] = (
                f"the data give the sentence's two numbers the other way round "
                f"(this one {value:g}, {swapped[0]} {claim['value']:g})"
            )
        if claim["id"] == "negative_tau_tasks" and value <= claim["value"]:
            why[key] = (
                f"a lower bound: the paper counts over 39 tasks, 14 of them of "
                f"BIG-bench Lite, which the release lacks; the release's 25 give "
                f"{value:g}"
            )
    index = pd.MultiIndex.from_tuples(rows, names=["row", "column"])
    printed = pd.Series([c["printed"] for c in claims], index=index, dtype=object)
    convention = (("source", "release"),)
    return search(
        "text_claims",
        "Text claims: the paper's checkable sentences",
        printed,
        {convention: pd.Series(recomputed, index=index)},
        dict(convention),
        how=how,
        why=why,
        tried=len(claims),
    )
