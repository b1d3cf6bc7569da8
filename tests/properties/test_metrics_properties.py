"""Properties of the multi-prompt metrics: MaxP, AvgP, saturation, CPS and divergence."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rankstats
from rankstats.testing import strategies as rs

METRICS = ("maxp", "avgp", "saturation", "cps")

unit = st.floats(0, 1, allow_nan=False, allow_subnormal=False)
grid = st.integers(-80, 80).map(lambda i: i / 8.0)
scales = st.sampled_from([0.25, 0.5, 2.0, 3.0, 10.0])
shifts = st.integers(-40, 40).map(lambda i: i / 4.0)


def close(actual, expected, rel=1e-9, abs_=1e-12):
    np.testing.assert_allclose(actual, expected, rtol=rel, atol=abs_)


def score_matrices(elements=unit, max_models=5, max_templates=8, min_templates=1):
    """Models x templates scores."""
    return rs.score_matrices(
        judges=(1, max_models), objects=(min_templates, max_templates), elements=elements
    )


# --------------------------------------------------------------------------- MaxP, AvgP, ...


@given(x=score_matrices())
def test_metrics_match_their_definitions(x):
    out = rankstats.prompt_metrics(x)
    np.testing.assert_array_equal(out.maxp, x.max(axis=-1))
    close(out.avgp, x.mean(axis=-1))
    close(out.saturation, 1 - (x.max(axis=-1) - x.mean(axis=-1)))
    close(out.cps, out.saturation * out.maxp)
    np.testing.assert_array_equal(out.n_templates, x.shape[-1])
    for name in METRICS:
        np.testing.assert_array_equal(getattr(rankstats, name)(x), getattr(out, name))


@given(x=score_matrices())
def test_avgp_between_worst_and_best_template(x):
    out = rankstats.prompt_metrics(x)
    slack = 1e-12
    assert np.all(out.avgp <= out.maxp + slack)
    assert np.all(out.avgp >= x.min(axis=-1) - slack)


@given(x=score_matrices())
def test_saturation_and_cps_bounds_for_unit_scores(x):
    out = rankstats.prompt_metrics(x)
    assert np.all((out.saturation >= 0) & (out.saturation <= 1))
    assert np.all(out.cps <= out.maxp)
    assert np.all(out.cps >= 0)
    # the gap to the mean is at most the gap to the worst template
    assert np.all(out.saturation >= 1 - np.ptp(x, axis=-1) - 1e-12)


@given(x=score_matrices(), seed=st.integers(0, 2**32 - 1))
def test_metrics_invariant_to_permuting_templates(x, seed):
    perm = np.random.default_rng(seed).permutation(x.shape[-1])
    before = rankstats.prompt_metrics(x)
    after = rankstats.prompt_metrics(x[:, perm])
    np.testing.assert_array_equal(after.maxp, before.maxp)
    for name in ("avgp", "saturation", "cps"):
        close(getattr(after, name), getattr(before, name))


@given(x=score_matrices(), seed=st.integers(0, 2**32 - 1))
def test_metrics_are_per_model(x, seed):
    perm = np.random.default_rng(seed).permutation(x.shape[0])
    before = rankstats.prompt_metrics(x)
    after = rankstats.prompt_metrics(x[perm])
    for name in METRICS:
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name)[perm])
    for i, row in enumerate(x):
        single = rankstats.prompt_metrics(row, model=None)
        for name in METRICS:
            assert np.ndim(getattr(single, name)) == 0
            assert getattr(single, name) == getattr(before, name)[i]


@given(values=rs.score_vectors((1, 5), elements=unit), k=st.integers(1, 10))
def test_agreeing_templates_saturate(values, k):
    x = np.repeat(values[:, None], k, axis=1)
    out = rankstats.prompt_metrics(x)
    np.testing.assert_array_equal(out.maxp, values)
    close(out.avgp, values, abs_=1e-15)
    close(out.saturation, 1.0, abs_=1e-15)
    close(out.cps, values, abs_=1e-15)


@given(x=score_matrices(grid))
def test_lower_is_better_is_the_negated_problem(x):
    lower = rankstats.prompt_metrics(x, higher_is_better=False)
    negated = rankstats.prompt_metrics(-x)
    np.testing.assert_array_equal(lower.maxp, x.min(axis=-1))
    np.testing.assert_array_equal(lower.maxp, -negated.maxp)
    close(lower.avgp, -negated.avgp)
    close(lower.saturation, negated.saturation)


@given(x=score_matrices(grid), a=scales, b=shifts, flip=st.booleans())
def test_best_and_average_are_affine_equivariant(x, a, b, flip):
    sign = -1.0 if flip else 1.0
    out = rankstats.prompt_metrics(sign * a * x + b)
    base = rankstats.prompt_metrics(x, higher_is_better=not flip)
    # a decreasing map turns the best template into the worst one
    close(out.maxp, sign * a * base.maxp + b)
    close(out.avgp, sign * a * base.avgp + b, abs_=1e-10)
    # saturation measures a gap, so it scales with |a| and ignores shifts
    close(1 - out.saturation, a * (1 - base.saturation), abs_=1e-10)


@given(x=score_matrices(min_templates=2), data=st.data())
def test_valid_mask_selects_templates(x, data):
    valid = data.draw(hnp.arrays(np.bool_, x.shape[-1], elements=st.booleans()), label="valid")
    assume(valid.any())
    masked = rankstats.prompt_metrics(x, valid=valid)
    selected = rankstats.prompt_metrics(x[:, valid])
    for name in ("maxp", "n_templates"):
        np.testing.assert_array_equal(getattr(masked, name), getattr(selected, name))
    for name in ("avgp", "saturation", "cps"):
        close(getattr(masked, name), getattr(selected, name))


@given(x=score_matrices(min_templates=2), data=st.data())
def test_omit_skips_missing_templates_per_model(x, data):
    holes = data.draw(rs.missing_masks(x.shape), label="holes")
    with_holes = np.where(holes, np.nan, x)
    omitted = rankstats.prompt_metrics(with_holes, nan_policy="omit")
    propagated = rankstats.prompt_metrics(with_holes)
    present_templates = ~holes.all(axis=0)
    for i, (row, hole) in enumerate(zip(x, holes, strict=True)):
        kept = row[~hole]
        if kept.size == 0:
            assert np.isnan(omitted.maxp[i]) and omitted.n_templates[i] == 0
            continue
        assert omitted.maxp[i] == kept.max()
        close(omitted.avgp[i], kept.mean())
        assert omitted.n_templates[i] == kept.size
        # under propagate a model missing a template that others have gets NaN
        assert np.isnan(propagated.avgp[i]) == bool((hole & present_templates).any())


@given(data=st.data())
def test_metrics_are_computed_slice_by_slice(data):
    x = data.draw(
        rs.score_arrays(hnp.array_shapes(min_dims=3, max_dims=4, max_side=4), elements=unit),
        label="x",
    )
    batched = rankstats.prompt_metrics(x)
    flat = x.reshape(-1, *x.shape[-2:])
    for i, block in enumerate(flat):
        single = rankstats.prompt_metrics(block)
        for name in METRICS:
            np.testing.assert_array_equal(
                getattr(batched, name).reshape(-1, x.shape[-2])[i], getattr(single, name)
            )


# --------------------------------------------------------------------------- divergence


@st.composite
def divergence_inputs(draw, ddof=1):
    """Scores on a grid, a template mask with an original and enough varied paraphrases."""
    models = draw(st.integers(1, 4), label="models")
    n_original = draw(st.integers(1, 3), label="originals")
    n_paraphrases = draw(st.integers(ddof + 1, 8), label="paraphrases")
    original = np.array([True] * n_original + [False] * n_paraphrases)
    original = draw(st.permutations(original.tolist()), label="order")
    original = np.asarray(original, dtype=bool)
    x = draw(rs.score_matrices(judges=models, objects=original.size, elements=grid), label="x")
    assume((np.ptp(x[:, ~original], axis=-1) > 0).all())
    return x, original


@given(inputs=divergence_inputs(), ddof=st.sampled_from([0, 1]))
def test_divergence_matches_its_definition(inputs, ddof):
    x, original = inputs
    r = rankstats.divergence(x, original=original, ddof=ddof)
    para = x[:, ~original]
    expected = (x[:, original].mean(-1) - para.mean(-1)) / para.std(-1, ddof=ddof)
    close(r.statistic, expected, abs_=1e-12)
    close(r.original, x[:, original].mean(-1))
    close(r.paraphrase_mean, para.mean(-1))
    close(r.paraphrase_std, para.std(-1, ddof=ddof))
    np.testing.assert_array_equal(r.n_original, original.sum())
    np.testing.assert_array_equal(r.n_paraphrases, (~original).sum())


@given(inputs=divergence_inputs(), a=scales, b=shifts)
def test_divergence_invariant_to_increasing_affine_maps(inputs, a, b):
    x, original = inputs
    before = rankstats.divergence(x, original=original).statistic
    after = rankstats.divergence(a * x + b, original=original).statistic
    close(after, before, rel=1e-9, abs_=1e-9)


@given(inputs=divergence_inputs(), a=scales, b=shifts)
def test_divergence_flips_sign_under_decreasing_affine_maps(inputs, a, b):
    x, original = inputs
    before = rankstats.divergence(x, original=original).statistic
    after = rankstats.divergence(-a * x + b, original=original).statistic
    close(after, -before, rel=1e-9, abs_=1e-9)


@given(inputs=divergence_inputs(), seed=st.integers(0, 2**32 - 1))
def test_divergence_invariant_to_permuting_templates(inputs, seed):
    x, original = inputs
    perm = np.random.default_rng(seed).permutation(original.size)
    before = rankstats.divergence(x, original=original)
    after = rankstats.divergence(x[:, perm], original=original[perm])
    close(after.statistic, before.statistic, abs_=1e-12)
    close(after.paraphrase_std, before.paraphrase_std, abs_=1e-12)


@given(inputs=divergence_inputs(), data=st.data())
def test_divergence_valid_mask_selects_templates(inputs, data):
    x, original = inputs
    valid = data.draw(hnp.arrays(np.bool_, original.size, elements=st.booleans()), label="valid")
    kept_original = original[valid]
    assume(kept_original.any() and (~kept_original).sum() >= 2)
    assume((np.ptp(x[:, valid][:, ~kept_original], axis=-1) > 0).all())
    masked = rankstats.divergence(x, original=original, valid=valid)
    selected = rankstats.divergence(x[:, valid], original=kept_original)
    close(masked.statistic, selected.statistic, abs_=1e-12)
    np.testing.assert_array_equal(masked.n_paraphrases, selected.n_paraphrases)


def test_divergence_is_nan_with_a_warning_for_constant_paraphrases():
    x = np.array([[0.9, 0.5, 0.5, 0.5]])
    with pytest.warns(rankstats.RankstatsWarning, match="equal"):
        result = rankstats.divergence(x, original=np.array([True, False, False, False]))
    assert math.isnan(result.statistic[0])


@given(x=score_matrices(max_models=4, max_templates=6))
def test_labelled_prompt_metrics_match_numpy(x):
    xr = pytest.importorskip("xarray")
    labelled = xr.DataArray(x.T, dims=("template", "model"))
    out = rankstats.prompt_metrics(labelled)
    expected = rankstats.prompt_metrics(x)
    for name in METRICS:
        assert out[name].dims == ("model",)
        np.testing.assert_array_equal(out[name].values, getattr(expected, name))
