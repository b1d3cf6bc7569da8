"""Claims checked together: parsing, verdicts, errors, and the family-wise error by simulation.

The simulation draws published-style estimates N(mu, se^2) with a known truth
and counts how often any verdict is wrong (a false "supported" or a false
"contradicted"). With every model tied (the least favourable case for
pairwise max-t tests) every "beats" and "best" verdict other than "not
supported" is wrong, and so is a "contradicted" top-k one. ``simulate`` is
also what docs/claims.md quotes (``python tests/test_claims.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats.errors import (
    DimensionError,
    InputTypeError,
    MissingPathError,
    MissingValueError,
    OptionError,
    UnknownNameError,
)
from rankstats.stability import Claim, check_claims, read_claims
from rankstats.stability.claims import MEAN

LEVEL = 0.95
CLAIMS = [
    "m0 beats m1 on t0",
    "m2 is best on t0",
    "m0 is in the top 2 on t1",
    "m1 is best on the benchmark mean",
]


def _wrong(verdicts, truth):
    """Whether a verdict contradicts the truth: a claim true but 'contradicted', or false but
    'supported'."""
    return any(
        (v == "supported" and not t) or (v == "contradicted" and t)
        for v, t in zip(verdicts, truth, strict=True)
    )


def _truth(mu):
    """Whether each of CLAIMS is true for the scores ``mu`` (tasks × models)."""
    mean = mu.mean(0)
    return [
        mu[0, 0] > mu[0, 1],
        bool((mu[0, 2] > np.delete(mu[0], 2)).all()),
        int((mu[1] > mu[1, 0]).sum()) < 2,
        bool((mean[1] > np.delete(mean, 1)).all()),
    ]


def simulate(mu, runs, *, se=1.0, n_resamples=300, seed=0, confidence_level=LEVEL):
    """The rate of runs with any wrong verdict, and each claim's rate of 'supported'."""
    rng = np.random.default_rng(seed)
    tasks, models = mu.shape
    names = [f"m{j}" for j in range(models)]
    index = [f"t{t}" for t in range(tasks)]
    errors = pd.DataFrame(se, index=index, columns=names)
    truth = _truth(mu)
    wrong, supported = 0, np.zeros(len(CLAIMS))
    for _ in range(runs):
        draws = pd.DataFrame(mu + se * rng.standard_normal(mu.shape), index=index, columns=names)
        result = check_claims(
            draws,
            CLAIMS,
            errors,
            n_resamples=n_resamples,
            seed=rng,
            confidence_level=confidence_level,
        )
        verdicts = list(result.verdict.sel(view="estimates").values)
        wrong += _wrong(verdicts, truth)
        supported += np.array([v == "supported" for v in verdicts])
    return wrong / runs, supported / runs


def test_family_wise_error_when_all_tied():
    """Every model tied on every task: the rate of any wrong verdict is at most 5%."""
    rate, _ = simulate(np.zeros((2, 4)), 250, seed=1)
    # a true rate of 0.05 exceeds 0.05 + 3 Monte Carlo standard errors with probability 0.001
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 250)


def test_family_wise_error_with_a_leader_near_tie():
    """m2 barely leads on t0 and m0 barely trails two models on t1: errors stay below 5%."""
    mu = np.array([[0.0, 0.0, 0.3, 0.0], [0.0, 0.3, 0.3, -1.0]])
    rate, _ = simulate(mu, 250, seed=2)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 250)


def test_power_with_clear_gaps():
    """Gaps of 10 standard errors or more: true claims supported, false ones contradicted."""
    mu = np.array([[5.0, 20.0, 10.0, -5.0], [20.0, 30.0, 0.0, -5.0]])
    rate, supported = simulate(mu, 60, seed=3)
    truth = _truth(mu)
    assert truth == [False, False, True, True]
    assert rate == 0.0
    assert supported[2] >= 0.95 and supported[3] >= 0.95


@pytest.mark.slow
def test_family_wise_error_larger():
    rate, _ = simulate(np.zeros((3, 8)), 2000, seed=4)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000)


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("a beats b on t", Claim("beats", "a", "b", "t")),
        ("a  beats  b", Claim("beats", "a", "b")),
        ("gpt-4 is best on the benchmark mean", Claim("best", "gpt-4", task=MEAN)),
        ("gpt-4 is the best on the average", Claim("best", "gpt-4", task=MEAN)),
        ("x is in the top 3 on arc", Claim("top", "x", task="arc", k=3)),
        ("x is in the top-2", Claim("top", "x", k=2)),
        ("x is best on the BBH mean", Claim("best", "x", task="BBH mean")),
    ],
)
def test_parse(text, claim):
    assert Claim.parse(text) == claim
    assert Claim.parse(claim.text) == claim


@pytest.mark.parametrize("text", ["a is good", "", "a is in the top 0 on t", "beats b"])
def test_parse_refuses(text):
    with pytest.raises(OptionError, match="claim"):
        Claim.parse(text)


def test_read_claims(tmp_path):
    file = tmp_path / "claims.txt"
    file.write_text("# a comment\n\na beats b on t  # trailing\nc is best on t\n")
    assert [c.text for c in read_claims(file)] == ["a beats b on t", "c is best on t"]
    file.write_text("a beats b on t\nnonsense\n")
    with pytest.raises(OptionError, match="line 2"):
        read_claims(file)
    file.write_text("# nothing\n")
    with pytest.raises(OptionError, match="no claim"):
        read_claims(file)
    with pytest.raises(MissingPathError):
        read_claims(tmp_path / "absent.txt")


# --------------------------------------------------------------------------- verdicts


def _published():
    scores = pd.DataFrame(
        {"a": [0.80, 0.60], "b": [0.70, 0.62], "c": [0.69, 0.40]}, index=["t1", "t2"]
    )
    return scores, pd.DataFrame(0.01, index=scores.index, columns=scores.columns)


def test_verdicts_from_estimates():
    scores, errors = _published()
    result = check_claims(
        scores,
        [
            "a is best on t1",
            "b beats c on t1",
            "c beats a on t1",
            "b is in the top 1 on t2",
            "c is in the top 2 on t2",
            "a is best on the benchmark mean",
        ],
        errors,
        seed=0,
    )
    assert list(result.verdict.sel(view="estimates").values) == [
        "supported",
        "not supported",
        "contradicted",
        "not supported",
        "contradicted",
        "supported",
    ]
    assert result.task.values.tolist() == ["t1", "t1", "t1", "t2", "t2", MEAN]
    assert result.leader.sel(claim="a is best on t1").item() == "a"
    # a leads by 10 standard errors: no winner's curse to adjust for
    assert result.leader_adjusted.sel(claim="a is best on t1").item() == pytest.approx(0.8)
    assert np.isnan(result.leader_low.sel(claim="b beats c on t1").item())
    assert result.score.sel(claim="a is best on the benchmark mean").item() == pytest.approx(0.70)


def test_lower_is_better_reverses():
    scores, errors = _published()
    result = check_claims(
        scores, ["c beats a on t1", "c is best on t2"], errors, seed=0, higher_is_better=False
    )
    assert list(result.verdict.values[:, 0]) == ["supported", "supported"]
    assert result.leader_score.values[1, 0] == pytest.approx(0.40)
    low, high = result.leader_low.values[1, 0], result.leader_high.values[1, 0]
    assert low < 0.40 < high


def test_covariance_matches_standard_errors():
    scores = pd.Series({"a": 0.80, "b": 0.78, "c": 0.60})
    claims = ["a is best", "a beats c"]
    one = check_claims(scores, claims, scores * 0 + 0.01, seed=5)
    two = check_claims(scores, claims, covariance=np.eye(3) * 1e-4, seed=5)
    np.testing.assert_allclose(one.statistic, two.statistic)
    assert (one.verdict == two.verdict).all()


def test_cube_views_original_template():
    cube = rankstats.planted_cube(models=4, templates=4, samples=300, seed=3)
    original = np.zeros((1, 4), dtype=bool)
    original[0, 0] = True
    cube = cube.assign_coords(template_is_original=(("task", "template"), original))
    means = cube.score.mean("sample").isel(task=0)
    first, rest = means.isel(template=0), means.mean("template")
    best_first = str(first.model[int(first.argmax("model"))].item())
    result = check_claims(cube, [f"{best_first} is best"], seed=0, n_resamples=300)
    assert list(result.view.values) == ["mean over templates", "original template"]
    np.testing.assert_allclose(result.score.values[0], [rest.max(), first.max()], rtol=1e-6)
    assert result.attrs["level_per_view"] == pytest.approx(0.975)
    assert result.leader.values[0, 1] == best_first


def test_cube_without_samples_says_so():
    cube = rankstats.datasets.load("mizrahi2024")
    result = check_claims(
        cube, ["flan-t5-xxl is best on the benchmark mean"], seed=0, n_resamples=200
    )
    assert list(result.view.values) == ["mean over templates"]
    assert "no samples" in result.attrs["note"]
    assert result.verdict.item() == "supported"


# --------------------------------------------------------------------------- errors


def test_unknown_model_lists_close_names():
    scores, errors = _published()
    with pytest.raises(UnknownNameError, match=r"no model 'aa'.*did you mean 'a'"):
        check_claims(scores, ["aa beats b on t1"], errors)


def test_unknown_task_and_missing_task():
    scores, errors = _published()
    with pytest.raises(UnknownNameError, match=r"no task 't3'"):
        check_claims(scores, ["a beats b on t3"], errors)
    with pytest.raises(OptionError, match="say on which task"):
        check_claims(scores, ["a beats b"], errors)


def test_mean_needs_every_task():
    scores, errors = _published()
    scores.loc["t2", "c"] = np.nan
    with pytest.raises(MissingValueError, match="'c' has no score on 'benchmark mean'"):
        check_claims(scores, ["a beats c on the mean"], errors)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"confidence_level": 1.5}, OptionError, "confidence_level"),
        ({"n_resamples": 5}, OptionError, "n_resamples"),
        ({"standard_errors": None}, OptionError, "standard_errors"),
        ({"covariance": np.eye(3)}, OptionError, "not both"),
    ],
)
def test_bad_options(kwargs, error, match):
    scores, errors = _published()
    given = {"standard_errors": errors, **kwargs}
    with pytest.raises(error, match=match):
        check_claims(scores, ["a beats b on t1"], **given)


def test_bad_inputs():
    with pytest.raises(InputTypeError):
        check_claims([0.1, 0.2], ["0 beats 1"], [0.1, 0.1])
    with pytest.raises(OptionError, match="given twice"):
        check_claims(pd.Series({"a": 1.0, "b": 0.0}), ["a beats b", "a beats b"], [1.0, 1.0])
    with pytest.raises(OptionError, match="itself"):
        check_claims(pd.Series({"a": 1.0, "b": 0.0}), ["a beats a"], [1.0, 1.0])
    with pytest.raises(DimensionError, match="no standard error for a"):
        check_claims(pd.Series({"a": 1.0, "b": 0.0}), ["a beats b"], pd.Series({"b": 1.0}))
    with pytest.raises(OptionError, match="not a cube"):
        check_claims(xr.Dataset({"score": xr.DataArray([1.0])}), ["a beats b"], [1.0])


# --------------------------------------------------------------------------- the command


def test_command_reads_a_table(tmp_path, capsys):
    import json

    from rankstats.cli import main

    table = tmp_path / "board.csv"
    table.write_text(
        "model,task,acc,se\na,t1,0.80,0.01\nb,t1,0.70,0.01\na,t2,0.6,0.01\nb,t2,0.5,0.01\n"
    )
    claims = tmp_path / "claims.txt"
    claims.write_text("a is best on the mean\n")
    out = tmp_path / "out.json"
    status = main(
        [
            "claims",
            str(table),
            "--estimates",
            "acc",
            "--standard-errors",
            "se",
            "--tasks",
            "task",
            "--claim",
            "b beats a on t1",
            "--claims",
            str(claims),
            "--seed",
            "0",
            "--json",
            str(out),
        ]
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert "| b beats a on t1 | contradicted" in printed
    assert "| benchmark mean | estimates | a |" in printed
    rows = json.loads(out.read_text())["tables"]["claims"]
    assert [row["verdict"] for row in rows] == ["contradicted", "supported"]


def test_command_errors(tmp_path, capsys):
    from rankstats.cli import main

    assert main(["claims", "mizrahi2024"]) == 2
    assert "--claim" in capsys.readouterr().err
    assert main(["claims", "mizrahi2024", "--claim", "t0pp is best on nowhere"]) == 2
    assert "no task 'nowhere'" in capsys.readouterr().err
    assert main(["claims", "mizrahi2024", "--claim", "t0pp is good"]) == 2
    table = tmp_path / "board.csv"
    table.write_text("model,acc,se\na,0.8,0.01\nb,0.7,0.01\n")
    assert main(["claims", str(table), "--estimates", "acc", "--claim", "a beats b"]) == 2
    assert "--standard-errors" in capsys.readouterr().err
    assert (
        main(
            [
                "claims",
                str(table),
                "--estimates",
                "accuracy",
                "--standard-errors",
                "se",
                "--claim",
                "a beats b",
            ]
        )
        == 2
    )
    assert "not a column" in capsys.readouterr().err


def _tied_cube(rng, models=4, templates=3, samples=200):
    """Binary scores of tied models: each sample has one difficulty for all models and
    templates, every answer drawn independently."""
    p = rng.uniform(0.2, 0.9, samples)
    score = (rng.random((models, 1, templates, samples)) < p).astype(float)
    original = np.zeros((1, templates), dtype=bool)
    original[0, 0] = True
    return xr.Dataset(
        {"score": (("model", "task", "template", "sample"), score)},
        coords={
            "model": [f"m{j}" for j in range(models)],
            "task": ["t0"],
            "template_is_original": (("task", "template"), original),
        },
        attrs={"higher_is_better": 1, "score_kind": "binary"},
    )


def simulate_cube(runs, seed=0):
    """The rate of runs with any wrong verdict on cubes of tied models (both views)."""
    rng = np.random.default_rng(seed)
    claims = ["m0 beats m1", "m2 is best", "m3 beats m0"]
    wrong = 0
    for _ in range(runs):
        result = check_claims(_tied_cube(rng), claims, n_resamples=200, seed=rng)
        wrong += bool((result.verdict != "not supported").any())
    return wrong / runs


@pytest.mark.slow
def test_family_wise_error_on_cubes():
    runs = 400
    assert simulate_cube(runs) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)


if __name__ == "__main__":  # the figures docs/claims.md quotes
    for label, mu in [
        ("all tied, 2 tasks x 4 models", np.zeros((2, 4))),
        ("near tie", np.array([[0.0, 0.0, 0.3, 0.0], [0.0, 0.3, 0.3, -1.0]])),
        ("all tied, 3 tasks x 8 models", np.zeros((3, 8))),
    ]:
        rate, _ = simulate(mu, 2000, seed=4)
        print(f"{label}: family-wise error {rate:.3f} (2000 runs)")
    print(f"tied models, cubes: family-wise error {simulate_cube(2000, seed=4):.3f} (2000 runs)")
    for gap in (1.0, 2.0, 3.0, 4.0, 5.0):
        # every claim true; each decided by a margin of `gap` standard errors of one estimate
        # (the benchmark mean's by gap / 2 standard errors of a mean over two tasks)
        mu = np.array([[gap, 0.0, 2 * gap, -gap], [2 * gap, 4 * gap, gap, 0.0]])
        rate, supported = simulate(mu, 1000, seed=5)
        print(
            f"gap {gap:g} se: error {rate:.3f}; supported: "
            + ", ".join(f"{c!r} {s:.3f}" for c, s in zip(CLAIMS, supported, strict=True))
        )
