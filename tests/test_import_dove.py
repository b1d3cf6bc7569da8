"""The DOVE importer on files built to the DOVE record schema (tests/data/fixtures/dove)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import rankstats
from rankstats.cli import main
from rankstats_collectors import files
from rankstats_collectors.files import ImporterError, dove

FOLDER = Path(__file__).parent / "data" / "fixtures" / "dove"
LLAMA_0 = FOLDER / "Llama-3.2-1B-Instruct" / "en" / "0_shot" / "mmlu.global_facts.parquet"


def _flat(path: Path) -> pd.DataFrame:
    """Every record with its nested fields under dotted names, read with pyarrow alone."""
    table = pq.read_table(path)
    while any(pa.types.is_struct(t) for t in table.schema.types):
        table = table.flatten()
    return table.to_pandas()


@pytest.fixture(scope="module")
def records():
    return pd.concat([_flat(p) for p in sorted(FOLDER.rglob("*.parquet"))], ignore_index=True)


@pytest.fixture(scope="module")
def cube():
    return dove.load(FOLDER)


def test_per_template_means_match_the_records(cube, records):
    fmt = "prompt_config.format."
    expected = records.groupby(
        [
            "model.model_info.name",
            fmt + "template",
            fmt + "separator",
            fmt + "enumerator",
            fmt + "choices_order.method",
            fmt + "shots",
        ]
    )["evaluation.score"].mean()
    means = cube.score.mean("sample")
    got = {}
    for m, model in enumerate(cube.model.values):
        for t in range(cube.sizes["template"]):
            value = float(means.isel(model=m, task=0, template=t))
            if np.isnan(value):
                continue
            key = (
                model,
                str(cube.template_instruction.values[0, t]),
                str(cube.template_separator.values[0, t]),
                str(cube.template_enumerator.values[0, t]),
                str(cube.template_choices_order.values[0, t]),
                int(cube.template_shots.values[0, t]),
            )
            got[key] = value
    assert got == pytest.approx(expected.to_dict())
    assert int(cube.score.notnull().sum()) == len(records)


def test_each_dimension_is_a_template_coordinate(cube, records):
    assert cube.task.values.tolist() == ["mmlu.global_facts"]
    assert cube.sizes["template"] == 10
    for name in ("instruction", "separator", "enumerator", "choices_order", "shots"):
        assert f"template_{name}" in cube.coords
    first = cube.template_id.values[0, 0]
    text = cube.template_instruction.values[0, 0]
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    assert first == f"i{digest}|separator='\\n'|enumerator=capitals|choices_order=none|shots=0"
    assert cube.template_text.values[0, 0] == text
    identifiers = records[
        ["instance.sample_identifier.hf_split", "instance.sample_identifier.hf_index"]
    ].drop_duplicates()
    assert sorted(cube.sample_id.values[0]) == sorted(
        f"{s}:{i}" for s, i in identifiers.itertuples(index=False)
    )


def test_a_model_without_five_shot_files_is_absent_there(cube):
    five = cube.template_shots.values[0] == 5
    mistral = cube.score.sel(model="Mistral-7B-Instruct-v0.3").values[0]
    assert np.isnan(mistral[five]).all()
    assert not np.isnan(mistral[~five]).any()


def test_select_keeps_one_value_of_a_dimension(cube):
    zero = dove.load(FOLDER, select={"shots": 0})
    assert zero.sizes["template"] == 8
    assert "12 × not selected" in zero.attrs["import_summary"]
    kept = [list(cube.template_id.values[0]).index(t) for t in zero.template_id.values[0]]
    np.testing.assert_array_equal(zero.score.values, cube.score.values[:, :, kept])


def test_a_dimension_left_out_must_not_vary():
    with pytest.raises(ImporterError, match=r"'shots' takes several values.*select="):
        dove.load(FOLDER, dimensions=["template", "separator", "enumerator", "choices_order"])
    fewer = dove.load(
        FOLDER,
        dimensions=["template", "separator", "enumerator", "choices_order"],
        select={"shots": 0},
    )
    assert "template_shots" not in fewer.coords
    assert fewer.sizes["template"] == 8


def test_flattened_columns_and_small_batches_read_the_same(tmp_path, cube):
    for path in FOLDER.rglob("*.parquet"):
        target = tmp_path / path.relative_to(FOLDER)
        target.parent.mkdir(parents=True, exist_ok=True)
        table = pq.read_table(path)
        while any(pa.types.is_struct(t) for t in table.schema.types):
            table = table.flatten()
        pq.write_table(table, target)
    flat = dove.load(tmp_path, batch_size=7)
    np.testing.assert_array_equal(flat.score.values, cube.score.values)
    assert flat.template_id.values.tolist() == cube.template_id.values.tolist()


def _rewrite(path: Path, target: Path, change) -> Path:
    table = pq.read_table(path)
    while any(pa.types.is_struct(t) for t in table.schema.types):
        table = table.flatten()
    pq.write_table(change(table), target)
    return target


def test_a_file_that_is_not_parquet_is_refused(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_text("model,score\n")
    with pytest.raises(ImporterError, match=r"broken.parquet': not a Parquet file"):
        dove.load(path)


def test_a_missing_field_is_named(tmp_path):
    path = _rewrite(LLAMA_0, tmp_path / "x.parquet", lambda t: t.drop_columns(["evaluation.score"]))
    with pytest.raises(
        ImporterError,
        match=r"header row, column 'evaluation.score': missing "
        r"field of the DOVE record schema",
    ):
        dove.load(path)


def test_a_score_that_is_not_a_number_is_named(tmp_path):
    def spoil(table):
        scores = pc.cast(table["evaluation.score"], pa.string()).to_pylist()
        scores[4] = "yes"
        index = table.schema.get_field_index("evaluation.score")
        return table.set_column(index, "evaluation.score", pa.array(scores))

    path = _rewrite(LLAMA_0, tmp_path / "x.parquet", spoil)
    with pytest.raises(
        ImporterError,
        match=r"row 1, column 'evaluation.score': the score '1' "
        r"is a str, not a number",
    ):
        dove.load(path)


@pytest.mark.parametrize("text", ["0.5", "yes", "1"])
def test_a_score_given_as_text_is_refused(tmp_path, text):
    def spoil(table):
        scores = table["evaluation.score"].to_pylist()
        scores[4] = text
        index = table.schema.get_field_index("evaluation.score")
        # a column of mixed values: Parquet stores them all as text, the numbers too
        return table.set_column(
            index, "evaluation.score", pa.array([str(s) for s in scores], pa.string())
        )

    path = _rewrite(LLAMA_0, tmp_path / "x.parquet", spoil)
    with pytest.raises(
        ImporterError,
        match=r"x.parquet', row 1, column 'evaluation.score': "
        r"the score '.*' is a str, not a number \(DOVE",
    ):
        dove.load(path)


def test_a_nan_score_is_missing_and_counted(tmp_path):
    def spoil(table):
        scores = table["evaluation.score"].to_pylist()
        scores[4] = float("nan")
        index = table.schema.get_field_index("evaluation.score")
        return table.set_column(index, "evaluation.score", pa.array(scores, pa.float64()))

    cube = dove.load(_rewrite(LLAMA_0, tmp_path / "x.parquet", spoil))
    assert "1 × a NaN score (missing)" in cube.attrs["import_summary"]
    assert "read 48 rows from 1 file" in cube.attrs["import_summary"]
    assert ": kept 47, skipped 1" in cube.attrs["import_summary"]


def test_a_sample_logged_twice_with_different_scores_is_an_error(tmp_path):
    def repeat(table, flip):
        extra = table.slice(2, 1)
        if flip:
            index = extra.schema.get_field_index("evaluation.score")
            extra = extra.set_column(
                index, "evaluation.score", pc.subtract(1.0, extra["evaluation.score"])
            )
        return pa.concat_tables([table, extra])

    path = _rewrite(LLAMA_0, tmp_path / "x.parquet", lambda t: repeat(t, True))
    with pytest.raises(ImporterError, match=r"row 49, column 'score'.*different scores.*row 3"):
        dove.load(path)
    path = _rewrite(LLAMA_0, tmp_path / "x.parquet", lambda t: repeat(t, False))
    assert "1 × a sample logged twice" in dove.load(path).attrs["import_summary"]


def test_records_without_a_score_are_skipped(tmp_path):
    def blank(table):
        scores = table["evaluation.score"].to_pylist()
        scores[0] = None
        index = table.schema.get_field_index("evaluation.score")
        return table.set_column(index, "evaluation.score", pa.array(scores, pa.float64()))

    cube = dove.load(_rewrite(LLAMA_0, tmp_path / "x.parquet", blank))
    assert "1 × the record has no score" in cube.attrs["import_summary"]
    assert int(cube.score.notnull().sum()) == 47


def test_unknown_dimension_is_refused():
    with pytest.raises(ValueError, match=r"'language' is not a DOVE prompt dimension"):
        dove.load(FOLDER, select={"language": "en"})


def test_imported_and_reported_by_the_command(tmp_path, capsys):
    assert files.get("dove") is dove.load
    out = tmp_path / "dove.nc"
    assert (
        main(["import", "dove", str(FOLDER), "-o", str(out), "--option", 'select={"shots": 0}'])
        == 0
    )
    printed = capsys.readouterr().out
    # every record of the three files is read; those of five shots are not selected
    assert "dove: read 108 rows from 3 files" in printed
    assert "kept 96, skipped 12" in printed and "12 × not selected" in printed
    assert main(["report", str(out), "--quiet", "--json", str(tmp_path / "r.json")]) == 0
    assert (tmp_path / "r.json").stat().st_size > 0


def test_the_documented_command_walks_dove_s_nested_folders(tmp_path, capsys):
    # DOVE's own layout: <model>/<language>/<n>_shot/<dataset>.parquet; the folder is walked
    out = tmp_path / "dove.nc"
    assert (
        main(["import", "dove", str(FOLDER / "Llama-3.2-1B-Instruct" / "en"), "-o", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert "dove: read 60 rows from 2 files" in printed
    assert rankstats.open_cube(out).sizes["template"] == 10
