"""Importer of PromptEval correctness arrays (Maia Polo et al., 2024): model × prompt × example.

PromptEval evaluates every model on every prompt template of a task and keeps
the correctness of each (prompt, example) pair as an array: ``Y[model, prompt,
example]`` (or ``Y[prompt, example]`` per model), the prompt being the row of
the task's templates file (``data/templates/MMLU/<subject>.csv``: an index and
the column ``prompt template``). The mapping and the options are described in
``docs/importers/prompteval.md``.
"""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

import rankstats
from rankstats import _text

from . import file_error
from ._paths import as_paths, readable_file
from ._scored_rows import NAN_SCORE, NOT_FINITE, SCORE_OPTIONS, check_range, kind_of, label
from ._summary import ImportSummary

__all__ = ["OPTIONS", "REFERENCE", "load"]

REFERENCE = (
    "Maia Polo, F., Xu, R., Weber, L., Silva, M., Bhardwaj, O., Choshen, L., "
    "de Oliveira, A. F. M., Sun, Y., Yurochkin, M. (2024). Efficient multi-prompt "
    "evaluation of LLMs. NeurIPS. arXiv:2405.17202"
)
_NAME = "prompteval"
_PICKLES = (".pickle", ".pkl", ".p")

OPTIONS = {
    "model": _text.optional(_text.text),
    "task": _text.optional(_text.text),
    "templates": _text.optional(_text.text),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    model: str | None = None,
    task: str | None = None,
    templates: str | None = None,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    """Read PromptEval correctness arrays into a cube of per-example scores.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        ``.npy`` files holding ``Y[prompt, example]`` (one model each: the
        file's stem names it) or ``Y[model, prompt, example]``, or ``.npz``
        files holding the array ``Y`` with, optionally, the text arrays
        ``models``, ``prompts`` and ``examples`` that name its rows. Pickles
        are refused (loading one runs whatever code it holds).
    model : str, optional
        The model of a 2-D array; by default the file's stem.
    task : str, optional
        The task; by default the file's stem for 3-D arrays, else the
        templates file's stem, else ``"task"``. Files of one task must have
        the same prompts and examples.
    templates : str, optional
        PromptEval's templates file of the task (a CSV with an index and the
        column ``prompt template``); each prompt's ``template_text`` is the
        text of the row whose index is the prompt's id (a file without an
        index column numbers its rows from 0). The ids must be the same in
        the array and the file, in any order.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; inferred from the values when omitted.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score is: an error naming the file and position, or
        a missing score (counted in the summary). NaN is always missing.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``: ``template_id`` is the
        prompt's id (its row in the templates file, or ``prompts``),
        ``sample_id`` the example's (its column, or ``examples``).

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not a NumPy array of two or three dimensions, its names do
        not fit its shape, a score is infinite, or the prompt ids of the
        array and of the templates file differ (the message names both files
        and the ids found in one only).

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import prompteval
    >>> data = Path(prompteval.__file__).parents[2] / "tests/data/prompteval"
    >>> cube = prompteval.load(data / "anatomy.npz", templates=str(data / "anatomy.csv"))
    >>> dict(cube.score.sizes)
    {'model': 3, 'task': 1, 'template': 100, 'sample': 20}
    >>> cube.template_text.values[0, 0].split()[:4]
    ['The', 'following', 'are', 'multiple']
    """
    texts = _templates(Path(templates)) if templates else None
    files = [readable_file(path) for path in as_paths(paths)]
    summary = ImportSummary(_NAME, [str(f) for f in files])
    parts = []
    for path in files:
        scores, models, prompts, examples = _read(path, model)
        name = task or (Path(templates).stem if templates and scores.ndim == 2 else path.stem)
        name = label(name, path, column="task")
        if texts is not None:
            _same_prompts(texts, prompts, templates, path)
        infinite = np.isinf(scores)
        if infinite.any():
            if non_finite != "missing":
                at = tuple(int(i[0]) for i in np.nonzero(infinite))
                raise file_error(
                    path,
                    f"the score at (model, prompt, example) {at} is not a "
                    "finite number (pass non_finite=missing to read such "
                    "scores as missing)",
                )
            summary.skip(NOT_FINITE, int(infinite.sum()))
            scores = np.where(infinite, np.nan, scores)
        missing = np.isnan(scores)
        summary.skip(NAN_SCORE, int(missing.sum()))
        m, p, e = np.nonzero(~missing)
        parts.append(
            pd.DataFrame(
                {
                    "model": models[m],
                    "task": name,
                    "template": prompts[p],
                    "sample": examples[e],
                    "score": scores[m, p, e],
                    "_file": str(path),
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    if frame.empty:
        raise file_error(", ".join(summary.files[:3]), "no scores: every score is missing")
    repeated = frame.duplicated(["model", "task", "template", "sample"])
    if repeated.any():
        first = frame.loc[repeated].iloc[0]
        raise file_error(
            first["_file"],
            f"model {first['model']!r} on task {first['task']!r} is in another file too",
        )
    values = frame["score"].to_numpy(dtype=float)
    kind = kind_of(values, summary, score_kind)
    check_range(values, kind, lambda at, problem: file_error(frame["_file"].iloc[at], problem))
    summary.keep(len(frame))
    if texts is not None:
        frame["template_text"] = frame["template"].map(texts)
    cube = rankstats.from_records(
        frame.drop(columns="_file"),
        score_kind=kind,
        metric="correct",
        source=f"PromptEval arrays ({len(files)})",
    )
    cube.attrs["reference"] = REFERENCE
    return summary.apply(cube)


def _read(path: Path, model: str | None):
    """``(Y[model, prompt, example], model names, prompt ids, example ids)`` of one file."""
    if path.suffix.lower() in _PICKLES:
        raise file_error(
            path,
            "a pickle: loading one runs the code it holds, so it is not "
            "read; save the array with numpy.save (.npy) or numpy.savez "
            "(.npz: Y, models, prompts, examples)",
        )
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise file_error(path, f"not a NumPy .npy or .npz file ({error})") from None
    names = {}
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            keys = list(loaded.files)
            key = "Y" if "Y" in keys else (keys[0] if len(keys) == 1 else None)
            if key is None:
                raise file_error(path, f"no array 'Y' among {', '.join(keys)}")
            scores = loaded[key]
            for field in ("models", "prompts", "examples"):
                if field in keys:
                    names[field] = loaded[field]
    else:
        scores = loaded
    if scores.dtype.kind not in "biuf":
        raise file_error(path, f"the array holds {scores.dtype}, not numbers")
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 2:
        scores = scores[np.newaxis]
        default_models = [model or path.stem]
    elif scores.ndim == 3:
        default_models = [f"model_{i}" for i in range(scores.shape[0])]
        if model is not None:
            raise file_error(
                path,
                "model= names the model of a 2-D array; this one is 3-D "
                "(name its models with an array 'models' in a .npz)",
            )
    else:
        raise file_error(
            path,
            f"an array of {scores.ndim} dimensions, not (prompt, example) "
            "or (model, prompt, example)",
        )
    shape = dict(zip(("models", "prompts", "examples"), scores.shape, strict=True))
    defaults = {
        "models": default_models,
        "prompts": range(shape["prompts"]),
        "examples": range(shape["examples"]),
    }
    out = []
    for field in ("models", "prompts", "examples"):
        given = names.get(field, defaults[field])
        given = np.asarray(
            [label(v, path, column=field) for v in np.asarray(given).tolist()], dtype=object
        )
        if len(given) != shape[field]:
            raise file_error(
                path, f"{len(given)} {field}, but the array has {shape[field]}", column=field
            )
        if len(set(given)) != len(given):
            raise file_error(path, f"the {field} are not unique", column=field)
        out.append(given)
    return scores, *out


def _templates(path: Path) -> dict[str, str]:
    """``{prompt id: text}`` of a PromptEval templates file.

    The id is the row's index (the file's first column, when it is not
    ``prompt template``), else the row's number counted from 0, as
    ``pandas.DataFrame.to_csv`` writes the index.
    """
    readable_file(path)
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as error:
        raise file_error(path, f"not a readable CSV file ({error})") from None
    if not header or "prompt template" not in header:
        raise file_error(
            path, "not a PromptEval templates file: no column 'prompt template'", row="header"
        )
    column = header.index("prompt template")
    indexed = column != 0
    texts: dict[str, str] = {}
    for number, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise file_error(
                path, f"the row has {len(row)} fields, the header {len(header)}", row=number
            )
        key = (
            label(row[0], path, row=number, column=header[0] or "index")
            if indexed
            else str(number - 1)
        )
        if key in texts:
            raise file_error(
                path,
                f"the prompt id {key!r} is given twice",
                row=number,
                column=header[0] or "index",
            )
        texts[key] = row[column]
    return texts


def _same_prompts(texts: dict, prompts, templates, path: Path) -> None:
    """Refuse prompt ids found in the array or in the templates file only."""
    ids = [str(p) for p in prompts]
    absent = [p for p in ids if p not in texts]
    unused = [p for p in texts if p not in set(ids)]
    if absent or unused:
        parts = []
        if absent:
            parts.append(f"{_few(absent)} in the array but not in the templates file")
        if unused:
            parts.append(f"{_few(unused)} in the templates file but not in the array")
        raise file_error(
            path,
            f"the prompt ids differ from those of the templates file "
            f"{str(templates)!r} ({'; '.join(parts)}); templates are "
            "joined to the array by id",
            column="prompts",
        )


def _few(ids, limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return f"ids {shown}" + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
