"""McNemar's pairwise deletion is counted: ``n_dropped`` per pair, and in the report.

The oracle is statsmodels' McNemar test on the complete pairs
(``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`` and
``exact=False, correction=...``); the count is checked against the samples
observed on one side only, computed by hand.
"""

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats import render
from rankstats.cli import main

statsmodels = pytest.importorskip("statsmodels.stats.contingency_tables")

pytestmark = pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")


def holed_pairs(rng, n_pairs=40, n_samples=30, missing=0.2):
    """Binary x and y (pair, sample) with missing values on either side."""
    x = (rng.random((n_pairs, n_samples)) < 0.6).astype(float)
    y = (rng.random((n_pairs, n_samples)) < 0.4).astype(float)
    x[rng.random(x.shape) < missing] = np.nan
    y[rng.random(y.shape) < missing] = np.nan
    return x, y


def oracle(x, y, method):
    """statsmodels on the samples both sides score."""
    both = ~np.isnan(x) & ~np.isnan(y)
    a, b = x[both].astype(bool), y[both].astype(bool)
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    exact = method == "exact"
    return statsmodels.mcnemar(table, exact=exact, correction=method == "chi2_cc")


@pytest.mark.parametrize("method", ["exact", "chi2", "chi2_cc"])
def test_mcnemar_omit_equals_statsmodels_on_the_complete_pairs(method):
    x, y = holed_pairs(np.random.default_rng(7))
    result = rankstats.mcnemar(x, y, method=method, nan_policy="omit")
    for k in range(x.shape[0]):
        expected = oracle(x[k], y[k], method)
        assert float(result.pvalue[k]) == pytest.approx(expected.pvalue, rel=1e-10)
        assert float(result.statistic[k]) == pytest.approx(expected.statistic, rel=1e-10)
    one_side = np.isnan(x) ^ np.isnan(y)
    both = ~np.isnan(x) & ~np.isnan(y)
    np.testing.assert_array_equal(result.n_dropped, one_side.sum(-1))
    np.testing.assert_array_equal(result.n_samples, both.sum(-1))
    assert one_side.sum() > 0  # the draw does drop samples


def test_propagate_counts_the_same_samples_and_is_nan_where_it_drops():
    x, y = holed_pairs(np.random.default_rng(8), missing=0.03)
    omitted = rankstats.mcnemar(x, y, nan_policy="omit")
    propagated = rankstats.mcnemar(x, y, nan_policy="propagate")
    np.testing.assert_array_equal(propagated.n_dropped, omitted.n_dropped)
    dropping = np.asarray(omitted.n_dropped) > 0
    assert dropping.any() and (~dropping).any()
    assert np.isnan(np.asarray(propagated.pvalue)[dropping]).all()
    assert not np.isnan(np.asarray(propagated.pvalue)[~dropping]).any()


def test_labelled_result_has_the_count_variable():
    x, y = holed_pairs(np.random.default_rng(9), n_pairs=3)
    dims = ("template", "sample")
    result = rankstats.mcnemar(
        xr.DataArray(x, dims=dims), xr.DataArray(y, dims=dims), nan_policy="omit"
    )
    assert result["n_dropped"].dims == ("template",)
    np.testing.assert_array_equal(result["n_dropped"].values, (np.isnan(x) ^ np.isnan(y)).sum(-1))
    for function in (rankstats.mcnemar, rankstats.pairwise_mcnemar):
        assert "``n_dropped``" in function.__doc__


def test_pairwise_mcnemar_counts_per_pair_and_matches_statsmodels():
    rng = np.random.default_rng(10)
    right = (rng.random((5, 40)) < np.linspace(0.3, 0.8, 5)[:, None]).astype(float)
    right[rng.random(right.shape) < 0.15] = np.nan
    right[:, 5] = np.nan  # padding: a sample no model has is structure, not a drop
    right[4] = np.nan  # an absent model: its pairs drop nothing, they are untested
    result = rankstats.pairwise_mcnemar(right, nan_policy="omit", p_adjust="none")
    present = ~np.isnan(right).all(0)
    for i in range(4):
        for j in range(4):
            lacking = present & (np.isnan(right[i]) | np.isnan(right[j]))
            assert int(result.n_dropped[i, j]) == lacking.sum()
            if i != j:
                expected = oracle(right[i], right[j], "exact").pvalue
                assert float(result.pvalue[i, j]) == pytest.approx(expected, rel=1e-10)
    np.testing.assert_array_equal(result.n_dropped[4], 0)
    np.testing.assert_array_equal(result.n_dropped[:, 4], 0)
    # pairs_over gives the same counts
    same = rankstats.mcnemar(right, pairs_over=0, dim=1, nan_policy="omit")
    np.testing.assert_array_equal(same.n_dropped, result.n_dropped)


def leaders_cube():
    """Binary scores where a (leader) and b (runner-up) differ; b lacks samples 3, 4 of p0."""
    rng = np.random.default_rng(0)
    records = [
        {
            "model": m,
            "task": t,
            "template": f"p{k}",
            "sample": s,
            "score": float(rng.random() < accuracy),
        }
        for m, accuracy in {"a": 0.9, "b": 0.5, "c": 0.2}.items()
        for t in ("t1", "t2")
        for k in range(3)
        for s in range(20)
    ]
    cube = rankstats.from_records(records)
    cube["score"].loc[{"model": "b", "task": "t1", "template": 0, "sample": [3, 4]}] = np.nan
    return cube


def test_report_says_what_mcnemar_dropped_in_every_format(tmp_path, capsys):
    cube = leaders_cube()
    analysis = rankstats.report(cube, n_resamples=0)
    assert analysis.leader.sel(task="t1").item() == "a"
    assert analysis.runner_up.sel(task="t1").item() == "b"
    assert int(analysis.leaders_samples_dropped.sel(task="t1")) == 2
    assert int(analysis.leaders_samples_dropped.sel(task="t2")) == 0
    # the count is McNemar's own, on the template the samples are missing from
    one = cube.score.sel(task="t1").reset_coords(drop=True)
    direct = rankstats.mcnemar(
        one.sel(model="a", drop=True), one.sel(model="b", drop=True), nan_policy="omit"
    )
    assert direct.n_dropped.values.tolist() == [2, 0, 0]
    frame = analysis[
        ["drop_section", "drop_task", "drop_what", "drop_count", "drop_which", "drop_why"]
    ].to_dataframe()
    row = frame[(frame.drop_section == "leaders") & (frame.drop_what == "samples")]
    assert len(row) == 1
    row = row.iloc[0]
    assert (row.drop_task, row.drop_count, row.drop_which) == ("t1", 2, "3, 4")
    assert "pairwise deletion" in row.drop_why
    markdown = render.to_markdown(analysis)
    section = markdown.split("## Can the two leaders be told apart item by item?")[1]
    section = section.split("\n## ")[0]
    assert "task t1: 2 samples (3, 4)" in section and "pairwise deletion" in section
    assert "| samples left out |" in section
    page = render.to_html(analysis)
    leaders_html = page.split('id="leaders"')[1].split("<h2")[0]
    assert "2 samples (3, 4)" in leaders_html and "samples left out" in leaders_html
    written = render.to_csv(analysis, tmp_path / "csv")
    assert tmp_path / "csv" / "leaders.csv" in written
    table = pd.read_csv(tmp_path / "csv" / "leaders.csv", index_col="task")
    assert table.loc["t1", "samples left out"] == 2
    document = json.loads(render.to_json(analysis))
    assert document["data_vars"]["leaders_samples_dropped"]["data"] == [2, 0]
    path = rankstats.save(cube, tmp_path / "binary.nc")
    assert (
        main(
            [
                "report",
                str(path),
                "--n-resamples",
                "0",
                "--quiet",
                "--json",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    tables = json.loads((tmp_path / "r.json").read_text())["tables"]
    leaders = pd.DataFrame(tables["leaders"]).set_index("task")
    assert leaders.loc["t1", "samples left out"] == 2
    dropped = pd.DataFrame(tables["dropped"])
    assert (
        (dropped["section"] == "leaders")
        & (dropped["left out"] == "samples")
        & (dropped["count"] == 2)
    ).sum() == 1
