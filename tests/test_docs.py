"""The documentation site: it builds strictly, every page is in the navigation, and the
API reference, generated from the docstrings, documents every public name.

The examples on the pages are doctests, collected from ``docs/`` by pytest's
``--doctest-glob=*.md``. The site is built once (``mkdocs build --strict``) for
the tests that read it; they skip when mkdocs is not installed.
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
    missing = [name for name in rankstats.__all__
               if not _is_documented(getattr(rankstats, name), documented)]
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
    unfilled = sorted({key for key in SHARED_DOCS
                       if re.search(r"[>\s]\{" + key + r"\}[<\s]", html)})
    assert not unfilled, f"placeholders left in the statistics' reference: {unfilled}"
    assert "What to do with missing scores" in html  # the shared nan_policy text
    assert 'id="rankstats.statistics.kendall_w"' in html


def test_the_reference_links_and_typesets(site):
    html = (site / "api" / "statistics" / "index.html").read_text(encoding="utf-8")
    assert ":func:" not in html and ":math:" not in html and ".. math::" not in html
    assert 'class="arithmatex"' in html
    assert re.search(r'<a class="autorefs[^"]*" href="[^"]*#rankstats\.statistics\.friedman"',
                     html)
