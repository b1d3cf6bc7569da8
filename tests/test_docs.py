"""The documentation site: it builds strictly, and every page is in the navigation.

The examples on the pages are doctests, collected from ``docs/`` by pytest's
``--doctest-glob=*.md``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"


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


def test_site_builds_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install 'rankstats[docs]')")
    site = tmp_path / "site"
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
    for page in _nav_pages(_config()["nav"]):
        built = site / page.removesuffix(".md")
        target = site / "index.html" if page == "index.md" else built / "index.html"
        if page.endswith("/index.md"):
            target = site / page.removesuffix("index.md") / "index.html"
        assert target.is_file(), f"{page} was not built to {target.relative_to(site)}"
