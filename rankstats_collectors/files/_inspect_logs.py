"""Reading inspect_ai evaluation logs with the standard library: ``.eval`` archives and ``.json``.

A ``.eval`` log is a zip archive: ``header.json`` (the eval spec, results and
stats; ``_journal/start.json`` while a run is still going) and one
``samples/<id>_epoch_<n>.json`` per sample and epoch, read one at a time. A
``.json`` log is one object with the same header fields and a ``samples``
list.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import file_error
from ._paths import files_in, readable_file

_SAMPLE_MEMBER = re.compile(r"samples/(.+)_epoch_(\d+)\.json")


@dataclass
class Log:
    """One log: where it is, its ``eval`` spec, ``results`` and ``status``."""

    path: Path
    eval: dict
    results: dict
    status: str

    @property
    def name(self) -> str:
        """The file as shown in messages."""
        return str(self.path)


def log_files(paths) -> list[Path]:
    """The log files named by ``paths``; a folder stands for its ``.eval`` and ``.json`` logs."""
    return files_in(paths, (".eval", ".json"))


def read(path: Path) -> tuple[Log, Iterator[tuple[str, int | None, dict]]]:
    """The log's header and an iterator of ``(where, row, sample)`` over its samples."""
    readable_file(path)
    if path.suffix == ".eval" or zipfile.is_zipfile(path):
        return _read_eval(path)
    return _read_json(path)


def _header(data, name: str, row=None) -> Log | None:
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise file_error(name, "not an inspect_ai log: no 'eval' object", row=row, column="eval")
    spec = data["eval"]
    for field in ("task", "model"):
        value = spec.get(field)
        if value is None:
            raise file_error(
                name, f"the log's eval spec has no {field!r}", row=row, column=f"eval.{field}"
            )
        if not isinstance(value, str):
            # inspect_ai writes both as text ("openai/gpt-4o"): a number here was not
            # written by it, and is refused rather than read as a name
            raise file_error(
                name,
                f"the {field} is {value!r} (of type {type(value).__name__}), not "
                f"text: inspect_ai names the {field} with text such as "
                f"{'openai/gpt-4o' if field == 'model' else 'mmlu'!r}",
                row=row,
                column=f"eval.{field}",
            )
    results = data.get("results") or {}
    return Log(Path(name), spec, results, str(data.get("status", "")))


def _read_eval(path: Path):
    name = str(path)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise file_error(name, "not an inspect_ai .eval log (not a zip archive)") from None
    except OSError as error:
        raise file_error(name, f"cannot be read ({error.strerror or error})") from None
    members = archive.namelist()
    head = next((m for m in ("header.json", "_journal/start.json") if m in members), None)
    if head is None:
        archive.close()
        raise file_error(
            name,
            "not an inspect_ai .eval log: it holds neither header.json nor _journal/start.json",
        )
    log = _header(_json(archive, head, name), f"{name}:{head}")
    log.path = path
    samples = sorted((m for m in members if _SAMPLE_MEMBER.fullmatch(m)), key=_natural)
    if not samples:
        archive.close()
        raise file_error(name, "the log holds no samples (was it written with log_samples=False?)")

    def iterate():
        with archive:
            for member in samples:
                yield f"{name}:{member}", None, _json(archive, member, name)

    return log, iterate()


_ZSTANDARD = 93  # the zip compression method of Zstandard, which inspect_ai 0.3.1xx+ writes


def _json(archive: zipfile.ZipFile, member: str, name: str):
    try:
        data = archive.read(member)
    except NotImplementedError:
        data = _zstandard(archive, member, name)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise file_error(f"{name}:{member}", f"the archive is damaged ({error})") from None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise file_error(f"{name}:{member}", f"not valid JSON ({error})") from None


def _zstandard(archive: zipfile.ZipFile, member: str, name: str) -> bytes:
    """A member compressed with a method this Python's zipfile lacks: Zstandard, if it can.

    Python reads Zstandard zip members from 3.14 on; before, the ``zstandard``
    package decompresses them when it is installed.
    """
    info = archive.getinfo(member)
    if info.compress_type != _ZSTANDARD:
        raise file_error(
            f"{name}:{member}",
            f"compressed with zip method {info.compress_type}, which cannot be read",
        )
    try:
        import zstandard
    except ImportError:
        raise file_error(
            name,
            "the .eval log's members are compressed with Zstandard (as "
            "inspect_ai writes them), which Python reads only from 3.14: "
            "pip install zstandard, or convert the log with `inspect log "
            "convert --to json`",
        ) from None
    with open(archive.filename, "rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
        if header[:4] != b"PK\x03\x04":
            raise file_error(f"{name}:{member}", "the archive is damaged (no local header)")
        skip = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
        handle.seek(skip, 1)
        raw = handle.read(info.compress_size)
    try:
        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=info.file_size)
    except zstandard.ZstdError as error:
        raise file_error(f"{name}:{member}", f"the archive is damaged ({error})") from None


def _read_json(path: Path):
    name = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise file_error(name, f"not an inspect_ai log: not valid JSON ({error})") from None
    except OSError as error:
        raise file_error(name, f"cannot be read ({error.strerror or error})") from None
    log = _header(data, name)
    samples = data.get("samples")
    if not isinstance(samples, list) or not samples:
        raise file_error(
            name,
            "the log holds no samples (was it written with log_samples=False?)",
            column="samples",
        )

    def iterate():
        for index, sample in enumerate(samples):
            yield name, index + 1, sample

    return log, iterate()


def _natural(member: str):
    match = _SAMPLE_MEMBER.fullmatch(member)
    sample, epoch = match.group(1), int(match.group(2))
    return (0, int(sample), "", epoch) if sample.isdigit() else (1, 0, sample, epoch)
