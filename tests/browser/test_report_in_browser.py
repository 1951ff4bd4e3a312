"""HTML reports in a real headless Chromium: no console errors, no external request, accessible charts, legible.

Skips when no Chromium is installed (CI installs Debian's ``chromium``). Screenshots (light, dark,
print) go to the test's tmp directory; set ``REPORT_SCREENSHOTS=DIR`` to keep them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.cdp import Browser, chromium
from tests.render import worlds
from troubleshooter.report.render import render

BINARY = chromium()
pytestmark = pytest.mark.skipif(BINARY is None, reason="no chromium installed")

REPORTS = {"healthy": worlds.with_scaling, "many-findings": worlds.many_findings, "hung": worlds.hung,
           "64-ranks": lambda: worlds.synthetic_world(64)}

CHARTS = """[...document.querySelectorAll('svg.chart')].map(svg => {
  const ids = (svg.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean);
  const box = svg.getBoundingClientRect();
  return {role: svg.getAttribute('role'), title: svg.querySelector(':scope > title')?.textContent || '',
          label: ids.map(id => document.getElementById(id)?.textContent || '').join(' '),
          width: box.width, height: box.height, labels: svg.querySelectorAll('text').length};
})"""
# Text and background colours of the first chart label and its card, as rgb() strings.
COLOURS = """(() => { const t = document.querySelector('svg.chart text'); const card = t.closest('figure');
  return [getComputedStyle(t).fill, getComputedStyle(card).backgroundColor]; })()"""


def _luminance(rgb: str) -> float:
    parts = [int(float(v)) / 255 for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in parts]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.fixture(scope="module")
def browser():
    b = Browser(BINARY)
    yield b
    b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    keep = os.environ.get("REPORT_SCREENSHOTS")
    path = Path(keep) if keep else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("name", REPORTS)
def test_report_renders_cleanly_in_chromium(browser: Browser, shots: Path, tmp_path: Path, name: str) -> None:
    page = tmp_path / f"{name}.html"
    page.write_text(render(REPORTS[name](), "html"), encoding="utf-8")
    browser.call("Emulation.setEmulatedMedia", media="", features=[{"name": "prefers-color-scheme", "value": "light"}])
    browser.open(page.as_uri())
    assert browser.console_errors() == []
    external = [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:"))]
    assert external == [], f"the report fetched {external}"
    charts = browser.evaluate(CHARTS)
    assert charts, "no chart on the page"
    for chart in charts:
        assert chart["role"] == "img" and chart["title"].strip() and chart["title"] in chart["label"]
        assert chart["width"] > 300 and chart["height"] > 100 and chart["labels"] > 3
    light = browser.evaluate(COLOURS)
    assert _contrast(*light) >= 4.5, light
    browser.screenshot(shots / f"{name}-light.png")

    browser.call("Emulation.setEmulatedMedia", media="", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    dark = browser.evaluate(COLOURS)
    assert dark != light and _contrast(*dark) >= 4.5, dark
    browser.screenshot(shots / f"{name}-dark.png")

    browser.call("Emulation.setEmulatedMedia", media="print", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    printed = browser.evaluate(COLOURS)
    assert _contrast(*printed) >= 7, printed  # print is black on white whatever the screen scheme
    browser.screenshot(shots / f"{name}-print.png")
    assert all((shots / f"{name}-{mode}.png").stat().st_size > 10_000 for mode in ("light", "dark", "print"))


def test_hung_world_names_the_stuck_ranks_on_the_timeline(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "hung.html"
    page.write_text(render(worlds.hung(), "html"), encoding="utf-8")
    browser.call("Emulation.setEmulatedMedia", media="", features=[])
    browser.open(page.as_uri())
    texts = browser.evaluate("[...document.querySelectorAll('#chart-startup svg text')].map(t => t.textContent)")
    assert texts.count("no start-up report (stuck or crashed)") == 2 and "rank 3" in texts


def test_64_rank_labels_do_not_overlap(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "big.html"
    page.write_text(render(worlds.synthetic_world(64), "html"), encoding="utf-8")
    browser.call("Emulation.setEmulatedMedia", media="", features=[])
    browser.open(page.as_uri())
    boxes = browser.evaluate("""[...document.querySelectorAll('svg.chart')].map(svg =>
        [...svg.querySelectorAll('text[text-anchor=end]')].map(t => { const b = t.getBoundingClientRect();
          return [b.left, b.top, b.right, b.bottom]; }))""")
    for chart in boxes:
        for i, a in enumerate(chart):
            for b in chart[i + 1:]:
                overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
                assert not overlap, (a, b)


@pytest.mark.slow
def test_auto_report_of_this_machine_shows_the_three_charts(browser: Browser, shots: Path, tmp_path: Path) -> None:
    """``troubleshoot --auto -o r.html`` for real: start-up timeline, busbw with its band, per-rank step chart."""
    import re

    from troubleshooter.cli import main

    page = tmp_path / "r.html"
    main(["--auto", "-q", "-o", str(page)])
    html = page.read_text(encoding="utf-8")
    loaded = re.findall(r"""<(?!a\s)[a-z]+[^>]*\b(?:src|href)\s*=\s*["']?([^"' >]+)""", html)  # <a> links are not loads
    assert not [url for url in loaded if "http" in url], loaded
    browser.call("Emulation.setEmulatedMedia", media="", features=[])
    browser.open(page.as_uri())
    assert browser.console_errors() == [] and all(u.startswith("file:") for u in browser.requests())
    ids = browser.evaluate("[...document.querySelectorAll('figure.chart-box')].map(f => f.id)")
    assert ids[:3] == ["chart-startup", "chart-busbw", "chart-steps"]
    assert browser.evaluate("document.querySelectorAll('#chart-busbw rect.band > title').length") == 1
    assert browser.evaluate("document.querySelectorAll('#chart-steps rect.compute').length") >= 2
    browser.screenshot(shots / "auto-this-machine.png")


def test_64_ranks_print_within_an_a4_page_width(tmp_path: Path) -> None:
    page = tmp_path / "big.html"
    page.write_text(render(worlds.synthetic_world(64), "html"), encoding="utf-8")
    a4 = Browser(BINARY, width=794, height=1123)  # A4 at 96 dpi
    try:
        a4.call("Emulation.setEmulatedMedia", media="print", features=[])
        a4.open(page.as_uri())
        assert a4.evaluate("document.documentElement.scrollWidth") <= 794
    finally:
        a4.close()
