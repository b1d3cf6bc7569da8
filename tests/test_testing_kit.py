"""rankstats.testing: its strategies keep their promises, its checks find planted bugs, and
its reference vectors are what the oracles compute."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import rankstats
from rankstats.errors import InputTypeError, OptionError, UnknownNameError
from rankstats.statistics import posthoc
from rankstats.testing import (
    _oracles,
    assert_cube_equal,
    check_against_references,
    check_bounds,
    check_dask,
    check_monotone_invariance,
    check_permutation_invariance,
    check_symmetry,
    check_vectorised,
    reference_statistics,
    reference_vectors,
    strategies,
)

# the smallest examples, found the same way on every run
SEARCH = settings(derandomize=True, database=None)
# derandomized, so every run checks the same examples; few, as each check runs a search
FAST = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# --------------------------------------------------------------------------- the optional extra


def test_import_rankstats_loads_no_hypothesis():
    code = "import rankstats, sys; assert 'hypothesis' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_kit_without_hypothesis_names_the_extra():
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "try:\n    import rankstats.testing\n"
        "except ImportError as error:\n    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "rankstats[testing]"' in out.stdout


# --------------------------------------------------------------------------- score matrices


def _present_rows(x):
    rows = x.reshape(-1, x.shape[-1])
    return [row[~np.isnan(row)] for row in rows]


KIND_RANGE = {
    "binary": {0.0, 1.0},
    "proportion": (0.0, 1.0),
    "continuous": (-50.0, 50.0),
    "ranks": (1.0, 100.0),
}


def _in_kind(x, kind):
    seen = x[~np.isnan(x)]
    allowed = KIND_RANGE[kind]
    if isinstance(allowed, set):
        return set(seen.tolist()) <= allowed
    return bool(((seen >= allowed[0]) & (seen <= allowed[1])).all())


MATRIX_CASES = [
    (kind, ties, nan, rows)
    for kind, ties, nan, rows in itertools.product(
        strategies.KINDS,
        strategies.TIE_DENSITIES,
        strategies.NAN_PATTERNS,
        ("allow", "not_all", "none"),
    )
    if not (kind == "binary" and ties == "none")
]


@pytest.mark.parametrize(
    ("kind", "ties", "nan", "rows"),
    [
        *MATRIX_CASES[::7],
        ("binary", "many", "scattered", "none"),
        ("ranks", "none", "none", "none"),
        ("continuous", 3, "judges", "not_all"),
    ],
)
def test_score_matrices_keep_their_promises(kind, ties, nan, rows):
    @FAST
    @given(
        strategies.score_matrices(
            judges=(1, 4), objects=(2, 5), kind=kind, ties=ties, nan=nan, constant_rows=rows
        )
    )
    def search(x):
        assert x.dtype == np.float64 and 1 <= x.shape[0] <= 4 and 2 <= x.shape[1] <= 5
        assert _in_kind(x, kind)
        present = _present_rows(x)
        if ties == "none":
            assert all(np.unique(row).size == row.size for row in present)
        if isinstance(ties, int):
            assert all(np.unique(row).size <= ties for row in present)
        if kind == "ranks" and ties == "none" and nan == "none":
            assert (np.sort(x, axis=1) == np.arange(1, x.shape[1] + 1)).all()
        missing = np.isnan(x)
        if nan == "none":
            assert not missing.any()
        if nan == "judges":
            assert (missing == missing[:, :1]).all()
        if nan == "objects":
            assert (missing == missing[:1, :]).all()
        varied = [np.ptp(row) > 0 for row in present if row.size]
        if rows == "none":
            assert all(varied)
        if rows == "not_all":
            assert any(varied)
        # a matrix of template (judge) x model (object) scores is a valid cube of its kind
        if kind in ("binary", "proportion", "continuous") and not missing.all():
            cube = xr.Dataset(
                {"score": (("template", "model", "task"), x[:, :, None])},
                coords={
                    "model": [f"m{j}" for j in range(x.shape[1])],
                    "task": ["t"],
                    "template_id": (
                        ("task", "template"),
                        np.array([[f"p{i}" for i in range(x.shape[0])]], dtype=object),
                    ),
                },
                attrs=rankstats.cube.provenance(kind, True, "score", "test"),
            )
            rankstats.validate(cube)

    search()


@FAST
@given(strategies.score_matrices(slices=(1, 3), constant_rows="none"))
def test_stacked_matrices_meet_the_row_promise_in_each_slice(x):
    assert x.ndim == 3 and 1 <= x.shape[0] <= 3
    assert (np.ptp(x, axis=-1) > 0).all()


@FAST
@given(
    strategies.score_arrays(nan="scattered"),
    strategies.score_vectors((3, 6), kind="binary"),
    strategies.pvalues(),
)
def test_arrays_vectors_and_pvalues(x, v, p):
    assert 1 <= x.ndim <= 3
    assert v.shape[0] in range(3, 7) and set(v.tolist()) <= {0.0, 1.0}
    seen = p[~np.isnan(p)]
    assert ((seen >= 0) & (seen <= 1)).all()


@FAST
@given(strategies.score_matrices(elements=st.floats(-1e3, 1e3, allow_nan=False), ties="none"))
def test_elements_replace_the_levels(x):
    assert all(np.unique(row).size == row.size for row in x)


@pytest.mark.parametrize("pattern", strategies.NAN_PATTERNS)
def test_missing_masks_follow_their_pattern(pattern):
    @FAST
    @given(strategies.missing_masks((3, 4), pattern))
    def search(mask):
        assert mask.shape == (3, 4) and mask.dtype == bool
        if pattern == "none":
            assert not mask.any()
        if pattern == "judges":
            assert (mask == mask[:, :1]).all()
        if pattern == "objects":
            assert (mask == mask[:1]).all()

    search()


def test_bad_options_are_refused():
    with pytest.raises(OptionError, match="kind='ordinal' is not allowed; kind must be one of"):
        strategies.score_matrices(kind="ordinal")
    with pytest.raises(OptionError, match="binary scores tie"):
        strategies.score_matrices(kind="binary", ties="none")
    with pytest.raises(OptionError, match=r"judges=.*need 0 <= low <= high"):
        strategies.score_matrices(judges=(3, 1))
    with pytest.raises(OptionError, match="pattern='rows'"):
        strategies.missing_masks((2, 2), "rows")
    with pytest.raises(OptionError, match="cubes: kind='ranks'"):
        strategies.cubes(kind="ranks")


def test_the_increasing_maps_keep_order_and_ties():
    grid = np.array([-20.0, -3.0, -0.25, 0.0, 0.0, 0.25, 1.5, 20.0])
    for name, transform in strategies.INCREASING.items():
        mapped = transform(grid)
        assert (np.diff(mapped)[np.diff(grid) > 0] > 0).all(), name
        assert mapped[3] == mapped[4], name
        assert repr(transform) == name


# --------------------------------------------------------------------------- cubes

CUBE_OPTIONS = [
    {},
    {"samples": True, "kind": "binary"},
    {"samples": False, "kind": "continuous", "nan": True},
    {"samples": (2, 3), "kind": "proportion", "extra_dims": True},
    {"ragged": False, "absent": False, "template_attributes": False},
    {"shuffled_dims": True, "extra_dims": True, "samples": True},
    {"higher_is_better": False, "tasks": 2, "models": (3, 4)},
]


@pytest.mark.parametrize("options", CUBE_OPTIONS, ids=[str(o) or "defaults" for o in CUBE_OPTIONS])
def test_every_cube_validates_and_keeps_its_structure(options):
    @FAST
    @given(strategies.cubes(**options))
    def search(cube):
        rankstats.validate(cube)
        score = cube.score
        assert ("sample" in score.dims) == (
            options.get("samples", None) is not False
        ) or options.get("samples") is None
        if options.get("extra_dims"):
            assert "run" in score.dims
        if "kind" in options:
            assert cube.attrs["score_kind"] == options["kind"]
        if "higher_is_better" in options:
            assert cube.attrs["higher_is_better"] == int(options["higher_is_better"])
        # padding holds no score, and its template attributes are the empty values
        padded = cube.template_id == ""
        assert not score.where(padded).notnull().any()
        if options.get("ragged") is False:
            assert not padded.any()
        if "template_valid" in cube.coords:
            assert not (cube.template_valid & padded).any()
            assert (cube.template_is_original.sum("template") == (~padded).any("template")).all()
        if options.get("absent") is False and not options.get("nan"):
            real = ~padded
            if "sample_id" in cube.coords:
                real = real & (cube.sample_id != "")
            assert score.notnull().where(real, True).all()

    search()


def test_cubes_reach_ragged_tasks_absent_models_and_samples():
    # each structure the strategy promises is found by a search, and shrinks to a small cube
    padded = find(strategies.cubes(), lambda c: bool((c.template_id == "").any()), settings=SEARCH)
    assert padded.score.shape == (1, 1, 2)
    absent = find(
        strategies.cubes(models=2),
        lambda c: bool(c.score.isnull().all("template").any()),
        settings=SEARCH,
    )
    assert dict(absent.sizes) == {"model": 2, "task": 1, "template": 1}
    sampled = find(strategies.cubes(), lambda c: "sample" in c.score.dims, settings=SEARCH)
    assert sampled.sizes["sample"] == 1
    ordered = find(
        strategies.cubes(shuffled_dims=True), lambda c: c.score.dims[0] != "model", settings=SEARCH
    )
    assert set(ordered.score.dims) == {"model", "task", "template"}


# --------------------------------------------------------------------------- shrinking


def test_a_failing_property_shrinks_to_a_small_readable_matrix():
    seen = []

    # many ties make agreeing judges common, so every hypothesis release finds one
    @settings(max_examples=500, derandomize=True, database=None, deadline=None)
    @given(strategies.score_matrices(ties="many"))
    def kendall_w_is_never_one(x):  # false: judges who agree give W = 1
        seen.append(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert rankstats.kendall_w(x).statistic != 1

    with pytest.raises(AssertionError):
        kendall_w_is_never_one()
    smallest = seen[-1]  # hypothesis replays the shrunk example last
    assert smallest.shape == (2, 2)
    assert set(np.abs(smallest).ravel().tolist()) <= {0.0, 0.25}
    np.testing.assert_array_equal(smallest[0], smallest[1])


def test_a_failing_cube_property_shrinks_to_a_small_cube():
    cube = find(
        strategies.cubes(samples=True),
        lambda c: bool(c.score.notnull().sum() >= 2),
        settings=SEARCH,
    )
    assert cube.score.size == 2
    assert set(cube.score.values.ravel().tolist()) == {0.0}


# --------------------------------------------------------------------------- assert_cube_equal


@pytest.fixture(scope="module")
def cube():
    return rankstats.from_records(
        [
            {"model": m, "task": "t", "template": p, "score": s}
            for m, row in {"a": [0.5, 0.25], "b": [1.0, np.nan]}.items()
            for p, s in zip(["p", "q"], row, strict=True)
        ],
        metric="accuracy",
    )


def test_equal_cubes_pass_whatever_the_order_of_dimensions(cube):
    assert_cube_equal(cube.transpose("template", "task", "model"), cube)
    assert_cube_equal(cube.score, cube.score.copy())
    later = cube.copy()
    later.attrs = {**cube.attrs, "created_at": "2100-01-01T00:00:00+00:00"}
    assert_cube_equal(later, cube)


def test_a_value_difference_is_located_by_its_labels(cube):
    changed = cube.copy(deep=True)
    changed["score"].loc[{"model": "b", "template": 0}] = 0.9
    with pytest.raises(AssertionError) as raised:
        assert_cube_equal(changed, cube)
    message = str(raised.value)
    assert "score: 1 of 4 values differ" in message
    assert "model='b', task='t', template=0: 0.9 != 1.0" in message
    assert "largest difference 0.1" in message
    assert_cube_equal(changed, cube, atol=0.11)


def test_coordinate_attribute_and_structure_differences_are_listed(cube):
    other = cube.assign_coords(model=["a", "c"]).assign_attrs(metric="f1", extra=1)
    other = other.drop_vars("template_id").assign_coords(new=("task", [1]))
    with pytest.raises(AssertionError) as raised:
        assert_cube_equal(other, cube)
    message = str(raised.value)
    assert "coordinate(s) only expected: ['template_id']" in message
    assert "coordinate(s) only in actual: ['new']" in message
    assert "model: 1 of 2 values differ (compared exactly):\n    model=1: 'c' != 'b'" in message
    assert "attrs: 'metric' is 'f1', expected 'accuracy'" in message
    assert "attrs: 'extra' only in actual (1)" in message
    assert_cube_equal(cube.assign_attrs(metric="f1"), cube, attrs=False)
    with pytest.raises(AssertionError, match="dimensions differ"):
        assert_cube_equal(cube.isel(model=[0]), cube)
    with pytest.raises(InputTypeError, match="not an xarray"):
        assert_cube_equal(cube.score.values, cube)


# --------------------------------------------------------------------------- property checks


def test_the_checks_pass_on_rankstats_statistics():
    check_permutation_invariance(rankstats.kendall_w, max_examples=30, settings=SEARCH)
    check_permutation_invariance(
        rankstats.kendall_w, axis="judges", max_examples=30, settings=SEARCH
    )
    check_permutation_invariance(rankstats.rank, equivariant=True, max_examples=30, settings=SEARCH)
    check_permutation_invariance(
        lambda x: rankstats.friedman(x).pvalue, max_examples=30, settings=SEARCH
    )
    check_monotone_invariance(rankstats.kendall_w, max_examples=30, settings=SEARCH)
    check_monotone_invariance(rankstats.rank, per_judge=False, max_examples=30, settings=SEARCH)
    check_symmetry(rankstats.kendall_tau, max_examples=30, settings=SEARCH)
    check_bounds(rankstats.kendall_w, 0, 1, max_examples=30, settings=SEARCH)
    check_bounds(rankstats.friedman, 0, 1, field="pvalue", max_examples=30, settings=SEARCH)
    check_vectorised(rankstats.kendall_w, max_examples=30, settings=SEARCH)
    check_vectorised(rankstats.friedman, field="pvalue", max_examples=30, settings=SEARCH)


def test_the_checks_find_planted_bugs_with_small_examples():
    def first_object(x):
        return x[..., 0].sum()

    with pytest.raises(
        AssertionError,
        match="first_object is not invariant to permuting the objects:\n  x = \\[\\[",
    ) as raised:
        check_permutation_invariance(first_object, max_examples=50, settings=SEARCH)
    assert raised.value.args[0].count("\n") < 8  # a small example, shown in a few lines

    def mean_score(x):
        return x.mean()

    with pytest.raises(AssertionError, match="mean_score changed under the strictly increasing"):
        check_monotone_invariance(mean_score, max_examples=50, settings=SEARCH)
    with pytest.raises(AssertionError, match=r"difference\(x, y\) != difference\(y, x\)"):

        def difference(x, y):
            return x.sum() - y.sum()

        check_symmetry(difference, max_examples=50, settings=SEARCH)
    with pytest.raises(AssertionError, match=r"left \[0, 1\]"):
        check_bounds(lambda x: x.sum(), 0, 1, max_examples=50, settings=SEARCH)
    with pytest.raises(AssertionError, match="not one result per slice"):
        check_vectorised(lambda x: x.mean(), max_examples=50, settings=SEARCH)
    with pytest.raises(AssertionError, match="of a stack differs from its slice 0"):
        check_vectorised(lambda x: x[..., 0, 0] + (x.ndim == 3), max_examples=50, settings=SEARCH)
    with pytest.raises(InputTypeError, match="axis='templates'"):
        check_permutation_invariance(rankstats.kendall_w, axis="templates", settings=SEARCH)


def test_check_permutation_of_ordinal_ties_is_found():
    # ordinal ranks break ties by position: not equivariant under permuting tied objects
    with pytest.raises(AssertionError, match="not equivariant"):
        check_permutation_invariance(
            lambda x: rankstats.rank(x, ties="ordinal"),
            equivariant=True,
            max_examples=100,
            settings=SEARCH,
        )


def test_dask_equals_eager():
    pytest.importorskip("dask")
    check_dask(rankstats.kendall_w, max_examples=3, settings=SEARCH)
    check_dask(rankstats.friedman, field="pvalue", max_examples=3, settings=SEARCH)


@pytest.mark.slow  # about 25 s: shrinking chunks the cube for every smaller candidate
def test_check_dask_finds_a_statistic_that_differs_when_chunked():
    pytest.importorskip("dask")

    def eager_only(cube):
        return float(cube.score.chunks is None)

    with pytest.raises(AssertionError, match="eager_only of the chunked cube differs"):
        check_dask(eager_only, max_examples=5, settings=SEARCH)


# --------------------------------------------------------------------------- reference vectors

NAMES = sorted(reference_statistics())


def _function(name):
    return getattr(rankstats, name, None) or getattr(posthoc, name)


@pytest.mark.parametrize("name", NAMES)
def test_rankstats_agrees_with_every_reference_vector(name):
    function = _function(name)
    assert check_against_references(function, name, options="all") == len(reference_vectors(name))
    check_against_references(function, name)


def test_every_vector_names_its_source_and_oracle():
    data = json.loads(_oracles.PATH.read_text(encoding="utf-8"))
    assert {v["statistic"] for v in data["vectors"]} == set(data["statistics"])
    ids = [v["id"] for v in data["vectors"]]
    assert len(ids) == len(set(ids))
    for vector in data["vectors"]:
        assert vector["source"] and vector["expected"]
        assert vector["primary"] in vector["expected"]
        library = vector["oracle"].split()[0]
        assert (
            vector["oracle"] in ("by hand", "printed")
            or vector["oracle"] == f"{library} {data['oracles'][library]}"
        )
    # each kind of source is there: libraries, hand computations, printed values
    assert {v["oracle"].split()[0] for v in data["vectors"]} >= {
        "scipy",
        "statsmodels",
        "pingouin",
        "scikit-posthocs",
        "by",
        "printed",
    }


def _same(built, shipped, path="vectors"):
    """Equal structure and text; numbers to 1e-12 (another oracle release may differ in the last
    digits)."""
    if isinstance(shipped, dict):
        assert built.keys() == shipped.keys(), path
        for key in shipped:
            _same(built[key], shipped[key], f"{path}.{key}")
    elif isinstance(shipped, list):
        assert len(built) == len(shipped), path
        for i, (a, b) in enumerate(zip(built, shipped, strict=True)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(shipped, float) and not isinstance(built, bool):
        assert built == pytest.approx(shipped, rel=1e-12, abs=1e-300), path
    else:
        assert built == shipped, path


def test_the_shipped_vectors_are_what_the_oracles_compute():
    for module in ("pingouin", "statsmodels", "scikit_posthocs"):
        pytest.importorskip(module)
    built = json.loads(json.dumps(_oracles.build()))
    shipped = json.loads(_oracles.PATH.read_text(encoding="utf-8"))
    # the library versions are recorded, not compared: a newer oracle gives the same values
    built["oracles"] = shipped["oracles"]
    for vector in [*built["vectors"], *shipped["vectors"]]:
        vector["oracle"] = vector["oracle"].split()[0]
    _same(built, shipped)


def test_a_wrong_statistic_is_named_with_the_vectors_it_misses():
    def kendall_w_without_tie_correction(x):
        return rankstats.kendall_w(x, tie_correction=False).statistic

    with pytest.raises(AssertionError) as raised:
        check_against_references(kendall_w_without_tie_correction, "kendall_w")
    message = str(raised.value)
    assert message.startswith(
        "kendall_w_without_tie_correction disagrees with 5 of 6 reference vectors of kendall_w:"
    )
    assert "kendall_w/ties-8x5: pingouin.friedman" in message
    assert "kendall_w/hand-ties: worked by hand" in message
    assert "statistic: got" in message
    assert "kendall_w/untied-5x7" not in message  # no ties, no correction to forget


def test_the_loader_and_check_refuse_unknown_names():
    with pytest.raises(UnknownNameError, match="no reference vectors for statistic='kendal_w'"):
        reference_vectors("kendal_w")
    with pytest.raises(OptionError, match="options='some'"):
        check_against_references(rankstats.kendall_w, "kendall_w", options="some")

    def failing(x):
        raise ZeroDivisionError("planted")

    with pytest.raises(AssertionError, match="raised ZeroDivisionError: planted"):
        check_against_references(failing, "friedman")
    vector = reference_vectors("kendall_w")[-1]
    assert vector["options"] == {"ties": "min", "tie_correction": False}
    assert np.isnan(reference_vectors("rank")[-2]["args"][0]).sum() == 3
