"""Every comparison between the redundant copies of the Mizrahi et al. (2024) release.

Each check returns a frame of disagreements with the columns of :data:`COLUMNS`;
``value`` describes ``file`` and ``other_value`` describes ``other_file``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import rankstats

from ._mizrahi2024_files import ACCURACIES, AGGREGATED, METRICS, PARAPHRASES, Release
from ._mizrahi2024_metrics import FILTERINGS, metric_results, open_source_file
from ._mizrahi2024_release import long_meta, long_scores, read_copy, read_meta

COLUMNS = ["check", "file", "other_file", "task", "model", "template", "value", "other_value"]
METHOD_ALIASES = {"meta_cot": "cot", "meta_desc": "gradual"}  # paraphrase CSV -> JSON
RANK_TIES = "min"
TOLERANCE = 1e-9
WHOLE = 1e-6


def _rows(check: str, frame: pd.DataFrame, rename: dict | None = None, **constants):
    """The rows of one check: ``frame``'s columns renamed to :data:`COLUMNS`, plus constants."""
    frame = frame.rename(columns=rename or {}).assign(check=check, **constants)
    return frame.reindex(columns=COLUMNS).reset_index(drop=True)


def _presence(check: str, one: pd.DataFrame, other: pd.DataFrame, keys: list) -> list:
    """Rows for each key of ``one`` that ``other`` lacks, and the reverse (shared tasks only)."""
    found = []
    for a, b in ((one, other), (other, one)):
        merged = a.drop_duplicates(keys).merge(
            b[keys].drop_duplicates(), on=keys, how="left", indicator=True
        )
        lacking = merged[merged["_merge"] == "left_only"].drop(columns="_merge")
        partner = b[["task", "file"]].drop_duplicates("task")
        lacking = lacking.merge(partner.rename(columns={"file": "other_file"}), on="task")
        found.append(_rows(check, lacking, value="present", other_value="absent"))
    return found


def _tasks(copies: dict) -> list:
    """Tasks that have a file in one folder of the release and none in another."""
    found = []
    for folder, (read, suffix) in copies.items():
        for other, (other_read, other_suffix) in copies.items():
            for benchmark, task in sorted(set(read) - set(other_read)):
                found.append(
                    {
                        "check": "tasks",
                        "file": f"{folder}/{benchmark}/{task}{suffix}",
                        "other_file": f"{other}/{benchmark}/{task}{other_suffix}",
                        "task": task,
                        "value": "present",
                        "other_value": "absent",
                    }
                )
    return [pd.DataFrame(found, columns=COLUMNS)]


def _meta_checks(para: pd.DataFrame, own: pd.DataFrame) -> list:
    both = para.merge(own, on=["task", "template"], suffixes=("", "_json"))
    mapped = both["method"].map(lambda m: METHOD_ALIASES.get(m, m))
    renamed = both[(both["method"] != both["method_json"]) & (mapped == both["method_json"])]
    names = renamed.drop_duplicates(["task", "method", "method_json"]).drop(columns="template")
    original = both["is_original"] != (both["method_json"] == "default")

    def rows(check, frame, value, other):
        return _rows(
            check, frame, {"file_json": "other_file", value: "value", other: "other_value"}
        )

    return [
        rows("template_text", both[both["text"] != both["text_json"]], "text", "text_json"),
        rows("method", both[mapped != both["method_json"]], "method", "method_json"),
        rows("method_name", names, "method", "method_json"),
        rows("valid", both[both["valid"] != both["valid_json"]], "valid_flag", "valid_json"),
        rows("original", both[original], "is_original", "method_json"),
    ]


def _rank_check(release: Release, read: dict) -> list:
    found = []
    for (_, task), (path, accs, _, ranks) in read.items():
        again = rankstats.rank(accs.to_numpy(), dim=-1, ties=RANK_TIES)
        differ = np.argwhere(again != ranks.to_numpy())
        found.append(
            pd.DataFrame(
                {
                    "file": release.name(path),
                    "other_file": release.name(path),
                    "task": task,
                    "model": accs.columns[differ[:, 1]],
                    "template": accs.index[differ[:, 0]],
                    "value": ranks.to_numpy()[tuple(differ.T)],
                    "other_value": again[tuple(differ.T)],
                }
            )
        )
    return [_rows("rank", pd.concat(found, ignore_index=True))]


def _samples_check(scores: pd.DataFrame, para: pd.DataFrame) -> list:
    both = scores.merge(
        para[["task", "template", "samples", "file"]],
        on=["task", "template"],
        suffixes=("", "_meta"),
    )
    product = both["value"] * both["samples"]
    off = (product - product.round()).abs() > WHOLE
    return [_rows("samples", both[off], {"file_meta": "other_file", "samples": "other_value"})]


def _metric_checks(published, scores: pd.DataFrame, para: pd.DataFrame) -> list:
    both = scores.merge(para[["task", "template", "valid"]], on=["task", "template"])
    found = []
    for filtering in FILTERINGS:
        kept = both if filtering == "none" else both[both["valid"]]
        grouped = kept.groupby(["file", "task", "model"], sort=False)["value"]
        for metric, computed in (("maxp", grouped.max()), ("avgp", grouped.mean())):
            table = published.sel(metric=metric, filtering=filtering).to_pandas()
            frame = computed.reset_index().merge(
                table.stack().rename("other_value").reset_index(), on=["model", "task"], how="left"
            )
            off = ~np.isclose(frame["value"], frame["other_value"], rtol=0, atol=TOLERANCE)
            found.append(
                _rows(
                    f"{metric}_{filtering}",
                    frame[off],
                    other_file=open_source_file(metric, filtering),
                )
            )
    return found


def cross_check(release: Release) -> pd.DataFrame:
    """All disagreements between the copies; see :func:`.mizrahi2024.cross_check`."""
    csv, json_copy, meta = read_copy(release, "csv"), read_copy(release, "json"), read_meta(release)
    found = _tasks(
        {ACCURACIES: (csv, ".csv"), AGGREGATED: (json_copy, ".json"), PARAPHRASES: (meta, ".csv")}
    )
    csv_long, json_long = long_scores(csv, release), long_scores(json_copy, release)
    para = long_meta(meta, release)
    own = long_meta({key: (t[0], t[2]) for key, t in json_copy.items()}, release)
    keys = ["task", "template"]
    found += _presence("templates", csv_long[[*keys, "file"]], para[[*keys, "file"]], keys)
    found += _presence("templates", own[[*keys, "file"]], para[[*keys, "file"]], keys)
    found += _presence("templates", csv_long[[*keys, "file"]], own[[*keys, "file"]], keys)
    found += _presence(
        "models",
        csv_long[["task", "model", "file"]],
        json_long[["task", "model", "file"]],
        ["task", "model"],
    )
    found += _benchmark_models(csv_long) + _benchmark_models(json_long)
    both = csv_long.merge(json_long, on=[*keys, "model"], suffixes=("", "_json"))
    off = ~np.isclose(both["value"], both["value_json"], rtol=0, atol=TOLERANCE)
    found.append(
        _rows("accuracy", both[off], {"file_json": "other_file", "value_json": "other_value"})
    )
    found += _meta_checks(para, own)
    found += _rank_check(release, json_copy)
    found += _samples_check(csv_long, para) + _samples_check(json_long, para)
    if (release.root / METRICS).is_dir():
        published = metric_results(release)["value"]
        found += _metric_checks(published, csv_long, para)
        found += _metric_checks(published, json_long, para)
    result = pd.concat(
        [frame for frame in found if len(frame)] or [_rows("", pd.DataFrame())], ignore_index=True
    )
    result = result.astype(
        {"template": "Int64", "model": object, "value": object, "other_value": object}
    )
    result["model"] = result["model"].where(result["model"].notna(), None)
    return result


def _benchmark_models(scores: pd.DataFrame) -> list:
    """Models one file of a benchmark lacks while another file of it holds them."""
    present = scores[["benchmark", "task", "model", "file"]].drop_duplicates(["task", "model"])
    files = present[["benchmark", "task", "file"]].drop_duplicates("task")
    expected = files.merge(present[["benchmark", "model"]].drop_duplicates(), on="benchmark")
    merged = expected.merge(
        present,
        on=["benchmark", "task", "model"],
        how="left",
        suffixes=("", "_held"),
        indicator=True,
    )
    lacking = merged[merged["_merge"] == "left_only"]
    holder = present.drop_duplicates(["benchmark", "model"])[["benchmark", "model", "file"]]
    lacking = lacking.drop(columns="file_held").merge(
        holder.rename(columns={"file": "other_file"}), on=["benchmark", "model"]
    )
    return [_rows("models", lacking, value="absent", other_value="present")]
