r"""A content-addressed, append-only, crash-safe store of model responses.

Each record is stored under the SHA-256 of everything that changes the
model's output (collector, model id and revision, decoding settings, the
rendered prompt), so a run restarted with the same arguments finds what it
already computed and requests nothing twice, while any change of settings
gets a fresh key.

The store is one JSON Lines file: one ``{"key": ..., "record": ...}`` object
a line, appended and flushed to disk as each record completes. A run killed
mid-write loses at most the record in flight: a torn last line is ignored
(and cut off) when the file is opened again.

Examples
--------
>>> import tempfile, pathlib
>>> from collectors.cache import ResponseCache
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> cache = ResponseCache(folder / "responses.jsonl")
>>> key = ResponseCache.key({"model": "gpt2", "prompt": "Q: 2+2?\nA:", "max_new_tokens": 5})
>>> cache.put(key, {"response": " 4"})
>>> ResponseCache(folder / "responses.jsonl").get(key)
{'response': ' 4'}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from rankstats.errors import RankstatsError

__all__ = ["CacheError", "ResponseCache"]


class CacheError(RankstatsError, ValueError):
    """The cache file is damaged somewhere other than its last line."""


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


class ResponseCache:
    """Responses stored on disk under content-addressed keys.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON Lines file; created (with its folder) on the first
        :meth:`put`.
    fsync : bool, default True
        Force each record to disk as it is written (``os.fsync``), so a
        machine crash, not only a killed process, loses at most the record
        in flight.

    Notes
    -----
    Records are kept in memory too; the file is read once, when the cache is
    opened. A key written twice keeps its last record. One process should
    write a cache at a time.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from collectors.cache import ResponseCache
    >>> cache = ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "cache.jsonl")
    >>> key = ResponseCache.key({"prompt": "Hi", "model": "m"})
    >>> key == ResponseCache.key({"model": "m", "prompt": "Hi"})
    True
    >>> key in cache, len(cache)
    (False, 0)
    >>> cache.put(key, {"response": "Hello", "tokens": 2})
    >>> key in cache, len(cache), cache.get(key)["tokens"]
    (True, 1, 2)
    """

    def __init__(self, path, *, fsync: bool = True):
        self.path = Path(path)
        self.fsync = fsync
        self._records: dict[str, dict] = {}
        if self.path.exists():
            self._load()

    @staticmethod
    def key(parts: Mapping) -> str:
        """The SHA-256 (hex) of ``parts`` as canonical JSON (sorted keys, no spaces).

        Pass everything that changes the output and never a secret: the key
        is stored in the file.

        Raises
        ------
        TypeError
            ``parts`` is not a mapping, or holds something JSON cannot
            represent exactly (NaN, sets, arbitrary objects).

        Examples
        --------
        >>> from collectors.cache import ResponseCache
        >>> ResponseCache.key({"a": 1})
        '015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862'
        """
        if not isinstance(parts, Mapping):
            raise TypeError(f"a cache key is made from a mapping, not {type(parts).__name__}")
        try:
            text = _canonical(dict(parts))
        except (TypeError, ValueError) as error:
            raise TypeError(f"cannot make a cache key from {parts!r}: {error}") from None
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _load(self) -> None:
        data = self.path.read_bytes()
        complete = data.rfind(b"\n") + 1  # bytes up to the end of the last whole line
        lines = data[:complete].split(b"\n")[:-1]
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, record = entry["key"], entry["record"]
                if not isinstance(key, str) or not isinstance(record, dict):
                    raise TypeError("the key is not a string or the record not an object")
            except (ValueError, KeyError, TypeError) as error:
                if number == len(lines) and complete == len(data):
                    complete -= len(line) + 1  # a damaged last line: the record in flight
                    break
                raise CacheError(f"{str(self.path)!r}, line {number}: not a cache record "
                                 f"({error}); the file is damaged") from None
            self._records[key] = record
        if complete < len(data):
            # Cut the torn tail so that the next record starts on a line of its own.
            with open(self.path, "r+b") as handle:
                handle.truncate(complete)

    def get(self, key: str) -> dict | None:
        """The record stored under ``key``, or None."""
        record = self._records.get(key)
        return None if record is None else dict(record)

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` (a JSON-serialisable dict) under ``key``, on disk at once."""
        if not isinstance(record, dict):
            raise TypeError(f"a cache record is a dict, not {type(record).__name__}")
        line = json.dumps({"key": key, "record": record}, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One write of one whole line, so a crash tears at most this line.
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            if self.fsync:
                os.fsync(handle.fileno())
        self._records[key] = json.loads(line)["record"]

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, {len(self)} records)"
