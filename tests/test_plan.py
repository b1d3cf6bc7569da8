"""The decision study: its predictions against simulation, its search against brute force.

Oracles: direct simulation of leaderboards and their replications from planted
variance components (Kendall's tau by ``scipy.stats.kendalltau``, vectorised
here as concordant minus discordant pairs); an exhaustive search of the design
grid; the released data of Mizrahi et al. (2024) through the command line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from scipy import special, stats

import rankstats
from rankstats import stability
from rankstats._kernels import variance as kv
from rankstats.cli import main
from rankstats.errors import OptionError

PLANTED = np.array([1.0, 0.3, 0.5, 0.2, 0.4, 0.1, 0.6])


def leaderboards(planted, n_boards, models, templates, samples, rng, universe=None):
    """Model means of ``n_boards`` independent benchmarks sharing the models' universe scores."""
    if universe is None:
        universe = np.sqrt(planted[0]) * rng.standard_normal((n_boards, models))
    sizes = (models, templates, samples)
    error = 0.0
    for variance, effect in zip(planted[1:], kv.effects(3)[1:], strict=True):
        shape = tuple(sizes[a] if a in effect else 1 for a in range(3))
        draw = np.sqrt(variance) * rng.standard_normal((n_boards, *shape))
        error = error + draw.mean(axis=(-2, -1)) * np.ones((1, models))
    return universe + error, universe


def mean_tau(a, b):
    """Kendall's tau-a between the rows of ``a`` and ``b`` (no ties: continuous scores)."""
    da = np.sign(a[:, :, None] - a[:, None, :])
    db = np.sign(b[:, :, None] - b[:, None, :])
    m = a.shape[1]
    return (da * db).sum(axis=(1, 2)) / (m * (m - 1))


def test_mean_tau_is_kendalls_tau():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 9)), rng.normal(size=(3, 9))
    expected = [stats.kendalltau(x, y).statistic for x, y in zip(a, b, strict=True)]
    np.testing.assert_allclose(mean_tau(a, b), expected)


@pytest.mark.parametrize(("templates", "samples"), [(1, 5), (2, 10), (5, 40), (10, 20)])
def test_expected_tau_with_a_replication_matches_simulation(templates, samples):
    # Greiner: tau = (2/pi) arcsin(rho), rho the generalizability coefficient; 4000 pairs of
    # leaderboards of twelve models (the figures in the docs; -s prints them)
    rng = np.random.default_rng(templates)
    first, universe = leaderboards(PLANTED, 4000, 12, templates, samples, rng)
    second, _ = leaderboards(PLANTED, 4000, 12, templates, samples, rng, universe)
    tau, truth = mean_tau(first, second), mean_tau(first, universe)
    g = kv.coefficient(PLANTED[0], kv.relative_error(PLANTED, templates, samples))
    print(
        f"\n{templates} x {samples}: g {g:.3f}, tau {tau.mean():.4f} ± "
        f"{tau.std() / 4000**0.5:.4f} (predicted {kv.replication_tau(g):.4f}), with the truth "
        f"{truth.mean():.4f} (predicted {kv.replication_tau(np.sqrt(g)):.4f})"
    )
    assert tau.mean() == pytest.approx(kv.replication_tau(g), abs=4 * tau.std() / 4000**0.5)
    assert truth.mean() == pytest.approx(
        kv.replication_tau(np.sqrt(g)), abs=4 * truth.std() / 4000**0.5
    )


def test_probability_of_the_right_order_matches_simulation():
    rng = np.random.default_rng(3)
    d = 0.3
    universe = np.broadcast_to([[d, 0.0]], (20000, 2))
    boards, _ = leaderboards(PLANTED, 20000, 2, 4, 25, rng, universe)
    right = (boards[:, 0] > boards[:, 1]).mean()
    predicted = kv.ordered_correctly(d, kv.relative_error(PLANTED, 4, 25))
    assert right == pytest.approx(predicted, abs=0.01)
    assert predicted == pytest.approx(
        special.ndtr(d / np.sqrt(2 * (0.2 / 4 + 0.4 / 25 + 0.6 / 100)))
    )


def test_the_cheapest_design_is_the_cheapest_in_the_grid():
    components = np.array(
        [
            [1.0, 0.3, 0.5, 0.2, 0.4, 0.1, 0.6],
            [0.3, 0.1, 0.1, 0.4, 0.05, 0.0, 2.0],
            [0.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
        ]
    )
    rho, costs = 0.95, (3.0, 0.5)
    n_t, n_s, cost = kv.cheapest(components, rho, *costs, 60, 400)
    nt, ns = np.meshgrid(np.arange(1, 61), np.arange(1, 401), indexing="ij")
    for j, c in enumerate(components):
        g = kv.coefficient(c[0], kv.relative_error(c, nt, ns))
        grid = np.where(g >= rho, costs[0] * nt + costs[1] * ns, np.inf)
        if np.isinf(grid.min()):
            assert np.isnan(cost[j])
            continue
        assert cost[j] == grid.min()
        assert costs[0] * n_t[j] + costs[1] * n_s[j] == grid.min()
        assert g[int(n_t[j]) - 1, int(n_s[j]) - 1] >= rho


def test_plan_on_a_cube_with_samples():
    rng = np.random.default_rng(0)
    x = sum(
        np.sqrt(v) * rng.standard_normal(s)
        for v, s in zip(
            PLANTED,
            [
                (10, 1, 1, 1),
                (1, 2, 8, 1),
                (1, 2, 1, 40),
                (10, 2, 8, 1),
                (10, 2, 1, 40),
                (1, 2, 8, 40),
                (10, 2, 8, 40),
            ],
            strict=True,
        )
    )
    cube = xr.DataArray(
        x, dims=("model", "task", "template", "sample"), coords={"task": ["a", "b"]}
    )
    planned = rankstats.plan(
        cube,
        target_tau=0.8,
        template_cost=2.0,
        sample_cost=0.1,
        n_templates=[1, 8, 30],
        n_samples=[40, 100],
    )
    assert planned.attrs["samples"] == "a facet"
    assert planned.n_templates_now.values.tolist() == [8, 8]
    assert planned.n_samples_now.values.tolist() == [40, 40]
    # the task's own design is in the grid: the two agree
    now = planned.sel(n_templates=8, n_samples=40)
    np.testing.assert_allclose(now.g_coefficient, planned.g_coefficient_now)
    np.testing.assert_allclose(now.tau, planned.tau_now)
    # the planned design reaches the target and costs what it says
    c = planned.components.values
    g = kv.coefficient(
        c[:, 0],
        kv.relative_error(c, planned.n_templates_needed.values, planned.n_samples_needed.values),
    )
    assert (kv.replication_tau(g) >= 0.8 - 1e-12).all()
    np.testing.assert_allclose(
        planned.cost, 2.0 * planned.n_templates_needed + 0.1 * planned.n_samples_needed
    )
    assert planned.p_ordered.dims == ("task", "n_templates", "n_samples", "difference")
    assert np.isfinite(float(planned.overall_tau_now))


def test_overall_universe_variance_is_recovered():
    # 30 tasks share the models' abilities: the mean over tasks has universe variance 1.0
    rng = np.random.default_rng(5)
    ability = rng.standard_normal((60, 1, 1, 1))
    x = (
        ability
        + rng.normal(0, 0.5, (60, 30, 1, 1))
        + rng.normal(0, 1.0, (60, 30, 6, 1))
        + rng.normal(0, 1.0, (60, 30, 1, 20))
        + rng.normal(0, 1.0, (60, 30, 6, 20))
    )
    cube = xr.DataArray(x, dims=("model", "task", "template", "sample"))
    planned = rankstats.plan(cube)
    expected = np.var(ability[:, 0, 0, 0], ddof=1) + 0.25 / 30  # the task-model effects average
    assert float(planned.overall_universe) == pytest.approx(expected, rel=0.15)


def test_plan_without_samples_plans_templates_only():
    cube = rankstats.datasets.load("mizrahi2024")
    planned = rankstats.plan(cube, target_tau=0.9)
    assert planned.attrs["samples"].startswith("not a facet")
    assert "n_samples" not in planned.dims
    assert planned.n_samples_needed.isnull().all()
    assert (planned.n_templates_needed >= 1).all()
    assert (planned.cost == planned.n_templates_needed).all()
    # the needed templates reach the target, one fewer does not
    c = planned.components.values
    n = planned.n_templates_needed.values

    def tau(k):
        return kv.replication_tau(kv.coefficient(c[:, 0], c[:, 2] / k))

    assert (tau(n) >= 0.9).all()
    assert (tau(n - 1)[n > 1] < 0.9).all()


def test_plan_checks_its_options():
    cube = rankstats.datasets.load("mizrahi2024")
    with pytest.raises(OptionError, match="target_tau"):
        rankstats.plan(cube, target_tau=1.0)
    with pytest.raises(OptionError, match="template_cost"):
        rankstats.plan(cube, template_cost=-1)
    with pytest.raises(OptionError, match="n_templates"):
        rankstats.plan(cube, n_templates=[0, 2])


def test_plan_command_on_the_released_data(capsys, tmp_path):
    path = tmp_path / "plan.json"
    assert main(["plan", "mizrahi2024", "--target-tau", "0.9", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "samples are not a facet" in out
    assert "- LMentry: for tau ≥ 0.9" in out and "- BBH: for tau ≥ 0.9" in out
    document = json.loads(path.read_text())
    rows = {row["scope"]: row for row in document["tables"]["overall"]}
    assert set(rows) == {"all tasks", "LMentry", "BBH"}
    assert len(document["tables"]["plan"]) == 25
    assert main(["plan", "mizrahi2024", "--target-tau", "1.5"]) == 2
    assert main(["plan", "mizrahi2024", "--template-cost", "-2"]) == 2


def test_templates_needed_and_plan_agree_in_direction():
    # both say the LMentry tasks need more templates than the BBH ones (median over tasks)
    cube = rankstats.datasets.load("mizrahi2024")
    planned = rankstats.plan(cube).n_templates_needed
    lmentry = planned.where(cube.benchmark == "LMentry").median()
    bbh = planned.where(cube.benchmark == "BBH").median()
    assert float(lmentry) > float(bbh)
    assert stability.plan is rankstats.plan


def binary_replications(n_cubes, models, templates, samples, seed):
    """Pairs of binary cubes from a logit model: the same models, new templates and items."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.0, (n_cubes, models, 1, 1))

    def board():
        logit = (
            ability
            + rng.normal(0, 0.3, (n_cubes, 1, templates, 1))
            + rng.normal(0, 0.4, (n_cubes, models, templates, 1))
            - rng.normal(0, 1.0, (n_cubes, 1, 1, samples))
            + rng.normal(0, 0.3, (n_cubes, models, 1, samples))
        )
        return (rng.random(logit.shape) < special.expit(logit)).astype(float)

    return board(), board()


@pytest.mark.parametrize(("templates", "samples"), [(3, 30), (5, 50), (10, 100)])
def test_predicted_tau_on_binary_scores(templates, samples):
    # binary scores are not normal: the prediction from one cube is checked against the tau
    # with an independent replication, on average over 300 cubes (figures in the docs; -s)
    first, second = binary_replications(300, 12, templates, samples, seed=templates)
    cube = xr.DataArray(np.moveaxis(first, 0, 1), dims=("model", "task", "template", "sample"))
    predicted = float(rankstats.plan(cube).tau_now.mean())
    actual = mean_tau(first.mean((2, 3)), second.mean((2, 3)))
    print(
        f"\n{templates} x {samples}: predicted {predicted:.3f}, replication "
        f"{actual.mean():.3f} ± {actual.std() / np.sqrt(len(actual)):.3f}"
    )
    assert abs(predicted - actual.mean()) < 0.05
