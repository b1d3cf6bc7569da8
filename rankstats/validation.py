"""Check a Dataset against the cube's conventions (``rankstats/schemas/cube.schema.json``)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import xarray as xr

from .errors import CubeError, ScoreValueError

__all__ = ["higher_is_better_of", "label_problem", "score_kind_of", "validate"]

SCHEMA_VERSION = "1.0"
SCORE_KINDS = ("binary", "proportion", "continuous")
REQUIRED_DIMS = ("model", "task", "template")
REQUIRED_ATTRS = (
    "schema_version",
    "score_kind",
    "higher_is_better",
    "metric",
    "created_at",
    "creation_library_version",
    "source",
)
_PER_TASK = {"template": ("task", "template"), "sample": ("task", "sample")}
#: The optional variable holding each per-template score's standard error.
STANDARD_ERROR = "standard_error"
# control characters (C0, DEL, C1) and lone surrogates: a netCDF file cannot keep them
# (a NUL ends a label there), and a label that looks like another one is not an id
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def label_problem(label: str) -> str | None:
    r"""What is wrong with a label (a model, task, template or sample id), or None.

    Examples
    --------
    >>> from rankstats.validation import label_problem
    >>> label_problem("gpt-2") is None
    True
    >>> print(label_problem("m0\x00"))
    holds the control character '\x00' (labels must be printable text)
    """
    if not label.strip():
        return "is empty"
    found = _UNPRINTABLE.search(label)
    if found:
        return f"holds the control character {found.group()!r} (labels must be printable text)"
    return None


def _unprintable(labels) -> str | None:
    """The first label of ``labels`` (text) holding a control character, or None."""
    if not _UNPRINTABLE.search("".join(labels)):
        return None
    return next(label for label in labels if _UNPRINTABLE.search(label))


def validate(cube: xr.Dataset, *, values: bool = True) -> xr.Dataset:
    """Check that ``cube`` follows the cube's conventions; return it unchanged.

    Parameters
    ----------
    cube : xarray.Dataset
        The cube to check.
    values : bool, default True
        Also check the scores themselves (range for the score kind, nothing
        scored at padded positions). This reads every score: for a cube
        opened lazily from a large file, ``values=False`` checks the
        structure alone.

    Returns
    -------
    xarray.Dataset
        ``cube`` itself, so calls can be chained.

    Raises
    ------
    CubeError
        Listing every problem found: missing dimensions, coordinates or
        attributes, coordinates (or ``standard_error``) on the wrong
        dimensions, repeated labels, scores at padded positions.
    ScoreValueError
        Scores that are not numeric, or outside [0, 1] for ``binary`` and
        ``proportion`` cubes, or standard errors that are negative or
        infinite (naming the model, task, template, sample and value of the
        first offenders).

    Notes
    -----
    The conventions: ``score`` has dims ``model``, ``task``, ``template`` and
    optionally ``sample`` (other dims are allowed and carried along); ``model``
    and ``task`` are labelled by unique index coordinates; each task's
    templates are identified by ``template_id(task, template)`` (and samples
    by ``sample_id(task, sample)``), unique within the task, ``""`` marking
    padding, where every score is missing; every other ``template_*`` or
    ``sample_*`` coordinate lies on the same two dims; and the attributes
    ``schema_version``, ``score_kind`` (binary, proportion or continuous),
    ``higher_is_better`` (0 or 1), ``metric``, ``created_at``,
    ``creation_library_version`` and ``source`` are present. An optional
    ``standard_error`` variable (each per-template score's standard error, as
    a results file reports it) lies on the dims of ``score`` without
    ``sample``, holds floats, and is at least 0 or NaN (not reported). Labels (of
    models, tasks, templates and samples) are printable text: a control
    character is refused, and two labels with the same text (``1`` and
    ``"1"``) are a repeat.

    Examples
    --------
    >>> import rankstats
    >>> cube = rankstats.from_records(
    ...     [{"model": "m", "task": "t", "template": "a", "score": 1.5}]
    ... )
    >>> rankstats.validate(cube).attrs["score_kind"]
    'continuous'
    >>> cube.attrs["score_kind"] = "proportion"
    >>> rankstats.validate(cube)
    Traceback (most recent call last):
    ...
    rankstats.errors.ScoreValueError: invalid cube: 1 score(s) outside [0, 1] for a \
'proportion' cube: model='m', task='t', template='a': 1.5
    """
    if not isinstance(cube, xr.Dataset):
        raise CubeError(f"a cube is an xarray.Dataset, not {type(cube).__name__}")
    if "score" not in cube.data_vars:
        raise CubeError(
            "invalid cube: no 'score' variable "
            f"(variables: {', '.join(map(str, cube.data_vars)) or 'none'})"
        )
    score = cube["score"]
    problems = []
    missing_dims = [d for d in REQUIRED_DIMS if d not in score.dims]
    if missing_dims:
        problems.append(
            f"'score' lacks the dimension(s) {', '.join(map(repr, missing_dims))} "
            f"(it has {', '.join(map(repr, score.dims))})"
        )
    if score.dtype.kind not in "biuf":
        raise ScoreValueError(f"invalid cube: 'score' holds {score.dtype} values, not numbers")
    problems += _attribute_problems(cube.attrs)
    problems += _standard_error_problems(cube)
    for dim in ("model", "task"):
        problems += _label_problems(cube, dim)
    for dim, dims in _PER_TASK.items():
        if dim in score.dims:
            problems += _per_task_problems(cube, dim, dims, check_scores=values)
    if problems:
        raise CubeError("invalid cube: " + "; ".join(problems))
    if values:
        _check_range(cube)
        _check_standard_errors(cube)
    return cube


def _standard_error_problems(cube: xr.Dataset) -> list[str]:
    """The optional ``standard_error``: numbers on the dims of ``score`` without ``sample``."""
    if STANDARD_ERROR not in cube.variables:
        return []
    variable = cube[STANDARD_ERROR]
    wanted = [d for d in cube["score"].dims if d != "sample"]
    problems = []
    if set(variable.dims) != set(wanted):
        problems.append(
            f"{STANDARD_ERROR!r} has dims {variable.dims}, not those of 'score' without "
            f"'sample' ({', '.join(map(repr, wanted))}, in any order)"
        )
    if variable.dtype.kind != "f":
        problems.append(
            f"{STANDARD_ERROR!r} holds {variable.dtype} values, not floats (NaN = not reported)"
        )
    return problems


def _check_standard_errors(cube: xr.Dataset) -> None:
    """Refuse a negative or infinite standard error, naming where it is."""
    if STANDARD_ERROR not in cube.variables:
        return
    se = cube[STANDARD_ERROR]
    bad = (se < 0) | np.isinf(se)
    if not bool(bad.any()):
        return
    count = int(bad.sum())
    shown = [_locate(cube, tuple(where), se) for where in np.argwhere(bad.values)[:5]]
    raise ScoreValueError(
        f"invalid cube: {count} value(s) of {STANDARD_ERROR!r} are negative or infinite "
        "(a standard error is at least 0; NaN = not reported): " + "; ".join(shown)
    )


def _attribute_problems(attrs) -> list[str]:
    problems = []
    missing = [name for name in REQUIRED_ATTRS if name not in attrs]
    if missing:
        problems.append(f"missing attribute(s) {', '.join(map(repr, missing))}")
    kind = attrs.get("score_kind")
    if "score_kind" in attrs and not (isinstance(kind, str) and kind in SCORE_KINDS):
        problems.append(
            f"attribute score_kind={_short(kind)} is not one of {', '.join(map(repr, SCORE_KINDS))}"
        )
    better = attrs.get("higher_is_better", 1)
    if not (isinstance(better, (bool, np.bool_, int, np.integer)) and int(better) in (0, 1)):
        problems.append(f"attribute higher_is_better={_short(better)} is not 0 or 1")
    version = str(attrs.get("schema_version", SCHEMA_VERSION))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        problems.append(
            f"attribute schema_version={version!r} is not compatible with {SCHEMA_VERSION!r}"
        )
    return problems


def _short(value) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _label_problems(cube: xr.Dataset, dim: str) -> list[str]:
    if dim not in cube.dims:
        return []
    if dim not in cube.coords:
        return [f"dimension {dim!r} has no coordinate labelling it"]
    labels = cube[dim].to_index()
    texts = pd.Index([str(label) for label in labels], dtype=object)
    if texts.has_duplicates:
        repeated = labels[texts.duplicated(keep=False)].unique().tolist()
        return [f"coordinate {dim!r} repeats the label(s) {repeated[:10]!r}"]
    for label in texts:
        problem = label_problem(label)
        if problem:
            return [f"coordinate {dim!r}: the label {label!r} {problem}"]
    return []


def _per_task_problems(
    cube: xr.Dataset, dim: str, dims: tuple[str, str], *, check_scores: bool = True
) -> list[str]:
    problems = []
    id_name = f"{dim}_id"
    for name in cube.coords:
        coord = cube.coords[name]
        if str(name).startswith(dim + "_") and dim in coord.dims and set(coord.dims) != set(dims):
            problems.append(f"coordinate {name!r} has dims {coord.dims}, not {dims}")
    if id_name not in cube.coords:
        return [*problems, f"no {id_name!r} coordinate identifying each task's {dim}s"]
    ids = cube[id_name]
    if set(ids.dims) != set(dims):
        return problems
    ids = ids.transpose(*dims)
    # hashed as Python strings: fixed-width NumPy strings of long ids (hashes, say) would
    # take the memory of the longest id times the number of samples, several times over
    values = pd.Series(np.asarray(ids.values, dtype=object).ravel()).astype(str)
    tasks = cube["task"].values
    real = (values != "").to_numpy().reshape(ids.shape)
    task_of = np.broadcast_to(np.arange(ids.shape[0])[:, None], ids.shape)[real]
    keys = pd.DataFrame({"task": task_of, "id": values[real.ravel()].to_numpy()})
    unprintable = _unprintable(keys["id"].tolist())
    if unprintable is not None:
        problems.append(f"{id_name}: the label {unprintable!r} {label_problem(unprintable)}")
    repeated = keys[keys.duplicated()].drop_duplicates()
    if len(repeated):
        task_pos, label = repeated.iloc[0]
        problems.append(
            f"{id_name} repeats {label!r} within task {tasks[int(task_pos)]!r} "
            f"({len(repeated)} repeated id(s) in all)"
        )
    if not check_scores:
        return problems
    padding = xr.DataArray(~real, dims=dims)
    scored = cube["score"].notnull().where(padding, False)
    other = [d for d in scored.dims if d not in dims]
    scored_padding = scored.any(other) if other else scored
    if bool(scored_padding.any()):
        task_pos, position = np.argwhere(scored_padding.transpose(*dims).values)[0]
        problems.append(
            f"task {tasks[task_pos]!r} has scores at padded {dim} position {int(position)} "
            f"(its {id_name} is empty)"
        )
    return problems


def _check_range(cube: xr.Dataset) -> None:
    kind = cube.attrs.get("score_kind")
    score = cube["score"]
    infinite = np.isinf(score) if score.dtype.kind == "f" else None
    if infinite is not None and bool(infinite.any()):
        _refuse_scores(cube, infinite, "infinite (a missing score is NaN)")
    if kind == "binary":
        bad = score.notnull() & (score != 0) & (score != 1)
        what = "not 0 or 1 in a 'binary' cube"
    elif kind == "proportion":
        bad = (score < 0) | (score > 1)
        what = "outside [0, 1] for a 'proportion' cube"
    else:
        return
    if bool(bad.any()):
        _refuse_scores(cube, bad, what)


def _refuse_scores(cube: xr.Dataset, bad: xr.DataArray, what: str):
    count = int(bad.sum())
    shown = [_locate(cube, tuple(where)) for where in np.argwhere(bad.values)[:5]]
    raise ScoreValueError(f"invalid cube: {count} score(s) {what}: " + "; ".join(shown))


def score_kind_of(cube: xr.Dataset) -> str:
    """The cube's ``score_kind`` attribute, checked: one of the kinds, else :class:`CubeError`.

    For code that reads the attribute of a cube it did not validate (an
    array or a misspelt kind there is an error naming it, not an exception
    from NumPy's truth value).

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.validation import score_kind_of
    >>> cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 1}])
    >>> score_kind_of(cube)
    'continuous'
    """
    attrs = getattr(cube, "attrs", {})
    kind = attrs.get("score_kind")
    if isinstance(kind, str) and kind in SCORE_KINDS:
        return kind
    if "score_kind" not in attrs:
        raise CubeError("invalid cube: missing attribute(s) 'score_kind'")
    raise CubeError(
        f"invalid cube: attribute score_kind={_short(kind)} is not one of "
        f"{', '.join(map(repr, SCORE_KINDS))}"
    )


def higher_is_better_of(cube: xr.Dataset | xr.DataArray, default: bool = True) -> bool:
    """The ``higher_is_better`` attribute as a bool (0/1 or True/False), else :class:`CubeError`.

    ``bool(attrs["higher_is_better"])`` reads the text ``"false"`` (or ``"0"``)
    as True; this refuses anything but 0, 1, True and False.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats.validation import higher_is_better_of
    >>> cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 1}],
    ...                               higher_is_better="no")
    >>> higher_is_better_of(cube)
    False
    """
    value = getattr(cube, "attrs", {}).get("higher_is_better")
    if value is None:
        return default
    if isinstance(value, (bool, np.bool_, int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise CubeError(f"invalid cube: attribute higher_is_better={_short(value)} is not 0 or 1")


def _locate(cube: xr.Dataset, where: tuple, score: xr.DataArray | None = None) -> str:
    """Describe one position of ``score`` (by default the scores) by its labels."""
    score = cube["score"] if score is None else score
    position = dict(zip(score.dims, where, strict=True))
    parts = []
    for dim, index in position.items():
        if dim in ("template", "sample") and f"{dim}_id" in cube.coords:
            ids = cube[f"{dim}_id"].transpose("task", dim).values
            label = ids[position["task"], index]
        elif dim in cube.coords:
            label = cube[dim].values[index]
        else:
            label = index
        parts.append(f"{dim}={_plain(label)!r}")
    value = score.values[where]
    return f"{', '.join(parts)}: {_plain(value)}"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
