"""The HTML report opens in a real browser: headless Chromium, without errors.

``rankstats report mizrahi2024 --html`` writes one self-contained page (tables,
and the figures as PNG ``data:`` URIs). Chromium loads it twice: once to dump
the DOM it built (the title, every table and every figure must be there), once
to take a screenshot (a real, non-blank PNG). Chromium's log must carry no
JavaScript error, console message or failed load. The tests skip when no
Chromium is installed, or without matplotlib (no figures).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 120  # seconds, per Chromium run and for writing the report
SECTIONS = [
    "conventions",
    "statistic_conventions",
    "dropped",
    "agreement",
    "pairs",
    "divergence",
    "metrics",
    "average_rank",
    "best_methods",
    "stability",
    "templates_needed",
    "variance",
    "filtering",
    "edits",
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATA_PNG = "data:image/png;base64,"

# What counts as an error in Chromium's log (--enable-logging=stderr --v=0):
# - a console message of the page, whatever its severity: the tag is
#   "ERROR:CONSOLE(12)" in older Chromium and "INFO:CONSOLE:12]" in newer ones,
#   which log console.error(), uncaught exceptions and Content Security Policy
#   violations all at INFO. The report has no script, so any console message
#   is a fault;
# - "Uncaught", an uncaught JavaScript exception, however it is tagged;
# - "net::ERR_", a failed load ("Page load failed: net::ERR_FILE_NOT_FOUND").
# Nothing else is: at --v=0 Chromium's own startup noise (the D-Bus bus and
# services, vaapi/GPU probing, the sandbox, the Debian wrapper script's shell
# messages) carries none of these markers, and the flags below turn off the
# background fetches (component updates, sync, other background networking)
# that could log a net::ERR_ of their own. Chromium does not log a failed
# subresource at --v=0, so the DOM test also checks that the page refers to
# nothing but data: URIs, whose contents it decodes.
ERROR_LINE = re.compile(r"\b(?:INFO|WARNING|ERROR|FATAL|VERBOSE\d*):CONSOLE\b|Uncaught|net::ERR_")


def _browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run ``command`` in its own process group; kill the whole group on timeout."""
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
        **kwargs,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(
                f"timed out after {TIMEOUT} s: {' '.join(command[:3])} ...\n{stderr[-4000:]}"
            )
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The report of the embedded Mizrahi et al. (2024) data, with its figures."""
    pytest.importorskip("matplotlib")
    if _browser() is None:
        pytest.skip(f"no Chromium found (looked for {', '.join(BROWSERS)})")
    path = tmp_path_factory.mktemp("report") / "report.html"
    script = Path(sys.executable).with_name("rankstats")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "rankstats.cli"]
    done = _run([*command, "report", "mizrahi2024", "--html", str(path), "--quiet"])
    assert done.returncode == 0, f"rankstats report failed:\n{done.stderr}"
    assert path.is_file() and path.stat().st_size > 0
    return path


def _chromium(page: Path, profile: Path, *flags: str) -> subprocess.CompletedProcess:
    command = [
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *flags,
        page.as_uri(),
    ]
    done = _run(command, cwd=profile)
    errors = [line for line in done.stderr.splitlines() if ERROR_LINE.search(line)]
    assert not errors, "Chromium reported errors:\n" + "\n".join(errors)
    assert done.returncode == 0, f"Chromium exited with {done.returncode}:\n{done.stderr}"
    return done


class _Page(HTMLParser):
    """The parts of a page the tests look at."""

    def __init__(self):
        super().__init__()
        self.h1: list[str] = []
        self.h2_ids: list[str] = []
        self.tables = 0
        self.images: list[dict] = []
        self.scripts = 0
        self.references: list[str] = []  # every src/href/... that could load something
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "h1":
            self._in_h1 = True
            self.h1.append("")
        elif tag == "h2":
            self.h2_ids.append(attributes.get("id", ""))
        elif tag == "table":
            self.tables += 1
        elif tag == "img":
            self.images.append(attributes)
        elif tag == "script":
            self.scripts += 1
        for name in ("src", "href", "srcset", "data", "poster", "background"):
            if attributes.get(name) is not None:
                self.references.append(attributes[name])

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_h1:
            self.h1[-1] += data


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; fails unless ``data`` is a PNG."""
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    assert data[12:16] == b"IHDR", "a PNG without its IHDR chunk first"
    return struct.unpack(">II", data[16:24])


def test_report_dom_in_chromium(report, tmp_path):
    written = _parse(report.read_text(encoding="utf-8"))
    done = _chromium(report, tmp_path, "--dump-dom")
    dom = _parse(done.stdout)

    assert [title.strip() for title in dom.h1] == [
        "Multi-prompt report: accuracy of 16 models × 25 tasks"
    ]
    assert dom.h2_ids == SECTIONS
    assert dom.tables == written.tables == len(SECTIONS)
    assert dom.scripts == 0

    # every figure: rank agreement, the least agreeing pair of each of the 25 tasks,
    # divergence, the metrics, the rank intervals of each task, the templates needed and
    # the variance components, each a PNG inlined as a data: URI
    assert len(dom.images) == len(written.images) == 1 + 25 + 1 + 1 + 25 + 1 + 1
    alts = [image.get("alt", "") for image in dom.images]
    assert {"agreement", "divergence", "metrics", "templates_needed", "variance"} <= set(alts)
    assert sum(alt.startswith("pairs:") for alt in alts) == 25
    assert sum(alt.startswith("stability:") for alt in alts) == 25
    for image in dom.images:
        source = image.get("src", "")
        assert source.startswith(DATA_PNG), f"{image.get('alt')}: not a data: URI"
        width, height = _png_size(base64.b64decode(source[len(DATA_PNG) :], validate=True))
        assert width > 0 and height > 0, image.get("alt")
    outside = [ref for ref in dom.references if not ref.startswith(("data:", "#"))]
    assert not outside, f"the page loads something from outside itself: {outside[:5]}"


def test_report_screenshot_in_chromium(report, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    profile.mkdir()
    _chromium(report, profile, f"--screenshot={shot}", "--window-size=1280,2000")

    assert shot.is_file() and shot.stat().st_size > 10_000
    assert _png_size(shot.read_bytes()) == (1280, 2000)
    pixels = image.imread(shot)
    assert float(pixels.std()) > 0.01, "the screenshot is blank"
