"""Streaming readers of per-sample logs: JSON lines, or one pretty-printed JSON array.

lm-evaluation-harness has written its per-sample logs three ways in the 0.4
series: JSON lines in ``.jsonl`` files, the same JSON lines in files named
``.json``, and (in its first 0.4 releases) one indented JSON array. The
first character that is not white space tells them apart. Either way the
records come one at a time with the line they start on, so a file of any size
is read in bounded memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from . import ImporterError, file_error
from ._paths import readable_file

_CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def records(path: Path, file: str) -> Iterator[tuple[int, dict]]:
    """``(line, record)`` for every record of the log at ``path``, in file order.

    Raises :class:`~rankstats_collectors.files.ImporterError` naming ``file`` and the
    line when the file is not JSON lines or a JSON array of objects.
    """
    readable_file(path, file)
    try:
        handle = open(path, encoding="utf-8")
    except OSError as error:
        raise line_error(file, f"cannot be read ({error.strerror or error})") from None
    with handle:
        first = _first_character(handle, file)
        if first is None:
            return
        if first == "[":
            yield from _array(handle, file)
        elif first == "{":
            yield from _lines(handle, file)
        else:
            raise line_error(
                file,
                f"not a per-sample log: it starts with {first!r}, not with a JSON object or array",
                line=1,
            )


def line_error(file, problem: str, *, line=None, field=None) -> ImporterError:
    """An :class:`~rankstats_collectors.files.ImporterError` naming ``file``, line and field.

    Examples
    --------
    >>> from rankstats_collectors.files._lm_eval_read import line_error
    >>> str(line_error("samples_x.jsonl", "'n/a' is not a number", line=4, field="acc"))
    "'samples_x.jsonl', line 4, field 'acc': 'n/a' is not a number"
    """
    if line is None and field is None:
        return file_error(file, problem)
    where = [repr(str(file))]
    if line is not None:
        where.append(f"line {line}")
    if field is not None:
        where.append(f"field {str(field)!r}")
    return ImporterError(f"{', '.join(where)}: {problem}")


def count_records(path: Path, file: str) -> int:
    """The number of records: lines of a JSON-lines log that are not blank, not parsed."""
    readable_file(path, file)
    with open(path, encoding="utf-8", errors="replace") as handle:
        array = _first_character(handle, file) == "["
    if array:
        return sum(1 for _ in records(path, file))
    return count_lines(path)


def count_lines(path: Path) -> int:
    """The number of lines that are not blank (as :func:`records` skips them), not parsed."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def _first_character(handle, file: str) -> str | None:
    try:
        while chunk := handle.read(64):
            stripped = chunk.lstrip(_SPACE)
            if stripped:
                handle.seek(0)
                return stripped[0]
    except UnicodeDecodeError as error:
        raise line_error(file, f"not a UTF-8 text file ({error})") from error
    return None


def _lines(handle, file: str) -> Iterator[tuple[int, dict]]:
    number = 0
    try:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise line_error(
                    file, f"not a JSON object ({error.msg} at column {error.colno})", line=number
                ) from None
            if not isinstance(record, dict):
                raise line_error(
                    file, f"a JSON {type(record).__name__}, not an object", line=number
                )
            yield number, record
    except UnicodeDecodeError as error:
        raise line_error(file, f"not a UTF-8 text file ({error})", line=number + 1) from error


def _array(handle, file: str) -> Iterator[tuple[int, dict]]:
    """The elements of one JSON array, decoded one by one from buffered chunks."""
    reader = _Buffered(handle, file)
    reader.expect("[")
    if reader.peek() == "]":
        reader.advance()
    else:
        while True:
            line, value = reader.line, reader.value()
            if not isinstance(value, dict):
                raise line_error(
                    file, f"a JSON {type(value).__name__} in the array, not an object", line=line
                )
            yield line, value
            mark = reader.peek()
            reader.advance()
            if mark == "]":
                break
            if mark != ",":
                raise line_error(
                    file, f"expected ',' or ']' after a record, found {mark!r}", line=reader.line
                )
    if reader.peek(end_ok=True) is not None:
        raise line_error(file, "text after the end of the JSON array", line=reader.line)


class _Buffered:
    """A window on a text file: the unread part of the last chunks, and its line number."""

    def __init__(self, handle, file: str):
        self.handle, self.file = handle, file
        self.buffer, self.position, self.line = "", 0, 1

    def _fill(self) -> bool:
        try:
            chunk = self.handle.read(_CHUNK)
        except UnicodeDecodeError as error:
            raise line_error(
                self.file, f"not a UTF-8 text file ({error})", line=self.line
            ) from error
        self.buffer, self.position = self.buffer[self.position :] + chunk, 0
        return bool(chunk)

    def peek(self, *, end_ok: bool = False) -> str | None:
        """The next character that is not white space (consumed up to it, not past it)."""
        while True:
            start = self.position
            while self.position < len(self.buffer) and self.buffer[self.position] in _SPACE:
                self.position += 1
            self.line += self.buffer.count("\n", start, self.position)
            if self.position < len(self.buffer):
                return self.buffer[self.position]
            if not self._fill():
                if end_ok:
                    return None
                raise line_error(
                    self.file, "the JSON array is not closed (the file ends early)", line=self.line
                )

    def advance(self) -> None:
        self.position += 1

    def expect(self, mark: str) -> None:
        found = self.peek()
        if found != mark:
            raise line_error(self.file, f"expected {mark!r}, found {found!r}", line=self.line)
        self.advance()

    def value(self):
        """Decode the JSON value that starts here, reading on while it is incomplete."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.position)
            except json.JSONDecodeError as error:
                # A value cut by the end of the buffer looks malformed too: read on,
                # and only call it malformed once the file has no more to give.
                if self._fill():
                    continue
                raise line_error(
                    self.file, f"not a JSON object ({error.msg})", line=self.line
                ) from None
            self.line += self.buffer.count("\n", self.position, end)
            self.position = end
            return value
