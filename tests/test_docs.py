"""The documentation site: it builds strictly, every page is in the navigation, and the
API reference, generated from the docstrings, documents every public name.

The examples on the pages are doctests, collected from ``docs/`` by pytest's
``--doctest-glob=*.md``, and checked by the root ``conftest.py``'s checker: a printed
number passes only when the computed one rounds to it. The site is built once
(``mkdocs build --strict``) for the tests that read it; they skip when mkdocs is not
installed. The ``rankstats`` command lines of the pages are those that
``docs/commands.toml`` lists for CI's user environment (``.ci/documented_commands.py``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"
API = DOCS / "api"
_ANCHOR = re.compile(r'id="((?:rankstats|rankstats_collectors)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"')
_INJECTION = re.compile(r"^::: ([\w.]+)", flags=re.MULTILINE)


def _nav_pages(entries) -> list[str]:
    """Every page path named in an mkdocs ``nav`` (a list of str or {title: entry})."""
    pages = []
    for entry in entries:
        if isinstance(entry, str):
            pages.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                if isinstance(value, str):
                    pages.append(value)
                else:
                    pages.extend(_nav_pages(value))
        else:
            pages.extend(_nav_pages(entry))
    return [page for page in pages if "://" not in page]


def _config() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def test_every_page_is_in_the_nav():
    nav = _nav_pages(_config()["nav"])
    pages = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
    assert pages, "docs/ holds no pages"
    missing = sorted(set(pages) - set(nav))
    assert not missing, f"pages not in the nav of mkdocs.yml: {missing}"


def test_every_nav_entry_exists():
    nav = _nav_pages(_config()["nav"])
    absent = [page for page in nav if not (DOCS / page).is_file()]
    assert not absent, f"nav entries without a page: {absent}"
    repeated = sorted({page for page in nav if nav.count(page) > 1})
    assert not repeated, f"pages listed twice in the nav: {repeated}"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once with ``mkdocs build --strict``."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install 'rankstats[docs]')")
    site = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    command += ["--config-file", str(CONFIG), "--site-dir", str(site)]
    completed = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, (
        f"mkdocs build --strict failed ({completed.returncode}):\n"
        f"{completed.stdout}\n{completed.stderr}"
    )
    return site


def test_site_builds_strictly(site):
    for page in _nav_pages(_config()["nav"]):
        built = site / page.removesuffix(".md")
        target = site / "index.html" if page == "index.md" else built / "index.html"
        if page.endswith("/index.md"):
            target = site / page.removesuffix("index.md") / "index.html"
        assert target.is_file(), f"{page} was not built to {target.relative_to(site)}"


def _api_html(site: Path) -> str:
    pages = sorted((site / "api").rglob("*.html"))
    assert pages, "the API reference was not built"
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def _anchors(site: Path) -> set[str]:
    """The identifier of every object the API pages document."""
    return set(_ANCHOR.findall(_api_html(site)))


def _resolve(identifier: str):
    """The object a dotted identifier names, importing the longest module prefix."""
    parts = identifier.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return None
        return value
    return None


def _documented_objects(site: Path) -> list:
    return [_resolve(anchor) for anchor in _anchors(site) if anchor.startswith("rankstats")]


def _is_documented(value, documented: list) -> bool:
    return any(value is other for other in documented)


def test_every_public_name_is_in_the_api_reference(site):
    import rankstats

    documented = _documented_objects(site)
    missing = [
        name
        for name in rankstats.__all__
        if not _is_documented(getattr(rankstats, name), documented)
    ]
    assert not missing, f"rankstats.__all__ names missing from docs/api/: {missing}"


def _static_all(module: str) -> list[str] | None:
    """``module.__all__`` read from its source (importing only its parent packages)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(target, "id", None) == "__all__" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return None


def _injected_modules() -> list[str]:
    found = []
    for page in sorted(API.glob("*.md")):
        for identifier in _INJECTION.findall(page.read_text(encoding="utf-8")):
            try:
                names = _static_all(identifier)
            except (ImportError, ValueError):
                names = None
            if names is not None:
                found.append(identifier)
    return found


def test_every_module_in_the_api_reference_shows_all_its_names(site):
    modules = _injected_modules()
    assert "rankstats.statistics" in modules and "rankstats_collectors" in modules
    anchors = _anchors(site)
    documented = _documented_objects(site)
    missing = []
    for module in modules:
        for name in _static_all(module):
            if f"{module}.{name}" in anchors or f"{module}.{name}.{name}" in anchors:
                continue  # the second: shown where a submodule of the same name hides it
            if module.startswith("rankstats") and _is_documented(
                getattr(importlib.import_module(module), name), documented
            ):
                continue  # shown under another identifier
            missing.append(f"{module}.{name}")
    assert not missing, f"names in __all__ that the API pages do not show: {missing}"


def test_statistics_show_their_filled_docstrings(site):
    """The decorator fills ``{nan_policy}`` and its kin at import time; the pages show the text."""
    from rankstats._statistic import SHARED_DOCS

    html = (site / "api" / "statistics" / "index.html").read_text(encoding="utf-8")
    unfilled = sorted(
        {key for key in SHARED_DOCS if re.search(r"[>\s]\{" + key + r"\}[<\s]", html)}
    )
    assert not unfilled, f"placeholders left in the statistics' reference: {unfilled}"
    assert "What to do with missing scores" in html  # the shared nan_policy text
    assert 'id="rankstats.statistics.kendall_w"' in html


def test_the_reference_links_and_typesets(site):
    html = (site / "api" / "statistics" / "index.html").read_text(encoding="utf-8")
    assert ":func:" not in html and ":math:" not in html and ".. math::" not in html
    assert 'class="arithmatex"' in html
    assert re.search(r'<a class="autorefs[^"]*" href="[^"]*#rankstats\.statistics\.friedman"', html)


# --- every documented command is run, and the list of them is the documentation's ---


def _commands_script():
    spec = importlib.util.spec_from_file_location(
        "documented_commands", ROOT / ".ci" / "documented_commands.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_documented_command_is_in_the_list_and_only_those():
    script = _commands_script()
    shown = script.documented()
    listed = {script.words(entry["shown"]) for entry in script.load()["command"]}
    assert len(shown) > 40 and ("rankstats", "plan", "mizrahi2024") in shown
    missing = sorted(
        " ".join(words) + f"  ({', '.join(shown[words])})" for words in set(shown) - listed
    )
    assert not missing, f"commands the docs show that docs/commands.toml lacks: {missing}"
    stale = sorted(" ".join(words) for words in listed - set(shown))
    assert not stale, f"commands in docs/commands.toml that no page shows: {stale}"


def test_the_command_lines_are_read_from_code_blocks_only():
    script = _commands_script()
    text = (
        "rankstats report cube.nc in prose is no command\n\n"
        "```bash\n"
        "rankstats import table a.csv \\\n    -o cube.nc   # a comment\n"
        "python -m pip install -e .\n"
        "```\n\n"
        "```console\n$ rankstats info 'my cube.nc'\n```\n"
    )
    lines = script.documented_lines(text)
    assert lines == [
        "rankstats import table a.csv -o cube.nc   # a comment",
        "rankstats info 'my cube.nc'",
    ]
    assert script.words(lines[0]) == ("rankstats", "import", "table", "a.csv", "-o", "cube.nc")
    assert script.words(lines[1])[-1] == "my cube.nc"


def test_the_list_refuses_a_command_listed_twice(tmp_path):
    script = _commands_script()
    twice = tmp_path / "commands.toml"
    twice.write_text(
        '[inputs]\n[[command]]\nshown = "rankstats info x.nc"\n'
        '[[command]]\nshown = "rankstats  info x.nc  # again"\n'
    )
    with pytest.raises(ValueError, match="listed twice"):
        script.load(twice)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[inputs]\n[[command]]\nshown = "rankstats info x.nc"\ngiven = ["x.nc"]\n')
    with pytest.raises(ValueError, match="which \\[inputs\\] does not make"):
        script.load(unknown)


def test_commands_that_cannot_run_say_why():
    entries = _commands_script().load()["command"]
    skipped = [entry for entry in entries if "skip" in entry]
    assert all(len(entry["skip"]) > 15 for entry in skipped)
    # only what needs the network, a model or a server is left out
    assert {entry["shown"].split()[1] for entry in skipped} <= {
        "collect",
        "paraphrase",
        "stability",
    }
    assert len(skipped) < len(entries) / 4


# --- the examples are checked exactly ---


def _checker_module():
    import _pytest.doctest

    checker = type(_pytest.doctest._get_checker())
    assert checker.__name__ == "RoundedNumberChecker", (
        "the doctests are not checked by the checker of the root conftest.py"
    )
    # the root conftest's namespace (its module name, "conftest", is not unique)
    return checker.check_output.__globals__


def _passes(want: str, got: str, flags: int = 0) -> bool:
    import doctest

    checker = _checker_module()["RoundedNumberChecker"]()
    return checker.check_output(want, got, flags | doctest.NORMALIZE_WHITESPACE)


@pytest.mark.parametrize(
    ("want", "got"),
    [
        ("3.\n", "3.4\n"),
        ("0.333\n", "0.3333333333333333\n"),
        ("[2. 4. 4. 4.]\n", "[2. 4. 4. 4.]\n"),
        ("array([0.81, 0.71])\n", "array([0.8100000001, 0.71      ])\n"),
        ("1.5e-03\n", "0.00149\n"),
        ("(6.0, 0.049787)\n", "(6.0, 0.0497871)\n"),
        ("version 1.2.3\n", "version 1.2.3\n"),
    ],
)
def test_the_checker_accepts_a_number_that_rounds_to_the_printed_one(want, got):
    assert _passes(want, got)


@pytest.mark.parametrize(
    ("want", "got"),
    [
        ("3.\n", "4.\n"),  # NUMBER would accept a whole unit
        ("3.\n", "3.6\n"),
        ("[2. 3. 3. 4.]\n", "[2. 4. 4. 4.]\n"),
        ("0.333\n", "0.334\n"),
        ("0.333\n", "0.3336\n"),
        ("0.5363\n", "0.5362\n"),
        ("1.5e-03\n", "0.0016\n"),
        ("3\n", "3.4\n"),  # an integer is text
        ("[2. 4. 4.]\n", "[2. 4. 4. 4.]\n"),  # another count of numbers
    ],
)
def test_the_checker_refuses_a_number_that_does_not_round_to_the_printed_one(want, got):
    assert not _passes(want, got)


def test_a_wrong_printed_number_fails_its_doctest():
    import doctest

    checker = _checker_module()["RoundedNumberChecker"]()
    parser = doctest.DocTestParser()
    for source, failures in [
        (">>> 4.0\n3.\n", 1),
        (">>> 3.4\n3.\n", 0),
        (">>> import numpy as np\n>>> print(np.array([2., 4, 4, 4]))\n[2. 3. 3. 4.]\n", 1),
    ]:
        runner = doctest.DocTestRunner(
            checker=checker, verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE
        )
        runner.run(parser.get_doctest(source, {}, "example", None, 0), out=lambda _: None)
        assert runner.failures == failures, source


def test_blocks_that_import_a_missing_oracle_are_skipped(monkeypatch):
    import doctest

    module = _checker_module()
    source = (
        ">>> x = 1\n\nprose between two blocks\n\n"
        ">>> import pingouin\n>>> pingouin.__name__\n'pingouin'\n\n"
        ">>> from statsmodels.stats import multitest\n\n"
    )
    test = doctest.DocTestParser().get_doctest(source, {}, "page", None, 0)
    monkeypatch.setitem(module, "_missing", lambda name: name == "pingouin")
    assert module["skip_blocks_without_oracles"](test) == 2
    assert [bool(e.options.get(doctest.SKIP)) for e in test.examples] == [False, True, True, False]


def test_the_examples_use_no_pytest_helpers():
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    modules = [*(ROOT / "rankstats").rglob("*.py"), *(ROOT / "rankstats_collectors").rglob("*.py")]
    used = [
        str(path.relative_to(ROOT))
        for path in [*pages, *modules]
        if re.search(
            r"getfixture\(|\bcapsys\b|\btmp_path\b.*>>>|>>>.*\btmp_path\b",
            path.read_text(encoding="utf-8"),
        )
    ]
    assert not used, f"examples a user cannot copy (pytest fixtures): {used}"
