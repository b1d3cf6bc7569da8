"""The table lm-evaluation-harness prints at the end of a run, read as a results file.

``lm_eval`` prints (and ``--output_path`` does not save) a Markdown table of
the reported aggregates, after a line naming the model and its arguments::

    hf (pretrained=org/name), gen_kwargs: (None), limit: None, num_fewshot: None, batch_size: 1
    |    Tasks    |Version|Filter|n-shot|Metric|   |Value|   |Stderr|
    |-------------|------:|------|-----:|------|---|----:|---|-----:|
    |tiny_prompt_1|      1|none  |     0|acc   |↑  |0.125|±  |0.1250|

A task with several metrics or filters continues on rows whose ``Tasks``
cell is empty; the tasks of a group are indented under it (`` - name``) and
read as tasks; the groups named in the table of groups (``|Groups|...``)
that follows are aggregates of tasks, skipped as in results files. The 0.3
series printed the same table without the ``Filter`` and ``n-shot`` columns
nor the arrow, and named the first column ``Task``. Every table of tasks in a
file is read.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from ._lm_eval_read import line_error
from ._lm_eval_results import Results
from ._paths import readable_file

LAYOUT_TABLE = (
    "an lm-evaluation-harness console table (|Tasks|Version|Filter|n-shot|Metric|...|Value|...)"
)
SUFFIXES = (".md", ".txt", ".log")
_HEADER = re.compile(r"^\|\s*(Tasks?|Groups)\s*\|", re.IGNORECASE)
_MODEL = re.compile(r"""(?:pretrained|model|engine)['"]?\s*[=:]\s*['"]?([^,'"\s)}]+)""")


def is_table_file(path: Path) -> bool:
    """Whether ``path`` is named as a console table lm-evaluation-harness printed."""
    return path.suffix.lower() in SUFFIXES


def read_table(path: Path, file: str) -> Results:
    """The console table(s) in ``path`` as a :class:`Results` (no date, no configurations).

    Each task's entry maps ``"<metric>,<filter>"`` to the value printed, and
    :attr:`Results.columns` keeps every cell of the row it came from.
    """
    readable_file(path, file)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise line_error(file, f"not a UTF-8 text file ({error})") from None
    except OSError as error:
        raise line_error(file, f"cannot be read ({error.strerror or error})") from None
    results: dict[str, dict] = {}
    columns: dict[str, dict] = {}
    better: dict[str, dict] = {}
    groups: set[str] = set()
    in_groups = False
    model = None
    header = None
    task = None
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            header = None
            continue
        found = _HEADER.match(text)
        if found:
            in_groups = found.group(1).lower() == "groups"
            # 0.3 named the first column "Task"; the groups' table names it "Groups"
            header = [cell.strip() for cell in _cells(text)]
            header = ["Tasks", *header[1:]]
            for needed in ("Tasks", "Metric", "Value"):
                if needed not in header:
                    raise line_error(
                        file,
                        f"the table has no {needed!r} column ({LAYOUT_TABLE} expected)",
                        line=number,
                    )
            task = None
            model = model or _model(lines[: number - 1])
            continue
        if header is None or not text.startswith("|"):
            header = None  # the table ended (or none began: a Groups table is not read)
            continue
        cells = [cell.strip() for cell in _cells(text)]
        if set("".join(cells)) <= set("-: "):
            continue  # the alignment row
        if len(cells) != len(header):
            raise line_error(
                file,
                f"the row has {len(cells)} cells, the header {len(header)} ({LAYOUT_TABLE})",
                line=number,
            )
        row = dict(zip(header, cells, strict=True))
        name = row["Tasks"].lstrip(" -").strip()
        if in_groups:
            if name:
                groups.add(name)  # its row in the tasks' table is an aggregate of tasks
            continue
        if name:
            task = name  # a group's task (" - name") is a task like any other
        if task is None:
            raise line_error(
                file,
                "a row continues no task (its Tasks cell is empty and no "
                f"row above names one; {LAYOUT_TABLE})",
                line=number,
            )
        metric = row["Metric"]
        if not metric:
            continue
        filter_ = row.get("Filter") or "none"
        value = _number(row["Value"], file, number)
        entry = results.setdefault(task, {})
        key = f"{metric},{filter_}"
        if key in entry and entry[key] != value:
            raise line_error(
                file,
                f"task {task!r} prints {metric!r} under the filter "
                f"{filter_!r} twice with different values ({entry[key]!r}, "
                f"{value!r})",
                line=number,
            )
        entry[key] = value
        stderr = (row.get("Stderr") or "").strip()
        if stderr:
            # kept as printed ("N/A" included): the importer decides what a missing one is
            entry[f"{metric}_stderr,{filter_}"] = _stderr(stderr)
        columns.setdefault(task, {})[key] = {**row, "Tasks": task, "_line": number}
        arrow = next((c for c in cells if c in ("↑", "↓")), None)
        if arrow is not None:
            better.setdefault(task, {})[metric] = arrow == "↑"
    if not results:
        raise line_error(
            file,
            "not lm-evaluation-harness output: no table whose header is "
            "|Tasks|Version|Filter|n-shot|Metric|...|Value|... with rows",
        )
    return Results(path, file, None, model, results, groups, better, {}, LAYOUT_TABLE, columns)


def _cells(text: str) -> list[str]:
    inner = text.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return inner.split("|")


def _stderr(text: str):
    """A printed standard error as a float, or the text itself when it is none ("N/A")."""
    try:
        return float(text)
    except ValueError:
        return text


def _number(text: str, file: str, line: int) -> float:
    if text.strip().upper() == "N/A":
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise line_error(
            file, f"the value {text!r} is not a number ({LAYOUT_TABLE})", line=line, field="Value"
        ) from None
    return value


def _model(before: list[str]) -> str | None:
    """The model the line above the table names (``hf (pretrained=org/name), ...``)."""
    for line in reversed(before):
        text = line.strip()
        if not text:
            continue
        _, _, rest = text.partition("(")
        match = _MODEL.search(rest)
        if match:
            return match.group(1)
        inside = rest.split(")", 1)[0]
        if inside.startswith("{"):
            try:
                arguments = ast.literal_eval(inside)
            except (ValueError, SyntaxError):
                return None
            if isinstance(arguments, dict) and arguments.get("pretrained"):
                return str(arguments["pretrained"])
        return None
    return None
