r"""Safe template formatting: plain named fields only, nothing evaluated.

A template is text with named placeholders such as ``{question}``. Doubled
braces (``{{`` and ``}}``) are literal braces. Everything else that
:meth:`str.format` would interpret (positional ``{}``, attribute ``{x.a}``,
index ``{x[0]}``, conversions ``{x!r}``, format specs ``{x:>5}``) is an error
here, so a template read from a file can never reach into the objects it is
filled with.

Examples
--------
>>> from rankstats_collectors.prompts.formatting import placeholders, render
>>> placeholders("Q: {question}\nOptions: {options}\nA:")
('question', 'options')
>>> render("{{literal}} {word}", {"word": "cat"})
'{literal} cat'
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

from rankstats.errors import CubeError

__all__ = ["TemplateError", "check_fields", "placeholders", "render"]

_PARSER = string.Formatter()
_SHOWN = 60


class TemplateError(CubeError):
    """A template is malformed, or a sample lacks a field the template needs."""


def _show(text: str) -> str:
    """The template text, shortened for a message."""
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


def _where(text: str, template_id: str | None) -> str:
    return (
        f"template {template_id!r} ({_show(text)})"
        if template_id is not None
        else f"template {_show(text)}"
    )


def _parse(text: str, template_id: str | None = None) -> list[tuple[str, str | None]]:
    """``(literal, field)`` pieces of ``text``, each field checked to be a plain name."""
    if not isinstance(text, str):
        raise TemplateError(
            f"{_where(str(text), template_id)}: the text is {type(text).__name__}, not a string"
        )
    try:
        pieces = list(_PARSER.parse(text))
    except ValueError as error:
        raise TemplateError(
            f"{_where(text, template_id)}: {error} (write a literal brace as '{{{{' or '}}}}')"
        ) from None
    parsed = []
    for literal, field, spec, conversion in pieces:
        if field is None:
            parsed.append((literal, None))
            continue
        shown = (
            "{"
            + field
            + (f"!{conversion}" if conversion else "")
            + (f":{spec}" if spec else "")
            + "}"
        )
        if field == "" or field.isdigit():
            problem = "positional fields are not allowed; name the field"
        elif "." in field or "[" in field or "]" in field:
            problem = "attribute and index access are not allowed; use a plain field name"
        elif conversion is not None:
            problem = "conversions (!r, !s, !a) are not allowed"
        elif spec:
            problem = "format specs are not allowed"
        elif field != field.strip() or "{" in field or "}" in field:
            problem = "the field name is not a plain name"
        else:
            parsed.append((literal, field))
            continue
        raise TemplateError(f"{_where(text, template_id)}, field {shown}: {problem}")
    return parsed


def placeholders(text: str, *, template_id: str | None = None) -> tuple[str, ...]:
    """The named fields of a template, in order of first appearance.

    Parameters
    ----------
    text : str
        The template text.
    template_id : str, optional
        The template's id, shown in error messages.

    Returns
    -------
    tuple of str
        Each field name once.

    Raises
    ------
    TemplateError
        A field is positional (``{}``, ``{0}``), uses attribute or index
        access (``{x.a}``, ``{x[0]}``), a conversion (``{x!r}``) or a format
        spec (``{x:>5}``), or a brace is unmatched; the message names the
        template text and the offending field.

    Examples
    --------
    >>> from rankstats_collectors.prompts.formatting import placeholders
    >>> placeholders("{a} and {b}, then {a} again; {{not a field}}")
    ('a', 'b')
    >>> placeholders("Hello {user.name}")
    Traceback (most recent call last):
    ...
    rankstats_collectors.prompts.formatting.TemplateError: template 'Hello {user.name}', field \
{user.name}: attribute and index access are not allowed; use a plain field name
    """
    fields = (field for _, field in _parse(text, template_id) if field is not None)
    return tuple(dict.fromkeys(fields))


def render(text: str, fields: Mapping[str, object], *, template_id: str | None = None) -> str:
    """Fill a template's named fields; nothing in the template or the fields is evaluated.

    Parameters
    ----------
    text : str
        The template text.
    fields : mapping
        Field name → value; each value is inserted as ``str(value)``. Extra
        fields are ignored.
    template_id : str, optional
        The template's id, shown in error messages.

    Returns
    -------
    str
        The rendered prompt.

    Raises
    ------
    TemplateError
        The template is malformed (see :func:`placeholders`) or ``fields``
        lacks one of its fields; the message names the template and field.

    Examples
    --------
    >>> from rankstats_collectors.prompts.formatting import render
    >>> render("Which word is longer, {word1} or {word2}?", {"word1": "cat", "word2": "horse"})
    'Which word is longer, cat or horse?'
    >>> render("Q: {question}", {}, template_id="3")
    Traceback (most recent call last):
    ...
    rankstats_collectors.prompts.formatting.TemplateError: template '3' ('Q: {question}'): \
no value for field 'question'
    """
    pieces = []
    for literal, field in _parse(text, template_id):
        pieces.append(literal)
        if field is None:
            continue
        if field not in fields:
            raise TemplateError(f"{_where(text, template_id)}: no value for field {field!r}")
        pieces.append(str(fields[field]))
    return "".join(pieces)


def check_fields(templates: Mapping[str, str], samples: Sequence, *, task: str) -> None:
    """Check, before any model work, that every sample has every field every template needs.

    Parameters
    ----------
    templates : mapping
        Template id → template text.
    samples : sequence
        The task's samples: mappings of field name → value, or objects with
        ``fields`` and ``id`` attributes (:class:`rankstats_collectors.tasks.Sample`).
    task : str
        The task's name, shown in error messages.

    Raises
    ------
    TemplateError
        A template is malformed, or a sample lacks a field; the message names
        the task, the template, the sample and the field.

    Examples
    --------
    >>> from rankstats_collectors.prompts.formatting import check_fields
    >>> templates = {"1": "Is {a} longer than {b}?", "2": "Compare {a} and {c}."}
    >>> check_fields(templates, [{"a": "x", "b": "y", "c": "z"}], task="t")
    >>> check_fields(templates, [{"a": "x", "b": "y"}], task="t")
    Traceback (most recent call last):
    ...
    rankstats_collectors.prompts.formatting.TemplateError: task 't', template '2' \
('Compare {a} and {c}.'): sample 1 has no field 'c' (it has: a, b)
    """
    needed = {}
    for template_id, text in templates.items():
        try:
            needed[template_id] = placeholders(text, template_id=str(template_id))
        except TemplateError as error:
            raise TemplateError(f"task {task!r}, {error}") from None
    for position, sample in enumerate(samples, start=1):
        fields = getattr(sample, "fields", sample)
        name = getattr(sample, "id", position)
        for template_id, wanted in needed.items():
            for field in wanted:
                if field not in fields:
                    have = ", ".join(map(str, fields)) or "no fields"
                    raise TemplateError(
                        f"task {task!r}, {_where(templates[template_id], str(template_id))}: "
                        f"sample {name} has no field {field!r} (it has: {have})"
                    )
