"""The lm-evaluation-harness importer, on the real result files in tests/data/fixtures/lm_eval."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankstats
import rankstats_collectors.files
from rankstats import cli
from rankstats_collectors.files import ImporterError, lm_eval

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "fixtures" / "lm_eval"
ASDIV = DATA / "asdiv" / "meta-llama__Meta-Llama-3-8B-Instruct"
ASDIV_LOG = ASDIV / "samples_asdiv_2024-08-21T03-44-09.494230.jsonl"


def read_json(path: Path) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def read_lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_lines(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return path


def reported(results_file: Path, task: str, key: str) -> float:
    return read_json(results_file)["results"][task][key]


# --- real fixtures: the per-template mean equals what the run's results file reports ---


def test_asdiv_mean_equals_reported_accuracy():
    cube = lm_eval.load(ASDIV.parent)
    assert cube.model.values.tolist() == ["meta-llama/Meta-Llama-3-8B-Instruct"]
    assert cube.attrs["score_kind"] == "binary" and cube.attrs["metric"] == "acc"
    mean = float(rankstats.template_scores(cube).sel(task="asdiv").squeeze())
    assert mean == pytest.approx(
        reported(ASDIV / "results_2024-08-21T03-44-09.494230.json", "asdiv", "acc,none"), abs=1e-12
    )
    # sample ids are the logged doc_hash, sample_doc_id the doc_id, in file order
    records = read_lines(ASDIV_LOG)
    assert cube.sample_id.values[0].tolist() == [r["doc_hash"] for r in records]
    assert cube.sample_doc_id.values[0].tolist() == [r["doc_id"] for r in records]
    assert cube.score.values.ravel().tolist() == [float(r["acc"]) for r in records]
    assert cube.template_text.values[0, 0] == "{{body}}\nQuestion:{{question}}\nAnswer:"


@pytest.mark.parametrize(
    ("metric", "tasks"),
    [
        ("acc", ["negotiationtom_belief", "negotiationtom_desire"]),
        ("exact_match", ["negotiationtom_intention"]),
    ],
)
def test_group_run_means_equal_reported(metric, tasks):
    folder = DATA / "negotiationtom" / "Qwen__Qwen3-8B"
    cube = lm_eval.load(folder, metric=metric)
    assert cube.task.values.tolist() == tasks
    assert cube.model.values.tolist() == ["Qwen/Qwen3-8B"]
    means = rankstats.template_scores(cube).squeeze("model").squeeze("template")
    results = folder / "results_2026-07-08T18-15-33.115417.json"
    for task in tasks:
        assert float(means.sel(task=task)) == pytest.approx(
            reported(results, task, f"{metric},none"), abs=1e-12
        )
    other = 40 if metric == "exact_match" else 20
    summary = cube.attrs["import_summary"]
    assert f"skipped {other} rows" in summary and "does not log the metric" in summary


def test_group_aggregates_leave_the_group_out():
    folder = DATA / "negotiationtom"
    cube = lm_eval.load(folder, metric="acc", aggregated=True)
    assert "sample" not in cube.dims
    results = read_json(folder / "Qwen__Qwen3-8B" / "results_2026-07-08T18-15-33.115417.json")
    assert cube.task.values.tolist() == ["negotiationtom_belief", "negotiationtom_desire"]
    assert cube.score.values.ravel().tolist() == [
        results["results"][t]["acc,none"] for t in cube.task.values
    ]
    assert "group 'negotiationtom'" in cube.attrs["import_summary"]


def test_json_named_lines_log_and_several_metrics():
    folder = DATA / "bias_classification"
    log = next(folder.rglob("samples_*.json"))
    with pytest.raises(
        ImporterError,
        match=r"line 1, field 'metrics': .*several metrics "
        r"\('acc', 'f1', 'acc_norm'\).*metric=NAME",
    ):
        lm_eval.load(folder)
    cube = lm_eval.load(folder, metric="acc_norm")
    assert cube.model.values.tolist() == ["meta-llama/Meta-Llama-3-8B"]
    assert cube.score.values.ravel().tolist() == [r["acc_norm"] for r in read_lines(log)]
    with pytest.raises(ImporterError, match=r"field 'f1': 'f1' is a corpus-level metric"):
        lm_eval.load(folder, metric="f1")


def test_log_without_results_needs_a_model():
    folder = DATA / "truthfulqa_gen"
    with pytest.raises(ImporterError, match=r"no model.*pass model=NAME"):
        lm_eval.load(folder, metric="rouge1_max")
    cube = lm_eval.load(folder, metric="rouge1_max", model="some/model")
    records = read_lines(next(folder.glob("*.jsonl")))
    assert cube.attrs["score_kind"] == "continuous"
    np.testing.assert_allclose(cube.score.values.ravel(), [r["rouge1_max"] for r in records])
    # a field of the fork that is not a metric is not offered as one
    with pytest.raises(ImporterError, match="bleu_max"):
        lm_eval.load(folder, model="some/model")


def test_legacy_json_array_equals_the_lines_it_was_made_from():
    legacy = DATA / "legacy_array" / "pretrained__meta-llama__Meta-Llama-3-8B-Instruct_asdiv.jsonl"
    with pytest.raises(ImporterError, match="pass task=NAME"):
        lm_eval.load(legacy)
    cube = lm_eval.load(legacy, task="asdiv", model="meta-llama/Meta-Llama-3-8B-Instruct")
    lines = lm_eval.load(ASDIV_LOG)
    assert cube.sizes["sample"] == 10
    np.testing.assert_array_equal(cube.score.values[..., :10], lines.score.values[..., :10])
    assert cube.sample_id.values.tolist() == [lines.sample_id.values[0, :10].tolist()]


# --- prompt variants ---


def test_masakhaner_prompts_are_one_task_with_five_templates():
    found = lm_eval.describe(DATA / "masakhaner")
    assert set(found["task"]) == {"masakhaner_luo"}
    assert found["template"].tolist() == ["1", "2", "3", "4", "5"]
    assert set(found["metrics"]) == {"f1"}


def test_masakhaner_f1_is_refused_as_a_score():
    with pytest.raises(
        ImporterError,
        match=r"prompt_1_.*line 1, field 'f1': 'f1' is a "
        r"corpus-level metric.*\[gold, pred\].*"
        r"aggregated=true",
    ):
        lm_eval.load(DATA / "masakhaner", model="unnamed")


def test_masakhaner_reported_f1_imports_as_an_aggregated_cube():
    cube = lm_eval.load(DATA / "masakhaner", aggregated=True)
    results = read_json(next((DATA / "masakhaner").glob("*results*.json")))
    assert cube.model.values.tolist() == ["google/gemma-2b"]
    assert cube.task.values.tolist() == ["masakhaner_luo"]
    assert cube.template_id.values.tolist() == [["1"]]
    assert cube.attrs["metric"] == "f1" and cube.lm_eval_filter.values.tolist() == [
        "flexible-extract"
    ]
    assert (
        float(cube.score.squeeze())
        == results["results"]["masakhaner_luo_prompt_1"]["f1,flexible-extract"]
    )
    assert cube.template_text.values[0, 0].startswith("Named entities refers to")


@pytest.fixture(scope="module")
def multiprompt():
    return lm_eval.load(DATA / "multiprompt")


def test_multiprompt_run_is_one_task_with_three_templates(multiprompt):
    cube = multiprompt
    assert cube.task.values.tolist() == ["asdiv"]
    assert cube.template_id.values.tolist() == [["1", "2", "3"]]
    assert cube.template_lm_eval_task.values.tolist() == [
        ["asdiv_prompt_1", "asdiv_prompt_2", "asdiv_prompt_3"]
    ]
    assert cube.model.values.tolist() == ["example/model-a", "example/model-b"]
    means = rankstats.template_scores(cube)
    for folder, model in [
        ("example__model-a", "example/model-a"),
        ("example__model-b", "example/model-b"),
    ]:
        results = next((DATA / "multiprompt" / folder).glob("results_*.json"))
        for template in ("1", "2", "3"):
            position = ["1", "2", "3"].index(template)
            assert float(means.sel(model=model, task="asdiv")[position]) == pytest.approx(
                reported(results, f"asdiv_prompt_{template}", "acc,none"), abs=1e-12
            )
    # template 1 of model a is the real run
    real = lm_eval.load(ASDIV_LOG)
    np.testing.assert_array_equal(cube.score.values[0, 0, 0], real.score.values[0, 0, 0])
    aggregated = lm_eval.load(DATA / "multiprompt", aggregated=True)
    np.testing.assert_allclose(aggregated.score.values, means.values, rtol=0, atol=1e-12)


def test_report_runs_on_the_multiprompt_cube(multiprompt, tmp_path, capsys):
    path = rankstats.save(multiprompt, tmp_path / "asdiv.nc")
    assert cli.main(["report", str(path), "--json", str(tmp_path / "r.json")]) == 0
    assert "asdiv" in capsys.readouterr().out
    assert (tmp_path / "r.json").stat().st_size > 0


def test_template_pattern_is_configurable():
    plain = lm_eval.load(DATA / "multiprompt", template_pattern=None)
    assert plain.task.values.tolist() == ["asdiv_prompt_1", "asdiv_prompt_2", "asdiv_prompt_3"]
    assert plain.template_id.values.tolist() == [["default"]] * 3
    custom = lm_eval.load(
        DATA / "multiprompt", template_pattern=r"(?P<task>asdiv)_(?P<template>prompt_\d)"
    )
    assert custom.template_id.values.tolist() == [["prompt_1", "prompt_2", "prompt_3"]]
    with pytest.raises(ValueError, match="named groups"):
        lm_eval.load(DATA / "multiprompt", template_pattern=r"(.+)_prompt_(\d+)")


# --- filters, repeats, validation ---


def two_filter_log(tmp_path: Path) -> Path:
    records = []
    for record in read_lines(ASDIV_LOG):
        records.append(dict(record, filter="strict-match"))
        records.append(dict(record, filter="flexible-extract", acc=1 - record["acc"]))
    return write_lines(
        tmp_path / "org__model" / "samples_asdiv_2024-01-01T00-00-00.0.jsonl", records
    )


def test_two_filters_are_never_mixed(tmp_path):
    log = two_filter_log(tmp_path)
    with pytest.raises(
        ImporterError,
        match=r"line 2, field 'filter': .*several filters "
        r"\('flexible-extract', 'strict-match'\)",
    ):
        lm_eval.load(log)
    strict = lm_eval.load(log, filter="strict-match")
    loose = lm_eval.load(log, filter="flexible-extract")
    np.testing.assert_array_equal(strict.score.values, 1 - loose.score.values)
    assert strict.model.values.tolist() == ["org/model"]
    assert strict.lm_eval_filter.values.tolist() == ["strict-match"]
    assert "50 × responses under the filter 'flexible-extract'" in strict.attrs["import_summary"]
    with pytest.raises(
        ImporterError,
        match=r"no scores to import: 50 × responses under the "
        r"filter 'strict-match', not the chosen 'none'; "
        r"50 × .*'flexible-extract'",
    ):
        lm_eval.load(log, filter="none")


def test_repeated_runs_follow_the_policy(tmp_path):
    folder = tmp_path / "org__model"
    records = read_lines(ASDIV_LOG)
    write_lines(folder / "samples_asdiv_2024-01-01T00-00-00.0.jsonl", records)
    write_lines(
        folder / "samples_asdiv_2024-02-01T00-00-00.0.jsonl",
        [dict(r, acc=1 - r["acc"]) for r in records],
    )
    latest = lm_eval.load(folder)
    assert latest.score.values.ravel().tolist() == [1.0 - r["acc"] for r in records]
    assert "50 × an older run of the same model and task" in latest.attrs["import_summary"]
    with pytest.raises(
        ImporterError,
        match=r"ran task 'asdiv' more than once.*2024-01-01.*"
        r"2024-02-01",
    ):
        lm_eval.load(folder, repeats="error")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("doc_id"), r"line 4, field 'doc_id': missing"),
        (lambda r: r.update(doc_id="4"), r"line 4, field 'doc_id': '4' is not a whole number"),
        (lambda r: r.update(acc="yes"), r"line 4, field 'acc': 'yes' is not a number"),
        (
            lambda r: r.pop("acc"),
            r"line 4, field 'acc': the sample doc_id 3 does not log the metric "
            r"'acc' \(its scores: none\), though the log's first record does",
        ),
        (
            lambda r: (r.pop("acc"), r.update(exact_match=1.0)),
            r"line 4, field 'acc': the sample doc_id 3 does not log the metric 'acc' \(its scores: "
            r"'exact_match'\)",
        ),
        (
            lambda r: r.update(doc_id=0, acc=0),
            r"line 4, field 'acc': doc_id 0 is logged twice "
            r"with different scores: 1 at line 1 and 0 at line 4",
        ),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path, change, message):
    records = read_lines(ASDIV_LOG)
    change(records[3])
    log = write_lines(tmp_path / "org__m" / "samples_asdiv_2024-01-01T00-00-00.0.jsonl", records)
    with pytest.raises(
        ImporterError, match=r"samples_asdiv_2024-01-01T00-00-00\.0\.jsonl', " + message
    ):
        lm_eval.load(log)


def test_same_document_twice_with_one_score_is_counted(tmp_path):
    records = read_lines(ASDIV_LOG)
    log = write_lines(
        tmp_path / "org__m" / "samples_asdiv_2024-01-01T00-00-00.0.jsonl", [*records, records[0]]
    )
    cube = lm_eval.load(log)
    assert cube.sizes["sample"] == 50
    assert "1 × a document logged twice with the same score" in cube.attrs["import_summary"]


def test_files_that_are_not_logs(tmp_path):
    bad = tmp_path / "org__m" / "samples_asdiv_2024-01-01T00-00-00.0.jsonl"
    bad.parent.mkdir()
    bad.write_text("doc_id,acc\n0,1\n")
    with pytest.raises(ImporterError, match="line 1: not a per-sample log"):
        lm_eval.load(bad)
    bad.write_text(ASDIV_LOG.read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(ImporterError, match="line 2: not a JSON object"):
        lm_eval.load(bad)
    results = tmp_path / "org__m" / "results_2024-01-01T00-00-00.0.json"
    results.write_text('{"no results": 1}')
    with pytest.raises(ImporterError, match="field 'results': not an lm-evaluation-harness"):
        lm_eval.load(results, aggregated=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ImporterError, match="holds no lm-evaluation-harness files"):
        lm_eval.load(empty)


# --- property: a cube written out as logs comes back unchanged ---


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scores=st.lists(
        st.lists(st.integers(0, 1), min_size=1, max_size=6), min_size=1, max_size=4
    ).filter(lambda rows: len({len(r) for r in rows}) == 1),
    order=st.randoms(use_true_random=False),
)
def test_logs_round_trip(tmp_path_factory, scores, order):
    folder = tmp_path_factory.mktemp("logs") / "org__m"
    for template, row in enumerate(scores, start=1):
        records = [
            {
                "doc_id": doc,
                "acc": value,
                "doc_hash": f"h{doc}",
                "filter": "none",
                "metrics": ["acc"],
            }
            for doc, value in enumerate(row)
        ]
        order.shuffle(records)
        write_lines(folder / f"samples_t_prompt_{template}_2024-01-01T00-00-00.0.jsonl", records)
    cube = lm_eval.load(folder)
    assert cube.template_id.values.tolist() == [[str(t) for t in range(1, len(scores) + 1)]]
    # positions follow the first log's order; compare through the doc ids
    ids = cube.sample_doc_id.values[0]
    expected = np.asarray(scores, dtype=float)[:, ids]
    np.testing.assert_array_equal(cube.score.values[0, 0], expected)
    assert cube.sample_id.values[0].tolist() == [f"h{i}" for i in ids]


# --- command, registry, benchmark ---


def test_registered_by_name(declared_importers):
    assert declared_importers["lm_eval"] == "rankstats_collectors.files.lm_eval:load"
    assert rankstats_collectors.files.get("lm_eval") is lm_eval.load


def test_command_imports_and_prints_the_summary(declared_importers, tmp_path, capsys):
    out = tmp_path / "cube.nc"
    assert (
        cli.main(
            [
                "import",
                "lm_eval",
                str(DATA / "negotiationtom"),
                "-o",
                str(out),
                "--option",
                "metric=acc",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "lm_eval: read 60 rows" in printed and "kept 40, skipped 20" in printed
    assert "does not log the metric 'acc'" in printed
    cube = rankstats.open_cube(out)
    assert cube.attrs["import_summary"] in cube.attrs["source"]
    assert cube.score.sizes["task"] == 2


def test_command_writes_nothing_when_the_import_fails(declared_importers, tmp_path, capsys):
    out = tmp_path / "cube.nc"
    assert (
        cli.main(
            ["import", "lm_eval", str(DATA / "masakhaner"), "-o", str(out), "--option", "model=x"]
        )
        != 0
    )
    assert "corpus-level" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_stream_benchmark_small(tmp_path):
    out = tmp_path / "import_stream.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_import_stream.py"),
            "--size-mb",
            "2",
            "--output",
            str(out),
            "--tmp",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    result = read_json(out)
    assert result["file_bytes"] >= 2 * 2**20
    assert result["lines"] > 0 and math.isfinite(result["peak_rss_mib"])
    assert result["mean_score"] == pytest.approx(4 / 7, abs=1 / result["lines"])


def test_copies_keep_their_sources():
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    assert "EleutherAI/lm-evaluation-harness" in sources and "MIT" in sources
    assert (DATA / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "constructed" in (DATA / "README.md").read_text(encoding="utf-8")


# --- output lm-eval wrote (tests/data/lm_eval/make_fixture.sh; versions in VERSION) ---

PRODUCED = ROOT / "tests" / "data" / "lm_eval"
RUNS = PRODUCED / "out" / "folder"
V03 = PRODUCED / "v0_3"


def _reported_by_results_files(files) -> dict:
    """(model, template, run date) -> the acc each results file reports."""
    found = {}
    for path in files:
        data = read_json(path)
        for task, values in data["results"].items():
            found[(data["model_name"], task.rsplit("_", 1)[1], path.name)] = values["acc,none"]
    return found


def _template_means(cube) -> dict:
    means = rankstats.template_scores(cube) if "sample" in cube.dims else cube.score
    return {
        (model, template): float(means.sel(model=model).isel(task=0, template=j))
        for model in cube.model.values.tolist()
        for j, template in enumerate(cube.template_id.values[0].tolist())
        if not np.isnan(float(means.sel(model=model).isel(task=0, template=j)))
    }


def test_lm_eval_output_sample_means_equal_the_reported_accuracies():
    cube = lm_eval.load(RUNS)
    latest = {}
    for (model, template, _), acc in sorted(
        _reported_by_results_files(RUNS.glob("*/results_*.json")).items()
    ):
        latest[(model, template)] = acc  # names sort by date: the latest run wins
    assert _template_means(cube) == pytest.approx(latest)
    assert cube.template_lm_eval_task.values.tolist() == [["tiny_prompt_1", "tiny_prompt_2"]]


@pytest.mark.parametrize("repeats", ["latest", "all"])
def test_lm_eval_output_aggregates_follow_repeats_as_samples_do(repeats):
    samples = lm_eval.load(RUNS, repeats=repeats)
    aggregates = lm_eval.load(RUNS, repeats=repeats, aggregated=True)
    assert "sample" not in aggregates.dims
    assert sorted(samples.template_id.values[0]) == sorted(aggregates.template_id.values[0])
    assert _template_means(samples) == pytest.approx(_template_means(aggregates))
    if repeats == "all":
        reported = _reported_by_results_files(sorted(RUNS.glob("org__dummy-a/results_*.json")))
        runs = [acc for (_, template, _), acc in sorted(reported.items()) if template == "1"]
        means = _template_means(aggregates)
        assert [means[("org/dummy-a", f"1|run={n}")] for n in (1, 2)] == runs
        assert "template_run" in aggregates.coords


def test_lm_eval_output_aggregates_refuse_repeats_as_samples_do():
    for aggregated in (False, True):
        with pytest.raises(
            ImporterError,
            match=r"model 'org/dummy-a' ran task 'tiny_prompt_1' "
            r"more than once .*repeats=all",
        ):
            lm_eval.load(RUNS, repeats="error", aggregated=aggregated)
    latest = lm_eval.load(RUNS, aggregated=True)
    assert "2 × an older run of the same model and task" in latest.attrs["import_summary"]


def test_lm_eval_049_output_path_file_naming():
    (named,) = (PRODUCED / "out" / "named").glob("run_*.json")
    for path in (named, named.parent):
        cube = lm_eval.load(path, aggregated=True)
        data = read_json(named)
        assert cube.model.values.tolist() == ["org/dummy-a"]
        assert cube.score.values.ravel().tolist() == [
            data["results"][f"tiny_prompt_{n}"]["acc,none"] for n in (1, 2)
        ]


def test_lm_eval_03_results_file():
    data = read_json(V03 / "results.json")
    cube = lm_eval.load(V03 / "results.json", aggregated=True, metric="acc_norm")
    assert cube.model.values.tolist() == ["org/dummy-03"]  # from config.model_args
    assert cube.template_id.values.tolist() == [["1", "2"]]
    assert cube.score.values.ravel().tolist() == [
        data["results"][f"tiny_prompt_{n}"]["acc_norm"] for n in (1, 2)
    ]
    with pytest.raises(
        ImporterError,
        match=r"reports several scores \(acc,none, "
        r"acc_norm,none; read as an lm-evaluation-harness "
        r"0\.3 results file\)",
    ):
        lm_eval.load(V03 / "results.json", aggregated=True)


@pytest.mark.parametrize(
    "table, results",
    [
        (PRODUCED / "out" / "console_dummy-b.md", RUNS / "org__dummy-b"),
        (V03 / "console.md", V03),
    ],
)
def test_console_tables_equal_the_results_files(table, results):
    from_table = lm_eval.load(table, aggregated=True, metric="acc")
    from_json = lm_eval.load(sorted(results.glob("*.json")), aggregated=True, metric="acc")
    assert from_table.model.values.tolist() == from_json.model.values.tolist()
    assert from_table.template_id.values.tolist() == from_json.template_id.values.tolist()
    # the table prints three or four decimals
    np.testing.assert_allclose(from_table.score.values, from_json.score.values, atol=5e-4)


def test_console_table_templates_from_the_file_name_or_a_column(tmp_path):
    tables = sorted((PRODUCED / "out").glob("console_dummy-?.md"))
    by_file = lm_eval.load(
        tables, aggregated=True, template_from="file", model="dummy", template_pattern=None
    )
    assert by_file.task.values.tolist() == ["tiny_prompt_1", "tiny_prompt_2"]
    assert by_file.template_id.values.tolist() == [["console_dummy-a", "console_dummy-b"]] * 2
    by_column = lm_eval.load(tables, aggregated=True, template_from="n-shot")
    assert by_column.template_id.values.tolist() == [["0"], ["0"]]
    with pytest.raises(
        ImporterError,
        match=r"the table has no column 'shots' \(its columns: "
        r"'Tasks', 'Version', 'Filter', 'n-shot'",
    ):
        lm_eval.load(tables, aggregated=True, template_from="shots")
    with pytest.raises(ImporterError, match="holds aggregates only; pass aggregated=true"):
        lm_eval.load(tables)
    with pytest.raises(
        ImporterError,
        match=r"ran task 'tiny_prompt_1' more than once.*console "
        r"table.*carries no date; pass repeats=all",
    ):
        lm_eval.load([*tables, PRODUCED / "out" / "console_dummy-a_rerun.md"], aggregated=True)


def test_refusals_name_the_layout_or_say_why_it_is_not_lm_eval(tmp_path):
    other = tmp_path / "scores.json"
    other.write_text('{"accuracy": 0.5}')
    with pytest.raises(
        ImporterError,
        match=r"not an lm-evaluation-harness results file: no "
        r"'results' object \(lm-evaluation-harness writes",
    ):
        lm_eval.load(other, aggregated=True)
    lines = tmp_path / "notes.md"
    lines.write_text("# Results\n\n| model | acc |\n|---|---|\n| a | 0.5 |\n")
    with pytest.raises(
        ImporterError,
        match=r"not lm-evaluation-harness output: no table whose "
        r"header is \|Tasks\|",
    ):
        lm_eval.load(lines, aggregated=True)
    with pytest.raises(
        ImporterError,
        match=r"no per-sample logs among the files \(found 1 "
        r"file\(s\) read as an lm-evaluation-harness 0\.3 "
        r"results file\); pass aggregated=true",
    ):
        lm_eval.load(V03 / "results.json")
    (named,) = (PRODUCED / "out" / "named").glob("run_*.json")
    with pytest.raises(
        ImporterError,
        match=r"read as an lm-evaluation-harness 0\.4\.9\+ results "
        r"file .*pass model=NAME",
    ):
        copy = tmp_path / named.name
        data = read_json(named)
        data.pop("model_name")
        data["config"]["model_args"] = None
        copy.write_text(json.dumps(data))
        lm_eval.load(copy, aggregated=True)


def test_console_table_skips_the_groups_it_names(tmp_path):
    console = (PRODUCED / "out" / "console_dummy-b.md").read_text()
    # a groups table as lm-eval prints it after the tasks' (this run had no group)
    groups = (
        "|Groups|Version|Filter|n-shot|Metric|   |Value|   |Stderr|\n"
        "|------|------:|------|-----:|------|---|----:|---|-----:|\n"
        "|tiny  |      1|none  |      |acc   |↑  |0.4375|±  |0.1250|\n"
    )
    # and its row in the tasks' table, as lm-eval prints a group above its tasks
    lines = console.splitlines()
    lines.insert(3, "|tiny         |      1|none  |      |acc   |↑  |0.4375|±  |0.1250|")
    path = tmp_path / "console.md"
    path.write_text("\n".join(lines) + "\n\n" + groups, encoding="utf-8")
    cube = lm_eval.load(path, aggregated=True)
    assert "group 'tiny': an aggregate of tasks" in cube.attrs["import_summary"]
    assert cube.task.values.tolist() == ["tiny"]
    assert cube.template_id.values.tolist() == [["1", "2"]]
    assert cube.score.values.ravel().tolist() == [0.5, 0.375]
