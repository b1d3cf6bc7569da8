"""Values printed in Mizrahi et al. (2024), recomputed from the released accuracies.

Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., & Stanovsky, G.
(2024). State of What Art? A Call for Multi-Prompt LLM Evaluation. TACL 12,
933-949. Table 3 prints, per task, Kendall's W of the model rankings induced by
the templates and the p-value of Friedman's test of the templates.

* W is ``kendall_w(score.where(template_valid), ties="min", tie_correction=False)``
  (valid templates judge the models, ranks by "min", no tie correction),
  rounded to three decimals; three tasks do not reproduce and are pinned as
  known discrepancies.
* The Friedman p-value is ``friedman(cube)`` (models are blocks, every
  template a treatment, tie-corrected), to the printed two significant digits,
  for the BBH tasks; hyperbaton does not reproduce and is pinned. "0.0*"
  (LMentry) means below 1E-50.

The release is kept in tests/data/mizrahi2024 and read by tests/mizrahi.py
(through rankstats_collectors.files.mizrahi2024).
Also here: MaxP, AvgP, saturation, CPS and divergence (the paper's section 5
and 4.2 definitions) worked by hand, and on the release against pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mizrahi import accuracy_cube, accuracy_records, template_records

import rankstats

RTOL = 1e-10

# Table 3: task -> (Kendall's W, Friedman p-value as printed)
TABLE_3 = {
    "word_not_containing": (0.271, "0.0*"),
    "word_before": (0.367, "0.0*"),
    "first_alphabetically": (0.436, "0.0*"),
    "less_letters": (0.485, "0.0*"),
    "rhyming_word": (0.496, "0.0*"),
    "ends_with_word": (0.518, "0.0*"),
    "homophones": (0.518, "0.0*"),
    "all_words_from_category": (0.522, "0.0*"),
    "any_words_from_category": (0.527, "0.0*"),
    "more_letters": (0.540, "0.0*"),
    "movie_recommendation": (0.628, ".897"),
    "formal_fallacies": (0.704, "5.6E-13"),
    "geometric_shapes": (0.710, ".167"),
    "hyperbaton": (0.730, "1.0E-4"),
    "logical_deduction_three_objects": (0.740, "4.9E-16"),
    "disambiguation_qa": (0.764, "2.1E-17"),
    "ruin_names": (0.776, ".366"),
    "logical_deduction_seven_objects": (0.778, "1.4E-13"),
    "salient_translation_error_detection": (0.800, "6.9E-9"),
    "logical_deduction_five_objects": (0.818, "3.0E-9"),
    "snarks": (0.823, ".604"),
    "penguins_in_a_table": (0.830, "7.3E-15"),
    "navigate": (0.838, "5.6E-10"),
    "causal_judgement": (0.851, "4.9E-7"),
    "sports_understanding": (0.873, "8.0E-13"),
}

# Printed W that the release does not reproduce: task -> what the data give, to 3 decimals.
# (logical_deduction_seven_objects reproduces once its "correct" flags are read as numbers:
# the column holds one "0?", and reading it as text made every template valid.)
W_DISCREPANCIES = {
    "all_words_from_category": 0.552,
    "penguins_in_a_table": 0.848,
    "sports_understanding": 0.642,
}
W_REPRODUCED = sorted(set(TABLE_3) - set(W_DISCREPANCIES))
BBH = sorted(task for task, (_, p) in TABLE_3.items() if p != "0.0*")
LMENTRY = sorted(task for task, (_, p) in TABLE_3.items() if p == "0.0*")


@pytest.fixture(scope="module")
def cube():
    return accuracy_cube()


@pytest.fixture(scope="module")
def paper_w(cube):
    return rankstats.kendall_w(
        cube.score.where(cube.template_valid), ties="min", tie_correction=False
    )


@pytest.fixture(scope="module")
def friedman_p(cube):
    return rankstats.friedman(cube).pvalue


def printed_p(p: float, printed: str) -> bool:
    """Whether p prints as ``printed``: three decimals (".897") or two digits ("5.6E-13")."""
    if "E" in printed:
        return float(f"{p:.1e}") == float(printed)
    return round(p, 3) == float(printed)


def test_the_release_holds_the_25_tasks_of_table_3(cube):
    assert sorted(cube.task.values.tolist()) == sorted(TABLE_3)
    benchmark = dict(zip(cube.task.values, cube.benchmark.values, strict=True))
    assert sorted(t for t in TABLE_3 if benchmark[t] == "BBH") == BBH
    assert sorted(t for t in TABLE_3 if benchmark[t] == "LMentry") == LMENTRY


@pytest.mark.parametrize("task", W_REPRODUCED)
def test_kendall_w_as_printed(paper_w, task):
    w = float(paper_w.statistic.sel(task=task))
    assert round(w, 3) == TABLE_3[task][0]


@pytest.mark.parametrize("task", sorted(W_DISCREPANCIES))
def test_kendall_w_known_discrepancies(paper_w, task):
    w = float(paper_w.statistic.sel(task=task))
    assert round(w, 3) != TABLE_3[task][0]
    assert round(w, 3) == W_DISCREPANCIES[task]


@pytest.mark.parametrize("task", [t for t in BBH if t != "hyperbaton"])
def test_friedman_pvalue_as_printed(friedman_p, task):
    p = float(friedman_p.sel(task=task))
    assert printed_p(p, TABLE_3[task][1]), f"{task}: {p:.3e} vs {TABLE_3[task][1]}"


def test_friedman_pvalue_hyperbaton_known_discrepancy(friedman_p):
    # printed 1.0E-4; the release gives 1.456e-4
    p = float(friedman_p.sel(task="hyperbaton"))
    assert not printed_p(p, TABLE_3["hyperbaton"][1])
    assert printed_p(p, "1.5E-4")


@pytest.mark.parametrize("task", [t for t in LMENTRY if t != "ends_with_word"])
def test_friedman_pvalue_lmentry_below_1e_50(friedman_p, task):
    assert float(friedman_p.sel(task=task)) < 1e-50


def test_friedman_pvalue_ends_with_word_known_discrepancy(friedman_p):
    # printed "0.0*" (below 1E-50); the release gives 9.8e-48
    p = float(friedman_p.sel(task="ends_with_word"))
    assert not p < 1e-50
    assert printed_p(p, "9.8E-48")


def test_friedman_uses_the_models_that_ran_the_task(cube):
    result = rankstats.friedman(cube)
    for task in BBH:
        assert int(result.n_blocks.sel(task=task)) == 11
    for task in LMENTRY:
        assert int(result.n_blocks.sel(task=task)) == 16


# --------------------------------------------------------------------------- prompt metrics

# Two models, four templates; template 0 is the benchmark's original.
#   model A: 0.8 0.6 0.7 0.5  MaxP 0.8, AvgP 0.65,  saturation 1 - 0.15  = 0.85,
#                             CPS 0.85 * 0.8 = 0.68
#            divergence: paraphrases 0.6 0.7 0.5, mean 0.6, sd (ddof 1) 0.1, (0.8 - 0.6)/0.1 = 2
#   model B: 0.7 0.7 0.6 0.7  MaxP 0.7, AvgP 0.675, saturation 1 - 0.025 = 0.975,
#                             CPS 0.975 * 0.7 = 0.6825
#            divergence: paraphrases 0.7 0.6 0.7, mean 2/3, sd 1/sqrt(300),
#            (0.7 - 2/3) * sqrt(300) = sqrt(300)/30 = 1/sqrt(3)
#   lower is better, A: MaxP = min = 0.5, saturation 1 - |0.5 - 0.65| = 0.85, CPS 0.425
HAND = np.array([[0.8, 0.6, 0.7, 0.5], [0.7, 0.7, 0.6, 0.7]])
ORIGINAL = np.array([True, False, False, False])


def close(actual, desired):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float),
        np.asarray(desired, dtype=float),
        rtol=RTOL,
        atol=0,
        equal_nan=False,
    )


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        (rankstats.maxp, [0.8, 0.7]),
        (rankstats.avgp, [0.65, 0.675]),
        (rankstats.saturation, [0.85, 0.975]),
        (rankstats.cps, [0.68, 0.6825]),
    ],
    ids=["maxp", "avgp", "saturation", "cps"],
)
def test_prompt_metrics_by_hand(metric, expected):
    close(metric(HAND), expected)


def test_prompt_metrics_by_hand_lower_is_better():
    out = rankstats.prompt_metrics(HAND, higher_is_better=False)
    close(out.maxp, [0.5, 0.6])
    close(out.saturation, [0.85, 0.925])
    close(out.cps, [0.425, 0.555])


def test_divergence_by_hand():
    result = rankstats.divergence(HAND, original=ORIGINAL)
    close(result.statistic, [2.0, 1 / np.sqrt(3)])
    close(result.paraphrase_mean, [0.6, 2 / 3])
    close(result.paraphrase_std, [0.1, 1 / np.sqrt(300)])
    close(result.original, [0.8, 0.7])


@pytest.fixture(scope="module")
def valid_records():
    records = accuracy_records().merge(template_records(), on=["task", "template"])
    return records[records["template_valid"]]


def test_prompt_metrics_of_the_release_match_pandas(cube, valid_records):
    metrics = rankstats.prompt_metrics(cube, valid=True)
    # oracle: pandas groupby over the valid templates of each (model, task)
    grouped = valid_records.groupby(["model", "task"])["score"]
    oracle = pd.DataFrame({"maxp": grouped.max(), "avgp": grouped.mean()})
    oracle["saturation"] = 1 - (oracle["maxp"] - oracle["avgp"])
    oracle["cps"] = oracle["saturation"] * oracle["maxp"]
    ran = oracle.dropna()
    for name in ("maxp", "avgp", "saturation", "cps"):
        computed = metrics[name].to_series().reindex(ran.index)
        close(computed.to_numpy(), ran[name].to_numpy())
    # models never run on a task have no metrics there
    flat = metrics["maxp"].to_series()
    assert set(flat[flat.isna()].index).isdisjoint(ran.index)
    assert flat.notna().sum() == len(ran)


def test_divergence_of_the_release_matches_pandas(cube, valid_records):
    result = rankstats.divergence(cube, valid=True)
    # oracle: pandas mean of the original templates, mean and std (ddof=1) of the others
    by = ["model", "task"]
    original = valid_records[valid_records["template_is_original"]].groupby(by)["score"].mean()
    paraphrases = valid_records[~valid_records["template_is_original"]].groupby(by)["score"]
    oracle = ((original - paraphrases.mean()) / paraphrases.std(ddof=1)).dropna()
    computed = result.statistic.to_series().reindex(oracle.index)
    close(computed.to_numpy(), oracle.to_numpy())
    assert result.statistic.to_series().notna().sum() == len(oracle)
