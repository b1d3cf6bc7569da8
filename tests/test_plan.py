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
    planned = rankstats.plan(cube, target_tau=0.9, probability=None)
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
    assert "- LMentry: for tau-b ≥ 0.9 with probability 0.95" in out
    assert "- BBH: for tau-b ≥ 0.9 with probability 0.95" in out
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


def _one_template_leaderboard(models=9, items=100, seed=0):
    """A leaderboard as most are published: one template, binary item scores."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 1, (models, 1, 1, 1))
    difficulty = rng.normal(0, 1.5, (1, 1, 1, items))
    p = 1 / (1 + np.exp(difficulty - skill))
    return xr.DataArray(
        (rng.random(p.shape) < p).astype(float),
        dims=("model", "task", "template", "sample"),
        coords={"task": ["t"]},
    )


def test_one_template_gets_its_items_and_the_reason():
    planned = rankstats.plan(_one_template_leaderboard())
    assert np.isnan(planned.n_templates_needed).all()
    items = float(planned.n_samples_needed_fixed_templates[0])
    assert np.isfinite(items) and items > 100  # more items than the benchmark has
    reason = str(planned.reason.values[0])
    assert "one template" in reason and "second template" in reason
    # samples_needed asks the same question without a model, and gives the same planner number
    found = rankstats.samples_needed(_one_template_leaderboard(), seed=0, max_resamples=400)
    assert float(found.n_planned[0]) == items
    assert bool(found.censored[0]) and float(found.n_needed[0]) == 100


def test_plan_command_on_a_one_template_leaderboard(capsys, tmp_path):
    x = _one_template_leaderboard()
    path = tmp_path / "one.nc"
    rankstats.save(
        rankstats.from_records(
            [
                {
                    "model": f"m{m}",
                    "task": "t",
                    "template": "only",
                    "sample": f"s{s}",
                    "score": float(x[m, 0, 0, s]),
                }
                for m in range(9)
                for s in range(100)
            ]
        ),
        path,
    )
    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "- t: one template" in out and "samples" in out
    assert "with the templates held fixed" not in out or "nan" not in out


@pytest.mark.parametrize(
    "case, words",
    [
        ("one model", "fewer than two models"),
        ("one sample", "fewer than two samples"),
        ("constant", "do not differ"),
        ("all missing", "no scores"),
    ],
)
def test_nothing_estimable_says_why_without_numpy_warnings(case, words, capsys, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((4, 1, 3, 5))
    if case == "one model":
        x = x[:1]
    elif case == "one sample":
        x = x[..., :1]
    elif case == "constant":
        x = np.full(x.shape, 0.5)
    else:
        x = np.full(x.shape, np.nan)
    cube = xr.DataArray(x, dims=("model", "task", "template", "sample"), coords={"task": ["t"]})
    planned = rankstats.plan(cube)  # warnings are errors in the tests
    assert words in str(planned.reason.values[0])
    assert np.isnan(planned.n_templates_needed).all()
    path = tmp_path / "cube.nc"
    rankstats.save(
        rankstats.from_records(
            [
                {
                    "model": f"m{m}",
                    "task": "t",
                    "template": f"p{p}",
                    "sample": f"s{s}",
                    "score": float(x[m, 0, p, s]),
                }
                for m in range(x.shape[0])
                for p in range(x.shape[2])
                for s in range(x.shape[3])
                if x[m, 0, p, s] == x[m, 0, p, s]
            ]
            or [{"model": "m0", "task": "t", "template": "p0", "sample": "s0", "score": 0.5}]
        ),
        path,
    ) if case != "all missing" else None
    if case != "all missing":
        assert main(["plan", str(path)]) == 0
        out = capsys.readouterr()
        assert "RuntimeWarning" not in out.err
        assert "- t: " in out.out


def test_plan_and_templates_needed_give_one_number_for_one_question():
    cube = rankstats.datasets.load("mizrahi2024").sel(task=["navigate", "homophones"])
    planned = rankstats.plan(cube)
    found = rankstats.templates_needed(cube, seed=0, max_resamples=200)
    summary = stability.variance_summary(cube, n_resamples=20, seed=0)
    np.testing.assert_array_equal(
        found.k_planned.values, planned.n_templates_needed_fixed_samples.values
    )
    np.testing.assert_array_equal(summary.templates_for_tau.values, found.k_planned.values)
    assert planned.attrs["probability"] == found.attrs["probability"] == 0.95
    assert planned.attrs["target_tau"] == found.attrs["target"] == 0.9


def test_the_probability_criterion_is_met_at_its_noise_ratio():
    # at the noise ratio found, normal models reach tau-b >= 0.9 in 95% of fresh replications
    noise = kv.noise_allowed(0.9, 0.95, 12)
    taus = kv.replication_taus(12, [noise * 0.9, noise * 1.3], n_resamples=20_000, seed=7)
    reached = (taus >= 0.9).mean(-1)
    assert reached[0] >= 0.94 and reached[1] < 0.95
    assert np.isnan(kv.noise_allowed(0.9, 0.95, 1))
