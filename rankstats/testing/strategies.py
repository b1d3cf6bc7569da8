"""Hypothesis strategies for score matrices, p-values and whole score cubes.

Every strategy builds its values from small integer draws, so a failing
example shrinks to a few judges and objects holding ``0.0`` (or the kind's
smallest value), with no padding, no absent model and no missing score left
unless the failure needs them.

Examples
--------
>>> from hypothesis import given, settings
>>> import rankstats
>>> from rankstats.testing import strategies
>>> @settings(max_examples=20)
... @given(strategies.cubes())
... def test_every_cube_is_valid(cube):
...     rankstats.validate(cube)
>>> test_every_cube_is_valid()
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ..cube import provenance
from ..errors import OptionError
from ..validation import SCORE_KINDS
from . import _arguments as a

__all__ = [
    "INCREASING",
    "KINDS",
    "NAN_PATTERNS",
    "TIE_DENSITIES",
    "cubes",
    "missing_masks",
    "monotone_transforms",
    "pvalues",
    "score_arrays",
    "score_matrices",
    "score_vectors",
]

#: What the scores of a matrix are: 0/1, proportions in [0, 1], signed values, or
#: integer ranks 1..n.
KINDS = ("binary", "proportion", "continuous", "ranks")
#: How often values tie within a row: never, by chance (as many levels as values),
#: or nearly always (two levels). An int gives the number of levels itself.
TIE_DENSITIES = ("none", "some", "many")
#: Where scores are missing: nowhere, anywhere, whole judges (rows), whole objects
#: (columns), or one of these drawn.
NAN_PATTERNS = ("none", "scattered", "judges", "objects", "any")
_CONSTANT_ROWS = ("allow", "not_all", "none")
#: The fixed creation time of drawn cubes, so that one draw always gives one cube.
CREATED_AT = "2000-01-01T00:00:00+00:00"


class _Named:
    """A function shown by its name in a failing example."""

    def __init__(self, name, function):
        self.name, self.function = name, function

    def __call__(self, values):
        return self.function(values)

    def __repr__(self):
        return self.name


#: Strictly increasing maps that keep distinct integers of magnitude up to 20 (and
#: the values :func:`score_matrices` draws) distinct, and ties tied, in float64.
INCREASING = {
    "identity": _Named("identity", lambda v: v),
    "affine": _Named("affine", lambda v: 3.0 * v - 7.0),
    "cube": _Named("cube", lambda v: v**3),
    "exp": _Named("exp", lambda v: np.exp(v / 4.0)),
    "arctan": _Named("arctan", np.arctan),
    "shifted-log": _Named("shifted-log", lambda v: np.log(v + 100.0)),
}


def monotone_transforms() -> st.SearchStrategy:
    """A strictly increasing map from :data:`INCREASING`, shown by its name.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> from rankstats.testing.strategies import monotone_transforms
    >>> @given(monotone_transforms())
    ... def test_increasing(transform):
    ...     assert np.all(np.diff(transform(np.arange(-20.0, 21.0))) > 0)
    >>> test_increasing()
    """
    return st.sampled_from(list(INCREASING.values()))


def _sizes(function, value, name) -> tuple[st.SearchStrategy, int | None]:
    """An int, a (low, high) range or a strategy: a strategy of ints and the largest size."""
    bounds = a.sizes(function, name, value)
    return a.size_strategy(function, name, value), a.largest(bounds)


def _most(*sizes) -> int | None:
    """The most values of arrays of these largest sizes (None where a strategy gives one)."""
    return None if any(size is None for size in sizes) else int(np.prod(sizes, dtype=object))


def _check_size(function: str, what: str, values: int | None, distinct: bool) -> None:
    """Refuse inputs larger than hypothesis can draw (values known up front, or drawn)."""
    if values is None:
        return
    if distinct and values > a.MAX_DISTINCT:
        raise OptionError(
            f"{function}: {what} can hold {values:,} values, each drawn distinct from the "
            f"rest of its row (ties='none'); at most {a.MAX_DISTINCT:,} can be drawn so: ask "
            "for fewer, or allow ties"
        )
    if values > a.MAX_VALUES:
        raise OptionError(
            f"{function}: {what} can hold {values:,} values; at most {a.MAX_VALUES:,} can be "
            "drawn: ask for fewer"
        )


def _levels(kind: str, ties, n: int) -> int:
    """How many distinct integer levels a row of ``n`` values draws from."""
    if kind == "binary":
        return 2
    if isinstance(ties, numbers.Integral):
        return max(int(ties), 1)
    if ties == "none":
        return n if kind == "ranks" else 2 * n
    if ties == "many":
        return 2
    return max(n, 2)


def _as_values(levels: np.ndarray, kind: str, n_levels: int) -> np.ndarray:
    levels = levels.astype(float)
    if kind == "binary":
        return levels
    if kind == "proportion":
        return levels / max(n_levels - 1, 1)
    if kind == "continuous":
        # 0, 0.25, -0.25, 0.5, -0.5, ...: level 0, where shrinking goes, is 0.0
        return np.where(levels % 2 == 1, 1.0, -1.0) * np.ceil(levels / 2.0) / 4.0 + 0.0
    return levels + 1.0  # ranks


def _check_matrix_options(function, kind, ties, nan, constant_rows, elements):
    """The options of a matrix strategy, parsed: ``(kind, ties, nan, constant_rows)``."""
    if kind is not None:
        kind = a.choice(function, "kind", kind, KINDS)
    if ties is None:
        pass
    elif isinstance(ties, str):
        ties = a.choice(function, "ties", ties, TIE_DENSITIES)
    elif isinstance(ties, (numbers.Integral, np.integer)) and not isinstance(
        ties, (bool, np.bool_)
    ):
        if ties < 1:
            raise OptionError(f"{function}: ties={ties!r}: a number of levels is at least 1")
        ties = int(ties)
    else:
        raise OptionError(
            f"{function}: ties={ties!r} is not allowed; ties must be one of "
            f"{', '.join(map(repr, TIE_DENSITIES))}, a number of levels or None"
        )
    nan = a.choice(function, "nan", nan, NAN_PATTERNS)
    constant_rows = a.choice(function, "constant_rows", constant_rows, _CONSTANT_ROWS)
    a.strategy(function, "elements", elements)
    if ties == 1 and constant_rows != "allow" and elements is None:
        raise OptionError(
            f"{function}: ties=1 gives every row a single value, and constant_rows="
            f"{constant_rows!r} asks for rows that vary; use ties=2 or more, or "
            "constant_rows='allow'"
        )
    if kind == "binary" and ties == "none" and elements is None:
        raise OptionError(
            f"{function}: kind='binary' with ties='none': binary scores tie whenever a row "
            "has more than two values; use ties='some' or 'many'"
        )
    return kind, ties, nan, constant_rows


def _distinct(kind, ties, elements) -> bool:
    """Whether rows are drawn one distinct value at a time (the costly draws)."""
    return ties == "none" and (elements is not None or kind != "binary")


@st.composite
def _rows(draw, rows: int, n: int, kind: str, ties, elements, constant_rows="allow", group=None):
    """A (rows, n) float array of values, before missing values and row checks."""
    if rows == 0 or n == 0:
        return np.zeros((rows, n))
    unique = ties == "none"
    if elements is not None:
        if unique:
            drawn = [
                draw(st.lists(elements, min_size=n, max_size=n, unique=True), label="row")
                for _ in range(rows)
            ]
            return np.asarray(drawn, dtype=float).reshape(rows, n)
        return draw(hnp.arrays(np.float64, (rows, n), elements=elements), label="values")
    n_levels = _levels(kind, ties, n)
    if unique and n_levels == n:
        drawn = [draw(st.permutations(range(n)), label="row") for _ in range(rows)]
        levels = np.asarray(drawn, dtype=np.int64).reshape(rows, n)
    elif unique:
        drawn = [
            draw(
                st.lists(st.integers(0, n_levels - 1), min_size=n, max_size=n, unique=True),
                label="row",
            )
            for _ in range(rows)
        ]
        levels = np.asarray(drawn, dtype=np.int64).reshape(rows, n)
    else:
        levels = draw(
            hnp.arrays(np.int64, (rows, n), elements=st.integers(0, n_levels - 1)), label="levels"
        )
        if constant_rows != "allow" and n >= 2 and n_levels >= 2:
            # made to vary by construction, not by filtering: a constant row gets a last
            # value one level up (so 0 0 0 shrinks to 0 0 1)
            constant = (levels == levels[:, :1]).all(axis=1)
            if constant_rows == "not_all":  # in each group of rows (a slice of a stack)
                groups = constant.reshape(-1, group or rows)
                constant = (
                    groups.all(axis=1, keepdims=True) & (np.arange(groups.shape[1]) == 0)
                ).ravel()
            levels[constant, -1] = (levels[constant, 0] + 1) % n_levels
    return _as_values(levels, kind, n_levels)


def missing_masks(shape, pattern: str = "scattered") -> st.SearchStrategy:
    """Boolean masks (True = missing) of ``shape`` whose last two axes are judges × objects.

    Parameters
    ----------
    shape : tuple of int
        The mask's shape; a 1-D shape is one row of objects.
    pattern : {"none", "scattered", "judges", "objects", "any"}
        Nothing missing; any cell; whole rows (judges); whole columns
        (objects); or one of these, drawn.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Masks that shrink towards nothing missing.

    Examples
    --------
    >>> from hypothesis import given
    >>> from rankstats.testing.strategies import missing_masks
    >>> @given(missing_masks((3, 4), "judges"))
    ... def test_whole_rows(mask):
    ...     assert (mask == mask[:, :1]).all()
    >>> test_whole_rows()
    """
    pattern = a.choice("missing_masks", "pattern", pattern, NAN_PATTERNS)
    shape = a.shape("missing_masks", "shape", shape)
    if len(shape) == 1:  # one row of objects
        return missing_masks((1, *shape), pattern).map(lambda mask: mask[0])
    if pattern == "none":
        return st.just(np.zeros(shape, dtype=bool))
    if pattern == "scattered":
        return hnp.arrays(np.bool_, shape, elements=st.booleans())
    if pattern == "any":
        return st.one_of(*(missing_masks(shape, p) for p in ("scattered", "judges", "objects")))
    if pattern == "judges":
        lines = hnp.arrays(np.bool_, (*shape[:-1], 1), elements=st.booleans())
    else:
        lines = hnp.arrays(np.bool_, (*shape[:-2], 1, shape[-1]), elements=st.booleans())
    return lines.map(lambda mask: np.broadcast_to(mask, shape).copy())


def _row_check(x: np.ndarray, constant_rows: str) -> bool:
    if constant_rows == "allow" or x.size == 0:
        return True
    rows = x.reshape(-1, x.shape[-1])
    present = ~np.isnan(rows)
    high = np.where(present, rows, -np.inf).max(axis=-1)
    low = np.where(present, rows, np.inf).min(axis=-1)
    varied = high > low
    if constant_rows == "not_all":
        return bool(varied.any())
    return bool((varied | ~present.any(axis=-1)).all())


@st.composite
def _arrays(draw, shape, kind, ties, nan, constant_rows, elements):
    if kind is None:
        kind = draw(st.sampled_from(KINDS), label="kind")
    if ties is None:
        ties = draw(st.sampled_from(TIE_DENSITIES), label="ties")
    if kind == "binary" and ties == "none":
        ties = "some"
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
    n = shape[-1]
    group = shape[-2] if len(shape) > 2 else None
    x = draw(_rows(rows, n, kind, ties, elements, constant_rows, group)).reshape(shape)
    if (
        constant_rows == "allow"
        and ties != "none"
        and x.size
        and draw(st.booleans(), label="constant row")
    ):
        flat = x.reshape(rows, n)
        row = draw(st.integers(0, rows - 1), label="constant row index")
        flat[row] = flat[row, 0]
        x = flat.reshape(shape)
    if nan != "none":
        mask = draw(missing_masks(shape if len(shape) > 1 else (1, n), nan), label="missing")
        x = np.where(mask.reshape(shape), np.nan, x)
    return x


def score_arrays(
    shape=None,
    *,
    kind: str = "continuous",
    ties="some",
    nan: str = "none",
    constant_rows: str = "allow",
    elements=None,
) -> st.SearchStrategy:
    """Float arrays of scores; ties, rows and missing values are along the last axes.

    Parameters
    ----------
    shape : tuple of int or strategy of tuples, optional
        The arrays' shape; by default 1 to 3 dimensions of 1 to 8 positions.
    kind, ties, nan, constant_rows, elements
        As for :func:`score_matrices`; a row is a run along the last axis.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        ``float64`` arrays.

    Examples
    --------
    >>> from hypothesis import find
    >>> from rankstats.testing.strategies import score_arrays
    >>> find(score_arrays((2, 3), kind="ranks"), lambda x: True)
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """
    kind, ties, nan, constant_rows = _check_matrix_options(
        "score_arrays", kind, ties, nan, constant_rows, elements
    )
    distinct = _distinct(kind, ties, elements)

    def checked(value, name="shape (drawn)"):
        value = a.shape("score_arrays", name, value)
        _check_size(
            "score_arrays", f"{name}={value!r}", int(np.prod(value, dtype=object)), distinct
        )
        return value

    if shape is None:
        shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=8)
    elif isinstance(shape, st.SearchStrategy):
        shapes = shape.map(checked)
    else:
        shapes = st.just(checked(shape, "shape"))
    return shapes.flatmap(
        lambda s: _arrays(tuple(s), kind, ties, nan, constant_rows, elements)
    ).filter(lambda x: _row_check(x, constant_rows))


def score_matrices(
    *,
    judges=(1, 6),
    objects=(2, 7),
    kind: str = "continuous",
    ties="some",
    nan: str = "none",
    constant_rows: str = "allow",
    elements=None,
    slices=None,
) -> st.SearchStrategy:
    """Score matrices of judges (rows) × objects (columns), the input of a rank statistic.

    Parameters
    ----------
    judges, objects : int, (int, int) or strategy of ints
        How many rows and columns (a fixed number or an inclusive range). The
        defaults reach one judge and two objects.
    kind : {"binary", "proportion", "continuous", "ranks"} or None
        None draws one for each matrix. ``binary``: 0 and 1; ``proportion``:
        multiples of ``1 / (levels - 1)`` in [0, 1]; ``continuous``: 0, 0.25,
        -0.25, 0.5, ...; ``ranks``: the integers 1 to n. Level 0, where
        shrinking goes, is the kind's 0 (1 for ranks).
    ties : {"none", "some", "many"}, int or None
        How often values tie within a row: never, by chance (as many levels
        as objects), or nearly always (two levels); an int is the number of
        levels; None draws a density for each matrix. ``binary`` rows of more
        than two objects always tie.
    nan : {"none", "scattered", "judges", "objects", "any"}
        Which scores are missing (NaN), see :func:`missing_masks`.
    constant_rows : {"allow", "not_all", "none"}
        Whether a row may give every object the same score: allowed (and
        sometimes made so on purpose), not in every row, or in no row
        (missing scores aside).
    elements : strategy of floats, optional
        Draw the values from this strategy instead (``kind`` is then unused;
        ``ties="none"`` still makes each row's values distinct).
    slices : int or (int, int), optional
        Stack this many matrices of one shape: arrays of shape (slices,
        judges, objects), each slice meeting ``constant_rows``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        ``float64`` arrays of shape (judges, objects), or (slices, judges,
        objects).

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find, given
    >>> from rankstats.testing.strategies import score_matrices
    >>> @given(score_matrices(judges=3, objects=4, kind="ranks", ties="none"))
    ... def test_rows_are_permutations(x):
    ...     assert (np.sort(x, axis=1) == [1, 2, 3, 4]).all()
    >>> test_rows_are_permutations()

    A failing example shrinks to the smallest matrix that fails:

    >>> find(score_matrices(), lambda x: (x == x[:, :1]).all(axis=1).any())
    array([[0., 0.]])
    """
    return _score_matrices(
        "score_matrices", judges, objects, kind, ties, nan, constant_rows, elements, slices
    )


def _score_matrices(function, judges, objects, kind, ties, nan, constant_rows, elements, slices):
    kind, ties, nan, constant_rows = _check_matrix_options(
        function, kind, ties, nan, constant_rows, elements
    )
    (m, most_m), (n, most_n) = (
        _sizes(function, judges, "judges"),
        _sizes(function, objects, "objects"),
    )
    k, most_k = (None, 1) if slices is None else _sizes(function, slices, "slices")
    distinct = _distinct(kind, ties, elements)
    _check_size(
        function,
        "the matrices (judges x objects x slices)",
        _most(most_m, most_n, most_k),
        distinct,
    )

    @st.composite
    def matrices(draw):
        rows = draw(m, label="judges")
        columns = draw(n, label="objects")
        count = None if k is None else draw(k, label="slices")
        _check_size(
            function,
            f"a drawn matrix of {rows} x {columns} x {count or 1}",
            rows * columns * (count or 1),
            distinct,
        )
        shape = (rows, columns) if count is None else (count, rows, columns)
        x = draw(_arrays(shape, kind, ties, nan, constant_rows, elements))
        blocks = x[None] if count is None else x
        assume(all(_row_check(block, constant_rows) for block in blocks))
        return x

    return matrices()


def score_vectors(
    size=(2, 10),
    *,
    kind: str = "continuous",
    ties="some",
    nan: str = "none",
    constant: bool = True,
    elements=None,
) -> st.SearchStrategy:
    """One row of scores (1-D), such as one judge's scores or one side of a paired test.

    Parameters
    ----------
    size : int, (int, int) or strategy of ints
        The number of values.
    kind, ties, nan, elements
        As for :func:`score_matrices`.
    constant : bool, default True
        Whether every value may be the same.

    Examples
    --------
    >>> from hypothesis import find
    >>> from rankstats.testing.strategies import score_vectors
    >>> find(score_vectors(5, kind="binary"), lambda x: x.sum() == 1)
    array([1., 0., 0., 0., 0.])
    """
    rows = "allow" if a.flag("score_vectors", "constant", constant) else "none"
    if rows == "none" and ties == 1 and elements is None:
        raise OptionError(
            "score_vectors: ties=1 gives a single value, and constant=False asks "
            "for vectors that vary; use ties=2 or more, or constant=True"
        )
    a.sizes("score_vectors", "size", size)  # named as the caller named it
    return _score_matrices("score_vectors", 1, size, kind, ties, nan, rows, elements, None).map(
        lambda x: x[0]
    )


def pvalues(size=(1, 25), *, nan: bool = True) -> st.SearchStrategy:
    """A 1-D family of p-values, with exact 0, 0.05 and 1 often, and NaN (untested) if asked.

    Examples
    --------
    >>> from hypothesis import given
    >>> from rankstats.testing.strategies import pvalues
    >>> @given(pvalues(nan=False))
    ... def test_probabilities(p):
    ...     assert ((p >= 0) & (p <= 1)).all()
    >>> test_probabilities()
    """
    sizes, _ = _sizes("pvalues", size, "size")
    nan = a.flag("pvalues", "nan", nan)
    values = st.one_of(
        st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0]), st.floats(0.0, 1.0, allow_nan=False)
    )

    @st.composite
    def families(draw):
        n = draw(sizes, label="size")
        p = draw(hnp.arrays(np.float64, n, elements=values), label="pvalues")
        if nan:
            p = np.where(draw(hnp.arrays(np.bool_, n), label="untested"), np.nan, p)
        return p

    return families()


#: Integer levels of each kind of cube score, and how a level becomes a score.
_CUBE_LEVELS = {"binary": 2, "proportion": 5, "continuous": 7}


def _cube_scores(levels: np.ndarray, kind: str) -> np.ndarray:
    levels = levels.astype(float)
    if kind == "proportion":
        return levels / 4.0
    if kind == "continuous":
        return np.where(levels % 2 == 1, 1.0, -1.0) * np.ceil(levels / 2.0) / 2.0 + 0.0
    return levels


def _samples_option(samples):
    """``(with samples: bool or None for drawn, strategy of counts, largest count)``."""
    if samples is None:
        return None, st.integers(1, 4), 4
    if isinstance(samples, (bool, np.bool_, str)):
        with_samples = a.flag("cubes", "samples", samples)
        return with_samples, st.integers(1, 4), 4 if with_samples else 1
    counts, most = _sizes("cubes", samples, "samples")
    return True, counts, most


@st.composite
def _cube(
    draw,
    tasks,
    models,
    templates,
    samples,
    kind,
    ragged,
    absent,
    nan,
    template_attributes,
    extra_dims,
    shuffled_dims,
    higher_is_better,
):
    n_tasks = draw(tasks, label="tasks")
    n_models = draw(models, label="models")
    n_templates = draw(templates, label="templates")
    with_samples, sample_sizes, _ = samples
    if with_samples is None:
        with_samples = draw(st.booleans(), label="sample dimension")
    n_samples = draw(sample_sizes, label="samples") if with_samples else 0
    kind = draw(st.sampled_from(SCORE_KINDS), label="score_kind") if kind is None else kind
    better = (
        not draw(st.booleans(), label="lower is better")
        if higher_is_better is None
        else higher_is_better
    )

    def real_counts(size, label):
        # drawn as the padding a task has, so that shrinking removes the padding
        if not ragged or size <= 1:
            return np.full(n_tasks, size)
        short = draw(
            st.lists(st.integers(0, size - 1), min_size=n_tasks, max_size=n_tasks), label=label
        )
        return size - np.asarray(short, dtype=int)

    real_templates = real_counts(n_templates, "padded templates")
    template_real = np.arange(n_templates)[None, :] < real_templates[:, None]
    dims = ["model", "task", "template"]
    shape = [n_models, n_tasks, n_templates]
    real = template_real[None, :, :]
    if with_samples:
        real_samples = real_counts(n_samples, "padded samples")
        sample_real = np.arange(n_samples)[None, :] < real_samples[:, None]
        dims.append("sample")
        shape.append(n_samples)
        real = real[..., None] & sample_real[None, :, None, :]
    extra = draw(st.integers(1, 2), label="runs") if extra_dims else 0
    _check_size(
        "cubes",
        f"a drawn cube of {n_models} models, {n_tasks} tasks, {n_templates} "
        f"templates and {n_samples} samples",
        int(np.prod(shape)) * max(extra, 1),
        False,
    )
    if extra:
        dims.append("run")
        shape.append(extra)
        real = real[..., None]
    levels = draw(
        hnp.arrays(np.int8, tuple(shape), elements=st.integers(0, _CUBE_LEVELS[kind] - 1)),
        label="levels",
    )
    keep = np.broadcast_to(real, shape).copy()
    if absent:
        ran = ~draw(hnp.arrays(np.bool_, (n_models, n_tasks)), label="absent")
        keep &= ran.reshape(n_models, n_tasks, *[1] * (len(shape) - 2))
    if nan:
        keep &= ~draw(hnp.arrays(np.bool_, tuple(shape)), label="missing")
    values = np.where(keep, _cube_scores(levels, kind), np.nan)

    def ids(prefix, present, size):
        labels = np.array([f"{prefix}{j}" for j in range(size)], dtype=object)
        return np.where(present, labels[None, :], "").astype(object)

    coords = {
        "model": np.array([f"m{i}" for i in range(n_models)], dtype=object),
        "task": np.array([f"t{t}" for t in range(n_tasks)], dtype=object),
        "template_id": (("task", "template"), ids("p", template_real, n_templates)),
    }
    if template_attributes:
        text = np.array(
            [[f"Template {j} of t{t}: {{x}}" for j in range(n_templates)] for t in range(n_tasks)],
            dtype=object,
        ).reshape(n_tasks, n_templates)
        original = template_real & (np.arange(n_templates)[None, :] == 0)
        invalid = draw(hnp.arrays(np.bool_, (n_tasks, n_templates)), label="invalid")
        method = np.where(original, "original", "paraphrase").astype(object)
        coords.update(
            {
                "template_text": (("task", "template"), np.where(template_real, text, "")),
                "template_is_original": (("task", "template"), original),
                "template_method": (("task", "template"), np.where(template_real, method, "")),
                "template_valid": (("task", "template"), template_real & ~invalid),
            }
        )
    if with_samples:
        coords["sample_id"] = (("task", "sample"), ids("s", sample_real, n_samples))
    if extra:
        coords["run"] = np.arange(extra)
    cube = xr.Dataset({"score": (dims, values)}, coords=coords)
    if shuffled_dims:
        cube = cube.transpose(*draw(st.permutations(dims), label="dimension order"))
    cube.attrs = provenance(kind, better, "score", "rankstats.testing.strategies.cubes")
    cube.attrs["created_at"] = CREATED_AT
    return cube


def cubes(
    *,
    tasks=(1, 3),
    models=(1, 4),
    templates=(1, 4),
    samples=None,
    kind=None,
    ragged: bool = True,
    absent: bool = True,
    nan: bool = False,
    template_attributes: bool = True,
    extra_dims: bool = False,
    shuffled_dims: bool = False,
    higher_is_better=None,
) -> st.SearchStrategy:
    """Whole score cubes, each one passing :func:`rankstats.validate`.

    Parameters
    ----------
    tasks, models, templates : int, (int, int) or strategy of ints
        How many tasks and models, and the most templates a task has.
    samples : None, bool, int or (int, int)
        None: a ``sample`` dimension sometimes (1 to 4 samples); False: never
        (already aggregated scores); True: always; an int or a range: always,
        with that many samples at most.
    kind : {"binary", "proportion", "continuous"}, optional
        The ``score_kind``; drawn when None. Binary scores are 0 and 1,
        proportions multiples of 0.25, continuous scores multiples of 0.5 in
        [-1.5, 1.5].
    ragged : bool, default True
        Tasks may have fewer templates (and samples) than the largest,
        the rest padded: id ``""`` and no score.
    absent : bool, default True
        Some models may never have run some tasks (every score missing).
    nan : bool, default False
        Some real scores may be missing as well (NaN that is missingness,
        not structure).
    template_attributes : bool, default True
        Add ``template_text``, ``template_is_original`` (the first template
        of each task), ``template_method`` and ``template_valid``.
    extra_dims : bool, default False
        Add a ``run`` dimension of 1 or 2 positions after the others.
    shuffled_dims : bool, default False
        Put the dimensions of ``score`` in a drawn order.
    higher_is_better : bool, optional
        The attribute; drawn when None.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        ``xarray.Dataset`` cubes; models are ``m0, m1, ...``, tasks ``t0,
        ...``, templates ``p0, ...`` and samples ``s0, ...`` within each task.

    Examples
    --------
    >>> from hypothesis import find, given, settings
    >>> import rankstats
    >>> from rankstats.testing.strategies import cubes
    >>> @settings(max_examples=20)
    ... @given(cubes(samples=True, kind="binary", extra_dims=True))
    ... def test_valid(cube):
    ...     assert rankstats.validate(cube).score.dims[-2:] == ("sample", "run")
    >>> test_valid()
    >>> find(cubes(), lambda cube: cube.score.isnull().all()).score.shape
    (1, 1, 1)
    """
    function = "cubes"
    if kind is not None:
        kind = a.choice(function, "kind", kind, SCORE_KINDS)
    flags = {
        name: a.flag(function, name, value)
        for name, value in (
            ("ragged", ragged),
            ("absent", absent),
            ("nan", nan),
            ("template_attributes", template_attributes),
            ("extra_dims", extra_dims),
            ("shuffled_dims", shuffled_dims),
        )
    }
    higher_is_better = a.optional_flag(function, "higher_is_better", higher_is_better)
    (n_tasks, most_tasks), (n_models, most_models), (n_templates, most_templates) = (
        _sizes(function, value, name)
        for name, value in (("tasks", tasks), ("models", models), ("templates", templates))
    )
    samples = _samples_option(samples)
    _check_size(
        function,
        "the cubes (models x tasks x templates x samples x runs)",
        _most(most_models, most_tasks, most_templates, samples[2], 2 if flags["extra_dims"] else 1),
        False,
    )
    return _cube(
        n_tasks,
        n_models,
        n_templates,
        samples,
        kind,
        flags["ragged"],
        flags["absent"],
        flags["nan"],
        flags["template_attributes"],
        flags["extra_dims"],
        flags["shuffled_dims"],
        higher_is_better,
    )
