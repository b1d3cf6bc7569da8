"""The Open LLM Leaderboard importer, on lm-eval's logs as the hub serves them in Parquet."""

from __future__ import annotations

import json
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
    with pytest.raises(ImporterError, match=r"row 4, column 'acc': the score inf is not a "
                                            r"finite number"):
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


def test_registered(declared_importers):
    assert declared_importers["open_llm_leaderboard"] == \
        "rankstats_collectors.files.open_llm_leaderboard:load"
    assert rankstats_collectors.files.get("open_llm_leaderboard") is oll.load
