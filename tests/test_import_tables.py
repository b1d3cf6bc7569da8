"""The long and wide table importer: CSV, TSV, JSON lines and Parquet."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankstats
import rankstats_collectors.files
from rankstats import cli
from rankstats_collectors.files import ImporterError, mizrahi2024, tables

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / "tests" / "data" / "mizrahi2024"
SNARKS = RELEASE / "paraphrases accuracies" / "BBH" / "snarks.csv"


def long_frame(seed: int = 0) -> pd.DataFrame:
    """Binary per-sample scores, every key a string, rows shuffled."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "model": m,
            "task": t,
            "template": f"p{p}",
            "sample": f"s{s}",
            "score": int(rng.integers(0, 2)),
        }
        for m in ("gpt2", "opt")
        for t, templates, samples in (("a", 3, 5), ("b", 2, 4))
        for p in range(templates)
        for s in range(samples)
    ]
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1, random_state=seed).reset_index(drop=True)


def write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif path.suffix == ".jsonl":
        # json.dumps keeps every digit of a float (pandas' to_json rounds to 10)
        with open(path, "w", encoding="utf-8") as handle:
            for record in frame.to_dict(orient="records"):
                handle.write(json.dumps(record) + "\n")
    else:
        frame.to_parquet(path, index=False)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_long_table_equals_from_records(tmp_path, suffix):
    frame = long_frame()
    cube = tables.load(write(frame, tmp_path / f"scores{suffix}"), block_rows=7, metric="acc")
    expected = rankstats.from_records(frame, metric="acc")
    np.testing.assert_array_equal(cube.score.values, expected.score.values)
    assert cube.sample_id.values.tolist() == expected.sample_id.values.tolist()
    assert cube.attrs["score_kind"] == "binary" and cube.attrs["metric"] == "acc"
    assert f"read {len(frame)} rows" in cube.attrs["import_summary"]


def test_long_table_split_over_files_and_renamed_columns(tmp_path):
    frame = long_frame().rename(columns={"model": "llm", "score": "correct", "sample": "id"})
    first = write(frame.iloc[:20], tmp_path / "part1.csv")
    second = write(frame.iloc[20:], tmp_path / "part2.parquet")
    cube = tables.load([first, second], model="llm", score="correct", sample="id")
    assert "2 files" in cube.attrs["import_summary"]
    pivot = frame.set_index(["llm", "task", "template", "id"])["correct"]
    for (model, task, template, sample), value in pivot.items():
        t = list(cube.template_id.sel(task=task).values).index(template)
        s = list(cube.sample_id.sel(task=task).values).index(sample)
        assert cube.score.sel(model=model, task=task).values[t, s] == value


def test_wide_table_equals_the_paper_importer():
    """One column per model: the release's accuracy CSV, read by mapping its columns."""
    cube = tables.load(
        SNARKS,
        layout="wide",
        template="paraphrase idx",
        sample=None,
        model_columns=r"(?P<model>.+)_acc",
        constants={"task": "snarks"},
        metric="accuracy",
    )
    reference = mizrahi2024.load(RELEASE).sel(task=["snarks"])
    present = [m for m in reference.model.values if reference.score.sel(model=m).notnull().any()]
    assert sorted(cube.model.values.tolist()) == sorted(present)
    paper = reference.score.sel(model=cube.model.values).values
    width = cube.sizes["template"]
    np.testing.assert_array_equal(cube.score.values, paper[:, :, :width])
    assert cube.template_id.values[0].tolist() == reference.template_id.values[0, :width].tolist()


def test_wide_table_with_listed_model_columns_and_attributes(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(
        "task,template,template_text,gpt2,opt,notes\nt,1,Q: {x},0.5,0.7,a\nt,2,Answer {x},0.25,,b\n"
    )
    cube = tables.load(
        path, layout="wide", sample=None, model_columns=["gpt2", "opt"], attrs=["template_text"]
    )
    assert cube.model.values.tolist() == ["gpt2", "opt"]
    np.testing.assert_array_equal(cube.score.values[:, 0], [[0.5, 0.25], [0.7, np.nan]])
    assert cube.template_text.values.tolist() == [["Q: {x}", "Answer {x}"]]
    assert "1 × an empty score" in cube.attrs["import_summary"]
    with pytest.raises(ImporterError, match=r"row 1, column 'notes': 'a' is not a number"):
        tables.load(path, layout="wide", sample=None, attrs=["template_text"])


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        (
            "model,task,template,score\nm,t,1,0.5\n",
            {},
            r"'bad.csv', header row, column 'sample': missing column .*; for per-template scores "
            r"without samples pass sample=null \(-O sample=null\)",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,0.5\nm,t,1,2,0.5,9\nm,t,1,3,1\n",
            {},
            r"'bad.csv', row 2: line 3 has 6 fields, more than the 5 columns of the header",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,0.5,7\nm,t,1,2,0.5,9\n",
            {},
            r"'bad.csv', row 1: line 2 has 6 fields, more than the 5 columns of the header",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,0.5\nm,t,1,2\n",
            {},
            r"'bad.csv', row 2: line 3 has 4 fields, fewer than the 5 columns of the header",
        ),
        (
            'model,task,template,sample,score\nm,t,"a\nb",1,0.5\n\nm,t,1,2,0.5,1\n',
            {},
            r"'bad.csv', row 2: line 5 has 6 fields",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,0.5\nm,,1,2,0.5\n",
            {},
            r"'bad.csv', row 2, column 'task': empty",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,0.5\nm,t,1,2,n/a\n",
            {},
            r"'bad.csv', row 2, column 'score': 'n/a' is not a number",
        ),
        (
            "model,task,template,sample,score\nm,t,1,1,1\nm,t,1,2,0\nm,t,1,1,0\n",
            {},
            r"'bad.csv', row 3, column 'score': \(model='m', task='t', template='1', sample='1'\) "
            r"appears twice with different scores: 1 \(file 'bad.csv', row 1\) and 0",
        ),
    ],
)
def test_bad_tables_name_file_row_and_column(tmp_path, monkeypatch, text, options, message):
    monkeypatch.chdir(tmp_path)
    Path("bad.csv").write_text(text)
    with pytest.raises(ImporterError, match=message):
        tables.load("bad.csv", block_rows=1, **options)


def test_a_wide_table_without_samples_is_read_as_per_template_scores(tmp_path, capsys):
    # the command as the README writes it, on an ordinary wide table
    path = tmp_path / "scores.csv"
    path.write_text("task,template,gpt2,opt\nsnarks,1,0.5,0.6\nsnarks,2,0.4,0.7\nnavigate,1,0.3,\n")
    out = tmp_path / "cube.nc"
    assert cli.main(["import", "table", str(path), "-o", str(out), "-O", "layout=wide"]) == 0
    printed = capsys.readouterr().out
    assert "read 6 cells from 1 file" in printed and "kept 5, skipped 1" in printed
    assert "the wide table has no 'sample' column: its scores were read as per-template" in printed
    cube = rankstats.open_cube(out)
    assert "sample" not in cube.dims
    np.testing.assert_allclose(
        cube.score.sel(task="snarks").values, [[0.5, 0.4], [0.6, 0.7]], rtol=1e-6
    )  # saved as float32
    # with samples it is read as before; a sample column named and absent is still an error
    path.write_text("task,template,sample,gpt2\nsnarks,1,a,1\nsnarks,1,b,0\n")
    assert tables.load(path, layout="wide").sizes["sample"] == 2
    with pytest.raises(ImporterError, match=r"column 'item': missing column"):
        tables.load(path, layout="wide", sample="item")


def test_rows_are_numbered_across_blocks(tmp_path):
    frame = long_frame().astype({"score": object})
    frame.loc[37, "score"] = "x"
    for suffix in (".csv", ".jsonl"):
        path = write(frame, tmp_path / f"scores{suffix}")
        with pytest.raises(ImporterError, match=r"row 38, column 'score': 'x' is not a number"):
            tables.load(path, block_rows=5)


def test_json_scores_must_be_numbers(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"model":"m","task":"t","template":"1","sample":"1","score":1}\n'
        '{"model":"m","task":"t","template":"1","sample":"2","score":"1"}\n'
    )
    with pytest.raises(ImporterError, match=r"row 2, column 'score': '1' is not a number"):
        tables.load(path)
    path.write_text(
        '{"model":"m","task":"t","template":"1","sample":"1","score":true}\n'
        '{"model":"m","task":"t","template":"1","sample":"2","score":null}\n'
        "[1]\n"
    )
    with pytest.raises(ImporterError, match="line 3: a JSON list, not an object"):
        tables.load(path)


def test_repeated_row_with_one_score_is_counted(tmp_path):
    frame = long_frame()
    path = write(pd.concat([frame, frame.iloc[:3]]), tmp_path / "s.csv")
    cube = tables.load(path)
    assert "3 × a score given twice" in cube.attrs["import_summary"]
    np.testing.assert_array_equal(cube.score.values, rankstats.from_records(frame).score.values)


def test_not_a_table(tmp_path):
    path = tmp_path / "s.parquet"
    path.write_text("model,task\n")
    with pytest.raises(ImporterError, match="not a readable Parquet file"):
        tables.load(path)
    with pytest.raises(ImporterError, match="cannot tell the format"):
        tables.load(tmp_path / "s.xlsx")
    with pytest.raises(ImporterError, match="does not exist"):
        tables.load(tmp_path / "missing.csv")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scores=st.lists(st.floats(0, 1, allow_nan=False, width=32), min_size=1, max_size=30),
    block=st.integers(1, 8),
    suffix=st.sampled_from([".csv", ".jsonl", ".parquet"]),
)
def test_any_long_table_round_trips(tmp_path_factory, scores, block, suffix):
    frame = pd.DataFrame(
        {
            "model": [f"m{i % 3}" for i in range(len(scores))],
            "task": "t",
            "template": [f"p{i // 3 % 2}" for i in range(len(scores))],
            "sample": [str(i // 6) for i in range(len(scores))],
            "score": scores,
        }
    ).drop_duplicates(["model", "template", "sample"])
    path = write(frame, tmp_path_factory.mktemp("t") / f"s{suffix}")
    cube = tables.load(path, block_rows=block)
    expected = rankstats.from_records(frame)
    np.testing.assert_allclose(cube.score.values, expected.score.values, rtol=0, atol=1e-12)


def test_registered_and_run_by_the_command(declared_importers, tmp_path, capsys):
    assert declared_importers["table"] == "rankstats_collectors.files.tables:load"
    assert rankstats_collectors.files.get("table") is tables.load
    frame = long_frame()
    path = write(frame, tmp_path / "s.csv")
    out = tmp_path / "cube.nc"
    assert cli.main(["import", "table", str(path), "-o", str(out), "--option", "metric=acc"]) == 0
    assert f"table: read {len(frame)} rows from 1 file" in capsys.readouterr().out
    cube = rankstats.open_cube(out)
    assert cube.attrs["metric"] == "acc"
    assert cube.attrs["import_summary"] in cube.attrs["source"]


def test_constants_stand_for_missing_key_columns(tmp_path):
    frame = long_frame()
    path = write(frame[frame.task == "a"].drop(columns="task"), tmp_path / "a.csv")
    cube = tables.load(path, constants={"task": "a"})
    expected = rankstats.from_records(frame[frame.task == "a"])
    np.testing.assert_array_equal(cube.score.values, expected.score.values)
    with pytest.raises(ValueError, match=r"constants has the key .benchmark.; its keys must be"):
        tables.load(path, constants={"benchmark": "x"})
