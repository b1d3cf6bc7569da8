"""The importer of Mizrahi et al. (2024)'s release, on the verbatim copy in tests/data."""

from __future__ import annotations

import io
import json
import re
import shutil
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankstats
import rankstats_collectors.files
from rankstats_collectors.files import ImporterError, mizrahi2024

RELEASE = Path(__file__).parent / "data" / "mizrahi2024"
ACC = "paraphrases accuracies"
AGG = "paraphrases accuracies and rankings (aggregated)"
PARA = "automatic paraphrases"
BBH_ABSENT = ["t0_3b", "alpaca-7b", "flan-t5-small", "flan-t5-base", "flan-t5-large"]
SWAPPED_TASKS = ["all_words_from_category", "any_words_from_category"]


@pytest.fixture(scope="module")
def cube():
    return mizrahi2024.load(RELEASE)


@pytest.fixture(scope="module")
def json_cube():
    return mizrahi2024.load(RELEASE, accuracies="json")


@pytest.fixture(scope="module")
def found():
    return mizrahi2024.cross_check(RELEASE)


@pytest.fixture
def release(tmp_path):
    """A writable copy of the release, to break."""
    return Path(shutil.copytree(RELEASE, tmp_path / "release"))


# --- the cube --------------------------------------------------------------------------------


def test_registered_as_an_importer():
    assert rankstats_collectors.files.get("mizrahi2024") is mizrahi2024.load


def test_importer_registry(monkeypatch):
    from rankstats_collectors import _registry as registry

    files = rankstats_collectors.files
    files.register("unit", "rankstats_collectors.files.mizrahi2024:cross_check")
    try:
        with pytest.raises(ValueError, match="already registered"):
            files.register("unit", lambda paths: None)
        assert files.get("unit") is mizrahi2024.cross_check
        assert "unit" in files.available()
    finally:
        files.unregister("unit")
    with pytest.raises(files.UnknownImporterError, match="no importer named 'unit'"):
        files.get("unit")
    with pytest.raises(TypeError):
        files.register("unit", 42)
    point = EntryPoint(
        "third-party",
        "rankstats_collectors.files.mizrahi2024:load_metric_results",
        files.ENTRY_POINT_GROUP,
    )
    monkeypatch.setattr(registry, "entry_points", lambda group: [point])
    try:
        assert "third-party" in files.available()
        assert files.get("third-party") is mizrahi2024.load_metric_results
    finally:
        files.unregister("third-party")


def test_shape_and_labels(cube):
    assert dict(cube.score.sizes) == {"model": 16, "task": 25, "template": 265}
    benchmark = cube.benchmark.to_series()
    assert benchmark.value_counts().to_dict() == {"BBH": 15, "LMentry": 10}
    assert list(benchmark.iloc[:10]) == ["LMentry"] * 10  # the paper's order
    counts = (cube.template_id != "").sum("template").to_series()
    assert counts["homophones"] == 265 and counts["salient_translation_error_detection"] == 136
    ids = cube.template_id.sel(task="snarks").values
    assert ids[:3].tolist() == ["1", "2", "3"] and ids[161] == "162" and ids[162] == ""
    assert cube.attrs["score_kind"] == "proportion" and cube.attrs["metric"] == "accuracy"
    assert cube.attrs["accuracies"] == "csv" and cube.attrs["license"] == "CDLA-Permissive-2.0"
    assert ACC in cube.attrs["source"] and PARA in cube.attrs["source"]


def test_scores_equal_every_cell_of_the_accuracy_csvs(cube):
    for path in sorted((RELEASE / ACC).glob("*/*.csv")):
        wide = pd.read_csv(path).set_index("paraphrase idx")
        got = cube.score.sel(task=path.stem, model=[c[:-4] for c in wide.columns])
        got = got.isel(template=slice(0, len(wide))).transpose("template", "model").values
        assert np.array_equal(got, wide.to_numpy()), path.name  # exact, not approximate


def test_bbh_lacks_five_models_as_structure(cube):
    bbh = cube.benchmark == "BBH"
    ran = cube.score.where(bbh).notnull().any("template")
    assert sorted(cube.model.values[~ran.any("task").values]) == sorted(BBH_ABSENT)
    assert bool(ran.sel(model="flan-t5-xl").where(bbh, True).all())
    w = rankstats.kendall_w(cube)  # absent models drop out per task: no NaN
    assert bool(w.statistic.notnull().all())


def test_template_coordinates(cube):
    originals = cube.template_is_original.sum("template").to_series()
    assert set(originals[cube.benchmark.values == "LMentry"]) == {3}
    assert set(originals[cube.benchmark.values == "BBH"]) == {1}
    real = cube.template_id != ""
    assert set(np.unique(cube.template_samples.where(real).values[real.values])) == {100}
    methods = set(np.unique(cube.template_method.values)) - {""}
    assert methods == {"default", "meta_cot", "meta_desc", "rephrase"}
    assert int(cube.template_valid.sum()) == 4398  # the "correct" cells that are 1
    seven = cube.sel(task="logical_deduction_seven_objects")
    assert int(seven.template_valid.sum()) == 145  # "0?" counts as 0
    assert not bool(seven.template_valid.isel(template=64))
    text = cube.template_text.sel(task="snarks").values[0]
    assert text == "Q: Which statement is sarcastic?\nOptions:\n{options}\nA:"
    assert cube.template_format.sel(task="snarks").values[0] == "Q&A"
    assert float(cube.template_length.sel(task="snarks")[0]) == 15


def test_the_json_copy(cube, json_cube):
    assert json_cube.attrs["accuracies"] == "json" and AGG in json_cube.attrs["source"]
    aligned = json_cube.score.sel(model=cube.model)
    differ = ~((aligned == cube.score) | (aligned.isnull() & cube.score.isnull()))
    by = differ.any("template")
    assert sorted(cube.task.values[by.any("model").values]) == SWAPPED_TASKS
    assert sorted(cube.model.values[by.any("task").values]) == ["flan-t5-base", "flan-t5-small"]
    swapped = json_cube.score.sel(task=SWAPPED_TASKS, model="flan-t5-small")
    assert bool(
        (swapped == cube.score.sel(task=SWAPPED_TASKS, model="flan-t5-base"))
        .where(swapped.notnull(), True)
        .all()
    )
    methods = set(np.unique(json_cube.template_method.values)) - {""}
    assert methods == {"cot", "default", "gradual", "rephrase"}
    seven = json_cube.template_valid.sel(task="logical_deduction_seven_objects")
    assert bool(seven.isel(template=64)) and int(seven.sum()) == 146
    assert bool((json_cube.template_text == cube.template_text).all())


def test_bad_options():
    with pytest.raises(ValueError, match="accuracies='xml'"):
        mizrahi2024.load(RELEASE, accuracies="xml")
    with pytest.raises(ImporterError, match="no release folder"):
        mizrahi2024.load(RELEASE / "nothing here")
    with pytest.raises(ValueError, match="one folder"):
        mizrahi2024.load([RELEASE, RELEASE])


# --- cross_check ---------------------------------------------------------------------------

COUNTS = {
    "accuracy": 964,
    "method_name": 50,
    "valid": 1,
    "samples": 4534,
    "maxp_none": 4,
    "avgp_none": 4,
    "maxp_correct": 4,
    "avgp_correct": 4,
}


def test_cross_check_counts(found):
    assert list(found.columns) == [
        "check",
        "file",
        "other_file",
        "task",
        "model",
        "template",
        "value",
        "other_value",
    ]
    assert found.groupby("check").size().to_dict() == COUNTS
    # every set of tasks, templates and models agrees; the JSON ranks, the "default prompt"
    # flags, the texts and the methods (once renamed) all agree
    assert not set(found["check"]) & {
        "tasks",
        "templates",
        "models",
        "rank",
        "original",
        "template_text",
        "method",
    }


def test_flan_t5_small_and_base_are_swapped_in_two_accuracy_csvs(found):
    rows = found[found.check == "accuracy"]
    assert rows.groupby("task").size().to_dict() == {
        "all_words_from_category": 488,
        "any_words_from_category": 476,
    }
    assert set(rows.model) == {"flan-t5-small", "flan-t5-base"}
    assert set(rows.file) == {f"{ACC}/LMentry/{t}.csv" for t in SWAPPED_TASKS}
    assert set(rows.other_file) == {f"{AGG}/LMentry/{t}.json" for t in SWAPPED_TASKS}
    first = rows[(rows.task == "all_words_from_category") & (rows.template == 1)]
    assert first.set_index("model")[["value", "other_value"]].to_dict("index") == {
        "flan-t5-base": {"value": 0.49, "other_value": 0.47},
        "flan-t5-small": {"value": 0.47, "other_value": 0.49},
    }
    # value and other_value are each other's, model for model
    pivot = rows.pivot_table(
        index=["task", "template"],
        columns="model",
        values=["value", "other_value"],
        aggfunc="first",
    )
    assert np.array_equal(pivot["value"]["flan-t5-base"], pivot["other_value"]["flan-t5-small"])


def test_the_published_metrics_agree_with_the_json_copy(found):
    rows = found[found.check.str.startswith(("maxp", "avgp"))]
    assert set(rows.file.str.split("/").str[0]) == {ACC}
    assert set(rows.task) == set(SWAPPED_TASKS)
    maxp = rows[(rows.check == "maxp_none") & (rows.model == "flan-t5-base")]
    assert maxp.set_index("task")["other_value"].to_dict() == {
        "all_words_from_category": 0.72,
        "any_words_from_category": 0.87,
    }
    assert maxp["other_file"].iloc[0].endswith("open-source models MaxP (no filtering).csv")


def test_method_names_and_the_doubtful_flag(found):
    names = found[found.check == "method_name"]
    assert names.groupby(["value", "other_value"]).size().to_dict() == {
        ("meta_cot", "cot"): 25,
        ("meta_desc", "gradual"): 25,
    }
    assert names.template.isna().all()
    valid = found[found.check == "valid"].iloc[0]
    assert (valid.task, valid.template, valid.value, valid.other_value) == (
        "logical_deduction_seven_objects",
        65,
        "0?",
        True,
    )
    assert valid.file == f"{PARA}/BBH/logical_deduction_seven_objects.csv"


def test_word_not_containing_states_100_samples_but_has_26(found):
    rows = found[found.check == "samples"]
    assert set(rows.task) == {"word_not_containing"}
    assert rows.groupby("file").size().to_dict() == {
        f"{ACC}/LMentry/word_not_containing.csv": 2267,
        f"{AGG}/LMentry/word_not_containing.json": 2267,
    }
    assert set(rows.other_value) == {100}
    values = rows["value"].to_numpy(dtype=float)
    assert np.allclose(values * 26, np.round(values * 26), atol=1e-6)


def test_json_ranks_are_min_ranks():
    data = json.loads((RELEASE / AGG / "BBH" / "snarks.json").read_text())["paraphrases"]
    accs = pd.DataFrame({k: v["accs"] for k, v in data.items()}).T
    ranks = pd.DataFrame({k: v["ranks"] for k, v in data.items()}).T[accs.columns]
    for ties in ("min", "average", "max", "dense", "ordinal"):
        again = rankstats.rank(accs.to_numpy(dtype=float), dim=-1, ties=ties)
        assert np.array_equal(again, ranks.to_numpy(dtype=float)) == (ties == "min"), ties
    assert mizrahi2024.RANK_TIES == "min"


def test_cross_check_reports_a_changed_rank_and_text(release):
    path = release / AGG / "BBH" / "snarks.json"
    data = json.loads(path.read_text())
    data["paraphrases"]["7"]["ranks"]["t0pp"] = 1
    data["paraphrases"]["8"]["template"] += " Answer:"
    path.write_text(json.dumps(data))
    found = mizrahi2024.cross_check(release)
    rank = found[found.check == "rank"]
    assert rank[["task", "model", "template", "value"]].values.tolist() == [
        ["snarks", "t0pp", 7, 1.0]
    ]
    assert found[found.check == "template_text"]["template"].tolist() == [8]


def test_cross_check_reports_missing_templates_and_tasks(release):
    path = release / AGG / "BBH" / "snarks.json"
    data = json.loads(path.read_text())
    del data["paraphrases"]["162"]
    path.write_text(json.dumps(data))
    (release / AGG / "BBH" / "navigate.json").unlink()
    found = mizrahi2024.cross_check(release)
    templates = found[found.check == "templates"]
    assert templates[["file", "template", "value"]].values.tolist() == [
        [f"{PARA}/BBH/snarks.csv", 162, "present"],
        [f"{ACC}/BBH/snarks.csv", 162, "present"],
    ]
    tasks = found[found.check == "tasks"]
    assert sorted(tasks.other_file) == [f"{AGG}/BBH/navigate.json"] * 2


# --- malformed files -------------------------------------------------------------------------


def rewrite_csv(path: Path, change) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    change(frame).to_csv(path, index=False)


def raises_at(release, file: str, row, column: str, problem: str, **options):
    """The import stops naming the file as it can be opened: inside the release folder."""
    where = "header row" if row == "header" else f"row {row}"
    shown = (Path(release) / file).as_posix()
    pattern = (
        rf"'{re.escape(shown)}', {re.escape(where)}, column "
        rf"'{re.escape(column)}': .*{problem}"
    )
    with pytest.raises(ImporterError, match=pattern) as caught:
        mizrahi2024.load(release, **options)
    assert isinstance(caught.value, rankstats.CubeError)


def test_missing_column(release):
    rewrite_csv(release / PARA / "BBH" / "snarks.csv", lambda f: f.drop(columns="samples"))
    raises_at(release, f"{PARA}/BBH/snarks.csv", "header", "samples", "missing column")


def test_missing_index_column(release):
    rewrite_csv(
        release / ACC / "LMentry" / "homophones.csv",
        lambda f: f.rename(columns={"paraphrase idx": "idx"}),
    )
    raises_at(
        release, f"{ACC}/LMentry/homophones.csv", "header", "paraphrase idx", "missing column"
    )


def test_non_numeric_accuracy(release):
    def change(frame):
        frame.loc[4, "t0pp_acc"] = "n/a"
        return frame

    rewrite_csv(release / ACC / "BBH" / "snarks.csv", change)
    raises_at(release, f"{ACC}/BBH/snarks.csv", 5, "t0pp_acc", "'n/a' is not an accuracy")


def test_empty_and_out_of_range_accuracies(release):
    def change(frame):
        frame.loc[9, "vicuna-13b_acc"] = ""
        return frame

    rewrite_csv(release / ACC / "BBH" / "navigate.csv", change)
    raises_at(release, f"{ACC}/BBH/navigate.csv", 10, "vicuna-13b_acc", "empty")

    def change(frame):
        frame.loc[9, "vicuna-13b_acc"] = "1.5"
        return frame

    rewrite_csv(release / ACC / "BBH" / "navigate.csv", change)
    raises_at(release, f"{ACC}/BBH/navigate.csv", 10, "vicuna-13b_acc", r"outside \[0, 1\]")


def test_a_model_unknown_to_the_other_files(release):
    rewrite_csv(
        release / ACC / "BBH" / "hyperbaton.csv",
        lambda f: f.rename(columns={"minotaur-15b_acc": "mystery-7b_acc"}),
    )
    raises_at(
        release,
        f"{ACC}/BBH/hyperbaton.csv",
        "header",
        "mystery-7b_acc",
        "model 'mystery-7b' is in no other BBH file",
    )


def test_a_model_missing_from_one_file(release):
    rewrite_csv(
        release / ACC / "BBH" / "hyperbaton.csv", lambda f: f.drop(columns="minotaur-15b_acc")
    )
    raises_at(
        release,
        f"{ACC}/BBH/hyperbaton.csv",
        "header",
        "minotaur-15b_acc",
        "model 'minotaur-15b' is missing",
    )


def test_template_index_gap(release):
    rewrite_csv(release / ACC / "BBH" / "snarks.csv", lambda f: f.drop(index=2))
    raises_at(release, f"{ACC}/BBH/snarks.csv", 3, "paraphrase idx", "template index 3 is missing")


def test_duplicated_template_index(release):
    def change(frame):
        frame.loc[4, "prompt idx"] = "4"
        return frame

    rewrite_csv(release / PARA / "LMentry" / "word_before.csv", change)
    raises_at(
        release,
        f"{PARA}/LMentry/word_before.csv",
        5,
        "prompt idx",
        "template index 4 repeats row 4",
    )


def test_templates_differ_between_files(release):
    rewrite_csv(release / ACC / "BBH" / "snarks.csv", lambda f: f.iloc[:-1])
    raises_at(
        release,
        f"{PARA}/BBH/snarks.csv",
        162,
        "prompt idx",
        f"template 162 is not in '{re.escape((release / ACC / 'BBH' / 'snarks.csv').as_posix())}'",
    )


def test_bad_flag(release):
    def change(frame):
        frame.loc[6, "correct"] = "maybe"
        return frame

    rewrite_csv(release / PARA / "BBH" / "navigate.csv", change)
    raises_at(release, f"{PARA}/BBH/navigate.csv", 7, "correct", "'maybe' is not a flag")


def test_missing_task_file(release):
    (release / PARA / "BBH" / "snarks.csv").unlink()
    shown = re.escape((release / ACC / "BBH" / "snarks.csv").as_posix())
    with pytest.raises(
        ImporterError,
        match=rf"^'{shown}': {PARA}/BBH/ has no file for task "
        "'snarks'",
    ):
        mizrahi2024.load(release)


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data["paraphrases"])
    path.write_text(json.dumps(data))


def test_json_non_numeric_accuracy(release):
    edit_json(
        release / AGG / "BBH" / "snarks.json", lambda p: p["12"]["accs"].update({"t0pp": "0.5"})
    )
    raises_at(
        release,
        f"{AGG}/BBH/snarks.json",
        "'12'",
        "accs.t0pp",
        "'0.5' is not a number",
        accuracies="json",
    )


def test_json_missing_field_and_models(release):
    path = release / AGG / "LMentry" / "homophones.json"
    edit_json(path, lambda p: p["3"].pop("correct"))
    raises_at(
        release,
        f"{AGG}/LMentry/homophones.json",
        "'3'",
        "correct",
        "missing field",
        accuracies="json",
    )
    edit_json(path, lambda p: p["3"].update(correct=True) or p["9"]["ranks"].pop("t0pp"))
    raises_at(
        release,
        f"{AGG}/LMentry/homophones.json",
        "'9'",
        "ranks",
        r"missing: \['t0pp'\]",
        accuracies="json",
    )


def test_json_index_gap(release):
    edit_json(release / AGG / "BBH" / "navigate.json", lambda p: p.pop("5"))
    raises_at(
        release,
        f"{AGG}/BBH/navigate.json",
        "'6'",
        "paraphrases",
        "template index 5 is missing",
        accuracies="json",
    )


def test_metric_results_malformed(release):
    name = "metric results/open-source models/open-source models CPS (no filtering).csv"
    rewrite_csv(release / name, lambda f: f.assign(t0pp=f["t0pp"].where(f.index != 3, "x")))
    shown = re.escape((release / name).as_posix())
    with pytest.raises(ImporterError, match=rf"^'{shown}', row 4, column 't0pp'"):
        mizrahi2024.load_metric_results(release)


def test_malformed_release_writes_nothing(release, tmp_path, capsys):
    rewrite_csv(release / ACC / "BBH" / "snarks.csv", lambda f: f.drop(index=2))
    out = tmp_path / "out"
    assert mizrahi2024.main(["build-datasets", str(release), str(out)]) == 1
    assert "template index 3 is missing" in capsys.readouterr().err
    assert not out.exists()


# --- metric results --------------------------------------------------------------------------


def test_metric_results():
    metrics = mizrahi2024.load_metric_results(RELEASE)
    assert dict(metrics.value.sizes) == {"model": 16, "task": 39, "metric": 3, "filtering": 2}
    assert metrics.benchmark.to_series().value_counts().to_dict() == {
        "BBH": 15,
        "BBL": 14,
        "LMentry": 10,
    }
    labels = metrics.task_label.to_series()
    assert labels["word_not_containing"] == "word not containing"
    assert labels["bbq_lite"] == "bbq lite"
    value = metrics.value.sel(task="word_not_containing", model="t0_3b", filtering="none")
    assert float(value.sel(metric="maxp")) == 0.6153846153846154
    assert bool(metrics.value.sel(task="snarks", model="t0_3b").isnull().all())
    estimate = metrics.openai_estimate.sel(openai_model="davinci", task="all_words_from_category")
    assert float(estimate.sel(metric="avgp", prompts="all")) == 0.15149999999999997
    assert float(estimate.sel(metric="maxp", prompts="original")) == 0.64
    assert bool(estimate.sel(metric="cps").isnull().all())
    assert bool(metrics.openai_estimate.sel(task="snarks").isnull().all())


def test_import_prints_the_release_audit(tmp_path, capsys, found):
    from rankstats.cli import main

    output = tmp_path / "x.nc"
    assert main(["import", "mizrahi2024", str(RELEASE), "-o", str(output)]) == 0
    out = capsys.readouterr().out
    assert "Release audit: 5565 contradictions" in out
    assert "flan-t5-base and flan-t5-small swapped in all_words_from_category (488 cells)" in out
    assert "flan-t5-base and flan-t5-small swapped in any_words_from_category (476 cells)" in out
    assert "word_not_containing: 2468 accuracies in steps of 1/26, 100 samples stated" in out
    assert "logical_deduction_seven_objects, template 65: '0?'" in out
    assert "meta_cot" in out
    cube = rankstats.open_cube(output)
    first = cube.attrs["import_summary"].splitlines()[0]
    cells = int(cube.score.notnull().sum())
    assert first.startswith(f"mizrahi2024: read {cells} cells from 25 files (")
    assert first.endswith(f": kept {cells}, skipped 0")
    assert "Release audit:" in cube.attrs["import_summary"]
    # the full list, as written by cross_check, travels with the cube
    kept = pd.read_csv(io.StringIO(cube.attrs["release_audit"]))
    assert len(kept) == len(found)
    assert kept.groupby("check").size().to_dict() == found.groupby("check").size().to_dict()


def test_packaged_audit_equals_the_cross_check(found):
    from rankstats.reproduce import audit

    packaged = audit("mizrahi2024")
    # every contradiction of the release that the packaged copies can show, the same count
    counts = found.groupby("check").size().to_dict()
    assert packaged.groupby("check").size().to_dict() == counts
    assert set(packaged.loc[packaged.check == "accuracy", "model"]) == {
        "flan-t5-small",
        "flan-t5-base",
    }
