r"""A content-addressed, append-only, crash-safe store of model responses.

Each record is stored under the SHA-256 of everything that changes the
model's output (collector, model id and revision, decoding settings, the
rendered prompt), so a run restarted with the same arguments finds what it
already computed and requests nothing twice, while any change of settings
gets a fresh key.

The store is one JSON Lines file: one ``{"key": ..., "record": ...}`` object
a line, appended and flushed to disk as each record completes. A run killed
mid-write loses at most the record in flight: a torn last line is ignored
(and cut off) when the file is written again.

One process writes a cache at a time: it holds a lock on the file while it
writes (:meth:`ResponseCache.locked`, taken by every :meth:`~ResponseCache.put`
and by a collector for its whole run), and a second process that wants to
write the same cache meanwhile is refused with :class:`CacheBusyError` (or
waits, up to ``lock_timeout`` seconds). Taking the lock reads what other
processes wrote since, so two runs one after the other never ask twice.

Examples
--------
>>> import tempfile, pathlib
>>> from rankstats_collectors.cache import ResponseCache
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
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from rankstats.errors import InputTypeError, RankstatsError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks; one writer is on the user
    fcntl = None

__all__ = ["CacheBusyError", "CacheError", "ResponseCache"]


class CacheError(RankstatsError, ValueError):
    """The cache file is damaged somewhere other than its last line."""


class CacheBusyError(RankstatsError, RuntimeError):
    """Another process is writing the cache."""


# locks this process holds: flock locks belong to an open file, so a second open of the same
# cache in this process must share the first one's instead of waiting for itself
_HELD: dict[str, list] = {}
_GUARD = threading.Lock()
_POLL = 0.05


def _canonical(value) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


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
    lock_timeout : float, default 0
        Seconds to wait for another process that is writing the cache before
        :class:`CacheBusyError`; 0 refuses at once.

    Notes
    -----
    Records are kept in memory too; the file is read when the cache is
    opened, and what other processes appended since is read whenever this
    one takes the lock. A key written twice keeps its last record. One
    process writes a cache at a time (see :meth:`locked`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats_collectors.cache import ResponseCache
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

    def __init__(self, path, *, fsync: bool = True, lock_timeout: float = 0.0):
        self.path = Path(path)
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self._records: dict[str, dict] = {}
        self._offset = 0  # bytes of whole lines read so far
        self._lines = 0  # lines read so far (for messages)
        if self.path.exists():
            self._load(cut=False)

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
        >>> from rankstats_collectors.cache import ResponseCache
        >>> ResponseCache.key({"a": 1})
        '015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862'
        """
        if not isinstance(parts, Mapping):
            raise InputTypeError(f"a cache key is made from a mapping, not {type(parts).__name__}")
        try:
            text = _canonical(dict(parts))
        except (TypeError, ValueError) as error:
            raise InputTypeError(f"cannot make a cache key from {parts!r}: {error}") from None
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _load(self, *, cut: bool) -> None:
        """Read the lines appended since the last read; ``cut`` a torn tail (lock held)."""
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < self._offset:  # replaced or cut by someone else: read it all again
                    self._records, self._offset, self._lines = {}, 0, 0
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return
        except OSError as error:
            raise CacheError(
                f"{str(self.path)!r}: the cache cannot be read ({error.strerror or error})"
            ) from None
        complete = data.rfind(b"\n") + 1  # bytes up to the end of the last whole line
        lines = data[:complete].split(b"\n")[:-1]
        for number, line in enumerate(lines, start=self._lines + 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, record = entry["key"], entry["record"]
                if not isinstance(key, str) or not isinstance(record, dict):
                    raise InputTypeError("the key is not a string or the record not an object")
            except (ValueError, KeyError, TypeError) as error:
                if number == self._lines + len(lines) and complete == len(data):
                    complete -= len(line) + 1  # a damaged last line: the record in flight
                    break
                raise CacheError(
                    f"{str(self.path)!r}, line {number}: not a cache record "
                    f"({error}); the file is damaged"
                ) from None
            self._records[key] = record
        self._lines += data[:complete].count(b"\n")
        self._offset += complete
        if cut and complete < len(data):
            # Cut the torn tail so that the next record starts on a line of its own.
            with open(self.path, "r+b") as handle:
                handle.truncate(self._offset)

    @contextmanager
    def locked(self, *, timeout: float | None = None) -> Iterator[ResponseCache]:
        """Hold the cache for this process, having read what others wrote meanwhile.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait for another process that holds it; default
            ``lock_timeout``.

        Raises
        ------
        CacheBusyError
            Another process still holds the cache after ``timeout`` seconds.

        Notes
        -----
        The lock is an advisory ``flock`` on the cache file, released when
        the block ends or the process dies; it is taken again, without
        waiting, by the same process (another :class:`ResponseCache` of the
        same file included). Where ``fcntl`` does not exist (Windows) nothing
        is locked.
        """
        key = str(self.path.absolute().resolve())
        wait = self.lock_timeout if timeout is None else timeout
        with _GUARD:
            held = _HELD.get(key)
            if held is not None:
                held[1] += 1
        if held is None:
            held = [self._acquire(wait), 1]
            with _GUARD:
                _HELD[key] = held
        try:
            self._load(cut=True)
            yield self
        finally:
            with _GUARD:
                held[1] -= 1
                if held[1] == 0:
                    del _HELD[key]
                    if held[0] is not None:
                        held[0].close()  # closing the file releases its lock

    def _acquire(self, wait: float):
        if fcntl is None:  # pragma: no cover - Windows
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "ab")  # held until the lock is released
        deadline = time.monotonic() + max(0.0, float(wait))
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.close()
                    waited = f" (waited {wait:g} s)" if wait else ""
                    raise CacheBusyError(
                        f"the cache {str(self.path)!r} is being written by another process"
                        f"{waited}; two runs sharing a cache would send every request twice. "
                        "Wait for the other run to finish, or give this run its own cache"
                    ) from None
                time.sleep(_POLL)

    def get(self, key: str) -> dict | None:
        """The record stored under ``key``, or None."""
        record = self._records.get(key)
        return None if record is None else dict(record)

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` (a JSON-serialisable dict) under ``key``, on disk at once."""
        if not isinstance(record, dict):
            raise InputTypeError(f"a cache record is a dict, not {type(record).__name__}")
        line = json.dumps({"key": key, "record": record}, ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        with self.locked():
            # One write of one whole line, so a crash tears at most this line.
            with open(self.path, "ab") as handle:
                handle.write(data)
                handle.flush()
                if self.fsync:
                    os.fsync(handle.fileno())
            self._offset += len(data)
            self._lines += 1
        self._records[key] = json.loads(line)["record"]

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, {len(self)} records)"
