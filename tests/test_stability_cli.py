"""The stability command, and the stability statistics on a dask.distributed cluster."""

import numpy as np
import pytest
import xarray as xr

import rankstats
from rankstats import stability
from rankstats.cli import main


def sampled_cube():
    rng = np.random.default_rng(3)
    accuracy = {"a": 0.85, "b": 0.7, "c": 0.69, "d": 0.4}
    records = [
        {
            "model": model,
            "task": task,
            "template": template,
            "sample": sample,
            "score": float(rng.random() < acc - 0.05 * (template % 3)),
        }
        for task, n_templates in (("t1", 6), ("t2", 4))
        for model, acc in accuracy.items()
        for template in range(n_templates)
        for sample in range(30)
    ]
    return rankstats.from_records(records, metric="accuracy")


def test_stability_command_prints_leaderboards_and_writes_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = rankstats.save(sampled_cube(), tmp_path / "cube.nc")
    status = main(
        [
            "stability",
            str(path),
            "--n-resamples",
            "200",
            "--seed",
            "0",
            "--figures",
            str(tmp_path / "fig"),
            "--csv",
            str(tmp_path / "tables"),
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "200 resamples over both" in out.splitlines()[0]
    assert "## t1" in out and "## t2" in out
    assert "| a | " in out
    names = {p.name for p in (tmp_path / "fig").iterdir()}
    assert {
        "rank_intervals_t1.png",
        "critical_difference_t2.png",
        "templates_needed_t1.png",
        "templates_needed.png",
    } <= names
    board = (tmp_path / "tables" / "leaderboard.csv").read_text().splitlines()
    assert board[0].startswith("model,task,")
    assert len(board) == 1 + 4 * 2


def test_stability_command_rejects_bad_chunks(tmp_path, capsys):
    path = rankstats.save(sampled_cube(), tmp_path / "cube.nc")
    assert main(["stability", str(path), "--chunks", "task:1"]) == 2  # before opening the cube
    assert "DIM=SIZE" in capsys.readouterr().err


def test_on_a_two_worker_cluster_equals_eager():
    distributed = pytest.importorskip("distributed")
    cube = sampled_cube()
    eager = stability.leaderboard(cube, n_resamples=100, over="both", seed=4)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        lazy = stability.leaderboard(cube.chunk({"task": 1}), n_resamples=100, over="both", seed=4)
        assert lazy["score"].chunks is not None
        computed = lazy.compute()
    xr.testing.assert_allclose(computed, eager)


def test_stability_command_on_a_scheduler(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    path = rankstats.save(sampled_cube(), tmp_path / "cube.nc")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        status = main(
            [
                "stability",
                str(path),
                "--n-resamples",
                "100",
                "--chunks",
                "task=1",
                "--scheduler",
                cluster.scheduler_address,
            ]
        )
    assert status == 0
    assert "## t2" in capsys.readouterr().out


def holed_cube():
    """One task; model c lacks template p3."""
    rows = [
        {"model": m, "task": "t1", "template": f"p{k}", "score": s}
        for m, scores in {
            "a": [0.9, 0.8, 0.7, 0.6],
            "b": [0.5, 0.6, 0.55, 0.4],
            "c": [0.1, 0.3, 0.2, None],
        }.items()
        for k, s in enumerate(scores)
        if s is not None
    ]
    return rankstats.from_records(rows)


def stability_json(path, tmp_path, *options):
    import json

    out = tmp_path / "board.json"
    status = main(
        [
            "stability",
            str(path),
            "--n-resamples",
            "50",
            "--seed",
            "0",
            "--over",
            "templates",
            "--json",
            str(out),
            *options,
        ]
    )
    return status, (json.loads(out.read_text()) if status == 0 else None)


def test_nan_policy_flag_offers_the_api_values(capsys):
    from rankstats._options import NAN_POLICIES

    assert main(["stability", "--help"]) == 0
    assert "--nan-policy {" + ",".join(NAN_POLICIES) + "}" in capsys.readouterr().out
    assert NAN_POLICIES == ("propagate", "omit", "raise")
    assert main(["stability", "mizrahi2024", "--nan-policy", "drop"]) == 2
    err = capsys.readouterr().err
    assert "--nan-policy: invalid choice: 'drop'" in err and "Traceback" not in err


def test_nan_policy_propagate_is_the_default_and_leaves_the_model_unranked(tmp_path, capsys):
    import pandas as pd

    path = rankstats.save(holed_cube(), tmp_path / "holes.nc")
    status, default = stability_json(path, tmp_path)
    assert status == 0
    capsys.readouterr()
    status, explicit = stability_json(path, tmp_path, "--nan-policy", "propagate")
    assert status == 0
    out = capsys.readouterr().out
    assert default["tables"] == explicit["tables"]
    assert explicit["attrs"]["nan_policy"] == "propagate"
    board = pd.DataFrame(explicit["tables"]["leaderboard"]).set_index("model")
    assert board.loc["c", "rank"] is None or np.isnan(board.loc["c", "rank"])
    assert "Not ranked: c: no score on 1 template (p3), so its score is NaN" in out
    assert "nan_policy='propagate'" in out


def test_nan_policy_omit_scores_over_the_other_templates_and_says_so(tmp_path, capsys):
    import pandas as pd

    cube = holed_cube()
    path = rankstats.save(cube, tmp_path / "holes.nc")
    status, document = stability_json(path, tmp_path, "--nan-policy", "omit")
    assert status == 0
    out = capsys.readouterr().out
    assert document["attrs"]["nan_policy"] == "omit"
    board = pd.DataFrame(document["tables"]["leaderboard"]).set_index("model")
    # c's AvgP over the three templates it has, by hand (float32 replicates: 1e-6)
    assert board.loc["c", "score"] == pytest.approx(np.mean([0.1, 0.3, 0.2]), abs=1e-6)
    assert board.loc["c", "rank"] == 3
    api = stability.leaderboard(cube, n_resamples=50, over="templates", seed=0, nan_policy="omit")
    assert board.loc["c", "score"] == pytest.approx(float(api["score"].sel(model="c", task="t1")))
    left_out = pd.DataFrame(document["tables"]["left_out"])
    assert left_out[["task", "model"]].values.tolist() == [["t1", "c"]]
    assert (
        "over its other 3 of the task's 4 templates (nan_policy='omit')" in left_out["why"].item()
    )
    assert "Scored without some templates: c: no score on 1 template (p3)" in out


def test_nan_policy_raise_stops_with_one_line(tmp_path, capsys):
    path = rankstats.save(holed_cube(), tmp_path / "holes.nc")
    status, _ = stability_json(path, tmp_path, "--nan-policy", "raise")
    assert status == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rankstats: error: ")
    assert "missing" in err[0] and "nan_policy='omit'" in err[0]
    assert not (tmp_path / "board.json").exists()
    complete = rankstats.save(holed_cube().sel(template=[0, 1, 2]), tmp_path / "complete.nc")
    status, _ = stability_json(complete, tmp_path, "--nan-policy", "raise")
    assert status == 0
