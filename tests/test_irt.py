"""The item-response estimator of the distribution across templates, and the comparison.

Oracles: the penalised fit at fixed prior variances against SciPy's L-BFGS on
the dense design (an independent optimiser of the same objective); a
complete design against the exact template scores; the planted truth of
simulated cubes for the estimator's error and its intervals' coverage.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special

import rankstats
from rankstats._kernels import irt as kernel
from rankstats._kernels import irt_draws as draws
from rankstats.cli import main
from rankstats.errors import CubeError, DimensionError, OptionError


def test_penalised_fit_matches_scipy_on_the_dense_design():
    rng = np.random.default_rng(3)
    n_t, n_s = 7, 9
    p = special.expit(rng.normal(0, 1, (n_t, 1)) + rng.normal(0, 1, (1, n_s)))
    y = (rng.random((n_t, n_s)) < p).astype(float)
    y[rng.random((n_t, n_s)) < 0.4] = np.nan
    var_a, var_b = 0.8, 1.7
    fit = kernel.fit(
        y,
        np.ones(n_t, bool),
        np.ones(n_s, bool),
        variances=(var_a, var_b),
        tolerance=1e-11,
        max_iter=20000,
    )
    t, s = np.nonzero(~np.isnan(y))
    design = np.zeros((t.size, 1 + n_t + n_s))
    design[:, 0] = 1
    design[np.arange(t.size), 1 + t] = 1
    design[np.arange(t.size), 1 + n_t + s] = 1
    prior = np.r_[1 / kernel.FIXED_VARIANCE, np.full(n_t, 1 / var_a), np.full(n_s, 1 / var_b)]
    outcome = y[t, s]

    def objective(beta):
        eta = design @ beta
        loss = np.sum(np.logaddexp(0, eta) - outcome * eta) + 0.5 * np.sum(prior * beta**2)
        return loss, design.T @ (special.expit(eta) - outcome) + prior * beta

    oracle = optimize.minimize(
        objective,
        np.zeros(design.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15},
    ).x
    np.testing.assert_allclose(fit["mu"][0], oracle[0], atol=1e-6)
    np.testing.assert_allclose(fit["a"][0], oracle[1 : 1 + n_t], atol=1e-6)
    np.testing.assert_allclose(fit["b"][0], oracle[1 + n_t :], atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 15, 12, 4), (2, 3, 3, 0)])
def test_every_cell_observed_gives_the_exact_distribution(shape):
    models, templates, samples, seed = shape
    cube = rankstats.planted_cube(models=models, templates=templates, samples=samples, seed=seed)
    out = rankstats.estimate_distribution(cube, n_resamples=20, seed=0)
    exact = rankstats.template_scores(cube)
    np.testing.assert_allclose(
        out.template_accuracy.transpose(*exact.dims), exact, rtol=0, atol=1e-12
    )
    quantiles = exact.quantile(out["quantile"].values, "template")
    np.testing.assert_allclose(
        out.quantiles.transpose(*quantiles.dims), quantiles, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        out.avgp, exact.mean("template").transpose(*out.avgp.dims), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        out.maxp, exact.max("template").transpose(*out.maxp.dims), rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(out.calls, templates * samples)
    # nothing unobserved: the intervals are the exact values too
    np.testing.assert_allclose(out.quantiles_low, out.quantiles, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.template_high, out.template_accuracy, rtol=0, atol=1e-12)


def test_the_planted_template_spread_is_recovered_with_many_cells():
    cube = rankstats.planted_cube(
        models=6, templates=30, samples=60, template_sd=0.8, interaction_sd=0.0, seed=5
    )
    design = rankstats.random_design(cube, budget=900, seed=0)
    out = rankstats.estimate_distribution(cube.where(design), n_resamples=20, seed=0)
    assert 0.55 < float(out.template_sd.max()) < 1.1
    assert 1.0 < float(out.sample_sd.max()) < 2.1


def _errors(models, templates, samples, budget, n_resamples, seed):
    cube = rankstats.planted_cube(models=models, templates=templates, samples=samples, seed=seed)
    result = rankstats.simulate_estimators(
        cube, budgets=[budget], n_resamples=n_resamples, seed=seed
    )
    return result.sel(budget=budget)


def _assert_irt_wins(result):
    for target in ("5%", "50%", "95%"):
        irt = float(result.error.sel(estimator="irt", target=target))
        plain = float(result.error.sel(estimator="random-avgp", target=target))
        se = float(
            np.hypot(
                result.error_se.sel(estimator="irt", target=target),
                result.error_se.sel(estimator="random-avgp", target=target),
            )
        )
        assert irt + 2 * se < plain, (target, irt, plain, se)


def test_irt_beats_random_templates_on_the_quantiles_fast():
    result = _errors(models=6, templates=40, samples=40, budget=80, n_resamples=4, seed=11)
    _assert_irt_wins(result)
    assert float(result.calls.sel(estimator="irt")) == 80


@pytest.mark.slow
def test_irt_beats_random_templates_on_the_quantiles_full():
    # the acceptance configuration: 16 models x 100 templates x 100 samples, 2 cells per sample
    result = _errors(models=16, templates=100, samples=100, budget=200, n_resamples=10, seed=0)
    _assert_irt_wins(result)


def test_intervals_cover_the_planted_truth():
    # measured: AvgP 0.97, quantiles 0.59 (5%), 0.75, 0.94, 0.94 and 0.81 (95%) over 4 cubes
    # of 8 models x 40 templates (nominal 0.95): with 320 templates the pairwise spread is
    # noisy, and where it lands near 0 the tails are too narrow
    covered = []
    for seed in range(2):
        cube = rankstats.planted_cube(models=8, templates=40, samples=40, seed=seed)
        out = rankstats.estimate_distribution(
            cube.where(rankstats.random_design(cube, budget=80, seed=seed)),
            n_resamples=100,
            seed=seed,
        )
        exact = rankstats.template_scores(cube).mean("template")
        covered.append(((out.avgp_low <= exact) & (exact <= out.avgp_high)).values.ravel())
    assert np.mean(covered) >= 0.8


def test_random_design_is_balanced_and_respects_padding():
    cube = rankstats.planted_cube(models=3, templates=9, samples=7, seed=0)
    design = rankstats.random_design(cube, budget=17, seed=2)
    np.testing.assert_array_equal(design.sum(["template", "sample"]), 17)
    per_sample = design.sum("template").values
    assert per_sample.min() == 17 // 7 and per_sample.max() == 17 // 7 + 1
    padded = cube.copy()
    padded["template_id"] = padded.template_id.where(padded.template < 6, "")
    design = rankstats.random_design(padded.where(padded.template < 6), budget=100, seed=0)
    assert not design.isel(template=slice(6, None)).any()
    np.testing.assert_array_equal(design.sum(["template", "sample"]), 6 * 7)


def test_a_design_over_several_tasks_follows_each_task_s_positions():
    one = rankstats.planted_cube(models=2, templates=6, samples=5, seed=0)
    two = rankstats.planted_cube(models=2, templates=6, samples=5, seed=1)
    cube = xr.concat([one, two.assign_coords(task=["other"])], "task")
    cube["template_id"] = cube.template_id.where((cube.task == "planted") | (cube.template < 4), "")
    cube["score"] = cube.score.where(cube.template_id != "")
    design = rankstats.random_design(cube, budget=12, seed=0)
    assert design.dims == cube.score.dims
    np.testing.assert_array_equal(design.sum(["template", "sample"]), 12)
    assert not design.sel(task="other").isel(template=slice(4, None)).any()
    out = rankstats.estimate_distribution(cube.where(design), n_resamples=10, seed=0)
    assert out.template_accuracy.sel(task="other").isel(template=slice(4, None)).isnull().all()


def test_halving_stages_spend_about_the_budget():
    for templates, samples, budget in [(100, 100, 200), (100, 100, 800), (30, 40, 120)]:
        stages = kernel.halving_stages(templates, samples, budget)
        keeps = [templates if k is None else k for k, _ in stages]
        spent = sum(k * size for k, (_, size) in zip(keeps, stages, strict=True))
        assert spent <= budget + keeps[-1] and sum(size for _, size in stages) <= samples
        assert keeps == sorted(keeps, reverse=True)


def test_absent_models_and_template_groups():
    cube = rankstats.planted_cube(models=4, templates=20, samples=20, seed=1)
    cube = cube.assign_coords(template_method=(("task", "template"), [["a"] * 10 + ["b"] * 10]))
    partial = cube.where(rankstats.random_design(cube, budget=60, seed=0))
    partial["score"][0] = np.nan  # a model never run
    out = rankstats.estimate_distribution(
        partial, template_covariate="template_method", n_resamples=20, seed=0
    )
    assert np.isnan(out.avgp.sel(model="m0")).all() and out.calls.sel(model="m0") == 0
    assert out.avgp.sel(model="m1").notnull().all()
    assert out.attrs["covariate_groups"] == "a, b"


def test_bad_input_is_refused_by_name():
    cube = rankstats.planted_cube(models=2, templates=4, samples=5, seed=0)
    with pytest.raises(DimensionError, match="sample"):
        rankstats.estimate_distribution(rankstats.template_scores(cube))
    with pytest.raises(CubeError, match="template_covariate='nope'"):
        rankstats.estimate_distribution(cube, template_covariate="nope")
    with pytest.raises(CubeError, match=r"\[0, 1\]"):
        rankstats.estimate_distribution(cube * 3)
    with pytest.raises(OptionError, match="quantiles"):
        rankstats.estimate_distribution(cube, quantiles=[1.5])
    with pytest.raises(OptionError, match="methods"):
        rankstats.simulate_estimators(cube, methods=["best"])


# ---- the command line ------------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path):
    cube = rankstats.planted_cube(models=4, templates=16, samples=16, seed=2)
    return str(rankstats.save(cube, tmp_path / "planted.nc"))


def test_cli_simulate_prints_the_errors_and_the_margin(planted, capsys, tmp_path):
    figure = tmp_path / "errors.png"
    code = main(
        [
            "estimate",
            planted,
            "--simulate",
            "--budget",
            "16,32",
            "--n-resamples",
            "2",
            "--seed",
            "0",
            "--json",
            str(tmp_path / "out.json"),
            "--figure",
            str(figure),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "| 32 | irt |" in printed and "irt against random-avgp" in printed
    assert figure.read_bytes()[:4] == b"\x89PNG"
    tables = json.loads((tmp_path / "out.json").read_text())["tables"]
    assert {row["estimator"] for row in tables["errors"]} == {"random-avgp", "halving-maxp", "irt"}


def test_cli_spends_a_budget_with_each_method(planted, capsys):
    code = main(
        [
            "estimate",
            planted,
            "--method",
            "irt",
            "--method",
            "random-avgp",
            "--method",
            "halving-maxp",
            "--budget",
            "32",
            "--n-resamples",
            "20",
            "--seed",
            "1",
            "--csv",
            "-",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    rows = out.splitlines()
    header = rows[1].split(",")
    assert {"method", "model", "task", "avgp", "maxp", "calls"} <= set(header)
    spent = [float(r.split(",")[header.index("calls")]) for r in rows[2:] if r]
    assert max(spent) <= 32


def test_cli_irt_reads_a_partial_cube_as_it_is(tmp_path, capsys):
    cube = rankstats.planted_cube(models=2, templates=10, samples=10, seed=0)
    partial = cube.where(rankstats.random_design(cube, budget=30, seed=0))
    path = rankstats.save(partial, tmp_path / "partial.nc")
    assert (
        main(["estimate", str(path), "--method", "irt", "--n-resamples", "20", "--seed", "0"]) == 0
    )
    assert "every observed cell" in capsys.readouterr().out
    assert main(["estimate", str(path), "--method", "random-avgp"]) == 2
    assert main(["estimate", str(path), "--figure", str(tmp_path / "x.png")]) == 2


def test_planted_cube_is_a_valid_cube():
    cube = rankstats.planted_cube(models=2, templates=3, samples=4, seed=0)
    assert rankstats.validate(cube) is cube
    assert isinstance(cube.score, xr.DataArray) and set(np.unique(cube.score)) <= {0.0, 1.0}


def test_per_template_cubes_are_simulated_through_item_difficulties(capsys):
    cube = rankstats.datasets.load("mizrahi2024").isel(task=[0], model=[0, 1, 2])
    out = rankstats.simulate_estimators(
        cube, budgets=[100], methods=["random-avgp", "irt"], n_resamples=2, sample_sd=1.5, seed=0
    )
    assert out.error.notnull().all() and float(out.attrs["full_calls"]) > 100 * 100
    with pytest.raises(DimensionError, match="sample_sd"):
        rankstats.simulate_estimators(cube, budgets=[100])
    with pytest.raises(OptionError, match="per-template scores only"):
        rankstats.simulate_estimators(
            rankstats.planted_cube(models=2, templates=3, samples=4), sample_sd=1.0
        )
    assert main(["estimate", "mizrahi2024", "--simulate", "--budget", "100", "--quiet"]) == 3


def test_each_model_alone_and_a_template_covariate():
    cube = rankstats.planted_cube(models=3, templates=24, samples=30, seed=7)
    # the second half of the templates is easier for every model: a covariate that knows it
    easier = np.r_[np.zeros(12), np.ones(12)].astype(bool)
    rng = np.random.default_rng(0)
    boost = (rng.random(cube.score.shape) < 0.5) & easier[None, None, :, None]
    cube["score"] = cube.score.where(~boost, 1.0)
    cube = cube.assign_coords(
        template_method=(("task", "template"), [np.where(easier, "easy", "plain")])
    )
    partial = cube.where(rankstats.random_design(cube, budget=150, seed=1))
    alone = rankstats.estimate_distribution(partial, pool_models=False, n_resamples=20, seed=0)
    # each model its own prior variances (pooled, one per task)
    assert alone.avgp.notnull().all() and len(np.unique(alone.sample_sd.values)) > 1
    grouped = rankstats.estimate_distribution(
        partial, template_covariate="template_method", n_resamples=20, seed=0
    )
    exact = rankstats.template_scores(cube)
    gap = exact.isel(template=easier).mean("template") - exact.isel(template=~easier).mean(
        "template"
    )
    fitted = grouped.template_accuracy
    found = fitted.isel(template=easier).mean("template") - fitted.isel(template=~easier).mean(
        "template"
    )
    assert float(found.mean()) > 0.5 * float(gap.mean())
    plain = rankstats.estimate_distribution(partial, n_resamples=20, seed=0).template_accuracy
    error = abs(fitted - exact.transpose(*fitted.dims)).mean()
    assert float(error) < float(abs(plain - exact.transpose(*plain.dims)).mean())


# ---- the grid kernels against brute force ----------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    owner=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    extra=st.integers(0, 3),
    weighted=st.booleans(),
)
def test_sum_by_adds_rows_into_their_owners(owner, extra, weighted):
    # owners unsorted, repeated and some without any row; against np.add.at
    owner = np.array(owner)
    n_owner = int(owner.max()) + 1 + extra
    rng = np.random.default_rng(owner.size)
    values = rng.random(owner.size) if weighted else None
    x = rng.random((owner.size, 3))
    expected = np.zeros((n_owner, 3))
    np.add.at(expected, owner, x * (values[:, None] if weighted else 1.0))
    summed = kernel._sum_by(owner, n_owner, values)
    assert summed.has_canonical_format
    np.testing.assert_allclose(summed @ x, expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rows=st.integers(1, 6), width=st.integers(2, draws.WIDTH - 1))
def test_search_is_searchsorted_row_by_row(data, rows, width):
    # the branch-free halving search against numpy's searchsorted on each row, with points
    # of no mass (repeated cdf values) and draws exactly on cdf values, in single precision
    mass = np.array(
        data.draw(
            st.lists(
                st.lists(
                    st.sampled_from([0.0, 0.25, 1.0, 1e-9, 3.0]), min_size=width, max_size=width
                ),
                min_size=rows,
                max_size=rows,
            )
        )
    )
    mass[:, -1] += 1.0
    cdf = np.cumsum(mass, -1)
    cdf = (cdf / cdf[:, -1:]).astype(np.float32)
    padded = np.full((rows, draws.WIDTH), 2.0, dtype=np.float32)
    padded[:, : width - 1] = cdf[:, :-1]  # the last point reads 2, as in the kernel
    n = data.draw(st.integers(1, 40))
    row = np.array(data.draw(st.lists(st.integers(0, rows - 1), min_size=n, max_size=n)))
    exact = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    u = np.array(data.draw(st.lists(st.floats(0.0, 1.0, exclude_max=True), min_size=n, max_size=n)))
    column = np.array(data.draw(st.lists(st.integers(0, width - 1), min_size=n, max_size=n)))
    u = np.where(exact, cdf[row, column], u).astype(np.float32)
    u = np.minimum(u, np.nextafter(np.float32(1.0), np.float32(0.0)))
    got = draws.search(padded.ravel(), (row * draws.WIDTH).astype(np.int32), u)
    expected = [np.searchsorted(cdf[r], v) for r, v in zip(row, u, strict=True)]
    np.testing.assert_array_equal(got, expected)


def test_draws_follow_each_template_s_posterior_on_the_grid():
    # with no intercept shift and no unobserved outcomes' noise, a template's draws are its
    # accuracy at grid points drawn from its posterior: their frequencies against the weights
    cube = rankstats.planted_cube(models=2, templates=6, samples=8, seed=3)
    design = rankstats.random_design(cube, budget=20, seed=3)
    y = cube.score.where(design).isel(task=0).transpose("model", "template", "sample").values
    fitted = kernel.fit_grid(y, np.ones((2, 6), bool), np.ones((2, 8), bool), prior="mixture")
    fitted["var_mu"] = np.zeros_like(fitted["var_mu"])
    table = kernel.grid_accuracy(fitted)
    table["var"] = np.zeros_like(table["var"])
    # distinct accuracies at every grid point, so a draw says which point it read
    table["mean"] = np.tile(np.linspace(0.0, 1.0, kernel.GRID.size), (table["mean"].shape[0], 1))
    out = draws.grid_draws(fitted, table, 20_000, np.random.default_rng(0))
    point = np.rint(out * (kernel.GRID.size - 1)).astype(int)
    for u, (m, t) in enumerate(zip(fitted["unit_slice"], fitted["unit_t"], strict=True)):
        seen = np.bincount(point[m, :, t], minlength=kernel.GRID.size) / 20_000
        weights = table["weights"][u]
        # binomial standard errors of the frequencies, 5 of them and a floor
        assert np.all(np.abs(seen - weights) <= 5 * np.sqrt(weights / 20_000) + 2e-3), u


def _brute_force_fit_terms(fitted, y):
    """Each template's log-likelihood on the grid and the pairwise gap, cell by cell."""
    slices = y.shape[0]
    loglik = np.zeros((fitted["unit_slice"].size, kernel.GRID.size))
    prior = kernel._normal_weights(kernel.PAIR_SDS)
    gap = np.zeros((slices, kernel.PAIR_SDS.size))
    for u, (m, t) in enumerate(zip(fitted["unit_slice"], fitted["unit_t"], strict=True)):
        s = np.flatnonzero(~np.isnan(y[m, t]))
        p = special.expit(fitted["mu"][m] + fitted["b"][m, s][:, None] + kernel.GRID)
        loglik[u] = (
            y[m, t, s][:, None] * np.log(p) + (1 - y[m, t, s][:, None]) * np.log1p(-p)
        ).sum(0)
        # every pair of cells of the template: observed minus expected residual product
        mean = p @ prior.T  # (cells, sds)
        for i in range(s.size):
            for j in range(i + 1, s.size):
                observed = (y[m, t, s[i]] - mean[i]) * (y[m, t, s[j]] - mean[j])
                expected = (p[i] * p[j]) @ prior.T - mean[i] * mean[j]
                gap[m] += observed - expected
    return loglik, gap


def test_grid_likelihood_and_pairwise_gap_match_cell_by_cell_sums():
    # the kernel sums cells sharing a model and sample once and the pairs through their
    # sums; brute force takes every cell and every pair of cells of every template
    cube = rankstats.planted_cube(models=3, templates=12, samples=10, seed=7)
    design = rankstats.random_design(cube, budget=40, seed=7)
    y = cube.score.where(design).isel(task=0).transpose("model", "template", "sample").values
    everything = np.ones(y.shape[:-1], bool)
    fitted = kernel.fit_grid(y, everything, np.ones((3, 10), bool), prior="normal-per-model")
    loglik, gap = _brute_force_fit_terms(fitted, y)
    np.testing.assert_allclose(fitted["loglik"], loglik, rtol=1e-10, atol=1e-9)
    p = special.expit(fitted["mu"][:, None, None] + fitted["b"][:, :, None] + kernel.GRID)
    key_p = p.reshape(-1, kernel.GRID.size)  # (model, sample) keys, as the kernel orders them
    cells = ~np.isnan(y)
    unit = np.broadcast_to(np.arange(36).reshape(3, 12, 1), y.shape)[cells]
    key = np.broadcast_to((np.arange(3)[:, None, None] * 10 + np.arange(10)), y.shape)[cells]
    yv = y[cells]
    sums = {
        "unit_y": np.bincount(unit, yv, 36),
        "unit_y2": np.bincount(unit, yv**2, 36),
        "key_y": np.bincount(key, yv, 30),
        "key_n": np.bincount(key, minlength=30).astype(float),
    }
    to_units = np.zeros((36, 30))
    to_units[unit, key] = 1.0
    by_unit = kernel._sum_by(np.repeat(np.arange(3), 12), 3)
    by_key = kernel._sum_by(np.repeat(np.arange(3), 10), 3)
    got = kernel._pair_gap(key_p, to_units @ key_p, sums, by_unit, by_key)
    np.testing.assert_allclose(got, gap, rtol=1e-9, atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 60),
    spread=st.floats(0.3, 3.0),
)
def test_sample_variance_is_the_marginal_maximum_likelihood(seed, n, spread):
    # unpenalised estimates normal about 0 with variance v + their own: the fixed-point
    # steps against a bounded scalar optimiser of the same likelihood
    rng = np.random.default_rng(seed)
    own = rng.uniform(0.05, 1.0, n)
    estimate = rng.normal(0.0, np.sqrt(spread**2 + own))
    start = 1.0
    # the modes under the starting variance and their posterior precisions, as the fit has
    precision = 1.0 / own + 1.0 / start
    modes = estimate / (1.0 + own / start)
    got = kernel._sample_variance(
        modes[None], precision[None], np.array([start]), np.ones((1, n), bool), steps=500
    )[0]

    def minus_log_likelihood(v):
        total = v + own
        return 0.5 * np.sum(np.log(total) + estimate**2 / total)

    low, high = kernel.VARIANCE_BOUNDS
    oracle = optimize.minimize_scalar(
        minus_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-10}
    ).x
    assert abs(minus_log_likelihood(got) - minus_log_likelihood(oracle)) < 1e-7
