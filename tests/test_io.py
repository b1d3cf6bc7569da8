import netCDF4
import numpy as np
import pytest
import xarray as xr

import rankstats
from rankstats.errors import CubeError


def make_cube(kind="binary"):
    rng = np.random.default_rng(7)
    records = []
    for model in ("m1", "m2", "m3"):
        for task, templates in (("t1", "abc"), ("t2", "xy")):
            for template in templates:
                for sample in range(4 if task == "t1" else 2):
                    value = float(rng.integers(0, 2)) if kind == "binary" else float(rng.random())
                    records.append(
                        {
                            "model": model,
                            "task": task,
                            "template": template,
                            "sample": sample,
                            "score": value,
                            "template_text": f"Say {template} {{x}}",
                            "template_valid": template != "b",
                            "benchmark": task.upper(),
                        }
                    )
    return rankstats.from_records(records, score_kind=kind, source="test")


@pytest.mark.parametrize("kind", ["binary", "proportion"])
def test_netcdf_round_trip(tmp_path, kind):
    cube = make_cube(kind)
    path = rankstats.save(cube, tmp_path / "cube.nc", float_dtype="float64")
    back = rankstats.open_cube(path)
    xr.testing.assert_identical(back, cube)


def test_float32_keeps_seven_digits(tmp_path):
    cube = make_cube("proportion")
    back = rankstats.open_cube(rankstats.save(cube, tmp_path / "cube.nc"))
    assert back.score.dtype == np.float64
    np.testing.assert_allclose(back.score, cube.score, rtol=1e-7)
    np.testing.assert_array_equal(back.score.isnull(), cube.score.isnull())


def test_on_disk_encoding(tmp_path):
    path = rankstats.save(make_cube("binary"), tmp_path / "binary.nc")
    with netCDF4.Dataset(path) as handle:
        score = handle["score"]
        assert score.dtype == np.int8
        assert score.getncattr("_FillValue") == -1
        filters = score.filters()
        assert filters["zlib"] and filters["complevel"] == 4
        sizes = dict(zip(score.dimensions, score.chunking(), strict=True))
        assert sizes["model"] == 1 and sizes["task"] == 1
        assert sizes["template"] == 3 and sizes["sample"] == 4
    path = rankstats.save(make_cube("proportion"), tmp_path / "float.nc")
    with netCDF4.Dataset(path) as handle:
        assert handle["score"].dtype == np.float32


def test_zarr_round_trip(tmp_path):
    pytest.importorskip("zarr")
    cube = make_cube("binary")
    path = rankstats.save(cube, tmp_path / "cube.zarr")
    assert path.is_dir()
    xr.testing.assert_identical(rankstats.open_cube(path), cube)
    # overwriting replaces the store
    other = cube.copy()
    other["score"] = 1 - other.score
    rankstats.save(other, path)
    xr.testing.assert_identical(rankstats.open_cube(path), other)


def test_open_lazily_with_dask(tmp_path):
    pytest.importorskip("dask")
    path = rankstats.save(make_cube("binary"), tmp_path / "cube.nc")
    lazy = rankstats.open_cube(path, chunks={"model": 1})
    assert lazy.score.chunks is not None
    eager = rankstats.open_cube(path)
    xr.testing.assert_identical(lazy.compute(), eager)


def test_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    cube = make_cube("binary")
    target = tmp_path / "cube.nc"
    rankstats.save(cube, target)
    before = target.read_bytes()
    original = xr.Dataset.to_netcdf

    def crash(self, path, *args, **kwargs):
        original(self, path, *args, **kwargs)  # the file is fully written, then the process dies
        with open(path, "r+b") as handle:
            handle.truncate(100)
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.Dataset, "to_netcdf", crash)
    with pytest.raises(KeyboardInterrupt):
        rankstats.save(cube, target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cube.nc"]

    fresh = tmp_path / "fresh.nc"
    monkeypatch.setattr(xr.Dataset, "to_netcdf", crash)
    with pytest.raises(KeyboardInterrupt):
        rankstats.save(cube, fresh)
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cube.nc"]


def test_save_validates_first(tmp_path):
    cube = make_cube("binary")
    cube.attrs.pop("metric")
    with pytest.raises(CubeError, match="missing attribute\\(s\\) 'metric'"):
        rankstats.save(cube, tmp_path / "cube.nc")
    assert list(tmp_path.iterdir()) == []


def test_open_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file at"):
        rankstats.open_cube(tmp_path / "missing.nc")
    junk = tmp_path / "junk.nc"
    junk.write_text("not a netCDF file")
    with pytest.raises(CubeError, match=r"junk\.nc"):
        rankstats.open_cube(junk)
    not_a_cube = tmp_path / "other.nc"
    xr.Dataset({"x": ("a", [1.0])}).to_netcdf(not_a_cube)
    with pytest.raises(CubeError, match=r"other\.nc.*no 'score' variable"):
        rankstats.open_cube(not_a_cube)


def test_save_into_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rankstats.save(make_cube(), tmp_path / "nowhere" / "cube.nc")


def test_lazy_open_checks_structure_and_values_on_request(tmp_path):
    pytest.importorskip("dask")
    cube = make_cube("proportion")
    path = rankstats.save(cube, tmp_path / "cube.nc", float_dtype="float64")
    # corrupt one score on disk past the range of a proportion
    with netCDF4.Dataset(path, "r+") as handle:
        handle["score"][0, 0, 0, 0] = 1.5
    lazy = rankstats.open_cube(path, chunks={"model": 1})
    assert lazy.score.chunks is not None  # opened without reading every score
    with pytest.raises(rankstats.ScoreValueError, match="outside \\[0, 1\\]"):
        rankstats.open_cube(path, chunks={"model": 1}, check_values=True)
    with pytest.raises(rankstats.ScoreValueError, match="model='m1', task='t1', template='a'"):
        rankstats.open_cube(path)
