"""``rankstats submission`` and check_submission: a new model against a leaderboard.

The numbers of the report are checked against the library functions called directly on
a cube joined independently (``xarray.concat``, not the records the check builds), the
unpaired statement and the mean over tasks against hand computations (NumPy, SciPy), and
the command against bad input and against writing over what it reads.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import rankstats
from rankstats import cli, stability
from rankstats.analyses.submission import (
    MEAN,
    check_submission,
    submission_markdown,
    submission_tables,
)
from rankstats.errors import (
    CoordinateMismatchError,
    CubeError,
    DimensionError,
    OptionError,
    UnknownNameError,
)

ROOT = Path(__file__).resolve().parent.parent
BOARD = ROOT / "tests/data/fixtures/lm_eval/multiprompt/example__model-a"
NEW = ROOT / "tests/data/fixtures/lm_eval/multiprompt/example__model-b"
WORKFLOW = ROOT / "docs/examples/leaderboard-check.yml"
SEED, DRAWS = 3, 400


def snapshot(path: Path) -> dict:
    path = Path(path)
    if path.is_dir():
        return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
    return {Path(): path.read_bytes()}


def synthetic(truth: dict, tasks=("t1", "t2"), items=120, seed=0, ids=None):
    """Binary scores, one template; ``ids`` renames the items of some models."""
    rng = np.random.default_rng(seed)
    records = [
        {
            "model": model,
            "task": task,
            "template": "p",
            "sample": (ids or {}).get(model, "s") + str(i),
            "score": float(rng.random() < p + 0.05 * k),
        }
        for model, p in truth.items()
        for k, task in enumerate(tasks)
        for i in range(items)
    ]
    return rankstats.from_records(records, metric="accuracy")


# ---- the fixture leaderboard, through the command, against the library --------------------


@pytest.fixture(scope="module")
def fixture_cubes():
    from rankstats_collectors.files import lm_eval

    board, new = lm_eval.load(str(BOARD)), lm_eval.load(str(NEW))
    joined = xr.concat(
        [board, new],
        dim="model",
        coords="minimal",
        compat="override",
        combine_attrs="override",
        data_vars="minimal",
    )
    return board, new, joined


@pytest.fixture(scope="module")
def command_tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("command")
    before = {path: snapshot(path) for path in (BOARD, NEW)}
    argv = ["submission", str(BOARD), str(NEW), "--format", "lm_eval", "--seed", str(SEED)]
    argv += ["--n-resamples", str(DRAWS), "--quiet", "--json", str(folder / "out.json")]
    argv += ["-o", str(folder / "report.md")]
    assert cli.main(argv) == 0
    assert {path: snapshot(path) for path in (BOARD, NEW)} == before  # inputs untouched
    document = json.loads((folder / "out.json").read_text())
    tables = {name: pd.DataFrame(rows) for name, rows in document["tables"].items()}
    return document["attrs"], tables, (folder / "report.md").read_text()


def test_the_fixture_report_matches_the_library(fixture_cubes, command_tables):
    _, _, joined = fixture_cubes
    attrs, tables, report = command_tables
    new, record = "example/model-b", "example/model-a"
    assert attrs["model"] == new and attrs["record"] == record and attrs["paired"] is True
    board = stability.leaderboard(joined, DRAWS, "samples", seed=SEED)
    rows = tables["board"].set_index("model")
    for model in (new, record):
        one = board.sel(model=model, task="asdiv")
        assert rows.loc[model, "score"] == pytest.approx(float(one["score"]))
        assert rows.loc[model, "rank_low"] == float(one["rank_low"])
        assert rows.loc[model, "rank_high"] == float(one["rank_high"])
    compared = rankstats.compare(
        joined, between={"model": (new, record)}, n_resamples=DRAWS, seed=SEED
    ).sel(task="asdiv")
    margin = tables["margin"].set_index("task").loc["asdiv"]
    for mine, theirs in [
        ("margin", "difference"),
        ("low", "low"),
        ("high", "high"),
        ("pvalue", "pvalue"),
        ("mde", "mde"),
    ]:
        assert margin[mine] == pytest.approx(float(compared[theirs]), rel=1e-9), mine
    assert margin["test"] == str(compared["test"].item())
    # the margin is the two models' mean accuracies over templates and items, by hand
    means = joined["score"].sel(task="asdiv").mean(["template", "sample"])
    assert margin["margin"] == pytest.approx(float(means.sel(model=new) - means.sel(model=record)))
    planned = stability.plan(joined, differences=[abs(margin["margin"])]).sel(task="asdiv")
    resolve = tables["resolve"].set_index("task").loc["asdiv"]
    error = float(planned["relative_error_now"])
    assert resolve["resolvable_difference"] == pytest.approx(
        stats.norm.ppf(0.95) * math.sqrt(2 * error)
    )
    assert resolve["p_ordered"] == pytest.approx(float(planned["p_ordered_now"].item()))
    # the MDE shrinks as 1/sqrt(n): the items needed put it at the observed margin
    assert resolve["items_needed"] == math.ceil(50 * (margin["mde"] / margin["margin"]) ** 2)
    assert tables["winner"].empty  # the submission trails: nothing to adjust
    first = report.splitlines()[0]
    assert first.startswith(f"**{new}**: rank set [1, 2] of 2 on asdiv; trails the record {record}")
    assert f"p = {margin['pvalue']:.3f}" in first


# ---- a board of several tasks: the mean over tasks, the winner's curse ----------------------


@pytest.fixture(scope="module")
def leading():
    cube = synthetic({"a": 0.55, "b": 0.50, "c": 0.35, "new": 0.70}, items=150)
    board, new = cube.sel(model=["a", "b", "c"]), cube.sel(model=["new"])
    return cube, check_submission(board, new, n_resamples=DRAWS, seed=SEED)


def test_the_mean_over_tasks_and_the_adjusted_score_match_the_library(leading):
    cube, result = leading
    assert result.view == MEAN and result.leads and result.paired and result.record == "a"
    reps = stability.replicates(cube, DRAWS, "samples", seed=SEED, statistics=("avgp", "rank"))
    draws = reps["avgp"].transpose("model", "task", ...).values.mean(1)
    estimate = reps["avgp_estimate"].transpose("model", "task").values.mean(1)
    models = [str(m) for m in reps["model"].values]
    covariance = pd.DataFrame(np.cov(draws), index=models, columns=models)
    estimates = pd.Series(estimate, index=pd.Index(models, name="model"))
    sets = stability.rank_sets(estimates, covariance=covariance, n_resamples=DRAWS, seed=SEED)
    board = result.board
    for model in models:
        assert board.loc[model, "rank_low"] == float(sets["rank_low"].sel(model=model))
        assert board.loc[model, "rank_high"] == float(sets["rank_high"].sel(model=model))
    adjusted = stability.winner_interval(estimates, covariance=covariance)
    winner = result.winner.iloc[0]
    assert winner["model"] == "new"
    for name in ("adjusted_estimate", "low", "high", "naive_low", "naive_high"):
        assert winner[name] == pytest.approx(float(adjusted[name].item()), rel=1e-9), name
    assert winner["adjusted_estimate"] <= winner["estimate"]  # the curse only lowers it
    # the margin on the mean: each task's mean accuracy, averaged, by hand
    means = cube["score"].mean(["template", "sample"]).mean("task")
    row = result.margin.loc[MEAN]
    assert row["margin"] == pytest.approx(float(means.sel(model="new") - means.sel(model="a")))
    difference = draws[models.index("new")] - draws[models.index("a")]
    below, above = (difference <= 0).sum(), (difference >= 0).sum()
    assert row["pvalue"] == pytest.approx(min(1, 2 * (1 + min(below, above)) / (DRAWS + 1)))
    # the bootstrap standard error of the paired difference against its formula:
    # per task var(d_i) / n, the mean over T tasks dividing by T^2
    d = (cube["score"].sel(model="new") - cube["score"].sel(model="a")).mean("template")
    analytic = math.sqrt(float((d.var("sample", ddof=0) / d.sizes["sample"]).sum())) / 2
    assert np.std(difference, ddof=1) == pytest.approx(analytic, rel=0.12)
    # each task's margin is compare's, Holm across the tasks
    compared = rankstats.compare(
        cube, between={"model": ("new", "a")}, n_resamples=DRAWS, seed=SEED
    )
    for task in ("t1", "t2"):
        assert result.margin.loc[task, "pvalue_adjusted"] == pytest.approx(
            float(compared["pvalue_adjusted"].sel(task=task))
        )
    headline = submission_markdown(result).splitlines()[0]
    assert re.match(
        r"\*\*new\*\*: rank set \[1, 1\] of 4 on benchmark mean; beats the record a by "
        r"\+\d+\.\d points \(paired p = [\d.e-]+, bootstrap test\); adjusted score "
        r"\d+\.\d \[\d+\.\d, \d+\.\d\]$",
        headline,
    ), headline
    assert set(submission_tables(result)) == {"board", "tasks", "margin", "winner", "resolve"}


def test_unaligned_items_give_an_unpaired_statement():
    cube = synthetic({"a": 0.6, "b": 0.5, "new": 0.62}, tasks=("t",), items=80, ids={"new": "x"})
    result = check_submission(
        cube.sel(model=["a", "b"]), cube.sel(model=["new"]), n_resamples=100, seed=0
    )
    assert not result.paired
    assert any("unpaired" in note for note in result.notes)
    row = result.margin.loc["t"]
    a = cube["score"].sel(model="new", task="t").mean("template").dropna("sample").values
    b = cube["score"].sel(model="a", task="t").mean("template").dropna("sample").values
    se = math.hypot(a.std(ddof=1) / math.sqrt(a.size), b.std(ddof=1) / math.sqrt(b.size))
    z = (a.mean() - b.mean()) / se
    assert row["margin"] == pytest.approx(a.mean() - b.mean())
    assert row["pvalue"] == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert row["test"] == "z (unpaired)"
    assert "unpaired p" in submission_markdown(result).splitlines()[0]


# ---- bad input -------------------------------------------------------------------------------


def test_bad_submissions_are_refused_naming_the_fault():
    cube = synthetic({"a": 0.6, "b": 0.5, "new": 0.6, "other": 0.4})
    board = cube.sel(model=["a", "b"])
    with pytest.raises(UnknownNameError, match="'nobody' is not in the submission"):
        check_submission(board, cube.sel(model=["new"]), model="nobody", seed=0)
    with pytest.raises(OptionError, match="holds 2 models"):
        check_submission(board, cube.sel(model=["new", "other"]), seed=0)
    with pytest.raises(CoordinateMismatchError, match="'a' is already on the board"):
        check_submission(board, cube.sel(model=["a"]), seed=0)
    with pytest.raises(CoordinateMismatchError, match="no score on the board's task 't2'"):
        check_submission(board, cube.sel(model=["new"], task=["t1"]), seed=0)
    other = cube.sel(model=["new"]).assign_attrs(metric="f1")
    with pytest.raises(CubeError, match="metric"):
        check_submission(board, other, seed=0)
    with pytest.raises(DimensionError, match="no per-item scores"):
        check_submission(board.mean("sample"), cube.sel(model=["new"]), seed=0)
    with pytest.raises(OptionError, match="at least 20"):
        check_submission(board, cube.sel(model=["new"]), n_resamples=5, seed=0)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    cube = synthetic({"a": 0.6, "b": 0.5, "new": 0.6}, items=40)
    board = rankstats.save(cube.sel(model=["a", "b"]), folder / "board.nc")
    new = rankstats.save(cube.sel(model=["new"]), folder / "new.nc")
    half = rankstats.save(cube.sel(model=["new"], task=["t1"]), folder / "half.nc")
    again = rankstats.save(cube.sel(model=["a"]), folder / "again.nc")
    return board, new, half, again


@pytest.mark.parametrize(
    ("which", "extra", "status", "said"),
    [
        ("new", ["--model", "x"], 2, "'x' is not in the submission"),
        ("half", [], 3, "no score on the board's task 't2'"),
        ("again", [], 3, "already on the board"),
        ("new", ["-O", "metric=acc"], 2, "--option is for an importer"),
        ("new", ["--format", "no-such-importer"], 2, "no importer named"),
    ],
)
def test_the_command_exits_with_the_documented_status(saved, capsys, which, extra, status, said):
    board, new, half, again = saved
    given = {"new": new, "half": half, "again": again}[which]
    before = snapshot(board), snapshot(given)
    argv = ["submission", str(board), str(given), "--seed", "0", "--n-resamples", "50", *extra]
    assert cli.main(argv) == status
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (snapshot(board), snapshot(given)) == before


def test_results_need_their_importer(capsys):
    assert cli.main(["submission", str(BOARD), str(NEW), "--seed", "0"]) == 2
    assert "give --format" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["-o", "--json"])
def test_the_command_never_writes_over_its_inputs(saved, tmp_path, capsys, option):
    board, new, _, _ = saved
    for target in (board, new):
        before = snapshot(target)
        argv = ["submission", str(board), str(new), "--seed", "0", option, str(target)]
        assert cli.main(argv) == 2
        assert "is also an input" in capsys.readouterr().err
        assert snapshot(target) == before
    inside = tmp_path / "results"
    inside.mkdir()
    (inside / "x.json").write_text("{}")
    argv = ["submission", str(BOARD), str(NEW), "--format", "lm_eval", option, str(BOARD / "r")]
    assert cli.main(argv) == 2
    assert "lies inside" in capsys.readouterr().err
    assert not (BOARD / "r").exists()


def test_the_paths_are_declared():
    parser = cli.build_parser()
    assert parser.parse_args(["submission", "b.nc", "n.nc"]).run.__module__ == (
        "rankstats.cli.submission"
    )
    commands = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    sub = commands.choices["submission"]
    roles = {a.dest: cli.path_role(a) for a in sub._actions if cli.path_role(a)}
    assert roles["leaderboard"].role == roles["new"].role == cli.INPUT
    assert {dest for dest, role in roles.items() if role.writes} == {"output", "json", "csv"}


# ---- the example workflow --------------------------------------------------------------------


def _workflow_commands() -> list[str]:
    lines = [line.strip() for line in WORKFLOW.read_text().splitlines()]
    return [line for line in lines if line.startswith("rankstats ")]


def test_the_example_workflow_is_a_pull_request_check():
    text = WORKFLOW.read_text()
    try:
        import yaml
    except ImportError:  # PyYAML comes with the docs extra; without it, the structure by text
        assert re.search(r"^on:\n\s+pull_request:", text, re.MULTILINE)
        steps = re.findall(r"^\s+- (?:name|uses): ", text, re.MULTILINE)
        assert len(steps) >= 4
    else:
        workflow = yaml.safe_load(text)
        # PyYAML reads the key `on` as True (YAML 1.1)
        assert "pull_request" in workflow.get("on", workflow.get(True))
        steps = next(iter(workflow["jobs"].values()))["steps"]
        runs = "\n".join(step.get("run", "") for step in steps)
        assert "pip install" in runs and "rankstats submission" in runs
        assert "gh pr comment" in runs and "--body-file report.md" in runs
        assert "GITHUB_STEP_SUMMARY" in runs
    page = (ROOT / "docs/submission.md").read_text()
    assert text.strip() in page, "docs/submission.md shows the workflow file as it is"


def test_the_workflow_command_is_listed_and_runs(tmp_path, capsys, monkeypatch):
    listed = tomllib.loads((ROOT / "docs/commands.toml").read_text())["command"]
    entries = {" ".join(entry["shown"].split()): entry for entry in listed}
    commands = _workflow_commands()
    assert commands and all(c.startswith("rankstats submission ") for c in commands)
    for command in commands:
        entry = entries[" ".join(command.split())]
        run = entry.get("run", entry["shown"]).replace("{data}", str(ROOT / "tests/data"))
        monkeypatch.chdir(tmp_path)
        words = run.split()[1:]
        assert cli.main(words) == 0, capsys.readouterr().err
        report = (tmp_path / "report.md").read_text()
        assert report.startswith("**example/model-b**: rank set")
        for section in ("## Rank set", "## Margin over the record", "## Winner's curse"):
            assert section in report
        assert "## What the board can resolve" in report


# ---- simulation against a known truth ------------------------------------------------------


def _null_runs(draws: int, n_resamples: int):
    """Boards of two tasks where the submission is as good as the record (truth 0.625 on the
    mean): how often the margin test rejects, and how often, among the runs where the
    submission leads, its adjusted interval holds its true mean score."""
    rejected, led, covered = 0, 0, 0
    for seed in range(draws):
        rng = np.random.default_rng(1000 + seed)
        truth = {"a": 0.60, "b": 0.45, "new": 0.60}
        records = [
            {
                "model": model,
                "task": task,
                "template": "p",
                "sample": f"{task}{i}",
                "score": float(rng.random() < p + 0.05 * k),
            }
            for model, p in truth.items()
            for k, task in enumerate(("t1", "t2"))
            for i in range(100)
        ]
        cube = rankstats.from_records(records)
        result = check_submission(
            cube.sel(model=["a", "b"]), cube.sel(model=["new"]), n_resamples=n_resamples, seed=seed
        )
        rejected += result.margin.loc[MEAN, "verdict"] != "no detectable difference"
        if result.leads:
            led += 1
            winner = result.winner.iloc[0]
            covered += winner["low"] <= 0.625 <= winner["high"]
    return rejected, led, covered


def test_the_margin_test_keeps_its_level_when_the_submission_ties_the_record():
    rejected, led, covered = _null_runs(24, 100)
    assert rejected <= 4  # binomial(24, 0.05): at most 4 in 99.9% of seeds
    assert led >= 6 and covered >= led - 3


@pytest.mark.slow
def test_the_margin_test_and_the_adjusted_interval_by_simulation():
    """The figures docs/submission.md quotes (400 boards, 500 resamples each)."""
    rejected, led, covered = _null_runs(400, 500)
    assert rejected / 400 <= 0.075
    assert covered / led >= 0.91
