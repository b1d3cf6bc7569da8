"""Properties every importer shares, checked across all of them.

- Metadata is joined to scores by identifier: a file that lists its ids in
  another order than the file it is joined to gets the same texts and labels.
- A NaN score is missing, under one rule for every importer: skipped,
  counted under one reason, said in the summary; never an error.
- Every summary counts what was read, what was kept and what was skipped:
  read = kept + skipped, and kept = the scores in the cube.

Each importer's case builds a small input from the fixtures in tests/data
(copied, then changed), once as it is and once with one score made NaN.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankstats_collectors.files import (
    ImporterError,
    dove,
    helm,
    inspect_ai,
    lm_eval,
    mizrahi2024,
    open_llm_leaderboard,
    opencompass,
    prompteval,
    tables,
    unitxt,
)
from rankstats_collectors.files._scored_rows import NAN_SCORE

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

DATA = Path(__file__).parent / "data"
DOVE_FILE = (
    DATA
    / "fixtures"
    / "dove"
    / "Llama-3.2-1B-Instruct"
    / "en"
    / "0_shot"
    / "mmlu.global_facts.parquet"
)
INSPECT_MMLU = DATA / "fixtures" / "inspect_ai" / "mmlu-summary-choices.eval"
HELM_RUNS = DATA / "helm" / "runs" / "v1"
HELM_FIXTURE_RUNS = DATA / "fixtures" / "helm" / "runs" / "v1"
UNITXT_OUT = DATA / "unitxt" / "out"
OPENCOMPASS_OUT = DATA / "opencompass" / "out"
PROMPTEVAL = DATA / "prompteval"
MIZRAHI = DATA / "mizrahi2024"
DATE = "2024-01-01T00-00-00"

_FIRST_LINE = re.compile(
    r"^(?P<importer>\S+): read (?P<read>\d+) (?:row|cell)s? from .*: "
    r"kept (?P<kept>\d+), skipped (?P<skipped>\d+)$"
)


def counts(cube) -> dict[str, int]:
    """The read, kept and skipped counts of the cube's import summary."""
    first = cube.attrs["import_summary"].splitlines()[0]
    match = _FIRST_LINE.match(first)
    assert match, f"the summary's first line does not count read, kept, skipped: {first!r}"
    return {key: int(match[key]) for key in ("read", "kept", "skipped")}


def nan_count(cube) -> int:
    """How many scores the summary says were skipped as NaN."""
    found = re.search(rf"(\d+) × {re.escape(NAN_SCORE)}", cube.attrs["import_summary"])
    return int(found[1]) if found else 0


# --- one small input per importer, with or without one NaN score -----------------------------


def _table(tmp: Path, nan: bool):
    scores = [0.5, "nan" if nan else 0.25, 1.0, 0.0]
    rows = [f"m{i % 2},t,a{i // 2},{value}" for i, value in enumerate(scores)]
    path = tmp / "scores.csv"
    path.write_text("model,task,template,score\n" + "\n".join(rows) + "\n")
    return tables.load(path, sample=None)


def _prompteval(tmp: Path, nan: bool):
    scores = np.array([[[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]])
    if nan:
        scores[1, 0, 2] = np.nan
    path = tmp / "task.npz"
    np.savez(
        path,
        Y=scores,
        models=np.array(["a", "b"]),
        prompts=np.array(["0", "1"]),
        examples=np.array(["q0", "q1", "q2"]),
    )
    return prompteval.load(path)


def _dove(tmp: Path, nan: bool):
    table = pq.read_table(DOVE_FILE)
    while any(pa.types.is_struct(t) for t in table.schema.types):
        table = table.flatten()
    if nan:
        scores = table["evaluation.score"].to_pylist()
        scores[3] = math.nan
        index = table.schema.get_field_index("evaluation.score")
        table = table.set_column(index, "evaluation.score", pa.array(scores, pa.float64()))
    path = tmp / "dove.parquet"
    pq.write_table(table, path)
    return dove.load(path)


def _open_llm_leaderboard(tmp: Path, nan: bool):
    folder = tmp / "org__model"
    folder.mkdir()
    scores = [1.0, 0.0, math.nan if nan else 1.0, 1.0]
    pq.write_table(
        pa.table({"doc_id": [0, 1, 2, 3], "metrics": [["acc"]] * 4, "acc": scores}),
        folder / f"samples_tiny_{DATE}.parquet",
    )
    return open_llm_leaderboard.load(folder)


def _write_lines(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _lm_eval(tmp: Path, nan: bool):
    scores = [1.0, 0.0, math.nan if nan else 1.0, 1.0, 0.0]
    _write_lines(
        tmp / "org__model" / f"samples_tiny_{DATE}.jsonl",
        [
            {"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": s}
            for i, s in enumerate(scores)
        ],
    )
    return lm_eval.load(tmp)


def _lm_eval_results(tmp: Path, nan: bool):
    results = {
        f"tiny_prompt_{i}": {"acc,none": value, "alias": f"tiny_prompt_{i}"}
        for i, value in enumerate([0.5, math.nan if nan else 0.25, 0.75], start=1)
    }
    path = tmp / "org__model" / f"results_{DATE}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"results": results, "configs": {}, "model_name": "m"}))
    return lm_eval.load(path, aggregated=True)


def _write_eval(path: Path, values: list) -> Path:
    """An inspect_ai .eval log with the real MMLU log's header, one numeric score per sample."""
    with zipfile.ZipFile(INSPECT_MMLU) as archive:
        header = json.loads(archive.read("header.json"))
        base = json.loads(archive.read("samples/1_epoch_1.json"))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        for number, value in enumerate(values, start=1):
            record = {**base, "id": number, "epoch": 1, "scores": {"choice": {"value": value}}}
            archive.writestr(f"samples/{number}_epoch_1.json", json.dumps(record))
    return path


def _inspect_ai(tmp: Path, nan: bool):
    return inspect_ai.load(_write_eval(tmp / "log.eval", [1.0, 0.0, math.nan if nan else 1.0, 1.0]))


def _helm(tmp: Path, nan: bool):
    suite = Path(shutil.copytree(HELM_RUNS, tmp / "v1"))
    if nan:
        path = sorted(suite.glob("*/per_instance_stats.json"))[0]
        entries = json.loads(path.read_text())
        for stat in entries[2]["stats"]:
            if stat["name"]["name"] == "exact_match":
                stat["mean"] = stat["sum"] = math.nan
        path.write_text(json.dumps(entries))
    return helm.load(suite)


def _unitxt(tmp: Path, nan: bool):
    (source,) = UNITXT_OUT.glob("*_samples.json")
    data = json.loads(source.read_text())
    if nan:
        first = next(iter(data["samples"].values()))
        first[1]["score"] = math.nan
    path = tmp / source.name
    path.write_text(json.dumps(data))
    return unitxt.load(path)


def _opencompass(tmp: Path, nan: bool):
    out = Path(shutil.copytree(OPENCOMPASS_OUT, tmp / "out"))
    if nan:
        path = sorted(out.glob("*/results/*/*.json"))[0]
        data = json.loads(path.read_text())
        data["details"][2]["correct"] = [math.nan]
        path.write_text(json.dumps(data))
    return opencompass.load(out)


def _mizrahi2024(tmp: Path, nan: bool):
    if not nan:
        return mizrahi2024.load(MIZRAHI)
    release = Path(shutil.copytree(MIZRAHI, tmp / "release"))
    path = release / "paraphrases accuracies" / "BBH" / "snarks.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[3, "t0pp_acc"] = "nan"
    frame.to_csv(path, index=False)
    return mizrahi2024.load(release)


@dataclass(frozen=True)
class Case:
    name: str
    load: Callable


CASES = [
    Case("table", _table),
    Case("prompteval", _prompteval),
    Case("dove", _dove),
    Case("open_llm_leaderboard", _open_llm_leaderboard),
    Case("lm_eval", _lm_eval),
    Case("lm_eval aggregated", _lm_eval_results),
    Case("inspect_ai", _inspect_ai),
    Case("helm", _helm),
    Case("unitxt", _unitxt),
    Case("opencompass", _opencompass),
    Case("mizrahi2024", _mizrahi2024),
]


# reading the whole release and auditing it takes seconds
PARAMS = [
    pytest.param(case, id=case.name, marks=[pytest.mark.slow] if case.name == "mizrahi2024" else [])
    for case in CASES
]


def _fresh(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return folder


@pytest.mark.parametrize("case", PARAMS)
def test_a_nan_score_is_missing_skipped_and_counted(case, tmp_path):
    whole = case.load(_fresh(tmp_path, "whole"), False)
    holed = case.load(_fresh(tmp_path, "holed"), True)
    assert nan_count(whole) == 0
    assert nan_count(holed) == 1, holed.attrs["import_summary"]
    before, after = counts(whole), counts(holed)
    # the NaN row is read like any other, and skipped instead of kept
    assert after["read"] == before["read"]
    assert after["kept"] == before["kept"] - 1
    assert after["skipped"] == before["skipped"] + 1
    assert int(holed.score.notnull().sum()) == int(whole.score.notnull().sum()) - 1


@pytest.mark.parametrize("case", PARAMS)
def test_every_summary_counts_read_kept_and_skipped(case, tmp_path):
    for nan in (False, True):
        cube = case.load(_fresh(tmp_path, str(nan)), nan)
        found = counts(cube)
        assert found["read"] == found["kept"] + found["skipped"]
        assert found["kept"] == int(cube.score.notnull().sum())
        listed = re.search(r"skipped (\d+) (?:row|cell)s?:", cube.attrs["import_summary"])
        assert (int(listed[1]) if listed else 0) == found["skipped"]


def test_a_summary_with_skips_of_several_kinds_adds_them_up(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("model,task,template,score\nm,t,a,0.5\nm,t,b,\nm,t,c,nan\nm,t,a,0.5\n")
    cube = tables.load(path, sample=None)
    assert counts(cube) == {"read": 4, "kept": 1, "skipped": 3}
    summary = cube.attrs["import_summary"]
    assert "skipped 3 rows: " in summary
    assert "1 × an empty score" in summary and f"1 × {NAN_SCORE}" in summary


def test_averaged_rows_are_counted_as_kept_and_noted(tmp_path):
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(INSPECT_MMLU) as archive:
        header = json.loads(archive.read("header.json"))
        base = json.loads(archive.read("samples/1_epoch_1.json"))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample, epoch, value in [(1, 1, 1.0), (1, 2, 0.0), (2, 1, 1.0), (2, 2, math.nan)]:
            archive.writestr(
                f"samples/{sample}_epoch_{epoch}.json",
                json.dumps(
                    {**base, "id": sample, "epoch": epoch, "scores": {"choice": {"value": value}}}
                ),
            )
    cube = inspect_ai.load(path, epochs="mean")
    assert counts(cube) == {"read": 4, "kept": 3, "skipped": 1}
    assert int(cube.score.notnull().sum()) == 2
    assert (
        "3 rows were averaged over epochs (epochs=mean) into 2 scores"
        in cube.attrs["import_summary"]
    )
    np.testing.assert_allclose(np.sort(cube.score.values.ravel()), [0.5, 1.0])


# --- metadata joined by identifier -----------------------------------------------------------


def _prompteval_texts(tmp_path: Path, prompts, rows) -> dict:
    """``{template id: text}`` of a 2-prompt array whose templates file lists ``rows``."""
    texts = {"0": "Question: {q}", "1": "Q: {q}\nA:", "2": "Answer this: {q}"}
    templates = tmp_path / "task.csv"
    pd.DataFrame(
        {"prompt template": [texts.get(r, f"text {r}") for r in rows]}, index=[int(r) for r in rows]
    ).to_csv(templates)
    path = tmp_path / "task.npz"
    np.savez(
        path, Y=np.ones((1, len(prompts), 2)), prompts=np.array(prompts), models=np.array(["m"])
    )
    cube = prompteval.load(path, templates=str(templates))
    return dict(
        zip(cube.template_id.values[0].tolist(), cube.template_text.values[0].tolist(), strict=True)
    ), texts


@pytest.mark.parametrize(
    "prompts, rows",
    [
        (["0", "1", "2"], ["2", "0", "1"]),
        (["2", "1", "0"], ["0", "1", "2"]),
        (["1", "2", "0"], ["2", "1", "0"]),
    ],
)
def test_prompteval_texts_follow_the_prompt_ids_in_any_order(tmp_path, prompts, rows):
    found, texts = _prompteval_texts(tmp_path, prompts, rows)
    assert found == {p: texts[p] for p in prompts}


def test_prompteval_ids_missing_from_the_templates_file_are_named(tmp_path):
    with pytest.raises(
        ImporterError,
        match=r"task.npz', column 'prompts': the prompt ids "
        r"differ .*task.csv.*ids '2' in the array but not "
        r"in the templates file.*ids '5' in the templates "
        r"file but not in the array",
    ):
        _prompteval_texts(tmp_path, ["0", "1", "2"], ["0", "1", "5"])


def test_prompteval_real_templates_file_reordered(tmp_path):
    csv = pd.read_csv(PROMPTEVAL / "anatomy.csv", index_col=0)
    shuffled = tmp_path / "anatomy.csv"
    csv.iloc[np.random.default_rng(0).permutation(len(csv))].to_csv(shuffled)
    with np.load(PROMPTEVAL / "anatomy.npz") as saved:
        arrays = dict(saved)
    order = np.random.default_rng(1).permutation(len(arrays["prompts"]))
    arrays["prompts"], arrays["Y"] = arrays["prompts"][order], arrays["Y"][:, order]
    np.savez(tmp_path / "anatomy.npz", **arrays)
    original = prompteval.load(
        PROMPTEVAL / "anatomy.npz", templates=str(PROMPTEVAL / "anatomy.csv")
    )
    moved = prompteval.load(tmp_path / "anatomy.npz", templates=str(shuffled))
    text = dict(zip(original.template_id.values[0], original.template_text.values[0], strict=True))
    assert all(
        text[i] == t
        for i, t in zip(moved.template_id.values[0], moved.template_text.values[0], strict=True)
    )
    reordered = moved.sel(
        template=[
            list(moved.template_id.values[0]).index(i) for i in original.template_id.values[0]
        ]
    )
    np.testing.assert_array_equal(reordered.score.values, original.score.values)


def test_lm_eval_template_texts_follow_the_task_names(tmp_path):
    results = {
        f"tiny_prompt_{i}": {"acc,none": value}
        for i, value in enumerate([0.5, 0.25, 0.75], start=1)
    }
    configs = {f"tiny_prompt_{i}": {"doc_to_text": f"text of prompt {i}"} for i in (3, 1, 2)}
    path = tmp_path / "org__model" / f"results_{DATE}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"results": results, "configs": configs, "model_name": "m"}))
    cube = lm_eval.load(path, aggregated=True)
    for template, text in zip(
        cube.template_id.values[0], cube.template_text.values[0], strict=True
    ):
        assert text == f"text of prompt {template}"


def test_helm_instance_splits_follow_the_instance_ids(tmp_path):
    # display_predictions.json carries no split: each instance's comes from instances.json
    suite = Path(shutil.copytree(HELM_FIXTURE_RUNS, tmp_path / "v1"))
    whole = helm.load(suite, source="display_predictions")
    moved_id = None
    for path in suite.glob("*/instances.json"):
        instances = json.loads(path.read_text())
        moved_id = instances[0]["id"]
        instances[0]["split"] = "valid"
        path.write_text(json.dumps(instances[::-1]))
    cube = helm.load(suite, source="display_predictions")
    assert moved_id not in cube.sample_id.values.ravel().tolist()
    assert int(cube.score.notnull().sum()) < int(whole.score.notnull().sum())
    kept = [s for s in whole.sample_id.values.ravel().tolist() if s and s != moved_id]
    assert sorted(set(kept)) == sorted(s for s in set(cube.sample_id.values.ravel()) if s)


@pytest.mark.slow
def test_mizrahi_template_texts_follow_the_template_index(tmp_path):
    release = Path(shutil.copytree(MIZRAHI, tmp_path / "release"))
    path = release / "automatic paraphrases" / "BBH" / "snarks.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.iloc[::-1].to_csv(path, index=False)
    original = mizrahi2024.load(MIZRAHI).sel(task="snarks")
    moved = mizrahi2024.load(release).sel(task="snarks")
    for name in ("template_id", "template_text", "template_method", "template_is_original"):
        assert moved[name].values.tolist() == original[name].values.tolist(), name
    np.testing.assert_array_equal(moved.score.values, original.score.values)


# --- the importers' own modules ----------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    """The sibling modules ``path`` imports (``from ._x import``), at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_importer_modules_import_no_cycle():
    folder = Path(lm_eval.__file__).parent
    graph = {path.stem: _imports(path) for path in folder.glob("*.py")}
    done, path = set(), []

    def visit(module):
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done or module not in graph:
            return None
        path.append(module)
        for target in sorted(graph[module]):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        assert cycle is None, "import cycle: " + " -> ".join(cycle)
