"""Standard errors as producers write them: imported, validated, saved, and ranked from.

The values checked are the files' own numbers (tests/data/fixtures/lm_eval and
tests/data/lm_eval: real lm-evaluation-harness output, see their SOURCES.md).
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankstats
from rankstats import stability
from rankstats.cli import main
from rankstats.errors import CubeError, RankstatsError, ScoreValueError
from rankstats_collectors.files import lm_eval, opencompass, tables

DATA = Path(__file__).parent / "data"
LM_EVAL = DATA / "fixtures" / "lm_eval"
FOLDER = DATA / "lm_eval" / "out" / "folder"


def reported(path, task, key):
    return json.loads(Path(path).read_text())["results"][task][key]


# --------------------------------------------------------------------------- importers


def test_lm_eval_results_keep_their_stderr():
    cube = lm_eval.load(LM_EVAL / "multiprompt", aggregated=True)
    files = {
        "example/model-a": next((LM_EVAL / "multiprompt" / "example__model-a").glob("*.json")),
        "example/model-b": next((LM_EVAL / "multiprompt" / "example__model-b").glob("*.json")),
    }
    for model, path in files.items():
        for template in ("1", "2", "3"):
            position = list(cube.template_id.sel(task="asdiv").values).index(template)
            found = cube.standard_error.sel(model=model, task="asdiv").values[position]
            assert found == reported(path, f"asdiv_prompt_{template}", "acc_stderr,none")
    assert cube.standard_error.dims == cube.score.dims
    assert "standard errors: from acc_stderr,none" in cube.attrs["import_summary"]


def test_lm_eval_latest_run_keeps_its_own_stderr():
    cube = lm_eval.load(FOLDER, aggregated=True)
    latest = FOLDER / "org__dummy-a" / "results_2026-11-27T03-44-27.686302.json"
    b = next((FOLDER / "org__dummy-b").glob("results_*.json"))
    se = cube.standard_error.sel(task="tiny")
    ids = list(cube.template_id.sel(task="tiny").values)
    assert se.sel(model="org/dummy-a").values[ids.index("1")] == reported(
        latest, "tiny_prompt_1", "acc_stderr,none"
    )
    assert se.sel(model="org/dummy-b").values[ids.index("2")] == reported(
        b, "tiny_prompt_2", "acc_stderr,none"
    )


def test_lm_eval_n_a_stderr_is_missing_and_counted():
    # negotiationtom's corpus-level micro_f1 has "N/A" where a standard error would be
    path = next((LM_EVAL / "negotiationtom" / "Qwen__Qwen3-8B").glob("results_*.json"))
    assert reported(path, "negotiationtom_intention", "micro_f1_stderr,none") == "N/A"
    cube = lm_eval.load(path, aggregated=True, metric="micro_f1")
    assert "standard_error" not in cube
    line = "standard errors: none written: 1 × 'N/A' (micro_f1_stderr,none)"
    assert line in cube.attrs["import_summary"]


def test_lm_eval_some_n_a_stderr_are_nan_and_said(tmp_path):
    # the real file, with one task's standard error written "N/A" as lm-eval writes it
    source = next((LM_EVAL / "multiprompt" / "example__model-a").glob("*.json"))
    data = json.loads(source.read_text())
    data["results"]["asdiv_prompt_2"]["acc_stderr,none"] = "N/A"
    folder = tmp_path / "example__model-a"
    folder.mkdir()
    (folder / source.name).write_text(json.dumps(data))
    cube = lm_eval.load(folder, aggregated=True)
    se = pd.Series(cube.standard_error.values.ravel(), index=cube.template_id.values.ravel())
    assert np.isnan(se["2"]) and se["1"] == reported(source, "asdiv_prompt_1", "acc_stderr,none")
    assert (
        "standard errors: from acc_stderr,none; 1 of 3 missing (NaN): "
        "1 × 'N/A' (acc_stderr,none)" in cube.attrs["import_summary"]
    )


def test_lm_eval_negative_stderr_is_an_error_naming_file_and_field(tmp_path):
    source = next((LM_EVAL / "asdiv" / "meta-llama__Meta-Llama-3-8B-Instruct").glob("*.json"))
    data = json.loads(source.read_text())
    data["results"]["asdiv"]["acc_stderr,none"] = -0.1
    path = tmp_path / "meta-llama__Meta-Llama-3-8B-Instruct" / source.name
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    with pytest.raises(RankstatsError, match=r"results\.asdiv\.acc_stderr,none") as error:
        lm_eval.load(path, aggregated=True)
    assert source.name in str(error.value)


def test_lm_eval_0_3_and_console_tables_keep_their_stderr():
    cube = lm_eval.load(DATA / "lm_eval" / "v0_3" / "results.json", aggregated=True, metric="acc")
    data = json.loads((DATA / "lm_eval" / "v0_3" / "results.json").read_text())["results"]
    assert cube.standard_error.values.ravel().tolist() == [
        data["tiny_prompt_1"]["acc_stderr"],
        data["tiny_prompt_2"]["acc_stderr"],
    ]
    assert "standard errors: from acc_stderr\n" in cube.attrs["import_summary"]
    # the console table prints "|acc |↑ |0.125|± |0.1250|" and "|0.250|± |0.1637|"
    table = lm_eval.load(DATA / "lm_eval" / "out" / "console_dummy-a.md", aggregated=True)
    assert table.standard_error.values.ravel().tolist() == [0.125, 0.1637]
    assert "the Stderr column, rounded as printed" in table.attrs["import_summary"]


def test_per_sample_logs_carry_no_standard_error():
    cube = lm_eval.load(LM_EVAL / "asdiv")
    assert "standard_error" not in cube and "standard errors" not in cube.attrs["import_summary"]


def test_opencompass_aggregates_say_none_written():
    cube = opencompass.load(DATA / "opencompass" / "out", aggregated=True)
    assert "standard_error" not in cube
    assert "standard errors: none written" in cube.attrs["import_summary"]


def test_table_standard_error_column(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,task,template,acc,se\na,t,p,0.81,0.012\nb,t,p,0.78,\nc,t,p,0.5,0.02\n")
    cube = tables.load(path, sample=None, score="acc", standard_error="se")
    assert cube.standard_error.sel(task="t").values.ravel()[[0, 2]].tolist() == [0.012, 0.02]
    assert np.isnan(cube.standard_error.sel(model="b").values).all()
    assert (
        "standard errors: from column 'se'; 1 of 3 empty or NaN (missing)"
        in (cube.attrs["import_summary"])
    )
    plain = tables.load(path, sample=None, score="acc")
    assert "standard_error" not in plain
    assert "standard errors: none written" in plain.attrs["import_summary"]


def test_table_missing_standard_error_column_names_column_and_file(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,task,template,acc\na,t,p,0.81\n")
    with pytest.raises(RankstatsError, match="column 'stderr'") as error:
        tables.load(path, sample=None, score="acc", standard_error="stderr")
    assert "board.csv" in str(error.value)


def test_import_command_with_a_missing_standard_error_column_writes_nothing(tmp_path, capsys):
    path = tmp_path / "board.csv"
    path.write_text("model,task,template,acc\na,t,p,0.81\n")
    out = tmp_path / "cube.nc"
    status = main(
        [
            *("import", "table", str(path), "-o", str(out)),
            *("-O", "sample=null", "-O", "score=acc", "-O", "standard_error=stderr"),
        ]
    )
    assert status == 3 and not out.exists()
    err = capsys.readouterr().err
    assert "'stderr'" in err and "board.csv" in err and "Traceback" not in err


def test_table_negative_standard_error_names_row_and_column(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,task,template,acc,se\na,t,p,0.81,-0.01\n")
    with pytest.raises(RankstatsError, match="row 1, column 'se'"):
        tables.load(path, sample=None, score="acc", standard_error="se")


# --------------------------------------------------------------------------- validate, save, open


def cube_with_errors():
    return rankstats.from_records(
        [
            {"model": m, "task": "t", "template": p, "score": s, "standard_error": e}
            for m, p, s, e in [
                ("a", "x", 0.8, 0.01),
                ("a", "y", 0.7, 0.02),
                ("b", "x", 0.6, np.nan),
                ("b", "y", 0.5, 0.03),
            ]
        ]
    )


def test_validate_refuses_a_negative_standard_error():
    cube = cube_with_errors()
    cube["standard_error"].values[0, 0, 1] = -0.5
    with pytest.raises(
        ScoreValueError, match=r"'standard_error'.*model='a', task='t', template='y'"
    ):
        rankstats.validate(cube)


def test_validate_refuses_standard_errors_on_other_dims():
    cube = cube_with_errors()
    cube["standard_error"] = cube["standard_error"].isel(template=0, drop=True)
    with pytest.raises(CubeError, match="'standard_error' has dims"):
        rankstats.validate(cube)


def test_validate_refuses_standard_errors_that_are_not_floats():
    cube = cube_with_errors()
    cube["standard_error"] = cube["standard_error"].fillna(0).astype(int)
    with pytest.raises(CubeError, match="'standard_error' holds int64"):
        rankstats.validate(cube)


def test_from_records_refuses_standard_errors_with_samples():
    with pytest.raises(CubeError, match="'standard_error'"):
        rankstats.from_records(
            [
                {
                    "model": "a",
                    "task": "t",
                    "template": "x",
                    "sample": 1,
                    "score": 1,
                    "standard_error": 0.1,
                }
            ]
        )


def test_standard_errors_survive_save_and_open(tmp_path):
    cube = cube_with_errors()
    again = rankstats.open_cube(rankstats.save(cube, tmp_path / "c.nc", float_dtype="float64"))
    np.testing.assert_array_equal(again.standard_error.values, cube.standard_error.values)
    assert again.standard_error.dtype == np.float64
    small = rankstats.open_cube(rankstats.save(cube, tmp_path / "s.nc"))
    np.testing.assert_allclose(small.standard_error.values, cube.standard_error.values, rtol=1e-7)


# --------------------------------------------------------------------------- the stability command


def test_stability_ranks_an_imported_cube_from_its_standard_errors(tmp_path, capsys):
    cube_path = tmp_path / "published.nc"
    assert (
        main(
            [
                *("import", "lm_eval", str(LM_EVAL / "multiprompt")),
                *("-o", str(cube_path), "-O", "aggregated=true"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    status = main(
        ["stability", str(cube_path), "--seed", "0", "--json", str(tmp_path / "board.json")]
    )
    assert status == 0
    captured = capsys.readouterr()
    assert "rank sets from the cube's standard errors (independent estimates)" in captured.err
    assert "from the cube's standard errors" in captured.out.splitlines()[0]

    cube = rankstats.open_cube(cube_path)
    estimates = cube.score.mean("template")
    errors = np.sqrt((cube.standard_error**2).sum("template")) / cube.sizes["template"]
    direct = stability.rank_sets(
        estimates.transpose("task", "model"),
        standard_errors=errors.transpose("task", "model"),
        seed=0,
    )
    board = pd.DataFrame(json.loads((tmp_path / "board.json").read_text())["tables"]["leaderboard"])
    board = board.set_index(["task", "model"])
    expected = direct.to_dataframe().reorder_levels(["task", "model"])
    for column in ("rank", "rank_low", "rank_high", "tie_group"):
        got = board[column].sort_index().to_numpy(dtype=float)
        np.testing.assert_array_equal(got, expected[column].sort_index().to_numpy(dtype=float))
    np.testing.assert_allclose(
        board["standard_error"].sort_index().to_numpy(dtype=float),
        expected["standard_error"].sort_index().to_numpy(dtype=float),
    )


def test_stability_over_templates_says_the_standard_errors_are_unused(tmp_path, capsys):
    path = rankstats.save(cube_with_errors(), tmp_path / "c.nc")
    assert (
        main(["stability", str(path), "--over", "templates", "--seed", "0", "--n-resamples", "50"])
        == 0
    )
    assert "standard errors are not used" in capsys.readouterr().err


def test_stability_from_standard_errors_refuses_bootstrap_rank_intervals(tmp_path, capsys):
    path = rankstats.save(cube_with_errors(), tmp_path / "c.nc")
    assert main(["stability", str(path), "--rank-sets", "bootstrap"]) == 2
    assert "--over templates" in capsys.readouterr().err


def test_stability_names_models_without_a_standard_error(tmp_path, capsys):
    path = rankstats.save(cube_with_errors(), tmp_path / "c.nc")
    assert main(["stability", str(path), "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "b: no standard error on a template it was scored on" in out


# --------------------------------------------------------------------------- the leaderboard itself


def ragged_cube():
    """Four models on two tasks: d never ran t2, c lacks one template of t1."""
    rows = [
        ("a", "t1", "x", 0.90, 0.01),
        ("a", "t1", "y", 0.88, 0.01),
        ("b", "t1", "x", 0.70, 0.02),
        ("b", "t1", "y", 0.72, 0.02),
        ("c", "t1", "x", 0.50, 0.02),
        ("d", "t1", "x", 0.30, 0.01),
        ("d", "t1", "y", 0.32, 0.01),
        ("a", "t2", "p", 0.60, 0.03),
        ("b", "t2", "p", 0.61, 0.03),
        ("c", "t2", "p", 0.20, 0.03),
    ]
    return rankstats.from_records(
        [
            {"model": m, "task": t, "template": p, "score": s, "standard_error": e}
            for m, t, p, s, e in rows
        ]
    )


def test_leaderboard_from_standard_errors_equals_rank_sets_per_task():
    from rankstats.stability.published import standard_error_leaderboard

    cube = ragged_cube()
    board = standard_error_leaderboard(cube, nan_policy="omit", seed=0, top_k=1)
    t1 = pd.Series({"a": 0.89, "b": 0.71, "c": 0.50, "d": 0.31})
    se1 = pd.Series(
        {
            "a": np.hypot(0.01, 0.01) / 2,
            "b": np.hypot(0.02, 0.02) / 2,
            "c": 0.02,
            "d": 0.01 * 2**0.5 / 2,
        }
    )
    direct = stability.rank_sets(t1, standard_errors=se1, seed=0, top_k=1)
    one = board.sel(task="t1").to_dataframe()
    for column in ("rank", "rank_low", "rank_high", "tie_group", "in_top_k"):
        assert one[column].tolist() == direct[column].to_series().tolist(), column
    np.testing.assert_allclose(one["score"], t1)
    np.testing.assert_allclose(one["standard_error"], se1)
    # d never ran t2: absent, not ranked, and the others ranked among three
    two = board.sel(task="t2").to_dataframe()
    assert np.isnan(two.loc["d", "rank"]) and two["rank_high"].max() == 3
    assert board.attrs["over"] == "standard errors" and board.attrs["missing_standard_error"] == ""


def test_leaderboard_from_standard_errors_missing_values():
    from rankstats.errors import MissingValueError
    from rankstats.stability.published import standard_error_leaderboard

    cube = ragged_cube()
    propagated = standard_error_leaderboard(cube, seed=0)
    assert np.isnan(propagated["rank"].sel(task="t1", model="c"))
    assert propagated["rank"].sel(task="t1").notnull().sum() == 3
    with pytest.raises(
        MissingValueError, match=r"model 'c' has no score on template 'y' of task 't1'"
    ):
        standard_error_leaderboard(cube, nan_policy="raise")
    cube["standard_error"].loc[{"model": "b"}] = np.nan
    unknown = standard_error_leaderboard(cube, seed=0, nan_policy="omit")
    assert unknown["rank"].sel(model="b").isnull().all()
    assert unknown.attrs["missing_standard_error"] == "t1: b; t2: b"


def test_stability_by_maxp_says_the_standard_errors_are_unused(tmp_path, capsys):
    path = rankstats.save(cube_with_errors(), tmp_path / "c.nc")
    status = main(["stability", str(path), "--by", "maxp", "--seed", "0", "--n-resamples", "50"])
    assert status == 0
    err = capsys.readouterr().err
    assert "standard errors are not used" in err and "not of maxp" in err


def test_the_schema_states_the_standard_error():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(
        (Path(rankstats.__file__).parent / "schemas" / "cube.schema.json").read_text()
    )

    def described(cube):
        return json.loads(json.dumps(cube.to_dict(data=False), default=str))

    cube = lm_eval.load(LM_EVAL / "multiprompt", aggregated=True)
    jsonschema.validate(described(cube), schema)
    wrong = cube.copy()
    wrong["standard_error"] = cube["standard_error"].expand_dims(sample=2)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(described(wrong), schema)
