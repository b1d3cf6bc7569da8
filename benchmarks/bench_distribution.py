"""The distribution across templates from a partial design: rankstats against a one-hot Rasch fit.

Run from the repository root::

    .venv/bin/python benchmarks/bench_distribution.py                 # timing, about a minute
    .venv/bin/python benchmarks/bench_distribution.py --accuracy      # + errors, several minutes
    .venv/bin/python benchmarks/bench_distribution.py --readme        # + the README section
                                        # (with the last errors measured, without --accuracy)
    .venv/bin/python benchmarks/bench_distribution.py --figure FILE.png  # the errors' figure,
                                        # from the last --accuracy run

``rankstats``
    ``rankstats.estimate_distribution(partial, n_resamples=200)``: the item-response model
    with template effects integrated over a grid, every model at once.
``reference``
    ``rankstats.analyses.estimators.onehot_rasch``: the PromptEval baseline as its paper
    describes it, a logistic regression on one-hot template and sample covariates with
    an L2 penalty (C = 1), fitted per model by SciPy's L-BFGS-B; a template's accuracy is
    the mean of its observed and predicted outcomes.

Both read the same cells: planted cubes (``rankstats.planted_cube``, 100 templates x 100
samples) and ``rankstats.random_design`` at 200, 400 and 800 cells per model (2, 4 and 8
per template). Timing: best of ``--repeats`` calls for 8, 16, 32 and 64 models, rankstats
with 200 posterior draws (the default) and with 50, and the reference, alternating, BLAS
on one thread (L-BFGS-B calls BLAS; on a shared machine its threads only contend). The
ratio is rankstats' time over the reference's, same run.
Accuracy (``--accuracy``): for normal, bimodal, skewed and model-specific cubes (the
last: sample difficulties that differ by model, sd 1), ``--seeds`` cubes each, the
Wasserstein-1 distance between the estimated and the true distribution of per-template
accuracy (the mean absolute difference of their quantile functions at 1, 2, ..., 99%)
and the absolute errors of the 5%, 50% and 95% quantiles, averaged over the models, with
standard errors over the cubes. Writes ``benchmarks/results/distribution.json``;
``--readme`` also rewrites the section of ``benchmarks/README.md`` between its markers.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _timing import best_of

import rankstats
from rankstats.analyses.estimators import onehot_rasch
from rankstats.analyses.irt import per_sample_scores, positions

LEVELS = np.round(np.linspace(0.01, 0.99, 99), 2)
TARGETS = (0.05, 0.5, 0.95)
SHAPES = ("normal", "bimodal", "skewed", "model-specific")
#: The numbers of posterior draws timed.
DRAWS = (200, 50)
START, END = "<!-- bench_distribution:start -->", "<!-- bench_distribution:end -->"


def cube_of(shape: str, models: int, seed: int):
    extra = {"model_sample_sd": 1.0} if shape == "model-specific" else {"template_shape": shape}
    return rankstats.planted_cube(models=models, templates=100, samples=100, seed=seed, **extra)


def reference(partial):
    scores = per_sample_scores(partial, "reference").transpose(
        "task", "model", "template", "sample"
    )
    templates, samples = positions(scores)
    return onehot_rasch(scores.values, templates[:, None, :], samples[:, None, :])[0]


def errors(shape: str, budget: int, models: int, seed: int) -> dict:
    """W1 and quantile errors of both estimators on one cube and design."""
    cube = cube_of(shape, models, seed)
    partial = cube.where(rankstats.random_design(cube, budget=budget, seed=seed + 1000))
    truth = rankstats.template_scores(cube).isel(task=0).transpose("model", "template").values
    exact = np.quantile(truth, LEVELS, axis=-1).T
    fitted = rankstats.estimate_distribution(partial, quantiles=LEVELS, n_resamples=200, seed=seed)
    ours = fitted.quantiles.isel(task=0).transpose("model", "quantile").values
    theirs = np.quantile(reference(partial), LEVELS, axis=-1).T
    at = [int(np.argmin(abs(LEVELS - q))) for q in TARGETS]
    out = {}
    for name, q in (("rankstats", ours), ("reference", theirs)):
        gap = np.abs(q - exact)
        out[name] = [float(gap.mean()), *(float(gap[:, i].mean()) for i in at)]
    return out


def accuracy(budgets, seeds: int, models: int) -> list[dict]:
    rows = []
    for shape in SHAPES:
        for budget in budgets:
            runs = [errors(shape, budget, models, seed) for seed in range(seeds)]
            for name in ("rankstats", "reference"):
                values = np.array([r[name] for r in runs])
                rows.append(
                    {
                        "cube": shape,
                        "budget": budget,
                        "estimator": name,
                        "error": values.mean(0).round(4).tolist(),
                        "se": (values.std(0, ddof=1) / np.sqrt(seeds)).round(4).tolist(),
                    }
                )
            print(rows[-2]["cube"], budget, rows[-2]["error"], rows[-1]["error"], flush=True)
    return rows


def timing(model_counts, budgets, repeats: int) -> list[dict]:
    rows = []
    for models in model_counts:
        for budget in budgets:
            cube = cube_of("normal", models, 0)
            partial = cube.where(rankstats.random_design(cube, budget=budget, seed=1))
            calls = {
                f"rankstats_{n}": lambda partial=partial, n=n: rankstats.estimate_distribution(
                    partial, n_resamples=n, seed=0
                )
                for n in DRAWS
            }
            calls["reference"] = lambda partial=partial: reference(partial)
            # they alternate, so that a change of load on the machine meets all alike
            best = dict.fromkeys(calls, np.inf)
            for _ in range(repeats):
                for name, call in calls.items():
                    best[name] = min(best[name], best_of(call, 1)[0])
            row = {"models": models, "budget": budget}
            for n in DRAWS:
                row[f"rankstats_{n}_s"] = round(best[f"rankstats_{n}"], 4)
                row[f"ratio_{n}"] = round(best[f"rankstats_{n}"] / best["reference"], 3)
            row["reference_s"] = round(best["reference"], 4)
            rows.append(row)
            print(rows[-1], flush=True)
    return rows


def markdown(times, rows) -> str:
    lines = [
        START,
        "",
        "## bench_distribution.py",
        "",
        "`estimate_distribution` (200 posterior draws, the default, and 50) against the",
        "one-hot Rasch reference fitted per model (`rankstats.analyses.estimators.onehot_rasch`,",
        "SciPy L-BFGS-B: point estimates only, no intervals), same cells, 100 templates x 100",
        "samples, BLAS on one thread, the calls alternating, best of the repeats. Ratio:",
        "rankstats' time over the reference's in the same run (below 1: rankstats faster); on",
        "the shared 2-core machine a ratio moves by up to about 20% between runs. Re-measure",
        "with `.venv/bin/python benchmarks/bench_distribution.py --repeats 9 --readme` (add",
        "`--accuracy --seeds 6` for the errors too).",
        "",
        "| models | cells per model | rankstats (s) | reference (s) | ratio |"
        " rankstats, 50 draws (s) | ratio, 50 draws |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in times:
        lines.append(
            f"| {r['models']} | {r['budget']} | {r['rankstats_200_s']:.3f} | "
            f"{r['reference_s']:.3f} | {r['ratio_200']:.2f} | {r['rankstats_50_s']:.3f} | "
            f"{r['ratio_50']:.2f} |"
        )
    if rows:
        lines += [
            "",
            "Errors against the true distribution of per-template accuracy (mean over models",
            "and cubes; ± one standard error over the cubes): W1 and the absolute errors of",
            "the 5%, 50% and 95% quantiles.",
            "",
            "| cube | cells | estimator | W1 | 5% | 50% | 95% |",
            "|---|---:|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            cells = " | ".join(
                f"{e:.3f} ± {s:.3f}" for e, s in zip(r["error"], r["se"], strict=True)
            )
            lines.append(f"| {r['cube']} | {r['budget']} | {r['estimator']} | {cells} |")
    lines += ["", END]
    return "\n".join(lines)


def figure(rows, path) -> None:
    """The errors against the budget, one panel per cube and error, both estimators."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = ("W1", "5% quantile", "95% quantile")
    columns = (0, 1, 3)
    fig, axes = plt.subplots(
        len(metrics), len(SHAPES), figsize=(12, 7.5), sharex=True, sharey="row", squeeze=False
    )
    style = {"rankstats": ("C0", "o"), "reference": ("C1", "s")}
    for j, shape in enumerate(SHAPES):
        for name, (colour, marker) in style.items():
            mine = sorted(
                (r for r in rows if r["cube"] == shape and r["estimator"] == name),
                key=lambda r: r["budget"],
            )
            budgets = [r["budget"] / 100 for r in mine]
            for i, column in enumerate(columns):
                axes[i, j].errorbar(
                    budgets,
                    [r["error"][column] for r in mine],
                    yerr=[2 * r["se"][column] for r in mine],
                    color=colour,
                    marker=marker,
                    capsize=3,
                    label="rankstats" if name == "rankstats" else "one-hot Rasch",
                )
        axes[0, j].set_title(shape)
        axes[-1, j].set_xlabel("cells per template")
        axes[-1, j].set_xscale("log", base=2)
        axes[-1, j].set_xticks([2, 4, 8], ["2", "4", "8"])
    for i, metric in enumerate(metrics):
        axes[i, 0].set_ylabel(f"{metric} error")
    axes[0, 0].legend(frameon=False)
    fig.suptitle(
        "Distribution of per-template accuracy: error against the truth "
        "(16 models x 100 templates, mean over cubes, ± 2 SE)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--readme", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--models", type=int, default=16)
    parser.add_argument("--name", default="distribution")
    parser.add_argument("--figure", help="write the errors' figure here (PNG)")
    args = parser.parse_args(argv)
    root = pathlib.Path(__file__).parent
    saved = root / "results" / f"{args.name}.json"
    # the last errors measured: for the figure or the README section without --accuracy
    last = json.loads(saved.read_text())["accuracy"] if saved.exists() else []
    if args.figure and not args.accuracy:
        if not last:
            parser.error(f"--figure: {saved} holds no errors yet; add --accuracy")
        figure(last, args.figure)
        return 0
    budgets = (200, 400, 800)
    rankstats.estimate_distribution(  # warm the imports and caches before timing
        cube_of("normal", 2, 0).isel(sample=slice(0, 10)), n_resamples=2, seed=0
    )
    times = timing((8, 16, 32, 64), (200, 800), args.repeats)
    rows = accuracy(budgets, args.seeds, args.models) if args.accuracy else last
    if args.figure:
        figure(rows, args.figure)
    (root / "results").mkdir(exist_ok=True)
    saved.write_text(json.dumps({"timing": times, "accuracy": rows}, indent=1))
    if args.readme:
        readme = root / "README.md"
        text = readme.read_text()
        section = markdown(times, rows)
        if START in text and END in text:
            text = text[: text.index(START)] + section + text[text.index(END) + len(END) :]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        readme.write_text(text)
    slower = [r for r in times if r["ratio_200"] > 1.0]
    print(f"{len(slower)} of {len(times)} timings slower than the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
