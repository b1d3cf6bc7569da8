"""Where a release contradicts itself: a summary of every kind of disagreement.

The rows are those of :func:`rankstats_collectors.files.mizrahi2024.cross_check`
(columns ``check, file, other_file, task, model, template, value,
other_value``); :func:`from_cubes` rebuilds the ones the packaged copies of
the release allow, so that ``rankstats reproduce`` can list them without the
release at hand.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

COLUMNS = ["check", "file", "other_file", "task", "model", "template", "value", "other_value"]
WHOLE = 1e-6
DESCRIPTIONS = {
    "accuracy": "an accuracy differs between the accuracy CSV and the aggregated JSON",
    "samples": "an accuracy is not a whole multiple of 1/(the stated number of samples)",
    "valid": "a template's 'correct' flag differs between the paraphrase CSV and the JSON",
    "method_name": "a generation method is named differently in the two files",
    "method": "a template's generation method differs between the two files",
    "template_text": "a template's text differs between the two files",
    "original": "the original-prompt flag disagrees with the method 'default'",
    "templates": "a template is present in one file and absent from another",
    "models": "a model is present in one file and absent from another",
    "tasks": "a task is present in one folder and absent from another",
    "rank": "a rank in the JSON is not the rank of its accuracy",
    "maxp_none": "a released MaxP (no filtering) is not the maximum of the accuracies",
    "avgp_none": "a released AvgP (no filtering) is not the mean of the accuracies",
    "maxp_correct": "a released MaxP (correct paraphrases) is not the maximum of the accuracies",
    "avgp_correct": "a released AvgP (correct paraphrases) is not the mean of the accuracies",
}


def swapped_models(found: pd.DataFrame) -> list[tuple[str, str, str, int]]:
    """``(task, model, other model, cells)`` where two models' accuracy columns are exchanged.

    A pair is swapped in a task when every accuracy of one in the first file
    equals the other's in the second file, and the reverse, over every
    disagreeing cell of the two.
    """
    rows = found[found["check"] == "accuracy"]
    # rows about a model as a whole have no template: one key for all of them
    rows = rows.assign(template=pd.to_numeric(rows["template"], errors="coerce").fillna(-1))
    out = []
    for task, one in rows.groupby("task", sort=False):
        models = list(dict.fromkeys(one["model"]))
        for position, first in enumerate(models):
            for second in models[position + 1 :]:
                a = one[one["model"] == first].set_index("template")
                b = one[one["model"] == second].set_index("template")
                if len(a) != len(b) or set(a.index) != set(b.index):
                    continue
                b = b.reindex(a.index)
                same = np.isclose(
                    a["value"].astype(float), b["other_value"].astype(float)
                ) & np.isclose(b["value"].astype(float), a["other_value"].astype(float))
                if same.all():
                    out.append((task, first, second, len(a) + len(b)))
    return out


def _step(value: float, samples: float) -> int | None:
    """The smallest denominator (up to 10 times ``samples``) that makes ``value`` whole."""
    fraction = Fraction(float(value)).limit_denominator(int(max(samples, 1)) * 10)
    return fraction.denominator if abs(float(fraction) - value) < WHOLE else None


def _example(row) -> str:
    where = [str(row.task)]
    if isinstance(row.model, str) and row.model:
        where.append(f"model {row.model}")
    if not pd.isna(row.template) and row.template != "":
        where.append(f"template {int(float(row.template))}")
    value = _short(row.value)
    other = _short(row.other_value)
    return f"{', '.join(where)}: {value} in {row.file} vs {other} in {row.other_file}"


def _short(value) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return repr(value)
    return f"{number:.6g}"


def summarize(found: pd.DataFrame, *, examples: int = 3) -> str:
    """Every kind of contradiction with its count, what it means and its first examples."""
    if found.empty:
        return "Release audit: the copies agree everywhere they overlap."
    counts = found.groupby("check", sort=False).size()
    lines = [
        f"Release audit: {len(found)} contradictions between the release's own files "
        f"({len(counts)} kinds)."
    ]
    for check, count in counts.items():
        rows = found[found["check"] == check]
        lines.append(f"- {check} ({count}): {DESCRIPTIONS.get(check, check)}.")
        if check in ("accuracy", "maxp_none", "avgp_none", "maxp_correct", "avgp_correct"):
            swaps = swapped_models(rows.assign(check="accuracy"))
            for task, first, second, cells in swaps:
                lines.append(f"    {first} and {second} swapped in {task} ({cells} cells)")
            covered = sum(cells for *_, cells in swaps)
            if swaps and covered == count:
                lines.append("    (every one of them is a swap)")
                rows = rows.head(1)
        if check == "samples":
            steps = {}
            for row in rows.itertuples(index=False):
                step = _step(float(row.value), float(row.other_value))
                key = (row.task, int(float(row.other_value)), step)
                steps[key] = steps.get(key, 0) + 1
            for (task, stated, step), n in list(steps.items())[: examples * 2]:
                implied = f"steps of 1/{step}" if step else "no whole step"
                lines.append(f"    {task}: {n} accuracies in {implied}, {stated} samples stated")
            if len(steps) > examples * 2:
                tasks = len({task for task, *_ in steps})
                lines.append(f"    ... {len(steps)} (task, step) groups in {tasks} tasks")
            continue
        for row in rows.head(examples).itertuples(index=False):
            lines.append(f"    e.g. {_example(row)}")
    return "\n".join(lines)


METRIC_CHECKS = ["maxp_none", "avgp_none", "maxp_correct", "avgp_correct"]
METRIC_FILES = {"none": "no filtering", "correct": "correct paraphrases only"}


def _metric_checks(csv, metrics, csv_file) -> list:
    """Released MaxP and AvgP of the open-source models that the accuracy CSVs contradict."""
    frames = []
    released = metrics["value"].sel(task=csv["task"], model=csv["model"])
    for filtering in ("none", "correct"):
        scores = csv["score"] if filtering == "none" else csv["score"].where(csv["template_valid"])
        for metric, computed in (
            ("maxp", scores.max("template")),
            ("avgp", scores.mean("template")),
        ):
            both = pd.concat(
                [
                    computed.to_series().rename("value"),
                    released.sel(metric=metric, filtering=filtering, drop=True)
                    .to_series()
                    .rename("other_value"),
                ],
                axis=1,
            ).dropna()
            off = ~np.isclose(both["value"], both["other_value"], rtol=0, atol=1e-9)
            both = both[off].reset_index().assign(check=f"{metric}_{filtering}")
            both["file"] = both["task"].map(csv_file)
            both["other_file"] = (
                f"metric results/open-source models/open-source models "
                f"{'MaxP' if metric == 'maxp' else 'AvgP'} "
                f"({METRIC_FILES[filtering]}).csv"
            )
            frames.append(both)
    return frames


def from_cubes(csv, json, metrics=None) -> pd.DataFrame:
    """The contradictions visible in the packaged cubes of the release's two copies.

    ``csv`` and ``json`` are the cubes read from the accuracy CSVs and from the
    aggregated JSONs (template flags and methods from each file), aligned on
    models; ``metrics`` the released metric results. Files are named by
    folder and task, as in the release.
    """
    json = json.sel(model=csv["model"])
    csv_file = {
        t: f"paraphrases accuracies/{b}/{t}.csv"
        for t, b in zip(csv["task"].values, csv["benchmark"].values, strict=True)
    }
    json_file = {
        t: f"paraphrases accuracies and rankings (aggregated)/{b}/{t}.json"
        for t, b in zip(csv["task"].values, csv["benchmark"].values, strict=True)
    }
    meta_file = {
        t: f"automatic paraphrases/{b}/{t}.csv"
        for t, b in zip(csv["task"].values, csv["benchmark"].values, strict=True)
    }
    ids = csv["template_id"].to_pandas()
    frames = []
    a = csv["score"].to_series().rename("value")
    b = json["score"].to_series().rename("other_value")
    both = pd.concat([a, b], axis=1).dropna().reset_index()
    off = ~np.isclose(both["value"], both["other_value"], rtol=0, atol=1e-9)
    both = both[off].assign(check="accuracy")
    both["file"] = both["task"].map(csv_file)
    both["other_file"] = both["task"].map(json_file)
    frames.append(both)
    for cube, files in ((csv, csv_file), (json, json_file)):
        scores = cube["score"].to_series().dropna().rename("value").reset_index()
        samples = cube["template_samples"].to_series().rename("other_value").reset_index()
        scores = scores.merge(samples, on=["task", "template"])
        product = scores["value"] * scores["other_value"]
        scores = scores[(product - product.round()).abs() > WHOLE].assign(check="samples")
        scores["file"] = scores["task"].map(files)
        scores["other_file"] = scores["task"].map(meta_file)
        frames.append(scores)
    flags = pd.concat(
        [
            csv["template_valid"].to_series().rename("value"),
            json["template_valid"].to_series().rename("other_value"),
        ],
        axis=1,
    )
    real = csv["template_id"].to_series() != ""
    flags = flags[real & (flags["value"] != flags["other_value"])].reset_index()
    flags = flags.assign(check="valid", value=flags["value"].map({False: "0?", True: "1"}))
    flags["file"] = flags["task"].map(meta_file)
    flags["other_file"] = flags["task"].map(json_file)
    frames.append(flags)
    methods = pd.concat(
        [
            csv["template_method"].to_series().rename("value"),
            json["template_method"].to_series().rename("other_value"),
        ],
        axis=1,
    )
    methods = methods[real & (methods["value"] != methods["other_value"])].reset_index()
    methods = methods.drop_duplicates(["task", "value", "other_value"]).drop(columns="template")
    methods = methods.assign(check="method_name")
    methods["file"] = methods["task"].map(meta_file)
    methods["other_file"] = methods["task"].map(json_file)
    frames.append(methods)
    if metrics is not None:
        frames += _metric_checks(csv, metrics, csv_file)
    found = pd.concat(frames, ignore_index=True)
    found["template"] = [
        int(ids.loc[t, int(p)]) if pd.notna(p) else None
        for t, p in zip(found["task"], found["template"], strict=True)
    ]
    order = ["accuracy", "method_name", "valid", "samples", *METRIC_CHECKS]
    found["check"] = pd.Categorical(found["check"], order)
    found = found.sort_values("check", kind="stable")
    found["check"] = found["check"].astype(str)
    return found.reindex(columns=COLUMNS).reset_index(drop=True)
