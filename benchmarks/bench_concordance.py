"""Speed, correctness and memory of rankstats' concordance statistics on the Mizrahi et al. data.

Run from the repository root::

    .venv/bin/python benchmarks/bench_concordance.py            # everything (a few minutes)
    .venv/bin/python benchmarks/bench_concordance.py --pairs-fraction 0.05   # quicker

Benchmarks, all on the released per-template accuracies of Mizrahi et al. (2024):

``tau``
    ``rankstats.kendall_tau_matrix(cube)`` (tau-b between every pair of templates,
    over the models, for every task) against a Python loop calling
    ``scipy.stats.kendalltau(x, y)`` for every pair of real templates of every task.
    Target: rankstats at least 1000 times faster.
``w``
    ``rankstats.kendall_w(cube)`` and ``rankstats.friedman(cube)`` against a loop over the
    tasks calling ``pingouin.friedman`` twice per task (judges = templates for W, blocks =
    models for Friedman). Target: at least 50 times faster.

Every value rankstats returns for a compared pair or task must match the oracle to
1e-10 relative (NaN where, and only where, the oracle is NaN). The script prints a
table, writes ``benchmarks/results/<name>.json`` and exits with status 1 if a target
or a comparison fails.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _data import RESULTS_DIR, TaskBlock, load_cube, task_blocks
from _timing import best_of, peak_memory

TOLERANCE = 1e-10
TAU_TARGET = 1000.0
W_TARGET = 50.0


# --------------------------------------------------------------------------- helpers


def compare(name, oracle_name, ours, oracle, labels):
    """Relative error of ``ours`` against ``oracle``, NaN positions compared as equal.

    The relative error is ``|ours - oracle| / |oracle|``; where the oracle is exactly
    zero it is the absolute difference. ``labels[k]`` describes entry k.
    """
    ours = np.asarray(ours, dtype=float).ravel()
    oracle = np.asarray(oracle, dtype=float).ravel()
    nan_ours, nan_oracle = np.isnan(ours), np.isnan(oracle)
    mismatch = np.flatnonzero(nan_ours != nan_oracle)
    both = np.flatnonzero(~nan_ours & ~nan_oracle)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.abs(ours[both] - oracle[both])
        scale = np.abs(oracle[both])
        error = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), diff)
    error = np.where(ours[both] == oracle[both], 0.0, error)
    error = np.where(np.isnan(error), np.inf, error)
    record = {
        "statistic": name,
        "oracle": oracle_name,
        "compared": int(ours.size),
        "nan_both": int((nan_ours & nan_oracle).sum()),
        "nan_mismatch": int(mismatch.size),
        "zero_both": int(((ours == 0) & (oracle == 0)).sum()),
        "max_rel_error": float(error.max()) if error.size else 0.0,
        "worst": None,
        "nan_mismatch_examples": [
            {"where": labels(k), "rankstats": float(ours[k]), "oracle": float(oracle[k])}
            for k in mismatch[:5]
        ],
    }
    if error.size:
        k = int(both[np.argmax(error)])
        record["worst"] = {
            "where": labels(k),
            "rankstats": float(ours[k]),
            "oracle": float(oracle[k]),
        }
    record["pass"] = bool(mismatch.size == 0 and record["max_rel_error"] <= TOLERANCE)
    return record


def untimed_warnings(fn) -> list[str]:
    """Run ``fn`` once, outside any timing, and return the distinct warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    seen = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in seen:
            seen.append(text)
    return seen


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- tau


def sample_pairs(blocks: list[TaskBlock], fraction: float, seed: int):
    """Per task, the template pairs (i < j, block rows) the scipy loop runs on."""
    rng = np.random.default_rng(seed)
    pairs = []
    for block in blocks:
        i, j = np.triu_indices(block.n_templates, k=1)
        if fraction < 1.0:
            count = max(1, round(fraction * i.size))
            keep = np.sort(rng.choice(i.size, size=count, replace=False))
            i, j = i[keep], j[keep]
        pairs.append((i, j))
    return pairs


def scipy_tau_loop(blocks: list[TaskBlock], pairs) -> list:
    """``scipy.stats.kendalltau`` for every listed pair of every task, one call each."""
    from scipy.stats import kendalltau

    results = []
    for block, (rows_i, rows_j) in zip(blocks, pairs, strict=True):
        x = block.scores
        for i, j in zip(rows_i.tolist(), rows_j.tolist(), strict=True):
            results.append(kendalltau(x[i], x[j]))
    return results


def bench_tau(cube, blocks, args, report):
    import rankstats

    run = lambda: rankstats.kendall_tau_matrix(cube)  # noqa: E731
    report["rankstats_warnings"]["kendall_tau_matrix"] = untimed_warnings(run)
    pairs = sample_pairs(blocks, args.pairs_fraction, args.seed)
    total_pairs = sum(block.n_pairs for block in blocks)
    timed_pairs = sum(int(i.size) for i, _ in pairs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scipy_tau_loop(blocks[:1], [(pairs[0][0][:1], pairs[0][1][:1])])  # warm-up
        log(f"tau: rankstats.kendall_tau_matrix, best of {args.repeats} ...")
        ours_seconds, ours_times, result = best_of(run, args.repeats)
        log(f"tau: scipy.stats.kendalltau loop over {timed_pairs} template pairs ...")
        gc.collect()
        start = time.perf_counter()
        oracle = scipy_tau_loop(blocks, pairs)
        measured = time.perf_counter() - start
    extrapolated = timed_pairs < total_pairs
    reference_seconds = measured * total_pairs / timed_pairs

    task_order = [str(t) for t in result["task"].values]
    if task_order != [block.task for block in blocks]:
        raise RuntimeError("kendall_tau_matrix returned the tasks in another order")
    tau = result["statistic"].transpose("task", "template", "template_b").values
    pvalue = result["pvalue"].transpose("task", "template", "template_b").values
    template_ids = cube["template_id"].transpose("task", "template").values

    where_t, where_a, where_b = [], [], []
    for t, (block, (i, j)) in enumerate(zip(blocks, pairs, strict=True)):
        where_t.append(np.full(i.size, t))
        where_a.append(block.template_positions[i])
        where_b.append(block.template_positions[j])
    where_t, where_a, where_b = (np.concatenate(v) for v in (where_t, where_a, where_b))

    def label(k):
        t, a, b = int(where_t[k]), int(where_a[k]), int(where_b[k])
        return f"task {blocks[t].task}, templates {template_ids[t, a]} / {template_ids[t, b]}"

    oracle_tau = np.fromiter((r.statistic for r in oracle), float, len(oracle))
    oracle_p = np.fromiter((r.pvalue for r in oracle), float, len(oracle))
    report["correctness"] += [
        compare(
            "tau-b", "scipy.stats.kendalltau", tau[where_t, where_a, where_b], oracle_tau, label
        ),
        compare(
            "tau-b p-value",
            "scipy.stats.kendalltau",
            pvalue[where_t, where_a, where_b],
            oracle_p,
            label,
        ),
    ]
    report["memory"]["kendall_tau_matrix"] = peak_memory(run)
    ratio = reference_seconds / ours_seconds
    report["benchmarks"].append(
        {
            "id": "tau",
            "description": "Kendall tau-b, all template pairs, 25 tasks",
            "rankstats_call": "rankstats.kendall_tau_matrix(cube)",
            "reference_call": "scipy.stats.kendalltau(x, y) per template pair",
            "rankstats_seconds": ours_seconds,
            "rankstats_times": ours_times,
            "reference_seconds": reference_seconds,
            "reference_measured_seconds": measured,
            "reference_calls_timed": timed_pairs,
            "reference_calls_total": total_pairs,
            "reference_seconds_per_call": measured / timed_pairs,
            "extrapolated": extrapolated,
            "ratio": ratio,
            "target_ratio": TAU_TARGET,
            "pass": bool(ratio >= TAU_TARGET),
        }
    )


# --------------------------------------------------------------------------- W and Friedman


def long_frames(blocks: list[TaskBlock]):
    """One long DataFrame (template, model, score) per task, for pingouin."""
    import pandas as pd

    frames = []
    for block in blocks:
        m, n = block.scores.shape
        frames.append(
            pd.DataFrame(
                {
                    "template": np.repeat(block.template_positions, n),
                    "model": np.tile(block.models.astype(str), m),
                    "score": block.scores.ravel(),
                }
            )
        )
    return frames


def pingouin_loop(frames) -> list:
    """Two ``pingouin.friedman`` calls per task: W's orientation, then Friedman's."""
    import pingouin

    out = []
    for frame in frames:
        as_w = pingouin.friedman(frame, dv="score", within="model", subject="template")
        as_friedman = pingouin.friedman(frame, dv="score", within="template", subject="model")
        out.append((as_w, as_friedman))
    return out


def _pingouin_value(table, column):
    if column == "p" and "p_unc" not in table.columns:
        column = "p-unc"  # pingouin < 0.6
    elif column == "p":
        column = "p_unc"
    return float(table[column].iloc[0])


def bench_w(cube, blocks, args, report):
    import rankstats

    run_w = lambda: rankstats.kendall_w(cube)  # noqa: E731
    run_f = lambda: rankstats.friedman(cube)  # noqa: E731

    def run_both():
        return run_w(), run_f()

    report["rankstats_warnings"]["kendall_w"] = untimed_warnings(run_w)
    report["rankstats_warnings"]["friedman"] = untimed_warnings(run_f)
    frames = long_frames(blocks)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pingouin_loop(frames[:1])  # warm-up
        log(f"W + Friedman: rankstats, best of {args.repeats} timings of {args.number} calls ...")
        ours_seconds, ours_times, (w, f) = best_of(run_both, args.repeats, args.number)
        w_seconds, _, _ = best_of(run_w, args.repeats, args.number)
        f_seconds, _, _ = best_of(run_f, args.repeats, args.number)
        log(
            f"W + Friedman: pingouin loop ({2 * len(frames)} calls), best of {args.ref_repeats} ..."
        )
        reference_seconds, reference_times, oracle = best_of(
            lambda: pingouin_loop(frames), args.ref_repeats
        )

    for result in (w, f):
        if [str(t) for t in result["task"].values] != [block.task for block in blocks]:
            raise RuntimeError("rankstats returned the tasks in another order")
    tasks = [block.task for block in blocks]

    def label(k):
        return f"task {tasks[k]}"

    def column(which, name):
        return np.array([_pingouin_value(pair[which], name) for pair in oracle])

    oracle_name = "pingouin.friedman"
    report["correctness"] += [
        compare(
            "W (judges = templates)", oracle_name, w["statistic"].values, column(0, "W"), label
        ),
        compare("W chi-square", oracle_name, w["chi2"].values, column(0, "Q"), label),
        compare("W p-value", oracle_name, w["pvalue"].values, column(0, "p"), label),
        compare(
            "Friedman Q (blocks = models)",
            oracle_name,
            f["statistic"].values,
            column(1, "Q"),
            label,
        ),
        compare("Friedman p-value", oracle_name, f["pvalue"].values, column(1, "p"), label),
        compare("Friedman's W", oracle_name, f["kendall_w"].values, column(1, "W"), label),
    ]
    report["memory"]["kendall_w"] = peak_memory(run_w)
    report["memory"]["friedman"] = peak_memory(run_f)
    ratio = reference_seconds / ours_seconds
    report["benchmarks"].append(
        {
            "id": "w",
            "description": "Kendall's W + Friedman, 25 tasks",
            "rankstats_call": "rankstats.kendall_w(cube); rankstats.friedman(cube)",
            "reference_call": "pingouin.friedman twice per task",
            "rankstats_seconds": ours_seconds,
            "rankstats_times": ours_times,
            "rankstats_kendall_w_seconds": w_seconds,
            "rankstats_friedman_seconds": f_seconds,
            "reference_seconds": reference_seconds,
            "reference_times": reference_times,
            "reference_measured_seconds": reference_seconds,
            "reference_calls_timed": 2 * len(frames),
            "reference_calls_total": 2 * len(frames),
            "reference_seconds_per_call": reference_seconds / (2 * len(frames)),
            "extrapolated": False,
            "ratio": ratio,
            "target_ratio": W_TARGET,
            "pass": bool(ratio >= W_TARGET),
        }
    )


# --------------------------------------------------------------------------- report


def environment() -> dict:
    import numpy
    import pandas
    import pingouin
    import scipy
    import xarray

    import rankstats

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "rankstats": rankstats.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "xarray": xarray.__version__,
        "pingouin": pingouin.__version__,
    }


def seconds(value: float) -> str:
    return f"{value:.4f}" if value < 10 else f"{value:.1f}"


def print_report(report: dict) -> None:
    print()
    print(
        f"{'benchmark':<42} {'rankstats s':>12} {'reference s':>12} {'ratio':>9} "
        f"{'target':>9}  result"
    )
    for b in report["benchmarks"]:
        reference = seconds(b["reference_seconds"]) + ("*" if b["extrapolated"] else " ")
        print(
            f"{b['description']:<42} {seconds(b['rankstats_seconds']):>12} "
            f"{reference:>12} {b['ratio']:>8.0f}x {b['target_ratio']:>8.0f}x  "
            f"{'pass' if b['pass'] else 'FAIL'}"
        )
    for b in report["benchmarks"]:
        print(
            f"  {b['id']}: {b['reference_calls_timed']} reference calls timed, "
            f"{1e3 * b['reference_seconds_per_call']:.3f} ms per call"
        )
        if b["extrapolated"]:
            print(
                f"  * EXTRAPOLATED: {b['reference_call']} timed on "
                f"{b['reference_calls_timed']} of {b['reference_calls_total']} calls "
                f"({seconds(b['reference_measured_seconds'])} s measured), scaled up"
            )
    options = report["options"]
    print(
        f"  rankstats: best of {options['repeats']} (W + Friedman: timings of "
        f"{options['number']} calls, per call); reference loops: scipy once, pingouin best "
        f"of {options['ref_repeats']}; garbage collector off while timing, as timeit"
    )

    print()
    print(
        f"{'statistic':<30} {'oracle':<24} {'compared':>9} {'NaN both':>9} "
        f"{'NaN diff':>9} {'0 both':>7} {'worst rel err':>14}  result"
    )
    for c in report["correctness"]:
        print(
            f"{c['statistic']:<30} {c['oracle']:<24} {c['compared']:>9} "
            f"{c['nan_both']:>9} {c['nan_mismatch']:>9} {c['zero_both']:>7} "
            f"{c['max_rel_error']:>14.3e}  "
            f"{'pass' if c['pass'] else 'FAIL'}"
        )
    worst = max(report["correctness"], key=lambda c: c["max_rel_error"], default=None)
    if worst is not None and worst["worst"] is not None:
        print(
            f"  worst: {worst['statistic']} at {worst['worst']['where']}: rankstats "
            f"{worst['worst']['rankstats']!r}, oracle {worst['worst']['oracle']!r}"
        )
    for c in report["correctness"]:
        for example in c["nan_mismatch_examples"]:
            print(
                f"  NaN mismatch in {c['statistic']} at {example['where']}: "
                f"rankstats {example['rankstats']!r}, oracle {example['oracle']!r}"
            )

    print()
    print("peak memory of one rankstats call (tracemalloc):")
    for name, peak in report["memory"].items():
        print(f"  {name:<20} {peak / 2**20:8.2f} MiB")
    for name, messages in report["rankstats_warnings"].items():
        for message in messages:
            print(f"  {name} warns: {message}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Time rankstats' Kendall tau / W / Friedman against scipy and pingouin "
        "loops on the Mizrahi et al. (2024) accuracies, and check every value."
    )
    parser.add_argument(
        "--only",
        choices=["all", "tau", "w"],
        default="all",
        help="run one benchmark only (default: all)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=7,
        help="rankstats calls per benchmark; the best time counts (default 7)",
    )
    parser.add_argument(
        "--number",
        type=int,
        default=20,
        help="W + Friedman: back-to-back rankstats calls per timing, as "
        "timeit's number; the pingouin loop is 50 calls already "
        "(default 20)",
    )
    parser.add_argument(
        "--ref-repeats",
        type=int,
        default=3,
        help="runs of the pingouin loop; the best time counts (default 3). "
        "The scipy tau loop runs once.",
    )
    parser.add_argument(
        "--pairs-fraction",
        type=float,
        default=1.0,
        help="time and check the scipy loop on this random fraction of the "
        "template pairs and extrapolate its time (default 1: all pairs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the pair sample")
    parser.add_argument(
        "--name", default="concordance", help="results go to benchmarks/results/NAME.json"
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.pairs_fraction <= 1.0:
        parser.error("--pairs-fraction must be in (0, 1]")
    if args.repeats < 1 or args.ref_repeats < 1 or args.number < 1:
        parser.error("--repeats, --number and --ref-repeats must be at least 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    log("loading the Mizrahi et al. (2024) accuracies and warming up imports ...")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pingouin  # noqa: F401  (imported before any timing)
        import scipy.stats  # noqa: F401

        import rankstats  # noqa: F401
    cube = load_cube()
    blocks = task_blocks(cube)

    report = {
        "name": args.name,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "started_at": started,
        "environment": environment(),
        "data": {
            "source": "tests/data/mizrahi2024 (paraphrases accuracies)",
            "tasks": len(blocks),
            "models": int(cube.sizes["model"]),
            "template_positions": int(cube.sizes["template"]),
            "real_templates": sum(block.n_templates for block in blocks),
            "template_pairs": sum(block.n_pairs for block in blocks),
        },
        "options": vars(args),
        "tolerance": TOLERANCE,
        "benchmarks": [],
        "correctness": [],
        "memory": {},
        "rankstats_warnings": {},
    }
    if args.only in ("all", "tau"):
        bench_tau(cube, blocks, args, report)
    if args.only in ("all", "w"):
        bench_w(cube, blocks, args, report)

    failures = [
        f"{b['description']}: ratio {b['ratio']:.0f}x below target {b['target_ratio']:.0f}x"
        for b in report["benchmarks"]
        if not b["pass"]
    ]
    failures += [
        f"{c['statistic']}: worst relative error {c['max_rel_error']:.3e}, "
        f"{c['nan_mismatch']} NaN mismatches"
        for c in report["correctness"]
        if not c["pass"]
    ]
    report["failures"] = failures
    report["pass"] = not failures

    print_report(report)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{args.name}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(f"results written to {path.relative_to(RESULTS_DIR.parent.parent)}")
    if failures:
        print("FAIL")
        for failure in failures:
            print(f"  {failure}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
