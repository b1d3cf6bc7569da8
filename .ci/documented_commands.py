"""Run every ``rankstats`` command the documentation shows, as a user would.

The commands are listed in ``docs/commands.toml``, each as the documentation prints
it and, where it names placeholder files, as it is run on the files of
``tests/data``. Each runs in a scratch folder of its own, through the ``rankstats``
script of the environment this script runs in, and must end with the status the
documentation promises (0 unless listed) and without a traceback. ``--help`` of
every command and subcommand runs too. Commands that cannot run here (a model
download, an API key, a server) are listed with the reason, and said so.

CI runs this in its "user" environment: ``.[all]`` and nothing of the ``test``
extra, so that a dependency only the tests bring in cannot hide a missing one.
It needs no pytest, only the standard library and the package.

Usage: ``python .ci/documented_commands.py [--keep FOLDER] [-k TEXT] [-j JOBS]``; exit 1 when
a command failed.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "docs" / "commands.toml"
DATA = ROOT / "tests" / "data"
# the documentation: the README and every page of docs/
PAGES = ("README.md", "docs/**/*.md")
TIMEOUT = 900  # seconds a single command may take before it counts as failed
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_COMMAND = re.compile(r"^(?:\$ )?rankstats(?:\s|$)")


def documented_lines(text: str) -> list[str]:
    """The ``rankstats`` command lines of a Markdown text's code blocks.

    A line continued with a backslash is joined to the next; a ``$ `` prompt is
    left out. Lines outside fenced code blocks (prose) are not commands.
    """
    found, fence, pending = [], None, None
    for line in text.splitlines():
        stripped = line.strip()
        opening = _FENCE.match(stripped)
        if opening and pending is None:
            fence = None if fence else opening.group(1)
            continue
        if fence is None:
            continue
        if pending is not None:
            pending += " " + stripped
        elif _COMMAND.match(stripped):
            pending = stripped.removeprefix("$ ")
        else:
            continue
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        found.append(pending)
        pending = None
    return found


def words(command: str) -> tuple[str, ...]:
    """A command line as the shell splits it, its trailing comment left out."""
    return tuple(shlex.split(command, comments=True))


def documented(root: Path = ROOT) -> dict[tuple[str, ...], list[str]]:
    """Every command line of the documentation (split into words) → the pages showing it."""
    shown: dict[tuple[str, ...], list[str]] = {}
    for pattern in PAGES:
        for page in sorted(root.glob(pattern)):
            for line in documented_lines(page.read_text(encoding="utf-8")):
                shown.setdefault(words(line), []).append(page.relative_to(root).as_posix())
    return shown


def load(path: Path = LIST) -> dict:
    """The list, checked: every entry has ``shown``, and none is listed twice."""
    listed = tomllib.loads(path.read_text(encoding="utf-8"))
    seen = set()
    for entry in listed["command"]:
        unknown = set(entry) - {"shown", "run", "given", "status", "skip"}
        if unknown or "shown" not in entry:
            raise ValueError(
                f"{path.name}: entry {entry} has unknown keys {sorted(unknown)} or no 'shown'"
            )
        key = words(entry["shown"])
        if key in seen:
            raise ValueError(f"{path.name}: {entry['shown']!r} is listed twice")
        seen.add(key)
        for name in entry.get("given", []):
            if name not in listed["inputs"]:
                raise ValueError(
                    f"{path.name}: {entry['shown']!r} is given {name!r}, "
                    "which [inputs] does not make"
                )
    return listed


def _program(word: str) -> str:
    """The executables of this environment: its ``rankstats`` script and its Python."""
    if word == "rankstats":
        script = Path(sys.executable).with_name("rankstats")
        return str(script) if script.exists() else shutil.which("rankstats") or word
    if word == "python":
        return sys.executable
    return word


def argv(command: str) -> list[str]:
    """The words of a command line to run: ``{data}`` filled in, globs expanded."""
    out = []
    for word in words(command.replace("{data}", str(DATA))):
        matches = sorted(glob.glob(word)) if any(c in word for c in "*?") else []
        out.extend(matches or [word])
    return [_program(out[0]), *out[1:]]


def run(command: list[str], folder: Path, status: int = 0) -> tuple[bool, str]:
    """Run one command in ``folder``; whether it ended as promised, and what it said."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return False, f"did not finish in {TIMEOUT} s"
    output = done.stdout + done.stderr
    seconds = time.monotonic() - started
    problems = []
    if done.returncode != status:
        problems.append(f"exit status {done.returncode}, expected {status}")
    if "Traceback (most recent call last)" in output:
        problems.append("a traceback")
    report = f"{seconds:.1f} s" if not problems else "; ".join(problems)
    if problems:
        report += "\n" + "\n".join("    " + line for line in output.strip().splitlines()[-20:])
    return not problems, report


def helps() -> list[list[str]]:
    """``--help`` of the program, of every command and of every subcommand."""
    from rankstats.cli import build_parser

    def walk(parser, prefix):
        found = [[*prefix, "--help"]]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += walk(sub, [*prefix, name])
        return found

    return walk(build_parser(), ["rankstats"])


def main(arguments: list[str] | None = None) -> int:
    """Run the listed commands; 1 when any failed."""
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--keep", type=Path, help="run in this folder and keep it")
    options.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=min(4, os.cpu_count() or 1),
        help="commands run at once (default: the cores, at most 4)",
    )
    options.add_argument(
        "-k", dest="only", default="", help="run only the commands whose shown text contains this"
    )
    options = options.parse_args(arguments)
    listed = load()
    scratch = options.keep or Path(tempfile.mkdtemp(prefix="rankstats-commands-"))
    scratch.mkdir(parents=True, exist_ok=True)
    failed, ran, skipped = [], 0, 0
    try:
        inputs = scratch / "inputs"
        inputs.mkdir(exist_ok=True)
        for name, how in listed["inputs"].items():
            if "text" in how:
                (inputs / name).write_text(how["text"], encoding="utf-8")
                continue
            for line in how["run"]:
                ok, report = run(argv(line), inputs)
                print(f"{'input' if ok else 'FAILED input'}: {name} ({report})", flush=True)
                if not ok:
                    failed.append(f"input {name}: {line}")
        chosen = [
            (number, entry)
            for number, entry in enumerate(listed["command"])
            if options.only in entry["shown"]
        ]
        for _, entry in chosen:
            if "skip" in entry:
                skipped += 1
                print(f"not run: {entry['shown']}\n    because it {entry['skip']}", flush=True)

        def one(number: int, entry: dict) -> tuple[bool, str]:
            folder = scratch / f"{number:02d}"
            folder.mkdir()
            for name in entry.get("given", []):
                shutil.copy(inputs / name, folder / name)
            return run(argv(entry.get("run", entry["shown"])), folder, entry.get("status", 0))

        # each command is one process; the pool keeps the cores busy
        with ThreadPoolExecutor(options.jobs) as pool:
            running = [
                (entry, pool.submit(one, number, entry))
                for number, entry in chosen
                if "skip" not in entry
            ]
            if not options.only:
                running += [
                    (
                        {"shown": shlex.join(command), "help": True},
                        pool.submit(run, argv(shlex.join(command)), scratch),
                    )
                    for command in helps()
                ]
            for entry, future in running:
                ok, report = future.result()
                ran += 1
                if not ok:
                    failed.append(entry["shown"])
                if entry.get("help") and ok:
                    continue
                shown = (
                    entry["shown"]
                    if "run" not in entry
                    else f"{entry['shown']}\n    as: {entry['run']}"
                )
                print(f"{'ok' if ok else 'FAILED'}: {shown} ({report})", flush=True)
        if not options.only:
            helped = all(entry["shown"] not in failed for entry, _ in running if entry.get("help"))
            print(
                f"--help of every command and subcommand: {'ok' if helped else 'FAILED'}",
                flush=True,
            )
    finally:
        if options.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"documented commands: {ran} ran, {len(failed)} failed, {skipped} not run here "
        "(listed above with the reason)"
    )
    for shown in failed:
        print(f"  failed: {shown}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
