"""Writes Parquet per-sample logs as the Open LLM Leaderboard serves its details, offline.

The leaderboard's details are lm-evaluation-harness per-sample logs, served as Parquet by
the Hugging Face hub's conversion (the ``datasets`` JSON builder, then Parquet). The hub
cannot be reached here, so this script does the same conversion, with ``datasets`` from the
throwaway lm-eval venv (never a project dependency), on the logs lm-eval 0.4.13 wrote in
tests/data/lm_eval/out/folder (see tests/data/lm_eval/SOURCES.md):

    /tmp/venv-lmeval/bin/python tests/data/open_llm_leaderboard/make_fixture.py
"""

import importlib.metadata
import pathlib
import shutil
import sys

import datasets

HERE = pathlib.Path(__file__).resolve().parent
LOGS = HERE.parent / "lm_eval" / "out" / "folder"

for folder in sorted(LOGS.iterdir()):
    out = HERE / folder.name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    for log in sorted(folder.glob("samples_*.jsonl")):
        table = datasets.load_dataset(
            "json", data_files=str(log), split="train", cache_dir=str(HERE / ".cache")
        )
        table.to_parquet(str(out / (log.stem + ".parquet")))
shutil.rmtree(HERE / ".cache", ignore_errors=True)
(HERE / "VERSION").write_text(
    f"datasets {importlib.metadata.version('datasets')}\n"
    f"pyarrow {importlib.metadata.version('pyarrow')}\n"
    f"Python {sys.version.split()[0]}\n"
)
print("\n".join(sorted(str(p) for p in HERE.glob("*/*.parquet"))))
