"""The HTML report opens in a real browser: headless Chromium, without errors.

``rankstats report mizrahi2024 --html`` writes one self-contained page (tables,
and the figures as PNG ``data:`` URIs). Chromium loads it to dump the DOM it
built (the title, the summary first, every table and every figure must be
there), and then, driven over the DevTools protocol on a pipe (plain
subprocess, no websocket, no extra package), at a desktop (1280 × 800) and a
phone (390 × 844) viewport, where the page itself is measured: the summary is
on the first screen (at desktop width the first screen is the summary), no
element makes the page scroll sideways, every figure has loaded and has
alternative text, every table has header cells. The measuring runs in the
browser through the protocol, so the page stays script-free. Chromium's log
must carry no JavaScript error, console message or failed load.

Screenshots of the first screen at both sizes are kept as artefacts: under the
folder named by the environment variable ``RANKSTATS_ARTIFACTS`` when it is set
(CI uploads it), else under the test's ``tmp_path``. The tests skip when no
Chromium is installed, or without matplotlib (no figures).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 120  # seconds, per Chromium run and for writing the report
SECTIONS = [
    "summary",
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
    "conventions",
    "statistic_conventions",
    "dropped",
]
#: The sections folded away in ``<details>``: the bookkeeping, after the results.
FOLDED = ["conventions", "statistic_conventions", "dropped"]
VIEWPORTS = {"desktop": (1280, 800, False), "phone": (390, 844, True)}
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

    # every figure: the summary, rank agreement, the least agreeing pair of each of the
    # 25 tasks, divergence, the metrics, the rank intervals of each task, the templates
    # needed and the variance components, each a PNG inlined as a data: URI
    assert len(dom.images) == len(written.images) == 1 + 1 + 25 + 1 + 1 + 25 + 1 + 1
    names = [image.get("title", "") for image in dom.images]
    assert names[0] == "summary"
    assert {"agreement", "divergence", "metrics", "templates_needed", "variance"} <= set(names)
    assert sum(name.startswith("pairs:") for name in names) == 25
    assert sum(name.startswith("stability:") for name in names) == 25
    assert all(image.get("alt") for image in dom.images)
    for image in dom.images:
        source = image.get("src", "")
        assert source.startswith(DATA_PNG), f"{image.get('alt')}: not a data: URI"
        width, height = _png_size(base64.b64decode(source[len(DATA_PNG) :], validate=True))
        assert width > 0 and height > 0, image.get("alt")
    outside = [ref for ref in dom.references if not ref.startswith(("data:", "#"))]
    assert not outside, f"the page loads something from outside itself: {outside[:5]}"


def _artifacts(tmp_path: Path) -> Path:
    """Where screenshots go: ``$RANKSTATS_ARTIFACTS`` (kept by CI), else ``tmp_path``."""
    folder = Path(os.environ.get("RANKSTATS_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class _DevTools:
    """Chromium driven over ``--remote-debugging-pipe``: JSON messages ending in NUL.

    Chromium reads commands on its file descriptor 3 and writes answers and
    events on 4. Every event is kept, so that console messages, exceptions and
    failed loads can be checked after the fact.
    """

    def __init__(self, profile: Path):
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def descriptors():  # the browser's 3 and 4, whatever numbers the pipes got here
            read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
            write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.process = subprocess.Popen(
            [
                _browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=descriptors,
            pass_fds=(3, 4),
            start_new_session=True,
            cwd=profile,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                pytest.fail("Chromium did not answer over the DevTools pipe in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                pytest.fail("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send a command and wait for its answer; the events met on the way are kept."""
        self._next += 1
        command = {"id": self._next, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        os.write(self._to_browser, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next:
                assert "error" not in message, f"{method}: {message['error']}"
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str) -> dict:
        """The first event ``method`` (one already received counts)."""
        deadline = time.monotonic() + TIMEOUT
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            message = self._message(deadline)
            self.events.append(message)
            if message.get("method") == method:
                return message

    def close(self) -> None:
        try:
            os.write(self._to_browser, json.dumps({"id": 0, "method": "Browser.close"}).encode())
            os.write(self._to_browser, b"\0")
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        finally:
            os.close(self._to_browser)
            os.close(self._from_browser)


# Runs in the page through Runtime.evaluate (the page itself carries no script).
MEASURE = """(() => {
  const viewport = {width: window.innerWidth, height: window.innerHeight};
  const top = (element) => element.getBoundingClientRect().top + window.scrollY;
  const summary = document.getElementById("summary");
  const sections = Array.from(document.querySelectorAll("h2"))
    .filter((h) => h.id !== "summary" && h.offsetParent !== null)
    .map((h) => [h.id, top(h)]);
  const lists = summary ? Array.from(summary.parentElement.querySelectorAll("ul")) : [];
  const inScrollBox = (element) => {
    for (let e = element.parentElement; e; e = e.parentElement) {
      if (getComputedStyle(e).overflowX === "auto" || getComputedStyle(e).overflowX === "scroll")
        return true;
    }
    return false;
  };
  const wide = Array.from(document.body.querySelectorAll("*"))
    .filter((e) => e.offsetParent !== null && !inScrollBox(e))
    .filter((e) => e.getBoundingClientRect().right > viewport.width + 0.5)
    .slice(0, 5)
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
  return {
    viewport,
    scrollWidth: document.documentElement.scrollWidth,
    summaryTop: summary ? top(summary) : null,
    firstListBottom: lists.length ? lists[0].getBoundingClientRect().bottom + window.scrollY : null,
    sections,
    wide,
    images: Array.from(document.images).map((img) => ({
      name: img.title, alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth,
    })),
    tables: Array.from(document.querySelectorAll("table")).map((table) => ({
      id: (table.closest("section, details") || {}).id || "",
      headers: table.querySelectorAll("thead th").length,
    })),
    scripts: document.scripts.length,
  };
})()"""


@pytest.fixture(scope="module")
def measured(report, tmp_path_factory) -> dict:
    """The page measured at each viewport, with a screenshot of its first screen."""
    out = {}
    profile = tmp_path_factory.mktemp("devtools")
    browser = _DevTools(profile)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session)
        for name, (width, height, mobile) in VIEWPORTS.items():
            browser.send(
                "Emulation.setDeviceMetricsOverride",
                session,
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=mobile,
            )
            browser.events = [e for e in browser.events if e.get("method") != "Page.loadEventFired"]
            browser.send("Page.navigate", session, url=report.as_uri())
            browser.wait_for("Page.loadEventFired")
            found = browser.send(
                "Runtime.evaluate", session, expression=MEASURE, returnByValue=True
            )
            assert "exceptionDetails" not in found, found
            shot = browser.send("Page.captureScreenshot", session, format="png")
            out[name] = {**found["result"]["value"], "screenshot": base64.b64decode(shot["data"])}
        out["events"] = browser.events
    finally:
        browser.close()
    return out


def test_no_console_message_exception_or_failed_load(measured):
    faults = [
        event
        for event in measured["events"]
        if event.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown")
        or (event.get("method") == "Log.entryAdded")
    ]
    assert not faults, faults[:3]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_report_measured_in_chromium(measured, viewport, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    page = measured[viewport]
    width, height, _ = VIEWPORTS[viewport]
    shot = _artifacts(tmp_path) / f"report-{viewport}-{width}x{height}.png"
    shot.write_bytes(page["screenshot"])
    assert page["viewport"] == {"width": width, "height": height}
    assert _png_size(page["screenshot"]) == (width, height)
    assert float(image.imread(shot).std()) > 0.01, "the screenshot is blank"

    # the summary is on the first screen; at desktop width the first screen is the summary
    assert page["summaryTop"] is not None and 0 <= page["summaryTop"] < height
    if viewport == "desktop":
        assert page["firstListBottom"] <= height, "the first lines of the summary are cut off"
        assert min(top for _, top in page["sections"]) >= height, page["sections"][:2]
    # the results come before the bookkeeping, which is folded away
    shown = [key for key, _ in page["sections"]]
    assert shown == [key for key in SECTIONS if key not in ("summary", *FOLDED)] + FOLDED

    # nothing makes the page scroll sideways: wide tables scroll in their own box
    assert page["scrollWidth"] <= width, page["wide"]
    assert not page["wide"], page["wide"]
    assert page["images"] and all(
        i["complete"] and i["naturalWidth"] > 0 and i["alt"] for i in page["images"]
    ), [i["name"] for i in page["images"] if not (i["complete"] and i["naturalWidth"] and i["alt"])]
    assert page["tables"] and all(t["headers"] > 0 for t in page["tables"]), page["tables"]
    assert page["scripts"] == 0
