"""What the package declares: floors the minimum run tests, extras that fit the code, the wheel."""

import importlib
import importlib.util
import re
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from rankstats import schemas
from rankstats.errors import OptionError

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "minimum-constraints.txt"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("minimum_constraints",
                                                  ROOT / ".ci" / "minimum_constraints.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_checked_in_constraints_are_what_pyproject_gives(script, pyproject):
    assert CONSTRAINTS.read_text(encoding="utf-8") == script.constraints(pyproject), \
        "pyproject.toml changed: run python .ci/minimum_constraints.py"


def test_each_constraint_pins_a_declared_floor(script, pyproject):
    # read with packaging, apart from the script's own parser
    project = pyproject["project"]
    declared = {}
    for text in [*pyproject["build-system"]["requires"], *project["dependencies"],
                 *(r for extra in project["optional-dependencies"].values() for r in extra)]:
        requirement = Requirement(text)
        if requirement.name == project["name"]:
            continue
        (floor,) = [s.version for s in requirement.specifier if s.operator == ">="]
        declared[script.normalise(requirement.name)] = floor
    pins = dict(line.split("==") for line in CONSTRAINTS.read_text().splitlines()
                if line and not line.startswith("#"))
    substituted = {name: used for name, (used, _) in script.SUBSTITUTES.items()}
    assert pins == {**declared, **substituted}
    assert {"numpy", "transformers", "pytest", "hatchling", "tqdm"} <= set(pins)
    # a substitute is only for a floor that cannot be installed, never a silent raise
    assert set(substituted) <= set(declared)


def test_a_requirement_without_a_floor_is_refused(script):
    with pytest.raises(ValueError, match=r"'numpy<3' needs exactly one lower bound"):
        script.floors({"project": {"name": "x", "dependencies": ["numpy<3"]}})
    with pytest.raises(ValueError, match="two floors"):
        script.floors({"project": {"name": "x", "dependencies": ["tqdm>=4.66"],
                                   "optional-dependencies": {"a": ["tqdm>=4.60"]}}})


_DRAWS = re.compile(r"^\s*(?:from|import) tqdm\b|require\(\s*[\"']tqdm", re.MULTILINE)


def test_every_extra_that_draws_a_progress_bar_requires_tqdm(pyproject):
    # a module of rankstats_collectors/<extra>/ is installed by that extra; any other, by the core
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    drawing = {}
    for path in sorted([*(ROOT / "rankstats").rglob("*.py"), *(ROOT / "rankstats_collectors").rglob("*.py")]):
        if _DRAWS.search(path.read_text(encoding="utf-8")):
            parts = path.relative_to(ROOT).parts
            group = parts[1] if parts[0] == "rankstats_collectors" and parts[1] in extras else None
            drawing.setdefault(group, []).append(str(path.relative_to(ROOT)))
    assert {"openai", "hf"} <= set(drawing)
    for group, paths in drawing.items():
        requirements = extras[group] if group else project["dependencies"]
        assert "tqdm" in {Requirement(r).name for r in requirements}, \
            f"{paths} draw progress bars, and the {group or 'core'} requirements lack tqdm"


# the modules each extra of "all" brings, as the code imports them
EXTRA_MODULES = {"io": ["h5netcdf", "pyarrow", "zarr"], "dask": ["dask.array", "distributed"],
                 "plot": ["matplotlib"], "openai": ["openai", "tqdm"],
                 "hf": ["torch", "transformers", "tokenizers", "tqdm"]}


def test_every_extra_of_all_imports_in_the_test_environment(pyproject):
    # Tests skip what they cannot import (pytest.importorskip); where every extra is
    # installed, as both CI runs install them, such a skip would hide a broken floor
    # (zarr 2.18.6 and older fail to import with the numcodecs of today).
    (everything,) = pyproject["project"]["optional-dependencies"]["all"]
    assert set(EXTRA_MODULES) == Requirement(everything).extras
    for modules in EXTRA_MODULES.values():
        for module in modules:
            importlib.import_module(module)


def test_the_wheel_ships_the_schemas_and_declares_tqdm(tmp_path):
    from hatchling.builders.wheel import WheelBuilder

    (wheel,) = WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"])
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [line.split(":", 1)[1].strip()
                    for line in archive.read(metadata).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    assert {f"rankstats/schemas/{name}.schema.json" for name in schemas.NAMES} <= names
    by_extra = {}
    for text in requires:
        requirement = Requirement(text)
        extra = re.search(r"extra == \"(\w+)\"", str(requirement.marker or ""))
        by_extra.setdefault(extra and extra[1], {})[requirement.name] = requirement
    assert "tqdm" in by_extra["openai"] and "tqdm" in by_extra["hf"]
    assert "pytest" in by_extra["test"]
    # the testing kit: its extra brings hypothesis, and its reference vectors are package data
    assert "hypothesis" in by_extra["testing"]
    assert "rankstats/testing/reference_vectors.json" in names
    # "all" is what a user runs: the extras' requirements, not the tools of tests and docs
    assert {"xarray", "netcdf4"}.isdisjoint(by_extra["all"])
    users = set().union(*(by_extra[e] for e in ("io", "dask", "plot", "openai", "hf")))
    assert set(by_extra["all"]) == users


def test_the_schemas_are_found_through_the_package():
    for name in schemas.NAMES:
        assert schemas.load(name)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schemas.path(name).is_file()
    with pytest.raises(OptionError, match="no schema named 'cubes'; the schemas are cube, "):
        schemas.path("cubes")
