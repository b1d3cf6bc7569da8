"""Degenerate cubes that ``validate`` accepts: every command works or says why, in one line.

Each cube here is valid (``rankstats validate`` exits 0 on it): one with a
dimension beyond the cube's (``validate`` carries it along), one template,
one model, constant scores, a model missing one template's score. A command
given one either exits 0 with a result or exits 3 with one line on standard
error; never 70 (a traceback), and never an empty result that says nothing.
"""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest
import xarray as xr

import rankstats
from rankstats import stability
from rankstats._kernels import intervals as _ki
from rankstats._kernels import ranksets as _krs
from rankstats.cli import main
from rankstats.errors import RankstatsWarning

#: Templates a word apart, so that ``edits`` has pairs to compare.
WORDING = {0: "Question: {x} Answer:", 1: "Question: {x} Reply:", 2: "Query: {x} Answer:"}


def records(models="abc", tasks=("t1", "t2"), templates=(0, 1, 2), samples=8, seed=0):
    rng = np.random.default_rng(seed)
    return [
        {
            "model": model,
            "task": task,
            "template": template,
            "sample": sample,
            "template_text": WORDING[template],
            "score": float(rng.random() < 0.3 + 0.2 * i),
        }
        for i, model in enumerate(models)
        for task in tasks
        for template in templates
        for sample in range(samples)
    ]


def with_extra_dimension():
    cube = rankstats.from_records(records(), metric="accuracy")
    shifted = rankstats.from_records(records(seed=1), metric="accuracy")
    return cube.assign(
        score=xr.concat([cube["score"], shifted["score"]], "seed").assign_coords(seed=[0, 1])
    )


CUBES = {
    "extra dimension": with_extra_dimension,
    "one template": lambda: rankstats.from_records(records(templates=(0,))),
    "one model": lambda: rankstats.from_records(records(models="a")),
    "constant scores": lambda: rankstats.from_records(
        [{**r, "score": 1.0} for r in records()], score_kind="binary"
    ),
    # every score missing: each command refuses it or says that nothing could be estimated,
    # and leaks no NumPy warning (the tests turn warnings into errors, hence exit 70)
    "all missing": lambda: rankstats.from_records(
        [{**r, "score": float("nan")} for r in records()], metric="accuracy"
    ),
}

#: Every command that reads a cube, with options that keep it quick.
COMMANDS = {
    "report": lambda path: ["report", path, "--n-resamples", "20", "--seed", "0"],
    "stability": lambda path: ["stability", path, "--n-resamples", "20", "--seed", "0"],
    "compare": lambda path: ["compare", path, path, "--n-resamples", "20", "--seed", "0"],
    "estimate": lambda path: [
        "estimate",
        path,
        "--n-resamples",
        "3",
        "--seed",
        "0",
        "--templates-per-sample",
        "3",
    ],
    "estimate --simulate": lambda path: [
        "estimate",
        path,
        "--simulate",
        "--n-resamples",
        "2",
        "--seed",
        "0",
    ],
    "edits": lambda path: ["edits", path],
    "info": lambda path: ["info", path],
    "plan": lambda path: ["plan", path],
}


@pytest.fixture(scope="module")
def cube_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("degenerate")
    return {
        name: str(rankstats.save(build(), folder / f"{name.replace(' ', '_')}.nc"))
        for name, build in CUBES.items()
    }


def errors_of(err: str) -> list[str]:
    """The lines of standard error that are not notes or the seed."""
    return [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(("rankstats: note:", "rankstats: seed"))
    ]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", list(CUBES))
def test_a_valid_cube_is_analysed_or_refused_in_one_line(kind, command, cube_files, capsys):
    path = cube_files[kind]
    assert main(["validate", path]) == 0
    capsys.readouterr()
    status = main([*COMMANDS[command](path), "--quiet", "--json", "-"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert status in (0, 3), err
    if status == 3:
        lines = errors_of(err)
        assert len(lines) == 1 and lines[0].startswith("rankstats: error: "), err
    else:  # the tables, each with its columns (a table may be empty: the markdown says why)
        tables = json.loads(out)["tables"]
        assert tables and all(isinstance(rows, list) for rows in tables.values()), out


@pytest.mark.parametrize("command", ["report", "stability", "edits", "plan"])
def test_a_command_refusing_an_extra_dimension_names_it(command, cube_files, capsys):
    status = main([*COMMANDS[command](cube_files["extra dimension"]), "--quiet"])
    err = capsys.readouterr().err
    assert status == 3
    assert "seed" in errors_of(err)[0]


# --------------------------------------------------------------------------- nan_policy='omit'


def holes_cube():
    """The example of docs/cli.md: model c lacks template p3's score."""
    return rankstats.from_records(
        [
            {"model": m, "task": "t", "template": p, "score": s}
            for m, row in {
                "a": [0.9, 0.8, 0.7],
                "b": [0.5, 0.6, 0.4],
                "c": [0.1, 0.3, None],
            }.items()
            for p, s in zip(["p1", "p2", "p3"], row, strict=True)
            if s is not None
        ]
    )


@pytest.mark.parametrize("rank_sets", ["simultaneous", "marginal", "bootstrap"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_omit_gives_every_ranked_model_its_rank_set(rank_sets, seed, tmp_path, capsys):
    path = str(rankstats.save(holes_cube(), tmp_path / "holes.nc"))
    argv = [
        "stability",
        path,
        "--nan-policy",
        "omit",
        "--over",
        "templates",
        "--n-resamples",
        "50",
        "--seed",
        str(seed),
        "--rank-sets",
        rank_sets,
    ]
    assert main(argv) == 0  # the markdown
    assert "| c | 0.200 [" in capsys.readouterr().out
    assert main([*argv, "--quiet", "--json", "-"]) == 0
    tables = json.loads(capsys.readouterr().out)["tables"]
    for row in tables["leaderboard"]:
        for column in (
            "score_low",
            "score_high",
            "rank_low",
            "rank_high",
            "tie_group",
            "arena_rank",
        ):
            assert row[column] is not None, (row["model"], column)
    (left_out,) = tables["left_out"]
    assert left_out["model"] == "c" and "p3" in left_out["why"]


def test_omit_names_the_replicates_it_leaves_out(tmp_path, capsys):
    path = str(rankstats.save(holes_cube(), tmp_path / "holes.nc"))
    assert (
        main(
            [
                "stability",
                path,
                "--nan-policy",
                "omit",
                "--over",
                "templates",
                "--n-resamples",
                "50",
                "--seed",
                "0",
                "--quiet",
                "--json",
                "-",
            ]
        )
        == 0
    )
    why = json.loads(capsys.readouterr().out)["tables"]["left_out"][0]["why"]
    assert "2 of 50 replicates drew none of its scored templates" in why
    board = stability.leaderboard(
        holes_cube(), n_resamples=50, over="templates", seed=0, nan_policy="omit"
    )
    assert board.attrs["replicates_left_out"] == "t: 2 of 50"


def test_omit_changes_nothing_when_no_replicate_is_undefined():
    cube = rankstats.from_records(records(), metric="accuracy")
    kwargs = {"n_resamples": 60, "over": "both", "seed": 5}
    omit = stability.leaderboard(cube, nan_policy="omit", **kwargs)
    propagate = stability.leaderboard(cube, nan_policy="propagate", **kwargs)
    for name in propagate.data_vars:
        np.testing.assert_array_equal(omit[name].values, propagate[name].values)
    assert omit.attrs["replicates_left_out"] == ""


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("interpolation", ["linear", "outward"])
def test_an_omitted_replicate_is_as_if_never_drawn(method, interpolation):
    rng = np.random.default_rng(7)
    replicates = rng.normal(size=(4, 40))
    holes = replicates.copy()
    holes[0, [3, 11]] = np.nan
    holes[2, 5] = np.nan
    estimate = np.zeros(4)
    kwargs = {"method": method, "interpolation": interpolation, "acceleration": 0.01}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RankstatsWarning)
        omitted = _ki.confidence_interval(holes, estimate, omit=True, **kwargs)
    for row in range(4):
        kept = holes[row][~np.isnan(holes[row])]
        alone = _ki.confidence_interval(kept, estimate[row], **kwargs)
        for key in ("low", "high", "bias_correction", "standard_error"):
            np.testing.assert_allclose(omitted[key][row], alone[key], rtol=1e-12, equal_nan=True)


def test_the_kept_replicates_keep_their_mean_and_covariance():
    rng = np.random.default_rng(3)
    replicates = rng.normal(size=(2, 4, 30))
    undefined = np.zeros((2, 30), dtype=bool)
    undefined[0, [1, 7, 8]] = True
    moved, short = _krs._kept_moments(replicates, undefined)
    assert not short.any()
    np.testing.assert_array_equal(moved[1], replicates[1])  # nothing left out: bit for bit
    kept = replicates[0][:, ~undefined[0]]
    np.testing.assert_allclose(moved[0].mean(-1), kept.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(np.cov(moved[0]), np.cov(kept), rtol=1e-10)


def test_omit_in_the_rank_sets_fills_the_sets_propagate_leaves_empty():
    rng = np.random.default_rng(4)
    replicates = rng.normal(size=(3, 50)) + np.array([[2.0], [1.0], [0.0]])
    replicates[2, :4] = np.nan
    estimate = np.array([2.0, 1.0, 0.0])
    with pytest.warns(RankstatsWarning, match="undefined"):
        nan = _krs.rank_sets(replicates, estimate, gaussian=True)
    assert np.isnan(nan["low"]).all()
    sets = _krs.rank_sets(replicates, estimate, gaussian=True, omit=True)
    assert np.isfinite(sets["low"]).all() and np.isfinite(sets["tie_group"]).all()
    assert (sets["low"] <= [1, 2, 3]).all() and (sets["high"] >= [1, 2, 3]).all()


# --------------------------------------------------------------------------- compare


def renamed(cube, coordinate, prefix):
    values = np.char.add(prefix, cube[coordinate].values.astype(str)).astype(object)
    return cube.assign_coords({coordinate: cube[coordinate].copy(data=values)})


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda cube: renamed(cube, "template_id", "other-"), "no template"),
        (lambda cube: renamed(cube, "sample_id", "other-"), "no sample"),
        (lambda cube: renamed(cube, "model", "other-"), "no model"),
        (lambda cube: renamed(cube, "task", "other-"), "no task"),
    ],
)
def test_nothing_to_compare_is_an_error_naming_what_is_not_shared(change, named, tmp_path, capsys):
    cube = rankstats.from_records(records(), metric="accuracy")
    a = str(rankstats.save(cube, tmp_path / "a.nc"))
    b = str(rankstats.save(change(cube), tmp_path / "b.nc"))
    status = main(["compare", a, b, "--n-resamples", "20", "--seed", "0", "--quiet", "--json", "-"])
    out, err = capsys.readouterr()
    assert status == 3 and not out
    (line,) = errors_of(err)
    assert named in line and "other-" in line


def test_a_task_sharing_nothing_beside_one_that_does_is_dropped_and_said():
    cube = rankstats.from_records(records(), metric="accuracy")
    other = cube.copy()
    ids = other["template_id"].values.copy()
    ids[1] = ["x", "y", "z"]  # task t2 shares no template
    other = other.assign_coords(template_id=(("task", "template"), ids))
    result = rankstats.compare(cube, other, n_resamples=20, seed=0)
    verdicts = result["verdict"].sel(task="t2").values
    assert set(verdicts.ravel()) == {"not tested"}
    assert "t2" in result.attrs["dropped"] and "not in run B" in result.attrs["dropped"]


# --------------------------------------------------------------------------- estimate


def test_halving_refuses_a_budget_below_its_first_stage(tmp_path, capsys):
    path = str(rankstats.save(rankstats.from_records(records()), tmp_path / "c.nc"))
    status = main(["estimate", path, "--method", "halving-maxp", "--budget", "1", "--seed", "0"])
    out, err = capsys.readouterr()
    assert status == 2 and not out
    (line,) = errors_of(err)
    assert "at least 3 evaluations" in line and "--budget 3" in line
    assert (
        main(
            [
                "estimate",
                path,
                "--method",
                "halving-maxp",
                "--budget",
                "3",
                "--seed",
                "0",
                "--quiet",
                "--json",
                "-",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)["tables"]["estimates"]
    assert max(row["calls"] for row in rows) <= 3


def test_simulate_says_what_halving_spent_over_a_small_budget(tmp_path, capsys):
    path = str(rankstats.save(rankstats.from_records(records()), tmp_path / "c.nc"))
    argv = ["estimate", path, "--simulate", "--budget", "1,24", "--n-resamples", "2", "--seed", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "halving-maxp at budget 1: spent 3.0, 2.0 over" in out
    assert main([*argv, "--quiet", "--json", "-"]) == 0
    calls = json.loads(capsys.readouterr().out)["tables"]["calls"]
    over = {(row["estimator"], row["budget"]): row["over_budget"] for row in calls}
    assert over["halving-maxp", 1] == 2.0
    assert over["random-avgp", 1] == 0.0 and over["halving-maxp", 24] == 0.0


@pytest.mark.parametrize("mode", [[], ["--simulate"], ["--method", "irt", "--budget", "5"]])
def test_estimate_on_a_cube_without_scores_says_so(mode, tmp_path, capsys):
    cube = rankstats.from_records(records())
    cube = cube.assign(score=cube["score"] * np.nan)
    path = str(rankstats.save(cube, tmp_path / "empty.nc"))
    status = main(["estimate", path, "--seed", "0", "--n-resamples", "2", *mode])
    out, err = capsys.readouterr()
    assert status == 3 and not out
    (line,) = errors_of(err)
    assert "holds no score" in line
    with pytest.raises(rankstats.errors.CubeError, match="holds no score"):
        rankstats.simulate_estimators(cube, budgets=[4], n_resamples=2, seed=0)


# --------------------------------------------------------------------------- names


def test_the_resampling_module_does_not_hide_the_bootstrap_function():
    assert inspect.isfunction(stability.bootstrap)
    assert stability.bootstrap.__module__ == "rankstats.stability.resampling"
    with pytest.raises(ModuleNotFoundError):
        __import__("rankstats.stability.bootstrap")
