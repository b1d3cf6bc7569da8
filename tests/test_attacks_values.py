"""Absurd arguments and values: the testing kit, score values, cube files, conventions files.

Each attack is refused up front with a ``RankstatsError`` naming the argument, record,
variable or file at fault, never a raw ``IndexError``, ``MemoryError``, a hypothesis
``Unsatisfiable`` search, or a value silently turned into another one. Arguments the rest
of the scientific Python stack hands over (``numpy.str_``, ``numpy.bool_``, ``numpy.int64``,
the words ``"no"`` and ``"false"``) mean what they say.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankstats
from rankstats.analyses._conventions import STANDARD, read_file, resolve
from rankstats.cli import main
from rankstats.errors import OptionError, RankstatsError, ScoreValueError
from rankstats.testing import (
    assert_cube_equal,
    check_against_references,
    check_bounds,
    check_dask,
    check_monotone_invariance,
    check_permutation_invariance,
    check_symmetry,
    check_vectorised,
    strategies,
)

# derandomized: every run checks the same examples
FEW = settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


def cased(words):
    """One of ``words`` in a drawn mix of upper and lower case."""
    return st.sampled_from(words).flatmap(
        lambda word: st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
            lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
        )
    )


def draw_one(strategy):
    """One example of ``strategy``, found the same way on every run."""
    found = []

    @FEW
    @given(strategy)
    def collect(example):
        found.append(example)

    collect()
    return found


# --------------------------------------------------------------------------- the kit's flags


@FEW
@given(word=cased(FALSE_WORDS), data=st.data())
def test_cubes_read_false_words_as_false(word, data):
    """``higher_is_better="false"`` gives lower-is-better cubes, ``ragged="no"`` no padding."""
    cube = data.draw(
        strategies.cubes(
            higher_is_better=word, ragged=word, tasks=2, templates=(2, 3), samples=word
        )
    )
    assert cube.attrs["higher_is_better"] == 0
    assert not (cube.template_id == "").any()
    assert "sample" not in cube.score.dims


@FEW
@given(word=cased(TRUE_WORDS), data=st.data())
def test_cubes_read_true_words_as_true(word, data):
    cube = data.draw(strategies.cubes(higher_is_better=word, absent=False, samples=word))
    assert cube.attrs["higher_is_better"] == 1
    assert "sample" in cube.score.dims
    assert cube.score.notnull().any(("task", "template", "sample")).all()


def test_numpy_values_are_taken_as_python_ones():
    matrices = draw_one(
        strategies.score_matrices(
            judges=np.int64(2), objects=np.int64(3), kind=np.str_("binary"), ties=np.int64(2)
        )
    )
    assert {x.shape for x in matrices} == {(2, 3)}
    assert all(set(np.unique(x)) <= {0.0, 1.0} for x in matrices)
    cubes = draw_one(
        strategies.cubes(
            higher_is_better=np.bool_(False), kind=np.str_("binary"), nan=np.bool_(False)
        )
    )
    assert {c.attrs["higher_is_better"] for c in cubes} == {0}
    assert all(c.attrs["score_kind"] == "binary" for c in cubes)
    assert draw_one(strategies.pvalues(np.int64(3), nan=np.bool_(False)))[0].shape == (3,)


@given(
    value=st.one_of(
        st.sampled_from(["maybe", "off", "", "2", "ja"]),
        st.integers(2, 10),
        st.floats(allow_nan=True),
        st.lists(st.booleans()),
    )
)
@FEW
def test_a_flag_that_is_no_bool_is_refused_naming_it(value):
    for name in (
        "ragged",
        "absent",
        "nan",
        "template_attributes",
        "extra_dims",
        "shuffled_dims",
        "higher_is_better",
    ):
        with pytest.raises(OptionError, match=rf"cubes: {name}=.* is not allowed"):
            strategies.cubes(**{name: value})
    with pytest.raises(OptionError, match=r"pvalues: nan="):
        strategies.pvalues(nan=value)
    with pytest.raises(OptionError, match=r"score_vectors: constant="):
        strategies.score_vectors(constant=value)


# --------------------------------------------------------------------------- the kit's sizes


HUGE = st.integers(10**6, 10**12)


@FEW
@given(size=HUGE, which=st.sampled_from(["judges", "objects", "slices"]))
def test_a_huge_matrix_is_refused_before_drawing(size, which):
    with pytest.raises(OptionError, match=rf"score_matrices: {which}={size}"):
        strategies.score_matrices(**{which: size})


@FEW
@given(size=HUGE, which=st.sampled_from(["tasks", "models", "templates", "samples"]))
def test_a_huge_cube_is_refused_before_drawing(size, which):
    with pytest.raises(OptionError, match=rf"cubes: {which}={size}"):
        strategies.cubes(**{which: size})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: strategies.score_matrices(judges=400, objects=400), "at most 100,000"),
        (
            lambda: strategies.score_matrices(judges=(1, 300), objects=(1, 300), slices=(1, 4)),
            "360,000 values",
        ),
        (
            lambda: strategies.score_matrices(judges=50, objects=50, ties="none"),
            "distinct from the rest of its row",
        ),
        (
            lambda: strategies.cubes(tasks=40, models=40, templates=40, samples=40),
            "2,560,000 values",
        ),
        (lambda: strategies.missing_masks((10**6, 10**6)), r"shape=\(1000000, 1000000\)"),
        (lambda: strategies.score_arrays((1000, 1000)), r"shape=\(1000, 1000\)"),
        (lambda: strategies.pvalues(10**7), r"pvalues: size=10000000"),
    ],
    ids=["matrices", "stacks", "distinct", "cubes", "masks", "arrays", "pvalues"],
)
def test_too_many_values_are_refused_naming_the_sizes(make, message):
    with pytest.raises(OptionError, match=message):
        make()


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: strategies.score_matrices(judges=-1), "judges=-1"),
        (lambda: strategies.score_matrices(judges=1.5), "judges=1.5"),
        (lambda: strategies.score_matrices(objects=(2.5, 4)), r"objects=\(2.5, 4\)"),
        (lambda: strategies.score_matrices(objects=(5, 2)), r"objects=\(5, 2\): need 0 <= low"),
        (lambda: strategies.score_matrices(judges=True), "judges=True"),
        (lambda: strategies.score_matrices(ties=0), "ties=0"),
        (lambda: strategies.score_matrices(ties=2.0), "ties=2.0"),
        (lambda: strategies.score_matrices(elements=[1.0, 2.0]), r"elements=\[1.0, 2.0\]"),
        (lambda: strategies.missing_masks((-1, 2)), r"shape\[0\]=-1"),
        (lambda: strategies.missing_masks("ab"), "shape='ab'"),
        (lambda: strategies.score_arrays((2, 0.5)), r"shape\[1\]=0.5"),
        (lambda: strategies.cubes(tasks=(3, 1)), r"tasks=\(3, 1\)"),
        (lambda: strategies.cubes(samples=-2), "samples=-2"),
        (lambda: strategies.cubes(kind="ranks"), "kind='ranks'"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_absurd_strategy_arguments_are_refused_naming_them(make, name):
    with pytest.raises(RankstatsError, match=name):
        make()


def test_impossible_combinations_are_refused_before_drawing():
    """Hypothesis would search for minutes and stop with Unsatisfiable."""
    with pytest.raises(OptionError, match="score_matrices: ties=1 gives every row a single"):
        strategies.score_matrices(ties=1, constant_rows="none")
    with pytest.raises(OptionError, match=r"score_vectors: ties=1.*constant=False"):
        strategies.score_vectors(3, ties=1, constant=False)


@pytest.mark.parametrize("pattern", ["scattered", "judges", "objects", "any"])
def test_a_one_dimensional_mask_is_one_row(pattern):
    masks = draw_one(strategies.missing_masks((4,), pattern))
    assert {mask.shape for mask in masks} == {(4,)}
    if pattern == "judges":
        assert all(mask.all() or not mask.any() for mask in masks)


def test_a_drawn_size_too_large_is_refused_naming_the_argument():
    huge = strategies.score_matrices(judges=st.just(10**6), objects=2)
    with pytest.raises(OptionError, match=r"judges \(drawn\)=1000000"):
        draw_one(huge)


# --------------------------------------------------------------------------- the kit's checks


def never_called(x):
    raise AssertionError("the statistic was called")


@FEW
@given(low=st.floats(-10, 10), gap=st.floats(1e-3, 10))
def test_reversed_bounds_blame_the_bounds_not_the_statistic(low, gap):
    with pytest.raises(OptionError, match=r"check_bounds: low=.* is above high="):
        check_bounds(never_called, low + gap, low)


@pytest.mark.parametrize(("low", "high"), [(np.nan, 1), (0, np.nan), ("a", 1), (0, None)])
def test_bounds_that_are_no_numbers_are_refused(low, high):
    with pytest.raises(OptionError, match=r"check_bounds: (low|high)="):
        check_bounds(never_called, low, high)


def test_open_bounds_and_numpy_bounds_are_taken():
    check_bounds(rankstats.kendall_w, np.float64(0), np.inf, max_examples=np.int64(5))
    check_bounds(rankstats.kendall_w, -np.inf, 1, allow_nan="yes", max_examples=5)


CHECKS = {
    "check_permutation_invariance": check_permutation_invariance,
    "check_monotone_invariance": check_monotone_invariance,
    "check_symmetry": check_symmetry,
    "check_vectorised": check_vectorised,
    "check_dask": check_dask,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("max_examples", 0),
        ("max_examples", -3),
        ("max_examples", 2.5),
        ("max_examples", "lots"),
        ("rtol", -1.0),
        ("atol", np.nan),
        ("rtol", "close"),
    ],
)
def test_absurd_check_arguments_are_refused_before_any_search(name, argument, value):
    with pytest.raises(OptionError, match=rf"{name}: {argument}="):
        CHECKS[name](never_called, **{argument: value})


@pytest.mark.parametrize("axis", [2, -3, 5, np.int64(7)])
def test_an_axis_the_matrices_lack_is_refused_naming_it(axis):
    with pytest.raises(OptionError, match=f"check_permutation_invariance: axis={int(axis)!r} "):
        check_permutation_invariance(never_called, axis=axis)
    with pytest.raises(OptionError, match=r"axis=.* is not an axis of the drawn input"):
        check_permutation_invariance(
            rankstats.rank, axis=axis, max_examples=3, inputs=strategies.score_vectors(3)
        )


def test_symmetry_needs_pairs():
    with pytest.raises(RankstatsError, match="inputs must draw pairs"):
        check_symmetry(
            rankstats.kendall_tau, inputs=strategies.score_matrices(judges=1), max_examples=3
        )


def test_flags_of_the_checks_parse_like_the_package():
    with pytest.raises(OptionError, match="check_permutation_invariance: equivariant='perhaps'"):
        check_permutation_invariance(never_called, equivariant="perhaps")
    with pytest.raises(OptionError, match="check_monotone_invariance: per_judge=2"):
        check_monotone_invariance(never_called, per_judge=2)
    with pytest.raises(OptionError, match="check_bounds: allow_nan='sometimes'"):
        check_bounds(never_called, 0, 1, allow_nan="sometimes")
    # "no" is False: a statistic that is NaN on one judge breaks the bounds
    with pytest.raises(AssertionError, match="left"):
        check_bounds(
            rankstats.kendall_w,
            0,
            1,
            allow_nan="no",
            max_examples=50,
            inputs=strategies.score_matrices(judges=1),
        )
    check_permutation_invariance(rankstats.rank, equivariant="yes", max_examples=5)


def test_assertions_and_references_check_their_arguments():
    cube = draw_one(strategies.cubes())[0]
    for argument, value in (("rtol", -1), ("atol", "x"), ("attrs", "maybe"), ("shown", -1)):
        with pytest.raises(OptionError, match=f"assert_cube_equal: {argument}="):
            assert_cube_equal(cube, cube, **{argument: value})
    assert_cube_equal(cube, cube, attrs="no", shown=np.int64(2))
    with pytest.raises(OptionError, match="check_against_references: options='some'"):
        check_against_references(rankstats.kendall_w, "kendall_w", options="some")
    with pytest.raises(OptionError, match=r"check_against_references: rtol=-0\.5"):
        check_against_references(rankstats.kendall_w, "kendall_w", rtol=-0.5)
    assert check_against_references(rankstats.kendall_w, "kendall_w", options=np.str_("ALL")) == 9


# --------------------------------------------------------------------------- score values


def records(scores) -> list[dict]:
    return [
        {"model": f"m{i}", "task": "t", "template": "p", "score": score}
        for i, score in enumerate(scores)
    ]


REAL = st.floats(0, 1, allow_nan=False)
COMPLEX = st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False)


@FEW
@given(before=st.lists(REAL, max_size=4), value=COMPLEX, after=st.lists(REAL, max_size=4))
def test_a_complex_score_is_refused_naming_its_record(before, value, after):
    """NumPy would keep the real part (1j becomes 0.0) with only a warning."""
    for scores in ([*before, value, *after], [*before, value, "0.5", *after]):
        with pytest.raises(ScoreValueError, match="complex") as caught:
            rankstats.from_records(records(scores))
        message = str(caught.value)
        assert f"row {len(before)} (model='m{len(before)}'" in message
        assert repr(complex(value)) in message or repr(value) in message


def test_options_of_from_records_take_numpy_values_and_store_plain_ones():
    cube = rankstats.from_records(
        records([0.5, 0.25]),
        metric=np.str_("acc"),
        source=np.str_("here"),
        higher_is_better=np.str_("No"),
        duplicates=np.str_("first"),
        score_kind=np.str_("proportion"),
    )
    for key in ("metric", "source", "score_kind"):
        assert type(cube.attrs[key]) is str, key
    assert cube.attrs["higher_is_better"] == 0


def test_a_complex_column_is_refused_even_without_imaginary_parts():
    frame = pd.DataFrame(records([0.5, 0.25])).astype({"score": complex})
    with pytest.raises(ScoreValueError, match=r"2 score\(s\) are complex"):
        rankstats.from_records(frame)
    with pytest.raises(ScoreValueError, match="row 1"):
        rankstats.from_records(records([0.5, np.complex64(0.25 + 1j)]))


@pytest.fixture
def small_cube():
    return rankstats.from_records(
        [
            {"model": m, "task": "t", "template": p, "score": s}
            for m, row in {"a": (0.5, 0.25), "b": (0.75, 1.0)}.items()
            for p, s in zip(("p0", "p1"), row, strict=True)
        ]
    )


@pytest.mark.parametrize("dtype", [str, object, bytes])
@pytest.mark.parametrize("chunks", [None, {}])
def test_scores_stored_as_text_are_refused_naming_variable_and_file(
    small_cube, tmp_path, dtype, chunks
):
    path = tmp_path / "text.nc"
    written = small_cube.copy()
    written["score"] = written.score.astype(str).astype(dtype)
    written.to_netcdf(path)
    with pytest.raises(ScoreValueError) as caught:
        rankstats.open_cube(path, chunks=chunks)
    assert "'score'" in str(caught.value) and str(path) in str(caught.value)
    assert "not as numbers" in str(caught.value)


def test_numbers_still_open(small_cube, tmp_path):
    path = rankstats.save(small_cube, tmp_path / "cube.nc")
    xr.testing.assert_equal(rankstats.open_cube(path).score, small_cube.score)


# --------------------------------------------------------------------------- conventions files

CHANGES = st.sampled_from(
    [
        (statistic, option, value)
        for statistic, options in STANDARD.items()
        for option, standard in options.items()
        for value in (
            {
                "templates": ["valid"],
                "ties": ["min", "max", "dense", "ordinal"],
                "tie_correction": [False],
            }[option]
        )
    ]
)


@FEW
@given(change=CHANGES)
def test_a_file_named_standard_with_other_settings_is_not_labelled_standard(
    change, tmp_path_factory
):
    statistic, option, value = change
    path = tmp_path_factory.mktemp("conventions") / "standard.json"
    path.write_text(json.dumps({statistic: {option: value}}))
    conventions = read_file(path)
    assert conventions["name"] == "custom (standard.json)"
    assert conventions[statistic][option] == value
    with pytest.raises(OptionError, match=rf"name='standard' is reserved.*{statistic}\.{option}"):
        resolve("report", "conventions", {"name": "standard", statistic: {option: value}})
    named = path.with_name("mine.json")
    named.write_text(json.dumps({"name": "standard", statistic: {option: value}}))
    with pytest.raises(OptionError, match=r"mine\.json.*name='standard' is reserved"):
        read_file(named)


def test_a_file_named_standard_with_the_standard_settings_is_standard(tmp_path):
    path = tmp_path / "standard.json"
    path.write_text(json.dumps({"kendall_w": {"ties": "average"}}))
    assert read_file(path)["name"] == "standard"
    assert resolve("report", "conventions", {"name": "standard"})["name"] == "standard"


DUPLICATED = [
    ('{"kendall_w": {"ties": "min", "ties": "max"}}', "ties"),
    ('{"kendall_w": {"ties": "min"}, "kendall_w": {"ties": "max"}}', "kendall_w"),
    ('{"name": "a", "friedman": {}, "name": "b"}', "name"),
]


@pytest.mark.parametrize(("text", "key"), DUPLICATED, ids=[key for _, key in DUPLICATED])
def test_a_key_given_twice_is_refused_naming_key_and_file(text, key, tmp_path):
    path = tmp_path / "twice.json"
    path.write_text(text)
    with pytest.raises(OptionError, match=rf"twice\.json.*the key '{key}' is given twice"):
        read_file(path)


def test_the_command_refuses_a_duplicate_key_and_labels_a_changed_standard(
    small_cube, tmp_path, capsys
):
    cube = rankstats.save(small_cube, tmp_path / "cube.nc")
    twice = tmp_path / "twice.json"
    twice.write_text(DUPLICATED[0][0])
    assert main(["report", str(cube), "--conventions", str(twice), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "the key 'ties' is given twice" in err and "twice.json" in err
    assert "Traceback" not in err
    standard = tmp_path / "standard.json"
    standard.write_text(json.dumps({"kendall_w": {"ties": "min"}}))
    out = tmp_path / "report.json"
    assert (
        main(
            [
                "report",
                str(cube),
                "--conventions",
                str(standard),
                "--n-resamples",
                "0",
                "--quiet",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["attrs"]["conventions"] == "custom (standard.json)"
