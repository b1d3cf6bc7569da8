"""The report leads with what it found, and its captions cannot go stale.

Four tasks of the embedded Mizrahi et al. (2024) data (two of LMentry, two of
BBH, so that models are absent from some tasks and one task's subsets fall
short of the target) and the report's markdown, HTML and CSV: the summary
first, the bookkeeping last and grouped, captions built from the attributes
the statistics record (a caption that contradicts them fails
``check_captions``), p-values never "0", ranks whole, means over tasks that
say over which.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import rankstats
from rankstats import render
from rankstats.analyses._summary import benchmark_lines, next_round, task_summary
from rankstats.cli import main
from rankstats.render import CaptionError, Section, check_captions, sections

pytestmark = pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")

TASKS = ["snarks", "navigate", "word_before", "homophones"]
BOOKKEEPING = ["conventions", "statistic_conventions", "dropped"]


@pytest.fixture(scope="module")
def cube():
    return rankstats.datasets.load("mizrahi2024").sel(task=TASKS)


@pytest.fixture(scope="module")
def analysis(cube):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankstats.RankstatsWarning)
        return rankstats.report(cube, n_resamples=50, seed=0)


def _copy(analysis):
    return analysis.copy(deep=True)


def test_the_summary_comes_first_and_the_bookkeeping_last(analysis):
    keys = [section.key for section in sections(analysis)]
    assert keys[0] == "summary"
    assert keys[-3:] == BOOKKEEPING
    markdown = render.to_markdown(analysis)
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Summary"
    assert headings[-3:] == [
        "## Conventions",
        "## Conventions of each statistic",
        "## What the analyses left out, and why",
    ]
    page = render.to_html(analysis)
    assert page.index('id="summary"') < page.index('id="agreement"') < page.index("<details>")
    # the bookkeeping folds away, and each of its sections is in one <details>
    assert page.count("<details>") == len(BOOKKEEPING)
    for key in BOOKKEEPING:
        assert f'<details><summary><h2 id="{key}">' in page
    assert "<script" not in page


def test_every_summary_line_links_to_its_section(analysis):
    keys = {section.key for section in sections(analysis)}
    found = benchmark_lines(analysis)
    assert [name for name, _ in found] == ["BBH", "LMentry"]
    for _, lines in found:
        assert [line.section for line in lines] == [
            "agreement",
            "stability",
            "divergence",
            "templates_needed",
        ]
        assert {line.section for line in lines} <= keys
    page = render.to_html(analysis)
    summary = page[page.index('id="summary"') : page.index('id="agreement"')]
    for section in ("agreement", "stability", "divergence", "templates_needed"):
        assert f'href="#{section}"' in summary and f'id="{section}"' in page
    markdown = render.summary_markdown(analysis)
    assert "([Rank stability](#stability))" in markdown
    assert '<a id="stability"></a>' in render.to_markdown(analysis)


def test_the_summary_numbers_are_the_dataset_s(analysis):
    table = task_summary(analysis)
    assert table.index.tolist() == TASKS
    w = analysis.w.sel(task="snarks").item()
    assert table.loc["snarks", "W"] == f"{w:.2f}"
    low = analysis.rank_low.transpose("task", "model").values
    high = analysis.rank_high.transpose("task", "model").values
    separated = (np.isfinite(low) & (low == high)).sum(1)
    ranked = np.isfinite(low).sum(1)
    assert table["separated"].tolist() == [
        f"{s} of {n}" for s, n in zip(separated, ranked, strict=True)
    ]
    # the leaders are the models whose rank set holds place 1, each with its set
    leaders = table.loc["navigate", "can be first [rank set]"].split(", ")
    models = analysis.model.values[low[1] == 1]
    assert sorted(name.split(" [")[0] for name in leaders) == sorted(models)
    bbh = dict(benchmark_lines(analysis))["BBH"]
    median = np.median(analysis.w.sel(task=["snarks", "navigate"]).values)
    assert f"Kendall's W median {median:.2f} over 2 tasks" in bbh[0].text


def test_the_next_round_says_more_than_where_the_subsets_fall_short(analysis):
    censored = analysis.templates_needed_censored.values.astype(bool)
    assert censored.tolist() == [True, True, True, False]  # homophones alone is reached
    shown = next_round(analysis)
    recommended = analysis.templates_recommended.values
    needed = analysis.templates_needed.values
    assert shown[0] == f"{recommended[0]:.0f} (the subsets: more than {needed[0]:.0f})"
    assert shown[3] == f"{recommended[3]:.0f}" and recommended[3] == needed[3]
    line = dict(benchmark_lines(analysis))["BBH"][3].text
    assert f"{recommended[0]:.0f} on snarks (more than {needed[0]:.0f} by its own" in line


def test_the_stability_section_is_the_simultaneous_leaderboard(cube, analysis):
    board = rankstats.stability.leaderboard(
        cube, n_resamples=50, over="templates", seed=0, nan_policy="omit"
    )
    assert board.attrs["rank_sets"] == "simultaneous"
    for name in ("rank_low", "rank_high", "tie_group"):
        np.testing.assert_array_equal(
            analysis[name].transpose("task", "model").values,
            board[name].transpose("task", "model").values,
        )
    assert analysis.rank_low.attrs["rank_method"] == board.attrs["rank_method"]


def _stability_note(analysis) -> str:
    return next(s.note for s in sections(analysis) if s.key == "stability")


def test_captions_are_built_from_the_attributes(analysis):
    check_captions(analysis)
    note = _stability_note(analysis)
    assert "marginal" not in note and "too narrow" not in note
    assert analysis.rank_low.attrs["rank_method"] in note
    assert analysis.rank_low.attrs["tie_groups"] in note
    assert "from 50 bootstrap replicates over templates (seed 0)" in note
    changed = _copy(analysis)
    changed["rank_low"].attrs.update(
        rank_sets="marginal",
        rank_method="marginal confidence sets, each model's own",
        confidence_level=0.9,
        n_resamples=77,
    )
    other = _stability_note(changed)
    assert other != note
    assert "marginal confidence sets, each model's own" in other
    assert "its 90% rank set" in other and "from 77 bootstrap replicates" in other
    check_captions(changed)


def test_a_caption_contradicting_its_statistic_fails_the_check(analysis):
    found = sections(analysis)
    # the attributes change after the captions were written: the captions are stale
    changed = _copy(analysis)
    changed["rank_low"].attrs["rank_sets"] = "marginal"
    with pytest.raises(CaptionError, match=r"'stability'.*rank_sets = 'marginal'"):
        check_captions(changed, found)
    # a caption written by hand, as the stability section once had
    stale = [
        Section(
            s.key,
            s.title,
            "Each model's AvgP and rank with 200-replicate bootstrap 95% intervals; These "
            "intervals are marginal: near-ties among many models make them too narrow."
            if s.key == "stability"
            else s.note,
            s.table,
        )
        for s in found
    ]
    with pytest.raises(CaptionError, match="says 'marginal', which contradicts rank_sets"):
        check_captions(analysis, stale)
    # conventions, targets and thresholds too
    for variable, key, value, match in (
        ("templates_needed", "target", 0.8, "'templates_needed' does not say 'tau-b ≥ 0.8 '"),
        ("templates_needed", "probability", 0.9, "in at least 90% of reruns"),
        ("templates_for_tau", "target_tau", 0.7, "'variance' does not say 'tau-b ≥ 0.7 '"),
    ):
        changed = _copy(analysis)
        changed[variable].attrs[key] = value
        with pytest.raises(CaptionError, match=re.escape(match)):
            check_captions(changed, found)
        check_captions(changed)
    changed = _copy(analysis)
    changed.attrs["threshold"] = 0.5
    with pytest.raises(CaptionError, match=r"'metrics' does not say 'above 0\.5'"):
        check_captions(changed, found)
    changed["convention_ties"].loc[{"convention": "kendall_w"}] = "min"
    with pytest.raises(CaptionError, match="W over all templates, min ranks"):
        check_captions(changed, found)
    check_captions(changed)


def test_p_values_never_print_as_zero(analysis, tmp_path):
    underflow = _copy(analysis)
    underflow["w_pvalue"][:] = 0.0
    underflow["friedman_model_pvalue"][:] = 3e-310
    markdown = render.to_markdown(underflow)
    agreement = markdown.split("## Agreement across templates")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in agreement.splitlines() if line.startswith("| snarks")]
    header = next(line for line in agreement.splitlines() if line.startswith("| task"))
    columns = header.strip("| ").split(" | ")
    row = dict(zip(columns, rows[0], strict=True))
    assert row["p(W)"] == "< 1e-300"
    assert row["p (models)"] == "3.00e-310"
    assert "&lt; 1e-300" in render.to_html(underflow)
    # the CSV keeps the number itself
    render.to_csv(underflow, tmp_path)
    assert (pd.read_csv(tmp_path / "agreement.csv")["p(W)"] == 0).all()


def test_ranks_print_as_whole_numbers(analysis):
    markdown = render.to_markdown(analysis)
    metrics = markdown.split("## MaxP, AvgP, saturation and CPS")[1].split("\n## ")[0]
    lines = [line for line in metrics.splitlines() if line.startswith("| ")]
    columns = lines[0].strip("| ").split(" | ")
    ranks = [columns.index(c) for c in columns if c.startswith("rank ")]
    for line in lines[1:]:
        cells = line.strip("| ").split(" | ")
        for k in ranks:
            assert re.fullmatch(r"\d+(\.5)?|–", cells[k]), cells[k]


def test_every_mean_over_tasks_says_over_which(analysis):
    average = next(s for s in sections(analysis) if s.key == "average_rank")
    assert "BBH, 2 tasks, 11 models ranked on each" in average.note
    assert "LMentry, 2 tasks, 16 models ranked on each" in average.note
    tasks = average.table["tasks"]
    assert tasks.loc[("BBH", "flan-t5-xxl")] == 2 and tasks.loc[("BBH", "t0_3b")] == 0
    pytest.importorskip("matplotlib")
    from rankstats.plot.report import plot_metrics

    title = plot_metrics(analysis).get_title()
    assert "BBH + LMentry (4 tasks): 11 models" in title
    assert "LMentry (2 tasks): 5 models" in title


def test_the_left_out_log_is_grouped_by_reason_in_markdown_and_html_only(analysis, tmp_path):
    dropped = next(s for s in sections(analysis) if s.key == "dropped")
    full = dropped.table
    assert len(dropped.shown) == full.groupby(["why", "left out"]).ngroups < len(full)
    absent = dropped.shown.loc[dropped.shown.index.str.startswith("absent")].iloc[0]
    assert absent["tasks"] == "the 2 tasks of BBH"
    assert absent["which"] == "t0_3b, alpaca-7b, flan-t5-base, flan-t5-small, flan-t5-large"
    render.to_csv(analysis, tmp_path)
    written = pd.read_csv(tmp_path / "dropped.csv", keep_default_na=False)
    assert len(written) == len(full) == analysis.sizes["drop"]


def test_html_tables_scroll_in_their_own_box_with_one_cell_per_index_level(analysis):
    page = render.to_html(analysis)
    assert (
        page.count('<div class="table"><table>') == page.count("<table") == len(sections(analysis))
    )
    assert "rowspan" not in page
    assert ".table { overflow-x: auto;" in page
    metrics = page[page.index('id="metrics"') :]
    body = metrics[metrics.index("<tbody>") : metrics.index("</tbody>")]
    rows = body.split("<tr>")[1:]
    # every row of the metrics table has the same cells: task, model, then the numbers
    assert len({row.count("<th") for row in rows}) == 1
    assert len({row.count("<td") for row in rows}) == 1


def test_the_terminal_shows_the_summary_beside_a_file(cube, tmp_path, capsys):
    path = rankstats.save(cube.sel(task=["navigate", "homophones"]), tmp_path / "cube.nc")
    page = tmp_path / "report.html"
    arguments = ["report", str(path), "--n-resamples", "0", "--no-figures"]
    assert main([*arguments, "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Multi-prompt report") and "## Summary" in out
    assert "## Agreement across templates" not in out
    assert out.rstrip().endswith(f"The whole report: {page}")
    assert page.is_file()
    assert main([*arguments, "--html", str(page), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert main(arguments) == 0
    assert "## Agreement across templates" in capsys.readouterr().out


def test_a_cube_with_samples_gets_the_items_the_next_round_needs():
    rng = np.random.default_rng(0)
    skill = np.linspace(0.3, 0.8, 5)[:, None, None, None]
    scores = (rng.random((5, 2, 6, 40)) < skill).astype(float)
    cube = rankstats.from_records(
        [
            {"model": f"m{m}", "task": f"t{t}", "template": f"p{p}", "sample": f"s{s}"}
            | {"score": scores[m, t, p, s]}
            for m in range(5)
            for t in range(2)
            for p in range(6)
            for s in range(40)
        ],
        metric="accuracy",
    )
    analysis = rankstats.report(cube, n_resamples=50, seed=0)
    items = rankstats.stability.plan(cube).n_samples_needed_fixed_templates
    np.testing.assert_array_equal(analysis.samples_planned.values, items.values)
    line = benchmark_lines(analysis)[0][1][-1].text
    assert line.startswith("How many templates and items does the next round need?")
    few, many = int(items.min()), int(items.max())
    assert f"from {few} items on" in line and f"to {many} on" in line
