"""Write the example files packaged in rankstats.datasets, atomically."""

from __future__ import annotations

from pathlib import Path

import xarray as xr

import rankstats
from rankstats.io import write_atomically

LICENSE_TEXT = """\
# Released data of "State of What Art? A Call for Multi-Prompt LLM Evaluation"

Mizrahi, M., Kaplan, G., Malkin, D., Dror, R., Shahaf, D., & Stanovsky, G. (2024).
State of What Art? A Call for Multi-Prompt LLM Evaluation. Transactions of the ACL 12,
933-949. arXiv:2401.00595.

Source: github.com/SLAB-NLP/Multi-Prompt-LLM-Evaluation (commit 04f57ef), folder `data/`.

Licence: Community Data License Agreement – Permissive, Version 2.0
(CDLA-Permissive-2.0), https://cdla.dev/permissive-2-0/. Redistribution keeps this
attribution and the licence name.

The files here are that data, unchanged in value, rearranged into netCDF by
`python -m rankstats_collectors.files.mizrahi2024 build-datasets <release folder>
rankstats/datasets`:

- `mizrahi2024.nc`: a rankstats score cube, `score(model, task, template)`, the accuracy
  of 16 open-source models on 25 tasks (LMentry and BIG-bench Hard, 11 of the models on
  BIG-bench Hard) under 136 to 265 instruction templates per task, from
  `paraphrases accuracies/`, with the templates' text and metadata (original-template
  flag, generation method, manual correctness flag, stated number of samples, language
  style, format, length) from `automatic paraphrases/`.
- `mizrahi2024-aggregated.nc`: the same cube from the release's second copy of the
  accuracies, `paraphrases accuracies and rankings (aggregated)/`, with that copy's
  template text, method and correctness flag.
- `mizrahi2024-metrics.nc`: the published MaxP, AvgP and CPS of the open-source models
  (with and without filtering out templates marked incorrect), and the estimated MaxP
  and AvgP of four OpenAI models, from `metric results/`.

The two copies of the accuracies differ: on LMentry's all_words_from_category and
any_words_from_category the columns of flan-t5-small and flan-t5-base are swapped in
`paraphrases accuracies/` (the aggregated copy and the published metrics agree with each
other); the copies name two generation methods differently (`meta_cot` / `cot`,
`meta_desc` / `gradual`); and one template of logical_deduction_seven_objects is flagged
`0?` in `automatic paraphrases/` and correct in the aggregated copy.
"""


def _write_dataset(dataset: xr.Dataset, path: Path) -> None:
    encoding = {
        name: {"zlib": True, "complevel": 4}
        for name, variable in dataset.data_vars.items()
        if variable.dtype.kind == "f"
    }
    write_atomically(
        path, lambda temporary: dataset.to_netcdf(temporary, engine="netcdf4", encoding=encoding)
    )


def _compact_text(cube: xr.Dataset) -> xr.Dataset:
    """Per-template texts as compressed character arrays: a fifth of the size of netCDF strings."""
    cube = cube.copy()
    for name, coord in cube.coords.items():
        if coord.dtype.kind == "O" and coord.ndim == 2:
            cube[name].encoding.update(dtype="S1", zlib=True, complevel=4)
    return cube


def write_datasets(cubes: dict, metrics: xr.Dataset, outdir: Path) -> list[Path]:
    """Write ``cubes`` (``{file name: cube}``), the metrics and the licence into ``outdir``."""
    outdir.mkdir(parents=True, exist_ok=True)
    written = [
        rankstats.save(_compact_text(cube), outdir / name, float_dtype="float64")
        for name, cube in cubes.items()
    ]
    written.append(outdir / "mizrahi2024-metrics.nc")
    _write_dataset(metrics, written[-1])
    written.append(outdir / "LICENSE-mizrahi2024.md")
    write_atomically(written[-1], LICENSE_TEXT.encode("utf-8"))
    return written
