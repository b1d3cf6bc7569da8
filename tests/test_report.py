import importlib
import json
import warnings

import numpy as np
import pytest
import xarray as xr
from mizrahi import accuracy_cube

import rankstats
from rankstats import render
from rankstats.errors import InputTypeError, OptionError


@pytest.fixture(scope="module")
def cube():
    return accuracy_cube()


@pytest.fixture(scope="module")
def analysis(cube):
    with warnings.catch_warnings():
        # 2,645 template pairs with constant scores over the models: tau is undefined there
        warnings.filterwarnings(
            "ignore", "kendall_tau: .* a ranking is constant", rankstats.RankstatsWarning
        )
        return rankstats.report(cube, seed=0)


def test_agreement_comes_from_the_core_statistics(cube, analysis):
    w = rankstats.kendall_w(cube, nan_policy="omit")
    xr.testing.assert_equal(analysis.w.reset_coords(drop=True), w.statistic.reset_coords(drop=True))
    np.testing.assert_array_equal(analysis.w_pvalue, w.pvalue)
    by_template = rankstats.friedman(cube, nan_policy="omit")
    np.testing.assert_array_equal(analysis.friedman_template_pvalue, by_template.pvalue)
    by_model = rankstats.friedman(cube, blocks="template", treatments="model", nan_policy="omit")
    np.testing.assert_array_equal(analysis.friedman_model_statistic, by_model.statistic)


def test_least_agreeing_pair_is_the_matrix_minimum(cube, analysis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankstats.RankstatsWarning)
        tau = rankstats.kendall_tau_matrix(cube).statistic
    for task in ("word_not_containing", "snarks"):
        matrix = tau.sel(task=task).values
        upper = np.triu(np.ones_like(matrix, dtype=bool), 1)
        assert float(analysis.tau_min.sel(task=task)) == np.nanmin(np.where(upper, matrix, np.nan))
        assert int(analysis.negative_tau_pairs.sel(task=task)) == int(np.sum(upper & (matrix < 0)))
        first = str(analysis.tau_min_template.sel(task=task).item())
        second = str(analysis.tau_min_template_b.sel(task=task).item())
        ids = cube.template_id.sel(task=task).values.tolist()
        a, b = ids.index(first), ids.index(second)
        assert matrix[a, b] == float(analysis.tau_min.sel(task=task))
        scores = cube.score.sel(task=task)
        np.testing.assert_array_equal(
            analysis.tau_min_score.sel(task=task), scores.isel(template=a)
        )
        expected_rank = rankstats.rank(scores.isel(template=b), "model")
        np.testing.assert_array_equal(analysis.tau_min_rank_b.sel(task=task), expected_rank)


def test_metrics_ranks_and_shares(cube, analysis):
    np.testing.assert_array_equal(analysis.metric_value.sel(metric="cps"), rankstats.cps(cube))
    maxp = analysis.metric_value.sel(metric="maxp")
    np.testing.assert_array_equal(
        analysis.metric_rank.sel(metric="maxp"), rankstats.rank(maxp, "model")
    )
    share = analysis.share_above_threshold.sel(task="word_before", model="alpaca-7b")
    scores = cube.score.sel(task="word_before", model="alpaca-7b").dropna("template")
    assert float(share) == pytest.approx(float((scores > 0.05).mean()))
    # BBH has 11 of the 16 models: the others have no metric and no share there
    assert analysis.metric_value.sel(task="snarks", model="t0_3b").isnull().all()


def test_average_rank_per_benchmark(analysis):
    ranks = analysis.metric_rank.sel(metric="avgp")
    lmentry = analysis.task_benchmark == "LMentry"
    expected = ranks.where(lmentry).mean("task")
    np.testing.assert_allclose(
        analysis.average_rank.sel(benchmark="LMentry", metric="avgp"), expected
    )


def test_best_template_methods(cube, analysis):
    share = analysis.best_template_method_share
    np.testing.assert_allclose(share.sum("generation_method").sel(benchmark="LMentry"), 1.0)
    # by hand for one model on one benchmark
    scores = cube.score.where(cube.benchmark == "LMentry", drop=True).sel(model="vicuna-13b")
    best = scores == scores.max("template")
    methods = cube.template_method.sel(task=scores.task)
    counts = {m: int((best & (methods == m)).sum()) for m in share.generation_method.values}
    total = sum(counts.values())
    for method, count in counts.items():
        cell = share.sel(
            {"model": "vicuna-13b", "benchmark": "LMentry", "generation_method": method}
        )
        assert float(cell) == pytest.approx(count / total)


def test_filtering_matches_table_14_of_the_paper(analysis):
    # Mizrahi et al. (2024), table 14, "word not containing": .836 .967 .783 .850
    row = analysis.filtering_tau.sel(task="word_not_containing")
    np.testing.assert_allclose(row.values, [0.836, 0.967, 0.783, 0.850], atol=5e-4)


def test_divergence_from_the_core_statistic(cube, analysis):
    expected = rankstats.divergence(cube, nan_policy="omit").statistic
    np.testing.assert_array_equal(analysis.divergence.transpose(*expected.dims), expected)


def test_no_python_loop_over_tasks(cube, monkeypatch):
    calls = []
    module = importlib.import_module("rankstats.analyses.report")
    original = module.kendall_tau_matrix

    def counting(*args, **kwargs):
        calls.append(args[0].sizes["task"])
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "kendall_tau_matrix", counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankstats.RankstatsWarning)
        rankstats.report(cube)
    assert calls == [25]


def test_markdown_html_json_csv(analysis, tmp_path):
    markdown = render.to_markdown(analysis)
    assert markdown.startswith("# Multi-prompt report: accuracy of 16 models × 25 tasks")
    for title in (
        "Agreement across templates",
        "Divergence of the original templates",
        "Average rank per benchmark",
        "Sensitivity to dropping invalid templates",
    ):
        assert f"## {title}" in markdown
    page = render.to_html(analysis, {"agreement": b"\x89PNG fake"})
    assert page.count("<table") == len(render.sections(analysis))
    assert "data:image/png;base64," in page and "<script" not in page
    data = json.loads(render.to_json(analysis))
    assert data["data_vars"]["w"]["dims"] == ["task"]
    written = render.to_csv(analysis, tmp_path / "tables")
    assert {p.name for p in written} >= {"agreement.csv", "metrics.csv", "filtering.csv"}


def test_figures_render(analysis):
    pytest.importorskip("matplotlib")
    from rankstats.plot.report import figures

    pngs = figures(analysis)
    assert {"agreement", "divergence", "metrics", "pairs:snarks"} <= set(pngs)
    assert all(png.startswith(b"\x89PNG") for png in pngs.values())


def test_report_cli(cube, tmp_path, capsys):
    from rankstats.cli import main

    path = rankstats.save(cube, tmp_path / "cube.nc", float_dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankstats.RankstatsWarning)
        status = main(
            [
                "report",
                str(path),
                "--json",
                str(tmp_path / "r.json"),
                "--csv",
                str(tmp_path / "csv"),
                "--html",
                str(tmp_path / "r.html"),
                "--no-figures",
            ]
        )
    assert status == 0
    # beside the files the terminal shows the summary, not the whole report
    out = capsys.readouterr().out
    assert "## Summary" in out and "## Agreement across templates" not in out
    assert json.loads((tmp_path / "r.json").read_text())["attrs"]["metric"] == "accuracy"
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", str(tmp_path / "nothing.nc")]) == 2


@pytest.fixture(scope="module")
def binary_cube():
    """Three models, two tasks, four templates (one padding in t2), 60 samples."""
    rng = np.random.default_rng(0)
    accuracy = {"a": 0.85, "b": 0.55, "c": 0.35}
    records = []
    for model, base in accuracy.items():
        for task, templates in (("t1", 4), ("t2", 3)):
            for k in range(templates):
                shift = 0.15 * k if model == "c" else 0.0  # c's templates differ
                records += [
                    {
                        "model": model,
                        "task": task,
                        "template": f"p{k}",
                        "sample": s,
                        "score": float(rng.random() < base + shift),
                    }
                    for s in range(60)
                ]
    return rankstats.from_records(records)


def test_item_level_tests_match_statsmodels_and_scipy(binary_cube):
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import cochrans_q
    from statsmodels.stats.multitest import multipletests

    analysis = rankstats.report(binary_cube, n_resamples=0)
    x = binary_cube.score
    raw = {}
    for model in ("a", "b", "c"):
        for task in ("t1", "t2"):
            block = x.sel(model=model, task=task).dropna("template", how="all")
            result = cochrans_q(block.transpose("sample", "template").values)
            raw[model, task] = result.pvalue
            assert float(analysis.template_effect_q.sel(model=model, task=task)) == pytest.approx(
                result.statistic, rel=1e-10
            )
    keys = list(raw)
    holm = multipletests([raw[k] for k in keys], method="holm")[1]
    for key, expected in zip(keys, holm, strict=True):
        got = float(analysis.template_effect_pvalue_adjusted.sel(model=key[0], task=key[1]))
        assert got == pytest.approx(expected, rel=1e-10)
    # the leaders by AvgP, and exact McNemar between them template by template
    assert analysis.leader.values.tolist() == ["a", "a"]
    assert analysis.runner_up.values.tolist() == ["b", "b"]
    assert analysis.leaders_templates_tested.values.tolist() == [4, 3]
    for task, templates in (("t1", 4), ("t2", 3)):
        pvalues, better = [], []
        for k in range(templates):
            first = x.sel(model="a", task=task, template=k).values
            second = x.sel(model="b", task=task, template=k).values
            b = int(((first == 1) & (second == 0)).sum())
            c = int(((first == 0) & (second == 1)).sum())
            pvalues.append(binomtest(min(b, c), b + c).pvalue if b + c else 1.0)
            better.append(b > c)
        rejected = multipletests(pvalues, method="holm")[0]
        assert int(analysis.leader_better_templates.sel(task=task)) == int(
            (rejected & np.array(better)).sum()
        )
        assert int(analysis.runner_up_better_templates.sel(task=task)) == int(
            (rejected & ~np.array(better)).sum()
        )
    assert int(analysis.leader_better_templates.sum()) > 0  # a is far ahead of b


def test_item_level_sections_render_only_for_binary_samples(binary_cube, analysis):
    keys = [
        section.key for section in render.sections(rankstats.report(binary_cube, n_resamples=0))
    ]
    assert "template_effect" in keys and "leaders" in keys
    assert "template_effect" not in [section.key for section in render.sections(analysis)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"n_resamples": 1},
            OptionError,
            "report: n_resamples=1 is not allowed; n_resamples must be 0",
        ),
        ({"n_resamples": -1}, OptionError, "report: n_resamples=-1 is not allowed"),
        ({"threshold": float("nan")}, OptionError, "report: threshold=nan is not allowed"),
        ({"seed": "x"}, OptionError, "report: seed='x' is not allowed"),
        ({"nan_policy": "drop"}, OptionError, "report: nan_policy='drop' is not allowed"),
        ({"higher_is_better": "no"}, OptionError, "report: higher_is_better='no' is not allowed"),
        ({"resamples": 10}, InputTypeError, "report: got an unexpected keyword argument"),
    ],
)
def test_options_are_checked_before_any_statistic(cube, kwargs, error, match, monkeypatch):
    module = importlib.import_module("rankstats.analyses.report")

    def refuse(*args, **kwargs):
        raise AssertionError("a statistic ran before the options were checked")

    monkeypatch.setattr(module, "kendall_w", refuse)
    with pytest.raises(error, match=match):
        rankstats.report(cube, **kwargs)


def test_report_refuses_what_is_not_a_cube():
    with pytest.raises(InputTypeError, match="report: cube must be a score cube"):
        rankstats.report(np.ones((3, 4)))


def test_report_records_its_resampling(binary_cube):
    analysis = rankstats.report(binary_cube, n_resamples=20, seed=3)
    assert analysis.attrs["n_resamples"] == 20 and analysis.attrs["seed"] == 3
    again = rankstats.report(binary_cube, n_resamples=20, seed=3)
    xr.testing.assert_identical(analysis, again)
    assert rankstats.report(binary_cube, n_resamples=0).attrs["seed"] == "None"


def test_variance_and_sensitivity_sections_come_from_their_functions(binary_cube, tmp_path):
    from rankstats.stability import variance_summary

    analysis = rankstats.report(binary_cube, n_resamples=40, seed=3)
    summary = variance_summary(binary_cube, n_resamples=40, seed=3)
    for name in (
        "variance_share",
        "variance_estimate",
        "variance_low",
        "variance_high",
        "g_coefficient",
        "replication_tau",
        "templates_for_tau",
    ):
        np.testing.assert_array_equal(analysis[name].values, summary[name].values)
    sensitivity = rankstats.prompt_sensitivity(binary_cube, nan_policy="omit")
    np.testing.assert_allclose(
        analysis.prompt_sensitivity.values, sensitivity.mean("model").values, rtol=1e-12
    )
    listed = rankstats.sensitive_samples(binary_cube, top=5)
    np.testing.assert_array_equal(analysis.sensitive_sensitivity.values, listed.sensitivity.values)
    markdown = render.to_markdown(analysis)
    assert "## Where the variance comes from (%)" in markdown
    assert "## Samples most sensitive to wording" in markdown
    keys = [section.key for section in render.sections(analysis)]
    assert {"variance", "sensitivity"} <= set(keys)
    written = {path.name for path in render.to_csv(analysis, tmp_path)}
    assert {"variance.csv", "sensitivity.csv"} <= written
    from rankstats.plot.report import figures

    assert "variance" in figures(analysis)


def test_variance_section_says_which_cells_it_left_out(binary_cube):
    holed = binary_cube.copy(deep=True)
    holed["score"][0, 0, 1, :] = np.nan  # model a has no scores under t1's template p1
    analysis = rankstats.report(holed, n_resamples=20, seed=0)
    rows = analysis.drop_section.values == "variance"
    assert rows.sum() == 1
    assert (
        int(analysis.drop_count.values[rows][0])
        == int(analysis.variance_cells_missing.sel(task="t1"))
        > 0
    )
    assert "missing model × template" in render.to_markdown(analysis)


@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
def test_templates_needed_by_batches_equals_one_call_over_every_k(cube, nan_policy):
    from rankstats.analyses.report import _templates_needed
    from rankstats.stability.needed import templates_needed

    scores = rankstats.template_scores(cube).isel(task=slice(0, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankstats.RankstatsWarning)
        every = templates_needed(scores, n_resamples=60, seed=5, nan_policy=nan_policy)
        batched = _templates_needed(scores, 60, 5, nan_policy)
    assert np.isfinite(every.k_needed.values).any() and (every.k_needed.values > 8).any()
    np.testing.assert_array_equal(batched.k_needed.values, every.k_needed.values)
    np.testing.assert_array_equal(batched.n_templates.values, every.n_templates.values)


@pytest.mark.parametrize("labelled", [True, False])
def test_a_cube_without_template_ids_names_templates_by_label_or_position(labelled):
    scores = np.array([[0.9, 0.8, 0.2], [0.5, 0.6, 0.7], [0.1, 0.3, 0.4]])[:, None, :]
    coords = {"model": ["a", "b", "c"], "task": ["t"]}
    if labelled:
        coords["template"] = ["p1", "p2", "p3"]
    cube = xr.Dataset({"score": (("model", "task", "template"), scores)}, coords=coords)
    analysis = rankstats.report(cube, n_resamples=0)
    # the same pair as the cube with ids p1..p3 in report's own example
    expected = (["p1"], ["p3"]) if labelled else (["0"], ["2"])
    assert (
        analysis.tau_min_template.values.tolist(),
        analysis.tau_min_template_b.values.tolist(),
    ) == expected
