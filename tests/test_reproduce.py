"""The reproduction of Mizrahi et al. (2024): conventions found and verdicts, pinned."""

import pytest

from rankstats.reproduce import _compare, available, run
from rankstats.reproduce import mizrahi2024 as study


@pytest.fixture(scope="module")
def comparisons():
    return {c.table: c for c in run("mizrahi2024")}


def verdicts(comparison, verdict="mismatch"):
    cells = comparison.cells
    return {row for row, _ in cells.index[cells["verdict"] == verdict]}


def test_studies():
    assert available() == ["mizrahi2024"]
    with pytest.raises(KeyError, match="no study named 'x'"):
        run("x")


def test_kendall_w_needs_the_papers_convention(comparisons):
    w = comparisons["table_3_w"]
    # the printed W: templates marked correct only, min ranks, no tie correction
    assert w.convention == {"source": "csv", "templates": "valid", "ties": "min",
                            "tie_correction": False}
    assert (w.matched, w.total) == (22, 25)
    assert verdicts(w) == {"all_words_from_category", "penguins_in_a_table",
                           "sports_understanding"}
    cell = w.cells.loc[("word_not_containing", "kendall_w")]
    assert cell["printed"] == ".271"
    assert cell["reproduced"] == pytest.approx(0.27119, abs=5e-5)
    # the standard, tie-corrected W over all templates reproduces none of them
    assert _compare.standard_matches(w) == 0
    assert cell["standard"] == pytest.approx(0.46470, abs=5e-5)


def test_friedman_p_values(comparisons):
    p = comparisons["table_3_friedman"]
    assert p.convention == {"source": "csv", "templates": "all",
                            "orientation": "blocks=models", "tie_correction": True}
    assert verdicts(p) == {"ends_with_word", "hyperbaton"}
    # "0.0*" means below 1E-50, but the data give 9.8E-48 for ends_with_word
    assert p.cells.loc[("ends_with_word", "friedman_p"), "reproduced"] == pytest.approx(
        9.768e-48, rel=1e-3)


def test_filtering_sensitivity(comparisons):
    tau = comparisons["table_14"]
    assert tau.convention == {"source": "csv", "variant": "b", "valid": "valid"}
    assert (tau.matched, tau.total) == (96, 100)
    assert comparisons["table_4"].matched == 5


def test_average_ranks(comparisons):
    assert comparisons["table_15"].convention == {"source": "csv", "templates": "valid",
                                                  "ties": "min"}
    assert (comparisons["table_16"].matched, comparisons["table_16"].total) == (43, 44)
    # LMentry's combined column is the one that does not follow
    mismatched_columns = {column for _, column in comparisons["table_15"].cells.index[
        comparisons["table_15"].cells["verdict"] == "mismatch"]}
    assert "combined" in mismatched_columns


def test_best_template_sources(comparisons):
    lmentry = comparisons["table_17"]
    assert (lmentry.matched, lmentry.total) == (68, 72)
    # every model row matches; the 'all paraphrases' row counts every template, not the valid
    assert verdicts(lmentry) == {"all_paraphrases"}


def test_released_metrics(comparisons):
    unfiltered = comparisons["metrics_none"]
    assert unfiltered.matched == unfiltered.total == 975
    assert unfiltered.convention == {"source": "json", "templates": "all"}
    # JSON accuracies with the paraphrase CSVs' correctness flags reproduce every cell
    assert comparisons["metrics_correct"].matched == 975
    assert comparisons["metrics_correct"].convention == {"source": "json", "templates": "valid"}


def test_render_and_cli(comparisons, capsys, tmp_path):
    from rankstats.cli import main

    text = _compare.render(list(comparisons.values()))
    assert text.startswith("# Reproduction: ")
    assert "| Table 3: Kendall's W per task | 22/25 |" in text
    assert main(["reproduce", "mizrahi2024", "--csv", str(tmp_path / "tables")]) == 0
    assert "rankstats' standard statistics" in capsys.readouterr().out
    cells = (tmp_path / "tables" / "cells.csv").read_text()
    assert cells.startswith("table,row,column,printed")
    assert "tie_correction" in cells
    assert main(["reproduce", "nothing"]) == 2


def test_published_values_are_read_from_the_transcription():
    rows = study.published()["tables"]["table_3"]["rows"]
    assert {row["task"] for row in rows} == set(study._cubes()["csv"]["task"].values)
