"""Minimal template edits: pair finding, edit rules, per-model differences and corrected tests."""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import rankstats
from rankstats import render
from rankstats.analyses.edits import (
    describe_edit,
    edit_pairs,
    edit_rules,
    largest_edits,
    minimal_edits,
)
from rankstats.cli import main
from rankstats.errors import DimensionError, RankstatsWarning
from tests.mizrahi import RELEASE


def levenshtein(a, b) -> int:
    """Textbook dynamic programme: the oracle for the banded, blocked search."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def brute_force(texts, groups, max_distance, min_distance, unit):
    from rankstats._kernels.edits import tokenize

    sequences = [[t for t, _, _ in tokenize(text, unit)] for text in texts]
    out = []
    for i, j in itertools.combinations(range(len(texts)), 2):
        if groups[i] != groups[j] or not texts[i] or not texts[j]:
            continue
        d = levenshtein(sequences[i], sequences[j])
        if min_distance <= d <= max_distance:
            out.append((i, j, d))
    return out


# ---------------------------------------------------------------- tokens and rules


def test_placeholders_keep_their_quotes_and_punctuation_stands_alone():
    from rankstats._kernels.edits import tokenize

    tokens = [t for t, _, _ in tokenize("Don't use \"{letter}\" or '{x}' or {y}:\nok.")]
    assert tokens == [
        "Don't",
        "use",
        '"{letter}"',
        "or",
        "'{x}'",
        "or",
        "{y}",
        ":",
        "\n",
        "ok",
        ".",
    ]


@pytest.mark.parametrize(
    ("a", "b", "rule"),
    [
        (
            'Write a word that excludes the letter "{letter}".',
            'Write a word that lacks the letter "{letter}".',
            "excludes → lacks",
        ),
        (
            'Write a word that does not include the letter "{letter}".',
            'Write a word that does not have the letter "{letter}".',
            "include → have",
        ),
        (
            'Create a word that does not include the letter "{letter}".',
            'Create a word that does not include the letter "{letter}":',
            "'.' → ':'",
        ),
        (
            'Write a word that lacks the letter "{letter}"',
            'Write a word that lacks the letter "{letter}".',
            "+ '.'",
        ),
        (
            'Your task is to write a word without the letter "{letter}".',
            'Your task is to write a word without using the letter "{letter}".',
            "+ 'using'",
        ),
        (
            "Are all the words in {words} categorized as {category}?",
            "Q: Are all the words in {words} categorized as {category}?",
            "+ 'Q:'",
        ),
        (
            "Create a sentence that ends with {word}.",
            'Create a sentence that ends with "{word}".',
            '{word} → "{word}"',
        ),
        ("Which word rhymes with {query}?", "What word rhymes with {query}?", "Which → What"),
        ("Answer {q}.\nAnswer:", "Answer {q}.\n\nAnswer:", "+ '\\n'"),
        ("Answer  {q}.", "Answer {q}.", "(whitespace)"),
        ("Answer {q}.", "Answer {q}.", "(identical)"),
        ("Say a b c d {q}", "Say x b c y {q}", "a → x; d → y"),
    ],
)
def test_rules_read_like_the_papers_tables(a, b, rule):
    assert describe_edit(a, b) == rule


def test_a_rule_reversed_is_the_reverse_edit():
    a, b = "Please name a fruit {x}.", "Name a red fruit {x}:"
    forward, backward = describe_edit(a, b).split("; "), describe_edit(b, a).split("; ")
    flipped = []
    for part in backward:
        if part.startswith("+ "):
            flipped.append("- " + part[2:])
        elif part.startswith("- "):
            flipped.append("+ " + part[2:])
        else:
            before, after = part.split(" → ")
            flipped.append(f"{after} → {before}")
    assert flipped == forward


# ---------------------------------------------------------------- the search


def test_blocked_search_equals_comparing_every_pair():
    rng = np.random.default_rng(3)
    vocabulary = ["a", "word", "the", "letter", "{x}", '"{x}"', ".", ":", "not", "write"]
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(0, 9))) for _ in range(160)]
    texts[5] = ""
    groups = rng.integers(0, 3, size=len(texts)).tolist()
    for unit, max_distance, min_distance in [
        ("tokens", 0, 0),
        ("tokens", 1, 1),
        ("tokens", 2, 0),
        ("characters", 3, 1),
    ]:
        found = edit_pairs(
            texts, groups, max_distance=max_distance, unit=unit, min_distance=min_distance
        )
        expected = brute_force(texts, groups, max_distance, min_distance, unit)
        assert list(found.itertuples(index=False, name=None)) == expected, (unit, max_distance)
        assert found.attrs["candidates"] <= found.attrs["possible"]


def test_blocking_compares_a_small_share_of_the_pairs(released):
    _, found, _ = released
    assert found.attrs["possible_pairs"] > 500_000
    assert found.attrs["candidates"] < 0.05 * found.attrs["possible_pairs"]


# ---------------------------------------------------------------- the released data


@pytest.fixture(scope="module")
def released():
    cube = rankstats.datasets.load("mizrahi2024")
    start = time.perf_counter()
    edits = minimal_edits(cube)
    seconds = time.perf_counter() - start
    return cube, edits, seconds


def _release_accuracy(task: str) -> pd.DataFrame:
    """The release's own per-template accuracy CSV, read directly."""
    table = pd.read_csv(RELEASE / "paraphrases accuracies" / "LMentry" / f"{task}.csv", index_col=0)
    return table.rename(columns=lambda c: c.removesuffix("_acc"))


def test_all_25_tasks_take_seconds(released):
    cube, edits, seconds = released
    assert seconds < 5.0
    assert set(edits["task"].values) <= set(cube["task"].values)
    assert len(set(edits["task"].values)) == 25


def test_word_not_containing_has_the_papers_edits(released):
    _, edits, _ = released
    one = edits.isel(pair=np.asarray(edits["task"].values == "word_not_containing"))
    rules = set(one["rule"].values)
    assert "excludes → lacks" in rules
    assert rules & {"include → have", "have → include"}
    # every pair of one edit reads the same way
    assert not rules & {"lacks → excludes"}
    assert not {"include → have", "have → include"} <= rules


def _include_to_have(one):
    """Each include/have pair, oriented include → have: (template ids, differences)."""
    out = []
    for k in range(one.sizes["pair"]):
        rule = str(one["rule"].values[k])
        if rule in ("include → have", "have → include"):
            sign = 1.0 if rule == "include → have" else -1.0
            ids = (one["template_id"].values[k], one["template_id_b"].values[k])
            out.append((ids[:: int(sign)], sign * one["difference"].isel(pair=k)))
    return out


def test_differences_are_those_the_release_implies(released):
    _, edits, _ = released
    accuracy = _release_accuracy("word_not_containing")
    one = edits.isel(pair=np.asarray(edits["task"].values == "word_not_containing"))
    for k in range(one.sizes["pair"]):
        a, b = int(one["template_id"].values[k]), int(one["template_id_b"].values[k])
        expected = accuracy.loc[b] - accuracy.loc[a]
        got = one["difference"].isel(pair=k).to_series()
        np.testing.assert_allclose(got[expected.index], expected, atol=1e-6)
    # the include/have pairs named in the paper's direction
    texts = pd.read_csv(
        RELEASE / "automatic paraphrases" / "LMentry" / "word_not_containing.csv", index_col=0
    )["prompt template"]
    for (a, b), _ in _include_to_have(one):
        assert describe_edit(texts.loc[int(a)], texts.loc[int(b)]) == "include → have"


def test_the_papers_table_12_values(released):
    """Table 12 of Mizrahi et al. (2024): accuracy differences printed to two decimals."""
    _, edits, _ = released
    one = edits.isel(pair=np.asarray(edits["task"].values == "word_not_containing"))
    lacks = one.isel(pair=np.asarray(one["rule"].values == "excludes → lacks"))
    by_ids = {
        (a, b): lacks["difference"].isel(pair=k)
        for k, (a, b) in enumerate(
            zip(lacks["template_id"].values, lacks["template_id_b"].values, strict=True)
        )
    }
    # "Write a word that excludes ..." .54 -> "... lacks ..." .12 (flan-t5-large, -.42)
    assert float(by_ids[("52", "117")].sel(model="flan-t5-large")) == pytest.approx(
        -0.42, abs=0.006
    )
    # the same without the final period: .46 -> .88 (flan-t5-xl, +.42)
    assert float(by_ids[("56", "58")].sel(model="flan-t5-xl")) == pytest.approx(0.42, abs=0.006)
    include_have = _include_to_have(one)
    for model, printed in [
        ("falcon-7b-instruct", -0.62),
        ("flan-t5-xl", 0.31),
        ("ultralm-13b", -0.35),
    ]:
        values = [float(d.sel(model=model)) for _, d in include_have]
        assert min(abs(v - printed) for v in values) < 0.006, (model, values)


def test_the_papers_average_effect_of_excludes_to_lacks(released):
    """Section 5 of Mizrahi et al. (2024): 'excludes' -> 'lacks' costs flan-t5-large 28
    accuracy points on average and gains flan-t5-xl 46 (printed as whole percentages)."""
    rules = edit_rules(released[1]).sel(rule="excludes → lacks")
    assert int(rules["n_tasks"]) == 1 and int(rules["n_pairs"]) == 11
    means = rules["mean_difference"]
    assert round(100 * float(means.sel(model="flan-t5-large"))) == -28
    assert round(100 * float(means.sel(model="flan-t5-xl"))) == 46


def test_aggregated_scores_admit_no_test(released):
    _, edits, _ = released
    assert "pvalue" not in edits and "pvalue_adjusted" not in edits
    assert edits.attrs["test"].startswith("none: the cube has no sample dimension")
    with pytest.raises(ValueError, match="needs tests"):
        largest_edits(edits, by="pvalue")


def test_edit_rules_match_a_groupby(released):
    _, edits, _ = released
    rules = edit_rules(edits)
    long = edits["difference"].to_dataframe().reset_index()
    long["rule"] = edits["rule"].values[long["pair"]]
    long["task"] = edits["task"].values[long["pair"]]
    expected = long.groupby(["rule", "model"])["difference"].mean().unstack("model")
    got = rules["mean_difference"].transpose("rule", "model").to_pandas()
    np.testing.assert_allclose(
        got.loc[expected.index, expected.columns], expected, rtol=0, atol=1e-9
    )
    frame = pd.DataFrame({"rule": edits["rule"].values, "task": edits["task"].values})
    counts = frame.groupby("rule").agg(n_pairs=("task", "size"), n_tasks=("task", "nunique"))
    assert (rules["n_pairs"].to_series()[counts.index] == counts["n_pairs"]).all()
    assert (rules["n_tasks"].to_series()[counts.index] == counts["n_tasks"]).all()
    order = list(zip(-rules["n_tasks"].values, -rules["n_pairs"].values, strict=True))
    assert order == sorted(order)


def test_largest_edits_come_first(released):
    _, edits, _ = released
    table = largest_edits(edits, top=30)
    assert len(table) == 30
    sizes = table["difference"].abs().to_numpy()
    assert (np.diff(sizes) <= 0).all()
    assert sizes[0] == pytest.approx(float(np.nanmax(np.abs(edits["difference"].values))))
    row = table.iloc[0]
    assert row["score_b"] - row["score"] == pytest.approx(row["difference"])
    only = largest_edits(edits, top=None, rule="excludes → lacks")
    assert set(only["edit"]) == {"excludes → lacks"}


# ---------------------------------------------------------------- per-sample tests


def planted_cube(reps, real=5, null=10, samples=60, p=0.5, p_real=0.8, rho=0.5, seed=0):
    """Binary per-sample cube: each task holds ``real`` edits that move both models
    (accuracy p -> p_real) and ``null`` edits that move nothing (correlated answers)."""
    rng = np.random.default_rng(seed)
    n_pairs = real + null
    texts = [
        (
            f"Read w{2 * k} w{2 * k + 1} carefully and answer {{x}}.",
            f"Read w{2 * k} w{2 * k + 1} carefully {'then' if k < real else 'so'} answer {{x}}.",
        )
        for k in range(n_pairs)
    ]
    shape = (2, reps, n_pairs, samples)
    first = rng.random(shape) < p
    second_null = np.where(rng.random(shape) < rho, first, rng.random(shape) < p)
    second_real = rng.random(shape) < p_real
    second = np.where((np.arange(n_pairs) < real)[:, None], second_real, second_null)
    m, t, k, s = np.meshgrid(
        np.arange(2), np.arange(reps), np.arange(n_pairs), np.arange(samples), indexing="ij"
    )
    frames = [
        pd.DataFrame(
            {
                "model": np.array(["m1", "m2"])[m.ravel()],
                "task": t.ravel(),
                "template": 2 * k.ravel() + side,
                "sample": s.ravel(),
                "template_text": np.array([pair[side] for pair in texts], dtype=object)[k.ravel()],
                "score": values.ravel().astype(float),
            }
        )
        for side, values in ((0, first), (1, second))
    ]
    return rankstats.from_records(pd.concat(frames, ignore_index=True), score_kind="binary")


@pytest.fixture(scope="module")
def planted():
    return planted_cube(reps=300)


def test_mcnemar_and_corrections_match_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    from statsmodels.stats.multitest import multipletests

    cube = planted_cube(reps=3, samples=40, seed=5)
    edits = minimal_edits(cube, p_adjust="bh", family="task")
    score = cube["score"]
    for k in (0, 7, 20):
        task = edits["task"].values[k]
        a, b = int(edits["template"].values[k]), int(edits["template_b"].values[k])
        x = score.sel(model="m2", task=task).isel(template=a).values
        y = score.sel(model="m2", task=task).isel(template=b).values
        table = [
            [np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
            [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))],
        ]
        expected = sm_mcnemar(table, exact=True).pvalue
        assert float(edits["pvalue"].sel(model="m2").isel(pair=k)) == pytest.approx(expected)
    for task in np.unique(edits["task"].values):
        chosen = np.asarray(edits["task"].values == task)
        raw = edits["pvalue"].isel(pair=chosen).values.ravel()
        adjusted = edits["pvalue_adjusted"].isel(pair=chosen).values.ravel()
        np.testing.assert_allclose(adjusted, multipletests(raw, method="fdr_bh")[1])
    holm = minimal_edits(cube, p_adjust="holm", family="model")
    for model in ("m1", "m2"):
        raw = holm["pvalue"].sel(model=model).values
        np.testing.assert_allclose(
            holm["pvalue_adjusted"].sel(model=model).values, multipletests(raw, method="holm")[1]
        )
    assert holm.attrs["test"] == "McNemar (exact), holm-corrected"


def _flags(edits, level):
    """Per task: false and total discoveries, and the planted edits' detection rate."""
    real = np.asarray(edits["rule"].values == "and → then")
    flagged = edits["pvalue_adjusted"].values < level
    task = pd.factorize(edits["task"].values)[0]
    false = np.bincount(task, weights=(flagged & ~real).sum(axis=0))
    total = np.bincount(task, weights=flagged.sum(axis=0))
    return false, total, flagged[:, real].mean()


def test_planted_edits_are_flagged_and_the_fdr_is_near_its_level(planted):
    """Benjamini–Hochberg at q = 0.1, each task (one repetition) its own family.

    With 20 true nulls of 30 tests, BH's false discovery rate is q · 20/30 = 0.067
    for continuous p-values and at most that for discrete ones. Over 300
    repetitions the standard error of the observed rate is below 0.005, so a
    tolerance of 3 standard errors separates a correct procedure from a broken one.
    """
    q, reps = 0.1, 300
    bound = q * 20 / 30
    edits = minimal_edits(planted, method="midp", p_adjust="bh", family="task")
    assert set(edits["rule"].values) == {"and → then", "and → so"}
    assert edits.sizes["pair"] == 15 * reps
    false, total, power = _flags(edits, q)
    fdp = false / np.maximum(total, 1)
    se = fdp.std(ddof=1) / np.sqrt(reps)
    assert fdp.mean() <= bound + 3 * se
    assert fdp.mean() >= bound / 2  # near the level, not an empty procedure
    assert power > 0.85
    # without a correction the same tests make more false discoveries than q allows
    raw = edits.assign(pvalue_adjusted=edits["pvalue"])
    false_raw, total_raw, _ = _flags(raw, q)
    assert (false_raw / np.maximum(total_raw, 1)).mean() > bound + 3 * se
    # the exact test is conservative
    exact = minimal_edits(planted, method="exact", p_adjust="bh", family="task")
    false_exact, total_exact, _ = _flags(exact, q)
    assert (false_exact / np.maximum(total_exact, 1)).mean() <= bound + 3 * se


def test_holm_keeps_the_familywise_error(planted):
    alpha, reps = 0.1, 300
    edits = minimal_edits(planted, method="midp", p_adjust="holm", family="task")
    false, _, power = _flags(edits, alpha)
    any_false = (false > 0).mean()
    assert any_false <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)
    assert power > 0.6


def test_rules_count_significant_pairs(planted):
    edits = minimal_edits(planted.isel(task=slice(0, 20)), p_adjust="bh", family="task")
    rules = edit_rules(edits, alpha=0.1)
    flagged = (edits["pvalue_adjusted"] < 0.1).sum("pair")
    assert int(rules["n_significant"].sum()) == int(flagged.sum())
    assert (rules["n_tested"].sel(rule="and → so") == 200).all()
    table = largest_edits(edits, top=5, by="pvalue")
    assert (np.diff(table["pvalue_adjusted"]) >= 0).all()


def test_absent_models_and_missing_samples_stay_out_of_the_family():
    cube = planted_cube(reps=2, samples=30, seed=2)
    score = cube["score"].copy()
    score.loc[{"model": "m1", "task": score["task"].values[0]}] = np.nan
    score[{"sample": slice(0, 5), "template": 1}] = np.nan
    edits = minimal_edits(cube.assign(score=score), p_adjust="holm")
    first = np.asarray(edits["task"].values == score["task"].values[0])
    assert np.isnan(edits["pvalue"].sel(model="m1").values[first]).all()
    assert np.isnan(edits["pvalue_adjusted"].sel(model="m1").values[first]).all()
    assert not np.isnan(edits["pvalue"].sel(model="m2").values).any()
    tested = int(np.isfinite(edits["pvalue"].values).sum())
    raw = edits["pvalue"].values[np.isfinite(edits["pvalue"].values)]
    smallest = np.nanmin(edits["pvalue_adjusted"].values)
    assert smallest == pytest.approx(min(1.0, raw.min() * tested))
    assert int(edits["n_samples"].sel(model="m2").isel(pair=0)) in (25, 30)


def test_non_binary_samples_are_not_tested():
    cube = rankstats.from_records(
        [
            {
                "model": "m",
                "task": "t",
                "template": p,
                "sample": s,
                "template_text": text,
                "score": 0.25 * (s + k),
            }
            for k, (p, text) in enumerate([("a", "Use {x}."), ("b", "Use {x}:")])
            for s in range(3)
        ]
    )
    edits = minimal_edits(cube)
    assert "pvalue" not in edits and edits.attrs["test"].startswith("none: the per-sample")
    assert float(edits["difference"].squeeze()) == pytest.approx(0.25)


# ---------------------------------------------------------------- errors


def test_bad_input_is_named():
    cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 0.5}])
    with pytest.raises(DimensionError, match="template_text"):
        minimal_edits(cube)
    with pytest.raises(DimensionError, match="score cube"):
        minimal_edits(cube["score"])
    with pytest.raises(ValueError, match="unit='words'"):
        edit_pairs(["a"], unit="words")
    with pytest.raises(ValueError, match="min_distance=2 exceeds max_distance=1"):
        edit_pairs(["a"], min_distance=2)
    with pytest.raises(ValueError, match="max_distance must be a whole number"):
        edit_pairs(["a"], max_distance=-1)
    with pytest.raises(ValueError, match="2 groups for 1 texts"):
        edit_pairs(["a"], groups=[1, 2])
    texts = cube.assign_coords(template_text=(("task", "template"), [["Use {x}."]]))
    with pytest.raises(ValueError, match="family='sample'"):
        minimal_edits(
            texts.expand_dims(sample=[0])
            .transpose("model", "task", "template", "sample")
            .assign(score=lambda c: c.score.round()),
            family="sample",
        )
    extra = texts.assign(score=texts.score.expand_dims(seed=[0, 1]))
    with pytest.raises(DimensionError, match="unexpected seed"):
        minimal_edits(extra)


def test_no_pairs_gives_an_empty_result():
    cube = rankstats.from_records(
        [
            {"model": "m", "task": "t", "template": p, "template_text": text, "score": 0.5}
            for p, text in [("a", "Name a fruit."), ("b", "List three rivers of Europe.")]
        ]
    )
    edits = minimal_edits(cube)
    assert edits.sizes["pair"] == 0
    assert edit_rules(edits).sizes["rule"] == 0
    assert largest_edits(edits).empty


# ---------------------------------------------------------------- report, command line, figure


def _quiet_report(cube):
    # the report's other sections warn about these small cubes (constant rankings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankstatsWarning)
        return rankstats.report(cube, n_resamples=0)


def test_report_section_and_its_absence(released):
    cube = released[0].isel(task=[0, 8])
    analysis = _quiet_report(cube)
    keys = [s.key for s in render.sections(analysis)]
    # the last of the results, before the bookkeeping
    assert keys[keys.index("conventions") - 1] == "edits"
    section = next(s for s in render.sections(analysis) if s.key == "edits")
    assert len(section.table) == 20 and "p (adjusted)" not in section.table
    assert "No significance test" in section.note
    plain = _quiet_report(cube.drop_vars("template_text"))
    assert "edits" not in [s.key for s in render.sections(plain)]
    assert "Minimal template edits" in render.to_markdown(analysis)


def test_report_section_with_tests():
    analysis = _quiet_report(planted_cube(reps=2, samples=30))
    section = next(s for s in render.sections(analysis) if s.key == "edits")
    assert "p (adjusted)" in section.table
    assert "McNemar (exact), holm-corrected" in section.note


def test_command_line(tmp_path, capsys):
    tables, figure = tmp_path / "tables", tmp_path / "edits.png"
    assert (
        main(["edits", "mizrahi2024", "--top", "5", "--csv", str(tables), "--figure", str(figure)])
        == 0
    )
    out = capsys.readouterr().out
    assert "excludes → lacks" in pd.read_csv(tables / "differences.csv")["edit"].tolist()
    assert out.startswith("# Minimal template edits: ")
    assert "No significance test" in out
    assert figure.read_bytes().startswith(b"\x89PNG")
    assert main(["edits", "mizrahi2024", "--min-distance", "3"]) == 2
    assert "--min-distance 3 is larger than --max-distance 1" in capsys.readouterr().err
    assert main(["edits", str(tmp_path / "none.nc")]) == 2


def test_command_line_with_tests(tmp_path, capsys):
    path = tmp_path / "planted.nc"
    rankstats.save(planted_cube(reps=3, samples=30), path)
    assert (
        main(
            [
                "edits",
                str(path),
                "--p-adjust",
                "bh",
                "--family",
                "task",
                "--method",
                "midp",
                "--top",
                "3",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "McNemar (midp), bh-corrected" in out and "p (adjusted)" in out


def test_heat_map(released):
    pytest.importorskip("matplotlib")
    from rankstats.plot.edits import plot_edit_rules

    rules = edit_rules(released[1])
    ax = plot_edit_rules(rules, top=10, min_tasks=2)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 10 and all("tasks" in label for label in labels)
    image = ax.get_images()[0].get_array()
    expected = rules.isel(rule=slice(0, 10))["mean_difference"].transpose("rule", "model")
    np.testing.assert_allclose(np.ma.filled(image, np.nan), expected.values)


def test_result_is_labelled(released):
    edits = minimal_edits(released[0].isel(task=[9]))
    assert isinstance(edits, xr.Dataset)
    assert edits["difference"].dims == ("model", "pair")
    np.testing.assert_allclose(edits["difference"], edits["score_b"] - edits["score"])
    assert (edits["distance"] == 1).all()
