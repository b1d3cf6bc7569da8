"""rankstats beside honestboard on one dated leaderboard, where the two overlap.

honestboard's answers were written once by tests/data/honestboard/make_oracle.py
(with honestboard in a throwaway environment; it is no dependency). Where the
methods agree by design the numbers must be equal; where they differ by design
the test asserts the relationship docs/records.md states.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import rankstats
from rankstats._kernels import records as _kr
from rankstats.stability import leaderboard, rank_sets, record_history

ORACLE = json.loads(
    (Path(__file__).parent / "data" / "honestboard" / "oracle.json").read_text(encoding="utf-8")
)
NAMES = ORACLE["systems"]
Y = np.array(ORACLE["outcomes"], dtype=float)
T = Y.shape[1]


@pytest.fixture(scope="module")
def cube():
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), Y[:, None, None, :])},
        coords={"model": NAMES, "date": ("model", ORACLE["dates"])},
        attrs={"score_kind": "binary", "higher_is_better": True},
    )


@pytest.fixture(scope="module")
def audit(cube):
    return record_history(cube)


def test_the_record_chain_is_the_same(audit):
    steps = ORACLE["record_audit"]["steps"]
    assert audit.previous.values.tolist() == [s["previous"] for s in steps]
    assert audit.record.values.tolist() == [s["new"] for s in steps]
    assert audit.n_date_models.values.tolist() == [s["date_group"] for s in steps]
    np.testing.assert_allclose(
        audit.margin.values, [s["margin"] for s in steps], rtol=0, atol=1e-12
    )
    assert audit.wins.values.tolist() == [s["b_only"] for s in steps]
    assert audit.losses.values.tolist() == [s["a_only"] for s in steps]


def test_selective_pvalues_equal_unless_the_holders_tenure_binds(audit):
    # honestboard conditions on the record event only; rankstats also on the replaced
    # record's tenure, which can only shrink the p-value (both pay the date-size factor)
    steps = ORACLE["record_audit"]["steps"]
    ours, theirs = audit.pvalue.values, np.array([s["p"] for s in steps])
    assert (ours <= theirs * (1 + 1e-10)).all()
    unbounded = ~np.isfinite(audit.upper.values)  # the first record: nothing to hold
    np.testing.assert_allclose(ours[unbounded], theirs[unbounded], rtol=1e-10)
    # tweak -> bigger, noise -> next: the tenure cuts off only margins the binomial tail
    # barely reaches (relative differences of 1e-11 and 1.5e-4)
    for name, rtol in (("bigger", 1e-10), ("next", 2e-4)):
        step = audit.record.values.tolist().index(name)
        assert ours[step] == pytest.approx(theirs[step], rel=rtol)
    # bigger -> noise: bigger held the record just above bigger-chat, so few patterns keep
    # it the holder; there the exact conditional p-value is half honestboard's
    step = audit.record.values.tolist().index("noise")
    assert ours[step] < 0.5 * theirs[step]


@pytest.mark.parametrize("step", range(4))
def test_every_step_by_hand_in_counts(audit, step):
    # the tenure from the raw counts in integers, then the binomial ratio, times the date size
    a = NAMES.index(str(audit.previous[step].item()))
    b = NAMES.index(str(audit.record[step].item()))
    counts = Y.sum(1)
    dates = np.array(ORACLE["dates"])
    total = counts[a] + counts[b]
    earlier = [j for j in range(len(NAMES)) if j not in (a, b) and dates[j] < dates[b]]
    # strictly above models of earlier dates (and date mates listed first), at least the rest
    strict = [j for j in earlier if dates[j] < dates[a] or (dates[j] == dates[a] and j < a)]
    weak = [j for j in earlier if j not in strict]
    # A's count (total - D)/2 with D = 2X - n: X at most x_high
    n, x = int(audit.n_discordant[step]), int(audit.wins[step])
    highs = [np.floor((n + total - 2 * counts[j]) / 2 - 1e-9) for j in strict]
    highs += [np.floor((n + total - 2 * counts[j]) / 2) for j in weak]
    x_high = int(min([n, *highs]))
    binom = stats.binom(n, 0.5)
    expected = (binom.sf(x - 1) - binom.sf(x_high)) / (binom.sf(n // 2) - binom.sf(x_high))
    g = int((dates == dates[b]).sum())
    assert float(audit.pvalue[step]) == pytest.approx(min(1.0, g * expected), rel=1e-10)


def test_exact_mcnemar_and_the_record_event_test_agree_pair_by_pair():
    for pair in ORACLE["compare"]:
        a, b = NAMES.index(pair["a"]), NAMES.index(pair["b"])
        tested = rankstats.mcnemar(Y[b], Y[a], dim=-1)
        assert float(tested.pvalue) == pytest.approx(pair["p_two_sided"], rel=1e-10)
        n = pair["b_only"] + pair["a_only"]
        # the record event alone: no lower bound beyond 0, no tenure
        alone = _kr.binomial_pvalues(
            np.array([n]),
            np.array([pair["b_only"]]),
            np.array([1.0 / T]),
            {
                "lower": np.zeros(1),
                "lower_strict": np.ones(1, dtype=bool),
                "upper": np.full(1, np.inf),
                "upper_strict": np.zeros(1, dtype=bool),
            },
            1e-12,
        )["pvalue"][0]
        assert alone == pytest.approx(pair["p_selective"], rel=1e-10)


def test_same_verdicts_after_holm(audit):
    steps = ORACLE["record_audit"]["steps"]
    ours = (audit.verdict == "improvement").values.tolist()
    assert ours == [s["significant_holm"] for s in steps]


def test_minimum_detectable_difference_connor_against_the_normal_approximation(cube):
    # honestboard: z * sd / sqrt(T) with the paired SD of the top two; rankstats (compare,
    # record_history): Connor's McNemar formula at their discordance
    order = np.argsort(-Y.mean(1), kind="stable")
    first, second = NAMES[order[0]], NAMES[order[1]]
    d = Y[order[0]] - Y[order[1]]
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    theirs = ORACLE["resolution_top2"]
    assert theirs["paired_sd"] == pytest.approx(d.std(ddof=1), rel=1e-10)
    assert theirs["mdd"] == pytest.approx(z * d.std(ddof=1) / np.sqrt(T), rel=1e-10)
    ours = rankstats.compare(cube, between={"model": (first, second)}, seed=0)
    psi = float(np.mean(d != 0))
    # Connor's variance psi under the null, psi - delta^2 under the alternative: a little
    # larger than the normal one with the observed variance psi - mean(d)^2
    assert float(ours.mde.item()) >= theirs["mdd"] * 0.99
    assert float(ours.mde.item()) == pytest.approx(theirs["mdd"], rel=0.05)
    needed = _kr.connor_items(np.array([0.01, 0.02]), psi, 0.05, 0.8)
    np.testing.assert_allclose(
        needed, [theirs["tasks_for_1pt"], theirs["tasks_for_2pt"]], rtol=0.05
    )


def _sigma():
    centred = Y - Y.mean(1, keepdims=True)
    return centred @ centred.T / (T * (T - 1))


@pytest.fixture(scope="module")
def simultaneous():
    return rank_sets(
        pd.Series(Y.mean(1), index=NAMES),
        covariance=pd.DataFrame(_sigma(), index=NAMES, columns=NAMES),
        n_resamples=20_000,
        seed=0,
    )


def test_simultaneous_rank_sets_contain_the_marginal_intervals(cube, simultaneous):
    # honestboard's rank intervals are marginal (each holds its own rank with 95%);
    # rankstats' hold every rank at once, so each contains honestboard's
    marginal = {row["name"]: (row["rank_lo"], row["rank_hi"]) for row in ORACLE["rank_summary"]}
    board = leaderboard(cube, n_resamples=4000, over="samples", seed=0).isel(task=0)
    for sets in (simultaneous, board):
        for name in NAMES:
            low, high = marginal[name]
            assert float(sets.rank_low.sel(model=name)) <= low
            assert float(sets.rank_high.sel(model=name)) >= high


def test_the_confidence_set_of_the_best(simultaneous):
    # honestboard: multiple comparisons with the best (one-sided, against the best only);
    # rankstats: the models whose simultaneous rank set holds rank 1, a larger family
    theirs = set(ORACLE["confidence_set_best"]["members"])
    ours = {str(m) for m in simultaneous.model.values[simultaneous.rank_low.values == 1]}
    assert theirs <= ours
    assert ours == {"next", "next-lite"}
