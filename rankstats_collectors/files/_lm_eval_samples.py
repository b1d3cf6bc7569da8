"""One per-sample log read into compact arrays: document ids, scores, lines and hashes.

A log record holds the document (``doc``), its id (``doc_id``), the prompt
and responses, the filter the responses went through (``filter``, absent
before 0.4.5: one filter, ``"none"``), the names of the metrics
(``metrics``, absent in older logs) and one field per metric. A task with
several filters logs each document once per filter.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from rankstats.validation import label_problem

from ._lm_eval_read import count_records, line_error, records
from ._scored_rows import NAN_SCORE, NOT_FINITE

# Fields of a log record that are never metrics (older logs do not list their metrics).
NOT_METRICS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
_SHOWN = 80


@dataclass
class Log:
    """The rows one log contributes, and the rows it skipped with their reasons."""

    file: str
    task: str
    date: str | None
    metric: str | None
    filter: str | None
    doc_id: np.ndarray
    score: np.ndarray
    line: np.ndarray
    hashes: np.ndarray | None
    skipped: Counter = field(default_factory=Counter)

    @property
    def rows(self) -> int:
        return len(self.doc_id)


def read_log(source, *, metric: str | None, filter_: str | None, non_finite: str = "error") -> Log:
    """Read the log ``source`` (a :class:`SamplesFile`) for ``metric`` under ``filter_``.

    A log that does not record ``metric`` at all, or holds no record under
    ``filter_``, comes back with no rows and every record counted as skipped,
    so a folder of mixed tasks imports the tasks that have them. A NaN score
    is skipped as missing; an infinite one (JSON ``Infinity``, ``1e400``) is
    an error, or with ``non_finite="missing"`` skipped as missing too.
    """
    file = source.file
    doc_ids, scores, lines = array("q"), array("d"), array("q")
    hash_bytes, hash_ends = bytearray(), array("q")
    skipped: Counter = Counter()
    chosen, filters, has_hash = None, set(), None
    for number, record in records(source.path, file):
        if chosen is None:
            chosen = _choose_metric(record, metric, file, number)
            if chosen is None:
                reason = (
                    f"task {source.task!r} does not log the metric {metric!r} "
                    f"(it logs {', '.join(metrics_of(record))})"
                )
                skipped[reason] += count_records(source.path, file)
                return Log(
                    file,
                    source.task,
                    source.date,
                    None,
                    None,
                    np.zeros(0, np.int64),
                    np.zeros(0),
                    np.zeros(0, np.int64),
                    None,
                    skipped,
                )
        used = record.get("filter", "none")
        if not isinstance(used, str):
            raise line_error(file, f"{used!r} is not a filter name", line=number, field="filter")
        if filter_ is not None and used != filter_:
            skipped[f"responses under the filter {used!r}, not the chosen {filter_!r}"] += 1
            continue
        filters.add(used)
        if len(filters) > 1:
            raise line_error(
                file,
                f"the log holds several filters ({', '.join(map(repr, sorted(filters)))}): "
                "it logs every document once per filter, and their scores must not be "
                "mixed; choose one with filter=NAME",
                line=number,
                field="filter",
            )
        doc_id = record.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, int):
            problem = "missing" if doc_id is None else f"{doc_id!r} is not a whole number"
            raise line_error(file, problem, line=number, field="doc_id")
        value = _score(record, chosen, file, number, doc_id)
        if math.isnan(value):
            skipped[NAN_SCORE] += 1
            continue
        if math.isinf(value):
            if non_finite != "missing":
                raise line_error(
                    file,
                    f"{record[chosen]!r} is not a finite number (pass "
                    "non_finite=missing to read such scores as missing)",
                    line=number,
                    field=chosen,
                )
            skipped[NOT_FINITE] += 1
            continue
        doc_hash = record.get("doc_hash")
        if has_hash is None:
            has_hash = doc_hash is not None
        if has_hash:
            if not isinstance(doc_hash, str):
                raise line_error(
                    file,
                    "missing, or not a string, while the first record has one",
                    line=number,
                    field="doc_hash",
                )
            problem = label_problem(doc_hash)
            if problem:
                raise line_error(
                    file, f"the label {doc_hash!r} {problem}", line=number, field="doc_hash"
                )
            hash_bytes += doc_hash.encode()
            hash_ends.append(len(hash_bytes))
        doc_ids.append(doc_id)
        scores.append(value)
        lines.append(number)
    if chosen is None:
        raise line_error(file, "the log holds no records")
    if not doc_ids:
        # every record was skipped (under another filter, or NaN), and counted above
        return Log(
            file,
            source.task,
            source.date,
            chosen,
            filter_,
            np.zeros(0, np.int64),
            np.zeros(0),
            np.zeros(0, np.int64),
            None,
            skipped,
        )
    hashes = _split(hash_bytes, hash_ends) if has_hash else None
    log = Log(
        file,
        source.task,
        source.date,
        chosen,
        next(iter(filters), filter_),
        np.frombuffer(doc_ids, np.int64),
        np.frombuffer(scores, np.float64),
        np.frombuffer(lines, np.int64),
        hashes,
        skipped,
    )
    return _without_repeats(log)


def metrics_of(record: dict) -> list[str]:
    listed = record.get("metrics")
    if isinstance(listed, list) and all(isinstance(name, str) for name in listed):
        return listed
    return [key for key in record if key not in NOT_METRICS]


def _choose_metric(record: dict, metric: str | None, file: str, line: int) -> str | None:
    available = metrics_of(record)
    if metric is not None:
        return metric if metric in available else None
    if len(available) == 1:
        return available[0]
    shown = ", ".join(map(repr, available)) or "none"
    raise line_error(
        file,
        f"the log records several metrics ({shown}): choose one with metric=NAME",
        line=line,
        field="metrics",
    )


def _score(record: dict, metric: str, file: str, line: int, doc_id: int) -> float:
    if metric not in record:
        logged = ", ".join(repr(key) for key in record if key not in NOT_METRICS) or "none"
        raise line_error(
            file,
            f"the sample doc_id {doc_id} does not log the metric {metric!r} "
            f"(its scores: {logged}), though the log's first record does",
            line=line,
            field=metric,
        )
    value = record[metric]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, dict)):
        shown = repr(value)
        shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."
        raise line_error(
            file,
            f"{metric!r} is a corpus-level metric: each sample logs {shown} (the "
            "[gold, pred] items its aggregation computes the score from), not a score. "
            "Choose a per-sample metric with metric=NAME, or import the aggregate the "
            "results file reports with aggregated=true",
            line=line,
            field=metric,
        )
    raise line_error(file, f"{value!r} is not a number", line=line, field=metric)


def _split(joined: bytearray, ends: array) -> np.ndarray:
    """The strings packed end to end in ``joined``, as an object array."""
    stops = np.frombuffer(ends, np.int64).tolist()
    starts = [0, *stops[:-1]]
    return np.array(
        [joined[a:b].decode() for a, b in zip(starts, stops, strict=True)], dtype=object
    )


def _without_repeats(log: Log) -> Log:
    """Drop documents logged twice with one score; raise where the scores differ."""
    order = np.argsort(log.doc_id, kind="stable")
    ids, scores = log.doc_id[order], log.score[order]
    repeat = np.flatnonzero(ids[1:] == ids[:-1]) + 1
    if repeat.size == 0:
        return log
    differ = repeat[scores[repeat] != scores[repeat - 1]]
    if differ.size:
        at = int(differ[0])
        first, second = int(log.line[order[at - 1]]), int(log.line[order[at]])
        raise line_error(
            log.file,
            f"doc_id {int(ids[at])} is logged twice with different scores: "
            f"{scores[at - 1]:g} at line {first} and {scores[at]:g} at line {second}",
            line=second,
            field=log.metric,
        )
    keep = np.ones(log.rows, dtype=bool)
    keep[order[repeat]] = False
    log.skipped["a document logged twice with the same score"] += int(repeat.size)
    log.doc_id, log.score, log.line = log.doc_id[keep], log.score[keep], log.line[keep]
    if log.hashes is not None:
        log.hashes = log.hashes[keep]
    return log
