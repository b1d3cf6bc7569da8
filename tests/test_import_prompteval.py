"""The PromptEval importer, on PromptEval's real templates file and a constructed array."""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import numpy as np
import pytest

import rankstats
import rankstats_collectors.files
from rankstats_collectors.files import ImporterError, prompteval

DATA = Path(__file__).parent / "data" / "prompteval"
ARRAYS = DATA / "anatomy.npz"
TEMPLATES = DATA / "anatomy.csv"


def test_models_prompts_and_examples_are_coordinates():
    with np.load(ARRAYS) as saved:
        y, models, prompts = saved["Y"], saved["models"], saved["prompts"]
        examples = saved["examples"]
    cube = prompteval.load(ARRAYS, templates=str(TEMPLATES))
    assert cube.model.values.tolist() == models.tolist()
    assert cube.template_id.values[0].tolist() == prompts.tolist()
    assert cube.sample_id.values[0].tolist() == examples.tolist()
    np.testing.assert_array_equal(cube.score.isel(task=0).values, y)
    # PromptEval's per-prompt accuracy: the mean over examples
    np.testing.assert_allclose(rankstats.template_scores(cube).isel(task=0).values, y.mean(-1))
    with open(TEMPLATES, encoding="utf-8", newline="") as handle:
        texts = [row["prompt template"] for row in csv.DictReader(handle)]
    # (7 of the 100 texts occur twice in the released file: ids, not texts, tell them apart)
    assert cube.template_text.values[0].tolist() == texts and len(set(texts)) == 93
    assert cube.attrs["metric"] == "correct"


def test_one_model_per_npy_file(tmp_path):
    with np.load(ARRAYS) as saved:
        y = saved["Y"]
    for i, name in enumerate(["m-a", "m-b"]):
        np.save(tmp_path / f"{name}.npy", y[i].astype(float))
    cube = prompteval.load(sorted(tmp_path.glob("*.npy")), task="anatomy")
    assert cube.model.values.tolist() == ["m-a", "m-b"]
    np.testing.assert_array_equal(cube.score.isel(task=0).values, y[:2])


def test_refusals(tmp_path):
    with open(tmp_path / "Ys.pickle", "wb") as handle:
        pickle.dump({"Y": [1]}, handle)
    with pytest.raises(ImporterError, match="a pickle: loading one runs the code it holds"):
        prompteval.load(tmp_path / "Ys.pickle")
    np.save(tmp_path / "flat.npy", np.zeros(5))
    with pytest.raises(ImporterError, match="an array of 1 dimensions"):
        prompteval.load(tmp_path / "flat.npy")
    np.save(tmp_path / "inf.npy", np.array([[1.0, np.inf]]))
    with pytest.raises(
        ImporterError,
        match=r"inf\.npy': the score at \(model, prompt, "
        r"example\) \(0, 0, 1\) is not a finite number",
    ):
        prompteval.load(tmp_path / "inf.npy")
    cube = prompteval.load(tmp_path / "inf.npy", non_finite="missing")
    assert "1 × a score that is not a finite number" in cube.attrs["import_summary"]
    np.save(tmp_path / "small.npy", np.ones((3, 2)))
    with pytest.raises(
        ImporterError,
        match=r"the prompt ids differ from those of the templates "
        r"file .*anatomy.csv' \(ids '3', '4', '5', '6', "
        r"'7' and 92 more in the templates file but not "
        r"in the array\)",
    ):
        prompteval.load(tmp_path / "small.npy", templates=str(TEMPLATES))
    with pytest.raises(ImporterError, match="does not exist"):
        prompteval.load(tmp_path / "absent.npy")


def test_registered(declared_importers):
    assert declared_importers["prompteval"] == "rankstats_collectors.files.prompteval:load"
    assert rankstats_collectors.files.get("prompteval") is prompteval.load
