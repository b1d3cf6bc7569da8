"""Score local Hugging Face models on every template × sample and write the cube.

``rankstats collect hf --model PATH_OR_ID --samples SAMPLES --templates TEMPLATES -o cube.nc``.
Samples and templates are JSON Lines files (``rankstats/schemas/samples.schema.json``,
``rankstats/schemas/templates.schema.json``) or the release folder of Mizrahi et al.
(2024) with ``--task`` naming the tasks to run.
"""

from __future__ import annotations

from pathlib import Path

from rankstats.cli import UsageError, check_inputs, integer

from ..cli import add_collector_arguments, default_cache, scorer
from ..tasks import (
    load_samples,
    load_templates,
    mizrahi2024_samples,
    mizrahi2024_templates,
)

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    """Add the options of ``rankstats collect hf`` to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> from rankstats_collectors.hf.cli import add_arguments
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> arguments = parser.parse_args(["--model", "m", "--samples", "s.jsonl",
    ...                                "--templates", "t.jsonl", "-o", "cube.nc"])
    >>> arguments.model, arguments.mode, arguments.batch_size
    (['m'], 'generate', 8)
    """
    groups = add_collector_arguments(parser)
    what, how = groups["what"], groups["how"]
    what.add_argument(
        "--task",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this task (repeatable); needed when --samples and "
        "--templates name the release folder of Mizrahi et al. (2024), "
        "which hf reads too",
    )
    what.add_argument(
        "--max-templates",
        type=integer(1),
        metavar="N",
        help="only the first N templates of each task",
    )
    what.add_argument(
        "--max-samples", type=integer(1), metavar="N", help="only the first N samples of each task"
    )
    what.add_argument(
        "--skip-malformed-templates",
        action="store_true",
        help="with a release folder: leave out templates that are not valid or "
        "name fields the samples lack",
    )
    how.add_argument("--strip-articles", action="store_true", help="drop a/an/the before comparing")
    how.add_argument("--case-sensitive", action="store_true", help="do not lower-case")
    how.add_argument("--keep-punctuation", action="store_true", help="do not strip punctuation")
    how.add_argument(
        "--stop",
        action="append",
        metavar="TEXT",
        help="a stop string (repeatable; default a newline; '' for none)",
    )
    how.add_argument(
        "--chat", action="store_true", help="apply the tokenizer's chat template to each prompt"
    )
    how.add_argument(
        "--choose",
        choices=["sum", "mean"],
        default="sum",
        help="likelihood: summed or per-token log-probability (default sum)",
    )
    how.add_argument(
        "--option-prefix",
        metavar="TEXT",
        help="likelihood: text before each option (default a space for decoder-only models)",
    )
    run_ = parser.add_argument_group("running")
    run_.add_argument(
        "--batch-size",
        type=integer(1),
        default=8,
        metavar="N",
        help="prompts per forward pass (default 8)",
    )
    run_.add_argument("--device", help="torch device (default cuda when present, else cpu)")
    run_.add_argument(
        "--dtype", default="auto", help="auto, float32, bfloat16 or float16 (default auto)"
    )
    run_.add_argument("--revision", help="the Hub revision of the models")


def _is_release(path: Path, inner: str) -> bool:
    return path.is_dir() and (
        (path / inner).is_dir() or path.name == inner or path.parent.name == inner
    )


def _tasks_and_templates(arguments):
    samples_path, templates_path = Path(arguments.samples), Path(arguments.templates)
    wanted = list(dict.fromkeys(arguments.task))
    if _is_release(samples_path, "benchmarks"):
        if not wanted:
            raise UsageError("name the tasks to run from the release folder with --task")
        samples = {task: mizrahi2024_samples(samples_path, task) for task in wanted}
    else:
        samples = load_samples(samples_path)
    if _is_release(templates_path, "automatic paraphrases"):
        if not wanted:
            raise UsageError("name the tasks to run from the release folder with --task")
        malformed = "skip" if arguments.skip_malformed_templates else "raise"
        templates = {}
        for task in wanted:
            fields = set(samples[task][0].fields) if samples.get(task) else None
            templates[task] = mizrahi2024_templates(
                templates_path, task, fields=fields, malformed=malformed
            )
    else:
        templates = load_templates(templates_path)
    if wanted:
        unknown = [task for task in wanted if task not in templates]
        if unknown:
            raise UsageError(
                f"--task {unknown[0]!r}: no templates in "
                f"{str(templates_path)!r} (it has: {', '.join(templates)})"
            )
        templates = {task: templates[task] for task in wanted}
    if arguments.max_templates is not None:
        templates = {task: ts[: arguments.max_templates] for task, ts in templates.items()}
    if arguments.max_samples is not None:
        samples = {task: ss[: arguments.max_samples] for task, ss in samples.items()}
    return templates, samples


def run(arguments) -> int:
    """Run ``rankstats collect hf``; return the exit status."""
    import rankstats

    from .run import collect

    check_inputs({"--samples": arguments.samples, "--templates": arguments.templates})
    templates, samples = _tasks_and_templates(arguments)
    output = Path(arguments.output)
    stop = ("\n",) if arguments.stop is None else tuple(s for s in arguments.stop if s)
    normalisation = {}
    if ":" not in arguments.scorer:
        normalisation = {
            "lowercase": not arguments.case_sensitive,
            "strip_punctuation": not arguments.keep_punctuation,
            "strip_articles": arguments.strip_articles,
        }
    cube = collect(
        arguments.model,
        templates,
        samples,
        mode=arguments.mode,
        scorer=scorer(arguments.scorer),
        normalisation=normalisation,
        max_new_tokens=arguments.max_new_tokens,
        stop=stop,
        chat=arguments.chat,
        choose=arguments.choose,
        option_prefix=arguments.option_prefix,
        batch_size=arguments.batch_size,
        device=arguments.device,
        dtype=arguments.dtype,
        revision=arguments.revision,
        cache=arguments.cache or default_cache(output),
        progress=not arguments.no_progress,
    )
    rankstats.save(cube, output, force=arguments.force)
    sizes = " × ".join(f"{cube.sizes[d]} {d}s" for d in cube["score"].dims)
    print(cube.attrs["collect_summary"])
    mean = float(cube["score"].mean())
    print(f"wrote {output}: {sizes}, mean {cube.attrs['metric']} {mean:.3f}")
    return 0
