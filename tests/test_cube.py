import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats.errors import CubeError, DuplicateKeyError, ScoreValueError


def ragged_records():
    """Two tasks: t1 has templates a, b, c and samples 1-2; t2 has template z and samples 1-3."""
    rows = []
    for model in ("m1", "m2"):
        for template in ("a", "b", "c"):
            for sample in (1, 2):
                rows.append(
                    {
                        "model": model,
                        "task": "t1",
                        "template": template,
                        "sample": sample,
                        "score": float((sample + len(model)) % 2),
                    }
                )
        for sample in (1, 2, 3):
            if model == "m2":
                continue  # m2 was never run on t2
            rows.append(
                {"model": model, "task": "t2", "template": "z", "sample": sample, "score": 1.0}
            )
    return rows


def test_ragged_tasks_are_padded():
    cube = rankstats.from_records(ragged_records())
    assert dict(cube.sizes) == {"model": 2, "task": 2, "template": 3, "sample": 3}
    assert cube.template_id.values.tolist() == [["a", "b", "c"], ["z", "", ""]]
    assert cube.sample_id.values.tolist() == [["1", "2", ""], ["1", "2", "3"]]
    # padding: t1 has no third sample, t2 no second or third template
    assert cube.score.sel(task="t1").isel(sample=2).isnull().all()
    assert cube.score.sel(task="t2").isel(template=[1, 2]).isnull().all()
    # absence: m2 never ran on t2
    assert cube.score.sel(model="m2", task="t2").isnull().all()
    assert cube.attrs["score_kind"] == "binary"


def test_positions_follow_first_appearance():
    records = [
        {"model": "b", "task": "x", "template": 10, "score": 0.5},
        {"model": "a", "task": "x", "template": 9, "score": 0.5},
    ]
    cube = rankstats.from_records(records)
    assert cube.model.values.tolist() == ["b", "a"]
    assert cube.template_id.values.tolist() == [["10", "9"]]


def test_scores_land_at_their_labels():
    records = pd.DataFrame(ragged_records())
    cube = rankstats.from_records(records)
    for row in records.itertuples():
        template = cube.template_id.sel(task=row.task).values.tolist().index(row.template)
        sample = cube.sample_id.sel(task=row.task).values.tolist().index(str(row.sample))
        value = cube.score.sel(model=row.model, task=row.task).isel(
            template=template, sample=sample
        )
        assert float(value) == row.score


def test_without_samples_the_cube_has_no_sample_dim():
    records = [{"model": "m", "task": "t", "template": "a", "score": 0.25}]
    cube = rankstats.from_records(records)
    assert "sample" not in cube.dims
    assert "sample_id" not in cube.coords


def test_attribute_columns_are_placed_on_their_dims():
    records = []
    for model, family in (("m1", "f"), ("m2", "g")):
        for task, benchmark in (("t1", "B1"), ("t2", "B2")):
            for template, method in (("a", "default"), ("b", "rephrase")):
                records.append(
                    {
                        "model": model,
                        "task": task,
                        "template": template,
                        "score": 0.5,
                        "family": family,
                        "benchmark": benchmark,
                        "template_method": method,
                        "template_is_original": template == "a",
                        "length": len(template) + 3,
                    }
                )
    cube = rankstats.from_records(records, template_attrs=["length"])
    assert cube.family.dims == ("model",)
    assert cube.family.values.tolist() == ["f", "g"]
    assert cube.benchmark.dims == ("task",)
    assert cube.template_method.dims == ("task", "template")
    assert cube.template_is_original.dtype == bool
    assert cube.template_is_original.values.tolist() == [[True, False], [True, False]]
    assert cube.length.dims == ("task", "template")


def test_template_attribute_padding_is_neutral():
    cube = rankstats.from_records(
        [
            {
                "model": "m",
                "task": "t1",
                "template": "a",
                "score": 1,
                "template_valid": True,
                "template_text": "Say {x}",
                "template_length": 2,
            },
            {
                "model": "m",
                "task": "t1",
                "template": "b",
                "score": 1,
                "template_valid": True,
                "template_text": "Write {x}",
                "template_length": 2,
            },
            {
                "model": "m",
                "task": "t2",
                "template": "c",
                "score": 0,
                "template_valid": True,
                "template_text": "Give {x}",
                "template_length": 2,
            },
        ]
    )
    assert cube.template_valid.values.tolist() == [[True, True], [True, False]]
    assert cube.template_text.values.tolist() == [["Say {x}", "Write {x}"], ["Give {x}", ""]]
    assert np.isnan(cube.template_length.values[1, 1])


def test_attribute_that_varies_within_its_owner_is_an_error():
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1, "template_x": 1},
        {"model": "m", "task": "t", "template": "a", "sample": 2, "score": 1, "template_x": 2},
    ]
    with pytest.raises(CubeError, match="'template_x' takes several values for one template"):
        rankstats.from_records(records)


def test_unplaceable_attribute_is_an_error():
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1, "note": "x"},
        {"model": "m", "task": "t", "template": "a", "sample": 2, "score": 1, "note": "y"},
        {"model": "m", "task": "t", "template": "b", "sample": 1, "score": 1, "note": "y"},
    ]
    with pytest.raises(CubeError, match="'note' varies within"):
        rankstats.from_records(records)


def test_missing_key_column_is_named():
    with pytest.raises(CubeError, match=r"lack the column\(s\) 'template'"):
        rankstats.from_records([{"model": "m", "task": "t", "score": 1}])


def test_missing_key_values_are_named():
    records = [{"model": "m", "task": None, "template": "a", "score": 1}]
    with pytest.raises(CubeError, match="1 row\\(s\\) have no 'task'"):
        rankstats.from_records(records)


def test_non_numeric_scores_name_the_record():
    records = [
        {"model": "m", "task": "t", "template": "a", "score": 0.5},
        {"model": "m", "task": "t", "template": "b", "score": "n/a"},
    ]
    with pytest.raises(ScoreValueError) as error:
        rankstats.from_records(records)
    message = str(error.value)
    assert "1 score(s) are not numbers" in message
    assert "template='b'" in message and "'n/a'" in message


def test_boolean_scores_are_binary():
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": True},
        {"model": "m", "task": "t", "template": "a", "sample": 2, "score": False},
    ]
    cube = rankstats.from_records(records)
    assert cube.attrs["score_kind"] == "binary"
    assert cube.score.values.ravel().tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    "kind, value", [("binary", 0.5), ("proportion", 1.2), ("proportion", -0.1)]
)
def test_scores_outside_their_kind_are_named(kind, value):
    records = [
        {"model": "m", "task": "t", "template": "a", "score": 1.0},
        {"model": "m", "task": "t", "template": "b", "score": value},
    ]
    with pytest.raises(ScoreValueError) as error:
        rankstats.from_records(records, score_kind=kind)
    assert f"model='m', task='t', template='b': {value}" in str(error.value)


def duplicated_records():
    return [
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1.0},
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 0.0},
        {"model": "m", "task": "t", "template": "a", "sample": 2, "score": 1.0},
        {"model": "m", "task": "t", "template": "b", "sample": 2, "score": 0.0},
        {"model": "m", "task": "t", "template": "b", "sample": 2, "score": 0.0},
        {"model": "m", "task": "t", "template": "b", "sample": 2, "score": 1.0},
    ]


def test_duplicates_are_listed():
    with pytest.raises(DuplicateKeyError) as error:
        rankstats.from_records(duplicated_records())
    message = str(error.value)
    assert "2 key(s) appear more than once" in message
    assert "(model='m', task='t', template='a', sample='1') x2" in message
    assert "(model='m', task='t', template='b', sample='2') x3" in message


@pytest.mark.parametrize(
    "policy, a1, b2", [("first", 1.0, 0.0), ("last", 0.0, 1.0), ("mean", 0.5, 1 / 3)]
)
def test_duplicate_policies(policy, a1, b2):
    cube = rankstats.from_records(duplicated_records(), duplicates=policy)
    scores = cube.score.sel(model="m", task="t")
    assert float(scores.isel(template=0, sample=0)) == pytest.approx(a1)
    assert float(scores.isel(template=1, sample=1)) == pytest.approx(b2)
    assert float(scores.isel(template=0, sample=1)) == 1.0


def test_records_must_be_a_frame_or_dicts():
    with pytest.raises(TypeError, match="DataFrame or an iterable of dicts"):
        rankstats.from_records("model,task")


def test_template_scores_average_observed_samples():
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1},
        {"model": "m", "task": "t", "template": "a", "sample": 2, "score": 0},
        {"model": "m", "task": "t", "template": "a", "sample": 3, "score": 1},
        {"model": "m", "task": "t", "template": "b", "sample": 1, "score": 0},
    ]
    cube = rankstats.from_records(records)
    scores = rankstats.template_scores(cube)
    assert scores.dims == ("model", "task", "template")
    np.testing.assert_allclose(scores.values.ravel(), [2 / 3, 0.0])
    assert "sample_id" not in scores.coords


def test_template_scores_of_an_aggregated_cube_are_its_scores():
    cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 0.3}])
    xr.testing.assert_identical(rankstats.template_scores(cube), cube.score)


def test_provenance_attributes():
    cube = rankstats.from_records(
        [{"model": "m", "task": "t", "template": "a", "score": 3.0}],
        higher_is_better=False,
        metric="perplexity",
        source="unit test",
    )
    assert cube.attrs["higher_is_better"] == 0
    assert cube.attrs["metric"] == "perplexity"
    assert cube.attrs["source"] == "unit test"
    assert cube.attrs["schema_version"] == "1.0"
    assert cube.attrs["creation_library_version"] == f"rankstats {rankstats.__version__}"
    assert cube.attrs["created_at"].endswith("+00:00")
