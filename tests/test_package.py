import json
import subprocess
import sys

import pytest

import rankstats
import rankstats_collectors

HEAVY = ("torch", "transformers", "openai", "matplotlib", "pingouin", "dask", "scipy.stats")


def test_import_is_light():
    code = (
        "import json, sys; import rankstats, rankstats_collectors; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_public_api():
    expected = {
        "rank",
        "kendall_w",
        "kendall_tau",
        "kendall_tau_matrix",
        "friedman",
        "mcnemar",
        "cochran_q",
        "maxp",
        "avgp",
        "saturation",
        "cps",
        "divergence",
        "template_scores",
        "from_records",
        "validate",
        "save",
        "open_cube",
    }
    assert expected <= set(rankstats.__all__)
    for name in rankstats.__all__:
        assert getattr(rankstats, name) is not None


def test_errors_are_also_builtin_errors():
    assert issubclass(rankstats.CubeError, ValueError)
    assert issubclass(rankstats.DimensionError, rankstats.RankstatsError)
    assert issubclass(rankstats.RankstatsWarning, UserWarning)


def test_collector_registry():
    calls = []
    rankstats_collectors.register("unit", lambda **options: calls.append(options) or "cube")
    try:
        with pytest.raises(ValueError, match="already registered"):
            rankstats_collectors.register("unit", lambda: None)
        assert rankstats_collectors.get("unit")(model="m") == "cube"
        assert calls == [{"model": "m"}]
        assert "unit" in rankstats_collectors.available()
    finally:
        rankstats_collectors.unregister("unit")
    with pytest.raises(
        rankstats_collectors.UnknownCollectorError, match="no collector named 'unit'"
    ):
        rankstats_collectors.get("unit")


def test_missing_extra_names_the_extra():
    with pytest.raises(
        rankstats_collectors.MissingExtraError, match=r'pip install "rankstats\[openai\]"'
    ):
        rankstats_collectors.require("a_module_that_is_not_installed", "openai")


def test_cli_validate_and_info(tmp_path, capsys):
    from rankstats.cli import main

    cube = rankstats.from_records(
        [
            {"model": "m", "task": "t", "template": "a", "sample": 1, "score": 1},
            {"model": "m", "task": "t", "template": "b", "sample": 1, "score": 0},
        ],
        metric="accuracy",
    )
    path = rankstats.save(cube, tmp_path / "cube.nc")
    assert main(["validate", str(path)]) == 0
    assert "ok:" in capsys.readouterr().out
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "t: 2 templates, 1 models" in out and "metric: accuracy" in out
    broken = tmp_path / "broken.nc"
    broken.write_text("nothing")
    assert main(["validate", str(path), str(broken)]) == 1
    assert "invalid:" in capsys.readouterr().err
    assert main(["info", str(broken)]) == 3  # data error


def test_cli_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "rankstats.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"rankstats {rankstats.__version__}"


def test_registry_loads_any_entry_point_object():
    # entry_points() may hand back another EntryPoint class (the importlib_metadata
    # backport) than importlib.metadata's; the registry must load it all the same
    from rankstats_collectors._registry import Registry

    class Point:
        name = "dumps"

        def load(self):
            import json

            return json.dumps

    things = Registry("thing", "rankstats.test-only-group")
    things.register("dumps", "json:dumps")
    things._entries["dumps"] = Point()
    assert things.get("dumps")([1]) == "[1]"
