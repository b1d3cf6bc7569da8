"""Degenerate inputs, missing values and structure, checked against oracles or by hand.

A NaN result for a degenerate input comes with a :class:`rankstats.RankstatsWarning`;
a missing score is NaN under ``nan_policy="propagate"`` (without a warning),
dropped under ``"omit"`` (listwise for W, Friedman and Cochran's Q; pairwise
for tau and McNemar) and an error under ``"raise"``. Structure is not
missingness: an object missing for every judge and a judge missing for every
object drop out before any ``nan_policy`` applies.

Oracles: ``scipy.stats.kendalltau``, ``scipy.stats.friedmanchisquare``,
``pingouin.friedman`` (SciPy 1.17, pingouin 0.7.0) and Kendall's formula
``W = 12 S / (m^2 (n^3 - n) - m sum T)`` evaluated on ``scipy.stats.rankdata`` ranks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats

import rankstats
from rankstats import MissingValueError, RankstatsWarning

RTOL = 1e-10


def close(actual, desired):
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float),
        np.asarray(desired, dtype=float),
        rtol=RTOL,
        atol=0,
        equal_nan=False,
    )


def kendall_formula(x: np.ndarray, correction: bool = True) -> float:
    """W = 12 S / (m^2 (n^3 - n) - m sum T) with average ranks from scipy.stats.rankdata."""
    m, n = x.shape
    ranks = stats.rankdata(-x, axis=1)  # oracle: scipy.stats.rankdata, 1 = best
    sums = ranks.sum(axis=0)
    s = ((sums - sums.mean()) ** 2).sum()
    tie_sum = sum(((t**3) - t).sum() for t in (np.unique(row, return_counts=True)[1] for row in x))
    return 12 * s / (m**2 * (n**3 - n) - (m * tie_sum if correction else 0))


def pg_w(x: np.ndarray) -> float:
    rows, cols = np.nonzero(~np.isnan(x))
    data = pd.DataFrame({"subject": rows, "within": cols, "dv": x[rows, cols]})
    # oracle: pingouin.friedman(data, dv="dv", within="within", subject="subject")
    return float(
        pingouin.friedman(data=data, dv="dv", within="within", subject="subject").loc[
            "Friedman", "W"
        ]
    )


def _scores(seed: int, shape=(6, 8)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 5, size=shape) / 4


# --------------------------------------------------------------------------- Kendall's W


@pytest.mark.parametrize("correction", [True, False])
@pytest.mark.parametrize("ties", ["average", "min", "max", "dense", "ordinal"])
def test_identical_judges_give_w_one(correction, ties):
    row = np.array([0.9, 0.1, 0.5, 0.7, 0.3])
    result = rankstats.kendall_w(np.tile(row, (4, 1)), ties=ties, tie_correction=correction)
    close(result.statistic, 1.0)
    close(result.chi2, 4 * (5 - 1))  # chi2 = m (n - 1) W


def test_identical_judges_with_ties_give_w_one_only_when_corrected():
    row = np.array([0.9, 0.9, 0.5, 0.1])
    x = np.tile(row, (3, 1))
    close(rankstats.kendall_w(x).statistic, 1.0)
    # uncorrected: S = 12 (sum of squared deviations of 3 * [1.5, 1.5, 3, 4] from 7.5) = 40.5,
    # W = 12 * 40.5 / (9 * 60) = 0.9
    close(rankstats.kendall_w(x, tie_correction=False).statistic, 0.9)
    close(rankstats.kendall_w(x, tie_correction=False).statistic, kendall_formula(x, False))


def test_two_reversed_judges_give_w_zero():
    x = np.array([[0.1, 0.4, 0.2, 0.9, 0.5], [0.9, 0.6, 0.8, 0.1, 0.5]])  # 1 - x: reversed
    result = rankstats.kendall_w(x)
    assert float(result.statistic) == 0.0
    assert float(result.pvalue) == 1.0


def test_a_judge_with_all_ties():
    # ranks 4 3 2 1 / 2.5 2.5 2.5 2.5 / 4 2 3 1: rank sums 10.5 7.5 7.5 4.5, S = 18;
    # the tied judge has T = 4^3 - 4 = 60, so W = 12 * 18 / (9 * 60 - 3 * 60) = 0.6
    x = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0], [1.0, 3.0, 2.0, 4.0]])
    result = rankstats.kendall_w(x)
    close(result.statistic, 0.6)
    close(result.statistic, kendall_formula(x))
    close(result.statistic, pg_w(x))


def test_every_judge_all_ties_is_nan_with_a_warning():
    with pytest.warns(RankstatsWarning, match="all judges tie all objects"):
        result = rankstats.kendall_w(np.full((3, 4), 0.5))
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)
    assert np.isnan(result.f)


def test_friedman_every_block_all_ties_is_nan_with_a_warning():
    # oracle: scipy.stats.friedmanchisquare also gives NaN (0/0) here
    with pytest.warns(RankstatsWarning):
        result = rankstats.friedman(np.full((5, 3), 1.0))
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)


def test_one_judge_is_nan_with_a_warning():
    with pytest.warns(RankstatsWarning, match="fewer than two judges"):
        result = rankstats.kendall_w(np.array([[0.3, 0.1, 0.2]]))
    assert np.isnan(result.statistic)
    assert float(result.n_judges) == 1


def test_one_object_is_nan_with_a_warning():
    with pytest.warns(RankstatsWarning, match="fewer than two objects"):
        result = rankstats.kendall_w(np.array([[0.3], [0.1], [0.2]]))
    assert np.isnan(result.statistic)
    assert float(result.n_objects) == 1


def test_one_block_in_friedman_is_nan_with_a_warning():
    with pytest.warns(RankstatsWarning):
        result = rankstats.friedman(np.array([[0.3, 0.1, 0.2]]))
    assert np.isnan(result.statistic)


def test_a_degenerate_slice_leaves_the_others_alone():
    good = _scores(3)
    x = np.stack([np.full_like(good, 0.5), good])
    with pytest.warns(RankstatsWarning, match="1 of 2"):
        result = rankstats.kendall_w(x)
    assert np.isnan(result.statistic[0])
    close(result.statistic[1], pg_w(good))


@pytest.mark.parametrize(
    "call",
    [
        lambda: rankstats.kendall_w(np.full((3, 4), 0.5)),
        lambda: rankstats.kendall_tau([0.1, 0.2, 0.3], [0.5, 0.5, 0.5]),
        lambda: rankstats.mcnemar([1.0, 0.0], [1.0, 0.0], method="chi2"),
        lambda: rankstats.cochran_q(np.ones((3, 3))),
    ],
    ids=["kendall_w", "kendall_tau", "mcnemar", "cochran_q"],
)
def test_nan_warnings_point_at_the_caller(call):
    with pytest.warns(RankstatsWarning) as record:
        call()
    assert record[0].filename == __file__


# --------------------------------------------------------------------------- nan_policy: W


def _with_holes(seed: int) -> np.ndarray:
    x = _scores(seed)
    x[1, 2] = np.nan
    x[4, 0] = x[4, 7] = np.nan
    return x


@pytest.mark.parametrize("statistic", [rankstats.kendall_w, rankstats.friedman])
def test_propagate_gives_nan_without_a_warning(statistic):
    result = statistic(_with_holes(1))  # filterwarnings=error: no warning may escape
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)


@pytest.mark.parametrize("statistic", [rankstats.kendall_w, rankstats.friedman])
def test_raise_raises_missing_value_error(statistic):
    with pytest.raises(MissingValueError, match="missing"):
        statistic(_with_holes(2), nan_policy="raise")


@pytest.mark.parametrize("ties", ["average", "min"])
@pytest.mark.parametrize("correction", [True, False])
def test_w_omit_is_the_result_on_the_complete_judges(ties, correction):
    x = _with_holes(3)
    complete = x[~np.isnan(x).any(axis=1)]
    omitted = rankstats.kendall_w(x, ties=ties, tie_correction=correction, nan_policy="omit")
    reference = rankstats.kendall_w(complete, ties=ties, tie_correction=correction)
    for field in ("statistic", "pvalue", "f", "f_pvalue", "f_kbs_pvalue"):
        close(getattr(omitted, field), getattr(reference, field))
    assert float(omitted.n_judges) == 4
    if ties == "average" and correction:
        close(omitted.statistic, pg_w(x))  # oracle: pingouin's listwise deletion


def test_friedman_omit_is_the_result_on_the_complete_blocks():
    x = _with_holes(4)
    complete = x[~np.isnan(x).any(axis=1)]
    omitted = rankstats.friedman(x, nan_policy="omit")
    # oracle: scipy.stats.friedmanchisquare(*complete.T)
    expected = stats.friedmanchisquare(*complete.T)
    close(omitted.statistic, expected.statistic)
    close(omitted.pvalue, expected.pvalue)
    assert float(omitted.n_blocks) == 4


def test_omit_with_every_judge_incomplete_is_nan_with_a_warning():
    x = _scores(5, (3, 4))
    x[[0, 1, 2], [0, 1, 2]] = np.nan
    with pytest.warns(RankstatsWarning, match="fewer than two judges"):
        result = rankstats.kendall_w(x, nan_policy="omit")
    assert np.isnan(result.statistic)
    assert float(result.n_judges) == 0


# --------------------------------------------------------------------------- structure: W


def test_an_object_missing_for_every_judge_drops_out():
    x = _scores(6)
    padded = np.insert(x, 3, np.nan, axis=1)
    for policy in ("propagate", "omit", "raise"):
        result = rankstats.kendall_w(padded, nan_policy=policy)
        close(result.statistic, pg_w(x))
        close(result.pvalue, rankstats.kendall_w(x).pvalue)
        assert float(result.n_objects) == x.shape[1]


def test_a_judge_missing_for_every_object_drops_out():
    x = _scores(7)
    padded = np.insert(x, [0, 5], np.nan, axis=0)
    for policy in ("propagate", "omit", "raise"):
        result = rankstats.kendall_w(padded, nan_policy=policy)
        close(result.statistic, pg_w(x))
        assert float(result.n_judges) == x.shape[0]


def test_friedman_padding_drops_out():
    x = _scores(8)
    padded = np.insert(np.insert(x, 2, np.nan, axis=0), 6, np.nan, axis=1)
    result = rankstats.friedman(padded, nan_policy="raise")
    # oracle: scipy.stats.friedmanchisquare(*x.T)
    expected = stats.friedmanchisquare(*x.T)
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


def test_a_model_never_run_on_a_task_drops_out_of_that_task():
    rng = np.random.default_rng(9)
    scores = rng.integers(0, 6, size=(5, 4)) / 6  # model x template
    records = [
        {"model": f"m{i}", "task": task, "template": f"p{j}", "score": scores[i, j]}
        for task in ("full", "partial")
        for i in range(5)
        for j in range(4)
        if not (task == "partial" and i == 2)
    ]
    cube = rankstats.from_records(records)
    result = rankstats.kendall_w(cube, nan_policy="raise")
    close(result.statistic.sel(task="full"), pg_w(scores.T))
    close(result.statistic.sel(task="partial"), pg_w(np.delete(scores, 2, axis=0).T))
    assert int(result.n_objects.sel(task="partial")) == 4
    # the padding templates of a task with fewer templates are structure too
    friedman = rankstats.friedman(cube, nan_policy="raise")
    # oracle: scipy.stats.friedmanchisquare over the models that ran the task
    expected = stats.friedmanchisquare(*np.delete(scores, 2, axis=0).T)
    close(friedman.statistic.sel(task="partial"), expected.statistic)


# --------------------------------------------------------------------------- Kendall's tau


def test_a_constant_ranking_in_tau_is_nan_with_a_warning():
    with pytest.warns(RankstatsWarning, match="constant"):
        result = rankstats.kendall_tau([0.1, 0.5, 0.3, 0.9], [0.4, 0.4, 0.4, 0.4])
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)
    # oracle: scipy.stats.kendalltau also gives NaN for a constant input
    assert np.isnan(stats.kendalltau([0.1, 0.5, 0.3, 0.9], [0.4, 0.4, 0.4, 0.4]).statistic)


def test_a_constant_row_in_the_tau_matrix_is_nan_with_one_warning():
    rows = _scores(10, (4, 9))
    rows[2] = 0.5
    with pytest.warns(RankstatsWarning, match="3 of"):
        result = rankstats.kendall_tau_matrix(rows)
    assert np.isnan(result.statistic[2]).all()
    assert np.isnan(result.statistic[:, 2]).all()
    others = [0, 1, 3]
    for a in others:
        for b in others:
            # oracle: scipy.stats.kendalltau(rows[a], rows[b])
            close(result.statistic[a, b], stats.kendalltau(rows[a], rows[b]).statistic)


def test_tau_with_one_shared_object_is_nan_with_a_warning():
    x = np.array([0.1, np.nan, np.nan, 0.5])
    y = np.array([np.nan, 0.2, 0.3, 0.6])
    with pytest.warns(RankstatsWarning, match="fewer than two shared objects"):
        result = rankstats.kendall_tau(x, y, nan_policy="omit")
    assert np.isnan(result.statistic)
    assert float(result.n_objects) == 1


def test_tau_propagate_gives_nan_without_a_warning():
    x = np.array([0.1, 0.4, np.nan, 0.5, 0.2])
    y = np.array([0.3, 0.2, 0.3, 0.6, 0.1])
    result = rankstats.kendall_tau(x, y)
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)


def test_tau_raise_raises_missing_value_error():
    x = np.array([0.1, 0.4, np.nan, 0.5, 0.2])
    y = np.array([0.3, 0.2, 0.3, 0.6, 0.1])
    with pytest.raises(MissingValueError):
        rankstats.kendall_tau(x, y, nan_policy="raise")


def test_tau_omit_is_pairwise_deletion():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 5, 20).astype(float)
    y = rng.integers(0, 5, 20).astype(float)
    x[[0, 3]] = np.nan
    y[[3, 8, 12]] = np.nan
    both = ~np.isnan(x) & ~np.isnan(y)
    result = rankstats.kendall_tau(x, y, nan_policy="omit")
    # oracle: scipy.stats.kendalltau on the objects both observe
    expected = stats.kendalltau(x[both], y[both])
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)
    assert float(result.n_objects) == both.sum()


def test_tau_object_missing_in_both_is_absent_not_missing():
    x = np.array([0.1, 0.4, np.nan, 0.5, 0.2, 0.7])
    y = np.array([0.3, 0.2, np.nan, 0.6, 0.1, 0.5])
    result = rankstats.kendall_tau(x, y, nan_policy="raise")
    # oracle: scipy.stats.kendalltau without the absent object
    expected = stats.kendalltau(np.delete(x, 2), np.delete(y, 2))
    close(result.statistic, expected.statistic)
    close(result.pvalue, expected.pvalue)


def test_tau_matrix_padding_drops_out_and_gives_nan_rows():
    rows = _scores(12, (3, 8))
    padded = np.insert(np.insert(rows, 1, np.nan, axis=0), 4, np.nan, axis=1)
    result = rankstats.kendall_tau_matrix(padded, nan_policy="raise")
    assert np.isnan(result.statistic[1]).all()
    assert np.isnan(result.statistic[:, 1]).all()
    kept = [0, 2, 3]
    for a, ra in zip(kept, rows, strict=True):
        for b, rb in zip(kept, rows, strict=True):
            # oracle: scipy.stats.kendalltau(rows[a], rows[b])
            expected = stats.kendalltau(ra, rb)
            close(result.statistic[a, b], expected.statistic)
            close(result.pvalue[a, b], expected.pvalue)


# --------------------------------------------------------------------------- McNemar

NO_DISCORDANCE = (np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.0, 1.0]))


@pytest.mark.parametrize("method", ["exact", "midp"])
def test_mcnemar_without_discordant_pairs_is_p_one(method):
    result = rankstats.mcnemar(*NO_DISCORDANCE, method=method)
    assert float(result.pvalue) == 1.0
    assert float(result.statistic) == 0.0
    assert (float(result.b), float(result.c)) == (0, 0)


@pytest.mark.parametrize("method", ["chi2", "chi2_cc"])
def test_mcnemar_chi2_without_discordant_pairs_is_nan_with_a_warning(method):
    with pytest.warns(RankstatsWarning, match="no discordant"):
        result = rankstats.mcnemar(*NO_DISCORDANCE, method=method)
    assert np.isnan(result.statistic)
    assert np.isnan(result.pvalue)
    assert (float(result.b), float(result.c)) == (0, 0)


@pytest.mark.parametrize("method", ["exact", "midp", "chi2", "chi2_cc"])
def test_mcnemar_propagate_gives_nan(method):
    x = np.array([1.0, 0.0, np.nan, 1.0, 1.0, 0.0])
    y = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    result = rankstats.mcnemar(x, y, method=method)
    assert np.isnan(result.pvalue)


def test_mcnemar_raise_raises_missing_value_error():
    x = np.array([1.0, 0.0, np.nan, 1.0])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    with pytest.raises(MissingValueError):
        rankstats.mcnemar(x, y, nan_policy="raise")


@pytest.mark.parametrize("method", ["exact", "midp", "chi2", "chi2_cc"])
def test_mcnemar_omit_is_pairwise_deletion(method):
    rng = np.random.default_rng(13)
    x = (rng.random(40) < 0.6).astype(float)
    y = (rng.random(40) < 0.4).astype(float)
    x[[1, 7]] = np.nan
    y[[7, 20, 33]] = np.nan
    both = ~np.isnan(x) & ~np.isnan(y)
    omitted = rankstats.mcnemar(x, y, method=method, nan_policy="omit")
    reference = rankstats.mcnemar(x[both], y[both], method=method)
    close(omitted.pvalue, reference.pvalue)
    close(omitted.statistic, reference.statistic)
    assert float(omitted.n_samples) == 36
    b = np.sum((x[both] == 1) & (y[both] == 0))
    c = np.sum((x[both] == 0) & (y[both] == 1))
    assert (float(omitted.b), float(omitted.c)) == (b, c)


def test_mcnemar_sample_missing_everywhere_drops_out():
    x = np.array([1.0, 0.0, np.nan, 1.0, 1.0, 0.0, 1.0])
    y = np.array([0.0, 0.0, np.nan, 1.0, 0.0, 1.0, 0.0])
    result = rankstats.mcnemar(x, y, nan_policy="raise")
    # b = 3, c = 1: exact p = 2 * P[Binomial(4, 1/2) <= 1] = 2 * 5/16
    close(result.pvalue, 10 / 16)
    assert float(result.n_samples) == 6


# --------------------------------------------------------------------------- Cochran's Q


def test_cochran_q_all_blocks_constant_is_nan_with_a_warning():
    x = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    with pytest.warns(RankstatsWarning, match="same outcome"):
        result = rankstats.cochran_q(x)
    assert np.isnan(result.statistic)


def test_cochran_q_propagate_omit_raise():
    rng = np.random.default_rng(14)
    x = (rng.random((20, 3)) < 0.5).astype(float)
    x[4, 1] = np.nan
    assert np.isnan(rankstats.cochran_q(x).statistic)
    with pytest.raises(MissingValueError):
        rankstats.cochran_q(x, nan_policy="raise")
    omitted = rankstats.cochran_q(x, nan_policy="omit")
    close(omitted.statistic, rankstats.cochran_q(np.delete(x, 4, axis=0)).statistic)


def test_cochran_q_rejects_non_binary_scores():
    with pytest.raises(rankstats.ScoreValueError):
        rankstats.cochran_q(np.array([[0.0, 0.5], [1.0, 1.0]]))


@pytest.mark.parametrize("bad", [0.5, 2.0, -1.0, np.inf])
def test_mcnemar_and_cochran_name_a_non_binary_score(bad):
    x = np.array([[0.0, 1.0, 1.0, np.nan], [1.0, 0.0, 1.0, 0.0]])
    x[1, 2] = bad
    with pytest.raises(
        rankstats.ScoreValueError, match=rf"mcnemar: .* found {bad!r} at index \(1, 2\)"
    ):
        rankstats.mcnemar(x[0], x[1])
    with pytest.raises(
        rankstats.ScoreValueError, match=rf"cochran_q: .* found {bad!r} at index \(2, 1\)"
    ):
        rankstats.cochran_q(x.T)


def test_unknown_nan_policy_is_rejected():
    with pytest.raises(ValueError, match="nan_policy"):
        rankstats.kendall_w(_scores(15), nan_policy="ignore")
