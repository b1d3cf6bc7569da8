"""Properties of the subsampling curves and of clustered standard errors."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import rankstats
from rankstats._kernels.subsample import subsample_curves
from rankstats.errors import RankstatsWarning
from rankstats.stability.needed import smallest_k, subset_agreement
from rankstats.statistics.clustered import clustered_difference, clustered_se
from rankstats.testing import strategies as rs

FEW = max(5, settings.default.max_examples // 3)
# accuracies in twentieths: many ties
ACCURACIES = {"kind": "proportion", "ties": 21}


def _means_differ(x):
    means = np.round(x.mean(0) / max(np.abs(x).max(), 1e-300), 10)
    return np.unique(means).size > 1


def blocks(min_units=2, max_units=9, min_objects=2, max_objects=6):
    """(units, objects) scores whose all-unit means do not tie every object."""
    return rs.score_matrices(
        judges=(min_units, max_units), objects=(min_objects, max_objects), **ACCURACIES
    ).filter(_means_differ)


def _curves(x, seed=0, draws=12, **kwargs):
    keys = np.random.default_rng(seed).random((draws, x.shape[-2]))
    ks = np.arange(1, x.shape[-2] + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        return subsample_curves(x, keys, ks, [0.1, 0.5, 0.9], **kwargs)


@given(blocks())
def test_all_units_agree_perfectly_with_themselves(x):
    out = _curves(x)
    assert (out["tau"][-1] == 1.0).all()
    assert out["p_tau"][-1] == 1.0 and out["rank_width_mean"][-1] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        full = rankstats.kendall_w(x).statistic
    np.testing.assert_allclose(out["w"][-1], full, rtol=1e-12, equal_nan=True)


@given(blocks())
def test_bounds(x):
    out = _curves(x)
    tau, w = out["tau"], out["w"]
    assert np.all((tau[~np.isnan(tau)] >= -1) & (tau[~np.isnan(tau)] <= 1))
    assert np.all((w[~np.isnan(w)] >= 0) & (w[~np.isnan(w)] <= 1))
    assert np.isnan(w[0]).all()  # W of one template is undefined
    assert np.all((out["p_tau"] >= 0) & (out["p_tau"] <= 1))
    assert np.all(out["rank_width"] >= 0) and np.all(out["rank_lower"] <= out["rank_upper"])
    q = out["tau_quantile"]
    defined = ~np.isnan(q).any(-1)
    assert np.all(np.diff(q[defined], axis=-1) >= 0)


@given(blocks(), st.randoms(use_true_random=False))
def test_invariant_to_the_order_of_the_objects(x, random):
    permutation = list(range(x.shape[1]))
    random.shuffle(permutation)
    out, permuted = _curves(x), _curves(x[:, permutation])
    for name in ("tau", "w", "p_tau", "tau_quantile", "rank_width_mean", "needed"):
        np.testing.assert_allclose(
            permuted[name], out[name], rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name
        )
    np.testing.assert_array_equal(permuted["rank_lower"], out["rank_lower"][:, permutation])


@given(blocks(), st.floats(0.1, 10.0), st.floats(-5.0, 5.0))
def test_invariant_to_increasing_affine_maps(x, a, b):
    out, mapped = _curves(x), _curves(a * x + b)
    for name in ("tau", "w", "p_tau", "rank_width"):
        np.testing.assert_allclose(
            mapped[name], out[name], rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=name
        )


@given(
    blocks(min_units=3),
    st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=2),
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2),
)
@settings(max_examples=FEW)
def test_smallest_k_is_monotone_in_the_target(x, targets, probabilities):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        curves = subset_agreement(x, n_resamples=15, seed=1)
    low, high = sorted(targets)
    p_low, p_high = sorted(probabilities)
    inf = lambda v: np.where(np.isnan(v), np.inf, v)  # noqa: E731
    assert inf(smallest_k(curves, low, p_low)) <= inf(smallest_k(curves, high, p_low))
    assert inf(smallest_k(curves, low, p_low)) <= inf(smallest_k(curves, low, p_high))
    assert inf(smallest_k(curves, high, p_high)) <= x.shape[0]  # k = all always reaches


def item_scores(min_samples=2, max_samples=12):
    return rs.score_vectors((min_samples, max_samples), constant=False, **ACCURACIES)


@given(item_scores(), st.integers(1, 6))
def test_templates_that_agree_on_every_item_inflate_the_variance(y, templates):
    x = np.broadcast_to(y, (templates, y.size))
    out = clustered_se(x)
    cells, g = templates * y.size, y.size
    np.testing.assert_allclose(out.design_effect, (cells - 1) / (g - 1), rtol=1e-9)
    assert out.se_cluster >= out.se_naive * (1 - 1e-12)


@given(rs.score_matrices(judges=(2, 5), objects=(2, 9), **ACCURACIES), st.floats(-3.0, 3.0))
def test_clustered_se_is_shift_invariant(x, shift):
    assume(np.ptp(x) > 0 and np.ptp(x.sum(0)) > 0)
    out, shifted = clustered_se(x), clustered_se(x + shift)
    np.testing.assert_allclose(shifted.mean_score, out.mean_score + shift, rtol=1e-9, atol=1e-12)
    for name in ("se_naive", "se_cluster"):
        np.testing.assert_allclose(
            getattr(shifted, name), getattr(out, name), rtol=1e-7, atol=1e-12
        )


@given(rs.score_vectors((2, 9), **ACCURACIES))
def test_one_template_has_design_effect_one(y):
    assume(np.ptp(y) > 0)
    out = clustered_se(y[None, :])
    np.testing.assert_allclose(out.design_effect, 1.0, rtol=1e-12)


@given(
    rs.score_arrays(
        st.tuples(st.integers(2, 4), st.integers(1, 4), st.integers(2, 8)), **ACCURACIES
    )
)
@settings(max_examples=FEW)
def test_difference_equals_the_mean_of_the_differences(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        pairs = clustered_difference(x)
        direct = clustered_se(x[0] - x[1])
    np.testing.assert_allclose(pairs.difference[0, 1], direct.mean_score, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        pairs.se_cluster[0, 1], direct.se_cluster, rtol=1e-9, atol=1e-12, equal_nan=True
    )
    np.testing.assert_allclose(
        pairs.se_naive[0, 1], direct.se_naive, rtol=1e-9, atol=1e-12, equal_nan=True
    )
    np.testing.assert_allclose(pairs.difference, -pairs.difference.T, rtol=0, atol=1e-12)


@given(blocks(), st.sampled_from(["min", "max", "dense", "ordinal"]), st.booleans())
@settings(max_examples=FEW)
def test_ties_change_w_and_the_intervals_not_tau(x, ties, correction):
    out = _curves(x, ties=ties, correction=correction)
    average = _curves(x)
    np.testing.assert_array_equal(out["tau"], average["tau"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        full = rankstats.kendall_w(x, ties=ties, tie_correction=correction).statistic
    np.testing.assert_allclose(out["w"][-1], full, rtol=1e-12, equal_nan=True)
