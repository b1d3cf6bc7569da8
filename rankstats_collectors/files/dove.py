"""Importer of DOVE predictions (Habba et al., 2025): Parquet files of the DOVE record schema.

DOVE ("Dataset Of Variation Evaluation", Hugging Face dataset
``nlphuji/DOVE``, CDLA-Permissive-2.0) holds one record per model, prompt
variant and instance, in files ``<model>/<language>/<n>_shot/<dataset>.parquet``.
A record nests the fields this importer reads:

- ``model.model_info.name``: the model;
- ``prompt_config.format``: the prompt dimensions ``template`` (the
  instruction phrasing), ``separator`` (between choices), ``enumerator``
  (of choices), ``choices_order.method`` and ``shots``;
- ``instance.sample_identifier``: ``dataset_name`` (the task),
  ``hf_split`` and ``hf_index`` (the sample in its source dataset);
- ``evaluation.score``: the score.

Only these columns are read, batch by batch, so the token log-probabilities
that make DOVE files large are never loaded. Files whose nested fields were
flattened into dotted column names (``prompt_config.format.enumerator``) are
read the same way.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

import rankstats
import rankstats_collectors
from rankstats import _text
from rankstats.errors import OptionError

from . import file_error
from ._scored_rows import NAN_SCORE, NOT_FINITE, SCORE_OPTIONS, files_in, to_cube
from ._summary import ImportSummary

__all__ = ["DIMENSIONS", "OPTIONS", "REFERENCE", "load"]

REFERENCE = (
    "Habba, E., Arviv, O., Itzhak, I., Perlitz, Y., Bandel, E., Choshen, L., "
    "Shmueli-Scheuer, M., & Stanovsky, G. (2025). DOVE: A Large-Scale "
    "Multi-Dimensional Predictions Dataset Towards Meaningful LLM Evaluation. "
    "arXiv:2503.01622"
)
DIMENSIONS = {
    "template": "prompt_config.format.template",
    "separator": "prompt_config.format.separator",
    "enumerator": "prompt_config.format.enumerator",
    "choices_order": "prompt_config.format.choices_order.method",
    "shots": "prompt_config.format.shots",
}
"""The prompt dimensions: name in the cube (``template_<name>``) → field of the record."""
_FIELDS = {
    "model": "model.model_info.name",
    "task": "instance.sample_identifier.dataset_name",
    "split": "instance.sample_identifier.hf_split",
    "index": "instance.sample_identifier.hf_index",
    "score": "evaluation.score",
}
_NAME = "dove"
OPTIONS = {
    "dimensions": _text.optional(_text.text_list),
    "select": _text.optional(_text.mapping()),
    "model": _text.optional(_text.text),
    "batch_size": _text.integer(low=1),
    **SCORE_OPTIONS,
}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options(_NAME, OPTIONS)
def load(
    paths,
    *,
    dimensions=None,
    select: dict | None = None,
    model: str | None = None,
    batch_size: int = 65536,
    score_kind: str | None = None,
    non_finite: str = "error",
):
    r"""Read DOVE Parquet files into a cube of per-sample scores.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of them
        Parquet files, or folders searched for ``*.parquet``.
    dimensions : sequence of str, optional
        The prompt dimensions whose combination is the template; default all
        of :data:`DIMENSIONS` (``template``, ``separator``, ``enumerator``,
        ``choices_order``, ``shots``). A dimension left out must not vary
        within a template (use ``select`` to keep one value of it).
    select : dict, optional
        Keep only records whose dimensions take the given value (or one of
        the given values), e.g. ``{"shots": 0}``; the others are skipped and
        counted in the summary.
    model : str, optional
        The model's name in the cube; default ``model.model_info.name``.
    batch_size : int, default 65536
        Records read at a time; memory grows with the number of scores kept,
        not with the size of the files.
    score_kind : {"binary", "proportion", "continuous"}, optional
        The kind of the scores; a score outside its range is an error naming
        the file and row. Inferred from the values when omitted, and the
        summary says so.
    non_finite : {"error", "missing"}, default "error"
        What an infinite score is: an error naming the file, row and field,
        or a missing score (counted in the summary). A NaN score is always
        missing: skipped and counted. A score given as text is an error.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template, sample)``: tasks are
        ``dataset_name``; samples ``"<hf_split>:<hf_index>"``; templates the
        combination of the prompt dimensions, with one coordinate per
        dimension (``template_instruction`` holds the instruction phrasing,
        ``template_separator``, ``template_enumerator``,
        ``template_choices_order``, ``template_shots``) and
        ``template_text`` (the instruction phrasing). Attributes name the
        dimensions, the reference and the licence, and keep the summary.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is not Parquet, lacks a field of the schema, or holds a score
        that is not a number or a sample logged twice with different scores;
        the message names the file, the row (1 = the file's first record)
        and the field.

    Notes
    -----
    The template id joins the dimensions in a fixed order, the instruction
    phrasing shortened to the first 8 hexadecimal digits of its SHA-1
    (``i3f2a9c1d|separator='\n'|enumerator=capitals|choices_order=none|shots=0``);
    the full phrasing is in ``template_instruction``. Records without a
    score are skipped.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import dove
    >>> folder = Path(dove.__file__).parents[2] / "tests/data/fixtures/dove"
    >>> cube = dove.load(folder, select={"shots": 0})
    >>> cube.model.values.tolist()
    ['Llama-3.2-1B-Instruct', 'Mistral-7B-Instruct-v0.3']
    >>> dict(cube.score.sizes)
    {'model': 2, 'task': 1, 'template': 8, 'sample': 6}
    >>> sorted(set(cube.template_enumerator.values.ravel()))
    ['capitals', 'roman']
    """
    pq = rankstats_collectors.require("pyarrow.parquet", "io")
    dimensions = list(
        DIMENSIONS
        if dimensions is None
        else ([dimensions] if isinstance(dimensions, str) else dimensions)
    )
    unknown = [d for d in [*dimensions, *(select or {})] if d not in DIMENSIONS]
    if unknown:
        raise OptionError(
            f"dove: {unknown[0]!r} is not a DOVE prompt dimension "
            f"(dimensions: {', '.join(DIMENSIONS)})"
        )
    files = files_in(paths, (".parquet",))
    summary = ImportSummary(_NAME, [str(f) for f in files])
    frames, templates = [], {}
    for path in files:
        for batch in _batches(pq, path, batch_size):
            frame = _select(batch, select, summary)
            frame = _scores(frame, str(path), summary, non_finite)
            if model is not None:
                frame["model"] = model
            frames.append(_templates(frame, dimensions, templates))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    frame = _check_fixed(frame, dimensions)
    cube = to_cube(
        frame,
        summary,
        metric="score",
        score_kind=score_kind,
        source=f"DOVE Parquet files ({len(files)})",
        attrs={
            "dimensions": ", ".join(dimensions),
            "reference": REFERENCE,
            "license": "CDLA-Permissive-2.0",
        },
    )
    return rankstats.validate(_with_template_attrs(cube, templates))


def _with_template_attrs(cube, templates: dict):
    """``cube`` with one ``(task, template)`` coordinate per template attribute.

    Placed here rather than as record columns: per record they would repeat one
    template's text hundreds of thousands of times.
    """
    table = pd.DataFrame.from_dict(templates, orient="index")
    ids = pd.Series(cube.template_id.values.ravel())
    coords = {}
    for name in table.columns:
        values = ids.map(table[name])
        if pd.api.types.is_numeric_dtype(table[name]):
            values = values.astype(float).to_numpy()
        else:
            values = values.where(values.notna(), "").to_numpy(dtype=object)
        coords[name] = (("task", "template"), values.reshape(cube.template_id.shape))
    return cube.assign_coords(coords)


def _batches(pq, path, batch_size):
    """Each batch as a DataFrame of the needed fields (dotted names) with a ``row`` column."""
    import pyarrow as pa

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise file_error(path, f"not a Parquet file ({error})") from None
    names = _leaf_names(parquet.schema_arrow)
    wanted = [*_FIELDS.values(), *DIMENSIONS.values()]
    for field in wanted:
        if field not in names:
            shown = ", ".join(sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise file_error(
                path,
                f"missing field of the DOVE record schema (the file has: {shown})",
                row="header",
                column=field,
            )
    start = 1
    with parquet:
        for batch in _checked_batches(parquet, path, batch_size, wanted):
            table = pa.Table.from_batches([batch])
            while any(pa.types.is_struct(t) for t in table.schema.types):
                table = table.flatten()
            frame = table.select(wanted).to_pandas()
            # a null score (no score recorded) is told apart from a NaN one here: pandas
            # would turn both into NaN
            frame["_null"] = table[_FIELDS["score"]].is_null().to_numpy(zero_copy_only=False)
            frame["row"] = np.arange(start, start + len(frame))
            start += len(frame)
            yield frame


def _checked_batches(parquet, path, batch_size, wanted):
    """The record batches, with a damaged or truncated file reported by name."""
    import pyarrow as pa

    batches = parquet.iter_batches(batch_size=batch_size, columns=wanted)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError, ValueError) as error:
            raise file_error(path, f"not a readable Parquet file ({error})") from None
        yield batch


def _leaf_names(schema) -> set:
    import pyarrow as pa

    names = set()

    def walk(prefix, field):
        name = f"{prefix}{field.name}"
        if pa.types.is_struct(field.type):
            for child in field.type:
                walk(name + ".", child)
        else:
            names.add(name)

    for field in schema:
        walk("", field)
    return names


def _select(frame: pd.DataFrame, select, summary) -> pd.DataFrame:
    if not select:
        return frame
    keep = np.ones(len(frame), dtype=bool)
    for name, wanted in select.items():
        values = wanted if isinstance(wanted, (list, tuple, set)) else [wanted]
        column = frame[DIMENSIONS[name]]
        match = column.isin(values) | column.astype(str).isin([str(v) for v in values])
        keep &= match.to_numpy()
    if not keep.all():
        summary.skip("not selected", int((~keep).sum()))
    return frame.loc[keep]


def _scores(frame: pd.DataFrame, file: str, summary, non_finite: str) -> pd.DataFrame:
    raw = frame[_FIELDS["score"]]
    absent = frame["_null"].to_numpy(dtype=bool)
    if absent.any():
        summary.skip("the record has no score", int(absent.sum()))
        frame, raw = frame.loc[~absent], raw.loc[~absent]
    # DOVE writes evaluation.score as a number; text (even "0.5") means the file was
    # written by something else, and is refused rather than guessed at
    # (booleans count as 1 and 0, as in every importer)
    numbers = (
        np.array(
            [isinstance(v, (int, float, np.integer, np.floating, np.bool_)) for v in raw.tolist()],
            dtype=bool,
        )
        if len(raw)
        else np.zeros(0, bool)
    )
    if not numbers.all():
        at = int(np.flatnonzero(~numbers)[0])
        value = raw.iloc[at]
        value = value.item() if isinstance(value, np.generic) else value
        raise file_error(
            file,
            f"the score {value!r} is a {type(value).__name__}, not a number "
            "(DOVE records hold evaluation.score as a number)",
            row=int(frame["row"].iloc[at]),
            column=_FIELDS["score"],
        )
    values = raw.to_numpy(dtype=float)
    nan = np.isnan(values)
    if nan.any():
        summary.skip(NAN_SCORE, int(nan.sum()))
        frame, raw, values = frame.loc[~nan], raw.loc[~nan], values[~nan]
    infinite = np.isinf(values)
    if infinite.any() and non_finite == "missing":
        summary.skip(NOT_FINITE, int(infinite.sum()))
        frame, raw, values = frame.loc[~infinite], raw.loc[~infinite], values[~infinite]
    elif infinite.any():
        at = int(np.flatnonzero(infinite)[0])
        raise file_error(
            file,
            f"the score {float(values[at])!r} is not a finite number (pass "
            "non_finite=missing to read such scores as missing)",
            row=int(frame["row"].iloc[at]),
            column=_FIELDS["score"],
        )
    for key in ("model", "task", "split", "index"):
        absent = frame[_FIELDS[key]].isna().to_numpy()
        if absent.any():
            at = int(np.flatnonzero(absent)[0])
            raise file_error(
                file, "the field is empty", row=int(frame["row"].iloc[at]), column=_FIELDS[key]
            )
    index = frame[_FIELDS["index"]]
    return pd.DataFrame(
        {
            "model": frame[_FIELDS["model"]].astype(str).to_numpy(),
            "task": frame[_FIELDS["task"]].astype(str).to_numpy(),
            "sample": (
                frame[_FIELDS["split"]].astype(str) + ":" + index.astype("Int64").astype(str)
                if pd.api.types.is_numeric_dtype(index)
                else frame[_FIELDS["split"]].astype(str) + ":" + index.astype(str)
            ).to_numpy(),
            "score": values,
            "file": file,
            "row": frame["row"].to_numpy(),
            **{f"_{name}": frame[field].to_numpy() for name, field in DIMENSIONS.items()},
        }
    )


def _templates(frame: pd.DataFrame, dimensions, templates: dict) -> pd.DataFrame:
    """Replace the dimension columns by the template id; note each new template's attributes."""
    columns = [f"_{d}" for d in DIMENSIONS]
    fixed = [f"_{d}" for d in DIMENSIONS if d not in dimensions]
    if frame.empty:
        return frame.drop(columns=[c for c in columns if c not in fixed]).assign(template="")
    codes = frame.groupby(columns, sort=False, dropna=False).ngroup().to_numpy()
    ids = []
    for combo in frame[columns].drop_duplicates().itertuples(index=False):
        values = dict(zip(DIMENSIONS, combo, strict=True))
        template = _template_id(values, dimensions)
        ids.append(template)
        templates.setdefault(template, _template_attrs(values, dimensions))
    template = (
        pd.Categorical.from_codes(codes, categories=pd.unique(pd.Series(ids)))
        if len(set(ids)) == len(ids)
        else pd.Series(np.asarray(ids, dtype=object)[codes])
    )
    out = frame.drop(columns=[c for c in columns if c not in fixed])
    out["template"] = template
    for column in fixed:
        out[column] = out[column].astype(str)
    return out


def _template_id(values: dict, dimensions) -> str:
    parts = []
    for name in dimensions:
        value = values[name]
        if name == "template":
            parts.append("i" + hashlib.sha1(str(value).encode("utf-8")).hexdigest()[:8])
        elif name == "separator":
            parts.append(f"separator={str(value)!r}")
        else:
            parts.append(f"{name}={_plain(value)}")
    return "|".join(parts)


def _template_attrs(values: dict, dimensions) -> dict:
    attrs = {}
    for name in dimensions:
        value = values[name]
        if name == "template":
            attrs["template_instruction"] = str(value)
            attrs["template_text"] = str(value)
        elif name == "shots":
            attrs["template_shots"] = int(value)
        else:
            attrs[f"template_{name}"] = str(value)
    return attrs


def _plain(value):
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return value


def _check_fixed(frame: pd.DataFrame, dimensions) -> pd.DataFrame:
    """A dimension outside the template must take one value per (model, task, template, sample)."""
    fixed = [c for c in frame.columns if c.startswith("_")]
    for column in fixed:
        varies = (
            frame.groupby(["model", "task", "template", "sample"], sort=False, observed=True)[
                column
            ].transform("nunique")
            > 1
        )
        if varies.any():
            first = frame.loc[varies].iloc[0]
            raise file_error(
                first["file"],
                f"the prompt dimension {column[1:]!r} takes several "
                f"values within template {first['template']!r} of task "
                f"{first['task']!r}; add it to dimensions, or keep one value "
                f"with select={{{column[1:]!r}: ...}}",
                row=int(first["row"]),
                column=DIMENSIONS[column[1:]],
            )
    return frame.drop(columns=fixed)
