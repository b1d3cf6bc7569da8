"""No command destroys its input: every declared output against every declared input.

The walk reads the parsers themselves (``rankstats.cli.build_parser()``, the plugin
commands it loads, and the parser of every installed collector of ``rankstats
collect``), so a new command, collector or path option is attacked without a new
test. For each command, each output option is pointed at each input option's real
file: the same path, a path inside it (a zarr store, a results folder), a folder
holding it, the same file through a symbolic link and through a hard link. The
command must exit 2 with one line naming both options and the path, before any
work or request, and leave the input byte for byte as it was.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import pytest

import rankstats
import rankstats_collectors
from rankstats import cli

pytest.importorskip("openai")

from fake_openai import FakeOpenAI

KEY = "sk-test-outputs-do-not-leak"
ENV = "RANKSTATS_TEST_OUTPUTS_KEY"

#: Tokens of a metavar that say an argument names a file or folder.
PATH_WORDS = ("PATH", "FOLDER", "CUBE", "FILE", "JSONL")

#: Values of required arguments that name no path, by ``dest``.
FILLERS = {
    "format": "table",
    "study": "mizrahi2024",
    "model": "m",
    "estimates": "estimate",
    "standard_errors": "standard_error",
}


# ---- real inputs -----------------------------------------------------------------------------


def small_cube():
    return rankstats.from_records(
        [
            {
                "model": model,
                "task": "t",
                "template": template,
                "sample": sample,
                "score": float((sample + template + ord(model)) % 3 != 0),
            }
            for model in "abc"
            for template in range(3)
            for sample in range(4)
        ],
        metric="accuracy",
    )


#: Cubes saved once (``.nc`` and ``.zarr``), copied for each case: saving is the slow part.
SAVED: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def saved_cubes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    for suffix in (".nc", ".zarr"):
        SAVED[suffix] = rankstats.save(small_cube(), folder / f"cube{suffix}")
    yield
    SAVED.clear()


def write_cube(path: Path) -> Path:
    if path.suffix not in SAVED:
        return rankstats.save(small_cube(), path)
    if SAVED[path.suffix].is_dir():
        shutil.copytree(SAVED[path.suffix], path)
    else:
        shutil.copyfile(SAVED[path.suffix], path)
    return path


def write_samples(path: Path) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {"task": "parity", "id": f"s{i}", "x": i, "gold": "yes" if i % 2 == 0 else "no"}
            )
            + "\n"
            for i in range(4)
        )
    )
    return path


def write_templates(path: Path) -> Path:
    path.write_text(
        "".join(
            json.dumps({"task": "parity", "id": str(i), "text": f"{i}: is {{x}} even?"}) + "\n"
            for i in range(3)
        )
    )
    return path


def write_conventions(path: Path) -> Path:
    path.write_text(json.dumps({"kendall_w": {"ties": "min"}}))
    return path


def write_scores(path: Path) -> Path:
    path.write_text("model,task,template,sample,score\na,t,p1,s,1\nb,t,p1,s,0\n")
    return path


def write_estimates(path: Path) -> Path:
    path.write_text("model,estimate,standard_error\na,0.8,0.05\nb,0.6,0.04\nc,0.5,0.06\n")
    return path


def write_covariance(path: Path) -> Path:
    path.write_text("model,a,b,c\na,0.0025,0,0\nb,0,0.0016,0\nc,0,0,0.0036\n")
    return path


def write_cost(path: Path) -> Path:
    path.write_text("model,cost\na,1\nb,2\nc,3\n")
    return path


def write_cache(path: Path) -> Path:
    from rankstats_collectors.cache import ResponseCache

    ResponseCache(path).put(ResponseCache.key({"prompt": "hi"}), {"response": "hello"})
    return path


#: ``dest`` → (file name, writer) of a real input; a cube for any other input.
INPUTS = {
    "samples": ("samples.jsonl", write_samples),
    "templates": ("templates.jsonl", write_templates),
    "conventions": ("conventions.json", write_conventions),
    "paths": ("scores.csv", write_scores),
    "cache": ("cache.jsonl", write_cache),
    "table": ("estimates.csv", write_estimates),
    "covariance": ("covariance.csv", write_covariance),
    "cost": ("cost.csv", write_cost),
}

#: ``dest`` → (folder name, writer) of an input that may be a folder: a zarr store, a
#: results folder. Outputs are also pointed inside these.
FOLDER_INPUTS = {
    "paths": ("results", lambda path: (path.mkdir(), write_scores(path / "scores.csv"))),
}


def make_input(action, folder: Path, *, store: bool = False) -> Path:
    """A real input for ``action`` in ``folder``; ``store``: its folder form."""
    folder.mkdir(parents=True, exist_ok=True)
    if store:
        name, write = FOLDER_INPUTS.get(action.dest, ("cube.zarr", write_cube))
    else:
        name, write = INPUTS.get(action.dest, ("cube.nc", write_cube))
    write(folder / name)
    return folder / name


def snapshot(path: Path) -> dict:
    """Every file under ``path`` (or ``path`` itself) → its bytes."""
    path = Path(path).resolve()
    if path.is_dir():
        return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
    return {Path(): path.read_bytes()}


# ---- the walk ------------------------------------------------------------------------------


def subcommands(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def collector_parser(name):
    parser = cli.Parser(prog=f"rankstats collect {name}")
    rankstats_collectors.get(name).add_arguments(parser)
    return parser


def commands():
    """``(argv prefix, parser)`` of every command, and of every collector for ``collect``."""
    found = []
    for name, parser in subcommands(cli.build_parser()):
        found.append(((name,), parser))
        if name == "collect":  # its options are the collector's, parsed once it is loaded
            for collector in rankstats_collectors.available():
                try:
                    found.append((("collect", collector), collector_parser(collector)))
                except ImportError:  # a collector whose extra is not installed
                    continue
    return found


def declared(parser):
    roles = [(action, cli.path_role(action)) for action in parser._actions]
    inputs = [action for action, role in roles if role and role.reads]
    outputs = [action for action, role in roles if role and role.writes]
    return inputs, outputs


def label(action) -> str:
    """How the error names an argument: its longest option, or its metavar."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return action.metavar


def is_required(action) -> bool:
    if action.option_strings:
        return action.required
    return action.nargs not in ("?", "*")


#: The variants of one clash, each building ``(input value, output value, what the error
#: says)`` from a tmp folder, the input and output actions.
def same(tmp, given, written):
    path = make_input(given, tmp / "in")
    return path, path, "is also an input"


def inside(tmp, given, written):
    store = make_input(given, tmp / "in", store=True)
    name = "tables" if cli.path_role(written).folder else "out.json"
    return store, store / name, "lies inside"


def contains(tmp, given, written):
    path = make_input(given, tmp / "holder")
    return path, tmp / "holder", "contains"


def through_a_symbolic_link(tmp, given, written):
    path = make_input(given, tmp / "in")
    link = tmp / f"link{path.suffix}"
    link.symlink_to(path)
    return link, path, "is also an input"


def to_a_symbolic_link(tmp, given, written):
    path = make_input(given, tmp / "in")
    link = tmp / f"link{path.suffix}"
    link.symlink_to(path)
    return path, link, "is also an input"


def through_a_hard_link(tmp, given, written):
    path = make_input(given, tmp / "in")
    hard = tmp / f"hard{path.suffix}"
    os.link(path, hard)
    return path, hard, "is also an input"


VARIANTS = {
    "same": same,
    "inside": inside,
    "contains": contains,
    "through a symbolic link": through_a_symbolic_link,
    "to a symbolic link": to_a_symbolic_link,
    "through a hard link": through_a_hard_link,
}


#: Every command's parser, by its argv prefix: what the walk attacks.
PARSERS = dict(commands())


def clashes():
    """Every (command, output, input) a parser declares, as pytest params."""
    cases = []
    for prefix, parser in PARSERS.items():
        inputs, outputs = declared(parser)
        for written in outputs:
            for given in inputs:
                if given is written:
                    continue
                for variant in VARIANTS:
                    if variant == "inside" and not (
                        given.dest in FOLDER_INPUTS or given.dest not in INPUTS
                    ):
                        continue  # a file (samples, templates) has no inside
                    cases.append(
                        pytest.param(
                            prefix,
                            written.dest,
                            given.dest,
                            variant,
                            id=f"{' '.join(prefix)}:{label(written)}:{label(given)}:{variant}",
                        )
                    )
    return cases


CLASHES = clashes()


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI(KEY)
    server.url = server.start()
    yield server
    server.stop()


def argv_for(prefix, parser, values: dict, extra=()) -> list[str]:
    """The command line giving ``values`` (dest → value or list) and every required argument."""
    positionals, optionals = [], []
    values = dict(values)
    for group in parser._mutually_exclusive_groups:
        # a required group (one of --standard-errors, --covariance): give the first member
        # that has a value, unless the case gives one
        if group.required and not any(a.dest in values for a in group._group_actions):
            member = next(a for a in group._group_actions if a.dest in FILLERS)
            values[member.dest] = FILLERS[member.dest]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.dest in values:
            value = values[action.dest]
        elif is_required(action):
            assert action.dest in FILLERS, (
                f"{' '.join(prefix)}: no value for the required argument {label(action)}; "
                "add one to FILLERS"
            )
            value = FILLERS[action.dest]
        else:
            continue
        value = [str(v) for v in (value if isinstance(value, list) else [value])]
        if action.option_strings:
            flag = label(action)
            for one in value:
                optionals += [flag, one]
        else:
            positionals += value
    return [*prefix, *positionals, *optionals, *extra]


def required_paths(parser, tmp, skip) -> dict:
    """A real file for every required input, a new path for every required output."""
    inputs, outputs = declared(parser)
    paths = {
        action.dest: tmp / "out" / action.dest
        for action in outputs
        if is_required(action) and action.dest not in skip
    }
    paths.update(
        {
            action.dest: make_input(action, tmp / f"required-{action.dest}")
            for action in inputs
            if is_required(action) and action.dest not in skip
        }
    )
    return paths


@pytest.mark.parametrize(("prefix", "output", "input_", "variant"), CLASHES)
def test_no_output_may_destroy_an_input(
    prefix, output, input_, variant, tmp_path, capsys, fake, monkeypatch
):
    monkeypatch.setenv(ENV, KEY)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    parser = PARSERS[prefix]
    actions = {action.dest: action for action in parser._actions}
    written, given = actions[output], actions[input_]
    value, target, relation = VARIANTS[variant](tmp_path, given, written)
    (tmp_path / "out").mkdir()
    values = {
        **required_paths(parser, tmp_path, {given.dest, output}),
        given.dest: value,
        output: target,
    }
    if given.nargs in ("+", "*") or isinstance(given.default, list):
        values[given.dest] = [value]
    extra = (
        ("--base-url", fake.url, "--api-key-env", ENV, "--no-progress")
        if prefix == ("collect", "openai")
        else ()
    )
    before = snapshot(value)
    requests = len(fake.log)

    assert cli.main(argv_for(prefix, parser, values, extra)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in (label(written), label(given), str(target), relation):
        assert word in err, (word, err)
    assert snapshot(value) == before
    assert len(fake.log) == requests, "a request was sent before the clash was refused"


def test_the_walk_covers_every_command_and_the_reported_attacks():
    walked = {
        (prefix, output, input_) for prefix, output, input_, _ in (case.values for case in CLASHES)
    }
    for case in [
        (("report",), "json", "cube"),
        (("plan",), "json", "cube"),
        (("stability",), "json", "cube"),
        (("info",), "json", "cube"),
        (("report",), "html", "cube"),
        (("estimate",), "figure", "cube"),
        (("report",), "csv", "cube"),
        (("stability",), "figures", "cube"),
        (("compare",), "json", "b"),
        (("import",), "output", "paths"),
        (("report",), "json", "conventions"),
        (("edits",), "figure", "cube"),
        (("paraphrase",), "output", "cache"),
        (("paraphrase",), "cache", "templates"),
    ]:
        assert case in walked, case
    collectors = {prefix for prefix, _, _ in walked if prefix[0] == "collect"}
    assert ("collect", "openai") in collectors
    assert (("collect", "openai"), "output", "cache") in walked
    assert (("collect", "openai"), "cache", "samples") in walked


def test_every_path_argument_is_declared():
    """An argument whose metavar names a path, or ``-o``, has a role; so the walk sees it."""
    undeclared = []
    for prefix, parser in PARSERS.items():
        for action in parser._actions:
            metavars = action.metavar if isinstance(action.metavar, tuple) else (action.metavar,)
            looks_like_a_path = "-o" in action.option_strings or any(
                word in str(metavar) for metavar in metavars for word in PATH_WORDS
            )
            if looks_like_a_path and cli.path_role(action) is None:
                undeclared.append(f"{' '.join(prefix)} {label(action)}")
    assert not undeclared, f"path arguments without a declared role: {undeclared}"


def test_collect_openai_with_the_cache_as_output_sends_nothing(tmp_path, capsys, fake, monkeypatch):
    """``-o X --cache X``: refused before any request, and X is never made."""
    monkeypatch.setenv(ENV, KEY)
    samples = write_samples(tmp_path / "samples.jsonl")
    templates = write_templates(tmp_path / "templates.jsonl")
    both = tmp_path / "run.nc"
    requests = len(fake.log)
    assert (
        cli.main(
            [
                "collect",
                "openai",
                "--model",
                "m",
                "--samples",
                str(samples),
                "--templates",
                str(templates),
                "-o",
                str(both),
                "--cache",
                str(both),
                "--base-url",
                fake.url,
                "--api-key-env",
                ENV,
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "-o/--output" in err and "--cache" in err and str(both) in err, err
    assert len(fake.log) == requests and not both.exists()


def test_a_cache_that_is_the_samples_file_is_named_as_such(tmp_path, capsys, fake, monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    samples = write_samples(tmp_path / "samples.jsonl")
    templates = write_templates(tmp_path / "templates.jsonl")
    before, requests = samples.read_bytes(), len(fake.log)
    assert (
        cli.main(
            [
                "collect",
                "openai",
                "--model",
                "m",
                "--samples",
                str(samples),
                "--templates",
                str(templates),
                "-o",
                str(tmp_path / "run.nc"),
                "--cache",
                str(samples),
                "--base-url",
                fake.url,
                "--api-key-env",
                ENV,
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--cache" in err and "--samples" in err and "is also an input" in err, err
    assert "damaged" not in err
    assert samples.read_bytes() == before and len(fake.log) == requests


def test_names_and_standard_output_are_not_paths(tmp_path, capsys, monkeypatch):
    """An example's name, a keyword and '-' name no file, so they never clash."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["info", "mizrahi2024", "--quiet", "--json", "mizrahi2024"]) == 0
    assert (tmp_path / "mizrahi2024").is_file()  # the example was read, then this written
    cube = write_cube(tmp_path / "cube.nc")
    assert cli.main(["info", str(cube), "--json", "-"]) == 0
    json.loads(capsys.readouterr().out)


def test_a_plugin_command_declaring_its_paths_is_checked_too(tmp_path, capsys, monkeypatch):
    """A command added through the entry-point group gets the same check, run by ``main``."""
    ran = []

    def add(commands):
        parser = commands.add_parser("mine")
        cli.add_input(parser, "source", metavar="PATH")
        cli.add_output(parser, "--to", metavar="PATH")
        parser.set_defaults(run=lambda arguments: ran.append(arguments) or 0)

    class Entry:
        name, value = "mine", "tests:add"

        @staticmethod
        def load():
            return add

    import importlib.metadata

    real = importlib.metadata.entry_points
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda group=None, **kw: (
            [Entry] if group == cli.COMMANDS_GROUP else real(group=group, **kw)
        ),
    )
    source = write_scores(tmp_path / "source.csv")
    assert cli.main(["mine", str(source), "--to", str(source)]) == 2
    assert "--to" in capsys.readouterr().err and not ran
    assert cli.main(["mine", str(source), "--to", str(tmp_path / "other.csv")]) == 0 and ran


def test_the_check_is_what_protects_the_input(tmp_path, monkeypatch):
    """With the overlap test broken, a clash goes through: the walk above can fail."""
    import rankstats.io

    cube = write_cube(tmp_path / "cube.nc")
    monkeypatch.setattr(rankstats.io, "_overlap", lambda output, given: None)
    assert cli.main(["info", str(cube), "--quiet", "--json", str(cube)]) == 0
    assert not cube.read_bytes().startswith(b"\x89HDF")
