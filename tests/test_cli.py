"""The ``rankstats`` command's conventions: exit statuses, shared options, dispatch, plugins."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import subprocess
import sys
import textwrap
import types

import pytest

import rankstats
import rankstats_collectors
import rankstats_collectors.files
from rankstats import cli


def small_cube():
    return rankstats.from_records(
        [
            {
                "model": model,
                "task": task,
                "template": template,
                "sample": sample,
                "score": float((sample + template + ord(model)) % 3 != 0),
            }
            for model in "abc"
            for task in ("t1", "t2")
            for template in range(3)
            for sample in range(8)
        ],
        metric="accuracy",
    )


@pytest.fixture
def cube_file(tmp_path):
    return str(rankstats.save(small_cube(), tmp_path / "cube.nc"))


def subcommands(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def flags(parser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def one_line_error(err: str, *words: str) -> None:
    """A user error: one line on stderr, naming what is wrong, with no traceback."""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


# ---- exit statuses --------------------------------------------------------------------------


def test_ok_is_0(capsys):
    assert cli.main(["info", "mizrahi2024"]) == 0
    assert "tasks (templates, models with scores)" in capsys.readouterr().out


def test_validate_finding_problems_is_1(cube_file, tmp_path, capsys):
    broken = tmp_path / "broken.nc"
    broken.write_text("nothing")
    assert cli.main(["validate", cube_file]) == 0
    assert cli.main(["validate", cube_file, str(broken)]) == 1
    assert "invalid:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["stability", "mizrahi2024", "--confidence-level", "1.5"], ["--confidence-level", "1.5"]),
        (
            ["stability", "mizrahi2024", "--confidence-level", "high"],
            ["--confidence-level", "high"],
        ),
        (["stability", "mizrahi2024", "--n-resamples", "0"], ["--n-resamples", "0"]),
        (["stability", "mizrahi2024", "--seed", "-1"], ["--seed"]),
        (["stability", "mizrahi2024", "--chunks", "task:1"], ["--chunks", "DIM=SIZE"]),
        (["stability", "mizrahi2024", "-B", "10"], ["-B"]),
        (["report", "mizrahi2024", "--json", "-", "--csv", "-"], ["--json -", "--csv -"]),
        (["report", "mizrahi2024", "--csv", "tables.csv"], ["--csv", "tables.csv"]),
        (["report", "mizrahi2024", "--json", "no/such/folder/r.json"], ["--json", "no/such"]),
        (["report", "no-such-cube"], ["no-such-cube", "mizrahi2024"]),
        (["reproduce", "no-such-study"], ["no-such-study"]),
        (["edits", "mizrahi2024", "--min-distance", "3"], ["--min-distance", "--max-distance"]),
        (["edits", "mizrahi2024", "--correction", "bh"], ["--correction"]),
        (["estimate", "mizrahi2024", "--task", "nope"], ["--task", "nope"]),
        (["estimate", "mizrahi2024", "--stages", "all"], ["--stages"]),
        (["import", "no-such-format", "x", "-o", "out.nc"], ["no-such-format", "mizrahi2024"]),
        (["import", "table", "x.csv", "-o", "out.nc", "--option", "metric"], ["'metric'"]),
        (["import", "table", "x.csv", "-o", "out.nc", "--option", "bogus=1"], ["bogus"]),
        (["collect", "no-such-collector"], ["no-such-collector", "hf", "openai"]),
        (["no-such-command"], ["no-such-command"]),
        ([], ["COMMAND"]),
    ],
)
def test_usage_errors_are_2_in_one_line(argv, words, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    one_line_error(capsys.readouterr().err, *words)


def test_a_bad_option_value_fails_before_any_work(monkeypatch, capsys):
    from rankstats.cli import stability

    def no_work(*args, **kwargs):
        raise AssertionError("the cube was opened")

    monkeypatch.setattr(stability, "load_cube", no_work)
    assert cli.main(["stability", "mizrahi2024", "--confidence-level", "1.5"]) == 2
    one_line_error(capsys.readouterr().err, "--confidence-level")


def test_unreadable_data_is_3(tmp_path, capsys):
    broken = tmp_path / "broken.nc"
    broken.write_text("nothing")
    assert cli.main(["info", str(broken)]) == 3
    one_line_error(capsys.readouterr().err, "broken.nc")
    table = tmp_path / "scores.csv"
    table.write_text("model,task,template,score\na,t,p,not a number\n")
    assert cli.main(["import", "table", str(table), "-o", str(tmp_path / "out.nc")]) == 3
    one_line_error(capsys.readouterr().err, "scores.csv")
    assert not (tmp_path / "out.nc").exists()


def test_the_command_line_script_returns_the_status(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rankstats.cli",
            "stability",
            "mizrahi2024",
            "--confidence-level",
            "1.5",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    one_line_error(done.stderr, "--confidence-level")


# ---- plugins: commands and collectors from entry points ------------------------------------


@pytest.fixture
def plugin(monkeypatch):
    """A module registering commands through the ``rankstats.commands`` entry points."""
    module = types.ModuleType("rankstats_test_plugin")

    def add(commands):
        parser = commands.add_parser("hello", help="say hello")
        parser.add_argument("name")
        parser.set_defaults(run=lambda arguments: print(f"hello {arguments.name}") or 0)

    def buggy(commands):
        parser = commands.add_parser("buggy", help="fails unexpectedly")
        parser.set_defaults(run=lambda arguments: {}["missing"])

    def broken(commands):
        raise RuntimeError("cannot start")

    module.add, module.buggy, module.broken = add, buggy, broken
    monkeypatch.setitem(sys.modules, module.__name__, module)
    points = [
        importlib.metadata.EntryPoint(name, f"{module.__name__}:{name}", cli.COMMANDS_GROUP)
        for name in ("add", "buggy", "broken")
    ]
    real = importlib.metadata.entry_points

    def entry_points(**selection):
        if selection.get("group") == cli.COMMANDS_GROUP:
            return points
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_plugin_commands_run_and_broken_ones_are_named(plugin, capsys):
    assert cli.main(["hello", "world"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "hello world\n"
    assert "command 'broken'" in captured.err and "cannot start" in captured.err


def test_a_bug_shows_its_traceback_and_a_distinct_status(plugin, capsys):
    assert cli.main(["buggy"]) == cli.EXIT_BUG == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: 'missing'" in err and "bug" in err


def test_estimate_is_a_rankstats_command(plugin):
    # the plugin group no longer lists estimate: rankstats registers it itself
    names = dict(subcommands(cli.build_parser()))
    assert {"estimate", "report", "stability", "hello"} <= set(names)
    assert "collect" not in names
    assert names["estimate"].get_default("run").__module__ == "rankstats.cli.estimate"


THIRD_PARTY = '''
"""A collector from another distribution: writes a cube of constant scores."""

def add_arguments(parser):
    parser.add_argument("--score", type=float, required=True)
    parser.add_argument("-o", "--output", required=True)


def run(arguments):
    import rankstats

    cube = rankstats.from_records([{"model": "m", "task": "t", "template": "p",
                                    "score": arguments.score}])
    rankstats.save(cube, arguments.output)
    print("third party wrote", arguments.output)
    return 0
'''


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    """A distribution installed in ``tmp_path``, declaring a collector as an entry point."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "thirdparty_collector.py").write_text(textwrap.dedent(THIRD_PARTY))
    info = site / "thirdparty_collector-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thirdparty-collector\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{rankstats_collectors.ENTRY_POINT_GROUP}]\nconstant = thirdparty_collector\n"
        "hollow = json:dumps\n"
    )
    monkeypatch.syspath_prepend(str(site))
    yield
    for name in ("constant", "hollow"):
        if name in rankstats_collectors._COLLECTORS._entries:
            rankstats_collectors.unregister(name)


def test_a_third_party_collector_runs_from_its_entry_point(third_party, tmp_path, capsys):
    assert {"constant", "hf", "openai"} <= set(rankstats_collectors.available())
    output = tmp_path / "constant.nc"
    assert cli.main(["collect", "constant", "--score", "0.25", "-o", str(output)]) == 0
    assert "third party wrote" in capsys.readouterr().out
    assert float(rankstats.open_cube(output)["score"].mean()) == 0.25
    assert cli.main(["collect", "constant", "--score", "high", "-o", str(output)]) == 2
    one_line_error(capsys.readouterr().err, "rankstats collect constant", "--score")
    assert cli.main(["collect", "hollow"]) == 3
    one_line_error(capsys.readouterr().err, "hollow", "add_arguments")


def test_the_collectors_are_declared_only_as_entry_points():
    declared = {
        e.name: e.value
        for e in importlib.metadata.entry_points(group=rankstats_collectors.ENTRY_POINT_GROUP)
    }
    assert declared["hf"] == "rankstats_collectors.hf.cli"
    assert declared["openai"] == "rankstats_collectors.openai.cli"
    from rankstats_collectors import cli as collect_command

    assert not hasattr(collect_command, "BACKENDS")
    assert rankstats_collectors.files._IMPORTERS._entries.keys() <= {
        e.name
        for e in importlib.metadata.entry_points(group=rankstats_collectors.files.ENTRY_POINT_GROUP)
    }


MISSING_EXTRA = """
import sys
sys.modules["torch"] = None  # as if torch were not installed
from rankstats.cli import main
print("status:", main(["collect", "hf", "--model", "m", "--samples", "s.jsonl",
                       "--templates", "t.jsonl", "-o", "cube.nc"]))
"""


def test_a_collector_whose_extra_is_missing_is_3_naming_the_extra():
    done = subprocess.run(
        [sys.executable, "-c", MISSING_EXTRA],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "status: 3" in done.stdout
    one_line_error(done.stderr, 'pip install "rankstats[hf]"')


# ---- one set of shared options --------------------------------------------------------------

TABLE_COMMANDS = {
    "report",
    "stability",
    "reproduce",
    "estimate",
    "edits",
    "info",
    "compare",
    "plan",
    "ranks",
    "claims",
    "submission",
    "frontier",
    "records",
}
RESAMPLING = {
    "report",
    "stability",
    "estimate",
    "compare",
    "ranks",
    "claims",
    "submission",
    "frontier",
    "records",
}


def test_every_command_dispatches_through_run():
    for name, parser in subcommands(cli.build_parser()):
        assert callable(parser.get_default("run")), name


def test_table_commands_share_the_output_options():
    commands = dict(subcommands(cli.build_parser()))
    for name in TABLE_COMMANDS:
        assert {"--json", "--csv", "--quiet"} <= flags(commands[name]), name
    for name, parser in commands.items():
        assert ("--n-resamples" in flags(parser)) == (name in RESAMPLING), name
        if name in RESAMPLING:
            assert parser.get_default("seed") is None
        helps = {action.dest: action.help for action in parser._actions}
        if name in TABLE_COMMANDS:
            # the same words in every command
            reference = {action.dest: action.help for action in commands["info"]._actions}
            assert helps["json"] == reference["json"] and helps["csv"] == reference["csv"]


def collector_parser(name):
    parser = cli.Parser(prog=f"rankstats collect {name}")
    rankstats_collectors.get(name).add_arguments(parser)
    return parser


def test_hf_and_openai_share_option_names_and_help():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("openai")
    hf, openai = collector_parser("hf"), collector_parser("openai")
    shared = {
        "--model",
        "--samples",
        "--templates",
        "--mode",
        "--scorer",
        "--max-new-tokens",
        "--cache",
        "--no-progress",
        "--output",
    }
    assert shared <= flags(hf) & flags(openai)
    helps = [
        {flag: action.help for action in parser._actions for flag in action.option_strings}
        for parser in (hf, openai)
    ]
    for flag in shared:
        assert helps[0][flag] == helps[1][flag], flag
    for retired in ("--scoring", "--max-tokens", "--tasks", "--repetitions", "--trials"):
        assert retired not in flags(hf) | flags(openai), retired
    assert {"--templates-per-sample", "--seed"} <= flags(openai)


def info_json(capsys, *extra):
    assert cli.main(["info", "mizrahi2024", *extra]) == 0
    return capsys.readouterr()


def test_json_dash_writes_one_document_to_stdout(capsys):
    out = info_json(capsys, "--json", "-").out
    document = json.loads(out)  # nothing but the document on stdout
    assert set(document) == {"attrs", "tables"}
    rows = document["tables"]["tasks"]
    assert {"task", "templates", "models"} <= set(rows[0])
    assert document["attrs"]["metric"]


def test_csv_dash_writes_every_table_after_a_header_line(capsys):
    out = info_json(capsys, "--csv", "-").out
    lines = out.splitlines()
    assert lines[0] == "# tasks" and lines[1] == "task,templates,models"


def test_csv_names_a_folder_and_json_a_file(tmp_path, capsys, cube_file):
    tables = tmp_path / "tables"
    assert (
        cli.main(
            [
                "stability",
                cube_file,
                "--n-resamples",
                "50",
                "--seed",
                "1",
                "--csv",
                str(tables),
                "--json",
                str(tmp_path / "board.json"),
                "--quiet",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert captured.out == ""
    assert sorted(p.name for p in tables.iterdir()) == [
        "leaderboard.csv",
        "leaders.csv",
        "left_out.csv",
    ]
    board = (tables / "leaderboard.csv").read_text().splitlines()
    assert board[0].startswith("model,task,") and len(board) == 1 + 3 * 2
    # every model ranked: the table of those left out has its header alone
    assert (tables / "left_out.csv").read_text().splitlines() == ["task,model,why"]
    document = json.loads((tmp_path / "board.json").read_text())
    assert document["attrs"]["seed"] == 1 and document["attrs"]["n_resamples"] == 50
    assert len(document["tables"]["leaderboard"]) == 3 * 2
    assert document["tables"]["left_out"] == []


def test_seed_is_drawn_printed_and_repeats_the_run(capsys, cube_file):
    assert cli.main(["stability", cube_file, "--n-resamples", "30", "--json", "-"]) == 0
    first = capsys.readouterr()
    seed = json.loads(first.out)["attrs"]["seed"]
    assert f"give --seed {seed} to repeat" in first.err
    assert (
        cli.main(
            ["stability", cube_file, "--n-resamples", "30", "--json", "-", "--seed", str(seed)]
        )
        == 0
    )
    again = capsys.readouterr()
    assert json.loads(again.out) == json.loads(first.out) and "give --seed" not in again.err


def _scores_csv(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(
        "model,task,template,sample,score\na,t,p1,s,3.0\na,t,p2,s,2.0\nb,t,p1,s,1.0\nb,t,p2,s,4.0\n"
    )
    return path


@pytest.mark.parametrize(("text", "stored"), [("no", 0), ("False", 0), ("0", 0), ("YES", 1)])
def test_import_parses_boolean_options_as_text(tmp_path, capsys, text, stored):
    scores, output = _scores_csv(tmp_path), tmp_path / "cube.nc"
    assert (
        cli.main(
            ["import", "table", str(scores), "-o", str(output), "-O", f"higher_is_better={text}"]
        )
        == 0
    )
    assert rankstats.open_cube(output).attrs["higher_is_better"] == stored


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("higher_is_better=maybe", "higher_is_better"),
        ("higher_is_better=off", "higher_is_better"),
        ("layout=diagonal", "layout"),
        ("no_such_option=1", "no_such_option"),
    ],
)
def test_import_refuses_a_bad_option_before_reading_and_keeps_the_output(
    tmp_path, capsys, option, named
):
    scores, output = _scores_csv(tmp_path), tmp_path / "cube.nc"
    output.write_bytes(b"previous output")
    assert cli.main(["import", "table", str(scores), "-o", str(output), "-O", option]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert output.read_bytes() == b"previous output"


def test_import_refuses_to_write_over_its_input(tmp_path, capsys):
    scores = _scores_csv(tmp_path)
    before = scores.read_bytes()
    assert cli.main(["import", "table", str(scores), "-o", str(scores)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert scores.read_bytes() == before


def test_import_replaces_a_write_protected_output_only_with_force(tmp_path, capsys):
    scores, output = _scores_csv(tmp_path), tmp_path / "cube.nc"
    output.write_bytes(b"protected")
    output.chmod(0o444)
    assert cli.main(["import", "table", str(scores), "-o", str(output)]) == 2
    assert output.read_bytes() == b"protected"
    assert cli.main(["import", "table", str(scores), "-o", str(output), "--force"]) == 0
    assert rankstats.open_cube(output).sizes["model"] == 2


def test_report_refuses_a_json_output_that_is_a_folder(tmp_path, capsys, cube_file):
    assert cli.main(["report", cube_file, "--json", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_progress_bars_can_be_turned_off():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("openai")
    commands = dict(subcommands(cli.build_parser()))
    for parser in (collector_parser("hf"), collector_parser("openai"), commands["paraphrase"]):
        assert "--no-progress" in flags(parser)


def test_openai_budget_plan_uses_the_glossary_flags(tmp_path, capsys):
    pytest.importorskip("openai")
    templates, samples = tmp_path / "templates.jsonl", tmp_path / "samples.jsonl"
    templates.write_text(
        "".join(
            json.dumps({"task": "parity", "id": str(i), "text": f"{i}: is {{x}} even?"}) + "\n"
            for i in range(4)
        )
    )
    samples.write_text(
        "".join(
            json.dumps(
                {"task": "parity", "id": str(i), "x": i, "gold": "yes" if i % 2 == 0 else "no"}
            )
            + "\n"
            for i in range(5)
        )
    )
    base = [
        "collect",
        "openai",
        "--model",
        "m",
        "--templates",
        str(templates),
        "--samples",
        str(samples),
        "--cache",
        str(tmp_path / "cache.jsonl"),
        "--dry-run",
    ]
    assert cli.main([*base, "--estimate", "avgp", "--templates-per-sample", "3"]) == 0
    assert "m parity: 15 calls" in capsys.readouterr().out
    assert cli.main([*base, "--estimate", "avgp", "--repetitions", "3"]) == 2
    one_line_error(capsys.readouterr().err, "--repetitions")
    assert cli.main([*base, "--estimate", "maxp", "--stages", "all"]) == 2
    one_line_error(capsys.readouterr().err, "--stages")
    assert cli.main([*base[:-3], "--max-tokens", "4"]) == 2
    one_line_error(capsys.readouterr().err, "--max-tokens")
    missing = [*base[:5], str(tmp_path / "none.jsonl"), *base[6:]]
    assert cli.main(missing) == 2
    one_line_error(capsys.readouterr().err, "none.jsonl")


def test_an_undeclared_command_checks_its_outputs_by_the_same_rule(tmp_path, cube_file):
    """``check_outputs``, for a plugin that does not declare its arguments, refuses the same."""
    from rankstats.errors import OutputError

    arguments = argparse.Namespace(json=None, csv=str(tmp_path), force=False)
    with pytest.raises(OutputError, match="contains the input"):
        cli.check_outputs(arguments, inputs=[cube_file])
    arguments = argparse.Namespace(json=None, csv=None, force=False)
    with pytest.raises(OutputError, match=r"--cache .* is also an input"):
        cli.check_outputs(arguments, inputs=[cube_file], cache=cube_file)
    cli.check_outputs(arguments, inputs=[cube_file], html=str(tmp_path / "report.html"))


def test_a_role_is_one_of_three():
    parser = cli.Parser(prog="demo")
    with pytest.raises(ValueError, match="role"):
        cli.declare(parser.add_argument("--x"), "written")
    with pytest.raises(ValueError, match="folder"):
        cli.declare(parser.add_argument("--y"), cli.INPUT, folder=True)
    assert cli.path_role(parser.add_argument("--z")) is None
