"""The unitxt importer, on output unitxt wrote (tests/data/unitxt/make_fixture.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import rankstats
import rankstats_collectors.files
from rankstats import cli
from rankstats_collectors.files import ImporterError, unitxt

OUT = Path(__file__).parent / "data" / "unitxt" / "out"
(RESULTS,) = OUT.glob("*_evaluation_results.json")
(SAMPLES,) = OUT.glob("*_samples.json")


def reported() -> dict:
    results = json.loads(RESULTS.read_text())["results"]
    return {
        key.split("template=")[1]: value["score"]
        for key, value in results.items()
        if isinstance(value, dict)
    }


def test_instance_means_are_the_subset_scores_unitxt_reports():
    cube = unitxt.load(OUT)
    assert cube.model.values.tolist() == ["org/fixed-answers"]
    assert cube.task.values.tolist() == ["cards.tiny"]
    means = rankstats.template_scores(cube).isel(model=0, task=0).values
    expected = reported()
    np.testing.assert_allclose(means, [expected[t] for t in cube.template_id.values[0]])
    # unitxt's global score is the mean over subsets of the subsets' means
    assert float(means.mean()) == pytest.approx(json.loads(RESULTS.read_text())["results"]["score"])


def test_aggregates_equal_the_instance_means():
    samples = unitxt.load(SAMPLES)
    aggregates = unitxt.load(RESULTS, aggregated=True)
    assert "sample" not in aggregates.dims
    np.testing.assert_allclose(aggregates.score.values, rankstats.template_scores(samples).values)
    assert "the global score over all subsets" in aggregates.attrs["import_summary"]
    accuracy = unitxt.load(OUT, metric="accuracy")
    np.testing.assert_array_equal(accuracy.score.values, samples.score.values)


def test_runs_follow_the_policy(tmp_path):
    shutil.copy(SAMPLES, tmp_path / SAMPLES.name)
    data = json.loads(SAMPLES.read_text())
    for instances in data["samples"].values():
        for instance in instances:
            instance["score"] = 0.0
    (tmp_path / "2020-01-01T00-00-00_samples.json").write_text(json.dumps(data))
    with pytest.raises(
        ImporterError,
        match=r"^model 'org/fixed-answers' ran 'cards\.tiny' "
        r"\(template 'templates\.plain'\) in several runs",
    ):
        unitxt.load(tmp_path)
    latest = unitxt.load(tmp_path, runs="latest")
    np.testing.assert_array_equal(latest.score.values, unitxt.load(SAMPLES).score.values)


def test_refusals_name_the_file_and_what_is_wrong(tmp_path):
    data = json.loads(SAMPLES.read_text())
    first = next(iter(data["samples"]))
    data["samples"][first][2]["score"] = "high"
    bad = tmp_path / "x_samples.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        ImporterError,
        match=r"x_samples\.json', row 3, column 'samples\..*"
        r"\.score': the score 'high' is not a number",
    ):
        unitxt.load(bad)
    other = tmp_path / "y_samples.json"
    other.write_text('{"rows": []}')
    with pytest.raises(ImporterError, match="not unitxt output: no 'samples' or 'results'"):
        unitxt.load(other)
    with pytest.raises(ImporterError, match="is it a results file"):
        unitxt.load(RESULTS)


def test_registered_and_imported_by_the_command(declared_importers, tmp_path, capsys):
    assert declared_importers["unitxt"] == "rankstats_collectors.files.unitxt:load"
    assert rankstats_collectors.files.get("unitxt") is unitxt.load
    out = tmp_path / "cube.nc"
    assert cli.main(["import", "unitxt", str(OUT), "-o", str(out)]) == 0
    assert "unitxt: read 12 rows" in capsys.readouterr().out


def test_instances_listed_in_another_order_by_one_template_are_refused(tmp_path):
    # no instance id: the position is the sample, so the task fields must agree there
    data = json.loads(SAMPLES.read_text())
    subsets = list(data["samples"])
    data["samples"][subsets[1]] = data["samples"][subsets[1]][::-1]
    path = tmp_path / SAMPLES.name
    path.write_text(json.dumps(data))
    with pytest.raises(
        ImporterError,
        match=rf"row 1, column 'samples.{re.escape(subsets[1])}': "
        r"instance 1 is not instance 1 of subset .*"
        r"\(answer '8', there '3'\)",
    ):
        unitxt.load(path)
