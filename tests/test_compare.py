"""The paired comparison of two runs: rankstats.compare and ``rankstats compare``.

Oracles, pinned here:

- ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True).pvalue`` for each
  model and task's McNemar p-value;
- ``statsmodels.stats.multitest.multipletests(p, method="holm" | "fdr_bh")[1]`` for the
  adjustment across tasks;
- ``scipy.stats.bootstrap((d,), np.mean, paired=True, method="percentile",
  rng=np.random.default_rng(seed))`` for the interval of one task: the engine draws a
  one-task cube's items exactly as scipy does, so the bounds agree to rounding;
- a NumPy two-way bootstrap written from the draws' documented order (samples, then
  templates, from one Generator) for several templates;
- simulation for the minimum detectable effect's power and for the tests' size.

Two runs of one model written by lm-eval itself (tests/data/lm_eval/) are compared at the
end. Most tests pair two prompt variants (templates 1 and 2) of the ``multiprompt``
fixture, which is written from the real asdiv run of Meta-Llama-3-8B-Instruct
(template 1 of model a is that run's scores; see tests/data/fixtures/lm_eval/README.md):
two models, one task, 50 items, binary ``acc``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rankstats
from rankstats.analyses.compare import compare_markdown, compare_tables, mcnemar_mde
from rankstats.cli import main

ROOT = Path(__file__).resolve().parent.parent
MULTIPROMPT = ROOT / "tests" / "data" / "fixtures" / "lm_eval" / "multiprompt"


@pytest.fixture(scope="module")
def lm_eval_runs():
    """Two runs of each model: prompt variants 1 and 2 of the multiprompt fixture."""
    from rankstats_collectors.files import lm_eval

    cube = lm_eval.load(MULTIPROMPT)
    return cube, cube.isel(template=[0]), cube.isel(template=[1])


def _table(a, b):
    """McNemar's 2 x 2 table of two binary vectors: rows A right/wrong, columns B."""
    return np.array(
        [
            [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
            [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
        ]
    )


def binary_cube(
    seed=0,
    models=("m1", "m2"),
    tasks=(("t1", 40), ("t2", 25), ("t3", 60)),
    templates=("p",),
    accuracy=0.7,
    shift=0.0,
):
    """A binary cube; tasks have different numbers of items (so the sample dim is padded)."""
    rng = np.random.default_rng(seed)
    records = [
        {
            "model": model,
            "task": task,
            "template": template,
            "sample": f"{task}-{i}",
            "score": float(rng.random() < accuracy + shift * (m % 2)),
        }
        for task, n in tasks
        for m, model in enumerate(models)
        for template in templates
        for i in range(n)
    ]
    return rankstats.from_records(records, score_kind="binary", metric="acc")


# --------------------------------------------------------------------------- real fixture


def test_mcnemar_equals_statsmodels_on_two_lm_eval_runs(lm_eval_runs):
    from statsmodels.stats.contingency_tables import mcnemar

    cube, first, second = lm_eval_runs
    result = rankstats.compare(first, second, n_resamples=200, seed=0)
    assert result.sizes == {"model": 2, "task": 1, "drop": 0}
    assert set(result.test.values.ravel()) == {"mcnemar"}
    for model in cube.model.values:
        a = first.score.sel(model=model, task="asdiv").values.ravel()
        b = second.score.sel(model=model, task="asdiv").values.ravel()
        table = _table(a, b)
        one = result.sel(model=model, task="asdiv")
        assert float(one.pvalue) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        assert (int(one.b), int(one.c)) == (table[0, 1], table[1, 0])
        assert float(one.difference) == pytest.approx(a.mean() - b.mean(), abs=1e-12)
        assert int(one.n_items) == 50
    # the same two runs named inside one cube
    inside = rankstats.compare(cube, between={"template": ("1", "2")}, n_resamples=200, seed=0)
    for name in ("difference", "low", "high", "pvalue", "pvalue_adjusted", "mde"):
        np.testing.assert_array_equal(inside[name].values, result[name].values)
    assert inside.attrs["a"] == "template 1" and inside.attrs["dropped"] == "nothing"


@pytest.mark.parametrize("seed", [0, 7])
def test_interval_equals_scipy_bootstrap_on_the_same_draws(lm_eval_runs, seed):
    _, first, second = lm_eval_runs
    result = rankstats.compare(first, second, n_resamples=999, seed=seed, confidence_level=0.9)
    for model in result.model.values:
        d = (first.score.sel(model=model).values - second.score.sel(model=model).values).ravel()
        oracle = stats.bootstrap(
            (d,),
            np.mean,
            paired=True,
            method="percentile",
            n_resamples=999,
            confidence_level=0.9,
            rng=np.random.default_rng(seed),
        )
        one = result.sel(model=model, task="asdiv")
        # the same draws: only the summation order of the means differs
        assert float(one.low) == pytest.approx(oracle.confidence_interval.low, abs=1e-12)
        assert float(one.high) == pytest.approx(oracle.confidence_interval.high, abs=1e-12)
        assert float(one.standard_error) == pytest.approx(oracle.standard_error, rel=1e-9)


def test_two_runs_of_one_model_imported_from_one_folder(tmp_path):
    """lm-eval's layout for a rerun: the same model folder, a second dated results/samples pair.

    The real asdiv run is copied under a later date: with ``repeats="all"`` each run is a
    template of its own, and the two are compared with ``between``. Identical runs: no
    discordant item, p = 1, and no minimum detectable effect (NaN: nothing to scale it by).
    """
    import shutil

    from rankstats_collectors.files import lm_eval

    source = ROOT / "tests" / "data" / "fixtures" / "lm_eval" / "asdiv"
    folder = tmp_path / "meta-llama__Meta-Llama-3-8B-Instruct"
    shutil.copytree(source / folder.name, folder)
    for path in list(folder.iterdir()):
        shutil.copy(path, folder / path.name.replace("2024-08-21T03-44-09", "2024-09-01T00-00-00"))
    cube = lm_eval.load(tmp_path, repeats="all")
    assert cube.template_id.values.tolist() == [["default|run=1", "default|run=2"]]
    result = rankstats.compare(
        cube, between={"template": ("default|run=1", "default|run=2")}, n_resamples=100, seed=0
    )
    one = result.squeeze()
    assert (float(one.difference), float(one.pvalue), int(one.b), int(one.c)) == (0, 1, 0, 0)
    assert float(one.score_a) == pytest.approx(0.92) and int(one.n_items) == 50
    assert np.isnan(float(one.mde)) and one.verdict.item() == "no detectable difference"
    # the folder against itself: both runs paired template by template, bootstrapped
    itself = rankstats.compare(cube, cube, n_resamples=100, seed=0).squeeze()
    assert itself.test.item() == "bootstrap" and int(itself.n_templates) == 2
    assert float(itself.pvalue) == 1 and np.isnan(float(itself.mde))


# --------------------------------------------------------------------------- several tasks


@pytest.mark.parametrize(("p_adjust", "oracle"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_every_task_against_statsmodels_and_the_adjustment(p_adjust, oracle):
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    a, b = binary_cube(seed=1), binary_cube(seed=2, shift=-0.3)
    result = rankstats.compare(a, b, p_adjust=p_adjust, n_resamples=100, seed=0)
    assert result.attrs["p_adjust"] == p_adjust
    for model in result.model.values:
        expected = []
        for task in result.task.values:
            x = a.score.sel(model=model, task=task).values.ravel()
            y = b.score.sel(model=model, task=task).values.ravel()
            keep = ~np.isnan(x)
            expected.append(mcnemar(_table(x[keep], y[keep]), exact=True).pvalue)
            assert int(result.n_items.sel(model=model, task=task)) == keep.sum()
        np.testing.assert_allclose(
            result.pvalue.sel(model=model).values, expected, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            result.pvalue_adjusted.sel(model=model).values,
            multipletests(expected, method=oracle)[1],
            atol=1e-12,
        )
    # m2 is 30 points worse in B: found on the large tasks, in A's favour
    assert result.verdict.sel(model="m2", task="t3").item() == "A better"
    assert result.verdict.sel(model="m1", task="t3").item() == "no detectable difference"


def test_what_only_one_run_has_is_dropped_and_said():
    a = binary_cube(seed=3, models=("m1", "m2", "only_a"))
    b = binary_cube(
        seed=4, models=("m1", "m2"), tasks=(("t1", 40), ("t2", 30), ("t4", 10))
    )  # t2 has 5 items more
    result = rankstats.compare(a, b, n_resamples=50, seed=0)
    assert result.model.values.tolist() == ["m1", "m2"]
    assert result.task.values.tolist() == ["t1", "t2"]
    rows = {
        (w, t, why): (int(c), which)
        for w, t, why, c, which in zip(
            result.drop_what.values,
            result.drop_task.values,
            result.drop_why.values,
            result.drop_count.values,
            result.drop_which.values,
            strict=True,
        )
    }
    assert rows[("models", "", "only in run A")] == (1, "only_a")
    assert rows[("tasks", "", "only in run A")] == (1, "t3")
    assert rows[("tasks", "", "only in run B")] == (1, "t4")
    assert rows[("items", "t2", "not in run A")] == (5, "t2-25, t2-26, t2-27, t2-28, t2-29")
    assert (
        "5 items of task t2: t2-25, t2-26, t2-27, t2-28, t2-29 (not in run A)"
        in result.attrs["dropped"]
    )
    # the shared items are compared as if the rest were never there
    trimmed = rankstats.compare(
        a.sel(model=["m1", "m2"], task=["t1", "t2"]),
        b.sel(task=["t1", "t2"]).isel(sample=slice(0, 40)),
        n_resamples=50,
        seed=0,
    )
    for name in ("difference", "pvalue", "b", "c"):
        np.testing.assert_allclose(result[name].values, trimmed[name].values)


def test_scores_missing_on_one_side_are_left_out_and_counted():
    a, b = binary_cube(seed=5), binary_cube(seed=6)
    b["score"][0, 0, 0, :3] = np.nan  # m1 lacks three items of t1 in B
    result = rankstats.compare(a, b, n_resamples=50, seed=0)
    one = result.sel(model="m1", task="t1")
    assert int(one.n_items) == 37 and int(one.n_unpaired) == 3
    assert "3 scores of task t1 for m1" in result.attrs["dropped"]
    b["score"][0, 0] = np.nan  # m1 has no score of t1 in B: not tested, and said
    one = rankstats.compare(a, b, n_resamples=50, seed=0).sel(model="m1", task="t1")
    assert one.verdict.item() == "not tested" and np.isnan(float(one.pvalue_adjusted))
    assert int(one.n_items) == 0 and int(one.n_unpaired) == 40


def test_several_templates_use_the_two_way_bootstrap():
    """Items and templates drawn independently, as the engine documents: an oracle in NumPy."""
    rng = np.random.default_rng(8)
    n_templates, n_items, n_resamples, seed = 4, 30, 300, 11
    x = rng.random((n_templates, n_items))
    y = np.clip(x - 0.1 + 0.2 * rng.random((n_templates, n_items)), 0, 1)
    cube = lambda v: rankstats.from_records(  # noqa: E731
        [
            {"model": "m", "task": "t", "template": f"p{p}", "sample": str(s), "score": v[p, s]}
            for p in range(n_templates)
            for s in range(n_items)
        ],
        score_kind="proportion",
    )
    result = rankstats.compare(cube(x), cube(y), n_resamples=n_resamples, seed=seed)
    assert result.attrs["over"] == "both" and int(result.n_templates.item()) == n_templates
    assert result.test.item() == "bootstrap"
    d = x - y
    draw = np.random.default_rng(seed)
    items = draw.integers(0, n_items, size=(n_resamples, 1, n_items))[:, 0]
    templates = draw.integers(0, n_templates, size=(n_resamples, 1, n_templates))[:, 0]
    replicate = np.array([d[np.ix_(t, s)].mean() for t, s in zip(templates, items, strict=True)])
    low, high = np.percentile(replicate, [2.5, 97.5])
    assert float(result.difference.item()) == pytest.approx(d.mean(), abs=1e-12)
    assert float(result.low.item()) == pytest.approx(low, abs=1e-9)
    assert float(result.high.item()) == pytest.approx(high, abs=1e-9)
    below, above = (replicate <= 0).sum(), (replicate >= 0).sum()
    assert float(result.pvalue.item()) == pytest.approx(
        min(1, 2 * (1 + min(below, above)) / (n_resamples + 1))
    )


def test_two_models_of_one_cube():
    cube = binary_cube(seed=9, shift=0.25, tasks=(("t1", 300),))
    result = rankstats.compare(cube, between={"model": ("m2", "m1")}, n_resamples=200, seed=0)
    assert "model" not in result.dims
    assert result.verdict.sel(task="t1").item() == "A better"


def test_lower_is_better_reads_the_verdict_the_other_way():
    a = binary_cube(seed=10, shift=0.3, tasks=(("t1", 200),))
    b = binary_cube(seed=11, tasks=(("t1", 200),))
    for cube in (a, b):
        cube.attrs["higher_is_better"] = 0
    result = rankstats.compare(a, b, n_resamples=100, seed=0)
    assert float(result.difference.sel(model="m2").item()) > 0
    assert result.verdict.sel(model="m2").item() == "B better"


# --------------------------------------------------------------------------- properties


@st.composite
def two_runs(draw):
    n_tasks = draw(st.integers(1, 3))
    n_items = draw(st.integers(3, 15))
    binary = draw(st.booleans())
    values = st.sampled_from([0.0, 1.0]) if binary else st.floats(0, 1, width=32)
    shape = (2, n_tasks, 1, n_items)
    size = 2 * n_tasks * n_items
    first = np.array(draw(st.lists(values, min_size=size, max_size=size)))
    second = np.array(draw(st.lists(values, min_size=size, max_size=size)))

    def cube(v):
        da = xr.DataArray(
            v.reshape(shape),
            dims=("model", "task", "template", "sample"),
            coords={"model": ["x", "y"], "task": [f"t{i}" for i in range(n_tasks)]},
        )
        return da.to_dataset(name="score").assign_attrs(
            score_kind="binary" if binary else "proportion", higher_is_better=1
        )

    return cube(first), cube(second)


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(two_runs(), st.integers(0, 2**16))
def test_swapping_the_runs_negates_the_difference_and_flips_the_verdict(runs, seed):
    a, b = runs
    forward = rankstats.compare(a, b, n_resamples=50, seed=seed)
    backward = rankstats.compare(b, a, n_resamples=50, seed=seed)
    np.testing.assert_array_equal(forward.difference.values, -backward.difference.values)
    np.testing.assert_allclose(forward.low.values, -backward.high.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(forward.high.values, -backward.low.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(forward.pvalue.values, backward.pvalue.values, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(forward.b.values, backward.c.values)
    flipped = {"A better": "B better", "B better": "A better"}
    assert [
        flipped.get(v, v) for v in forward.verdict.values.ravel()
    ] == backward.verdict.values.ravel().tolist()
    assert (
        (forward.low <= forward.difference + 1e-12) & (forward.difference <= forward.high + 1e-12)
    ).all()


# --------------------------------------------------------------------------- power and size


def test_mcnemar_mde_solves_connors_sample_size():
    za, n = stats.norm.ppf(0.975), np.array([30, 100, 1000])
    for power in (0.3, 0.8, 0.95):
        zb = stats.norm.ppf(power)
        for psi in (0.05, 0.2, 0.6):
            delta = mcnemar_mde(n, psi, power=power)
            back = (za * np.sqrt(psi) + zb * np.sqrt(psi - delta**2)) ** 2 / delta**2
            np.testing.assert_allclose(back, n, rtol=1e-10)
    assert np.isnan(mcnemar_mde(50, 0.0))
    with pytest.raises(rankstats.RankstatsError, match="power"):
        mcnemar_mde(50, 0.2, power=1.0)


def _power(n, psi, alpha, repeats, rng):
    """Rejection rates of the exact and of the chi-square McNemar tests at the MDE."""
    delta = mcnemar_mde(n, psi, alpha=alpha)
    counts = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=repeats)
    b, c = counts[:, 0], counts[:, 1]
    exact = np.where(
        b + c == 0, 1.0, np.minimum(1, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
    )
    chi2 = stats.chi2.sf((b - c) ** 2 / np.maximum(b + c, 1), 1)
    return (exact < alpha).mean(), (chi2 < alpha).mean()


def test_at_the_mde_the_tests_reject_with_about_the_stated_power():
    """Connor's formula is asymptotic: the chi-square test reaches 0.80, the exact one a bit less.

    Measured with ``_power(n, psi, 0.05, 20000, np.random.default_rng(0))``: the exact test
    rejects 0.76 (n = 50, psi = 0.3) to 0.79 (n = 1000, psi = 0.3) and 0.80 (n = 5000) of
    the time; the chi-square test 0.80 to 0.81 for n = 400 to 5000, 0.83 to 0.84 for n = 50
    to 200. 4,000 repeats: standard error 0.0065.
    """
    rng = np.random.default_rng(0)
    for n, psi in ((100, 0.2), (400, 0.2), (1000, 0.3)):
        exact, chi2 = _power(n, psi, 0.05, 4000, rng)
        assert 0.73 <= exact <= 0.81, (n, psi, exact)
        if n >= 400:
            assert abs(chi2 - 0.8) <= 0.025, (n, psi, chi2)


def test_the_verdict_keeps_its_level_when_the_runs_do_not_differ():
    """Size under no difference: 400 tasks of one model, each its own draws.

    Measured with this test's seeds: the exact McNemar rejects 0.045 of the tasks, the
    bootstrap test of continuous scores 0.055 (0.028-0.045 and 0.055-0.063 with seeds 12
    to 14), at alpha 0.05 unadjusted; the 95 % intervals cover 0 for 0.935-0.938 of the
    tasks (the percentile interval is a little short with 60 items).
    """
    rng = np.random.default_rng(12)
    n_tasks, n_items = 400, 60
    shape = (1, n_tasks, 1, n_items)

    def cube(values, kind):
        da = xr.DataArray(
            values,
            dims=("model", "task", "template", "sample"),
            coords={"task": [f"t{i}" for i in range(n_tasks)]},
        )
        return da.to_dataset(name="score").assign_attrs(score_kind=kind)

    right = (rng.random(shape) < 0.7).astype(float)
    other = (rng.random(shape) < 0.7).astype(float)
    binary = rankstats.compare(
        cube(right, "binary"), cube(other, "binary"), n_resamples=2, seed=0, p_adjust="none"
    )
    rate = float((binary.pvalue < 0.05).mean())
    assert rate <= 0.06, rate
    x = rng.normal(size=shape)
    y = x + rng.normal(size=shape)  # paired, same mean
    continuous = rankstats.compare(
        cube(x, "continuous"), cube(y, "continuous"), n_resamples=400, seed=1, p_adjust="none"
    )
    rate = float((continuous.pvalue < 0.05).mean())
    assert 0.02 <= rate <= 0.09, rate
    covered = ((continuous.low <= 0) & (continuous.high >= 0)).mean()
    assert 0.91 <= float(covered) <= 0.98


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"score_kind": "continuous"}, "differ in score_kind"),
        ({"higher_is_better": 0}, "differ in higher_is_better"),
        ({"metric": "exact_match"}, "differ in metric"),
    ],
)
def test_mismatched_runs_are_refused(change, match):
    a, b = binary_cube(), binary_cube(seed=1)
    b.attrs.update(change)
    with pytest.raises(rankstats.CubeError, match=match):
        rankstats.compare(a, b, n_resamples=10)


def test_no_overlap_is_refused():
    a = binary_cube(tasks=(("t1", 10),))
    b = binary_cube(tasks=(("t2", 10),))
    with pytest.raises(rankstats.RankstatsError, match="no overlap: the runs share no task"):
        rankstats.compare(a, b, n_resamples=10)
    c = binary_cube(models=("other",), tasks=(("t1", 10),))
    with pytest.raises(rankstats.RankstatsError, match="share no model"):
        rankstats.compare(a, c, n_resamples=10)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"between": {"task": ("t1", "t2")}}, rankstats.RankstatsError, "cannot name 'task'"),
        ({"between": {"template": ("p", "nope")}}, rankstats.RankstatsError, "'nope'"),
        ({"between": {"model": ("m1", "m9")}}, rankstats.RankstatsError, "no model 'm9'"),
        ({"between": {"model": ("m1", "m1")}}, rankstats.RankstatsError, "two different labels"),
        ({}, TypeError, "give two runs"),
        ({"between": {"model": ("m1", "m2")}, "power": 1.5}, ValueError, "power=1.5"),
        ({"between": {"model": ("m1", "m2")}, "n_resamples": 1}, ValueError, "at least 2"),
    ],
)
def test_bad_options_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        rankstats.compare(binary_cube(), **kwargs)


def test_aggregated_scores_are_refused():
    with pytest.raises(rankstats.DimensionError, match="no 'sample' dimension"):
        rankstats.compare(
            rankstats.datasets.load("mizrahi2024"), between={"model": ("t0_3b", "minotaur-15b")}
        )


# --------------------------------------------------------------------------- layout and CLI


def test_tables_and_markdown_name_what_was_dropped():
    a = binary_cube(seed=3, models=("m1", "only_a"))
    b = binary_cube(seed=4, models=("m1",))
    result = rankstats.compare(a, b, n_resamples=20, seed=0)
    tables = compare_tables(result)
    assert tables["comparison"].index.names == ["model", "task"]
    assert tables["dropped"].to_dict("records") == [
        {
            "task": "",
            "model": "",
            "what": "models",
            "count": 1,
            "which": "only_a",
            "why": "only in run A",
        }
    ]
    text = compare_markdown(result)
    assert "## Dropped" in text and "| only_a | only in run A |" in text


def one_line_error(err: str, *words: str) -> None:
    """A user error: one line on standard error, naming what is wrong, no traceback."""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


@pytest.fixture()
def run_files(tmp_path):
    a = binary_cube(seed=3, models=("m1", "m2", "only_a"))
    b = binary_cube(seed=4, models=("m1", "m2"), shift=0.3)
    return (str(rankstats.save(a, tmp_path / "a.nc")), str(rankstats.save(b, tmp_path / "b.nc")))


def test_cli_markdown(run_files, capsys):
    a, b = run_files
    assert main(["compare", a, b, "--seed", "1", "--n-resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# A: {a} vs B: {b}")
    assert "| m2 | t3 |" in out and "only_a" in out and "holm" in out


def test_cli_json(run_files, tmp_path, capsys):
    a, b = run_files
    path = tmp_path / "out.json"
    assert (
        main(
            [
                "compare",
                a,
                b,
                "--seed",
                "1",
                "--n-resamples",
                "50",
                "--json",
                str(path),
                "--p-adjust",
                "bh",
                "--alpha",
                "0.1",
                "--power",
                "0.9",
                "--confidence-level",
                "0.9",
            ]
        )
        == 0
    )
    document = json.loads(path.read_text())
    assert document["attrs"]["p_adjust"] == "bh" and document["attrs"]["seed"] == 1
    assert document["attrs"]["alpha"] == 0.1 and document["attrs"]["power"] == 0.9
    assert "only_a" in document["attrs"]["dropped"]
    rows = document["tables"]["comparison"]
    assert len(rows) == 6 and {
        "model",
        "task",
        "difference",
        "low",
        "high",
        "pvalue_adjusted",
        "mde",
        "verdict",
    } <= set(rows[0])
    assert document["tables"]["dropped"][0]["which"] == "only_a"
    assert capsys.readouterr().out.startswith("# A: ")  # --json PATH keeps the markdown
    # to standard output, without the markdown
    assert main(["compare", a, b, "--seed", "1", "--n-resamples", "50", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["tables"]["comparison"][0]["model"] == "m1"


def test_cli_csv(run_files, tmp_path, capsys):
    a, b = run_files
    folder = tmp_path / "tables"
    assert (
        main(
            ["compare", a, b, "--seed", "1", "--n-resamples", "50", "--csv", str(folder), "--quiet"]
        )
        == 0
    )
    assert capsys.readouterr().out == ""
    assert (folder / "comparison.csv").read_text().startswith("model,task,score_a,score_b,")
    assert "only_a" in (folder / "dropped.csv").read_text()
    assert main(["compare", a, b, "--seed", "1", "--n-resamples", "50", "--csv", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# comparison\n") and "# dropped\n" in out


def test_cli_between(run_files, capsys):
    a, _ = run_files
    assert (
        main(["compare", a, "--between", "model", "m1", "m2", "--seed", "0", "--n-resamples", "20"])
        == 0
    )
    assert capsys.readouterr().out.startswith("# A: model m1 vs B: model m2")


def test_cli_seed_is_drawn_and_printed(run_files, capsys):
    a, b = run_files
    assert main(["compare", a, b, "--n-resamples", "20", "--quiet"]) == 0
    assert "rankstats: seed" in capsys.readouterr().err


def test_cli_errors(run_files, tmp_path, capsys):
    a, b = run_files
    other = binary_cube()
    other.attrs["score_kind"] = "continuous"
    c = str(rankstats.save(other, tmp_path / "c.nc"))
    assert main(["compare", a, c, "--seed", "0"]) == 3
    one_line_error(capsys.readouterr().err, "differ in score_kind", "'binary'", "'continuous'")
    assert main(["compare", a, str(tmp_path / "missing.nc")]) == 2
    one_line_error(capsys.readouterr().err, "missing.nc")
    assert main(["compare", a]) == 2
    one_line_error(capsys.readouterr().err, "--between")
    assert main(["compare", a, b, "--between", "model", "m1", "m2"]) == 2
    one_line_error(capsys.readouterr().err, "--between")
    assert main(["compare", a, "--between", "task", "t1", "t2"]) == 2
    one_line_error(capsys.readouterr().err, "cannot name 'task'")
    assert main(["compare", a, b, "--alpha", "1.5"]) == 2
    assert main(["compare", a, b, "--p-adjust", "nope"]) == 2
    assert main(["compare", a, b, "--json", "-", "--csv", "-"]) == 2
    capsys.readouterr()
    disjoint = str(rankstats.save(binary_cube(tasks=(("z", 5),)), tmp_path / "d.nc"))
    assert main(["compare", a, disjoint, "--seed", "0"]) == 3
    one_line_error(capsys.readouterr().err, "no overlap", "task")
    # a failed run leaves an earlier output as it was
    out = tmp_path / "out.json"
    out.write_text("earlier")
    assert main(["compare", a, c, "--seed", "0", "--json", str(out)]) == 3
    assert out.read_text() == "earlier"


def test_two_runs_written_by_lm_eval_itself(tmp_path):
    """Two dated runs of one model, written by lm-eval (tests/data/lm_eval/): each prompt
    variant's exact McNemar equals statsmodels', the interval scipy's bootstrap."""
    import shutil

    from statsmodels.stats.contingency_tables import mcnemar

    from rankstats_collectors.files import lm_eval

    source = ROOT / "tests" / "data" / "lm_eval" / "out" / "folder" / "org__dummy-a"
    stamps = sorted({path.stem.rsplit("_", 1)[-1] for path in source.glob("results_*.json")})
    assert len(stamps) == 2
    runs = []
    for stamp in stamps:
        folder = tmp_path / stamp / source.name
        folder.mkdir(parents=True)
        for path in source.glob(f"*_{stamp}.*"):
            shutil.copy(path, folder / path.name)
        runs.append(lm_eval.load(tmp_path / stamp))
    a, b = runs
    assert a.sizes["template"] == 2 and a.attrs["score_kind"] == "binary"
    for t in range(2):
        one = rankstats.compare(
            a.isel(template=[t]), b.isel(template=[t]), n_resamples=2000, seed=t
        ).squeeze()
        x = a.score.isel(template=t).values.ravel()
        y = b.score.isel(template=t).values.ravel()
        table = [
            [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
            [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
        ]
        assert one.test.item() == "mcnemar" and table[0][1] + table[1][0] > 0
        assert float(one.pvalue) == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
        assert (int(one.b), int(one.c)) == (table[0][1], table[1][0])
        assert float(one.difference) == pytest.approx(np.mean(x - y), abs=1e-12)
        oracle = stats.bootstrap(
            (x - y,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(t)
        )
        assert float(one.low) == pytest.approx(oracle.confidence_interval.low, abs=1e-12)
        assert float(one.high) == pytest.approx(oracle.confidence_interval.high, abs=1e-12)
