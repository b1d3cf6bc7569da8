"""Every section of the report says what it left out, how many, which and why.

Hand-built cubes with one defect each (a template some model lacks, a task
with one model, no original template, an extra dimension, attributes of the
wrong kind) and the report's Dataset, markdown, HTML, JSON and CSV.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats import render, stability
from rankstats.cli import main
from rankstats.errors import CubeError, DimensionError

pytestmark = pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")


def cube_of(rows, **options):
    return rankstats.from_records(
        [{"model": m, "task": t, "template": p, "score": s, **extra} for m, t, p, s, extra in rows],
        **options,
    )


def holes_cube():
    """t1: p3 lacks model c; t2: model a alone; t3: complete."""
    rows = []
    for model, scores in {
        "a": [0.9, 0.8, 0.7, 0.6],
        "b": [0.5, 0.6, 0.55, 0.4],
        "c": [0.1, 0.3, 0.2, None],
    }.items():
        rows += [(model, "t1", f"p{k}", s, {}) for k, s in enumerate(scores) if s is not None]
    rows += [("a", "t2", f"q{k}", 0.5 + 0.1 * k, {}) for k in range(3)]
    for model, scores in {"a": [0.9, 0.7], "b": [0.4, 0.5], "c": [0.2, 0.1]}.items():
        rows += [(model, "t3", f"r{k}", s, {}) for k, s in enumerate(scores)]
    return cube_of(rows)


def dropped(analysis, section=None) -> pd.DataFrame:
    frame = analysis[
        [f"drop_{c}" for c in ("section", "task", "model", "what", "count", "which", "why")]
    ].to_dataframe()
    frame.columns = [c.removeprefix("drop_") for c in frame.columns]
    return frame if section is None else frame[frame["section"] == section]


def one(frame, **where) -> pd.Series:
    for column, value in where.items():
        frame = frame[frame[column] == value]
    assert len(frame) == 1, frame
    return frame.iloc[0]


@pytest.fixture(scope="module")
def holes():
    return holes_cube()


@pytest.fixture(scope="module")
def analysis(holes):
    return rankstats.report(holes, n_resamples=30, seed=0)


def test_listwise_deletion_is_counted_and_named(holes, analysis):
    row = one(dropped(analysis, "agreement"), task="t1", what="templates")
    assert (row["count"], row["which"]) == (1, "p3")
    assert "listwise deletion" in row["why"] and "W and Friedman (models)" in row["why"]
    # W over the three complete templates, which kendall_w itself gives NaN for
    assert int(analysis.w_n_templates.sel(task="t1")) == 3
    complete = holes.sel(task="t1").where(holes.template_id.sel(task="t1") != "p3")
    assert float(analysis.w.sel(task="t1")) == pytest.approx(
        float(rankstats.kendall_w(complete.score, nan_policy="omit").statistic)
    )
    assert np.isnan(float(rankstats.kendall_w(holes).statistic.sel(task="t1")))
    # Friedman (templates) leaves the model out instead
    row = one(dropped(analysis, "agreement"), task="t1", what="models")
    assert (row["count"], row["which"]) == (1, "c")
    assert int(analysis.friedman_template_n_models.sel(task="t1")) == 2
    row = one(dropped(analysis, "metrics"), task="t1", model="c")
    assert row["which"] == "p3" and "other 3 of the task's 4 templates" in row["why"]
    row = one(dropped(analysis, "templates_needed"), task="t1", what="templates")
    assert row["which"] == "p3"
    assert "pairwise deletion" in one(dropped(analysis, "pairs"), task="t1")["why"]


def test_too_few_models_and_absent_models(analysis):
    row = one(dropped(analysis, "all"), task="t2")
    assert (row["what"], row["count"], row["which"]) == ("models", 2, "b, c")
    assert row["why"].startswith("absent")
    assert "fewer than two models" in one(dropped(analysis, "agreement"), task="t2")["why"]
    assert "fewer than two models" in one(dropped(analysis, "pairs"), task="t2")["why"]
    for model in ("b", "c"):
        row = one(dropped(analysis, "average_rank"), model=model)
        assert row["which"] == "t2" and "other 2 of 3 tasks" in row["why"]


def test_markdown_html_json_csv_say_what_was_left_out(analysis, tmp_path):
    markdown = render.to_markdown(analysis)
    agreement = markdown.split("## Agreement across templates")[1].split("\n## ")[0]
    assert (
        "Left out: task t1: 1 template (p3) — lacking a score for some model present on the task"
    ) in agreement
    assert "Task t2: fewer than two models on the task" in agreement
    assert "## What the analyses left out, and why" in markdown
    # markdown and HTML group the log by reason; the CSV and JSON keep every row
    assert (
        "| lacking a score for some model present on the task: left out of W and Friedman "
        "(models) by listwise deletion (nan_policy='omit') | templates | agreement | t1 | – | 1 "
        "| p3 |"
    ) in markdown
    assert markdown.index("## Agreement across templates") < markdown.index(
        "## What the analyses left out, and why"
    )
    assert "Left out of every section: task t2: 2 models (b, c) — absent" in markdown
    page = render.to_html(analysis)
    assert "1 template (p3)" in page and 'id="dropped"' in page
    document = json.loads(render.to_json(analysis))
    rows = document["data_vars"]
    position = rows["drop_which"]["data"].index("p3")
    assert rows["drop_section"]["data"][position] == "agreement"
    assert rows["drop_count"]["data"][position] == 1
    written = render.to_csv(analysis, tmp_path / "tables")
    assert {p.name for p in written} >= {"conventions.csv", "dropped.csv"}
    table = pd.read_csv(tmp_path / "tables" / "dropped.csv", keep_default_na=False)
    row = one(table, section="agreement", task="t1", **{"left out": "templates"})
    assert (row["count"], row["which"]) == (1, "p3")


def test_conventions_in_every_output(analysis, tmp_path):
    assert {
        "templates": "all",
        "ties": "average",
        "tie_correction": 1,
        "nan_policy": "omit",
    }.items() <= analysis.attrs.items()
    markdown = render.to_markdown(analysis)
    assert "| ties | average (tied models share the mean of their ranks) |" in markdown
    assert "| missing values | nan_policy='omit': W, Friedman (models)" in markdown
    assert json.loads(render.to_json(analysis))["attrs"]["tie_correction"] == 1
    render.to_csv(analysis, tmp_path)
    conventions = pd.read_csv(tmp_path / "conventions.csv", index_col="setting")
    assert conventions.loc["tie correction", "value"] == "on (W, both Friedman tests)"


def test_propagate_says_what_became_nan(holes):
    analysis = rankstats.report(holes, n_resamples=0, nan_policy="propagate")
    row = one(dropped(analysis, "agreement"), task="t1", what="templates")
    assert "NaN (nan_policy='propagate'" in row["why"]
    assert np.isnan(float(analysis.w.sel(task="t1")))
    assert "are NaN (nan_policy='propagate')" in one(dropped(analysis, "metrics"))["why"]


def test_a_complete_cube_leaves_nothing_out(tmp_path):
    cube = cube_of(
        [
            (m, "t", p, s, {})
            for m, row in {"a": [0.9, 0.7], "b": [0.4, 0.5], "c": [0.2, 0.1]}.items()
            for p, s in zip(["x", "y"], row, strict=True)
        ]
    )
    cube = cube.assign_coords(template_is_original=(("task", "template"), [[True, False]]))
    analysis = rankstats.report(cube, n_resamples=0)
    table = dropped(analysis)
    # divergence needs two paraphrases; the sections the cube cannot have are named
    assert set(table["what"]) == {"task", "section"}
    assert one(table, section="divergence")["why"].startswith("fewer than two paraphrases")
    assert "template_valid" in one(table, section="filtering")["why"]
    complete = rankstats.report(
        cube.drop_vars("template_is_original").assign_coords(
            template_valid=(("task", "template"), [[True, True]])
        ),
        n_resamples=0,
    )
    assert set(dropped(complete)["section"]) == {"divergence", "template_effect", "edits"}


def test_tasks_without_an_original_template():
    rows = [
        (m, t, p, s, {"template_is_original": p == "o"})
        for t, templates in (("t", ["o", "x", "y"]), ("u", ["x", "y", "z"]))
        for m, base in (("a", 0.8), ("b", 0.5), ("c", 0.2))
        for k, p in enumerate(templates)
        for s in [base + 0.05 * k]
    ]
    analysis = rankstats.report(cube_of(rows), n_resamples=0)
    row = one(dropped(analysis, "divergence"), task="u")
    assert row["what"] == "task" and "no template with a score is marked original" in row["why"]
    assert analysis.divergence.sel(task="u").isnull().all()
    assert analysis.divergence.sel(task="t").notnull().all()
    markdown = render.to_markdown(analysis)
    section = markdown.split("## Divergence of the original templates")[1].split("\n## ")[0]
    assert "Task u: no template with a score is marked original" in section


def test_an_extra_dimension_is_refused_at_once(tmp_path, capsys):
    cube = holes_cube()
    stacked = xr.concat([cube, cube], dim="run")
    rankstats.validate(stacked)  # allowed in a cube, and carried along by the statistics
    with pytest.raises(DimensionError, match=r"extra dimension\(s\) 'run' \(size 2\)"):
        rankstats.report(stacked)
    path = rankstats.save(stacked, tmp_path / "stacked.nc")
    assert main(["report", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        "rankstats: error: report: the cube's scores have the extra dimension(s) 'run'"
    )
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def binary_records(models=("a", "b", "c"), tasks=("t1", "t2")):
    rng = np.random.default_rng(0)
    return [
        {
            "model": m,
            "task": t,
            "template": f"p{k}",
            "sample": s,
            "score": float(rng.random() < 0.3 + 0.2 * i),
        }
        for i, m in enumerate(models)
        for t in tasks
        for k in range(3)
        for s in range(20)
    ]


def binary_cube():
    return rankstats.from_records(binary_records())


def test_text_false_is_lower_is_better():
    cube = holes_cube().sel(task=["t3"])
    cube.attrs["higher_is_better"] = "false"
    analysis = rankstats.report(cube, n_resamples=20, seed=0)
    assert analysis.attrs["higher_is_better"] == 0
    # a scores highest: with lower scores better it ranks last
    assert float(analysis.metric_rank.sel(task="t3", model="a", metric="avgp")) == 3.0
    board = stability.leaderboard(cube, n_resamples=20, over="templates", seed=0)
    assert float(board["rank"].sel(task="t3", model="a")) == 3.0
    cube.attrs["higher_is_better"] = "maybe"
    with pytest.raises(CubeError, match="attribute higher_is_better='maybe' is not a boolean"):
        rankstats.report(cube, n_resamples=0)


@pytest.mark.parametrize("value", [["binary"], np.array(["binary"])])
def test_score_kind_that_is_an_array_is_named(value):
    cube = binary_cube()
    cube.attrs["score_kind"] = value
    for call in (
        lambda: rankstats.validate(cube),
        lambda: rankstats.report(cube),
        lambda: stability.leaderboard(cube, n_resamples=20, seed=0),
    ):
        with pytest.raises(CubeError, match=r"attribute score_kind=.*binary.* is not one of"):
            call()


def test_item_level_tests_skip_tasks_with_one_model():
    cube = rankstats.from_records(binary_records() + binary_records(("a",), ("t3",)))
    analysis = rankstats.report(cube, n_resamples=0)
    assert analysis.leader.sel(task="t3").item() == "a"
    assert analysis.runner_up.sel(task="t1").item() == "b"
    assert analysis.runner_up.sel(task="t3").item() == ""  # not a compared with itself
    assert int(analysis.leaders_templates_tested.sel(task="t3")) == 0
    row = one(dropped(analysis, "leaders"), task="t3")
    assert "fewer than two models with an AvgP" in row["why"]


def test_item_level_tests_name_the_samples_and_templates_left_out():
    cube = binary_cube().copy(deep=True)
    cube["score"].loc[{"model": "b", "task": "t1", "template": 0, "sample": [3, 4]}] = np.nan
    cube["score"].loc[{"model": "c", "task": "t2", "template": 2}] = np.nan  # the leader
    analysis = rankstats.report(cube, n_resamples=0)
    row = one(dropped(analysis, "template_effect"), task="t1", model="b")
    assert (row["what"], row["count"], row["which"]) == ("samples", 2, "3, 4")
    row = one(dropped(analysis, "leaders"), task="t2")
    assert (row["what"], row["which"]) == ("templates", "p2")
    assert "has no score on them: not tested" in row["why"]


def test_non_binary_cubes_say_why_there_are_no_item_level_tests(analysis):
    row = one(dropped(analysis, "template_effect"))
    assert row["what"] == "section"
    assert "score_kind is 'proportion', not 'binary'" in row["why"]


def test_report_command_writes_the_drops(holes, tmp_path, capsys):
    path = rankstats.save(holes, tmp_path / "holes.nc")
    assert (
        main(
            [
                "report",
                str(path),
                "--n-resamples",
                "0",
                "--json",
                str(tmp_path / "r.json"),
                "--csv",
                str(tmp_path / "csv"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    # beside the files, the terminal shows the summary only; the files hold the rest
    assert "## Summary" in out and "## Agreement across templates" not in out
    assert f"The whole report: {tmp_path / 'r.json'}, {tmp_path / 'csv'}" in out
    assert main(["report", str(path), "--n-resamples", "0"]) == 0
    assert "Left out: task t1: 1 template (p3)" in capsys.readouterr().out
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["attrs"]["ties"] == "average"
    row = one(
        pd.DataFrame(document["tables"]["dropped"]),
        section="agreement",
        task="t1",
        **{"left out": "templates"},
    )
    assert (row["count"], row["which"]) == (1, "p3")
    assert {row["setting"] for row in document["tables"]["conventions"]} >= {
        "templates",
        "ties",
        "tie correction",
        "missing values",
    }
    assert (tmp_path / "csv" / "dropped.csv").read_text().count("p3") >= 3


def test_stability_command_says_why_a_model_has_no_rank(tmp_path, capsys):
    cube = holes_cube()
    path = rankstats.save(cube, tmp_path / "holes.nc")
    assert (
        main(
            [
                "stability",
                str(path),
                "--n-resamples",
                "30",
                "--seed",
                "0",
                "--over",
                "templates",
                "--json",
                str(tmp_path / "board.json"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    t1 = out.split("## t1")[1].split("## t2")[0]
    assert "Not ranked: c: no score on 1 template (p3), so its score is NaN" in t1
    assert "Not ranked: b, c: absent: no score on any template of the task" in out
    left_out = pd.DataFrame(json.loads((tmp_path / "board.json").read_text())["tables"]["left_out"])
    assert set(zip(left_out["task"], left_out["model"], strict=True)) == {
        ("t1", "c"),
        ("t2", "b"),
        ("t2", "c"),
    }


def test_stability_command_refuses_when_nothing_is_ranked(tmp_path, capsys):
    cube = cube_of(
        [
            (m, "t", p, s, {})
            for m, row in {"a": [0.9, None], "b": [None, 0.5]}.items()
            for p, s in zip(["x", "y"], row, strict=True)
            if s is not None
        ]
    )
    path = rankstats.save(cube, tmp_path / "sparse.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(["stability", str(path), "--n-resamples", "20", "--seed", "0", "--quiet"])
    assert status == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(
        "rankstats: error: no task has a ranked model: t, a: no score on 1 template (y)"
    )


def every_format(analysis, tmp_path, titles: dict) -> dict:
    """Per section key of ``titles``: its note in markdown and HTML, its dropped rows of the
    CSV and JSON outputs (each output rendered once)."""
    markdown, page = render.to_markdown(analysis), render.to_html(analysis)
    render.to_csv(analysis, tmp_path / "csv")
    csv = pd.read_csv(tmp_path / "csv" / "dropped.csv", keep_default_na=False)
    document = json.loads(render.to_json(analysis))["data_vars"]
    rows = pd.DataFrame(
        {
            name.removeprefix("drop_"): document[name]["data"]
            for name in document
            if name.startswith("drop_")
        }
    )
    out = {}
    for section, title in titles.items():
        assert f"## {title}" in markdown, title
        out[section] = {
            "markdown": markdown.split(f"## {title}")[1].split("\n## ")[0],
            "html": page.split(f'id="{section}"')[1].split("<h2")[0],
            "csv": csv[csv["section"] == section],
            "json": rows[rows["section"] == section],
        }
    return out


def edits_cube():
    """Binary, with wording. t1: p0-p2 one token apart, p3 scored without wording; b lacks
    p1; a lacks samples 3, 4 under p2; c answers p0 on samples 0-9 only and p1 on 10-19
    only. t2: one worded template."""
    rng = np.random.default_rng(5)
    texts = {"p0": "Use {x}.", "p1": "Use {x}:", "p2": "Use {x}!", "p3": ""}
    records = []
    for m, accuracy in {"a": 0.8, "b": 0.5, "c": 0.3}.items():
        for p, text in texts.items():
            for s in range(20):
                if (m, p) == ("b", "p1") or (m, p, s) in {("a", "p2", 3), ("a", "p2", 4)}:
                    continue
                if m == "c" and ((p == "p0" and s >= 10) or (p == "p1" and s < 10)):
                    continue
                records.append(
                    {
                        "model": m,
                        "task": "t1",
                        "template": p,
                        "sample": s,
                        "template_text": text,
                        "score": float(rng.random() < accuracy),
                    }
                )
        for p, text in {"q0": "Name {y}.", "q1": ""}.items():
            records += [
                {
                    "model": m,
                    "task": "t2",
                    "template": p,
                    "sample": s,
                    "template_text": text,
                    "score": float(rng.random() < accuracy),
                }
                for s in range(20)
            ]
    return rankstats.from_records(records, score_kind="binary", template_attrs=("template_text",))


def test_minimal_edits_say_what_they_left_out_in_every_format(tmp_path):
    cube = edits_cube()
    analysis = rankstats.report(cube, n_resamples=0)
    rows = dropped(analysis, "edits")
    row = one(rows, task="t1", what="templates")
    assert (row["count"], row["which"]) == (1, "p3") and "no wording" in row["why"]
    row = one(rows, task="t2", what="task")
    assert "fewer than two templates with a score and a wording" in row["why"]
    assert one(rows, task="t2", what="templates")["which"] == "q1"
    row = one(rows, task="t1", model="b", what="template pairs")
    assert (row["count"], row["which"]) == (2, "p0 ~ p1, p1 ~ p2")
    assert "no score from this model under one of the two templates" in row["why"]
    row = one(rows, task="t1", model="c", what="template pairs")
    assert (row["which"], row["why"]) == (
        "p0 ~ p1",
        "no sample scored under both templates: not tested",
    )
    row = one(rows, task="t1", model="a", what="samples")
    assert (row["count"], row["which"]) == (2, "3, 4") and "pairwise deletion" in row["why"]
    row = one(rows, task="t1", model="c", what="samples")
    assert row["count"] == 20  # 10-19 lack p0 against p2, 0-9 lack p1 against p2
    # the shown pairs carry McNemar's own count
    edits = rankstats.minimal_edits(cube)
    test = rankstats.mcnemar(
        cube.score.isel(task=0, template=0).reset_coords(drop=True).sel(model="a"),
        cube.score.isel(task=0, template=2).reset_coords(drop=True).sel(model="a"),
        nan_policy="omit",
    )
    assert int(test.n_dropped) == 2
    pair = int(np.flatnonzero((edits.template.values == 0) & (edits.template_b.values == 2))[0])
    assert int(edits.n_dropped.sel(model="a").values[pair]) == 2
    shown = pd.DataFrame(
        {
            name: analysis[f"edit_{name}"].values
            for name in ("model", "template", "template_b", "n_dropped")
        }
    )
    mine = shown[(shown.model == "a") & (shown.template == "p0") & (shown.template_b == "p2")]
    assert mine["n_dropped"].tolist() == [2]
    out = every_format(
        analysis, tmp_path, {"edits": "Minimal template edits: the largest effects"}
    )["edits"]
    for form in ("markdown", "html"):
        assert "task t1: 1 template (p3)" in out[form]
        assert "task t1, model b: 2 template pairs (p0 ~ p1, p1 ~ p2)" in out[form]
        assert "task t1, model a: 2 samples (3, 4)" in out[form]
        assert "samples left out" in out[form]
    for form in ("csv", "json"):
        assert set(out[form]["which"]) >= {"p3", "p0 ~ p1, p1 ~ p2", "3, 4", "t2"}
    table = pd.read_csv(tmp_path / "csv" / "edits.csv")
    assert "samples left out" in table.columns and table["samples left out"].max() >= 2
    path = rankstats.save(cube, tmp_path / "edits.nc")
    assert (
        main(
            [
                "report",
                str(path),
                "--n-resamples",
                "0",
                "--quiet",
                "--json",
                str(tmp_path / "edits.json"),
            ]
        )
        == 0
    )
    tables = json.loads((tmp_path / "edits.json").read_text())["tables"]
    rows = pd.DataFrame(tables["dropped"])
    row = one(rows, section="edits", task="t1", model="a", **{"left out": "samples"})
    assert (row["count"], row["which"]) == (2, "3, 4")
    assert "samples left out" in tables["edits"][0]


def test_a_cube_without_wording_names_the_edits_section(holes):
    analysis = rankstats.report(holes, n_resamples=0)
    row = one(dropped(analysis, "edits"))
    assert row["what"] == "section" and "no template_text" in row["why"]


def verbalizer_cube():
    """Direct natural and unnatural, a CoT unnatural and an ungrouped template; m2 lacks the
    natural one, m1 sample 3 under it and sample 5 under CoT; m3 has no family."""
    rng = np.random.default_rng(6)
    forms = {
        "nat": ("natural", "golden", "direct"),
        "unnat": ("unnatural", "flipped golden", "direct"),
        "cot": ("unnatural", "flipped golden", "cot"),
        "other": ("", "", "direct"),
    }
    records = []
    for m, family, size in (("m1", "F", 1.0), ("m2", "F", 2.0), ("m3", "", 1.0)):
        for p, (group, name, prompting) in forms.items():
            for s in range(10):
                if (m, p) == ("m2", "nat") or (m, p, s) in {("m1", "nat", 3), ("m1", "cot", 5)}:
                    continue
                records.append(
                    {
                        "model": m,
                        "task": "t",
                        "template": p,
                        "sample": s,
                        "verbalizer_group": group,
                        "verbalizer": name,
                        "prompting": prompting,
                        "family": family,
                        "parameters": size,
                        "score": float(rng.random() < 0.6),
                    }
                )
    return rankstats.from_records(
        records,
        score_kind="binary",
        model_attrs=("family", "parameters"),
        template_attrs=("verbalizer_group", "verbalizer", "prompting"),
    )


def test_verbalizer_sections_say_what_they_left_out_in_every_format(tmp_path):
    analysis = rankstats.report(verbalizer_cube(), n_resamples=0)
    groups = dropped(analysis, "verbalizer_groups")
    row = one(groups, what="templates", model="")
    assert (row["which"], row["why"].startswith("no verbalizer group")) == ("other", True)
    row = one(groups, model="m2")
    assert (row["which"], row["count"]) == ("nat", 1)
    assert "accuracies per group, verbalizer and task are over its other" in row["why"]
    row = one(dropped(analysis, "verbalizer_chance"), model="m1")
    assert (row["what"], row["which"]) == ("samples", "3")
    row = one(dropped(analysis, "verbalizer_cot"), model="m1")
    assert (row["what"], row["which"]) == ("samples", "5")
    assert "pairwise deletion" in row["why"]
    assert int(analysis.cot_n_items_dropped.sel(model="m1")) == 1
    row = one(dropped(analysis, "verbalizer_shapes"))
    assert (row["what"], row["which"]) == ("models", "m3")
    titles = {
        "verbalizer_groups": "Instruction following: accuracy per verbalizer group",
        "verbalizer_chance": "Against random guessing",
        "verbalizer_cot": "Direct against chain-of-thought prompting",
        "verbalizer_shapes": "Scaling within each model family",
    }
    expected = {
        "verbalizer_groups": "task t, model m2: 1 template (nat)",
        "verbalizer_chance": "task t, model m1: 1 sample (3)",
        "verbalizer_cot": "task t, model m1: 1 sample (5)",
        "verbalizer_shapes": "1 model (m3)",
    }
    for section, out in every_format(analysis, tmp_path, titles).items():
        for form in ("markdown", "html"):
            assert expected[section] in out[form], (section, form)
        for form in ("csv", "json"):
            assert len(out[form]) >= 1, (section, form)
    cot = pd.read_csv(tmp_path / "csv" / "verbalizer_cot.csv", index_col="model")
    assert cot.loc["m1", "items left out"] == 1


def test_verbalizer_sections_the_cube_cannot_have_are_named():
    cube = verbalizer_cube()
    plain = cube.mean("sample").drop_vars(["family", "parameters"])
    plain = plain.where(plain.prompting != "cot", drop=True)
    analysis = rankstats.report(plain, n_resamples=0)
    for section, why in (
        ("verbalizer_chance", "no sample dimension"),
        ("verbalizer_cot", "no chain-of-thought templates"),
        ("verbalizer_shapes", "no model coordinates 'family' and 'parameters'"),
    ):
        row = one(dropped(analysis, section))
        assert row["what"] == "section" and why in row["why"]
