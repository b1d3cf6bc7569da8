r"""Task samples and prompt templates: the JSONL files, and the paper's released layout.

Two JSON Lines formats, each described by a JSON Schema in ``rankstats/schemas/``:

- templates (``rankstats/schemas/templates.schema.json``): one template per line with
  ``task``, ``id`` and ``text`` (named placeholders such as ``{question}``);
  every other key is an attribute of the template (``is_original``,
  ``method``, ...), which becomes a ``template_*`` coordinate of the cube;
- samples (``rankstats/schemas/samples.schema.json``): one sample per line with
  ``task``, ``id``, ``gold`` (the answer, or a list of acceptable answers)
  and optionally ``options`` (the choices of a multiple-choice task); every
  other key is a field the templates can name.

:func:`mizrahi2024_templates` and :func:`mizrahi2024_samples` read the same
things from the release of Mizrahi et al. (2024), so new models can be put
through the paper's own templates and samples.

Examples
--------
>>> import tempfile, pathlib
>>> from rankstats_collectors.tasks import load_samples, load_templates
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "templates.jsonl").write_text(
...     '{"task": "longer", "id": "1", "text": "Which is longer, {a} or {b}?", '
...     '"method": "original"}\n')
>>> _ = (folder / "samples.jsonl").write_text(
...     '{"task": "longer", "id": "s1", "a": "cat", "b": "horse", "gold": "horse"}\n')
>>> load_templates(folder / "templates.jsonl")["longer"]
[Template(id='1', text='Which is longer, {a} or {b}?', attributes={'method': 'original'})]
>>> load_samples(folder / "samples.jsonl")["longer"]
[Sample(id='s1', fields={'a': 'cat', 'b': 'horse'}, gold='horse', options=None)]
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rankstats.errors import OptionError

from .files import file_error
from .prompts.formatting import TemplateError, placeholders

__all__ = [
    "Sample",
    "Template",
    "load_samples",
    "load_templates",
    "mizrahi2024_samples",
    "mizrahi2024_templates",
]

_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class Template:
    r"""A prompt template: its id within the task, its text and its attributes.

    Examples
    --------
    >>> from rankstats_collectors.tasks import Template
    >>> Template("1", "Q: {question}\nA:", {"is_original": True}).attributes
    {'is_original': True}
    """

    id: str
    text: str
    attributes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Sample:
    """A task sample: its id, the fields templates name, its gold answer and any options.

    Examples
    --------
    >>> from rankstats_collectors.tasks import Sample
    >>> Sample("1", {"sentence": "Pigs fly."}, "no", ["yes", "no"]).options
    ['yes', 'no']
    """

    id: str
    fields: dict
    gold: object
    options: list[str] | None = None


def _read_jsonl(path) -> list[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line of a JSON Lines file."""
    path = Path(path)
    if not path.is_file():
        raise file_error(path, "no such file")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as error:
                raise file_error(path, f"not valid JSON ({error})", row=number) from None
            if not isinstance(row, dict):
                raise file_error(path, f"each line must be a JSON object, not {row!r}", row=number)
            rows.append((number, row))
    return rows


def _text_id(path, number: int, row: dict, column: str) -> str:
    value = row.get(column)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise file_error(
            path,
            f"{column!r} must be a non-empty string or an integer, not {value!r}",
            row=number,
            column=column,
        )
    return str(value)


def _check_unique(path, number: int, seen: set, task: str, kind: str, ident: str) -> None:
    if (task, ident) in seen:
        raise file_error(
            path, f"task {task!r} has two {kind}s with id {ident!r}", row=number, column="id"
        )
    seen.add((task, ident))


def load_templates(path) -> dict[str, list[Template]]:
    r"""Read a templates file (JSON Lines; ``rankstats/schemas/templates.schema.json``).

    Parameters
    ----------
    path : str or os.PathLike
        One template per line: ``task``, ``id``, ``text``; every other key is
        an attribute (a string, number, boolean or null).

    Returns
    -------
    dict
        Task → its templates, in file order.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A line is not a JSON object, lacks a key, has a malformed template
        text or a non-scalar attribute, or repeats a template id within a
        task; the message names the file, line and key.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats_collectors.tasks import load_templates
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "templates.jsonl"
    >>> _ = path.write_text('{"task": "t", "id": 1, "text": "{x.y}"}\n')
    >>> load_templates(path)
    Traceback (most recent call last):
    ...
    rankstats_collectors.files.ImporterError: '...templates.jsonl', row 1, ... field {x.y}: ...
    """
    templates: dict[str, list[Template]] = {}
    seen: set = set()
    for number, row in _read_jsonl(path):
        task = _text_id(path, number, row, "task")
        ident = _text_id(path, number, row, "id")
        text = row.get("text")
        if not isinstance(text, str):
            raise file_error(
                path, f"'text' must be a string, not {text!r}", row=number, column="text"
            )
        try:
            placeholders(text, template_id=ident)
        except TemplateError as error:
            raise file_error(path, str(error), row=number, column="text") from None
        attributes = {k: v for k, v in row.items() if k not in ("task", "id", "text")}
        for key, value in attributes.items():
            if not isinstance(value, _SCALARS):
                raise file_error(
                    path,
                    f"a template attribute must be a string, number, "
                    f"boolean or null, not {value!r}",
                    row=number,
                    column=key,
                )
        _check_unique(path, number, seen, task, "template", ident)
        templates.setdefault(task, []).append(Template(ident, text, attributes))
    return templates


def _gold(path, number: int, row: dict):
    if "gold" not in row:
        raise file_error(path, "no 'gold' answer", row=number, column="gold")
    gold = row["gold"]
    if isinstance(gold, list):
        if not gold or not all(isinstance(g, str) for g in gold):
            raise file_error(
                path,
                f"a list of gold answers must hold strings, not {gold!r}",
                row=number,
                column="gold",
            )
    elif not isinstance(gold, _SCALARS):
        raise file_error(
            path,
            f"'gold' must be a string, number, list of strings or null, not {gold!r}",
            row=number,
            column="gold",
        )
    return gold


def _options(path, number: int, row: dict) -> list[str] | None:
    options = row.get("options")
    if options is None:
        return None
    if (
        not isinstance(options, list)
        or len(options) < 2
        or not all(isinstance(o, str) for o in options)
    ):
        raise file_error(
            path,
            f"'options' must be a list of at least two strings, not {options!r}",
            row=number,
            column="options",
        )
    if len(set(options)) != len(options):
        raise file_error(
            path, f"'options' repeats a choice: {options!r}", row=number, column="options"
        )
    return options


def load_samples(path) -> dict[str, list[Sample]]:
    r"""Read a samples file (JSON Lines; ``rankstats/schemas/samples.schema.json``).

    Parameters
    ----------
    path : str or os.PathLike
        One sample per line: ``task``, ``id``, ``gold`` and optionally
        ``options``; every other key is a field for the templates.

    Returns
    -------
    dict
        Task → its samples, in file order.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A line is not a JSON object, lacks ``task``, ``id`` or ``gold``, has
        malformed ``options``, or repeats a sample id within a task; the
        message names the file, line and key.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats_collectors.tasks import load_samples
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples.jsonl"
    >>> _ = path.write_text('{"task": "t", "id": 1, "q": "Pigs fly?", "gold": "no", '
    ...                     '"options": ["yes", "no"]}\n')
    >>> load_samples(path)
    {'t': [Sample(id='1', fields={'q': 'Pigs fly?'}, gold='no', options=['yes', 'no'])]}
    """
    samples: dict[str, list[Sample]] = {}
    seen: set = set()
    for number, row in _read_jsonl(path):
        task = _text_id(path, number, row, "task")
        ident = _text_id(path, number, row, "id")
        gold = _gold(path, number, row)
        options = _options(path, number, row)
        fields = {k: v for k, v in row.items() if k not in ("task", "id", "gold", "options")}
        _check_unique(path, number, seen, task, "sample", ident)
        samples.setdefault(task, []).append(Sample(ident, fields, gold, options))
    return samples


# The paper's release -------------------------------------------------------------------------

_PARAPHRASES = "automatic paraphrases"
_BENCHMARKS = "benchmarks"
_TEMPLATE_COLUMNS = {
    "default prompt": "is_original",
    "method": "method",
    "language style": "language_style",
    "correct": "valid",
    "prompt format": "format",
    "prompt length": "length",
    "samples": "samples",
}
_LETTER = re.compile(r"^\(([A-Z])\)\s")


def _find(folder, kind: str, task: str, suffix: str) -> Path:
    """``<folder>/<kind>/<benchmark>/<task><suffix>``, also when ``folder`` is deeper in."""
    folder = Path(folder)
    candidates = [folder / f"{task}{suffix}"]
    for base in (folder / kind, folder):
        candidates += sorted(base.glob(f"*/{task}{suffix}")) if base.is_dir() else []
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise file_error(
        folder,
        f"no {kind!r} file for task {task!r} (looked for '{kind}/<benchmark>/{task}{suffix}')",
    )


def _flag(path, number: int, column: str, value: str) -> bool:
    # The release qualifies a few flags with a question mark ("0?"): the flag it qualifies.
    lowered = value.strip().lower().removesuffix("?")
    if lowered in ("true", "1", "1.0"):
        return True
    if lowered in ("false", "0", "0.0"):
        return False
    raise file_error(path, f"{value!r} is not a true/false flag", row=number, column=column)


def _integer_or_none(path, number: int, column: str, value: str) -> int | None:
    if not value.strip():
        return None
    try:
        return int(float(value))
    except ValueError:
        raise file_error(
            path, f"{value!r} is not a whole number", row=number, column=column
        ) from None


_CONVERT: dict[str, Callable] = {
    "default prompt": _flag,
    "correct": _flag,
    "prompt length": _integer_or_none,
    "samples": _integer_or_none,
}


def mizrahi2024_templates(
    folder, task: str, *, fields=None, malformed: str = "raise"
) -> list[Template]:
    """The templates of one task from the release of Mizrahi et al. (2024).

    Parameters
    ----------
    folder : str or os.PathLike
        The release folder (holding ``automatic paraphrases/<benchmark>/``),
        or the ``automatic paraphrases`` folder itself, or a benchmark
        folder inside it.
    task : str
        The task, e.g. ``"navigate"``.
    fields : collection of str, optional
        The fields the task's samples have; a template naming another field
        is malformed.
    malformed : {"raise", "skip"}
        What to do with a malformed template: the release holds a few
        automatic paraphrases whose text is not a valid template (an
        unmatched brace, ``{letter.capitalize()}``) or that name a field the
        samples lack (``{query}``).

    Returns
    -------
    list of Template
        In the release's order; ids are the ``prompt idx`` numbers
        (``"1"``, ...), the text is ``prompt template`` and the attributes
        are ``is_original`` (``default prompt``), ``method``,
        ``language_style``, ``valid`` (``correct``), ``format``, ``length``
        and ``samples``, named as :func:`rankstats_collectors.files.mizrahi2024.load`
        names them.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        The file is missing or malformed; the message names file, row and
        column.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors import tasks
    >>> from rankstats_collectors.tasks import mizrahi2024_templates
    >>> release = Path(tasks.__file__).parents[1] / "tests/data/mizrahi2024"
    >>> templates = mizrahi2024_templates(release, "navigate")
    >>> templates[0].id, templates[0].attributes["is_original"], templates[1].text
    ('1', True, 'If {instructions} are followed, will the starting point be reached?')
    >>> len(mizrahi2024_templates(release, "hyperbaton", fields={"options"}, malformed="skip"))
    146
    """
    if malformed not in ("raise", "skip"):
        raise OptionError(f"malformed={malformed!r} is not 'raise' or 'skip'")
    path = _find(folder, _PARAPHRASES, task, ".csv")
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    templates = []
    seen: set = set()
    for number, row in enumerate(rows, start=1):
        for column in ("prompt idx", "prompt template"):
            if not (row.get(column) or "").strip():
                raise file_error(path, "empty or missing", row=number, column=column)
        ident = str(_integer_or_none(path, number, "prompt idx", row["prompt idx"]))
        text = row["prompt template"]
        try:
            names = placeholders(text, template_id=ident)
            unknown = [n for n in names if fields is not None and n not in fields]
            if unknown:
                raise TemplateError(
                    f"template {ident!r} names field {unknown[0]!r}, which "
                    f"the samples lack (they have: {', '.join(fields)})"
                )
        except TemplateError as error:
            if malformed == "skip":
                continue
            raise file_error(path, str(error), row=number, column="prompt template") from None
        attributes = {}
        for column, name in _TEMPLATE_COLUMNS.items():
            if column in row:
                value = row[column] or ""
                convert = _CONVERT.get(column)
                attributes[name] = convert(path, number, column, value) if convert else value
        _check_unique(path, number, seen, task, "template", ident)
        templates.append(Template(ident, text, attributes))
    return templates


def _field_text(values: list) -> str:
    """A list field as the released templates expect it: lettered options one a line."""
    strings = [str(v) for v in values]
    if strings and all(_LETTER.match(s) for s in strings):
        return "\n".join(strings)
    return ", ".join(strings)


def mizrahi2024_samples(folder, task: str) -> list[Sample]:
    """The samples of one task from the release of Mizrahi et al. (2024).

    Parameters
    ----------
    folder : str or os.PathLike
        The release folder (holding ``benchmarks/<benchmark>/<task>.json``),
        or the ``benchmarks`` folder, or a benchmark folder inside it.
    task : str
        The task, e.g. ``"navigate"``.

    Returns
    -------
    list of Sample
        In the release's order, ids as released (``"1"``, ...). List fields
        become text: lettered options (``"(A) ..."``) one a line, as in the
        benchmark's own prompts, other lists joined with ``", "``. Options:
        for multiple-choice tasks the letters (gold ``"A"`` among ``["A",
        "B", ...]``); for classification tasks (``"classification
        (yes/no)"``) the distinct gold answers of the task; otherwise None.
        ``more_info`` stays a field, for task-specific scorers.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        The file is missing or malformed; the message names file, sample and
        field.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors import tasks
    >>> from rankstats_collectors.tasks import mizrahi2024_samples
    >>> release = Path(tasks.__file__).parents[1] / "tests/data/collect/mizrahi2024"
    >>> samples = mizrahi2024_samples(release, "hyperbaton")
    >>> samples[0].gold, samples[0].options
    ('A', ['A', 'B'])
    >>> print(samples[0].fields["options"])
    (A) midsize old grey Brazilian sweater
    (B) midsize grey Brazilian old sweater
    """
    path = _find(folder, _BENCHMARKS, task, ".json")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise file_error(path, f"not valid JSON ({error})") from None
    examples = document.get("examples") if isinstance(document, dict) else None
    if not isinstance(examples, dict):
        raise file_error(path, "no 'examples' object", column="examples")
    task_format = str(document.get("format", ""))
    samples = []
    for ident, example in examples.items():
        if not isinstance(example, dict):
            raise file_error(path, f"sample {ident!r} is not an object", row=ident)
        fields = {}
        for name, value in example.items():
            if name == "gold":
                continue
            fields[name] = _field_text(value) if isinstance(value, list) else value
        options = None
        raw = example.get("options")
        if task_format == "multi_choice" and isinstance(raw, list):
            letters = [_LETTER.match(str(o)) for o in raw]
            if all(letters) and len(letters) >= 2:
                options = [m.group(1) for m in letters]
        samples.append(Sample(str(ident), fields, example.get("gold"), options))
    if task_format.startswith("classification ("):
        choices = list(dict.fromkeys(s.gold for s in samples if isinstance(s.gold, str)))
        if len(choices) >= 2:
            samples = [Sample(s.id, s.fields, s.gold, choices) for s in samples]
    return samples
