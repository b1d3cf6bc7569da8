"""Verbalizer analyses: planted effects are recovered; the binomial test agrees with scipy."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

import rankstats
from rankstats._kernels.verbalizer import SHAPES, curve_shape
from rankstats.analyses.verbalizer import (
    CONDITIONS,
    chance_test,
    cot_comparison,
    curve_shapes,
    group_accuracy,
    verbalizer_accuracy,
    verbalizer_analysis,
)
from rankstats.render import sections, to_markdown

VERBALIZERS = [
    ("natural", "golden"),
    ("natural", "1|0"),
    ("natural", "yes|no"),
    *[
        ("neutral", v)
        for v in ("foo|bar", "bar|foo", "sfo|lax", "lax|sfo", "lake|river", "river|lake")
    ],
    ("unnatural", "flipped golden"),
    ("unnatural", "0|1"),
    ("unnatural", "no|yes"),
]
# planted accuracy under the unnatural verbalizers, smallest model first
UNNATURAL = {"Scaler": (0.3, 0.5, 0.7), "Inverse": (0.7, 0.5, 0.3), "Ushape": (0.6, 0.2, 0.7)}
NATURAL, NEUTRAL, COT_GAIN = 0.9, 0.8, 0.1
TASKS, SAMPLES = ("t1", "t2", "t3"), 100
UNPARSEABLE = {("Ushape-2", "unnatural"): 0.3}


def planted_rows():
    rng = np.random.default_rng(0)
    rows = []
    for family, curve in UNNATURAL.items():
        for size, unnatural in enumerate(curve, start=1):
            model = f"{family}-{size}"
            for task in TASKS:
                forms = [(g, v, "direct") for g, v in VERBALIZERS]
                forms.append(("unnatural", "flipped golden", "cot"))
                for group, name, prompting in forms:
                    accuracy = {"natural": NATURAL, "neutral": NEUTRAL, "unnatural": unnatural}[
                        group
                    ]
                    if prompting == "cot":
                        accuracy = unnatural + COT_GAIN
                    correct = np.zeros(SAMPLES)
                    correct[rng.permutation(SAMPLES)[: round(accuracy * SAMPLES)]] = 1
                    unparseable = np.zeros(SAMPLES)
                    share = UNPARSEABLE.get((model, group), 0.0) if prompting == "direct" else 0
                    wrong = np.flatnonzero(correct == 0)
                    unparseable[wrong[: round(share * SAMPLES)]] = 1
                    for sample in range(SAMPLES):
                        rows.append(
                            {
                                "model": model,
                                "task": task,
                                "template": f"{group}:{name}:{prompting}",
                                "sample": sample,
                                "score": correct[sample],
                                "unparseable": unparseable[sample],
                                "verbalizer_group": group,
                                "verbalizer": name,
                                "prompting": prompting,
                                "family": family,
                                "parameters": 10.0**size,
                                "n_labels": 2,
                            }
                        )
    return rows


@pytest.fixture(scope="module")
def cube():
    import pandas as pd

    frame = pd.DataFrame(planted_rows())
    places = {
        "template_attrs": ("verbalizer_group", "verbalizer", "prompting"),
        "model_attrs": ("family", "parameters"),
        "task_attrs": ("n_labels",),
    }
    flags = frame.pop("unparseable")
    scores = rankstats.from_records(frame, score_kind="binary", metric="accuracy", **places)
    flagged = rankstats.from_records(frame.assign(score=flags), score_kind="binary", **places)
    return scores.assign(unparseable=flagged["score"])


@pytest.fixture(scope="module")
def analysis(cube):
    return verbalizer_analysis(cube)


def models():
    return [f"{family}-{size}" for family in UNNATURAL for size in (1, 2, 3)]


def test_group_accuracy_recovers_the_planted_values(analysis):
    expected = np.array([[NATURAL, NEUTRAL, UNNATURAL[m[:-2]][int(m[-1]) - 1]] for m in models()])
    found = analysis.group_accuracy.sel(model=models(), group=["natural", "neutral", "unnatural"])
    np.testing.assert_allclose(found.values, expected, rtol=0, atol=1e-12)
    by_task = analysis.group_accuracy_by_task.transpose("task", "model", "group")
    np.testing.assert_allclose(
        by_task.sel(model=models()).values, np.broadcast_to(expected, (3, 9, 3)), atol=1e-12
    )


def test_natural_unnatural_gap(analysis):
    expected = [NATURAL - UNNATURAL[m[:-2]][int(m[-1]) - 1] for m in models()]
    np.testing.assert_allclose(
        analysis.natural_unnatural_gap.sel(model=models()), expected, atol=1e-12
    )
    assert analysis.natural_unnatural_gap_by_task.dims == ("model", "task")


def test_curve_shapes_recover_the_planted_families(analysis):
    shapes = analysis.group_shape.to_pandas()
    assert shapes["unnatural"].to_dict() == {
        "Scaler": "scaling",
        "Inverse": "inverse scaling",
        "Ushape": "U-shaped",
    }
    assert set(shapes["natural"]) == set(shapes["neutral"]) == {"flat"}
    verbalizers = analysis.verbalizer_shape.sel(verbalizer=["flipped golden", "0|1", "no|yes"])
    assert (verbalizers.sel(model_family="Ushape") == "U-shaped").all()
    cot = analysis.cot_shape.sel(condition="flipped golden, CoT").to_series().to_dict()
    assert cot == {"Scaler": "scaling", "Inverse": "inverse scaling", "Ushape": "U-shaped"}
    assert analysis.curve_model.sel(model_family="Inverse").values.tolist() == [
        "Inverse-1",
        "Inverse-2",
        "Inverse-3",
    ]


def test_chance_test_agrees_with_scipy(cube, analysis):
    from statsmodels.stats.multitest import multipletests

    test = chance_test(cube)
    pvalues = []
    for model in models():
        for group in ("natural", "neutral", "unnatural"):
            one = test.sel(model=model, group=group)
            members = (cube.verbalizer_group == group) & (cube.prompting == "direct")
            scores = cube.score.sel(model=model).where(members)
            k, n = int(scores.sum()), int(scores.notnull().sum())
            assert (int(one.correct), int(one.n)) == (k, n)
            reference = binomtest(k, n, 0.5).pvalue
            assert float(one.pvalue) == pytest.approx(reference, rel=1e-12, abs=1e-300)
            pvalues.append(reference)
    holm = multipletests(pvalues, method="holm")[1]
    np.testing.assert_allclose(
        test.pvalue_adjusted.sel(model=models()).values.ravel(), holm, rtol=1e-10
    )
    verdicts = analysis.chance_verdict.sel(group="unnatural").to_series()
    assert verdicts["Scaler-3"] == verdicts["Inverse-1"] == "above chance"
    assert verdicts["Scaler-1"] == verdicts["Ushape-2"] == "below chance"
    assert verdicts["Scaler-2"] == "not distinguishable"
    assert (analysis.chance_verdict.sel(group="natural") == "above chance").all()


def test_per_task_tests_agree_with_scipy(cube):
    test = chance_test(cube, alternative="less").sel(model="Ushape-2", group="unnatural")
    for task in TASKS:
        k, n = int(test.correct_by_task.sel(task=task)), int(test.n_by_task.sel(task=task))
        assert n == 300 and k == 60
        assert float(test.pvalue_by_task.sel(task=task)) == pytest.approx(
            binomtest(k, n, 0.5, alternative="less").pvalue, rel=1e-12
        )


def test_unparseable_shares_per_model_and_group(analysis):
    shares = analysis.chance_unparseable_share.to_series()
    assert shares[("Ushape-2", "unnatural")] == pytest.approx(0.3)
    assert (
        shares.drop(("Ushape-2", "unparseable"), errors="ignore")
        .drop(("Ushape-2", "unnatural"))
        .eq(0)
        .all()
    )
    assert int(analysis.chance_unparseable.sel(model="Ushape-2", group="unnatural")) == 270


def test_unparseable_answers_scored_correct_are_refused(cube):
    broken = cube.copy(deep=True)
    where = dict(model=0, task=0, template=0, sample=0)
    broken["unparseable"][where] = 1.0
    broken["score"][where] = 1.0
    with pytest.raises(
        rankstats.ScoreValueError,
        match="unparseable answer\\(s\\) are scored "
        "as correct, first at model='Scaler-1', task='t1'",
    ):
        verbalizer_analysis(broken)


def test_verbalizer_accuracy(analysis, cube):
    accuracy = analysis.verbalizer_accuracy
    assert accuracy.verbalizer.values.tolist() == [name for _, name in VERBALIZERS]
    assert accuracy.verbalizer_group.values.tolist() == [group for group, _ in VERBALIZERS]
    assert float(accuracy.sel(model="Ushape-2", verbalizer="0|1")) == pytest.approx(0.2)
    looped = [
        float(
            cube.score.sel(model="Scaler-1")
            .where((cube.verbalizer == name) & (cube.prompting == "direct"))
            .mean()
        )
        for _, name in VERBALIZERS
    ]
    np.testing.assert_allclose(accuracy.sel(model="Scaler-1"), looped, rtol=0, atol=1e-12)


def test_cot_comparison_and_mcnemar(cube, analysis):
    expected = {
        m: [
            NATURAL,
            UNNATURAL[m[:-2]][int(m[-1]) - 1],
            UNNATURAL[m[:-2]][int(m[-1]) - 1] + COT_GAIN,
        ]
        for m in models()
    }
    found = analysis.cot_accuracy.sel(condition=list(CONDITIONS)).to_pandas()
    for model, values in expected.items():
        np.testing.assert_allclose(found.loc[model].values, values, rtol=0, atol=1e-12)
    result = cot_comparison(cube)
    for model in ("Scaler-1", "Ushape-3"):
        one = cube.score.sel(model=model)
        direct = one.where(one.template_id == "unnatural:flipped golden:direct").max("template")
        cot = one.where(one.template_id == "unnatural:flipped golden:cot").max("template")
        b = int(((direct == 1) & (cot == 0)).sum())
        c = int(((direct == 0) & (cot == 1)).sum())
        row = result.sel(model=model)
        assert (int(row.direct_only), int(row.cot_only), int(row.n_items)) == (b, c, 300)
        assert float(row.mcnemar_pvalue) == pytest.approx(
            binomtest(b, b + c, 0.5).pvalue, rel=1e-12
        )


def test_group_accuracy_without_prompting_or_samples():
    cube = rankstats.from_records(
        [
            {
                "model": "m",
                "task": t,
                "template": v,
                "verbalizer_group": g,
                "verbalizer": v,
                "score": s,
            }
            for t, scores in {"a": (0.9, 0.5, 0.3), "b": (0.7, 0.4, 0.1)}.items()
            for (g, v), s in zip(
                [("natural", "golden"), ("neutral", "foo|bar"), ("unnatural", "flipped golden")],
                scores,
                strict=True,
            )
        ],
        template_attrs=("verbalizer_group", "verbalizer"),
    )
    assert group_accuracy(cube).values.round(6).tolist() == [[0.8, 0.45, 0.2]]
    analysis = verbalizer_analysis(cube)
    assert "chance_pvalue" not in analysis and "cot_accuracy" not in analysis
    assert "group_shape" not in analysis
    with pytest.raises(rankstats.DimensionError, match="needs a 'sample' dimension"):
        chance_test(cube)


def test_name_shared_by_two_groups_is_prefixed():
    cube = rankstats.from_records(
        [
            {
                "model": "m",
                "task": "t",
                "template": g,
                "verbalizer_group": g,
                "verbalizer": "x|y",
                "score": s,
            }
            for g, s in (("natural", 1.0), ("unnatural", 0.0))
        ],
        template_attrs=("verbalizer_group", "verbalizer"),
    )
    assert verbalizer_accuracy(cube).verbalizer.values.tolist() == ["natural x|y", "unnatural x|y"]


def test_errors():
    plain = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 1}])
    with pytest.raises(rankstats.DimensionError, match="verbalizer_group"):
        verbalizer_analysis(plain)
    mixed = rankstats.from_records(
        [
            {
                "model": "m",
                "task": t,
                "template": "g",
                "sample": 0,
                "verbalizer_group": "natural",
                "verbalizer": "golden",
                "n_labels": n,
                "score": 1,
            }
            for t, n in (("two", 2), ("three", 3))
        ],
        template_attrs=("verbalizer_group", "verbalizer"),
        task_attrs=("n_labels",),
    )
    with pytest.raises(rankstats.CubeError, match="different chance levels"):
        chance_test(mixed)
    assert float(chance_test(mixed, chance=0.25).chance.squeeze()) == 0.25
    levels = chance_test(mixed, chance=0.25).accuracy_by_task.squeeze().values.tolist()
    assert levels == [1.0, 1.0]


@pytest.mark.parametrize(
    ("values", "shape"),
    [
        ([0.5, 0.51, 0.49], "flat"),
        ([0.3, 0.5, 0.7], "scaling"),
        ([0.3, 0.29, 0.7], "scaling"),
        ([0.7, 0.5, 0.3], "inverse scaling"),
        ([0.6, 0.2, 0.7], "U-shaped"),
        ([0.2, 0.6, 0.3], "inverted U-shaped"),
        ([0.5, 0.2, 0.8, 0.5], "non-monotonic"),
        ([0.5, 0.56, 0.52], "flat"),
        ([0.4, 0.6], "scaling"),
        ([0.4], "single model"),
    ],
)
def test_curve_shape_rule(values, shape):
    assert SHAPES[int(curve_shape(np.array(values), 0.05))] == shape
    padded = np.array([*values, np.nan, np.nan])
    assert SHAPES[int(curve_shape(padded, 0.05))] == shape
    assert int(curve_shape(np.full(3, np.nan), 0.05)) == -1


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(0, 100), min_size=1, max_size=6),
    shift=st.integers(-50, 50),
    tolerance=st.sampled_from([0.0, 2.5, 10.5]),
)
def test_curve_shape_properties(values, shift, tolerance):
    # integer accuracy points: sums and differences are exact, so no comparison sits on a tie
    a = np.array(values, dtype=float)
    code = int(curve_shape(a, tolerance))
    assert int(curve_shape(a + shift, tolerance)) == code
    if a.max() - a.min() <= tolerance:
        assert SHAPES[code] in ("flat", "single model")
    mirrored = SHAPES[int(curve_shape(a[::-1], tolerance))]
    swap = {"scaling": "inverse scaling", "inverse scaling": "scaling"}
    assert mirrored == swap.get(SHAPES[code], SHAPES[code])


def test_curve_shapes_vectorised_equals_looped(analysis, cube):
    values = analysis.verbalizer_accuracy
    together = curve_shapes(values, cube, tolerance=0.02).shape
    for label in values.verbalizer.values:
        alone = curve_shapes(values.sel(verbalizer=label), cube, tolerance=0.02).shape
        assert together.sel(verbalizer=label).values.tolist() == alone.values.tolist()


# the planted natural accuracies tie every model: the main report warns that tau is undefined
@pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")
def test_report_has_a_verbalizer_section(cube):
    report = rankstats.report(cube, n_resamples=0)
    assert "group_accuracy" in report and "chance_pvalue" in report
    keys = [section.key for section in sections(report)]
    # the last of the results, before the bookkeeping (conventions, what was left out)
    assert keys[-9:-3] == [
        "verbalizer_groups",
        "verbalizer_chance",
        "verbalizer_verbalizers",
        "verbalizer_tasks",
        "verbalizer_cot",
        "verbalizer_shapes",
    ]
    text = to_markdown(report)
    assert "## Instruction following: accuracy per verbalizer group" in text
    assert "| Ushape | Ushape-1, Ushape-2, Ushape-3 |" in text
    plain = rankstats.from_records(
        [
            {"model": m, "task": "t", "template": p, "score": s}
            for m, s in (("a", 0.2), ("b", 0.4))
            for p in ("x", "y")
        ]
    )
    assert not any(
        s.key.startswith("verbalizer") for s in sections(rankstats.report(plain, n_resamples=0))
    )


def test_figures(cube):
    pytest.importorskip("matplotlib")
    from rankstats.plot.verbalizer import figures

    family = ["Ushape-1", "Ushape-2", "Ushape-3"]
    pictures = figures(verbalizer_analysis(cube.sel(model=family)))
    assert set(pictures) == {
        "verbalizer_groups:Ushape",
        "verbalizer_verbalizers:Ushape",
        "verbalizer_cot:Ushape",
        *(f"verbalizer_tasks:{m}" for m in family),
    }
    assert all(png.startswith(b"\x89PNG") for png in pictures.values())


@pytest.mark.filterwarnings("ignore::rankstats.RankstatsWarning")  # three models often tie
def test_html_report_carries_the_verbalizer_figures(cube):
    pytest.importorskip("matplotlib")
    from rankstats.plot.report import figures
    from rankstats.render import to_html

    family = ["Ushape-1", "Ushape-2", "Ushape-3"]
    report = rankstats.report(cube.sel(model=family), n_resamples=0)
    pictures = figures(report)
    assert {"verbalizer_groups:Ushape", "verbalizer_cot:Ushape"} <= set(pictures)
    page = to_html(report, pictures)
    assert 'title="verbalizer_groups:Ushape"' in page
    assert 'title="verbalizer_tasks:Ushape-1"' in page


def test_imports_stay_light():
    code = (
        "import json, sys; import rankstats.analyses.verbalizer, rankstats.plot.verbalizer; "
        "print(json.dumps([m for m in ('matplotlib', 'scipy.stats') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_model_family_coordinate_is_renamed_first(cube):
    clashing = cube.rename(family="model_family")
    with pytest.raises(rankstats.DimensionError, match="rename it first"):
        verbalizer_analysis(clashing, family="model_family")
    renamed = verbalizer_analysis(clashing.rename(model_family="family"))
    assert renamed.group_shape.sel(model_family="Scaler", group="unnatural") == "scaling"


def test_dimension_order_does_not_matter(cube, analysis):
    shuffled = cube.transpose("sample", "template", "model", "task")
    shuffled = shuffled.assign_coords(
        {
            name: shuffled[name].transpose("template", "task")
            for name in ("verbalizer_group", "verbalizer", "prompting", "template_id")
        }
    )
    again = verbalizer_analysis(shuffled)
    for name in (
        "group_accuracy",
        "verbalizer_accuracy",
        "chance_pvalue",
        "cot_accuracy",
        "cot_mcnemar_pvalue",
    ):
        xr.testing.assert_allclose(again[name].transpose(*analysis[name].dims), analysis[name])
    assert (again.group_shape == analysis.group_shape).all()


def test_chunked_cube_gives_the_same_analysis(cube, analysis):
    pytest.importorskip("dask")
    chunked = verbalizer_analysis(cube.chunk({"model": 3, "task": 1})).compute()
    for name, value in analysis.data_vars.items():
        if value.dtype.kind in "fi":
            xr.testing.assert_allclose(chunked[name], value)
        else:
            assert (chunked[name] == value).all(), name
