"""The record audit: the chain, its selective tests against brute force, error control, data.

The oracle of the selective p-value is brute force that knows nothing of
the derivation in ``selection_bounds``: every sign pattern of the two
models' discordant items is applied, the whole record chain is walked again
on the changed scores, and the p-value is the share, among the patterns
under which the same step still happens, of those whose margin is at least
the observed one. ``simulate`` is what docs/records.md quotes
(``python tests/test_records.py``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats._kernels import records as _kr
from rankstats.analyses.compare import mcnemar_mde
from rankstats.errors import (
    CoordinateMismatchError,
    DimensionError,
    InputTypeError,
    MissingValueError,
    OptionError,
    UnknownNameError,
)
from rankstats.stability import record_history


def _cube(y, names=None, tasks=None):
    """A ``(model, task, sample)`` DataArray of per-item scores ``y (M, N)`` (one task)."""
    y = np.asarray(y, dtype=float)
    names = names or [f"m{i}" for i in range(len(y))]
    if tasks is None:
        return xr.DataArray(
            y[:, None, :], dims=("model", "task", "sample"), coords={"model": names}
        )
    return xr.DataArray(
        y.reshape(len(y), tasks, -1), dims=("model", "task", "sample"), coords={"model": names}
    )


def _chain_pairs(scores, codes):
    """The (previous, new) steps by a plain loop over dates, the oracle of ``record_chain``."""
    pairs, holder, best = [], None, -np.inf
    for code in sorted(set(codes)):
        members = [i for i in range(len(scores)) if codes[i] == code]
        top = members[0]
        for i in members[1:]:
            if scores[i] > scores[top] + 1e-12:
                top = i
        if scores[top] > best + 1e-12:
            if holder is not None:
                pairs.append((holder, top))
            holder, best = top, scores[top]
    return pairs


def _holds_then_beaten(score, codes, previous, new):
    """Whether ``previous`` holds the record before ``new``'s date and ``new`` beats it."""
    before = np.flatnonzero(codes < codes[new])
    pairs = _chain_pairs(score[before], codes[before])
    holder = before[pairs[-1][1]] if pairs else before[_first(score[before], codes[before])]
    return holder == previous and score[new] > score[previous] + 1e-12


def _first(scores, codes):
    """The first record: the best of the first date (ties: the one listed first)."""
    members = np.flatnonzero(codes == codes.min())
    return members[np.argmax(scores[members] > scores[members].max() - 1e-12)]


def _brute_pvalue(y, weight, codes, previous, new, best_of_date=True):
    """P(D* >= D | the step previous -> new still happens), by every sign pattern.

    ``best_of_date=False``: the event is only that ``previous`` holds the
    record until ``new``'s date and ``new`` beats it.
    """
    y = np.asarray(y, dtype=float)
    differ = np.flatnonzero(y[new] != y[previous])
    observed = (y[new] - y[previous]) @ weight
    hits = inside = 0
    for flips in itertools.product((False, True), repeat=differ.size):
        z = y.copy()
        swap = differ[np.array(flips, dtype=bool)]
        z[previous, swap], z[new, swap] = y[new, swap], y[previous, swap]
        score = z @ weight
        if (
            (previous, new) in _chain_pairs(score, codes)
            if best_of_date
            else _holds_then_beaten(score, codes, previous, new)
        ):
            inside += 1
            hits += (z[new] - z[previous]) @ weight >= observed - 1e-12
    return hits / inside


# --------------------------------------------------------------------------- the chain


def test_chain_matches_a_plain_loop():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(2, 9))
        scores = rng.integers(0, 6, size=m) / 5.0
        codes = rng.integers(0, 4, size=m)
        chain = _kr.record_chain(scores, codes, 1e-9)
        expected = _chain_pairs(scores, codes)
        got = list(zip(chain["previous"].tolist(), chain["new"].tolist(), strict=True))
        assert got == expected


def test_same_date_models_are_one_step_led_by_the_best():
    y = np.zeros((4, 20))
    y[0, :5] = 1  # m0: 0.25, day 1
    y[1, :9] = 1  # m1: 0.45, day 2
    y[2, :12] = 1  # m2: 0.60, day 2 (the best of its date)
    y[3, :8] = 1  # m3: 0.40, day 3 (no record)
    audit = record_history(_cube(y), {"m0": 1, "m1": 2, "m2": 2, "m3": 3})
    assert audit.record.values.tolist() == ["m2"]
    assert audit.previous.values.tolist() == ["m0"]
    assert int(audit.n_date_models[0]) == 2
    assert audit.sets_record.values.tolist() == [True, False, True, False]
    assert "one step" in audit.attrs["same_date"]


# --------------------------------------------------------------------------- the p-values


def test_first_step_is_the_binomial_tail_given_a_record():
    # A is the first record: nothing bounds the margin from above
    y = np.zeros((2, 30))
    y[0, :10] = 1
    y[1, :10] = 1
    y[1, 10:19] = 1  # B wins 9
    y[1, 0:2] = 0  # and loses 2
    audit = record_history(_cube(y), {"m0": "2024-01-01", "m1": "2024-02-01"})
    n, x = 11, 9
    expected = stats.binom.sf(x - 1, n, 0.5) / stats.binom.sf(n // 2, n, 0.5)
    assert audit.test.item() == "exact sign test"
    assert float(audit.pvalue[0]) == pytest.approx(expected, rel=1e-12)
    assert int(audit.wins[0]) == 9 and int(audit.losses[0]) == 2


@pytest.mark.parametrize("same_date", ["condition", "bonferroni"])
@pytest.mark.parametrize("seed", range(12))
def test_exact_pvalue_equals_brute_force_over_every_pattern(seed, same_date):
    # small binary histories with shared dates and ties: every step against brute force
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(3, 6)), 10
    y = (rng.random((m, n)) < rng.uniform(0.3, 0.7, size=(m, 1))).astype(float)
    codes = rng.integers(0, 3, size=m)
    names = [f"m{i}" for i in range(m)]
    dates = dict(zip(names, codes.tolist(), strict=True))
    audit = record_history(_cube(y, names), dates, same_date=same_date)
    weight = np.full(n, 1.0 / n)
    for step in range(audit.sizes["step"]):
        a = names.index(str(audit.previous[step].item()))
        b = names.index(str(audit.record[step].item()))
        assert audit.test[step].item() == "exact sign test"
        if same_date == "condition":
            expected = _brute_pvalue(y, weight, codes, a, b)
        else:
            g = int((codes == codes[b]).sum())
            expected = min(1.0, g * _brute_pvalue(y, weight, codes, a, b, best_of_date=False))
        assert int(audit.n_date_models[step]) == (codes == codes[b]).sum()
        assert float(audit.pvalue[step]) == pytest.approx(expected, abs=1e-12)


def test_the_holders_tenure_bounds_the_margin_and_brute_force_agrees():
    # m0 sets a record just above m1; the step m0 -> m2 must keep m0 above m1
    y = np.zeros((3, 12))
    y[1, :5] = 1  # m1 = 5/12, day 1
    y[0, :6] = 1  # m0 = 6/12, day 2
    y[2, :6] = 1
    y[2, 6:10] = 1
    y[2, 0] = 0  # m2 = 9/12, day 3: wins 4, loses 1 against m0
    codes = np.array([2, 1, 3])
    audit = record_history(_cube(y), {"m0": 2, "m1": 1, "m2": 3})
    last = audit.sel(step=audit.sizes["step"])
    assert (last.previous.item(), last.record.item()) == ("m0", "m2")
    assert np.isfinite(float(last.upper))  # m0's tenure binds
    brute = _brute_pvalue(y, np.full(12, 1 / 12), codes, 0, 2)
    assert float(last.pvalue) == pytest.approx(brute, abs=1e-12)
    # the test given only "m2 beats m0" (no tenure) is larger: it is conservative
    only_record = stats.binom.sf(3, 5, 0.5) / stats.binom.sf(2, 5, 0.5)
    assert brute < only_record


@pytest.mark.parametrize("seed", range(4))
def test_enumerated_signflip_pvalue_equals_brute_force(seed):
    # unequal item weights (tasks of different sizes) and proportions: every sign pattern
    rng = np.random.default_rng(100 + seed)
    m = 4
    y = np.round(rng.uniform(0, 1, size=(m, 9)), 1)
    values = np.full((m, 2, 6), np.nan)
    values[:, 0, :3] = y[:, :3]
    values[:, 1, :6] = y[:, 3:]
    cube = xr.DataArray(values, dims=("model", "task", "sample"), coords={"model": list("abcd")})
    codes = np.arange(m)
    audit = record_history(cube, dict(zip("abcd", codes.tolist(), strict=True)))
    weight = np.r_[np.full(3, 1 / 6), np.full(6, 1 / 12)]
    for step in range(audit.sizes["step"]):
        a = "abcd".index(str(audit.previous[step].item()))
        b = "abcd".index(str(audit.record[step].item()))
        brute = _brute_pvalue(y, weight, codes, a, b)
        assert audit.test[step].item() == "exact sign-flip"
        assert float(audit.pvalue[step]) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_monte_carlo_signflip_approaches_every_pattern(seed):
    # the kernels on one event: random sign patterns against all 2^14 of them
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.1, 1.0, size=(3, 14))
    observed = np.array([c[0].sum() * 0.3, c[1].sum() * 0.5, c[2].sum() * 0.1])
    bounds = {
        "lower": np.array([0.0, c[1].sum() * 0.2, 0.0]),
        "lower_strict": np.array([True, False, True]),
        "upper": np.array([np.inf, c[1].sum() * 0.9, c[2].sum() * 0.4]),
        "upper_strict": np.array([False, True, False]),
    }
    exact = _kr.enumerated_pvalues(c, observed, bounds, 1e-12)
    sampled = _kr.signflip_pvalues(c.T, observed, bounds, 1e-12, 60_000, rng)
    se = np.sqrt(exact * (1 - exact) / sampled["n_in_event"])
    assert (np.abs(sampled["pvalue"] - exact) < 4 * se + 2 / sampled["n_in_event"]).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.permutations(range(5)))
def test_relabelling_the_models_changes_nothing(seed, order):
    rng = np.random.default_rng(seed)
    y = (rng.random((5, 16)) < 0.5).astype(float)
    names = [f"m{i}" for i in range(5)]
    dates = {name: i for i, name in enumerate(names)}  # distinct dates: no tie rule applies
    first = record_history(_cube(y, names), dates)
    shuffled = [names[i] for i in order]
    second = record_history(_cube(y[list(order)], shuffled), dates)
    assert first.record.values.tolist() == second.record.values.tolist()
    np.testing.assert_allclose(first.pvalue.values, second.pvalue.values)
    assert ((first.pvalue > 0) & (first.pvalue <= 1)).all()
    assert (first.pvalue_adjusted >= first.pvalue).all()


def test_lower_is_better_walks_down():
    y = np.zeros((2, 20))
    y[0, :10] = 1
    y[1, :4] = 1  # fewer errors
    cube = _cube(y).assign_attrs(higher_is_better=False)
    audit = record_history(cube, {"m0": 1, "m1": 2})
    assert audit.record.item() == "m1"
    assert float(audit.margin[0]) == pytest.approx(-0.3)
    assert int(audit.wins[0]) == 6


# --------------------------------------------------------------------------- resolution


def test_mde_is_compares_and_items_needed_inverts_it():
    rng = np.random.default_rng(5)
    y = (rng.random((3, 400)) < np.array([[0.5], [0.58], [0.7]])).astype(float)
    audit = record_history(_cube(y), {"m0": 1, "m1": 2, "m2": 3}, gaps=(0.01, 0.02, 0.05))
    for step in range(audit.sizes["step"]):
        psi = int(audit.n_discordant[step]) / 400
        assert float(audit.mde[step]) == pytest.approx(mcnemar_mde(400, psi), rel=1e-12)
        for gap in audit.gap.values:
            needed = float(audit.items_needed[step].sel(gap=gap))
            # Connor's formula at the needed items reaches the gap; one item fewer does not
            assert mcnemar_mde(needed, psi) <= gap + 1e-12
            assert mcnemar_mde(needed - 1, psi) > gap - 1e-12
    # the compare analysis reports the same minimum detectable effect for the pair
    cube = rankstats.from_records(
        [
            {"model": f"m{m}", "task": "t", "template": "p", "sample": str(i), "score": y[m, i]}
            for m in range(3)
            for i in range(400)
        ]
    )
    last = audit.sel(step=audit.sizes["step"])
    pair = rankstats.compare(
        cube, between={"model": (last.record.item(), last.previous.item())}, seed=0
    )
    assert float(pair.mde.item()) == pytest.approx(float(last.mde), rel=1e-12)
    assert float(pair.difference.item()) == pytest.approx(float(last.margin), rel=1e-12)


def test_proportion_scores_use_blooms_mde():
    rng = np.random.default_rng(8)
    y = np.clip(rng.normal([[0.5], [0.6]], 0.2, size=(2, 200)), 0, 1)
    audit = record_history(_cube(y), {"m0": 1, "m1": 2}, seed=0, n_resamples=2000)
    d = y[1] - y[0]
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert float(audit.mde[0]) == pytest.approx(z * d.std(ddof=1) / np.sqrt(200), rel=1e-10)
    assert float(audit.items_needed[0].sel(gap=0.01)) == np.ceil((z * d.std(ddof=1) / 0.01) ** 2)
    assert audit.test.item() == "sign-flip"


# --------------------------------------------------------------------------- inputs


def test_dates_from_a_coordinate_a_series_or_text_stamps():
    y = (np.random.default_rng(0).random((3, 30)) < [[0.3], [0.5], [0.8]]).astype(float)
    cube = _cube(y).assign_coords(date=("model", ["2024-01-05", "2024-02-01", "2024-03-09"]))
    from_coordinate = record_history(cube)
    from_series = record_history(
        _cube(y), pd.Series(["2024-01-05", "2024-02-01", "2024-03-09"], index=["m0", "m1", "m2"])
    )
    stamps = record_history(_cube(y), {"m0": "20240105T1", "m1": "20240201T1", "m2": "20240309T1"})
    for other in (from_series, stamps):
        assert other.record.values.tolist() == from_coordinate.record.values.tolist()
        np.testing.assert_allclose(other.pvalue.values, from_coordinate.pvalue.values)
    assert from_coordinate.attrs["date_order"] == "as dates"
    assert stamps.attrs["date_order"] == "as text of one width"


@pytest.mark.parametrize(
    ("x", "dates", "error", "words"),
    [
        ("cube", {"m0": 1}, MissingValueError, "m1"),
        ("cube", {"m0": 1, "m1": None}, MissingValueError, "no date: m1"),
        ("cube", {"m0": "soon", "m1": "later"}, OptionError, "neither"),
        ("cube", None, UnknownNameError, "'date'"),
        ("cube", 3, InputTypeError, "dates must be"),
        ("nosample", {"m0": 1, "m1": 2}, DimensionError, "'sample'"),
        ("list", {"m0": 1, "m1": 2}, InputTypeError, "list"),
        ("disjoint", {"m0": 1, "m1": 2}, CoordinateMismatchError, "no item"),
        ("absent", {"m0": 1, "m1": 2}, MissingValueError, "no score for m1"),
    ],
)
def test_errors_name_the_problem(x, dates, error, words):
    y = np.ones((2, 4))
    cube = {
        "cube": _cube(y),
        "nosample": _cube(y).isel(sample=0),
        "list": [1, 2],
        "disjoint": _cube(np.array([[1, 1, np.nan, np.nan], [np.nan, np.nan, 1, 1]])),
        "absent": _cube(np.array([[1, 1, 0, 0], [np.nan] * 4])),
    }[x]
    with pytest.raises(error, match=words):
        record_history(cube, dates)


def test_options_are_checked():
    cube = _cube(np.ones((2, 4)))
    with pytest.raises(OptionError, match="gaps"):
        record_history(cube, {"m0": 1, "m1": 2}, gaps=[0.0])
    with pytest.raises(OptionError, match="alpha"):
        record_history(cube, {"m0": 1, "m1": 2}, alpha=2)
    with pytest.raises(UnknownNameError, match="no task 'zz'"):
        record_history(cube, {"m0": 1, "m1": 2}, task="zz")


def test_a_history_without_a_new_record_has_no_steps():
    y = np.zeros((2, 10))
    y[0, :6] = 1
    y[1, :5] = 1
    audit = record_history(_cube(y), {"m0": 1, "m1": 2})
    assert audit.sizes["step"] == 0
    assert audit.attrs["first_record"] == "m0"
    assert np.isnan(float(audit.resolution_mde))


# --------------------------------------------------------------------------- real dated runs


def test_real_lm_eval_runs_dated_by_their_file_names():
    # three lm-evaluation-harness runs (two of one model), dated by their result files
    from rankstats_collectors.files import lm_eval

    folder = "tests/data/lm_eval/out/folder"
    files = lm_eval.describe(folder)
    runs = []
    for (model, date), rows in files.groupby(["model", "date"]):
        label = f"{model}@{date}"
        cube = lm_eval.load(list(rows["file"]), model=label)
        runs.append((label, date, cube))
    cube = xr.concat([c for _, _, c in runs], dim="model", combine_attrs="override")
    dates = {label: date for label, date, _ in runs}
    audit = record_history(cube, dates)
    assert audit.attrs["date_order"] == "as text of one width"
    assert audit.attrs["n_items"] == cube.sizes["sample"]
    scores = audit.model_score.to_pandas()
    order = sorted(dates, key=dates.get)
    expected = _chain_pairs(scores[order].to_numpy(), np.arange(len(order)))
    assert [(order[a], order[b]) for a, b in expected] == list(
        zip(audit.previous.values, audit.record.values, strict=True)
    )
    assert ((audit.pvalue > 0) & (audit.pvalue <= 1)).all()


# --------------------------------------------------------------------------- error control


def _history(rng, n_models, n_items, jump_at=None, jump=0.0, same_date=False):
    """Equally good models on items of varied difficulty; from ``jump_at`` on, ``jump`` better."""
    p = rng.beta(2, 2, size=n_items)
    logit = np.log(p / (1 - p))
    shift = np.zeros(n_models)
    if jump_at is not None:
        shift[jump_at:] = jump
    prob = 1 / (1 + np.exp(-(logit[None, :] + shift[:, None])))
    y = (rng.random((n_models, n_items)) < prob).astype(float)
    names = [f"m{i}" for i in range(n_models)]
    codes = [i // 3 if same_date else i for i in range(n_models)]
    return _cube(y, names), dict(zip(names, codes, strict=True))


def simulate(
    n_histories,
    *,
    jump_at=None,
    jump=0.0,
    same_date=False,
    seed=0,
    n_models=12,
    n_items=300,
    alpha=0.05,
    rule="bonferroni",
):
    """Family-wise error (any null step rejected) and power (the real jump's step rejected).

    A step is null when the new record is no better than the old (both
    before, or both from, ``jump_at``); the real step is the first record
    from ``jump_at`` on, when it replaces one from before.
    """
    rng = np.random.default_rng(seed)
    false_any = found = real = 0
    for _ in range(n_histories):
        cube, dates = _history(rng, n_models, n_items, jump_at, jump, same_date)
        audit = record_history(cube, dates, alpha=alpha, same_date=rule)
        new = np.array([int(str(m)[1:]) for m in audit.record.values], dtype=int)
        old = np.array([int(str(m)[1:]) for m in audit.previous.values], dtype=int)
        cut = n_models if jump_at is None else jump_at
        null = (new < cut) == (old < cut)
        rejected = audit.pvalue_adjusted.values < alpha
        false_any += bool((rejected & null).any())
        crossing = ~null
        if crossing.any():
            real += 1
            found += bool(rejected[crossing].any())
    return {"fwer": false_any / n_histories, "power": found / real if real else np.nan}


@pytest.mark.parametrize("rule", ["bonferroni", "condition"])
def test_family_wise_error_under_the_null_is_at_most_alpha(rule):
    # 300 histories: a true FWER of 0.05 exceeds 0.05 + 2.6 SE = 0.083 with probability 0.005
    for same_date in (False, True):
        assert simulate(300, same_date=same_date, seed=11, rule=rule)["fwer"] <= 0.083


def test_power_under_a_real_improvement():
    found = simulate(200, jump_at=6, jump=0.8, seed=12)
    assert found["fwer"] <= 0.09
    assert found["power"] >= 0.7


@pytest.mark.slow
def test_family_wise_error_and_power_at_full_size():
    # 1000 histories: SE 0.007 at an error of 0.05, so 0.068 is 2.6 SE above alpha;
    # the power measured with 2000 histories is 0.844 (SE 0.011 here)
    for same_date, rule in itertools.product((False, True), ("bonferroni", "condition")):
        assert simulate(1000, same_date=same_date, seed=21, rule=rule)["fwer"] <= 0.05 + 0.018
    assert simulate(1000, jump_at=6, jump=0.8, seed=22)["power"] >= 0.78


if __name__ == "__main__":
    for name, options in (
        ("null, distinct dates", {}),
        ("null, three models a date, bonferroni", {"same_date": True}),
        ("null, three models a date, condition", {"same_date": True, "rule": "condition"}),
        ("real jump of 0.8 logit at the 7th model", {"jump_at": 6, "jump": 0.8}),
        ("real jump of 0.6 logit at the 7th model", {"jump_at": 6, "jump": 0.6}),
        ("jump of 0.8, three a date, bonferroni", {"jump_at": 6, "jump": 0.8, "same_date": True}),
        (
            "jump of 0.8, three a date, condition",
            {"jump_at": 6, "jump": 0.8, "same_date": True, "rule": "condition"},
        ),
    ):
        print(name, simulate(2000, seed=21, **options))


# --------------------------------------------------------------------------- the command


@pytest.fixture
def dated_files(tmp_path):
    rng = np.random.default_rng(4)
    y = (rng.random((4, 120)) < np.array([[0.3], [0.5], [0.45], [0.7]])).astype(float)
    cube = rankstats.from_records(
        [
            {"model": f"m{m}", "task": "t", "template": "p", "sample": str(i), "score": y[m, i]}
            for m in range(4)
            for i in range(120)
        ]
    )
    path = rankstats.save(cube, tmp_path / "history.nc")
    dates = tmp_path / "dates.csv"
    dates.write_text("model,date\nm0,2024-01-01\nm1,2024-02-01\nm2,2024-02-01\nm3,2024-05-01\n")
    return cube, path, dates


def test_the_command_writes_the_functions_tables(dated_files, tmp_path, capsys):
    import json

    from rankstats.cli import main

    cube, path, dates = dated_files
    out = tmp_path / "audit.json"
    assert main(["records", str(path), "--dates", str(dates), "--json", str(out), "--quiet"]) == 0
    document = json.loads(out.read_text())
    expected = record_history(
        cube, {"m0": "2024-01-01", "m1": "2024-02-01", "m2": "2024-02-01", "m3": "2024-05-01"}
    )
    rows = document["tables"]["records"]
    assert [row["record"] for row in rows] == expected.record.values.tolist()
    np.testing.assert_allclose([row["pvalue"] for row in rows], expected.pvalue.values)
    assert [row["items_needed_0.01"] for row in rows] == expected.items_needed.sel(
        gap=0.01
    ).values.tolist()
    assert set(document["tables"]) == {"records", "models", "resolution"}
    assert main(["records", str(path), "--dates", str(dates), "--csv", "-", "--quiet"]) == 0
    assert "# records" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "words"),
    [("model,when\nm0,1\n", "no column 'date'"), ("model,date\nm0,1\nm0,2\n", "more than one")],
)
def test_a_bad_dates_file_is_a_usage_error(dated_files, tmp_path, capsys, text, words):
    from rankstats.cli import main

    _, path, _ = dated_files
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    assert main(["records", str(path), "--dates", str(bad)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_a_model_without_a_date_is_a_data_error(dated_files, tmp_path, capsys):
    from rankstats.cli import main

    _, path, _ = dated_files
    short = tmp_path / "short.csv"
    short.write_text("model,date\nm0,2024-01-01\nm1,2024-02-01\n")
    assert main(["records", str(path), "--dates", str(short)]) == 3
    assert "m2, m3" in capsys.readouterr().err


def test_only_items_every_model_scores_count():
    y = np.zeros((2, 10))
    y[0, :4] = 1
    y[1, :7] = 1
    y[1, 9] = np.nan  # m1 lacks the last item: it is left out for both
    audit = record_history(_cube(y), {"m0": 1, "m1": 2})
    assert audit.attrs["n_items"] == 9 and audit.attrs["dropped_cells"] == 1
    np.testing.assert_allclose(audit.model_score.values, [4 / 9, 7 / 9])
    assert int(audit.n_discordant[0]) == 3


def test_real_multiprompt_runs_of_two_models_a_day_apart():
    # asdiv, three prompts, 50 items; model-b, a day later, does not beat model-a
    from rankstats_collectors.files import lm_eval

    folder = "tests/data/fixtures/lm_eval/multiprompt"
    files = lm_eval.describe(folder)
    dates = files.groupby("model")["date"].first().to_dict()
    audit = record_history(lm_eval.load(folder), dates)
    assert audit.attrs["first_record"] == "example/model-a"
    assert audit.sizes["step"] == 0 and audit.attrs["n_items"] == 50
    np.testing.assert_allclose(audit.model_score.values, [0.84, 0.8])
