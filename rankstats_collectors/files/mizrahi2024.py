"""Importer of the released data of Mizrahi et al. (2024), "State of What Art?".

Mizrahi, Kaplan, Malkin, Dror, Shahaf and Stanovsky, "State of What Art? A
Call for Multi-Prompt LLM Evaluation", TACL 2024. The release
(github.com/SLAB-NLP/Multi-Prompt-LLM-Evaluation, folder ``data/``;
CDLA-Permissive-2.0) holds, for 25 tasks of LMentry and BIG-bench
Hard (BBH) and 16 open-source models (11 of them on BBH):

- ``paraphrases accuracies/<benchmark>/<task>.csv``: one row per template
  (``paraphrase idx``), one ``<model>_acc`` column per model;
- ``paraphrases accuracies and rankings (aggregated)/<benchmark>/<task>.json``:
  the same accuracies with each template's text, method, correctness flag
  and the models' ranks;
- ``automatic paraphrases/<benchmark>/<task>.csv``: template texts and
  metadata (original-template flag, method, language style, correctness,
  format, length, number of samples);
- ``metric results/``: the published MaxP, AvgP and CPS (open-source models)
  and estimated MaxP and AvgP of four OpenAI models.

:func:`load` turns it into a cube, :func:`load_metric_results` reads the
published metrics, :func:`cross_check` lists where the redundant copies
disagree, and ``python -m rankstats_collectors.files.mizrahi2024 build-datasets SRC
OUTDIR`` writes the example files packaged in :mod:`rankstats.datasets`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import xarray as xr

import rankstats
from rankstats import _text
from rankstats.errors import RankstatsError
from rankstats.reproduce._audit import summarize as summarize_audit

from ._mizrahi2024_checks import METHOD_ALIASES, RANK_TIES
from ._mizrahi2024_checks import cross_check as _cross_check
from ._mizrahi2024_files import PARAPHRASES, Release
from ._mizrahi2024_metrics import metric_results
from ._mizrahi2024_release import (
    COPIES,
    long_meta,
    long_scores,
    read_copy,
    read_meta,
    require_same_models,
    require_same_tasks,
    require_same_templates,
)
from ._mizrahi2024_write import LICENSE_TEXT, write_datasets
from ._scored_rows import NAN_SCORE
from ._summary import ImportSummary

__all__ = [
    "LICENSE_TEXT",
    "METHOD_ALIASES",
    "RANK_TIES",
    "build_datasets",
    "cross_check",
    "load",
    "load_metric_results",
    "main",
]

REFERENCE = (
    "Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., & Stanovsky, G. "
    "(2024). State of What Art? A Call for Multi-Prompt LLM Evaluation. "
    "Transactions of the ACL 12, 933-949. arXiv:2401.00595"
)
URL = "https://github.com/SLAB-NLP/Multi-Prompt-LLM-Evaluation (folder data/)"
LICENSE = "CDLA-Permissive-2.0"
_TEMPLATE_COLUMNS = {
    "text": "template_text",
    "is_original": "template_is_original",
    "method": "template_method",
    "valid": "template_valid",
    "samples": "template_samples",
    "language_style": "template_language_style",
    "format": "template_format",
    "length": "template_length",
}
_VALID_RULE = (
    "template_valid is the manual 'correct' flag; 1 is True, 0 is False, and the one "
    "flag written '0?' (logical_deduction_seven_objects, template 65) counts as 0"
)


OPTIONS = {"accuracies": _text.choice(*COPIES), "audit": _text.boolean}
"""The options of :func:`load` and their parsers (``-O NAME=VALUE`` of ``rankstats import``)."""


@_text.takes_options("mizrahi2024", OPTIONS)
def load(paths, *, accuracies: str = "csv", audit: bool = True) -> xr.Dataset:
    """Read the release, as published, into a cube of per-template accuracies.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of one of them
        The release folder: the one holding ``paraphrases accuracies``,
        ``automatic paraphrases`` and (for ``accuracies="json"``)
        ``paraphrases accuracies and rankings (aggregated)``.
    accuracies : {"csv", "json"}, default "csv"
        Which copy of the accuracies to read: the per-template accuracy CSVs
        or the aggregated JSONs. The two differ (see :func:`cross_check`).
    audit : bool, default True
        Also compare every redundant copy of the release (:func:`cross_check`,
        a few seconds): ``import_summary`` then counts the accuracies read,
        kept and skipped, and each kind of contradiction with its first
        examples, and ``release_audit`` holds every one of them as CSV text.

    Returns
    -------
    xarray.Dataset
        ``score(model, task, template)``: accuracies in [0, 1] (``score_kind``
        ``"proportion"``); ``template_id`` is the template's number in the
        release (``"1"``, ``"2"``, ...). Coordinates: ``benchmark(task)``
        (``LMentry``, ``BBH``) and, per ``(task, template)``,
        ``template_text``, ``template_is_original`` (``default prompt``),
        ``template_method``, ``template_valid`` (the manual ``correct``
        flag), ``template_samples`` (the stated number of samples),
        ``template_language_style``, ``template_format`` and
        ``template_length``. Attributes name the release, the copy read
        (``accuracies``), the reference and the licence.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is missing or malformed, or the files disagree on the tasks,
        templates or models they hold; the message names the file, row and
        column.

    Notes
    -----
    With ``accuracies="json"`` the template text, method and ``correct`` flag
    come from the JSON too; the other template attributes always come from
    ``automatic paraphrases``. Models keep the names of the CSV columns
    (without ``_acc``), in the order the files first list them, LMentry
    first. A model never run on a task (5 of the 16 on BBH) has only missing
    scores there: structure, not missing data, to rankstats. A NaN accuracy
    (``nan`` in a CSV) is a missing score, skipped and counted in
    ``import_summary``, as by every importer.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import mizrahi2024
    >>> release = Path(mizrahi2024.__file__).parents[2] / "tests" / "data" / "mizrahi2024"
    >>> cube = mizrahi2024.load(release)
    >>> dict(cube.score.sizes)
    {'model': 16, 'task': 25, 'template': 265}
    >>> float(cube.score.sel(model="flan-t5-xl", task="snarks")[0])
    0.69
    >>> cube.score.sel(task="snarks").notnull().any("template").sum().item()
    11
    >>> cube.template_method.sel(task="snarks").values[:3].tolist()
    ['default', 'rephrase', 'rephrase']
    """
    release = Release(paths)
    scores, meta = read_copy(release, accuracies), read_meta(release)
    require_same_tasks(release, scores, COPIES[accuracies][0], meta)
    for key, (path, table, own, _) in scores.items():
        meta_path, paraphrases = meta[key]
        require_same_templates(release, path, table, meta_path, paraphrases)
        if own is not None:
            meta[key] = (
                meta_path,
                paraphrases.assign(text=own["text"], method=own["method"], valid=own["valid"]),
            )
    require_same_models(release, scores)
    templates = long_meta(meta, release).rename(columns=_TEMPLATE_COLUMNS)
    records = (
        long_scores(scores, release)
        .rename(columns={"value": "score"})
        .merge(
            templates[["task", "template", *_TEMPLATE_COLUMNS.values()]],
            on=["task", "template"],
            how="left",
            validate="many_to_one",
        )
        .drop(columns="file")
    )
    # a NaN accuracy is a missing score, skipped and counted as by every importer
    cells = len(records)
    records = records[records["score"].notna()].reset_index(drop=True)
    folder = COPIES[accuracies][0]
    cube = rankstats.from_records(
        records,
        score_kind="proportion",
        metric="accuracy",
        source=f"Mizrahi et al. (2024) release: '{folder}' with '{PARAPHRASES}'",
        task_attrs=["benchmark"],
        template_attrs=list(_TEMPLATE_COLUMNS.values()),
    )
    cube.attrs.update(
        accuracies=accuracies,
        reference=REFERENCE,
        url=URL,
        license=LICENSE,
        template_valid_rule=_VALID_RULE,
    )
    if audit:
        found = _cross_check(release)
        # every cell of the accuracy files is a number or NaN (an empty or other cell
        # stops the import): each one read is kept or skipped as missing
        counts = ImportSummary(
            "mizrahi2024", [release.shown(path) for path, *_ in scores.values()], unit="cell"
        )
        counts.keep(len(records))
        counts.skip(NAN_SCORE, cells - len(records))
        cube.attrs["import_summary"] = (
            counts.text(cube) + "\n" + summarize_audit(found) + "\nThe full list is in the "
            "cube's attribute 'release_audit' (CSV text; also `rankstats reproduce mizrahi2024 "
            "--audit PATH.csv`)."
        )
        cube.attrs["release_audit"] = found.to_csv(index=False)
    return cube


def cross_check(paths) -> pd.DataFrame:
    """Compare every redundant copy in the release; one row per disagreement.

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of one of them
        The release folder.

    Returns
    -------
    pandas.DataFrame
        Columns ``check``, ``file``, ``other_file`` (paths inside the
        release), ``task``, ``model``, ``template`` (the template number;
        missing where the check is not about one template), ``value`` (what
        ``file`` holds) and ``other_value`` (what ``other_file`` holds). No
        rows: every copy agrees.

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A file is malformed on its own (see :func:`load`).

    Notes
    -----
    The checks (``check``):

    - ``tasks``: a task has a file in one of the three task folders and not
      in another. ``templates``: a template number one file holds and the
      other file of the same task lacks (accuracy CSV, JSON, paraphrase CSV,
      pairwise). ``models``: a model in one task's accuracy CSV and not its
      JSON (or the reverse), or missing from one file of a benchmark while
      another file of it holds the model.
    - ``accuracy``: the accuracy CSV and the JSON ``accs`` differ by more
      than 1e-9.
    - ``template_text``, ``method``, ``valid``: the JSON ``template``,
      ``method`` and ``correct`` against the paraphrase CSV's ``prompt
      template``, ``method`` and ``correct`` (``"0?"`` counts as 0, and
      ``value`` shows the cell as written). The two files name two methods
      differently: ``meta_cot`` is the JSON's ``cot`` and ``meta_desc`` its
      ``gradual`` (:data:`METHOD_ALIASES`); ``method`` compares the labels
      through that mapping, and ``method_name`` lists each renamed pair once
      per task. ``original``: the paraphrase CSV's ``default prompt`` flag
      disagrees with the JSON's method being ``"default"``.
    - ``rank``: the JSON ``ranks`` against ranks recomputed from the JSON
      ``accs`` per template, highest accuracy first, ties by ``"min"``
      (:data:`RANK_TIES`, competition ranking: tied models share the best
      rank of their group). That is the method the release used: it
      reproduces every published rank, while ``"average"``, ``"max"``,
      ``"dense"`` and ``"ordinal"`` each miss thousands.
    - ``samples``: an accuracy (of the CSV or the JSON copy) times the
      template's stated number of samples is not a whole number (within
      1e-6).
    - ``maxp_none``, ``avgp_none``, ``maxp_correct``, ``avgp_correct``:
      MaxP and AvgP recomputed from each accuracy copy, over every template
      or over those marked correct in the paraphrase CSV, against the
      published ``metric results`` (more than 1e-9 apart), when the release
      folder holds them. CPS is not recomputed.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import mizrahi2024
    >>> release = Path(mizrahi2024.__file__).parents[2] / "tests" / "data" / "mizrahi2024"
    >>> found = mizrahi2024.cross_check(release)
    >>> found.groupby("check").size().to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'accuracy': 964, 'avgp_correct': 4, 'avgp_none': 4, 'maxp_correct': 4,
     'maxp_none': 4, 'method_name': 50, 'samples': 4534, 'valid': 1}
    >>> found[found.check == "valid"][["task", "template", "value", "other_value"]]
    ... # doctest: +NORMALIZE_WHITESPACE
                                     task  template value other_value
    ...  logical_deduction_seven_objects        65    0?        True
    """
    return _cross_check(Release(paths))


def load_metric_results(paths) -> xr.Dataset:
    """The metrics published with the release (``metric results/``).

    Parameters
    ----------
    paths : str, os.PathLike or a sequence of one of them
        The release folder.

    Returns
    -------
    xarray.Dataset
        ``value(model, task, metric, filtering)``: the open-source models'
        MaxP, AvgP and CPS (``metric`` in ``maxp``, ``avgp``, ``cps``) over
        every template (``filtering="none"``, the "no filtering" files) or
        the templates marked correct (``"correct"``); NaN where a model was
        not run. ``openai_estimate(openai_model, task, metric, prompts)``:
        the estimated MaxP and AvgP of the OpenAI models over the original
        templates (``prompts="original"``) or all (``"all"``); NaN for CPS
        and for tasks they were not estimated on. Task ids join the files'
        task names with underscores (``"all words from category"`` ->
        ``"all_words_from_category"``); ``task_label(task)`` keeps the name
        as written and ``benchmark(task)`` is ``LMentry``, ``BBH`` or
        ``BBL`` (BIG-bench Lite, whose 14 tasks have metrics but no
        per-template accuracies in the release).

    Raises
    ------
    rankstats_collectors.files.ImporterError
        A metric file is missing or malformed, or the open-source files
        disagree on tasks or models.

    Examples
    --------
    >>> from pathlib import Path
    >>> from rankstats_collectors.files import mizrahi2024
    >>> release = Path(mizrahi2024.__file__).parents[2] / "tests" / "data" / "mizrahi2024"
    >>> metrics = mizrahi2024.load_metric_results(release)
    >>> dict(metrics.value.sizes)
    {'model': 16, 'task': 39, 'metric': 3, 'filtering': 2}
    >>> float(metrics.value.sel(model="t0pp", task="all_words_from_category",
    ...                         metric="maxp", filtering="none"))
    0.99
    >>> metrics.openai_model.values.tolist()
    ['davinci', 'td002', 'td003', 'gpt-3.5-turbo']
    """
    dataset = metric_results(Release(paths))
    dataset.attrs = {
        "source": "Mizrahi et al. (2024) release: 'metric results'",
        "reference": REFERENCE,
        "url": URL,
        "license": LICENSE,
    }
    return dataset


def build_datasets(source, outdir) -> list[Path]:
    """Write the example files of :mod:`rankstats.datasets` from a release folder.

    Parameters
    ----------
    source : str or os.PathLike
        The release folder.
    outdir : str or os.PathLike
        Where to write ``mizrahi2024.nc`` (the accuracy-CSV cube),
        ``mizrahi2024-aggregated.nc`` (the JSON cube),
        ``mizrahi2024-metrics.nc`` (:func:`load_metric_results`) and
        ``LICENSE-mizrahi2024.md``; created if needed.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Notes
    -----
    Everything is read and checked before anything is written, and each
    file is written atomically, so a malformed release writes nothing.
    Scores are stored as float64: float32 would not give back the published
    two-decimal accuracies.
    """
    cubes = {
        "mizrahi2024.nc": load(source, audit=False),
        "mizrahi2024-aggregated.nc": load(source, accuracies="json", audit=False),
    }
    return write_datasets(cubes, load_metric_results(source), Path(outdir))


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``python -m rankstats_collectors.files.mizrahi2024``.

    ``build-datasets SRC OUTDIR`` writes the embedded datasets; ``cross-check
    SRC`` compares the release with them.
    """
    parser = argparse.ArgumentParser(
        prog="python -m rankstats_collectors.files.mizrahi2024", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build-datasets", help="write the packaged example files")
    build.add_argument("source", help="the release folder")
    build.add_argument("outdir", help="where to write them (e.g. rankstats/datasets)")
    check = commands.add_parser("cross-check", help="count where the copies disagree")
    check.add_argument("source", help="the release folder")
    check.add_argument("--csv", help="also write every disagreement to this CSV file")
    args = parser.parse_args(argv)
    try:
        if args.command == "build-datasets":
            for path in build_datasets(args.source, args.outdir):
                print(path)
        else:
            found = cross_check(args.source)
            print(found.groupby("check", sort=False).size().to_string())
            if args.csv:
                found.to_csv(args.csv, index=False)
    except (RankstatsError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
