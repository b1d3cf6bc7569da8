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
    spec = importlib.util.spec_from_file_location(
        "minimum_constraints", ROOT / ".ci" / "minimum_constraints.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_checked_in_constraints_are_what_pyproject_gives(script, pyproject):
    assert CONSTRAINTS.read_text(encoding="utf-8") == script.constraints(pyproject), (
        "pyproject.toml changed: run python .ci/minimum_constraints.py"
    )


def test_each_constraint_pins_a_declared_floor(script, pyproject):
    # read with packaging, apart from the script's own parser
    project = pyproject["project"]
    declared = {}
    for text in [
        *pyproject["build-system"]["requires"],
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]:
        requirement = Requirement(text)
        if requirement.name == project["name"]:
            continue
        (floor,) = [s.version for s in requirement.specifier if s.operator == ">="]
        declared[script.normalise(requirement.name)] = floor
    pins = dict(
        line.split("==")
        for line in CONSTRAINTS.read_text().splitlines()
        if line and not line.startswith("#")
    )
    substituted = {name: used for name, (used, _) in script.SUBSTITUTES.items()}
    assert pins == {**declared, **substituted}
    assert {"numpy", "transformers", "pytest", "hatchling", "tqdm"} <= set(pins)
    # a substitute is only for a floor that cannot be installed, never a silent raise
    assert set(substituted) <= set(declared)


def test_a_requirement_without_a_floor_is_refused(script):
    with pytest.raises(ValueError, match=r"'numpy<3' needs exactly one lower bound"):
        script.floors({"project": {"name": "x", "dependencies": ["numpy<3"]}})
    with pytest.raises(ValueError, match="two floors"):
        script.floors(
            {
                "project": {
                    "name": "x",
                    "dependencies": ["tqdm>=4.66"],
                    "optional-dependencies": {"a": ["tqdm>=4.60"]},
                }
            }
        )


_DRAWS = re.compile(r"^\s*(?:from|import) tqdm\b|require\(\s*[\"']tqdm", re.MULTILINE)


def test_every_extra_that_draws_a_progress_bar_requires_tqdm(pyproject):
    # a module of rankstats_collectors/<extra>/ is installed by that extra; any other, by the core
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    drawing = {}
    for path in sorted(
        [*(ROOT / "rankstats").rglob("*.py"), *(ROOT / "rankstats_collectors").rglob("*.py")]
    ):
        if _DRAWS.search(path.read_text(encoding="utf-8")):
            parts = path.relative_to(ROOT).parts
            group = parts[1] if parts[0] == "rankstats_collectors" and parts[1] in extras else None
            drawing.setdefault(group, []).append(str(path.relative_to(ROOT)))
    assert {"openai", "hf"} <= set(drawing)
    for group, paths in drawing.items():
        requirements = extras[group] if group else project["dependencies"]
        assert "tqdm" in {Requirement(r).name for r in requirements}, (
            f"{paths} draw progress bars, and the {group or 'core'} requirements lack tqdm"
        )


# the modules each extra of "all" brings, as the code imports them
EXTRA_MODULES = {
    "io": ["h5netcdf", "pyarrow", "zarr"],
    "dask": ["dask.array", "distributed"],
    "plot": ["matplotlib"],
    "openai": ["openai", "tqdm"],
    "hf": ["torch", "transformers", "tokenizers", "tqdm"],
}


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
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
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


# --- nothing undeclared is reached: every module imports with only what it declares ---

# A module of one of these subpackages is installed by that extra; any other, by the core.
EXTRA_OF_SUBPACKAGE = {
    ("rankstats", "plot"): "plot",
    ("rankstats", "testing"): "testing",
    ("rankstats_collectors", "hf"): "hf",
    ("rankstats_collectors", "openai"): "openai",
}

# Run in a fresh interpreter: the finder of installed modules is replaced by one that
# does not find the top-level modules of distributions outside the allowed ones, so
# importing one raises ModuleNotFoundError and importlib.util.find_spec answers None,
# as where it is not installed (code that looks before it imports, as xarray and
# pandas do, sees it missing); then the imports or the command run.
_BLOCKER = """
import importlib, json, sys
from importlib.machinery import PathFinder

BLOCKED = frozenset(json.loads(sys.argv[1]))


class DeclaredOnly(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        return super().find_spec(name, path, target)


sys.meta_path[sys.meta_path.index(PathFinder)] = DeclaredOnly
"""

_IMPORT_ALL = (
    _BLOCKER
    + """
failed = {}
for module in json.loads(sys.argv[2]):
    try:
        importlib.import_module(module)
    except ImportError as error:
        failed[module] = f"{type(error).__name__}: {error}"
print(json.dumps(failed))
"""
)

_COMMAND = (
    _BLOCKER
    + """
from rankstats.cli import main

sys.exit(main(json.loads(sys.argv[2])))
"""
)


def _modules() -> dict[str | None, list[str]]:
    """Every module of both packages, by the extra that installs it (None: the core)."""
    found: dict[str | None, list[str]] = {}
    for package in ("rankstats", "rankstats_collectors"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue  # runs the command
            if parts[-1] == "__init__":
                parts = parts[:-1]
            extra = EXTRA_OF_SUBPACKAGE.get(parts[:2])
            found.setdefault(extra, []).append(".".join(parts))
    return found


def _distributions(requirements: list[str], project: dict) -> set[str]:
    """The distributions ``requirements`` install, with everything they require in turn."""
    from importlib import metadata

    own = script_normalise(project["name"])
    seen: set[str] = set()
    todo = [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        name = script_normalise(requirement.name)
        if name == own:  # an extra of the project: its requirements
            for extra in requirement.extras:
                todo += [Requirement(t) for t in project["optional-dependencies"][extra]]
            continue
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            needed = Requirement(text)
            if needed.marker is None or any(
                needed.marker.evaluate({"extra": extra}) for extra in ("", *requirement.extras)
            ):
                todo.append(needed)
    return seen


def script_normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _blocked(pyproject, extra: str | None) -> list[str]:
    """The top-level modules of every installed distribution the core (and ``extra``) lack."""
    import sys
    from importlib import metadata

    project = pyproject["project"]
    wanted = list(project["dependencies"])
    if extra:
        wanted += project["optional-dependencies"][extra]
    allowed = _distributions(wanted, project) | {script_normalise(project["name"])}
    blocked = set()
    for module, distributions in metadata.packages_distributions().items():
        if module in sys.stdlib_module_names or module in ("rankstats", "rankstats_collectors"):
            continue
        if not {script_normalise(d) for d in distributions} & allowed:
            blocked.add(module)
    return sorted(blocked)


def _run(code: str, *arguments, cwd=ROOT):
    import json
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", code, *map(json.dumps, arguments)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def test_the_blocker_blocks(pyproject):
    # the check below can fail: an undeclared import is refused
    blocked = _blocked(pyproject, None)
    assert {"matplotlib", "torch", "openai", "pytest", "hypothesis"} <= set(blocked)
    assert {"numpy", "pandas", "xarray", "tabulate"}.isdisjoint(blocked)
    done = _run(_IMPORT_ALL, blocked, ["matplotlib.pyplot", "json", "tabulate"])
    assert done.returncode == 0, done.stderr
    import json

    assert list(json.loads(done.stdout)) == ["matplotlib.pyplot"]


@pytest.mark.slow
@pytest.mark.parametrize("extra", [None, "plot", "testing", "hf", "openai"])
def test_every_module_imports_with_only_its_declared_dependencies(pyproject, extra):
    import json

    modules = _modules()[extra]
    done = _run(_IMPORT_ALL, _blocked(pyproject, extra), modules)
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout)
    assert not failed, (
        f"modules that import what the {extra or 'core'} requirements do not declare: {failed}"
    )


@pytest.mark.slow
def test_a_command_whose_extra_is_missing_names_it(pyproject, tmp_path):
    import pandas as pd

    samples = ROOT / "tests" / "data" / "collect" / "samples.jsonl"
    templates = ROOT / "tests" / "data" / "collect" / "templates.jsonl"
    pd.DataFrame(
        {"model": ["a", "b"], "task": "t", "template": "p", "score": [0.5, 0.6]}
    ).to_parquet(tmp_path / "scores.parquet")
    core = _blocked(pyproject, None)
    commands = [
        (
            "plot",
            [
                "stability",
                "mizrahi2024",
                "--n-resamples",
                "5",
                "--seed",
                "0",
                "--quiet",
                "--figures",
                "figures",
            ],
        ),
        (
            "dask",
            [
                "stability",
                "mizrahi2024",
                "--n-resamples",
                "5",
                "--seed",
                "0",
                "--quiet",
                "--chunks",
                "task=1",
            ],
        ),
        ("io", ["import", "table", "scores.parquet", "-o", "cube.nc"]),
        (
            "hf",
            [
                "collect",
                "hf",
                "--model",
                "gpt2",
                "--samples",
                str(samples),
                "--templates",
                str(templates),
                "-o",
                "hf.nc",
            ],
        ),
        (
            "openai",
            [
                "collect",
                "openai",
                "--model",
                "gpt-4o-mini",
                "--samples",
                str(samples),
                "--templates",
                str(templates),
                "-o",
                "openai.nc",
                "--dry-run",
            ],
        ),
    ]
    for extra, command in commands:
        done = _run(_COMMAND, core, command, cwd=tmp_path)
        assert done.returncode == 3, (command, done.stderr)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        # notes may come first; the error is one line, and it names the extra
        errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
        assert len(errors) == 1 and errors[0].startswith("rankstats: error: "), done.stderr
        assert f'pip install "rankstats[{extra}]"' in errors[0], (command, errors[0])
    # a core command needs no extra: plan prints its markdown tables (pandas' tabulate)
    done = _run(_COMMAND, core, ["plan", "mizrahi2024"], cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "|" in done.stdout


def test_a_missing_module_is_named_with_its_extra():
    from rankstats.cli import EXTRA_OF_MODULE, _missing_extra

    error = ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib.pyplot")
    assert _missing_extra(error) == (
        "No module named 'matplotlib': pip install \"rankstats[plot]\""
    )
    pandas_style = ImportError("Missing optional dependency 'pyarrow'. Use pip or conda.")
    assert _missing_extra(pandas_style).endswith('pip install "rankstats[io]"')
    named = ImportError('figures need matplotlib: pip install "rankstats[plot]"')
    assert _missing_extra(named) == 'figures need matplotlib: pip install "rankstats[plot]"'
    # every module named is installed by the extra named, as pyproject.toml declares
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    for module, extra in EXTRA_OF_MODULE.items():
        declared = {
            Requirement(text).name.lower().replace("-", "_")
            for name in ({"all": ["openai", "hf"]}.get(extra) or [extra])
            for text in extras[name]
        }
        assert module in declared or module == "h5py", (module, extra)  # h5netcdf[h5py]
