"""The Open LLM Leaderboard importer, on lm-eval's logs as the hub serves them in Parquet."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import rankstats_collectors.files
from rankstats_collectors.files import ImporterError, lm_eval
from rankstats_collectors.files import open_llm_leaderboard as oll

pq = pytest.importorskip("pyarrow.parquet")
import pyarrow as pa  # noqa: E402

DATA = Path(__file__).parent / "data" / "open_llm_leaderboard"
LOGS = Path(__file__).parent / "data" / "lm_eval" / "out" / "folder"


def test_parquet_details_give_the_cube_the_jsonl_logs_give():
    cube = oll.load(DATA)
    from_logs = lm_eval.load(LOGS)
    assert cube.model.values.tolist() == from_logs.model.values.tolist()
    assert cube.template_id.values.tolist() == from_logs.template_id.values.tolist()
    np.testing.assert_array_equal(cube.score.values, from_logs.score.values)
    assert "16 × an older run of the same model and task" in cube.attrs["import_summary"]


def test_template_means_are_the_accuracies_lm_eval_reports():
    cube = oll.load(DATA / "org__dummy-b")
    (results,) = (LOGS / "org__dummy-b").glob("results_*.json")
    reported = json.loads(results.read_text())["results"]
    means = cube.score.mean("sample").values.ravel()
    assert means.tolist() == [reported[f"tiny_prompt_{n}"]["acc,none"] for n in (1, 2)]


def _rewrite(tmp_path: Path, change) -> Path:
    (source,) = (DATA / "org__dummy-b").glob("samples_tiny_prompt_1_*.parquet")
    table = pq.read_table(source)
    folder = tmp_path / "org__m"
    folder.mkdir(exist_ok=True)
    path = folder / source.name
    pq.write_table(change(table), path)
    return path


def test_refusals_name_the_file_row_and_column(tmp_path):
    def infinite(table):
        acc = table.column("acc").to_pylist()
        acc[3] = float("inf")
        return table.set_column(table.schema.get_field_index("acc"), "acc", pa.array(acc))

    path = _rewrite(tmp_path, infinite)
    with pytest.raises(
        ImporterError,
        match=r"row 4, column 'acc': the score inf is not a "
        r"finite number",
    ):
        oll.load(path)
    cube = oll.load(path, non_finite="missing")
    assert int(cube.score.notnull().sum()) == 7
    path = _rewrite(tmp_path, lambda table: table.drop_columns(["doc_id"]))
    with pytest.raises(ImporterError, match="no column 'doc_id'"):
        oll.load(path)
    with pytest.raises(ImporterError, match="no column 'exact_match'"):
        oll.load(DATA / "org__dummy-b", metric="exact_match")
    broken = tmp_path / "org__m" / "samples_x_2024-01-01T00-00-00.0.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(ImporterError, match="not a Parquet file"):
        oll.load(broken)


@pytest.mark.parametrize(
    ("doc_ids", "row", "shown"),
    [
        ([0.0, 0.7, 2.0, 3.0], 2, "0.7"),
        ([0, 1, 2, -1.5], 4, "-1.5"),
        (["0", "1", "2", "x"], 4, "'x'"),
        ([0.0, 1.0, float("nan"), 3.0], 3, "nan"),
    ],
)
def test_a_doc_id_that_is_not_a_whole_number_is_refused(tmp_path, doc_ids, row, shown):
    # cutting 0.7 to 0 would merge two documents; the doc_id is kept exactly or refused
    folder = tmp_path / "org__m"
    folder.mkdir()
    path = folder / "samples_tiny_2024-01-01T00-00-00.parquet"
    pq.write_table(
        pa.table({"doc_id": doc_ids, "metrics": [["acc"]] * 4, "acc": [1.0, 0.0, 1.0, 1.0]}), path
    )
    with pytest.raises(
        ImporterError,
        match=rf"row {row}, column 'doc_id': the doc_id "
        rf"{re.escape(shown)} is not a whole number",
    ):
        oll.load(path)
    pq.write_table(
        pa.table(
            {"doc_id": [0.0, 1.0, 2.0, 3.0], "metrics": [["acc"]] * 4, "acc": [1.0, 0.0, 1.0, 1.0]}
        ),
        path,
    )
    assert oll.load(path).sample_id.values.tolist() == [["0", "1", "2", "3"]]


def test_registered(declared_importers):
    assert (
        declared_importers["open_llm_leaderboard"]
        == "rankstats_collectors.files.open_llm_leaderboard:load"
    )
    assert rankstats_collectors.files.get("open_llm_leaderboard") is oll.load
