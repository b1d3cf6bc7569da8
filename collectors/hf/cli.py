"""Score local Hugging Face models on every template × sample and write the cube.

``rankstats collect hf --model PATH_OR_ID --tasks SAMPLES --templates TEMPLATES -o cube.nc``.
Samples and templates are JSON Lines files (``schemas/samples.schema.json``,
``schemas/templates.schema.json``) or the release folder of Mizrahi et al.
(2024) with ``--task`` naming the tasks to run.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ..tasks import (
    load_samples,
    load_templates,
    mizrahi2024_samples,
    mizrahi2024_templates,
)
from .errors import CollectorError

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    """Add the options of ``rankstats collect hf`` to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> from collectors.hf.cli import add_arguments
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> arguments = parser.parse_args(["--model", "m", "--tasks", "s.jsonl",
    ...                                "--templates", "t.jsonl", "-o", "cube.nc"])
    >>> arguments.model, arguments.mode, arguments.batch_size
    (['m'], 'generate', 8)
    """
    what = parser.add_argument_group("what to run")
    what.add_argument("--model", action="append", required=True, metavar="PATH_OR_ID",
                      help="a local model folder or Hub model id (repeatable)")
    what.add_argument("--tasks", "--samples", dest="tasks", required=True, metavar="PATH",
                      help="samples: a JSONL file, or the paper's release folder (with "
                           "'benchmarks/')")
    what.add_argument("--templates", required=True, metavar="PATH",
                      help="templates: a JSONL file, or the paper's release folder (with "
                           "'automatic paraphrases/')")
    what.add_argument("--task", action="append", default=[], metavar="NAME",
                      help="run only this task (repeatable; needed with a release folder)")
    what.add_argument("--max-templates", type=int, metavar="N",
                      help="only the first N templates of each task")
    what.add_argument("--max-samples", type=int, metavar="N",
                      help="only the first N samples of each task")
    what.add_argument("--skip-malformed-templates", action="store_true",
                      help="with a release folder: leave out templates that are not valid or "
                           "name fields the samples lack")
    how = parser.add_argument_group("how to score")
    how.add_argument("--mode", choices=["generate", "likelihood"], default="generate",
                     help="greedy generation, or the most likely option (default generate)")
    how.add_argument("--scorer", default="exact_match", metavar="NAME",
                     help="exact_match, contains, or package.module:function taking "
                          "(response, sample) (default exact_match)")
    how.add_argument("--strip-articles", action="store_true",
                     help="drop a/an/the before comparing")
    how.add_argument("--case-sensitive", action="store_true", help="do not lower-case")
    how.add_argument("--keep-punctuation", action="store_true", help="do not strip punctuation")
    how.add_argument("--max-new-tokens", type=int, default=16, metavar="N",
                     help="the most tokens generated per prompt (default 16)")
    how.add_argument("--stop", action="append", metavar="TEXT",
                     help="a stop string (repeatable; default a newline; '' for none)")
    how.add_argument("--chat", action="store_true",
                     help="apply the tokenizer's chat template to each prompt")
    how.add_argument("--choose", choices=["sum", "mean"], default="sum",
                     help="likelihood: summed or per-token log-probability (default sum)")
    how.add_argument("--option-prefix", metavar="TEXT",
                     help="likelihood: text before each option (default a space for "
                          "decoder-only models)")
    run_ = parser.add_argument_group("running")
    run_.add_argument("--batch-size", type=int, default=8, metavar="N",
                      help="prompts per forward pass (default 8)")
    run_.add_argument("--device", help="torch device (default cuda when present, else cpu)")
    run_.add_argument("--dtype", default="auto",
                      help="auto, float32, bfloat16 or float16 (default auto)")
    run_.add_argument("--revision", help="the Hub revision of the models")
    run_.add_argument("--cache", metavar="PATH",
                      help="the response cache (default OUTPUT.cache.jsonl)")
    run_.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("-o", "--output", required=True, metavar="CUBE",
                        help="the cube file to write (.nc, or .zarr)")


def _scorer(name: str):
    if ":" not in name:
        return name
    module, _, attribute = name.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise CollectorError(f"scorer {name!r} cannot be imported: {error}") from None


def _is_release(path: Path, inner: str) -> bool:
    return path.is_dir() and ((path / inner).is_dir() or path.name == inner
                              or path.parent.name == inner)


def _tasks_and_templates(arguments):
    samples_path, templates_path = Path(arguments.tasks), Path(arguments.templates)
    wanted = list(dict.fromkeys(arguments.task))
    if _is_release(samples_path, "benchmarks"):
        if not wanted:
            raise CollectorError("name the tasks to run from the release folder with --task")
        samples = {task: mizrahi2024_samples(samples_path, task) for task in wanted}
    else:
        samples = load_samples(samples_path)
    if _is_release(templates_path, "automatic paraphrases"):
        if not wanted:
            raise CollectorError("name the tasks to run from the release folder with --task")
        malformed = "skip" if arguments.skip_malformed_templates else "raise"
        templates = {}
        for task in wanted:
            fields = set(samples[task][0].fields) if samples.get(task) else None
            templates[task] = mizrahi2024_templates(templates_path, task, fields=fields,
                                                    malformed=malformed)
    else:
        templates = load_templates(templates_path)
    if wanted:
        unknown = [task for task in wanted if task not in templates]
        if unknown:
            raise CollectorError(f"task {unknown[0]!r} has no templates in "
                                 f"{str(templates_path)!r} (it has: {', '.join(templates)})")
        templates = {task: templates[task] for task in wanted}
    if arguments.max_templates is not None:
        templates = {task: ts[:arguments.max_templates] for task, ts in templates.items()}
    if arguments.max_samples is not None:
        samples = {task: ss[:arguments.max_samples] for task, ss in samples.items()}
    return templates, samples


def run(arguments) -> int:
    """Run ``rankstats collect hf``; return the exit status."""
    import rankstats

    from .run import collect

    templates, samples = _tasks_and_templates(arguments)
    output = Path(arguments.output)
    stop = ("\n",) if arguments.stop is None else tuple(s for s in arguments.stop if s)
    normalisation = {}
    if ":" not in arguments.scorer:
        normalisation = {"lowercase": not arguments.case_sensitive,
                         "strip_punctuation": not arguments.keep_punctuation,
                         "strip_articles": arguments.strip_articles}
    cube = collect(
        arguments.model, templates, samples, mode=arguments.mode,
        scorer=_scorer(arguments.scorer), normalisation=normalisation,
        max_new_tokens=arguments.max_new_tokens, stop=stop, chat=arguments.chat,
        choose=arguments.choose, option_prefix=arguments.option_prefix,
        batch_size=arguments.batch_size, device=arguments.device, dtype=arguments.dtype,
        revision=arguments.revision,
        cache=arguments.cache or output.with_name(output.name + ".cache.jsonl"),
        progress=not arguments.no_progress)
    rankstats.save(cube, output)
    sizes = " × ".join(f"{cube.sizes[d]} {d}s" for d in cube["score"].dims)
    print(cube.attrs["collect_summary"])
    mean = float(cube["score"].mean())
    print(f"wrote {output}: {sizes}, mean {cube.attrs['metric']} {mean:.3f}")
    return 0
