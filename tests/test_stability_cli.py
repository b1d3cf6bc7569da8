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
        {"model": model, "task": task, "template": template, "sample": sample,
         "score": float(rng.random() < acc - 0.05 * (template % 3))}
        for task, n_templates in (("t1", 6), ("t2", 4))
        for model, acc in accuracy.items()
        for template in range(n_templates)
        for sample in range(30)
    ]
    return rankstats.from_records(records, metric="accuracy")


def test_stability_command_prints_leaderboards_and_writes_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = rankstats.save(sampled_cube(), tmp_path / "cube.nc")
    status = main(["stability", str(path), "--n-resamples", "200", "--seed", "0",
                   "--figures", str(tmp_path / "fig"), "--csv", str(tmp_path / "tables")])
    assert status == 0
    out = capsys.readouterr().out
    assert "200 resamples over both" in out.splitlines()[0]
    assert "## t1" in out and "## t2" in out
    assert "| a | " in out
    names = {p.name for p in (tmp_path / "fig").iterdir()}
    assert {"rank_intervals_t1.png", "critical_difference_t2.png", "templates_needed_t1.png",
            "templates_needed.png"} <= names
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
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        lazy = stability.leaderboard(cube.chunk({"task": 1}), n_resamples=100, over="both",
                                     seed=4)
        assert lazy["score"].chunks is not None
        computed = lazy.compute()
    xr.testing.assert_allclose(computed, eager)


def test_stability_command_on_a_scheduler(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    path = rankstats.save(sampled_cube(), tmp_path / "cube.nc")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        status = main(["stability", str(path), "--n-resamples", "100", "--chunks", "task=1",
                       "--scheduler", cluster.scheduler_address])
    assert status == 0
    assert "## t2" in capsys.readouterr().out
