"""The cost-accuracy frontier: kernels against brute force, the public function, the figure,
the command, and coverage and power by simulation against known accuracies and costs.

* oracles: the point-estimate front against the O(M^2) definition; the stepwise test
  written pair by pair from its definition, fed the same replicates; two models against
  the one-sided normal test of scipy;
* properties (hypothesis): permuting the models permutes every answer; the front is a
  subset of the set that cannot be excluded; a monotone transform of the cost changes
  nothing;
* coverage: the set holds every true-frontier model in at least about ``confidence_level``
  of simulated draws, from normal estimates and from a bootstrapped binary cube, at the
  least favourable truth (all models equally accurate: every model on the frontier).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats import cli, stability
from rankstats._kernels import frontier as _kf
from rankstats.errors import (
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
    RankstatsError,
)

NAMES = [f"m{i}" for i in range(8)]
COST = np.array([1.0, 2, 3, 4, 5, 6, 7, 8])
#: a staircase: m1, m4 and m6 dominated (by 0.05, 0.04, 0.05); m7 as accurate as m5 and
#: costlier, so on the frontier (the least favourable pair)
STAIRS = np.array([0.60, 0.55, 0.62, 0.64, 0.60, 0.66, 0.61, 0.66])
EQUAL = np.full(8, 0.60)


# --------------------------------------------------------------------------- oracles


def brute_front(accuracy, cost):
    m = len(accuracy)
    return np.array(
        [
            not any(cost[k] <= cost[j] and accuracy[k] > accuracy[j] for k in range(m) if k != j)
            for j in range(m)
        ]
    )


def brute_set(estimate, deviation, cost, level):
    """The stepwise test pair by pair, from the docstring's definition."""
    m, n = deviation.shape
    pairs = [(k, j) for j in range(m) for k in range(m) if k != j and cost[k] <= cost[j]]
    se = {(k, j): np.std(deviation[k] - deviation[j], ddof=1) for k, j in pairs}
    t = {(k, j): (estimate[k] - estimate[j]) / se[k, j] for k, j in pairs}
    excluded = set()
    while True:
        play = [(k, j) for k, j in pairs if j not in excluded]
        if not play:
            break
        maxima = [
            max((deviation[k, b] - deviation[j, b]) / se[k, j] for k, j in play) for b in range(n)
        ]
        critical = np.quantile(maxima, level, method="higher")
        now = {j for k, j in play if t[k, j] > critical}
        if not now:
            break
        excluded |= now
    return np.array([j not in excluded for j in range(m)])


def test_front_equals_its_definition_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        accuracy = rng.integers(0, 4, m) / 4  # many ties
        cost = rng.integers(0, 4, m).astype(float)
        np.testing.assert_array_equal(_kf.pareto_front(accuracy, cost), brute_front(accuracy, cost))


def test_front_vectorises_over_leading_axes():
    rng = np.random.default_rng(1)
    accuracy = rng.integers(0, 5, (6, 7)) / 5
    cost = rng.integers(0, 5, (6, 7)).astype(float)
    found = _kf.pareto_front(accuracy, cost)
    for row in range(6):
        np.testing.assert_array_equal(found[row], brute_front(accuracy[row], cost[row]))


def test_front_leaves_out_absent_models():
    found = _kf.pareto_front(np.array([0.5, np.nan, 0.4]), np.array([1.0, 0.5, 0.2]))
    np.testing.assert_array_equal(found, [True, False, True])


def test_stepwise_set_equals_its_definition():
    rng = np.random.default_rng(2)
    for _ in range(20):
        m = int(rng.integers(2, 7))
        deviation = rng.standard_normal((m, 300)) * rng.uniform(0.5, 2, (m, 1))
        deviation += rng.standard_normal((1, 300))  # correlated, as paired replicates are
        deviation -= deviation.mean(1, keepdims=True)
        estimate = rng.normal(0, 3, m)
        cost = rng.integers(0, 4, m).astype(float)
        found = _kf.frontier_set(estimate, deviation, cost, confidence_level=0.9)
        np.testing.assert_array_equal(
            found["frontier_set"], brute_set(estimate, deviation, cost, 0.9)
        )
        # the model named as excluder is at most as costly and more accurate
        for j in np.flatnonzero(found["excluded_by"] >= 0):
            k = found["excluded_by"][j]
            assert cost[k] <= cost[j] and estimate[k] > estimate[j]


def test_small_blocks_of_replicates_change_nothing():
    rng = np.random.default_rng(3)
    deviation = rng.standard_normal((9, 500))
    estimate, cost = rng.normal(0, 2, 9), rng.random(9)
    whole = _kf.frontier_set(estimate, deviation, cost)
    blocks = _kf.frontier_set(estimate, deviation, cost, budget=8 * 81 * 7)
    for key in ("frontier_set", "excluded_by", "statistic"):
        np.testing.assert_array_equal(whole[key], blocks[key])
    assert whole["critical_value"] == blocks["critical_value"]


def test_two_models_are_the_one_sided_normal_test():
    """With two models the family has one pair: exclude when z > the normal 95% quantile."""
    z = stats.norm.ppf(0.95)  # 1.645
    se = pd.Series({"cheap": 0.01, "dear": 0.01})
    cost = {"cheap": 1.0, "dear": 2.0}
    gap = np.sqrt(2) * 0.01
    for t, excluded in ((z + 0.08, True), (z - 0.08, False)):
        accuracy = pd.Series({"cheap": 0.5 + t * gap, "dear": 0.5})
        out = stability.cost_frontier(
            accuracy, cost, standard_errors=se, n_resamples=200_000, seed=0
        )
        assert out.attrs["critical_value"] == pytest.approx(z, abs=0.02)
        assert bool(out.frontier_set.sel(model="dear")) is not excluded
        assert out.statistic.sel(model="dear") == pytest.approx(t)
        assert bool(out.frontier_set.sel(model="cheap"))  # nothing cheaper
    # the cheaper one is never excluded by a costlier, however good
    out = stability.cost_frontier(
        pd.Series({"cheap": 0.1, "dear": 0.9}), cost, standard_errors=se, seed=0
    )
    assert out.frontier_set.values.all() and np.isnan(out.statistic.sel(model="cheap"))


def test_zero_standard_errors_settle_exactly():
    accuracy = pd.Series({"a": 0.6, "b": 0.5, "c": 0.6})
    out = stability.cost_frontier(accuracy, {"a": 1, "b": 2, "c": 3}, standard_errors=0.0, seed=0)
    np.testing.assert_array_equal(out.frontier_set.values, [True, False, True])
    assert list(out.excluded_by.values) == ["", "a", ""]


def test_a_diagonal_covariance_is_standard_errors():
    accuracy = pd.Series({"a": 0.70, "b": 0.66, "c": 0.75, "d": 0.60})
    se = pd.Series({"a": 0.01, "b": 0.02, "c": 0.015, "d": 0.01})
    cost = {"a": 1, "b": 3, "c": 9, "d": 2}
    one = stability.cost_frontier(accuracy, cost, standard_errors=se, seed=4)
    two = stability.cost_frontier(accuracy, cost, covariance=np.diag(se**2), seed=4)
    xr.testing.assert_allclose(one.drop_attrs(), two.drop_attrs())
    frame = pd.DataFrame(np.diag(se**2), index=se.index, columns=se.index).iloc[::-1, ::-1]
    three = stability.cost_frontier(accuracy, cost, covariance=frame, seed=4)
    xr.testing.assert_allclose(one.drop_attrs(), three.drop_attrs())


# --------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.integers(0, 10_000))
def test_permuting_models_permutes_the_answer(m, seed):
    rng = np.random.default_rng(seed)
    estimate = rng.normal(0, 2, m)
    cost = rng.integers(0, 3, m).astype(float)
    deviation = rng.standard_normal((m, 200))
    order = rng.permutation(m)
    one = _kf.frontier_set(estimate, deviation, cost)
    two = _kf.frontier_set(estimate[order], deviation[order], cost[order])
    np.testing.assert_array_equal(one["frontier_set"][order], two["frontier_set"])
    np.testing.assert_array_equal(
        _kf.pareto_front(estimate, cost)[order], _kf.pareto_front(estimate[order], cost[order])
    )
    # the front of the estimates is never excluded
    assert not (_kf.pareto_front(estimate, cost) & ~one["frontier_set"]).any()
    # only the order of the costs matters
    three = _kf.frontier_set(estimate, deviation, np.exp(cost) * 7)
    np.testing.assert_array_equal(one["frontier_set"], three["frontier_set"])


# --------------------------------------------------------------------------- a cube


def binary_cube(truth, n, rng, tasks=1):
    scores = rng.random((len(truth), tasks, 1, n)) < np.asarray(truth)[:, None, None, None]
    cube = xr.Dataset(
        {"score": (("model", "task", "template", "sample"), scores.astype(float))},
        coords={
            "model": NAMES[: len(truth)],
            "task": [f"t{i}" for i in range(tasks)],
            "sample_id": (("task", "sample"), [[f"s{k}" for k in range(n)]] * tasks),
        },
        attrs={"higher_is_better": 1},
    )
    return cube


def test_cube_accuracy_is_the_mean_over_tasks_of_avgp():
    rng = np.random.default_rng(5)
    cube = binary_cube([0.8, 0.6, 0.4], 50, rng, tasks=3)
    out = stability.cost_frontier(cube, {"m0": 3, "m1": 2, "m2": 1}, n_resamples=200, seed=0)
    expected = cube.score.mean(["template", "sample"]).mean("task")
    np.testing.assert_allclose(out.accuracy.values, expected.values)
    assert out.on_frontier.values.all()
    assert out.attrs["source"] == "bootstrap over samples of the mean over tasks of AvgP"
    # the same draws as the bootstrap's own replicates
    reps = stability.replicates(cube, 200, seed=0, statistics="avgp", nan_policy="omit")
    np.testing.assert_allclose(
        out.standard_error.values, reps.avgp.mean("task").std("replicate", ddof=1).values
    )


def test_cost_per_item_is_the_mean_per_evaluation():
    rng = np.random.default_rng(6)
    cube = binary_cube([0.7, 0.7, 0.5], 20, rng, tasks=2)
    cube["score"][1, 0, 0, 10:] = np.nan  # m1 saw only half of t0's items
    price = xr.DataArray(
        rng.random((3, 2, 20)), dims=("model", "task", "sample"), coords={"model": NAMES[:3]}
    )
    out = stability.cost_frontier(cube, price, n_resamples=50, seed=0)
    scored = cube.score.notnull().squeeze("template")
    expected = [float(price[j].values[scored[j].values].mean()) for j in range(3)]
    np.testing.assert_allclose(out.cost.values, expected)
    assert out.attrs["cost"].startswith("mean cost per evaluation")
    price[0, 1, 3] = np.nan
    with pytest.raises(MissingValueError, match="'m0'"):
        stability.cost_frontier(cube, price, n_resamples=50, seed=0)


def test_lower_is_better_seeks_the_lowest_score():
    errors = pd.Series({"a": 0.30, "b": 0.40, "c": 0.20})
    out = stability.cost_frontier(
        errors, {"a": 1, "b": 2, "c": 3}, standard_errors=0.01, higher_is_better=False, seed=0
    )
    np.testing.assert_array_equal(out.on_frontier.values, [True, False, True])
    np.testing.assert_array_equal(out.frontier_set.values, [True, False, True])


def test_a_model_absent_from_a_task_is_left_out():
    rng = np.random.default_rng(7)
    cube = binary_cube([0.8, 0.6, 0.4], 30, rng, tasks=2)
    cube["score"][2, 1] = np.nan
    out = stability.cost_frontier(cube, {"m0": 3, "m1": 2, "m2": 1}, n_resamples=50, seed=0)
    assert out.attrs["left_out"] == "m2"
    assert np.isnan(out.accuracy.sel(model="m2"))
    assert not out.frontier_set.sel(model="m2") and not out.on_frontier.sel(model="m2")


TWO = pd.Series({"a": 0.5, "b": 0.4})
PRICE = {"a": 1, "b": 2}
BAD = [
    ((TWO, {"a": 1}), {"standard_errors": 0.1}, MissingValueError, "no value for model 'b'"),
    ((TWO, {"a": 1, "b": -2}), {"standard_errors": 0.1}, OptionError, "'b' has -2"),
    ((TWO, PRICE), {}, InputTypeError, "either standard_errors"),
    ((TWO, PRICE), {"standard_errors": 0.1, "covariance": np.eye(2)}, InputTypeError, "not both"),
    ((pd.DataFrame({"a": [0.5]}), PRICE), {"standard_errors": 0.1}, InputTypeError, "cube"),
    ((TWO, PRICE), {"covariance": [[1, 0.9], [0.1, 1]]}, OptionError, "symmetric"),
    ((TWO, PRICE), {"covariance": [[1, 2], [2, 1]]}, OptionError, "positive semi-definite"),
    ((TWO[:1], {"a": 1}), {"standard_errors": 0.1}, DimensionError, "at least two"),
    ((TWO, PRICE), {"standard_errors": 0.1, "confidence_level": 1.5}, OptionError, "confidence"),
    (
        (TWO, xr.DataArray([[1.0]], dims=("model", "sample"))),
        {"standard_errors": 0.1},
        DimensionError,
        "needs a cube",
    ),
]


@pytest.mark.parametrize(("args", "kwargs", "error", "words"), BAD)
def test_bad_input_is_named(args, kwargs, error, words):
    with pytest.raises(error, match=words) as caught:
        stability.cost_frontier(*args, **kwargs)
    assert isinstance(caught.value, RankstatsError)


# --------------------------------------------------------------------------- the figure


def test_the_figure_marks_the_set_on_a_log_axis():
    pytest.importorskip("matplotlib")
    from rankstats.plot import plot_cost_frontier, to_png

    accuracy = pd.Series(dict(zip(NAMES, STAIRS, strict=True)))
    out = stability.cost_frontier(accuracy, dict(zip(NAMES, COST, strict=True)),
                                  standard_errors=0.005, seed=0)  # fmt: skip
    ax = plot_cost_frontier(out)
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["frontier (estimates)", "cannot be excluded", "excluded"]
    kept = int(out.frontier_set.sum())
    assert ax.get_title().startswith(f"Cost-accuracy frontier: {kept} of 8")
    assert to_png(ax)[:4] == b"\x89PNG"
    free = out.assign(cost=out.cost - 1)  # a model of cost 0
    assert plot_cost_frontier(free).get_xscale() == "symlog"


# --------------------------------------------------------------------------- the command


@pytest.fixture
def files(tmp_path):
    board = "m1,0.842,0.008\nm2,0.835,0.009\nm3,0.801,0.010\nm4,0.774,0.011\nm5,0.70,0.01\n"
    (tmp_path / "board.csv").write_text("model,accuracy,se\n" + board)
    (tmp_path / "cost.csv").write_text("model,cost\nm1,15\nm2,3\nm3,0.6\nm4,0.8\nm5,2\n")
    return tmp_path


def test_the_command_writes_the_table(files, capsys):
    argv = ["frontier", str(files / "board.csv"), "--estimates", "accuracy", "--standard-errors",
            "se", "--cost", str(files / "cost.csv"), "--seed", "0"]  # fmt: skip
    assert cli.main([*argv, "--json", "-", "--quiet"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = {row["model"]: row for row in document["tables"]["frontier"]}
    assert [row["model"] for row in document["tables"]["frontier"]] == [
        "m3",
        "m4",
        "m5",
        "m2",
        "m1",
    ]
    assert rows["m5"]["excluded_by"] == "m3" and not rows["m5"]["frontier_set"]
    assert rows["m3"]["on_frontier"] and rows["m1"]["frontier_set"]
    assert document["attrs"]["seed"] == 0
    same = stability.cost_frontier(
        pd.Series({"m1": 0.842, "m2": 0.835, "m3": 0.801, "m4": 0.774, "m5": 0.70}),
        pd.Series({"m1": 15, "m2": 3, "m3": 0.6, "m4": 0.8, "m5": 2}),
        standard_errors=pd.Series({"m1": 0.008, "m2": 0.009, "m3": 0.01, "m4": 0.011, "m5": 0.01}),
        seed=0,
    )
    assert rows["m4"]["frontier_set"] == bool(same.frontier_set.sel(model="m4"))
    assert cli.main([*argv, "--figure", str(files / "f.png")]) == 0
    shown = capsys.readouterr().out
    assert "| m5 | 2 | 0.7 |" in shown and (files / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_the_command_reads_a_cube_and_costs_per_item(tmp_path, capsys):
    rng = np.random.default_rng(8)
    truth = {"m0": 0.8, "m1": 0.5, "m2": 0.7}
    cube = rankstats.from_records(
        [
            {"model": m, "task": f"t{t}", "template": "p", "sample": f"s{k}",
             "score": float(rng.random() < p)}
            for m, p in truth.items() for t in range(2) for k in range(40)
        ],
        metric="accuracy",
    )  # fmt: skip
    path = rankstats.save(cube, tmp_path / "cube.nc")
    rows = [f"{m},t{t},s{k},{(j + 1) * 0.001}" for j, m in enumerate(NAMES[:3])
            for t in range(2) for k in range(40)]  # fmt: skip
    (tmp_path / "items.csv").write_text("model,task,sample,cost\n" + "\n".join(rows) + "\n")
    argv = ["frontier", str(path), "--cost", str(tmp_path / "items.csv"), "--seed", "0",
            "--n-resamples", "200", "--csv", str(tmp_path / "tables"), "--quiet"]  # fmt: skip
    assert cli.main(argv) == 0
    table = pd.read_csv(tmp_path / "tables" / "frontier.csv")
    np.testing.assert_allclose(table.cost, [0.001, 0.002, 0.003])
    # a sample the cube lacks, a cost file that is no table: data errors, exit 3
    (tmp_path / "bad.csv").write_text("model,task,sample,cost\nm0,t0,s99,1\n")
    assert cli.main([*argv[:3], str(tmp_path / "bad.csv")]) == 3
    assert "no sample 's99' in task 't0'" in capsys.readouterr().err
    assert cli.main([*argv[:3], str(path)]) == 3
    # a table option without --estimates: a usage error, exit 2
    assert cli.main([*argv, "--standard-errors", "se"]) == 2


# --------------------------------------------------------------------------- coverage


def simulate_estimates(truth, draws, seed, se=0.01, n_resamples=500):
    """Share of draws whose set holds every true-frontier model; of the point front; and how
    often each model is excluded."""
    rng = np.random.default_rng(seed)
    front = _kf.pareto_front(truth, COST)
    held = point = 0
    excluded = np.zeros(len(truth))
    cost = pd.Series(COST, index=NAMES)
    for _ in range(draws):
        estimate = pd.Series(truth + se * rng.standard_normal(len(truth)), index=NAMES)
        out = stability.cost_frontier(
            estimate, cost, standard_errors=se, n_resamples=n_resamples, seed=rng
        )
        held += out.frontier_set.values[front].all()
        point += out.on_frontier.values[front].all()
        excluded += ~out.frontier_set.values
    return held / draws, point / draws, excluded / draws


def simulate_cube(truth, draws, seed, n=1000, n_resamples=300):
    rng = np.random.default_rng(seed)
    front = _kf.pareto_front(truth, COST)
    held = 0
    excluded = np.zeros(len(truth))
    cost = pd.Series(COST, index=NAMES)
    for _ in range(draws):
        out = stability.cost_frontier(
            binary_cube(truth, n, rng), cost, n_resamples=n_resamples, seed=rng
        )
        held += out.frontier_set.values[front].all()
        excluded += ~out.frontier_set.values
    return held / draws, excluded / draws


def test_coverage_from_estimates_fast():
    held, point, _ = simulate_estimates(EQUAL, 400, seed=10)
    # 95% sets; 400 draws: a binomial standard error of 0.011
    assert held >= 0.92
    assert point < 0.05  # the front of the estimates alone almost never holds them all
    held, point, excluded = simulate_estimates(STAIRS, 300, seed=11)
    assert held >= 0.95
    assert excluded[[1, 6]].min() > 0.6  # dominated by 0.05 = 3.5 standard errors
    assert excluded[[0, 2, 3, 5]].max() == 0  # on the frontier, 0.02 above the next


def test_coverage_from_a_cube_fast():
    held, excluded = simulate_cube(STAIRS, 60, seed=12, n=2000, n_resamples=200)
    assert held >= 0.9
    assert excluded[[1, 6]].mean() > 0.3


@pytest.mark.slow
def test_coverage_from_estimates_slow():
    """Measured (docs/frontier.md): 95.0% at EQUAL; 99.8% at STAIRS, where m1 and m6 are
    excluded in 78% of draws and m4 in 53%."""
    held, _, _ = simulate_estimates(EQUAL, 2000, seed=1)
    assert held >= 0.935
    held, _, excluded = simulate_estimates(STAIRS, 2000, seed=1)
    assert held >= 0.95 and excluded[[1, 6]].min() > 0.7 and excluded[4] > 0.45


@pytest.mark.slow
def test_coverage_from_a_cube_slow():
    """Measured (docs/frontier.md): 95.0% of 1000 draws at EQUAL, 1000 items, 1000
    replicates."""
    held, _ = simulate_cube(EQUAL, 1000, seed=5, n=1000, n_resamples=1000)
    assert held >= 0.93


def test_the_command_selects_a_benchmark(tmp_path, capsys):
    cost = "\n".join(
        f"{m},{i + 1}" for i, m in enumerate(rankstats.datasets.load("mizrahi2024").model.values)
    )
    (tmp_path / "params.csv").write_text("model,cost\n" + cost + "\n")
    argv = ["frontier", "mizrahi2024", "--cost", str(tmp_path / "params.csv"), "--seed", "0",
            "--n-resamples", "100", "--json", "-", "--quiet"]  # fmt: skip
    assert cli.main(argv) == 0
    everything = json.loads(capsys.readouterr().out)
    assert everything["attrs"]["left_out"]  # five models lack the BBH tasks
    assert cli.main([*argv, "--benchmark", "LMentry"]) == 0
    lmentry = json.loads(capsys.readouterr().out)
    assert lmentry["attrs"]["left_out"] == ""
    assert all(row["accuracy"] is not None for row in lmentry["tables"]["frontier"])
    assert cli.main([*argv, "--benchmark", "nowhere"]) == 2
    assert "no such benchmark" in capsys.readouterr().err


# --------------------------------------------------------------------------- estimated costs


def brute_set_both(estimate, deviation, cost, cost_deviation, level):
    """The intersection-union stepwise test pair by pair, from the kernel's definition."""
    m, n = deviation.shape
    sd = lambda x: np.std(x, ddof=1)  # noqa: E731
    pairs = []
    for j in range(m):
        for k in range(m):
            if k == j:
                continue
            known = sd(cost_deviation[j] - cost_deviation[k]) <= 1e-10 * np.abs(cost).max()
            if known and cost[k] > cost[j]:
                continue
            pairs.append((k, j, known))
    se = {(k, j): sd(deviation[k] - deviation[j]) for k, j, _ in pairs}
    sc = {(k, j): sd(cost_deviation[j] - cost_deviation[k]) for k, j, _ in pairs}

    def t(k, j, known):
        accuracy = (estimate[k] - estimate[j]) / se[k, j]
        return accuracy if known else min(accuracy, (cost[j] - cost[k]) / sc[k, j])

    def null(k, j, known, b):
        accuracy = (deviation[k, b] - deviation[j, b]) / se[k, j]
        if known:
            return accuracy
        return max(accuracy, (cost_deviation[j, b] - cost_deviation[k, b]) / sc[k, j])

    excluded = set()
    while True:
        play = [p for p in pairs if p[1] not in excluded]
        if not play:
            break
        maxima = [max(null(*p, b) for p in play) for b in range(n)]
        critical = np.quantile(maxima, level, method="higher")
        now = {p[1] for p in play if t(*p) > critical}
        if not now:
            break
        excluded |= now
    return np.array([j not in excluded for j in range(m)])


def test_estimated_costs_follow_their_definition():
    rng = np.random.default_rng(20)
    for _ in range(15):
        m = int(rng.integers(2, 6))
        deviation = rng.standard_normal((m, 200))
        cost_deviation = rng.standard_normal((m, 200)) * 0.1 + rng.standard_normal((1, 200))
        cost_deviation[0] = cost_deviation[1 % m]  # one pair's cost difference is known
        estimate, cost = rng.normal(0, 3, m), rng.uniform(1, 2, m)
        found = _kf.frontier_set(estimate, deviation, cost, cost_deviation=cost_deviation)
        np.testing.assert_array_equal(
            found["frontier_set"], brute_set_both(estimate, deviation, cost, cost_deviation, 0.95)
        )


def test_costs_that_do_not_vary_are_known_costs():
    rng = np.random.default_rng(21)
    deviation = rng.standard_normal((7, 300))
    estimate, cost = rng.normal(0, 3, 7), rng.integers(0, 4, 7).astype(float)
    known = _kf.frontier_set(estimate, deviation, cost)
    fixed = _kf.frontier_set(estimate, deviation, cost, cost_deviation=np.zeros((7, 300)))
    for key in ("frontier_set", "excluded_by", "statistic"):
        np.testing.assert_array_equal(known[key], fixed[key])


def priced_cube(truth, mean_cost, n, rng):
    """A binary cube and a cost per model and item: a shared item length times the model's
    price per unit, with model-specific noise (so the order of two close prices varies)."""
    cube = binary_cube(truth, n, rng)
    length = rng.lognormal(0, 0.5, n)
    noise = rng.lognormal(0, 0.3, (len(truth), n))
    price = np.asarray(mean_cost)[:, None] * length * noise
    cost = xr.DataArray(
        price[:, None, :], dims=("model", "task", "sample"), coords={"model": NAMES[: len(truth)]}
    )
    return cube, cost


def test_estimated_cost_replicates_use_the_same_draws():
    rng = np.random.default_rng(22)
    cube, cost = priced_cube([0.7, 0.6, 0.5], [1.0, 1.1, 0.5], 30, rng)
    out = stability.cost_frontier(cube, cost, n_resamples=50, seed=3, cost_is_known=False)
    reps = stability.replicates(cube, 50, seed=3, statistics="avgp", nan_policy="omit")
    weight = reps.sample_weight.values[:, 0, :]  # (replicate, sample)
    draws = (weight @ cost.values[:, 0, :].T) / weight.sum(1, keepdims=True)  # (B, M)
    np.testing.assert_allclose(out.cost.values, cost.values.mean(axis=(1, 2)))
    # the set equals the kernel's, given these replicates
    deviation = (reps.avgp.values[:, :, 0] - reps.avgp_estimate.values[:, 0]).T
    found = _kf.frontier_set(
        out.accuracy.values, deviation, out.cost.values,
        cost_deviation=(draws - out.cost.values).T,
    )  # fmt: skip
    np.testing.assert_array_equal(out.frontier_set.values, found["frontier_set"])
    assert "bootstrapped with the accuracies" in out.attrs["cost"]
    with pytest.raises(OptionError, match="cost_is_known=False"):
        stability.cost_frontier(cube, {"m0": 1, "m1": 2, "m2": 3}, cost_is_known=False)


def simulate_priced(draws, seed, cost_is_known, n=500, n_resamples=300):
    """A (0.70, price 1.01), B (0.60, price 1.00), C (0.50, price 0.50): all three on the
    true frontier, A and B priced within noise. Share of draws whose set holds all three."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(draws):
        cube, cost = priced_cube([0.70, 0.60, 0.50], [1.01, 1.00, 0.50], n, rng)
        out = stability.cost_frontier(
            cube, cost, n_resamples=n_resamples, seed=rng, cost_is_known=cost_is_known
        )
        held += out.frontier_set.values.all()
    return held / draws


def test_estimated_costs_keep_the_level_where_known_costs_do_not_fast():
    assert simulate_priced(80, seed=23, cost_is_known=False) >= 0.9
    assert simulate_priced(80, seed=23, cost_is_known=True) < 0.8


@pytest.mark.slow
def test_estimated_costs_keep_the_level_slow():
    """Measured (docs/frontier.md): 99.9% of 1000 draws; 71.2% with the costs taken as
    known."""
    assert simulate_priced(1000, seed=24, cost_is_known=False) >= 0.935
