"""The attack suite: bad input through every importer, option and entry point.

Every case feeds one kind of damage (a path, an encoding, a type, a value, an
option, a duplicate, a label, a partial write) to an entry point a user
reaches: ``rankstats import`` as the library runs it
(:func:`rankstats.io.import_files`: check the output, parse ``-O NAME=VALUE``,
import, write), each importer's ``load``, :func:`rankstats.from_records`,
:func:`rankstats.validate`, :func:`rankstats.save` and
:func:`rankstats.open_cube`. Each must end in a :class:`RankstatsError` whose
message names the problem, and leave the previous output byte for byte as it
was, with no temporary file beside it. Where the input is legitimate (a UTF-8
BOM, ``higher_is_better=no``) the case checks the cube says what it means.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankstats
from rankstats import _text
from rankstats.errors import (
    CubeError,
    MissingPathError,
    OptionError,
    OutputError,
    RankstatsError,
    ScoreValueError,
)
from rankstats.io import check_output, import_files, save
from rankstats.validation import label_problem
from rankstats_collectors.files import (
    dove,
    helm,
    inspect_ai,
    lm_eval,
    mizrahi2024,
    open_llm_leaderboard,
    opencompass,
    prompteval,
    tables,
    unitxt,
)

ROOT = Path(__file__).resolve().parent
FIXTURES = ROOT / "data" / "fixtures"
RELEASE = ROOT / "data" / "mizrahi2024"
HELM_RUN = next((FIXTURES / "helm" / "runs" / "v1").glob("*model=meta_llama-7b*=0"))
INSPECT_LOG = FIXTURES / "inspect_ai" / "log_formats.json"
DOVE_FILE = (
    FIXTURES / "dove" / "Llama-3.2-1B-Instruct" / "en" / "0_shot" / "mmlu.global_facts.parquet"
)
IMPORTERS = {
    "table": tables.load,
    "lm_eval": lm_eval.load,
    "helm": helm.load,
    "inspect_ai": inspect_ai.load,
    "dove": dove.load,
    "mizrahi2024": mizrahi2024.load,
    "opencompass": opencompass.load,
    "unitxt": unitxt.load,
    "open_llm_leaderboard": open_llm_leaderboard.load,
    "prompteval": prompteval.load,
}
FAR_FUTURE_PID = 2**22 + 12345  # above Linux's pid_max: no such process


# --- inputs: one small valid input per importer, damaged by each case ------------------------

HEADER = "model,task,template,sample,score\n"
GOOD_ROWS = "m1,t,a,s1,1\nm1,t,a,s2,0\nm2,t,a,s1,0\nm2,t,a,s2,1\n"


def table_csv(
    folder: Path,
    body: str = GOOD_ROWS,
    *,
    name: str = "scores.csv",
    header: str = HEADER,
    encoding: str = "utf-8",
) -> Path:
    path = folder / name
    path.write_bytes((header + body).encode(encoding))
    return path


def table_jsonl(folder: Path, text_lines: list[str]) -> Path:
    path = folder / "scores.jsonl"
    path.write_text("\n".join(text_lines) + "\n", encoding="utf-8")
    return path


def table_parquet(folder: Path, scores) -> Path:
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {
            "model": ["m1", "m1", "m2"],
            "task": "t",
            "template": "a",
            "sample": ["s1", "s2", "s1"],
            "score": scores,
        }
    )
    path = folder / "scores.parquet"
    frame.to_parquet(path, index=False)
    return path


LOG_DATE = "2024-05-01T10-00-00.000001"


def lm_log(folder: Path, records=None, *, task: str = "arith", raw: bytes | None = None) -> Path:
    """A folder ``org__model`` holding one per-sample log."""
    run = folder / "org__model"
    run.mkdir(exist_ok=True)
    path = run / f"samples_{task}_{LOG_DATE}.jsonl"
    if raw is None:
        records = (
            records
            if records is not None
            else [
                {"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float(i % 2)}
                for i in range(4)
            ]
        )
        raw = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(raw)
    return folder


def lm_record(doc_id, acc_text: str) -> bytes:
    """One log line with the score written as raw JSON text (``Infinity``, ``1e400``)."""
    return (
        f'{{"doc_id": {doc_id}, "filter": "none", "metrics": ["acc"], "acc": {acc_text}}}\n'
    ).encode()


def helm_run(folder: Path, edit=None, name: str = "per_instance_stats.json") -> Path:
    run = folder / HELM_RUN.name
    shutil.copytree(HELM_RUN, run)
    if edit is not None:
        path = run / name
        path.write_text(edit(path.read_text()))
    return run


def inspect_json(folder: Path, edit=None, *, name: str = "log.json") -> Path:
    log = json.loads(INSPECT_LOG.read_text())
    if edit is not None:
        edit(log)
    path = folder / name
    path.write_text(json.dumps(log))
    return path


def dove_file(folder: Path, score=None) -> Path:
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pq.read_table(DOVE_FILE)
    if score is not None:
        evaluation = table.column("evaluation").combine_chunks()
        values = evaluation.field("score").to_pylist()
        values[3] = score
        fields = {name: evaluation.field(name) for name in ("ground_truth", "evaluation_method")}
        rebuilt = pc.make_struct(
            fields["ground_truth"],
            fields["evaluation_method"],
            pa.array(values, pa.float64()),
            field_names=["ground_truth", "evaluation_method", "score"],
        )
        table = table.set_column(table.schema.get_field_index("evaluation"), "evaluation", rebuilt)
    path = folder / "mmlu.global_facts.parquet"
    pq.write_table(table, path)
    return path


def release_with(folder: Path, extra) -> Path:
    """The Mizrahi release as links to its files, with ``extra(root)`` damage added."""
    root = folder / "release"
    for path in RELEASE.rglob("*"):
        target = root / path.relative_to(RELEASE)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    extra(root)
    return root


# --- path damage, shared by every importer ---------------------------------------------------


def dangling(path: Path) -> Path:
    path.unlink(missing_ok=True)
    path.symlink_to(path.parent / "gone-away")
    return path


def looping(path: Path) -> Path:
    path.unlink(missing_ok=True)
    path.symlink_to(path)
    return path


def folder_named(path: Path) -> Path:
    path.unlink(missing_ok=True)
    path.mkdir()
    (path / "inside.txt").write_text("x")
    return path


def fifo(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


PATH_DAMAGE = {
    "a broken symbolic link": (dangling, "symbolic link to a missing file"),
    "a symbolic link loop": (looping, "symbolic link that loops"),
    "a folder": (folder_named, "a folder, not a file"),
    "a named pipe": (fifo, "not a regular file"),
}


def damage_found(name: str, make_input, file_of, options=()):
    """Cases: a file the importer finds by its name, damaged each way in PATH_DAMAGE."""
    cases = []
    for how, (damage, message) in PATH_DAMAGE.items():

        def build(folder, damage=damage):
            given = make_input(folder)
            damage(file_of(given))
            return given

        shown = file_of(Path("FOLDER")).name
        cases.append(Case(name, f"paths: {shown} is {how}", build, list(options), match=message))
    return cases


def damage_given(name: str, make_input):
    """Cases: the path given on the command line, damaged each way in PATH_DAMAGE."""

    def missing(folder):
        given = make_input(folder)
        return given.with_name("no-such-input" + given.suffix)

    cases = [Case(name, "paths: the given path does not exist", missing, match="does not exist")]
    for how, (damage, message) in PATH_DAMAGE.items():
        if how == "a folder":
            continue  # a folder is a legitimate input to the importers that read folders
        cases.append(
            Case(
                name,
                f"paths: the given path is {how}",
                lambda folder, damage=damage: damage(make_input(folder)),
                match=message,
            )
        )
    return cases


@dataclass
class Case:
    importer: str
    what: str
    build: object  # build(input_folder) -> paths
    options: list | dict = field(default_factory=list)
    match: str = ""
    error: type = RankstatsError

    @property
    def id(self) -> str:
        return f"{self.importer}: {self.what}"


def _edit_json(transform):
    def edit(text):
        return json.dumps(transform(json.loads(text)))

    return edit


def _first_mean(value):
    def transform(entries):
        entries[0]["stats"][0]["mean"] = value
        entries[0]["stats"][0].pop("sum", None)
        return entries

    return transform


def _inspect_score(value):
    def edit(log):
        log["samples"][0]["scores"]["match"]["value"] = value

    return edit


def _inspect_status(status):
    def edit(log):
        log["status"] = status

    return edit


def _latin1_log(folder):
    return lm_log(
        folder,
        raw=b'{"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1, "doc": "caf\xe9"}\n',
    )


CASES = [
    # ---- options: names, booleans, numbers, regexes, choices, mappings ----
    Case(
        "table",
        "options: unknown name",
        table_csv,
        ["lay=long"],
        r"unknown option 'lay' \(did you mean 'layout'\?\); the options are: attrs, "
        r"block_rows,",
        OptionError,
    ),
    Case(
        "table",
        "options: layout=diagonal",
        table_csv,
        ["layout=diagonal"],
        "layout='diagonal' is not allowed; layout must be one of 'long', 'wide'",
        OptionError,
    ),
    Case(
        "table",
        "options: score_kind=weird",
        table_csv,
        ["score_kind=weird"],
        "score_kind='weird' is not allowed",
        OptionError,
    ),
    *[
        Case(
            "table",
            f"options: block_rows={value}",
            table_csv,
            [f"block_rows={value}"],
            "block_rows must be a whole number of at least 1",
            OptionError,
        )
        for value in ("0", "-5", "abc", "1.5", "")
    ],
    Case(
        "table",
        "options: constants=5",
        table_csv,
        ["constants=5"],
        "constants must be a (JSON object|mapping)",
        OptionError,
    ),
    Case(
        "table",
        "options: constants on a non-key",
        table_csv,
        ['constants={"benchmark": "x"}'],
        "constants has the key 'benchmark'",
        OptionError,
    ),
    Case(
        "table",
        "options: model_columns is a broken regex",
        table_csv,
        ["layout=wide", "model_columns=(?P<model>.+"],
        "model_columns must be a regular expression",
        OptionError,
    ),
    *[
        Case(
            "table",
            f"options: higher_is_better={value}",
            table_csv,
            [f"higher_is_better={value}"],
            "higher_is_better must be true or false",
            OptionError,
        )
        for value in ("off", "maybe", "2", "", "nein")
    ],
    Case(
        "table",
        "options: non_finite=ignore",
        table_csv,
        ["non_finite=ignore"],
        "non_finite must be one of 'error', 'missing'",
        OptionError,
    ),
    Case(
        "table",
        "options: NAME without =VALUE",
        table_csv,
        ["layout"],
        "is not NAME=VALUE",
        OptionError,
    ),
    Case(
        "table",
        "options: an option given twice",
        table_csv,
        ["metric=a", "metric=b"],
        "'metric' is given twice",
        OptionError,
    ),
    Case(
        "table",
        "options: a keyword of the wrong type",
        table_csv,
        {"block_rows": 2.5},
        "block_rows=2.5 is not allowed",
        OptionError,
    ),
    Case(
        "lm_eval",
        "options: unknown name",
        lm_log,
        ["metrc=acc"],
        "did you mean 'metric'",
        OptionError,
    ),
    Case(
        "lm_eval",
        "options: aggregated=maybe",
        lm_log,
        ["aggregated=maybe"],
        "aggregated must be true or false",
        OptionError,
    ),
    Case(
        "lm_eval",
        "options: template_pattern without its groups",
        lm_log,
        ["template_pattern=(?P<task>.+)_p"],
        r"named groups \(\?P<task>...\) and "
        r"\(\?P<template>...\)",
        OptionError,
    ),
    Case(
        "lm_eval",
        "options: template_pattern is a broken regex",
        lm_log,
        ["template_pattern=(("],
        "template_pattern must be a regular expression",
        OptionError,
    ),
    Case(
        "lm_eval",
        "options: repeats=never",
        lm_log,
        ["repeats=never"],
        "repeats must be one of 'latest', 'all', 'error'",
        OptionError,
    ),
    Case("helm", "options: trials=3", helm_run, ["trials=3"], "trials must be one of", OptionError),
    Case(
        "helm",
        "options: template_args is a number",
        helm_run,
        {"template_args": 5},
        "template_args must be a list of text",
        OptionError,
    ),
    Case(
        "helm",
        "options: a metric that is not a score",
        helm_run,
        ["metric=num_output_tokens"],
        "'num_output_tokens' is not a score",
    ),
    Case(
        "inspect_ai",
        "options: epochs=3",
        inspect_json,
        ["epochs=3"],
        "epochs must be one of 'separate', 'mean'",
        OptionError,
    ),
    Case(
        "inspect_ai",
        "options: letters=5",
        inspect_json,
        ["letters=5"],
        "letters must be a (JSON object|mapping)",
        OptionError,
    ),
    Case(
        "inspect_ai",
        "options: a letter worth no number",
        inspect_json,
        ['letters={"C": "full"}'],
        r"letters\.C='full' is not allowed",
        OptionError,
    ),
    Case(
        "inspect_ai",
        "options: incomplete=sometimes",
        inspect_json,
        ["incomplete=sometimes"],
        "incomplete must be one of 'error', 'include'",
        OptionError,
    ),
    Case(
        "dove",
        "options: batch_size=0",
        dove_file,
        ["batch_size=0"],
        "batch_size must be a whole number of at least 1",
        OptionError,
    ),
    Case(
        "dove",
        "options: an unknown prompt dimension",
        dove_file,
        ['select={"tone": 1}'],
        "'tone' is not a DOVE prompt dimension",
        OptionError,
    ),
    Case(
        "mizrahi2024",
        "options: accuracies=xml",
        lambda folder: RELEASE,
        ["accuracies=xml"],
        "accuracies must be one of 'csv', 'json'",
        OptionError,
    ),
    Case(
        "mizrahi2024",
        "options: unknown name",
        lambda folder: RELEASE,
        ["copy=csv"],
        "unknown option 'copy'; the options are: accuracies",
        OptionError,
    ),
    # ---- paths: given and found inputs that cannot be read ----
    *damage_given("table", table_csv),
    *damage_found(
        "lm_eval", lm_log, lambda folder: folder / "org__model" / f"samples_arith_{LOG_DATE}.jsonl"
    ),
    *damage_found(
        "lm_eval",
        lambda folder: lm_log(lm_log(folder), task="extra"),
        lambda folder: folder / "org__model" / f"samples_extra_{LOG_DATE}.jsonl",
    ),
    *damage_found("helm", helm_run, lambda run: run / "per_instance_stats.json"),
    *damage_found(
        "helm", helm_run, lambda run: run / "instances.json", ["source=display_predictions"]
    ),
    *damage_found("helm", helm_run, lambda run: run / "run_spec.json"),
    *damage_found(
        "inspect_ai",
        lambda folder: inspect_json(folder).parent,
        lambda folder: folder / "second.json",
    ),
    *damage_found(
        "inspect_ai",
        lambda folder: inspect_json(folder).parent,
        lambda folder: folder / "third.eval",
    ),
    *damage_found(
        "dove", lambda folder: dove_file(folder).parent, lambda folder: folder / "other.parquet"
    ),
    *damage_given("inspect_ai", inspect_json),
    *damage_given("dove", dove_file),
    Case(
        "lm_eval",
        "paths: a folder without logs",
        lambda folder: folder,
        match="holds no lm-evaluation-harness files",
    ),
    Case(
        "mizrahi2024",
        "paths: a file instead of the release folder",
        lambda folder: table_csv(folder),
        match="no release folder here",
    ),
    Case(
        "mizrahi2024",
        "paths: two folders",
        lambda folder: [RELEASE, RELEASE],
        match="give the release as one folder",
    ),
    Case(
        "mizrahi2024",
        "paths: a broken link among the accuracy files",
        lambda folder: release_with(
            folder, lambda root: dangling(root / "paraphrases accuracies" / "LMentry" / "aaa.csv")
        ),
        match="aaa.csv.*symbolic link to a missing file",
    ),
    # ---- encodings and truncated files ----
    Case(
        "table",
        "encodings: Latin-1 bytes in a CSV",
        lambda folder: table_csv(folder, "m\xe9,t,a,s,1\n", encoding="latin-1"),
        match="not a readable CSV file",
    ),
    Case(
        "table",
        "encodings: a UTF-16 CSV",
        lambda folder: table_csv(folder, encoding="utf-16"),
        match="not a readable CSV file",
    ),
    Case(
        "table",
        "encodings: a truncated Parquet file",
        lambda folder: _truncate(table_parquet(folder, [1.0, 0.0, 1.0])),
        match="not a readable Parquet file",
    ),
    Case(
        "table",
        "encodings: a JSON line cut short",
        lambda folder: table_jsonl(
            folder,
            [
                '{"model": "m", "task": "t", "template": "a", "sample": "s", "score": 1}',
                '{"model": "m2", "task": "t", "templ',
            ],
        ),
        match="line 2: not a JSON object",
    ),
    Case(
        "lm_eval", "encodings: Latin-1 bytes in a log", _latin1_log, match="not a UTF-8 text file"
    ),
    Case(
        "lm_eval",
        "encodings: a log cut mid-line",
        lambda folder: lm_log(folder, raw=lm_record(0, "1") + b'{"doc_id": 1, "acc'),
        match="line 2: not a JSON object",
    ),
    Case(
        "inspect_ai",
        "encodings: a truncated .eval archive",
        lambda folder: _truncate(_eval_log(folder)),
        match="not an inspect_ai .eval log",
    ),
    Case(
        "inspect_ai",
        "encodings: Latin-1 bytes in a JSON log",
        lambda folder: _write(folder / "log.json", b'{"eval": "caf\xe9"}'),
        match="not valid JSON",
    ),
    Case(
        "dove",
        "encodings: a truncated Parquet file",
        lambda folder: _truncate(dove_file(folder)),
        match="not a .*Parquet file",
    ),
    Case(
        "helm",
        "encodings: a per-instance file that is not JSON",
        lambda folder: helm_run(folder, lambda text: text[: len(text) // 2]),
        match="not valid JSON",
    ),
    # ---- types: values of the wrong JSON type ----
    Case(
        "table",
        "types: a score that is a list",
        lambda folder: table_jsonl(
            folder, ['{"model": "m", "task": "t", "template": "a", "sample": "s", "score": [1, 0]}']
        ),
        match=r"\[1, 0\] is not a number",
    ),
    Case(
        "table",
        "types: a model that is an object",
        lambda folder: table_jsonl(
            folder,
            ['{"model": {"name": "m"}, "task": "t", "template": "a", "sample": "s", "score": 1}'],
        ),
        match="is a dict, not text or a number",
    ),
    Case(
        "table",
        "types: a score that is text",
        lambda folder: table_csv(folder, "m,t,a,s,high\n"),
        match="'high' is not a number",
    ),
    Case(
        "lm_eval",
        "types: a score that is text",
        lambda folder: lm_log(folder, raw=lm_record(0, '"yes"')),
        match="'yes' is not a number",
    ),
    Case(
        "lm_eval",
        "types: a doc_id that is text",
        lambda folder: lm_log(folder, [{"doc_id": "x", "acc": 1.0}]),
        match="'x' is not a whole number",
    ),
    Case(
        "helm",
        "types: stats that are not a list",
        lambda folder: helm_run(folder, _edit_json(lambda e: [{**e[0], "stats": {}}])),
        match="'stats' is not a list",
    ),
    Case(
        "inspect_ai",
        "types: a score value that is a list",
        lambda folder: inspect_json(folder, _inspect_score([1, 0])),
        match="is a list, not one score",
    ),
    # ---- values: infinite, out of range, runs that did not complete ----
    *[
        Case(
            "table",
            f"values: score {text} in a CSV",
            lambda folder, text=text: table_csv(folder, f"m,t,a,s,{text}\n"),
            match=f"the score '{text}' is not a finite number",
        )
        for text in ("inf", "-inf", "1e400", "Infinity")
    ],
    Case(
        "table",
        "values: JSON Infinity",
        lambda folder: table_jsonl(
            folder,
            ['{"model": "m", "task": "t", "template": "a", "sample": "s", "score": Infinity}'],
        ),
        match="the score inf is not a finite number",
    ),
    Case(
        "table",
        "values: an infinite Parquet score",
        lambda folder: table_parquet(folder, [1.0, np.inf, 0.0]),
        match="the score inf is not a finite number",
    ),
    Case(
        "table",
        "values: a stray 1.5 in a binary cube",
        lambda folder: table_csv(folder, GOOD_ROWS + "m3,t,a,s1,1.5\n"),
        ["score_kind=binary"],
        match=r"row 5, column 'score': the score 1.5 is not 0 or 1",
    ),
    Case(
        "table",
        "values: a -1 in a proportion cube",
        lambda folder: table_csv(folder, GOOD_ROWS + "m3,t,a,s1,-1\n"),
        ["score_kind=proportion"],
        match=r"row 5.*the score -1 is not in \[0, 1\]",
    ),
    *[
        Case(
            "lm_eval",
            f"values: acc {text}",
            lambda folder, text=text: lm_log(folder, raw=lm_record(0, "1") + lm_record(1, text)),
            match="line 2, field 'acc': inf is not a finite number",
        )
        for text in ("Infinity", "1e400")
    ],
    Case(
        "lm_eval",
        "values: a 0.5 in a binary cube",
        lambda folder: lm_log(folder, raw=lm_record(0, "1") + lm_record(1, "0.5")),
        ["score_kind=binary"],
        match="line 2, field 'acc': the score 0.5 is not 0 or 1",
    ),
    Case(
        "helm",
        "values: an infinite mean",
        lambda folder: helm_run(folder, _edit_json(_first_mean(float("inf")))),
        match=r"row 1, column 'stats\[0\]\.mean'.*not a finite number",
    ),
    # a NaN mean is a missing score, skipped and counted as by every importer
    # (tests/test_attacks_importers.py), not an error
    Case(
        "inspect_ai",
        "values: an infinite score",
        lambda folder: inspect_json(folder, _inspect_score("1e400")),
        match="not a finite number",
    ),
    *[
        Case(
            "inspect_ai",
            f"values: a run with status {status!r}",
            lambda folder, status=status: inspect_json(folder, _inspect_status(status)),
            match=f"the run did not complete \\(status '{status}'",
        )
        for status in ("cancelled", "error", "started")
    ],
    Case(
        "dove",
        "values: an infinite score",
        lambda folder: dove_file(folder, score=float("inf")),
        match="the score inf is not a finite number",
    ),
    # ---- duplicates: one key, two scores ----
    Case(
        "table",
        "duplicates: one key twice with two scores",
        lambda folder: table_csv(folder, GOOD_ROWS + "m1,t,a,s1,0\n"),
        match="appears twice with different scores",
    ),
    Case(
        "table",
        "duplicates: sample 0 and sample '0'",
        lambda folder: table_jsonl(
            folder,
            [
                '{"model": "m", "task": "t", "template": "a", "sample": 0, "score": 1}',
                '{"model": "m", "task": "t", "template": "a", "sample": "0", "score": 0}',
            ],
        ),
        match=r"sample='0'\) appears twice with different scores",
    ),
    Case(
        "table",
        "duplicates: model 1 and model '1'",
        lambda folder: table_jsonl(
            folder,
            [
                '{"model": 1, "task": "t", "template": "a", "sample": "s", "score": 1}',
                '{"model": "1", "task": "t", "template": "a", "sample": "s", "score": 0}',
            ],
        ),
        match="appears twice with different scores",
    ),
    Case(
        "lm_eval",
        "duplicates: a document logged twice with two scores",
        lambda folder: lm_log(folder, raw=lm_record(0, "1") + lm_record(0, "0")),
        match="doc_id 0 is logged twice with different scores",
    ),
    Case(
        "inspect_ai",
        "duplicates: a sample logged twice with two scores",
        lambda folder: inspect_json(
            folder,
            lambda log: log["samples"].append(
                {**log["samples"][0], "scores": {"match": {"value": "C"}}}
            ),
        ),
        match="logged more than once with different scores",
    ),
    # ---- labels: control characters, empty labels ----
    *[
        Case(
            "table",
            f"labels: {where} holds {shown}",
            lambda folder, body=body: table_jsonl(folder, [body]),
            match="holds the control character|not valid Unicode",
        )
        for where, shown, body in (
            (
                "a model",
                "NUL",
                '{"model": "m0\\u0000", "task": "t", "template": "a", "sample": "s", "score": 1}',
            ),
            (
                "a task",
                "a newline",
                '{"model": "m", "task": "t\\n2", "template": "a", "sample": "s", "score": 1}',
            ),
            (
                "a template",
                "a tab",
                '{"model": "m", "task": "t", "template": "a\\tb", "sample": "s", "score": 1}',
            ),
            (
                "a sample",
                "a C1 control",
                '{"model": "m", "task": "t", "template": "a", "sample": "s\\u0085x", "score": 1}',
            ),
            (
                "a model",
                "a lone surrogate",
                '{"model": "m\\ud800", "task": "t", "template": "a", "sample": "s", "score": 1}',
            ),
        )
    ],
    Case(
        "table",
        "labels: NUL in a CSV cell",
        lambda folder: table_csv(folder, "m\x000,t,a,s,1\nm0,t,a,s,0\n"),
        match=r"row 1, column 'model': the label 'm\\x000' holds the control character",
    ),
    Case(
        "table",
        "labels: a model column named with a control character",
        lambda folder: table_csv(folder, "t,a,1\n", header="task,template,m\x01x\n"),
        ["layout=wide", "sample=null"],
        match="the model 'm\\\\x01x' holds the control",
    ),
    Case(
        "table",
        "labels: an empty template",
        lambda folder: table_csv(folder, "m,t,  ,s,1\n"),
        match="empty: every row needs",
    ),
    Case(
        "lm_eval",
        "labels: a task named with a control character",
        lambda folder: lm_log(folder, task="ar\x01ith"),
        match="holds the control character",
    ),
]


# ---- the importers of OpenCompass, unitxt, Open LLM Leaderboard details and PromptEval ----


def oc_out(folder: Path, correct=True, *, model: str = "m", dataset: str = "d") -> Path:
    """An OpenCompass work dir: results/<model>/<dataset>.json with details."""
    results = folder / "20240101_000000" / "results" / model
    results.mkdir(parents=True, exist_ok=True)
    details = [{"example_abbr": f"{dataset}_{i}", "correct": [bool(i % 2)]} for i in range(3)]
    details[0]["correct"] = correct
    (results / f"{dataset}.json").write_text(json.dumps({"score": 50.0, "details": details}))
    return folder


def oc_file(folder: Path) -> Path:
    return folder / "20240101_000000" / "results" / "m" / "d.json"


def ux_samples(folder: Path, score=1.0, *, subset: str = "card=c,template=t") -> Path:
    """A unitxt <timestamp>_samples.json with one subset of three instances."""
    instances = [{"score": float(i % 2), "score_name": "accuracy"} for i in range(3)]
    instances[0]["score"] = score
    path = folder / "2024-01-01T00-00-00_samples.json"
    text = json.dumps(
        {"environment_info": {"parsed_arguments": {"model": "m"}}, "samples": {subset: instances}}
    )
    path.write_text(text.replace('"__INF__"', "Infinity"))
    return path


def oll_file(folder: Path, acc=(1.0, 0.0, 1.0), *, name: str = "org__m") -> Path:
    """An Open LLM Leaderboard details file: samples_<task>_<date>.parquet."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    run = folder / name
    run.mkdir(exist_ok=True)
    path = run / f"samples_arith_{LOG_DATE}.parquet"
    pq.write_table(
        pa.table(
            {
                "doc_id": list(range(len(acc))),
                "filter": ["none"] * len(acc),
                "metrics": [["acc"]] * len(acc),
                "acc": list(acc),
            }
        ),
        path,
    )
    return path


def pe_file(folder: Path, value=1.0) -> Path:
    """A PromptEval array Y[prompt, example] of one model."""
    path = folder / "m.npy"
    np.save(path, np.array([[value, 0.0, 1.0], [1.0, 1.0, 0.0]]))
    return path


CASES += [
    Case(
        "opencompass",
        "options: runs=never",
        oc_out,
        ["runs=never"],
        "runs must be one of 'error', 'latest'",
        OptionError,
    ),
    Case(
        "unitxt",
        "options: aggregated=maybe",
        ux_samples,
        ["aggregated=maybe"],
        "aggregated must be true or false",
        OptionError,
    ),
    Case(
        "open_llm_leaderboard",
        "options: batch_size=0",
        oll_file,
        ["batch_size=0"],
        "batch_size must be a whole number of at least 1",
        OptionError,
    ),
    Case(
        "prompteval",
        "options: unknown name",
        pe_file,
        ["templatez=x"],
        "did you mean 'templates'",
        OptionError,
    ),
    *damage_found("opencompass", oc_out, oc_file),
    *damage_found(
        "unitxt",
        lambda folder: ux_samples(folder).parent,
        lambda folder: folder / "2024-01-01T00-00-00_samples.json",
    ),
    *damage_found(
        "open_llm_leaderboard",
        lambda folder: oll_file(folder).parent,
        lambda folder: folder / f"samples_arith_{LOG_DATE}.parquet",
    ),
    *damage_given("unitxt", ux_samples),
    *damage_given("open_llm_leaderboard", oll_file),
    *damage_given("prompteval", pe_file),
    Case(
        "opencompass",
        "encodings: a results file cut short",
        lambda folder: (_truncate(oc_file(oc_out(folder))), folder)[1],
        match="not an OpenCompass results file: not valid JSON",
    ),
    Case(
        "unitxt",
        "encodings: Latin-1 bytes",
        lambda folder: _write(folder / "x_samples.json", b'{"samples": "caf\xe9"}'),
        match="not unitxt output: not valid JSON",
    ),
    Case(
        "open_llm_leaderboard",
        "encodings: a truncated Parquet file",
        lambda folder: _truncate(oll_file(folder)),
        match="not a Parquet file",
    ),
    Case(
        "prompteval",
        "encodings: a truncated .npy file",
        lambda folder: _truncate(pe_file(folder)),
        match="not a NumPy .npy or .npz file",
    ),
    Case(
        "prompteval",
        "encodings: a pickle",
        lambda folder: _write(folder / "Ys.pickle", b"\x80\x04N."),
        match="a pickle: loading one runs the code it holds",
    ),
    Case(
        "opencompass",
        "types: a correctness that is an object",
        lambda folder: oc_out(folder, correct={"yes": 1}),
        match="is not a number",
    ),
    Case(
        "unitxt",
        "types: a score that is text",
        lambda folder: ux_samples(folder, score="high"),
        match="'high' is not a number",
    ),
    Case(
        "open_llm_leaderboard",
        "types: a corpus-level metric",
        lambda folder: oll_file(folder, acc=("[1, 0]", "[0, 0]", "[1, 1]")),
        match="row 1, column 'acc': the score '\\[1, 0\\]' is not a number",
    ),
    Case(
        "prompteval",
        "types: an array of text",
        lambda folder: (np.save(folder / "t.npy", np.array([["a", "b"]])), folder / "t.npy")[1],
        match="the array holds <U1, not numbers",
    ),
    Case(
        "opencompass",
        "values: an infinite score",
        lambda folder: oc_out(folder, correct=float("inf")),
        match="not a finite number",
    ),
    Case(
        "unitxt",
        "values: JSON Infinity",
        lambda folder: ux_samples(folder, score="__INF__"),
        match="row 1, column 'samples.card=c,template=t.score'.*not a finite number",
    ),
    Case(
        "open_llm_leaderboard",
        "values: an infinite score",
        lambda folder: oll_file(folder, acc=(1.0, float("inf"), 0.0)),
        match="row 2, column 'acc': the score inf is not a finite number",
    ),
    Case(
        "prompteval",
        "values: an infinite score",
        lambda folder: pe_file(folder, value=float("inf")),
        match=r"the score at \(model, prompt, example\) \(0, 0, 0\) is not a finite",
    ),
    Case(
        "prompteval",
        "values: a 0.5 in a binary cube",
        lambda folder: pe_file(folder, value=0.5),
        ["score_kind=binary"],
        match="the score 0.5 is not 0 or 1",
    ),
    Case(
        "opencompass",
        "labels: a model named with a control character",
        lambda folder: oc_out(folder, model="m\x01"),
        match="holds the control character",
    ),
    Case(
        "unitxt",
        "labels: a subset named with a control character",
        lambda folder: ux_samples(folder, subset="card=c\x01,template=t"),
        match="holds the control character",
    ),
    Case(
        "open_llm_leaderboard",
        "labels: a model named with a control character",
        lambda folder: oll_file(folder, name="org__m\x01"),
        match="holds the control",
    ),
]


@pytest.mark.parametrize(
    "name, build",
    [
        ("opencompass", lambda folder: oc_out(folder, correct=float("inf"))),
        ("unitxt", lambda folder: ux_samples(folder, score="__INF__")),
        ("open_llm_leaderboard", lambda folder: oll_file(folder, acc=(1.0, float("inf"), 0.0))),
        ("prompteval", lambda folder: pe_file(folder, value=float("inf"))),
    ],
)
def test_new_importers_read_infinite_scores_as_missing_only_when_asked(tmp_path, name, build):
    with pytest.raises(RankstatsError, match="not a finite number"):
        IMPORTERS[name](build(tmp_path))
    cube = IMPORTERS[name](build(tmp_path), non_finite="missing")
    assert (
        "1 × a score that is not a finite number, read as missing" in cube.attrs["import_summary"]
    )
    assert not np.isinf(cube.score.values).any()


def _truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _eval_log(folder: Path) -> Path:
    path = folder / "log.eval"
    log = json.loads(INSPECT_LOG.read_text())
    samples = log.pop("samples")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(log))
        for sample in samples:
            archive.writestr(
                f"samples/{sample['id']}_epoch_{sample['epoch']}.json",
                json.dumps(sample) + " " * 4000,
            )
    return path


# --- the previous output, and what must stay of it -------------------------------------------


@pytest.fixture(scope="module")
def previous_bytes(tmp_path_factory) -> bytes:
    cube = rankstats.from_records(
        [
            {"model": m, "task": "t", "template": "a", "sample": s, "score": float((i + j) % 2)}
            for i, m in enumerate(("x", "y"))
            for j, s in enumerate("pq")
        ],
        metric="acc",
        source="previous run",
    )
    path = save(cube, tmp_path_factory.mktemp("previous") / "cube.nc")
    return path.read_bytes()


@pytest.fixture
def output(tmp_path, previous_bytes) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    path = folder / "cube.nc"
    path.write_bytes(previous_bytes)
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "cube.nc")


def assert_untouched(output: Path, previous: bytes) -> None:
    assert output.read_bytes() == previous
    assert leftovers(output.parent) == []


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_refused_and_the_previous_output_kept(case, tmp_path, output, previous_bytes):
    inputs = tmp_path / "in"
    inputs.mkdir()
    paths = case.build(inputs)
    with pytest.raises(case.error, match=case.match) as error:
        import_files(
            IMPORTERS[case.importer], paths, output, options=case.options, importer=case.importer
        )
    assert isinstance(error.value, RankstatsError)
    assert_untouched(output, previous_bytes)


def test_every_importer_declares_its_options_as_its_signature_does():
    import inspect

    for name, load in IMPORTERS.items():
        parameters = inspect.signature(load).parameters
        taken = {p for p, spec in parameters.items() if spec.kind is spec.KEYWORD_ONLY}
        assert set(load.options) == taken, name
        with pytest.raises(OptionError, match=f"{name}: unknown option 'nonsense'"):
            load("unused", nonsense=1)


# --- legitimate inputs: a correct cube, and a summary that says what was done ----------------


@pytest.mark.parametrize(
    "text, expected",
    [("no", 0), ("No", 0), ("FALSE", 0), ("0", 0), ("yes", 1), ("True", 1), ("1", 1)],
)
def test_higher_is_better_text_means_what_it_says(tmp_path, output, text, expected):
    cube = import_files(
        tables.load,
        table_csv(tmp_path),
        output,
        options=[f"higher_is_better={text}"],
        importer="table",
    )
    assert cube.attrs["higher_is_better"] == expected
    assert rankstats.open_cube(output).attrs["higher_is_better"] == expected


def test_from_records_reads_text_booleans_and_refuses_others():
    records = [{"model": "m", "task": "t", "template": "a", "score": 0.5}]
    assert rankstats.from_records(records, higher_is_better="no").attrs["higher_is_better"] == 0
    for value in ("off", "maybe", 2, None):
        with pytest.raises(OptionError, match="higher_is_better must be true or false"):
            rankstats.from_records(records, higher_is_better=value)


def test_a_utf8_bom_is_read_as_text(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + GOOD_ROWS).encode())
    assert tables.load(path).model.values.tolist() == ["m1", "m2"]


def test_infinite_scores_become_missing_only_when_asked(tmp_path):
    path = table_csv(tmp_path, GOOD_ROWS + "m3,t,a,s1,inf\n")
    cube = tables.load(path, non_finite="missing")
    summary = cube.attrs["import_summary"]
    assert "1 × a score that is not a finite number, read as missing" in summary
    assert cube.model.values.tolist() == ["m1", "m2"]


def test_an_inferred_kind_is_said_with_what_would_change_it(tmp_path):
    cube = tables.load(table_csv(tmp_path, GOOD_ROWS + "m3,t,a,s1,1.5\n"))
    assert cube.attrs["score_kind"] == "continuous"
    assert (
        "score_kind 'continuous' was inferred from the values (1 of 5 scores lie outside "
        "[0, 1] (e.g. 1.5); the other 4 are 0 or 1); pass score_kind=binary or "
        "proportion to set it"
    ) in cube.attrs["import_summary"]


def test_a_constant_zero_metric_is_not_called_binary(tmp_path):
    cube = tables.load(table_csv(tmp_path, "m1,t,a,s1,0\nm2,t,a,s1,0\n"))
    assert cube.attrs["score_kind"] == "continuous"
    assert "all 2 scores are 0, which fits any kind" in cube.attrs["import_summary"]


def test_aggregated_scores_are_never_inferred_binary(tmp_path):
    path = table_csv(tmp_path, "m1,t,a,1\nm2,t,a,0\n", header="model,task,template,score\n")
    assert tables.load(path, sample=None).attrs["score_kind"] == "proportion"


def test_an_incomplete_inspect_run_is_imported_only_when_asked(tmp_path):
    log = inspect_json(tmp_path, _inspect_status("cancelled"))
    cube = inspect_ai.load(log, incomplete="include")
    assert "the run did not complete (status 'cancelled')" in cube.attrs["import_summary"]


# --- outputs: refused before any work, previous output kept ----------------------------------


def test_an_output_that_is_an_input_is_refused(tmp_path):
    path = table_csv(tmp_path)
    before = path.read_bytes()
    with pytest.raises(OutputError, match="is also an input"):
        import_files(tables.load, path, path, importer="table")
    assert path.read_bytes() == before
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    with pytest.raises(OutputError, match=r"is also an input|symbolic link"):
        import_files(tables.load, path, link, importer="table")
    assert path.read_bytes() == before


def test_output_checks(tmp_path, output, previous_bytes):
    source = table_csv(tmp_path)
    with pytest.raises(MissingPathError, match=r"the folder .* does not exist"):
        import_files(tables.load, source, tmp_path / "nowhere" / "cube.nc")
    with pytest.raises(OutputError, match="is a folder, not a file"):
        import_files(tables.load, source, output.parent)
    store = tmp_path / "notastore.zarr"
    store.mkdir()
    (store / "keep.txt").write_text("mine")
    with pytest.raises(OutputError, match="not a zarr store"):
        check_output(store)
    assert (store / "keep.txt").read_text() == "mine"
    output.chmod(0o444)
    with pytest.raises(OutputError, match="write-protected; pass force"):
        import_files(tables.load, source, output)
    assert_untouched(output, previous_bytes)
    cube = import_files(tables.load, source, output, force=True)
    assert rankstats.open_cube(output).model.values.tolist() == cube.model.values.tolist()


def test_a_linked_output_is_refused_unless_forced(tmp_path, output, previous_bytes):
    link = output.parent / "link.nc"
    link.symlink_to(output)
    with pytest.raises(OutputError, match="is a symbolic link"):
        import_files(tables.load, table_csv(tmp_path), link)
    assert_untouched_but(link, output, previous_bytes)
    import_files(tables.load, table_csv(tmp_path), link, force=True)
    assert not link.is_symlink() and output.read_bytes() == previous_bytes


def assert_untouched_but(link: Path, output: Path, previous: bytes) -> None:
    assert link.is_symlink() and output.read_bytes() == previous
    assert sorted(p.name for p in output.parent.iterdir()) == ["cube.nc", "link.nc"]


# --- partial writes: a failed write keeps the old file; a killed one is cleaned up -----------


def test_a_write_that_fails_midway_keeps_the_previous_output(
    tmp_path, output, previous_bytes, monkeypatch
):
    original = xr.Dataset.to_netcdf

    def fail_midway(self, path, *args, **kwargs):
        original(self, path, *args, **kwargs)
        with open(path, "r+b") as handle:
            handle.truncate(64)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", fail_midway)
    with pytest.raises(OSError, match="No space left"):
        import_files(tables.load, table_csv(tmp_path), output)
    assert_untouched(output, previous_bytes)


def test_stale_temporary_files_of_killed_runs_are_removed_by_the_next_write(tmp_path, output):
    folder = output.parent
    stale = [
        folder / ".cube.nc.k3j4h5g6.part",  # a run killed before process ids were kept
        folder / f".cube.nc.{FAR_FUTURE_PID}-x7y8z9.part",
    ]
    stale_store = folder / f".cube.nc.{FAR_FUTURE_PID}-abc.part"
    live = folder / f".cube.nc.{os.getpid()}-live.part"  # a write of this process, in flight
    other = folder / ".other.nc.k3j4h5g6.part"  # another output's
    for path in [*stale, live, other]:
        path.write_bytes(b"partial")
    stale_store.mkdir()
    (stale_store / ".zgroup").write_text("{}")
    import_files(tables.load, table_csv(tmp_path), output)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["cube.nc", live.name, other.name])


def test_a_store_set_aside_by_a_killed_zarr_write_is_put_back(tmp_path):
    pytest.importorskip("zarr")
    cube = tables.load(table_csv(tmp_path))
    store = tmp_path / "cube.zarr"
    save(cube, store)
    previous = tmp_path / ".cube.zarr.previous"
    os.replace(store, previous)  # killed between moving the old store aside and the new in
    from rankstats.io import remove_stale_temporaries

    remove_stale_temporaries(store)
    assert rankstats.open_cube(store).model.values.tolist() == ["m1", "m2"]
    assert not previous.exists()


# --- entry points beyond the importers --------------------------------------------------------


def test_validate_refuses_attributes_of_the_wrong_type():
    cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 1.0}])
    for name, value, message in (
        ("score_kind", np.array(["binary", "x"]), "attribute score_kind=array"),
        ("score_kind", ["binary"], r"attribute score_kind=\['binary'\]"),
        ("higher_is_better", "no", "attribute higher_is_better='no' is not 0 or 1"),
        ("higher_is_better", np.array([1, 0]), "attribute higher_is_better=array"),
    ):
        broken = cube.copy()
        broken.attrs[name] = value
        with pytest.raises(CubeError, match=message):
            rankstats.validate(broken)


def test_validate_refuses_labels_that_collide_as_text_or_hold_control_characters():
    cube = rankstats.from_records(
        [
            {"model": "m", "task": "t", "template": "a", "score": 1.0},
            {"model": "n", "task": "t", "template": "a", "score": 0.0},
        ]
    )
    mixed = cube.assign_coords(model=np.array([1, "1"], dtype=object))
    with pytest.raises(CubeError, match="repeats the label"):
        rankstats.validate(mixed)
    hidden = cube.assign_coords(model=np.array(["m0", "m0\x00"], dtype=object))
    with pytest.raises(CubeError, match=r"the label 'm0\\x00' holds the control character"):
        rankstats.validate(hidden)
    ids = cube.template_id.values.copy()
    ids[0, 0] = "a\nb"
    with pytest.raises(CubeError, match="template_id: the label 'a\\\\nb'"):
        rankstats.validate(cube.assign_coords(template_id=(("task", "template"), ids)))


def test_mixed_number_and_text_labels_are_saved_as_text(tmp_path):
    cube = rankstats.from_records(
        [
            {"model": "m", "task": "t", "template": "a", "score": 1.0},
            {"model": "n", "task": "t", "template": "a", "score": 0.0},
        ]
    )
    mixed = cube.assign_coords(model=np.array([1, "2"], dtype=object))
    path = save(mixed, tmp_path / "mixed.nc")
    assert rankstats.open_cube(path).model.values.tolist() == ["1", "2"]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "is not a readable netcdf cube"),
        (b"CDF\x01" + b"\x00" * 10, "no 'score' variable"),
        (b"\x89HDF\r\n\x1a\n" + b"\xff" * 40, "is not a readable netcdf cube"),
    ],
)
def test_open_cube_refuses_damaged_files(tmp_path, content, message):
    path = tmp_path / "cube.nc"
    path.write_bytes(content)
    with pytest.raises(RankstatsError, match=message):
        rankstats.open_cube(path)


def test_open_cube_names_a_broken_link(tmp_path):
    link = tmp_path / "cube.nc"
    link.symlink_to(tmp_path / "gone.nc")
    with pytest.raises(MissingPathError, match="a symbolic link to a missing file"):
        rankstats.open_cube(link)


def test_save_refuses_a_bad_format_before_writing(tmp_path, output, previous_bytes):
    cube = rankstats.open_cube(output)
    with pytest.raises(OptionError, match="format must be one of 'netcdf', 'zarr'"):
        save(cube, output, format="hdf")
    with pytest.raises(OptionError, match="float_dtype must be one of"):
        save(cube, output, float_dtype="float16")
    assert_untouched(output, previous_bytes)


# --- hypothesis: whole classes of input ------------------------------------------------------

LABEL = st.text(min_size=1, max_size=6)
FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FAST
@given(st.lists(LABEL, min_size=1, max_size=3, unique=True))
def test_a_label_is_refused_or_survives_a_save_exactly(tmp_path, labels):
    records = [{"model": label, "task": "t", "template": "a", "score": 0.5} for label in labels]
    problems = [label_problem(label) for label in labels]
    if any(problems):
        with pytest.raises(CubeError, match="the model label"):
            rankstats.from_records(records)
        return
    cube = rankstats.from_records(records)
    path = save(cube, tmp_path / "labels.nc", force=True)
    assert rankstats.open_cube(path).model.values.tolist() == labels


@FAST
@given(
    st.lists(
        st.one_of(
            st.integers(-3, 3),
            st.text("0123", min_size=1, max_size=2),
            st.sampled_from([0.0, 1.0, 2.5]),
        ),
        min_size=2,
        max_size=5,
    )
)
def test_numbers_and_their_text_are_one_label(samples):
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": s, "score": 1.0} for s in samples
    ]
    texts = [rankstats.cube.label_text(s) for s in samples]
    if len(set(texts)) < len(texts):
        with pytest.raises(rankstats.DuplicateKeyError):
            rankstats.from_records(records)
    else:
        cube = rankstats.from_records(records)
        assert cube.sample_id.values[0].tolist() == texts


@FAST
@given(st.text(max_size=8))
def test_a_boolean_option_is_one_of_six_words_or_refused(text):
    word = text.strip().lower()
    if word in _text.TRUE + _text.FALSE:
        assert _text.boolean("f", "flag", text) is (word in _text.TRUE)
    else:
        with pytest.raises(OptionError, match="flag must be true or false"):
            _text.boolean("f", "flag", text)


@FAST
@given(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), st.text(max_size=10))
def test_an_unknown_option_name_is_refused_with_the_known_ones(name, value):
    known = tables.load.options
    if name in known:
        try:
            _text.parse_options([f"{name}={value}"], known, function="table")
        except OptionError as error:
            assert name in str(error)
        return
    with pytest.raises(OptionError, match="the options are: attrs, block_rows"):
        _text.parse_options([f"{name}={value}"], known, function="table")


@FAST
@given(
    st.lists(
        st.one_of(st.sampled_from([0.0, 1.0]), st.floats(allow_nan=True, allow_infinity=True)),
        min_size=1,
        max_size=6,
    )
)
def test_scores_are_finite_or_refused_and_the_kind_follows_the_values(scores):
    records = [
        {"model": "m", "task": "t", "template": "a", "sample": i, "score": s}
        for i, s in enumerate(scores)
    ]
    values = np.array(scores)
    if np.isinf(values).any():
        with pytest.raises(ScoreValueError, match="infinite"):
            rankstats.from_records(records)
        return
    kind = rankstats.from_records(records).attrs["score_kind"]
    seen = set(values[~np.isnan(values)].tolist())
    assert (kind == "binary") == (seen == {0.0, 1.0})
    if kind == "proportion":
        assert all(0 <= v <= 1 for v in seen)


def test_infinite_scores_are_refused_by_validation_too(tmp_path):
    cube = rankstats.from_records([{"model": "m", "task": "t", "template": "a", "score": 2.0}])
    cube["score"][:] = np.inf
    with pytest.raises(ScoreValueError, match=r"1 score\(s\) infinite .*model='m'"):
        rankstats.validate(cube)
    with pytest.raises(ScoreValueError, match="infinite"):
        save(cube, tmp_path / "cube.nc")
    assert list(tmp_path.iterdir()) == []


def test_attribute_readers_refuse_what_validation_refuses():
    from rankstats.validation import higher_is_better_of, score_kind_of

    cube = rankstats.from_records(
        [{"model": "m", "task": "t", "template": "a", "score": 1.0}], higher_is_better="false"
    )
    assert higher_is_better_of(cube) is False and score_kind_of(cube) == "continuous"
    for name, value in (("higher_is_better", "false"), ("score_kind", np.array(["binary"]))):
        broken = cube.copy()
        broken.attrs[name] = value
        reader = higher_is_better_of if name == "higher_is_better" else score_kind_of
        with pytest.raises(CubeError, match=f"attribute {name}="):
            reader(broken)


@pytest.mark.parametrize("name", sorted(IMPORTERS))
@pytest.mark.parametrize(
    "paths", [None, 5, [b"bytes.csv"], [{"path": "x"}]], ids=["None", "a number", "bytes", "a dict"]
)
def test_paths_of_the_wrong_type_are_refused(tmp_path, output, previous_bytes, name, paths):
    with pytest.raises(
        rankstats.errors.InputTypeError,
        match=r"a path is text or an "
        r"os\.PathLike",
    ):
        import_files(IMPORTERS[name], paths, output, importer=name)
    assert_untouched(output, previous_bytes)
