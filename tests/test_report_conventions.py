"""The report's conventions: stated per statistic in every output, applied when given.

The paper's conventions are those `rankstats reproduce mizrahi2024` finds
(``rankstats.reproduce.mizrahi2024.paper_conventions``): with them the report
gives the paper's printed numbers (AvgP of rhyming_word: "0.17 and 0.15",
Section 5 of Mizrahi et al. 2024; Kendall's W: the values Table 3's
reproduction reports), and with the standard ones what it gave before.
"""

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats import datasets, render
from rankstats.cli import main
from rankstats.errors import OptionError
from rankstats.reproduce._compare import agrees

pytestmark = pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")

#: paper_conventions() as the reproduction finds it (checked against it in the slow test).
PAPER = {
    "kendall_w": {"templates": "valid", "ties": "min", "tie_correction": False},
    "friedman": {"templates": "all", "orientation": "blocks=models", "tie_correction": True},
    "metric_ranks": {"templates": "valid", "ties": "min"},
}
RHYME = {"task": "rhyming_word", "model": ["falcon-7b-instruct", "vicuna-13b"]}


def small_cube():
    """Two tasks, four models, tied scores, template p3 marked invalid and lacking model d."""
    rows = []
    for t, base in (("t1", 0.0), ("t2", 0.1)):
        for m, scores in {
            "a": [0.9, 0.5, 0.5, 0.2],
            "b": [0.5, 0.5, 0.6, 0.9],
            "c": [0.5, 0.4, 0.6, 0.3],
            "d": [0.1, 0.4, 0.2, None],
        }.items():
            rows += [
                {
                    "model": m,
                    "task": t,
                    "template": f"p{k}",
                    "score": s + base,
                    "template_valid": k != 3,
                }
                for k, s in enumerate(scores)
                if s is not None
            ]
    return rankstats.from_records(rows, template_attrs=("template_valid",))


@pytest.fixture(scope="module")
def cube():
    return small_cube()


@pytest.fixture(scope="module")
def mizrahi_part():
    # W and the metrics are per task: two tasks give the same numbers as the whole cube
    return datasets.load("mizrahi2024").sel(task=["rhyming_word", "word_before"])


def test_standard_is_the_default_and_today_s_report(cube):
    default = rankstats.report(cube, n_resamples=0)
    for given in ("standard", {}, {"kendall_w": {}, "name": "standard"}):
        xr.testing.assert_identical(
            rankstats.report(cube, n_resamples=0, conventions=given), default
        )
    assert {
        "conventions": "standard",
        "templates": "all",
        "ties": "average",
        "tie_correction": 1,
    }.items() <= default.attrs.items()
    scores = rankstats.template_scores(cube)
    w = rankstats.kendall_w(scores, nan_policy="omit")
    xr.testing.assert_equal(default.w, w.statistic)
    friedman = rankstats.friedman(scores, nan_policy="omit")
    xr.testing.assert_equal(default.friedman_template_pvalue, friedman.pvalue)
    avgp = rankstats.prompt_metrics(scores, nan_policy="omit").avgp
    xr.testing.assert_equal(default.metric_value.sel(metric="avgp", drop=True), avgp)
    ranks = rankstats.rank(avgp, "model")
    xr.testing.assert_equal(default.metric_rank.sel(metric="avgp", drop=True), ranks)
    assert "stability_avgp" not in rankstats.report(cube, n_resamples=20, seed=0)


def test_a_mapping_is_applied_to_each_statistic(cube):
    analysis = rankstats.report(cube, n_resamples=0, conventions=PAPER)
    scores = rankstats.template_scores(cube)
    valid = scores.where(cube.template_valid)
    w = rankstats.kendall_w(valid, ties="min", tie_correction=False, nan_policy="omit")
    xr.testing.assert_equal(analysis.w, w.statistic)
    assert analysis.w_n_templates.values.tolist() == [3, 3]  # p3 is invalid, not incomplete
    friedman = rankstats.friedman(scores, nan_policy="omit")
    xr.testing.assert_equal(analysis.friedman_template_statistic, friedman.statistic)
    metrics = rankstats.prompt_metrics(scores, valid=True, nan_policy="omit")
    xr.testing.assert_equal(analysis.metric_value.sel(metric="maxp", drop=True), metrics.maxp)
    ranks = rankstats.rank(metrics.maxp, "model", ties="min")
    xr.testing.assert_equal(analysis.metric_rank.sel(metric="maxp", drop=True), ranks)
    # b and c tie on MaxP in t1 over the valid templates: min ranks both second
    assert analysis.metric_rank.sel(task="t1", metric="maxp").values.tolist()[:3] == [1, 2, 2]
    average = ranks.groupby(xr.DataArray(["all", "all"], dims="task", name="benchmark")).mean()
    np.testing.assert_array_equal(
        analysis.average_rank.sel(metric="maxp").values,
        average.transpose(*analysis.average_rank.sel(metric="maxp").dims).values,
    )
    assert {
        "conventions": "custom",
        "templates": "per statistic",
        "ties": "per statistic",
        "tie_correction": "per statistic",
    }.items() <= analysis.attrs.items()
    row = analysis[["drop_section", "drop_what", "drop_which", "drop_why"]].to_dataframe()
    invalid = row[row.drop_why.str.endswith("(conventions: valid templates only)")]
    assert set(invalid.drop_section) == {"agreement", "metrics"}
    assert set(invalid.drop_which) == {"p3"}
    assert "left out of W (conventions: valid templates only)" in invalid.drop_why.iloc[0]


def test_the_stability_section_keeps_its_own_avgp_under_other_metric_conventions(cube):
    analysis = rankstats.report(cube, n_resamples=30, seed=0, conventions=PAPER)
    standard = rankstats.report(cube, n_resamples=30, seed=0)
    xr.testing.assert_equal(
        analysis.stability_avgp, standard.metric_value.sel(metric="avgp", drop=True)
    )
    xr.testing.assert_equal(
        analysis.stability_rank, standard.metric_rank.sel(metric="avgp", drop=True)
    )
    table = {s.key: s.table for s in render.sections(analysis)}["stability"]
    ours = {s.key: s.table for s in render.sections(standard)}["stability"]
    pd.testing.assert_series_equal(table["AvgP"], ours["AvgP"])


@pytest.mark.parametrize(
    ("conventions", "message"),
    [
        ("paper", "conventions='paper' is not a set of conventions"),
        ({"kendall_tau": {}}, "no statistic 'kendall_tau'"),
        ({"kendall_w": {"ties": "mean"}}, "kendall_w.ties='mean' is not allowed"),
        ({"metric_ranks": {"tie_correction": False}}, "'metric_ranks' takes no option"),
        ({"kendall_w": {"orientation": "blocks=models"}}, "'kendall_w' takes no option"),
        ({"friedman": {"orientation": "rows"}}, "friedman.orientation='rows' is not allowed"),
        ({"kendall_w": "valid"}, "must be a mapping of options"),
    ],
)
def test_bad_conventions_are_refused_before_any_work(conventions, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rankstats.report(datasets.load("mizrahi2024"), conventions=conventions)


def test_valid_templates_need_template_valid(cube):
    with pytest.raises(
        OptionError,
        match=r"kendall_w\.templates='valid' needs the cube's "
        r"template_valid",
    ):
        rankstats.report(cube.drop_vars("template_valid"), n_resamples=0, conventions=PAPER)


def test_every_output_states_the_conventions_per_statistic(cube, tmp_path):
    analysis = rankstats.report(cube, n_resamples=0, conventions={"name": "mine", **PAPER})
    expected = {
        "Kendall's W": ("valid", "min", "off"),
        "Friedman's tests (templates; models)": ("all", "average", "on"),
        "MaxP, AvgP, saturation, CPS and their ranks": ("valid", "min", ""),
    }
    markdown = render.to_markdown(analysis)
    section = markdown.split("## Conventions of each statistic")[1].split("\n## ")[0]
    assert "Under the conventions 'mine'" in section
    for label, (templates, ties, correction) in expected.items():
        assert f"| {label} | " in section
        line = next(line for line in section.splitlines() if line.startswith(f"| {label} |"))
        assert f"| {templates} | {ties} | {correction} |" in line
    assert "| conventions | mine: per statistic" in markdown
    page = render.to_html(analysis)
    assert 'id="statistic_conventions"' in page and "Kendall&#x27;s W" in page
    render.to_csv(analysis, tmp_path)
    table = pd.read_csv(
        tmp_path / "statistic_conventions.csv", index_col="statistic", keep_default_na=False
    )
    for label, values in expected.items():
        assert tuple(table.loc[label, ["templates", "ties", "tie correction"]]) == values
    document = json.loads(render.to_json(analysis))
    variables = document["data_vars"]
    at = document["coords"]["convention"]["data"].index("kendall_w")
    assert [
        variables[f"convention_{name}"]["data"][at]
        for name in ("templates", "ties", "tie_correction")
    ] == ["valid", "min", "off"]
    assert document["attrs"]["conventions"] == "mine"
    path = rankstats.save(cube, tmp_path / "cube.nc")
    conventions = tmp_path / "mine.json"
    conventions.write_text(json.dumps(PAPER))
    assert (
        main(
            [
                "report",
                str(path),
                "--conventions",
                str(conventions),
                "--n-resamples",
                "0",
                "--quiet",
                "--seed",
                "0",
                "--json",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["attrs"]["conventions"] == "mine"
    rows = pd.DataFrame(document["tables"]["statistic_conventions"]).set_index("statistic")
    assert tuple(rows.loc["Kendall's W", ["templates", "ties", "tie correction"]]) == (
        "valid",
        "min",
        "off",
    )


def test_paper_conventions_give_the_printed_rhyming_word_numbers(mizrahi_part):
    paper = rankstats.report(mizrahi_part, n_resamples=0, conventions=PAPER)
    standard = rankstats.report(mizrahi_part, n_resamples=0)
    avgp = paper.metric_value.sel(metric="avgp", **RHYME).values
    maxp = paper.metric_value.sel(metric="maxp", **RHYME).values
    # "their average performances are only 0.17 and 0.15 ... maximum metric (0.74)"
    assert [agrees(p, v) for p, v in zip(["0.17", "0.15"], avgp, strict=True)] == [True, True]
    assert [agrees("0.74", v) for v in maxp] == [True, True]
    # "rank first according to the maximum metric": min ranks share first place
    assert paper.metric_rank.sel(metric="maxp", **RHYME).values.tolist() == [1, 1]
    assert standard.metric_rank.sel(metric="maxp", **RHYME).values.tolist() == [1.5, 1.5]
    # all templates do not give the printed averages
    assert not agrees(
        "0.17",
        float(
            standard.metric_value.sel(metric="avgp", task=RHYME["task"], model=RHYME["model"][0])
        ),
    )
    # Table 3 prints W = .496 for rhyming_word
    assert agrees(".496", float(paper.w.sel(task="rhyming_word")))
    assert not agrees(".496", float(standard.w.sel(task="rhyming_word")))


def test_paper_on_another_cube_is_a_usage_error(cube, tmp_path, capsys):
    path = rankstats.save(cube, tmp_path / "cube.nc")
    assert main(["report", str(path), "--conventions", "paper", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "rankstats: error: --conventions paper: the paper's conventions are those of Mizrahi"
    )
    assert "this cube is not that data" in err[0]
    assert main(["report", str(path), "--conventions", "nothing"]) == 2
    assert "neither 'standard', 'paper' nor a JSON file" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["report", str(path), "--conventions", str(broken)]) == 2
    assert "not a readable JSON file" in capsys.readouterr().err
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"kendall_w": {"ties": "mean"}}))
    assert main(["report", str(path), "--conventions", str(wrong), "--quiet"]) == 2
    assert "kendall_w.ties='mean' is not allowed" in capsys.readouterr().err


@pytest.mark.slow
def test_report_mizrahi2024_with_paper_conventions_on_the_command_line(tmp_path, capsys):
    """The command on the whole data: W as the reproduction reports it, AvgP as printed."""
    from rankstats.reproduce.mizrahi2024 import paper_conventions, table_3_w, table_15_16

    assert {
        key: {k: v for k, v in value.items() if k != "reproduces"}
        for key, value in paper_conventions().items()
    } == PAPER
    documents = {}
    for given in ("paper", "standard"):
        out = tmp_path / f"{given}.json"
        assert (
            main(
                [
                    "report",
                    "mizrahi2024",
                    "--conventions",
                    given,
                    "--n-resamples",
                    "0",
                    "--seed",
                    "0",
                    "--quiet",
                    "--json",
                    str(out),
                ]
            )
            == 0
        )
        documents[given] = json.loads(out.read_text())
    capsys.readouterr()
    cells = table_3_w().cells.droplevel("column")
    for given, column in (("paper", "reproduced"), ("standard", "standard")):
        agreement = pd.DataFrame(documents[given]["tables"]["agreement"]).set_index("task")
        np.testing.assert_allclose(agreement.loc[cells.index, "W"], cells[column], rtol=1e-12)
    metrics = pd.DataFrame(documents["paper"]["tables"]["metrics"]).set_index(["task", "model"])
    rhyme = metrics.loc[[("rhyming_word", m) for m in RHYME["model"]], "AvgP"]
    assert [agrees(p, v) for p, v in zip(["0.17", "0.15"], rhyme, strict=True)] == [True, True]
    # the average ranks are Tables 15 and 16 as the reproduction recomputes them
    ranks = pd.DataFrame(documents["paper"]["tables"]["average_rank"]).set_index(
        ["benchmark", "model"]
    )
    names = {"average": "AvgP", "maximum": "MaxP", "saturation": "Sat", "combined": "CPS"}
    for table, benchmark in (("table_15", "LMentry"), ("table_16", "BBH")):
        reproduced = table_15_16(table).cells["reproduced"]
        for (model, column), value in reproduced.items():
            assert ranks.loc[(benchmark, model), names[column]] == pytest.approx(value), (
                table,
                model,
                column,
            )
    statistics = pd.DataFrame(documents["paper"]["tables"]["statistic_conventions"])
    assert statistics.loc[0, "note"] == "reproduces 22 of 25 published values"
    assert documents["paper"]["attrs"]["conventions"] == "paper"
    assert documents["standard"]["attrs"]["conventions"] == "standard"
