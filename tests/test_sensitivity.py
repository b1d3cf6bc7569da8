"""ProSA's PromptSensiScore and the samples most sensitive to wording, against direct loops."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import rankstats
from rankstats._kernels import sensitivity as kernel
from rankstats.errors import MissingValueError


def loop_score(block: np.ndarray) -> float:
    """Each sample's mean |x_a - x_b| over the pairs of its observed templates, then the mean."""
    per_sample = []
    for s in range(block.shape[1]):
        column = block[:, s]
        seen = column[~np.isnan(column)]
        pairs = [abs(a - b) for a, b in combinations(seen, 2)]
        if pairs:
            per_sample.append(sum(pairs) / len(pairs))
    return float(np.mean(per_sample)) if per_sample else np.nan


def random_cube(seed: int, binary: bool, models=4, tasks=3, templates=9, samples=13):
    rng = np.random.default_rng(seed)
    shape = (models, tasks, templates, samples)
    values = (
        (rng.random(shape) < rng.random((models, tasks, templates, 1))).astype(float)
        if binary
        else rng.random(shape)
    )
    return xr.DataArray(
        values,
        dims=("model", "task", "template", "sample"),
        coords={"model": [f"m{i}" for i in range(models)], "task": [f"t{i}" for i in range(tasks)]},
    )


@pytest.mark.parametrize("binary", [True, False])
def test_equals_a_direct_loop_over_samples_and_template_pairs(binary):
    cube = random_cube(0, binary)
    got = rankstats.prompt_sensitivity(cube)
    for m in range(cube.sizes["model"]):
        for t in range(cube.sizes["task"]):
            expected = loop_score(cube.values[m, t])
            assert abs(float(got.isel(model=m, task=t)) - expected) < 1e-12


@pytest.mark.parametrize("binary", [True, False])
def test_holes_omitted_pairwise_equal_the_loop(binary):
    cube = random_cube(1, binary)
    rng = np.random.default_rng(2)
    cube = cube.where(rng.random(cube.shape) > 0.2)
    got = rankstats.prompt_sensitivity(cube, nan_policy="omit")
    for m in range(cube.sizes["model"]):
        for t in range(cube.sizes["task"]):
            assert abs(float(got.isel(model=m, task=t)) - loop_score(cube.values[m, t])) < 1e-12
    assert rankstats.prompt_sensitivity(cube).isnull().all()
    with pytest.raises(MissingValueError, match="prompt_sensitivity"):
        rankstats.prompt_sensitivity(cube, nan_policy="raise")


def test_binary_closed_form_equals_the_sorted_identity():
    rng = np.random.default_rng(4)
    x = (rng.random((5, 30, 40)) < 0.4).astype(float)
    binary, _ = kernel.per_sample(x)
    # the same values nudged off {0, 1} by a common amount take the sorted-values path
    shifted, _ = kernel.per_sample(x * 0.5 + 0.25)
    np.testing.assert_allclose(binary * 0.5, shifted, rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 8))
def test_bounds_and_invariances(seed, templates, samples):
    rng = np.random.default_rng(seed)
    x = (rng.random((templates, samples)) < 0.5).astype(float)
    score = float(rankstats.prompt_sensitivity(x))
    assert 0.0 <= score <= templates / (2 * (templates - 1)) + 1e-12
    # the order of the templates does not matter, nor a flip of every outcome
    assert score == pytest.approx(float(rankstats.prompt_sensitivity(x[::-1])), abs=1e-12)
    assert score == pytest.approx(float(rankstats.prompt_sensitivity(1 - x)), abs=1e-12)


def test_numpy_and_labelled_agree_and_structure_is_not_a_hole():
    cube = random_cube(5, True)
    labelled = rankstats.prompt_sensitivity(cube)
    plain = rankstats.prompt_sensitivity(cube.values)
    np.testing.assert_allclose(
        labelled.transpose("model", "task").values, plain, rtol=0, atol=1e-12
    )
    padded = cube.copy()
    padded[:, 0, 6:, :] = np.nan  # task t0 has 6 templates
    padded[1, 2] = np.nan  # model m1 never ran task t2
    got = rankstats.prompt_sensitivity(padded, nan_policy="raise")
    assert np.isnan(float(got.sel(model="m1", task="t2")))
    assert float(got.sel(model="m0", task="t0")) == pytest.approx(
        loop_score(padded.values[0, 0, :6]), abs=1e-12
    )


def test_sensitive_samples_lists_the_loop_s_most_sensitive_samples():
    cube = random_cube(6, True, models=3, tasks=2, templates=7, samples=11)
    out = rankstats.sensitive_samples(cube, top=4)
    for t in range(2):
        per_sample = np.array(
            [np.mean([loop_score(cube.values[m, t][:, [s]]) for m in range(3)]) for s in range(11)]
        )
        order = np.argsort(-per_sample, kind="stable")[:4]
        np.testing.assert_allclose(
            out.sensitivity.isel(task=t), per_sample[order], rtol=0, atol=1e-12
        )
        assert out.sample_id.isel(task=t).values.tolist() == [str(s) for s in order]
        expected = np.mean([loop_score(cube.values[m, t]) for m in range(3)])
        assert float(out.prompt_sensitivity.isel(task=t)) == pytest.approx(expected, abs=1e-12)


def test_per_template_scores_are_refused_with_the_reason():
    cube = rankstats.datasets.load("mizrahi2024").isel(task=[0], model=[0, 1])
    with pytest.raises(rankstats.DimensionError, match="sample"):
        rankstats.prompt_sensitivity(cube)


# ---- POSIX, from the per-sample log-probabilities the collectors keep ---------------------------


def loop_posix(lp: np.ndarray, tokens: np.ndarray, chosen: np.ndarray) -> float:
    """Chatterjee et al.'s index of one sample by its definition: every ordered template pair."""
    answered = [j for j in range(len(chosen)) if chosen[j] >= 0]
    n = len(answered)
    total = 0.0
    for j in answered:
        y = chosen[j]
        for i in answered:
            if i != j:
                total += abs(lp[i, y] - lp[j, y]) / tokens[j, y]
    return total / (n * (n - 1)) if n >= 2 else np.nan


def posix_cube(seed: int, models=2, tasks=2, templates=7, samples=5, options=4):
    rng = np.random.default_rng(seed)
    shape = (models, tasks, samples, templates, options)
    lp = -rng.exponential(2.0, shape)
    few = np.broadcast_to(rng.random((*shape[:3], 1)) < 0.3, shape[:-1])
    lp[..., -1][few] = np.nan  # some samples have 3 options
    tokens = rng.integers(1, 5, shape).astype(float)
    chosen = np.nanargmax(lp, -1)
    response = np.take_along_axis(lp, chosen[..., None], -1)[..., 0]
    response[0, 0, 1, 2] = np.nan  # a template that did not answer this sample
    dims = ("model", "task", "sample", "template")
    cube = xr.Dataset(
        {
            "score": (dims, np.ones(shape[:-1])),
            "logprob": (dims, response),
            "option_logprob": ((*dims, "option"), lp),
            "option_tokens": ((*dims, "option"), tokens),
        },
        coords={"model": [f"m{i}" for i in range(models)], "task": [f"t{i}" for i in range(tasks)]},
    )
    chosen = np.where(np.isnan(response), -1, chosen)
    return cube, lp, tokens, chosen


def test_posix_equals_its_definition_looped_over_template_pairs():
    cube, lp, tokens, chosen = posix_cube(0)
    got = rankstats.posix(cube)
    for m in range(2):
        for t in range(2):
            per_sample = [
                loop_posix(lp[m, t, s], tokens[m, t, s], chosen[m, t, s])
                for s in range(lp.shape[2])
            ]
            assert abs(float(got.isel(model=m, task=t)) - np.mean(per_sample)) < 1e-12


def test_posix_is_zero_when_no_template_moves_the_likelihood_and_needs_logprobs():
    cube, *_ = posix_cube(1)
    same = cube.copy()
    same["option_logprob"] = (
        same.option_logprob.isel(template=0, drop=True)
        .broadcast_like(same.option_logprob)
        .transpose(*same.option_logprob.dims)
    )
    same["logprob"] = same.option_logprob.max("option")
    assert np.allclose(rankstats.posix(same), 0.0)
    with pytest.raises(rankstats.CubeError, match="likelihood"):
        rankstats.posix(cube.drop_vars("option_logprob"))
