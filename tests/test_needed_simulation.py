"""How many templates are enough, checked against a known random-effects model.

Cubes are drawn from the crossed model × template × item model with every
two-way interaction (binary scores through a logit, or continuous ones);
for each, :func:`rankstats.templates_needed` (model-free: random subsets
of a resample of the cube's own templates) and its planner (variance components) give a
number k, and reruns drawn from the same model with k fresh templates and
the cube's own items say how often two such reruns reach Kendall's tau-b ≥
0.9. The stated probability is 0.95. ``simulate`` is also what
docs/stability.md quotes (``python tests/test_needed_simulation.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from rankstats._kernels import tau_merge
from rankstats.stability.needed import templates_needed

TARGET, PROBABILITY = 0.9, 0.95


def _effects(rng, models, items, sd):
    """The fixed part of one benchmark: models, items and their interaction."""
    return {
        "model": rng.normal(0, sd["model"], models),
        "item": rng.normal(0, sd["item"], items),
        "model_item": rng.normal(0, sd["model_item"], (models, items)),
    }


def _boards(rng, fixed, sd, k, reruns, binary):
    """``(reruns, models)`` leaderboards, each the mean over k fresh templates and the items."""
    models, items = fixed["model_item"].shape
    if not binary:  # the mean is normal: only the model-specific parts matter for a ranking
        universe = fixed["model"] + fixed["model_item"].mean(1)
        noise = sd["model_template"] ** 2 / k + sd["error"] ** 2 / (k * items)
        return universe + rng.normal(0, np.sqrt(noise), (reruns, models))
    total = np.zeros((reruns, models))
    for start in range(0, k, 16):  # templates in blocks: memory stays small
        size = min(16, k - start)
        logit = (
            fixed["model"][None, :, None, None]
            + fixed["item"][None, None, None, :]
            + fixed["model_item"][None, :, None, :]
            + rng.normal(0, sd["template"], (reruns, 1, size, 1))
            + rng.normal(0, sd["model_template"], (reruns, models, size, 1))
            + rng.normal(0, sd["template_item"], (reruns, 1, size, items))
        )
        total += (rng.random(logit.shape) < 1 / (1 + np.exp(-logit))).mean(-1).sum(-1)
    return total / k


def _tau(a, b):
    """Tau-b of rows of ``a`` and ``b`` (ties possible for binary means)."""
    valid = np.ones(a.shape, dtype=bool)
    counts = tau_merge.pair_counts(
        tau_merge.dense_codes(a, valid), tau_merge.dense_codes(b, valid), valid, terms=False
    )
    n = a.shape[-1]
    n0 = n * (n - 1) / 2
    room = (n0 - counts["x_tie_pairs"]) * (n0 - counts["y_tie_pairs"])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(room > 0, counts["con_minus_dis"] / np.sqrt(room), np.nan)


def true_probability(rng, fixed, sd, k, binary, reruns=400):
    """P(two reruns with k fresh templates each reach tau-b ≥ TARGET), by simulation."""
    first = _boards(rng, fixed, sd, k, reruns, binary)
    second = _boards(rng, fixed, sd, k, reruns, binary)
    return float((np.nan_to_num(_tau(first, second), nan=-1) >= TARGET).mean())


def draw_cube(rng, fixed, sd, templates, binary):
    """One benchmark's cube ``(model, template, sample)`` with ``templates`` templates."""
    scores = _boards_cells(rng, fixed, sd, templates, binary)
    return xr.DataArray(
        scores[None], dims=("task", "model", "template", "sample"), coords={"task": ["t"]}
    )


def _boards_cells(rng, fixed, sd, templates, binary):
    models, items = fixed["model_item"].shape
    value = (
        fixed["model"][:, None, None]
        + fixed["item"][None, None, :]
        + fixed["model_item"][:, None, :]
        + rng.normal(0, sd["template"], (1, templates, 1))
        + rng.normal(0, sd["model_template"], (models, templates, 1))
        + rng.normal(0, sd["template_item"], (1, templates, items))
    )
    if binary:
        return (rng.random(value.shape) < 1 / (1 + np.exp(-value))).astype(float)
    return value + rng.normal(0, sd["error"], value.shape)


SCENARIOS = {
    # name: (binary, models, items, standard deviations)
    "binary": (
        True,
        10,
        40,
        {
            "model": 1.0,
            "item": 1.0,
            "model_item": 0.5,
            "template": 0.3,
            "model_template": 0.3,
            "template_item": 0.3,
            "error": 0.0,
        },
    ),
    "continuous": (
        False,
        12,
        30,
        {
            "model": 1.0,
            "item": 1.0,
            "model_item": 0.5,
            "template": 0.5,
            "model_template": 0.6,
            "template_item": 0.5,
            "error": 1.0,
        },
    ),
}


def simulate(
    scenario, templates, n_cubes, seed, max_resamples=800, reruns=400, design="predictive"
):
    """Per cube: the two methods' k and the true probability that k fresh templates reach it.

    Returns a dict of arrays over the cubes: ``k_needed``, ``censored``,
    ``k_planned``, ``p_needed`` (true probability at ``k_needed`` where not
    censored, else NaN) and ``p_planned`` (at ``k_planned``, NaN where the
    planner gives none or more than 2,000 templates).
    """
    binary, models, items, sd = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    out = {
        name: np.full(n_cubes, np.nan)
        for name in ("k_needed", "censored", "k_planned", "p_needed", "p_planned")
    }
    for c in range(n_cubes):
        fixed = _effects(rng, models, items, sd)
        cube = draw_cube(rng, fixed, sd, templates, binary)
        found = templates_needed(
            cube.mean("sample"),
            seed=int(rng.integers(2**31)),
            max_resamples=max_resamples,
            design=design,
        )
        k, censored = float(found.k_needed[0]), bool(found.censored[0])
        planned = float(found.k_planned[0])
        out["k_needed"][c], out["censored"][c], out["k_planned"][c] = k, censored, planned
        if not censored and k == k:
            out["p_needed"][c] = true_probability(rng, fixed, sd, int(k), binary, reruns)
        if planned == planned and planned <= 2000:
            out["p_planned"][c] = true_probability(rng, fixed, sd, int(planned), binary, reruns)
    return out


def held(probabilities, slack):
    """Share of cubes whose true probability is at least PROBABILITY - slack (defined ones)."""
    defined = probabilities[~np.isnan(probabilities)]
    return float((defined >= PROBABILITY - slack).mean()) if defined.size else np.nan


# 400 reruns estimate a probability of 0.95 with a standard error of 0.011: 0.03 below it is
# about 3 standard errors
SLACK = 0.03


@pytest.mark.parametrize("scenario", ["continuous", "binary"])
def test_the_recommended_templates_reach_the_target_in_reruns(scenario):
    found = simulate(scenario, templates=30, n_cubes=2, seed=11, max_resamples=400, reruns=200)
    # the model-free answer, where it is not censored, holds for every cube
    if not np.isnan(found["p_needed"]).all():
        assert held(found["p_needed"], 0.05) == 1.0
    # the planner's claim holds on average over models drawn from a normal population
    assert np.nanmean(found["p_planned"]) >= PROBABILITY - 0.05
    # censored answers are bounds above the half the subsets can show
    censored = found["censored"] == 1
    assert (found["k_needed"][censored] >= 15).all()


def test_the_model_free_answer_in_reruns_when_the_subsets_reach_it():
    found = simulate("continuous", templates=200, n_cubes=4, seed=3, max_resamples=400, reruns=200)
    reached = found["p_needed"][~np.isnan(found["p_needed"])]
    assert reached.size >= 2
    # on average at the stated 0.95 (measured 0.970 over twelve larger cubes, and 0.903
    # with disjoint subsets of the pool)
    assert reached.mean() >= PROBABILITY - SLACK
    assert (found["k_needed"][found["censored"] == 0] <= 100).all()


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["continuous", "binary"])
@pytest.mark.parametrize("templates", [3, 20, 200])
def test_the_recommended_templates_reach_the_target_in_reruns_large(scenario, templates):
    found = simulate(scenario, templates=templates, n_cubes=12, seed=templates)
    reached = found["p_needed"][~np.isnan(found["p_needed"])]
    if reached.size:  # the model-free answer: measured 0.942 and 0.970 (docs/stability.md)
        assert reached.mean() >= PROBABILITY - SLACK
    # the planner's claim is over models drawn from a normal population: on average
    planned = found["p_planned"][~np.isnan(found["p_planned"])]
    assert planned.mean() >= PROBABILITY - SLACK


def summary(found):
    """One line of the figures docs/stability.md quotes."""
    cubes = len(found["censored"])
    censored = int(np.nansum(found["censored"]))
    line = f"censored {censored}/{cubes}"
    reached = found["p_needed"][~np.isnan(found["p_needed"])]
    if reached.size:
        k = found["k_needed"][~np.isnan(found["p_needed"])]
        line += (
            f"; model-free k {np.median(k):g} (median), true P mean {reached.mean():.3f}, "
            f"held {held(found['p_needed'], 0):.2f} ({held(found['p_needed'], SLACK):.2f}"
            f" within {SLACK})"
        )
    planned = found["p_planned"][~np.isnan(found["p_planned"])]
    if planned.size:
        line += (
            f"; planner k {np.nanmedian(found['k_planned']):g} (median), true P mean "
            f"{planned.mean():.3f}, held {held(found['p_planned'], 0):.2f} "
            f"({held(found['p_planned'], SLACK):.2f} within {SLACK})"
        )
    return line


if __name__ == "__main__":  # the figures docs/stability.md quotes
    import sys

    design = sys.argv[1] if len(sys.argv) > 1 else "predictive"
    for scenario in SCENARIOS:
        for templates in (3, 20, 200):
            found = simulate(
                scenario, templates=templates, n_cubes=12, seed=templates, design=design
            )
            print(f"{design}: {scenario} {templates} templates: {summary(found)}", flush=True)
