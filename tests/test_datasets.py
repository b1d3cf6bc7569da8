"""The example datasets packaged in rankstats/datasets."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr

import rankstats
import rankstats.datasets
from rankstats_collectors.files import mizrahi2024

RELEASE = Path(__file__).parent / "data" / "mizrahi2024"
FOLDER = Path(rankstats.datasets.__file__).parent
STAMPS = ("created_at", "creation_library_version")


def without_stamps(dataset: xr.Dataset) -> xr.Dataset:
    dataset = dataset.copy()
    dataset.attrs = {k: v for k, v in dataset.attrs.items() if k not in STAMPS}
    return dataset


def test_available():
    assert rankstats.datasets.available() == [
        "mizrahi2024",
        "mizrahi2024-aggregated",
        "mizrahi2024-metrics",
    ]


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(rankstats.datasets.UnknownDatasetError) as caught:
        rankstats.datasets.load("mizrahi2023")
    message = str(caught.value)
    assert "no dataset named 'mizrahi2023'" in message
    assert all(name in message for name in rankstats.datasets.available())
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, rankstats.RankstatsError)


@pytest.mark.parametrize(
    ("name", "accuracies"), [("mizrahi2024", "csv"), ("mizrahi2024-aggregated", "json")]
)
def test_packaged_cubes_equal_a_fresh_import(name, accuracies):
    packaged = rankstats.datasets.load(name)
    # the release audit of an import is left out of the packaged cubes (build_datasets)
    fresh = mizrahi2024.load(RELEASE, accuracies=accuracies, audit=False)
    xr.testing.assert_identical(without_stamps(packaged), without_stamps(fresh))
    # the published accuracies come back exactly (float64 on disk)
    assert packaged.score.equals(fresh.score)


def test_packaged_metrics_equal_a_fresh_import():
    packaged = rankstats.datasets.load("mizrahi2024-metrics")
    xr.testing.assert_identical(packaged, mizrahi2024.load_metric_results(RELEASE))


def test_files_are_small_and_licensed():
    for name in ("mizrahi2024.nc", "mizrahi2024-aggregated.nc", "mizrahi2024-metrics.nc"):
        assert (FOLDER / name).stat().st_size < 1_000_000, name
    text = rankstats.datasets.license_text("mizrahi2024")
    assert text == mizrahi2024.LICENSE_TEXT == (FOLDER / "LICENSE-mizrahi2024.md").read_text()
    assert "CDLA-Permissive-2.0" in text and "Mizrahi" in text
    for name in ("mizrahi2024.nc", "mizrahi2024-aggregated.nc", "mizrahi2024-metrics.nc"):
        assert f"`{name}`" in text


def test_build_datasets_writes_the_packaged_files(tmp_path, capsys):
    out = tmp_path / "datasets"
    assert mizrahi2024.main(["build-datasets", str(RELEASE), str(out)]) == 0
    written = sorted(path.name for path in out.iterdir())
    assert written == sorted(
        path.name
        for path in FOLDER.iterdir()
        if path.suffix in (".nc", ".md") and "mizrahi2024" in path.name
    )
    assert len(capsys.readouterr().out.splitlines()) == 4
    rebuilt = rankstats.open_cube(out / "mizrahi2024.nc")
    xr.testing.assert_identical(
        without_stamps(rebuilt), without_stamps(rankstats.datasets.load("mizrahi2024"))
    )
    assert not list(out.glob("*.part"))


def test_rankstats_never_imports_collectors():
    code = (
        "import json, sys; import rankstats, rankstats.datasets; "
        "rankstats.datasets.load('mizrahi2024'); "
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.split('.')[0] == 'rankstats_collectors')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
    for path in Path(rankstats.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        imported |= {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        }
        assert not any(name.split(".")[0] == "rankstats_collectors" for name in imported), path
