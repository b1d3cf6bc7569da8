"""Properties of Kendall's W and Kendall's tau (pairs and all-pairs matrices)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats.testing import strategies as rs

TIES = ("average", "min", "max", "dense", "ordinal")
FEW = max(5, settings.default.max_examples // 3)

floats = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def close(actual, expected, rel=1e-9, abs_=1e-12):
    np.testing.assert_allclose(actual, expected, rtol=rel, atol=abs_, equal_nan=False)


def blocks(values="any", *, judges=(2, 6), objects=(2, 7), ties=None, rows="not_all", slices=None):
    """Judges x objects scores; by default some judge does not tie every object.

    ``values="any"``: the public strategy's kinds and tie densities, or floats; None: its
    kinds only; else a strategy of values.
    """
    options = {"judges": judges, "objects": objects, "ties": ties, "slices": slices}
    if values == "any":
        return st.one_of(blocks(None, rows=rows, **options), blocks(floats, rows=rows, **options))
    return rs.score_matrices(
        elements=values,
        kind=None if values is None else "continuous",
        constant_rows=rows,
        **options,
    )


def tie_term(row):
    _, counts = np.unique(row, return_counts=True)
    return float((counts**3 - counts).sum())


def kendall_w_reference(x, correction=True):
    """Kendall's W from its textbook definition, with scipy's average ranks."""
    m, n = x.shape
    rank_sums = stats.rankdata(-x, axis=1).sum(axis=0)
    s = ((rank_sums - rank_sums.mean()) ** 2).sum()
    ties = sum(tie_term(row) for row in x) if correction else 0.0
    return 12.0 * s / (m**2 * (n**3 - n) - m * ties)


def concordant_minus_discordant(x, y):
    total = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            total += np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
    return total


# --------------------------------------------------------------------------- Kendall's W


@given(x=blocks(), ties=st.sampled_from(TIES), correction=st.booleans())
def test_w_lies_in_unit_interval(x, ties, correction):
    # the uncorrected form assumes average ranks; with other tie methods it is unbounded
    assume(correction or ties == "average" or all(np.unique(row).size == row.size for row in x))
    result = rankstats.kendall_w(x, ties=ties, tie_correction=correction)
    assert 0.0 <= result.statistic <= 1.0
    assert 0.0 <= result.pvalue <= 1.0
    assert 0.0 <= result.f_pvalue <= 1.0
    assert result.n_judges == x.shape[0]
    assert result.n_objects == x.shape[1]


def test_uncorrected_w_with_min_ranks_is_returned_as_computed():
    # two judges both score [1, 1, 0]; min ranks [1, 1, 3]; R = [2, 2, 6], S = 32/3,
    # and the uncorrected denominator m^2 (n^3 - n) / 12 = 8 gives W = 4/3
    x = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    close(rankstats.kendall_w(x, ties="min", tie_correction=False).statistic, 4 / 3)
    close(rankstats.kendall_w(x, ties="min").statistic, 1.0)


@given(x=blocks())
def test_corrected_w_is_bounded_without_clipping(x):
    # Cauchy–Schwarz bounds the tie-corrected W by 1 for every ties method, so the
    # reference formula (which clips nothing) must agree and stay in [0, 1].
    w = kendall_w_reference(x)
    assert -1e-12 <= w <= 1 + 1e-12
    close(rankstats.kendall_w(x).statistic, min(max(w, 0.0), 1.0))


@given(x=blocks(), correction=st.booleans())
def test_w_matches_textbook_formula(x, correction):
    close(
        rankstats.kendall_w(x, tie_correction=correction).statistic,
        kendall_w_reference(x, correction),
    )


@given(x=blocks(), ties=st.sampled_from(TIES), correction=st.booleans())
def test_chi2_and_f_identities(x, ties, correction):
    r = rankstats.kendall_w(x, ties=ties, tie_correction=correction)
    m, n = x.shape
    close(r.chi2, m * (n - 1) * r.statistic)
    assert r.dof == n - 1
    close(r.pvalue, stats.chi2.sf(r.chi2, n - 1))
    assert (r.f_dof1, r.f_dof2) == (n - 1, (m - 1) * (n - 1))
    if r.statistic < 1:
        close(r.f, (m - 1) * r.statistic / (1 - r.statistic))
        close(r.f_pvalue, stats.f.sf(r.f, n - 1, (m - 1) * (n - 1)))
    else:
        assert r.f == np.inf
        assert r.f_pvalue == 0.0
    close(r.f_kbs_dof1, n - 1 - 2 / m)
    close(r.f_kbs_dof2, (m - 1) * (n - 1 - 2 / m))


@given(
    x=blocks(), ties=st.sampled_from(TIES), correction=st.booleans(), seed=st.integers(0, 2**32 - 1)
)
def test_w_invariant_to_permuting_judges(x, ties, correction, seed):
    perm = np.random.default_rng(seed).permutation(x.shape[0])
    close(
        rankstats.kendall_w(x[perm], ties=ties, tie_correction=correction).statistic,
        rankstats.kendall_w(x, ties=ties, tie_correction=correction).statistic,
    )


# "ordinal" breaks ties by position, so it is deliberately left out here.
@given(
    x=blocks(),
    ties=st.sampled_from(TIES[:4]),
    correction=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_w_invariant_to_permuting_objects(x, ties, correction, seed):
    perm = np.random.default_rng(seed).permutation(x.shape[1])
    close(
        rankstats.kendall_w(x[:, perm], ties=ties, tie_correction=correction).statistic,
        rankstats.kendall_w(x, ties=ties, tie_correction=correction).statistic,
    )


@given(x=blocks(None), ties=st.sampled_from(TIES), correction=st.booleans(), data=st.data())
def test_w_invariant_to_monotone_transform_per_judge(x, ties, correction, data):
    picks = data.draw(
        st.lists(rs.monotone_transforms(), min_size=x.shape[0], max_size=x.shape[0]),
        label="transforms",
    )
    transformed = np.stack([p(row) for p, row in zip(picks, x, strict=True)])
    before = rankstats.kendall_w(x, ties=ties, tie_correction=correction)
    after = rankstats.kendall_w(transformed, ties=ties, tie_correction=correction)
    assert after.statistic == before.statistic
    assert after.pvalue == before.pvalue


@given(
    row=rs.score_vectors((2, 8), kind=None, ties=None, constant=False),
    ties=st.sampled_from(TIES),
    data=st.data(),
)
def test_w_is_one_when_all_judges_agree(row, ties, data):
    picks = data.draw(
        st.lists(rs.monotone_transforms(), min_size=2, max_size=6), label="transforms"
    )
    x = np.stack([p(row) for p in picks])
    close(rankstats.kendall_w(x, ties=ties).statistic, 1.0)


@given(x=blocks())
def test_correction_never_lowers_w(x):
    corrected = rankstats.kendall_w(x, tie_correction=True).statistic
    uncorrected = rankstats.kendall_w(x, tie_correction=False).statistic
    assert corrected >= uncorrected * (1 - 1e-12)
    has_ties = any(np.unique(row).size < row.size for row in x)
    if has_ties:
        assert corrected > uncorrected or uncorrected == 0
    else:
        close(corrected, uncorrected)


@given(x=blocks(floats, judges=2, objects=(3, 12), ties="none"))
def test_w_of_two_judges_is_shifted_spearman(x):
    rho = stats.spearmanr(x[0], x[1]).statistic
    close(rankstats.kendall_w(x).statistic, (1 + rho) / 2, abs_=1e-12)


@given(x=blocks(), ties=st.sampled_from(TIES))
def test_w_axes_can_be_given_explicitly(x, ties):
    expected = rankstats.kendall_w(x, ties=ties)
    swapped = rankstats.kendall_w(x.T, judges=1, objects=0, ties=ties)
    assert swapped.statistic == expected.statistic
    assert swapped.pvalue == expected.pvalue


@given(
    x=blocks(judges=(2, 5), objects=(2, 6), slices=(1, 4)),
    ties=st.sampled_from(TIES),
    correction=st.booleans(),
)
def test_w_is_computed_slice_by_slice(x, ties, correction):
    k = x.shape[0]
    batched = rankstats.kendall_w(x, ties=ties, tie_correction=correction)
    assert batched.statistic.shape == (k,)
    for i in range(k):
        single = rankstats.kendall_w(x[i], ties=ties, tie_correction=correction)
        close(batched.statistic[i], single.statistic, rel=1e-12)
        close(batched.pvalue[i], single.pvalue, rel=1e-9)


@given(x=blocks(None, judges=(2, 7), ties=5), data=st.data())
def test_w_omit_drops_incomplete_judges(x, data):
    holes = data.draw(rs.missing_masks(x.shape), label="holes")
    with_holes = np.where(holes, np.nan, x)
    objects = ~np.isnan(with_holes).all(axis=0)
    judges = ~np.isnan(with_holes).all(axis=1)
    complete = judges & ~np.isnan(with_holes[:, objects]).any(axis=1)
    kept = with_holes[complete][:, objects]
    assume(kept.shape[0] >= 2 and kept.shape[1] >= 2 and np.ptp(kept, axis=1).max() > 0)
    omitted = rankstats.kendall_w(with_holes, nan_policy="omit")
    expected = rankstats.kendall_w(kept)
    assert omitted.statistic == expected.statistic
    assert (omitted.n_judges, omitted.n_objects) == kept.shape
    propagated = rankstats.kendall_w(with_holes, nan_policy="propagate")
    assert np.isnan(propagated.statistic) == bool((judges & ~complete).any())


@settings(max_examples=FEW)
@given(x=blocks(None, judges=(3, 6), objects=(3, 6), ties=5))
def test_w_and_f_test_match_pingouin(x):
    pingouin = pytest.importorskip("pingouin")
    assume(rankstats.kendall_w(x).statistic < 1)  # pingouin divides by 1 - W for its F
    frame = pd.DataFrame(x, columns=[f"t{j}" for j in range(x.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        chisq = pingouin.friedman(frame)
        f_test = pingouin.friedman(frame, method="f")
    r = rankstats.kendall_w(x)
    close(r.statistic, float(chisq["W"].iloc[0]), abs_=1e-12)
    close(r.chi2, float(chisq["Q"].iloc[0]), abs_=1e-10)
    close(r.pvalue, float(chisq["p_unc"].iloc[0]), abs_=1e-12)
    close(r.f_kbs_dof1, float(f_test["ddof1"].iloc[0]))
    close(r.f_kbs_pvalue, float(f_test["p_unc"].iloc[0]), rel=1e-7, abs_=1e-12)


def test_w_is_nan_with_a_warning_when_every_judge_ties_everything():
    with pytest.warns(rankstats.RankstatsWarning, match="tie"):
        result = rankstats.kendall_w(np.ones((3, 4)))
    assert math.isnan(result.statistic)


# --------------------------------------------------------------------------- Kendall's tau

TAU_VARIANTS = ("a", "b", "c")


def tau_pairs(values=None, *, kind=None, n=(2, 25), ties=5):
    """Two rankings (x, y) of the same objects, neither constant."""
    return rs.score_matrices(
        judges=2, objects=n, kind=kind, ties=ties, elements=values, constant_rows="none"
    ).map(tuple)


tied_or_not = st.one_of(
    tau_pairs(), tau_pairs(floats, kind="continuous", ties="none"), tau_pairs(kind="binary")
)


@given(pair=tied_or_not, variant=st.sampled_from(TAU_VARIANTS))
def test_tau_bounds_and_symmetry(pair, variant):
    x, y = pair
    xy = rankstats.kendall_tau(x, y, variant=variant)
    yx = rankstats.kendall_tau(y, x, variant=variant)
    assert -1.0 <= xy.statistic <= 1.0
    assert 0.0 <= xy.pvalue <= 1.0
    # equal up to rounding: tau-b divides by the two tie terms in argument order
    close(xy.statistic, yx.statistic, rel=1e-14, abs_=1e-15)
    close(xy.pvalue, yx.pvalue, rel=1e-12, abs_=0)
    assert xy.n_objects == len(x)


@given(pair=tied_or_not)
def test_tau_of_a_ranking_with_itself_is_one(pair):
    x, _ = pair
    assert rankstats.kendall_tau(x, x).statistic == pytest.approx(1.0, rel=1e-12)
    if np.unique(x).size == x.size:
        for variant in TAU_VARIANTS:
            close(rankstats.kendall_tau(x, x, variant=variant).statistic, 1.0)


@given(pair=tied_or_not, variant=st.sampled_from(TAU_VARIANTS))
def test_tau_flips_sign_with_reversed_ranking(pair, variant):
    x, y = pair
    plain = rankstats.kendall_tau(x, y, variant=variant)
    flipped = rankstats.kendall_tau(x, -y, variant=variant)
    assert flipped.statistic == -plain.statistic
    close(flipped.pvalue, plain.pvalue, rel=1e-12)


@given(
    pair=tau_pairs(ties=None),
    variant=st.sampled_from(TAU_VARIANTS),
    f=rs.monotone_transforms(),
    g=rs.monotone_transforms(),
)
def test_tau_invariant_under_monotone_transforms(pair, variant, f, g):
    x, y = pair
    before = rankstats.kendall_tau(x, y, variant=variant)
    after = rankstats.kendall_tau(f(x), g(y), variant=variant)
    assert after.statistic == before.statistic
    assert after.pvalue == before.pvalue


@given(pair=tied_or_not)
def test_tau_a_counts_concordant_minus_discordant_pairs(pair):
    x, y = pair
    n = len(x)
    close(
        rankstats.kendall_tau(x, y, variant="a").statistic,
        concordant_minus_discordant(x, y) / (n * (n - 1) / 2),
        abs_=1e-15,
    )


@settings(max_examples=2 * settings.default.max_examples)
@given(
    pair=st.one_of(
        tau_pairs(n=(2, 40)),
        tau_pairs(floats, kind="continuous", n=(2, 40), ties="none"),
        tau_pairs(kind="binary", n=(2, 40)),
        tau_pairs(kind="ranks", n=(10, 60), ties=21),
    ),
    variant=st.sampled_from(("b", "c")),
)
def test_tau_matches_scipy(pair, variant):
    x, y = pair
    expected = stats.kendalltau(x, y, variant=variant)
    actual = rankstats.kendall_tau(x, y, variant=variant)
    close(actual.statistic, expected.statistic, abs_=1e-15)
    close(actual.pvalue, expected.pvalue, abs_=0)


@given(
    pair=tau_pairs(floats, kind="continuous", n=(3, 30), ties="none"),
    method=st.sampled_from(("exact", "asymptotic")),
)
def test_tau_pvalue_methods_match_scipy(pair, method):
    x, y = pair
    expected = stats.kendalltau(x, y, method=method)
    close(rankstats.kendall_tau(x, y, method=method).pvalue, expected.pvalue, abs_=0)


@given(pair=tau_pairs(n=(3, 20)), variant=st.sampled_from(TAU_VARIANTS), data=st.data())
def test_tau_omit_is_pairwise_deletion(pair, variant, data):
    x, y = pair
    holes_x = data.draw(rs.missing_masks(x.shape), label="holes_x")
    holes_y = data.draw(rs.missing_masks(y.shape), label="holes_y")
    both = ~holes_x & ~holes_y
    assume(both.sum() >= 2 and np.ptp(x[both]) > 0 and np.ptp(y[both]) > 0)
    actual = rankstats.kendall_tau(
        np.where(holes_x, np.nan, x),
        np.where(holes_y, np.nan, y),
        variant=variant,
        nan_policy="omit",
    )
    expected = rankstats.kendall_tau(x[both], y[both], variant=variant)
    close(actual.statistic, expected.statistic, rel=1e-12, abs_=1e-15)
    close(actual.pvalue, expected.pvalue, rel=1e-12, abs_=0)
    assert actual.n_objects == both.sum()


def tau_rows(max_rows=5, max_n=12, slices=None, kind=None):
    """Rows ranking the same objects (the judges of a tau matrix), none constant."""
    return rs.score_matrices(
        judges=(2, max_rows),
        objects=(2, max_n),
        kind=kind,
        ties="some",
        constant_rows="none",
        slices=slices,
    )


@given(x=tau_rows(), variant=st.sampled_from(TAU_VARIANTS))
def test_tau_matrix_is_symmetric_with_unit_diagonal(x, variant):
    r = rankstats.kendall_tau_matrix(x, variant=variant)
    m = x.shape[0]
    assert r.statistic.shape == (m, m)
    close(r.statistic, r.statistic.T, rel=1e-14, abs_=1e-15)
    close(r.pvalue, r.pvalue.T, rel=1e-12, abs_=0)
    assert np.all(np.abs(r.statistic) <= 1)
    np.testing.assert_array_equal(r.n_objects, x.shape[1])
    if variant == "b":
        close(np.diag(r.statistic), np.ones(m), abs_=0)


@given(x=tau_rows(max_rows=4, max_n=8))
@example(x=np.array([[0.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 2.0, 2.0]]))
def test_tau_matrix_is_exactly_symmetric(x):
    tau = rankstats.kendall_tau_matrix(x).statistic
    np.testing.assert_array_equal(tau, tau.T)


@given(x=tau_rows(), variant=st.sampled_from(TAU_VARIANTS))
def test_tau_matrix_entries_equal_pairwise_calls(x, variant):
    r = rankstats.kendall_tau_matrix(x, variant=variant)
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            pair = rankstats.kendall_tau(x[i], x[j], variant=variant)
            close(r.statistic[i, j], pair.statistic, rel=1e-12, abs_=1e-15)
            close(r.pvalue[i, j], pair.pvalue, rel=1e-12, abs_=0)


@given(x=tau_rows(max_rows=4, max_n=10, slices=(1, 3)), variant=st.sampled_from(TAU_VARIANTS))
def test_tau_matrix_is_computed_slice_by_slice(x, variant):
    k = x.shape[0]
    batched = rankstats.kendall_tau_matrix(x, variant=variant)
    for i in range(k):
        single = rankstats.kendall_tau_matrix(x[i], variant=variant)
        close(batched.statistic[i], single.statistic, rel=1e-12, abs_=1e-15)
        close(batched.pvalue[i], single.pvalue, rel=1e-12, abs_=0)


def test_tau_is_nan_with_a_warning_for_a_constant_ranking():
    with pytest.warns(rankstats.RankstatsWarning, match="constant"):
        result = rankstats.kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert math.isnan(result.statistic)


@given(
    x=tau_rows(max_rows=4, max_n=10, kind="continuous"),
    variant=st.sampled_from(TAU_VARIANTS),
    data=st.data(),
)
def test_tau_matrix_omit_equals_pairwise_deletion(x, variant, data):
    holes = data.draw(rs.missing_masks(x.shape), label="holes")
    m = x.shape[0]
    for i in range(m):
        for j in range(i + 1, m):
            both = ~holes[i] & ~holes[j]
            assume(both.sum() >= 2 and np.ptp(x[i][both]) > 0 and np.ptp(x[j][both]) > 0)
    r = rankstats.kendall_tau_matrix(np.where(holes, np.nan, x), variant=variant, nan_policy="omit")
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            both = ~holes[i] & ~holes[j]
            pair = rankstats.kendall_tau(x[i][both], x[j][both], variant=variant)
            close(r.statistic[i, j], pair.statistic, rel=1e-12, abs_=1e-15)
            close(r.pvalue[i, j], pair.pvalue, rel=1e-12, abs_=0)
            assert r.n_objects[i, j] == both.sum()


@given(n=st.integers(2, 80), swap=st.integers(-1, 78), seed=st.integers(0, 2**32 - 1))
def test_tau_exact_pvalue_of_nearly_identical_orders_matches_scipy(n, swap, seed):
    # at most one discordant pair: scipy's exact branch even beyond 33 objects
    x = np.random.default_rng(seed).permutation(n).astype(float)
    y = x.copy()
    order = np.argsort(x)
    if 0 <= swap < n - 1:
        a, b = order[swap], order[swap + 1]
        y[a], y[b] = y[b], y[a]
    expected = stats.kendalltau(x, y)
    actual = rankstats.kendall_tau(x, y)
    close(actual.statistic, expected.statistic, abs_=1e-15)
    close(actual.pvalue, expected.pvalue, abs_=0)


@given(x=tau_rows(max_rows=4, max_n=6, slices=(1, 3)), ties=st.sampled_from(TIES))
def test_labelled_kendall_w_and_tau_matrix_match_numpy(x, ties):
    xr = pytest.importorskip("xarray")
    labelled = xr.DataArray(x, dims=("task", "template", "model"))
    w = rankstats.kendall_w(labelled, ties=ties)
    assert w.statistic.dims == ("task",)
    np.testing.assert_array_equal(w.statistic.values, rankstats.kendall_w(x, ties=ties).statistic)
    # the roles can be named in any order of the input's dimensions
    swapped = rankstats.kendall_w(labelled.transpose("model", "task", "template"), ties=ties)
    np.testing.assert_array_equal(swapped.statistic.values, w.statistic.values)
    tau = rankstats.kendall_tau_matrix(labelled)
    assert tau.statistic.dims == ("task", "template", "template_b")
    np.testing.assert_array_equal(tau.statistic.values, rankstats.kendall_tau_matrix(x).statistic)
