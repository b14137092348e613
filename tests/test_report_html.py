"""``report.html``: one self-contained file, and what a real browser (headless Chromium) makes of
it: every chart decoded with pixels, no chart or table over another, the top of the report drawn.

Chromium comes from Debian's package (CI: ``apt-get install -y chromium``); without a chromium
binary the browser tests skip, saying so.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import matplotlib.image
import pytest

from mgmtbench.results.html import inline, markdown_to_html
from mgmtbench.results.report import write_report
from tests.report_support import every_transport_run

ROOT = Path(__file__).resolve().parents[1]
DOCS_RUNS = [ROOT / "docs" / "report-2026-11-22" / "nox-bench-run.json",
             ROOT / "docs" / "fleet-2026-11-22" / "nox-fleet-run.json"]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "apt-get update && apt-get install -y chromium"


def chromium() -> str:
    """The headless browser's binary, or skip the test saying how to get one."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(f"no chromium binary on PATH ({', '.join(BROWSERS)}): {INSTALL}")


def browse(page: Path, profile: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium on ``page`` (a file) with ``arguments``, after its scripts ran."""
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--hide-scrollbars", f"--user-data-dir={profile}", "--virtual-time-budget=10000",
         "--window-size=1280,1400", *arguments, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module", params=["every-transport", "docs"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a report on the synthetic every-transport run, or on the saved runs under
    docs/ (transport and concurrency: curves and the fleet projection)."""
    folder = tmp_path_factory.mktemp("report")
    runs = ([every_transport_run(folder / "every.json")] if request.param == "every-transport"
            else DOCS_RUNS)
    return write_report(runs, folder / "out").parent


def test_the_html_report_is_one_file_with_everything_inline(report: Path) -> None:
    page = (report / "report.html").read_text()
    markdown = (report / "report.md").read_text()
    charts = sorted(report.glob("*.png"))
    assert charts
    assert page.count('<img src="data:image/png;base64,') == markdown.count("![") == len(charts)
    for external in ('src="http', 'href="http', "<link", "@import", "url(", "src=\"//"):
        assert external not in page, external
    assert page.count("<table class=\"sortable\">") == len(
        [line for line in markdown.splitlines() if line.startswith("|---")])
    assert "sort by this column" in page  # the inline script
    assert page.index('id="findings"') < page.index("<h2 ")


def test_markdown_subset() -> None:
    assert inline("`a<b` **bold** *it* x * y") == \
        "<code>a&lt;b</code> <strong>bold</strong> <em>it</em> x * y"
    body, contents = markdown_to_html(
        "# T\n\nintro\n\n## One\n\n| a | b |\n|---|---|\n| 1 | - |\n\n- item\n\n"
        "![missing](nope.png)\n", Path("/nonexistent"))
    assert contents == [("one", "One")]
    assert '<section class="findings" id="findings">\n<p>intro</p>\n</section>' in body
    assert "<tbody>\n<tr><td>1</td><td>-</td></tr>\n</tbody>" in body
    assert "<ul><li>item</li></ul>" in body
    assert '<a href="nope.png">missing</a>' in body  # not a chart of this report: a link


def _boxes(dom: str) -> dict[str, Any]:
    found = re.search(r'<pre id="layout-check"[^>]*>(.*?)</pre>', dom, re.S)
    assert found, "the layout script did not run"
    text = found[1].replace("&quot;", '"').replace("&amp;", "&")
    data: dict[str, Any] = json.loads(text)
    return data


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["left"] < b["left"] + b["width"] - 0.5 and b["left"] < a["left"] + a["width"] - 0.5
            and a["top"] < b["top"] + b["height"] - 0.5 and b["top"] < a["top"] + a["height"] - 0.5)


def test_in_chromium_every_chart_has_pixels_and_nothing_overlaps(report: Path,
                                                                 tmp_path: Path) -> None:
    result = browse(report / "report.html", tmp_path / "profile", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    layout = _boxes(result.stdout)
    figures = [b for b in layout["boxes"] if b["kind"] == "figure"]
    tables = [b for b in layout["boxes"] if b["kind"] == "table"]
    assert len(figures) == len(list(report.glob("*.png")))
    assert tables
    for figure in figures:
        assert figure["complete"] is True, figure
        width, height = figure["natural"]
        assert min(width, height) > 100, figure  # decoded: a broken image is 0 x 0
        assert min(figure["width"], figure["height"]) > 100, figure  # drawn that size
    for box in layout["boxes"]:
        assert box["left"] >= 0, box
        assert box["left"] + box["width"] <= layout["viewport"] + 0.5, box  # inside the page
    for a, b in itertools.combinations(layout["boxes"], 2):
        assert not _overlap(a, b), (a, b)


def test_in_chromium_the_top_of_the_report_is_drawn(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "top.png"
    result = browse(report / "report.html", tmp_path / "profile", f"--screenshot={shot}")
    assert result.returncode == 0, result.stderr[-2000:]
    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[:2] == (1400, 1280)
    rows_with_ink = (pixels[:, :, :3].min(axis=2) < 0.5).any(axis=1).sum()
    assert rows_with_ink > 300  # text and charts, not a blank page
