import json

import jsonschema
import numpy as np
import pytest
import xarray as xr

import rankstats
from rankstats import schemas, validation
from rankstats.errors import CubeError, ScoreValueError

SCHEMA = schemas.load("cube")


def small_cube():
    records = [
        {
            "model": model,
            "task": task,
            "template": template,
            "sample": sample,
            "score": float((i + sample) % 2),
            "template_valid": True,
        }
        for i, model in enumerate(("m1", "m2"))
        for task, templates in (("t1", "ab"), ("t2", "c"))
        for template in templates
        for sample in (1, 2)
    ]
    return rankstats.from_records(records)


def structure(cube: xr.Dataset) -> dict:
    return json.loads(json.dumps(cube.to_dict(data=False), default=str))


def test_valid_cube_passes_validate_and_schema():
    cube = small_cube()
    assert rankstats.validate(cube) is cube
    jsonschema.validate(structure(cube), SCHEMA)


def test_schema_and_validate_state_the_same_conventions():
    attrs = SCHEMA["properties"]["attrs"]
    assert tuple(attrs["required"]) == validation.REQUIRED_ATTRS
    assert tuple(attrs["properties"]["score_kind"]["enum"]) == validation.SCORE_KINDS
    assert attrs["properties"]["schema_version"]["pattern"] == (
        "^" + validation.SCHEMA_VERSION.split(".")[0] + "\\."
    )
    required_dims = SCHEMA["properties"]["dims"]["required"]
    assert tuple(required_dims) == validation.REQUIRED_DIMS


def break_attr(cube):
    cube.attrs["score_kind"] = "probability"


def drop_attr(cube):
    del cube.attrs["source"]


def drop_dim(cube):
    return cube.isel(template=0, drop=True)


def misplace_template_coord(cube):
    return cube.assign_coords(template_note=("template", ["x", "y"]))


def drop_template_id(cube):
    return cube.drop_vars("template_id")


def bad_flag(cube):
    cube.attrs["higher_is_better"] = "yes"


BREAKAGES = {
    "score_kind": (break_attr, "score_kind='probability' is not one of"),
    "missing attribute": (drop_attr, "missing attribute\\(s\\) 'source'"),
    "missing dim": (drop_dim, "'score' lacks the dimension\\(s\\) 'template'"),
    "misplaced coordinate": (
        misplace_template_coord,
        "coordinate 'template_note' has dims \\('template',\\)",
    ),
    "no template ids": (drop_template_id, "no 'template_id' coordinate"),
    "flag": (bad_flag, "higher_is_better='yes' is not 0 or 1"),
}


@pytest.mark.parametrize("name", BREAKAGES)
def test_each_breakage_is_named_and_fails_the_schema(name):
    breakage, message = BREAKAGES[name]
    cube = small_cube()
    broken = breakage(cube)
    cube = cube if broken is None else broken
    with pytest.raises(CubeError, match=message):
        rankstats.validate(cube)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(structure(cube), SCHEMA)


def test_repeated_template_id_within_a_task():
    cube = small_cube()
    ids = cube.template_id.values.copy()
    ids[0, 1] = ids[0, 0]
    cube = cube.assign_coords(template_id=(("task", "template"), ids))
    with pytest.raises(CubeError, match="template_id repeats 'a' within task 't1'"):
        rankstats.validate(cube)


def test_scores_at_padding_are_named():
    cube = small_cube()
    cube["score"] = cube.score.fillna(0.0)
    with pytest.raises(CubeError, match="task 't2' has scores at padded template position 1"):
        rankstats.validate(cube)


def test_repeated_model_labels():
    cube = small_cube()
    cube = cube.assign_coords(model=["m1", "m1"])
    with pytest.raises(CubeError, match="coordinate 'model' repeats the label"):
        rankstats.validate(cube)


def test_non_numeric_scores():
    cube = small_cube()
    cube["score"] = cube.score.astype(str)
    with pytest.raises(ScoreValueError, match="not numbers"):
        rankstats.validate(cube)


def test_range_errors_name_every_label():
    cube = small_cube()
    values = cube.score.values.copy()
    values[1, 0, 1, 0] = 0.5
    cube["score"] = (cube.score.dims, values)
    with pytest.raises(ScoreValueError) as error:
        rankstats.validate(cube)
    assert "model='m2', task='t1', template='b', sample='1': 0.5" in str(error.value)


def test_not_a_dataset():
    with pytest.raises(CubeError, match="not DataArray"):
        rankstats.validate(small_cube().score)


def test_every_problem_is_reported_at_once():
    cube = small_cube()
    del cube.attrs["metric"]
    cube.attrs["score_kind"] = "odd"
    with pytest.raises(CubeError) as error:
        rankstats.validate(cube)
    assert "'metric'" in str(error.value) and "'odd'" in str(error.value)


def test_extra_dims_are_allowed():
    cube = small_cube()
    cube = cube.expand_dims(seed=[0, 1])
    rankstats.validate(cube)
    jsonschema.validate(structure(cube), SCHEMA)
    assert np.isfinite(cube.score.sel(seed=1)).any()
