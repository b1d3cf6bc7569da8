"""The inspect_ai importer on real logs (tests/data/fixtures/inspect_ai) and logs made from them."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankstats
from rankstats.cli import main
from rankstats_collectors import files
from rankstats_collectors.files import ImporterError, _inspect_logs, inspect_ai

LOGS = Path(__file__).parent / "data" / "fixtures" / "inspect_ai"
MMLU = LOGS / "mmlu-summary-choices.eval"
POPULARITY = LOGS / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
REAL = [MMLU, LOGS / "log_formats.eval", LOGS / "log_formats.json"]


def _reported_accuracy(path: Path) -> float:
    """The accuracy the log's own results report, read with json/zipfile alone."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            header = json.loads(archive.read("header.json"))
    else:
        header = json.loads(path.read_text())
    (scores,) = header["results"]["scores"]
    return scores["metrics"]["accuracy"]["value"]


def _write_eval(
    path: Path,
    samples: list[dict],
    *,
    model="openai/gpt-4o",
    created=None,
    task_args=None,
    header_extra=None,
) -> Path:
    """A .eval log built from the real MMLU log's header and first sample."""
    with zipfile.ZipFile(MMLU) as archive:
        header = json.loads(archive.read("header.json"))
        base = json.loads(archive.read("samples/1_epoch_1.json"))
    header["eval"]["model"] = model
    if created is not None:
        header["eval"]["created"] = created
    if task_args is not None:
        header["eval"]["task_args"] = task_args
    header.update(header_extra or {})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample in samples:
            record = {**base, **sample}
            archive.writestr(
                f"samples/{record['id']}_epoch_{record['epoch']}.json", json.dumps(record)
            )
    return path


def _graded(sample_id, epoch, letter, scorer="choice"):
    return {"id": sample_id, "epoch": epoch, "scores": {scorer: {"value": letter}}}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_logs_match_their_reported_accuracy(path):
    cube = inspect_ai.load(path)
    assert cube.sizes["sample"] >= 1
    per_template = cube.score.mean("sample")
    np.testing.assert_allclose(per_template.values, _reported_accuracy(path))
    assert "skipped nothing" in cube.attrs["import_summary"]


def test_real_mmlu_log_is_mapped_explicitly():
    cube = inspect_ai.load(MMLU)
    assert cube.model.values.tolist() == ["openai/gpt-4o"]
    assert cube.task.values.tolist() == ["inspect_evals/mmlu_0_shot"]
    assert cube.sample_id.values.tolist() == [["1"]]
    assert cube.attrs["metric"] == "choice"
    assert cube.attrs["score_kind"] == "binary"


def test_json_and_eval_encodings_of_one_log_agree():
    from_eval = inspect_ai.load(LOGS / "log_formats.eval")
    from_json = inspect_ai.load(LOGS / "log_formats.json")
    np.testing.assert_array_equal(from_eval.score.values, from_json.score.values)
    assert from_eval.sample_id.values.tolist() == from_json.sample_id.values.tolist()


def test_a_log_without_scores_is_refused_with_the_reason():
    with pytest.raises(
        ImporterError,
        match=r"no scores were read.*10 × the sample was not "
        r"scored",
    ):
        inspect_ai.load(POPULARITY)


def test_letters_and_epochs(tmp_path):
    letters = ["C", "I", "P", "C", "C", "N"]
    samples = [
        _graded(sample, epoch, letters[3 * (sample - 1) + epoch - 1])
        for sample in (1, 2)
        for epoch in (1, 2, 3)
    ]
    log = _write_eval(tmp_path / "epochs.eval", samples)
    cube = inspect_ai.load(log)
    # C=1, I=0, P=0.5, N=0, one sample per (id, epoch)
    assert cube.sample_id.values.tolist() == [["1#1", "1#2", "1#3", "2#1", "2#2", "2#3"]]
    assert cube.sample_base.values.tolist() == [["1", "1", "1", "2", "2", "2"]]
    assert cube.sample_epoch.values.tolist() == [[1, 2, 3, 1, 2, 3]]
    np.testing.assert_array_equal(cube.score.values.ravel(), [1, 0, 0.5, 1, 1, 0])
    reduced = inspect_ai.load(log, epochs="mean")
    assert reduced.sample_id.values.tolist() == [["1", "2"]]
    np.testing.assert_allclose(reduced.score.values.ravel(), [0.5, 2 / 3])
    assert reduced.sample_epochs.values.tolist() == [[3, 3]]
    # equal epochs per sample: the mean over epochs-as-samples is the mean of sample means
    assert float(cube.score.mean()) == pytest.approx(float(reduced.score.mean()))


def test_custom_letters_and_numeric_values(tmp_path):
    log = _write_eval(
        tmp_path / "custom.eval",
        [_graded(1, 1, "Y"), _graded(2, 1, 0.25), _graded(3, 1, "0.75"), _graded(4, 1, True)],
    )
    with pytest.raises(
        ImporterError,
        match=r"samples/1_epoch_1\.json', column "
        r"'scores\.choice\.value': the value 'Y' is neither",
    ):
        inspect_ai.load(log)
    cube = inspect_ai.load(log, letters={"Y": 1, "N": 0})
    np.testing.assert_array_equal(cube.score.values.ravel(), [1, 0.25, 0.75, 1])
    assert cube.attrs["score_kind"] == "proportion"


def test_dictionary_values_need_a_key(tmp_path):
    sample = {"id": 1, "epoch": 1, "scores": {"choice": {"value": {"acc": 1, "f1": 0.5}}}}
    log = _write_eval(tmp_path / "dict.eval", [sample])
    with pytest.raises(ImporterError, match=r"several entries .*pass value_key"):
        inspect_ai.load(log)
    cube = inspect_ai.load(log, value_key="f1")
    assert float(cube.score.squeeze()) == 0.5
    assert cube.attrs["metric"] == "choice.f1"


def test_several_scorers_need_a_choice(tmp_path):
    sample = {"id": 1, "epoch": 1, "scores": {"a": {"value": "C"}, "b": {"value": "I"}}}
    log = _write_eval(tmp_path / "two.eval", [sample])
    with pytest.raises(ImporterError, match=r"several scorers .*pass scorer=NAME"):
        inspect_ai.load(log)
    assert float(inspect_ai.load(log, scorer="b").score.squeeze()) == 0.0


def test_errored_and_unscored_samples_are_skipped_and_counted(tmp_path):
    samples = [
        _graded(1, 1, "C"),
        {"id": 2, "epoch": 1, "scores": {}, "error": {"message": "x"}},
        {"id": 3, "epoch": 1, "scores": {}},
    ]
    cube = inspect_ai.load(_write_eval(tmp_path / "mixed.eval", samples))
    summary = cube.attrs["import_summary"]
    assert "read 3 rows from 1 file" in summary and "kept 1, skipped 2" in summary
    assert "1 × the sample ended in an error" in summary
    assert "1 × the sample was not scored" in summary
    assert summary in cube.attrs["source"]


def test_a_sample_logged_twice_with_different_scores_is_an_error(tmp_path):
    path = tmp_path / "twice.json"
    log = json.loads((LOGS / "log_formats.json").read_text())
    first = log["samples"][0]
    log["samples"].append({**first, "scores": {"match": {"value": "C"}}})
    path.write_text(json.dumps(log))
    with pytest.raises(
        ImporterError,
        match=r"twice\.json', row 2, column 'score'.*different "
        r"scores",
    ):
        inspect_ai.load(path)
    log["samples"][1]["scores"] = first["scores"]
    path.write_text(json.dumps(log))
    cube = inspect_ai.load(path)
    assert "1 × a sample logged twice with the same score" in cube.attrs["import_summary"]


def test_repeated_runs_follow_the_policy(tmp_path):
    # 10:00 at +05:00 is 05:00 UTC: earlier than 06:00 UTC, though it sorts later as text
    old = _write_eval(
        tmp_path / "old.eval", [_graded(1, 1, "I")], created="2025-06-01T10:00:00+05:00"
    )
    new = _write_eval(
        tmp_path / "new.eval", [_graded(1, 1, "C")], created="2025-06-01T06:00:00+00:00"
    )
    with pytest.raises(ImporterError, match=r"several runs .*runs='latest'"):
        inspect_ai.load([old, new])
    cube = inspect_ai.load([old, new], runs="latest")
    assert float(cube.score.squeeze()) == 1.0
    assert "superseded by a later run" in cube.attrs["import_summary"]


def test_task_arguments_make_templates(tmp_path):
    logs = [
        _write_eval(
            tmp_path / f"{cot}.eval",
            [_graded(1, 1, letter)],
            task_args={"cot": cot, "language": "EN_US"},
        )
        for cot, letter in ((False, "I"), (True, "C"))
    ]
    cube = inspect_ai.load(logs)
    assert cube.template_id.values.tolist() == [
        ["cot=false,language=EN_US", "cot=true,language=EN_US"]
    ]
    only = inspect_ai.load(logs, template_args=["cot"])
    assert only.template_id.values.tolist() == [["cot=false", "cot=true"]]
    with pytest.raises(ImporterError, match=r"no argument 'shots'"):
        inspect_ai.load(logs, template_args=["shots"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a zip", "not an inspect_ai .eval log"),
    ],
)
def test_a_file_that_is_not_a_log_is_refused(tmp_path, content, message):
    path = tmp_path / "broken.eval"
    path.write_bytes(content)
    with pytest.raises(ImporterError, match=message):
        inspect_ai.load(path)


def test_json_that_is_not_a_log_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text("[1, 2]")
    with pytest.raises(ImporterError, match=r"other.json', column 'eval': not an inspect_ai log"):
        inspect_ai.load(path)
    path.write_text("{")
    with pytest.raises(ImporterError, match=r"not valid JSON"):
        inspect_ai.load(path)


def test_a_header_without_a_model_is_refused(tmp_path):
    log = json.loads((LOGS / "log_formats.json").read_text())
    del log["eval"]["model"]
    path = tmp_path / "nomodel.json"
    path.write_text(json.dumps(log))
    with pytest.raises(
        ImporterError,
        match=r"column 'eval.model': the log's eval spec has "
        r"no 'model'",
    ):
        inspect_ai.load(path)


@pytest.mark.parametrize("model", [123, 4.5, ["openai/gpt-4o"]])
def test_a_model_that_is_not_text_is_named_as_such(tmp_path, model):
    # the log has a model, of the wrong type: the message says that, not that it has none
    path = _write_eval(tmp_path / "log.eval", [_graded(1, 1, "C")], model=model)
    with pytest.raises(
        ImporterError,
        match=rf"column 'eval.model': the model is "
        rf"{re.escape(repr(model))} \(of type "
        rf"{type(model).__name__}\), not text",
    ):
        inspect_ai.load(path)
    log = json.loads((LOGS / "log_formats.json").read_text())
    log["eval"]["model"] = model
    path = tmp_path / "numeric.json"
    path.write_text(json.dumps(log))
    with pytest.raises(ImporterError, match=r"numeric.json', column 'eval.model': the model "):
        inspect_ai.load(path)


def test_registered_and_imported_by_the_command(tmp_path, capsys):
    assert files.get("inspect_ai") is inspect_ai.load
    out = tmp_path / "cube.nc"
    assert main(["import", "inspect_ai", str(MMLU), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "inspect_ai: read 1 row from 1 file" in printed
    saved = rankstats.open_cube(out)
    np.testing.assert_array_equal(saved.score.values, inspect_ai.load(MMLU).score.values)
    assert "inspect_ai: read 1 row" in saved.attrs["source"]


def test_a_failed_import_writes_nothing(tmp_path):
    out = tmp_path / "cube.nc"
    assert main(["import", "inspect_ai", str(POPULARITY), "-o", str(out)]) != 0
    assert not out.exists()


@settings(max_examples=10, deadline=None)
@given(
    grades=st.lists(
        st.lists(st.sampled_from(["C", "I", "P", "N", 0.25, 1, 0]), min_size=1, max_size=3),
        min_size=1,
        max_size=5,
    ).filter(lambda rows: len({len(r) for r in rows}) == 1)
)
def test_any_graded_log_comes_back_unchanged(tmp_path_factory, grades):
    samples = [
        _graded(s + 1, e + 1, grade) for s, row in enumerate(grades) for e, grade in enumerate(row)
    ]
    log = _write_eval(tmp_path_factory.mktemp("log") / "any.eval", samples)
    expected = np.array(
        [
            [inspect_ai.LETTERS.get(g, g) if isinstance(g, str) else g for g in row]
            for row in grades
        ],
        dtype=float,
    )
    cube = inspect_ai.load(log)
    np.testing.assert_array_equal(cube.score.values.ravel(), expected.ravel())
    reduced = inspect_ai.load(log, epochs="mean")
    np.testing.assert_allclose(reduced.score.values.ravel(), expected.mean(axis=1))


# --- logs inspect_ai wrote (tests/data/inspect_ai/make_fixture.py; version in VERSION) ---

PRODUCED = Path(__file__).parent / "data" / "inspect_ai" / "logs"


def _variant_accuracy(header: dict) -> tuple[str, float]:
    return (
        header["eval"]["task_args"]["variant"],
        header["results"]["scores"][0]["metrics"]["accuracy"]["value"],
    )


def _check_against_reported(cube, headers):
    means = rankstats.template_scores(cube).isel(model=0, task=0)
    got = dict(zip(cube.template_id.values[0].tolist(), means.values.tolist(), strict=True))
    expected = dict(_variant_accuracy(header) for header in headers)
    assert {f"variant={k}": v for k, v in expected.items()} == pytest.approx(got)


@pytest.mark.parametrize("epochs", ["separate", "mean"])
def test_inspect_ai_json_logs_mean_equals_the_reported_accuracy(epochs):
    logs = sorted((PRODUCED / "json").glob("*.json"))
    cube = inspect_ai.load(logs, epochs=epochs)
    assert cube.model.values.tolist() == ["mockllm/model"]
    _check_against_reported(cube, [json.loads(p.read_text()) for p in logs])


def test_inspect_ai_eval_logs_equal_the_json_logs_of_the_same_runs():
    pytest.importorskip("zstandard")  # this inspect_ai compresses .eval members with it
    logs = sorted((PRODUCED / "eval").glob("*.eval"))
    cube = inspect_ai.load(logs)
    headers = []
    for log in logs:
        with zipfile.ZipFile(log) as archive:
            headers.append(_inspect_logs._json(archive, "header.json", str(log)))
    _check_against_reported(cube, headers)


def test_a_zstandard_eval_log_without_zstandard_says_how_to_read_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # as if it were not installed
    log = sorted((PRODUCED / "eval").glob("*.eval"))[0]
    with zipfile.ZipFile(log) as archive:
        if archive.getinfo("header.json").compress_type != 93 or sys.version_info >= (3, 14):
            pytest.skip("this log or this Python needs no zstandard")
    with pytest.raises(
        ImporterError,
        match=r"compressed with Zstandard .*pip install "
        r"zstandard, or convert the log",
    ):
        inspect_ai.load(log)
