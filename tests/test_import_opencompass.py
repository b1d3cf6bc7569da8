"""The OpenCompass importer, on output opencompass wrote (tests/data/opencompass)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import rankstats
import rankstats_collectors.files
from rankstats import cli
from rankstats_collectors.files import ImporterError, opencompass

OUT = Path(__file__).parent / "data" / "opencompass" / "out"
VARIANTS = r"(?P<task>.+)_(?P<template>plain|qa)"
(RUN,) = OUT.iterdir()
RESULTS = RUN / "results" / "fixed-answers"


def reported() -> dict:
    return {
        path.stem.rsplit("_", 1)[1]: json.loads(path.read_text())["score"]
        for path in RESULTS.glob("*.json")
    }


def test_example_means_are_the_scores_opencompass_reports_as_percentages():
    cube = opencompass.load(OUT, template_pattern=VARIANTS)
    assert cube.model.values.tolist() == ["fixed-answers"]
    assert cube.task.values.tolist() == ["tiny"]
    means = rankstats.template_scores(cube).isel(model=0, task=0).values * 100
    expected = reported()
    np.testing.assert_allclose(means, [expected[t] for t in cube.template_id.values[0]])
    assert cube.sample_id.values.tolist() == [[str(i) for i in range(6)]]


def test_aggregates_and_the_summary_csv_agree():
    cube = opencompass.load(OUT, aggregated=True, template_pattern=VARIANTS)
    assert "sample" not in cube.dims
    expected = reported()
    assert cube.score.values.ravel().tolist() == [expected[t] for t in cube.template_id.values[0]]
    (csv,) = (RUN / "summary").glob("*.csv")
    rows = dict(line.split(",")[0::4] for line in csv.read_text().splitlines()[1:])
    np.testing.assert_allclose(
        cube.score.values.ravel(),
        [float(rows[f"tiny_{t}"]) for t in cube.template_id.values[0]],
        atol=0.005,
    )


def test_runs_follow_the_policy(tmp_path):
    older = tmp_path / "20200101_000000"
    shutil.copytree(RUN, older)
    (older / "results" / "fixed-answers" / "tiny_qa.json").write_text(
        json.dumps(
            {
                "score": 0.0,
                "details": [{"example_abbr": f"tiny_qa_{i}", "correct": [False]} for i in range(6)],
            }
        )
    )
    shutil.copytree(RUN, tmp_path / RUN.name)
    with pytest.raises(
        ImporterError,
        match=r"^model 'fixed-answers' ran 'tiny_plain' .*several "
        r"runs; pass runs=latest",
    ):
        opencompass.load(tmp_path)
    cube = opencompass.load(tmp_path, runs="latest", template_pattern=VARIANTS)
    assert rankstats.template_scores(cube).values.ravel().tolist() == pytest.approx([2 / 3, 0.5])
    assert "12 × an older run of the same model and dataset" in cube.attrs["import_summary"]


def test_refusals_name_the_file_and_what_is_wrong(tmp_path):
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    (results / "d.json").write_text('{"score": 50.0}')
    with pytest.raises(
        ImporterError,
        match=r"d\.json', column 'details': the results file has "
        r"no per-example 'details' \(run opencompass with "
        r"--dump-eval-details",
    ):
        opencompass.load(tmp_path)
    (results / "d.json").write_text('{"score": 50.0, "details": [{"correct": "maybe"}]}')
    with pytest.raises(
        ImporterError,
        match=r"row 1, column 'details\.correct': the score "
        r"'maybe' is not a number",
    ):
        opencompass.load(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "scores.json").write_text('{"score": 50.0}')
    with pytest.raises(
        ImporterError,
        match=r"not OpenCompass output: no "
        r"results/<model>/<dataset>\.json below it",
    ):
        opencompass.load(other)


def test_registered_and_imported_by_the_command(declared_importers, tmp_path, capsys):
    assert declared_importers["opencompass"] == "rankstats_collectors.files.opencompass:load"
    assert rankstats_collectors.files.get("opencompass") is opencompass.load
    out = tmp_path / "cube.nc"
    assert cli.main(["import", "opencompass", str(OUT), "-o", str(out)]) == 0
    assert "opencompass: read 12 rows" in capsys.readouterr().out
