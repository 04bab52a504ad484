"""The claims page (`papers report --html`, reports/index.html): one section per paper with its claims, verdict
badges and plots, every string from claims.json escaped, plots by paths relative to reports/; and in a real browser
(headless Chromium) the same structure, and the plots drawn."""
from __future__ import annotations

import json
import math
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from stages.claims_page import PAGE, claims_page, write_claims_page

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")

HOSTILE = '<script>alert("claims.json is input")</script>'
MAGENTA, CYAN = (255, 0, 255), (0, 255, 255)  # colours no page style uses: seen in a screenshot, the plot was drawn


def claim(cid: str, ours: float | None, **fields) -> dict:
    return {"id": cid, "statement": f"statement of {cid}", "paper_value": "Table 1: 0.5", "ours": ours,
            "threshold": 0.5, "details": {}} | fields


def interval(low: float | None, high: float | None) -> dict:
    return {"low": low, "high": high, "n": 10, "method": "paired bootstrap over 10 seeds", "level": 0.95}


NEW_SHAPE = [
    claim("C1", 0.7, verdict="pass", reason="the 95% interval [0.6, 0.8] lies in >= 0.5", interval=interval(0.6, 0.8),
          passed=True, details={"setting": "d = 10"}),
    claim("C2", math.inf, verdict="inconclusive", reason="straddles >= 0.5", interval=interval(0.4, None), passed=None),
    claim("C3", None, verdict="undecided", reason="not run: smoke", interval=None, passed=None),
    claim("C4", 3.0, threshold=None, verdict="report", reason="no gate", interval=None, passed=None),
]
OLD_SHAPE = [claim("C1", 0.7, passed=True), claim("C2", 0.1, passed=False), claim("C3", None, passed=None)]
DOCUMENTS = {
    "hostile": [claim("C1", 1.0, statement=HOSTILE, paper_value='"5 < 6" & more', verdict="fail",
                      reason="<b>not bold</b>", interval=None, passed=False)],
    "newshape": NEW_SHAPE,
    "oldshape": OLD_SHAPE,
}
PLOTS = {"newshape": {"loss_curves.png": (MAGENTA, 480, 320), "accuracy.png": (CYAN, 480, 320)},
         "oldshape": {"errors.png": ((40, 40, 40), 480, 320), "panels.png": ((90, 90, 90), 960, 240)}}  # colour, size
NOT_RUN = "notrun"


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour, written by hand: the test needs no imaging library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixels = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of four papers (stages/<paper>/dvc.yaml): three with claims and plots, one not run yet."""
    root = tmp_path / "project"
    for paper in (*DOCUMENTS, NOT_RUN):
        (root / "stages" / paper).mkdir(parents=True)
        (root / "stages" / paper / "dvc.yaml").write_text("stages: {}\n")
    for paper, claims in DOCUMENTS.items():
        document = {"paper": paper, "profile": "default", "commit": "0123456789abcdef", "git_dirty": paper == "oldshape",
                    "mlflow_run_id": f"run-of-{paper}", "claims": claims}
        (root / "data" / paper).mkdir(parents=True)
        (root / "data" / paper / "claims.json").write_text(json.dumps(document))  # C2's ours: Infinity
    for paper, plots in PLOTS.items():
        (root / "data" / paper / "plots").mkdir()
        for name, (colour, width, height) in plots.items():
            (root / "data" / paper / "plots" / name).write_bytes(solid_png(width, height, colour))
    return root


class Page(HTMLParser):
    """What a reader sees of the page: its sections with their claim rows, badges, images and text, and whatever
    would run or load from elsewhere (scripts, external sources)."""

    def __init__(self, html: str):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self.summary_links: list[str] = []
        self.scripts = 0
        self.external: list[str] = []
        self._section: dict | None = None
        self._badge: list[str] | None = None
        self._caption = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href"):
            if (attributes.get(name) or "").startswith(("http:", "https:", "//")):
                self.external.append(attributes[name])
        if tag == "section":
            self._section = self.sections[attributes["id"]] = {"rows": 0, "badges": [], "images": [], "captions": [],
                                                               "text": ""}
        elif self._section is None:
            if tag == "a" and (attributes.get("href") or "").startswith("#"):
                self.summary_links.append(attributes["href"][1:])
        elif tag == "tr" and "claim" in classes:
            self._section["rows"] += 1
        elif tag == "span" and "badge" in classes:
            self._badge = [c for c in classes if c != "badge"]
        elif tag == "img":
            self._section["images"].append((attributes.get("src"), attributes.get("alt")))
        elif tag == "figcaption":
            self._caption = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None
        elif tag == "figcaption":
            self._caption = False

    def handle_data(self, data: str) -> None:
        if self._section is None:
            return
        self._section["text"] += data
        if self._badge is not None:
            self._section["badges"].append((*self._badge, data))
            self._badge = None
        if self._caption:
            self._section["captions"].append(data)


def check_structure(page: Page) -> None:
    """One section per paper, linked from the summary; one row and one badge per claim; the not-run paper said so."""
    assert list(page.sections) == ["hostile", "newshape", NOT_RUN, "oldshape"]
    assert page.summary_links == list(page.sections)
    assert {paper: s["rows"] for paper, s in page.sections.items()} == {"hostile": 1, "newshape": 4, NOT_RUN: 0,
                                                                         "oldshape": 3}
    assert page.sections["newshape"]["badges"] == [("pass", "pass"), ("inconclusive", "inconclusive"),
                                                   ("undecided", "undecided"), ("report", "report")]
    assert page.sections["oldshape"]["badges"] == [("pass", "pass"), ("fail", "FAIL"), ("undecided", "undecided")]
    assert "Not run yet" in page.sections[NOT_RUN]["text"]
    assert page.scripts == 0 and page.external == []


def test_page_shows_every_paper_its_claims_verdicts_and_plots(project):
    html = claims_page(project)
    page = Page(html)
    check_structure(page)
    hostile = page.sections["hostile"]
    assert HOSTILE in hostile["text"] and '"5 < 6" & more' in hostile["text"] and "<b>not bold</b>" in hostile["text"]
    assert "<script>" not in html and "&lt;script&gt;" in html
    newshape = page.sections["newshape"]["text"]
    assert "[0.6, 0.8]" in newshape and "[0.4, ∞]" in newshape and "n = 10" in newshape and "∞" in newshape
    assert "—" in newshape and "d = 10" in newshape and "run-of-newshape" in newshape and "0123456789" in newshape
    assert "uncommitted changes" in page.sections["oldshape"]["text"]
    for paper, plots in PLOTS.items():
        images = page.sections[paper]["images"]
        assert sorted(src.rsplit("/", 1)[-1] for src, _ in images) == sorted(plots) == page.sections[paper]["captions"]
        for src, alt in images:
            assert src.startswith("../data/") and (project / "reports" / src).resolve().is_file() and alt
    # panels side by side get a row of their own
    assert html.count('<figure class="wide">') == 1 and '<figure class="wide"><a href="../data/oldshape/plots/panels.png">' in html
    assert 'width="960" height="240"' in html


def test_page_is_written_atomically_and_the_same_inputs_give_the_same_bytes(project):
    path = write_claims_page(project)
    assert path == project / PAGE and path.read_text(encoding="utf-8") == claims_page(project)
    assert [p.name for p in path.parent.iterdir()] == ["index.html"]  # no staging folder left behind
    first = path.read_bytes()
    assert write_claims_page(project).read_bytes() == first  # no date or time on the page


def test_papers_report_html_writes_the_page_and_prints_where(project, monkeypatch):
    from typer.testing import CliRunner

    from stages import cli

    monkeypatch.setattr(cli, "ROOT", project)
    done = CliRunner().invoke(cli.app, ["report", "--html"])
    assert done.exit_code == 0, done.output
    assert (project / PAGE).is_file() and (project / PAGE).as_uri() in done.output


def chromium(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Headless Chromium, offline and with a throwaway profile, on `arguments`."""
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'chromium-profile'}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@needs_chromium
def test_chromium_renders_one_section_per_paper_and_one_row_per_claim(project, tmp_path):
    page = write_claims_page(project)
    done = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    check_structure(Page(done.stdout))


@pytest.mark.slow
@needs_chromium
def test_chromium_screenshot_draws_the_plots_and_badges(project, tmp_path):
    image = pytest.importorskip("PIL.Image")
    page, shot = write_claims_page(project), tmp_path / "page.png"
    done = chromium(tmp_path, "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    with image.open(shot) as picture:
        colours = {colour: n for n, colour in picture.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert len(colours) > 50  # text, badges, rules: not a blank page
    plot_area = 200 * 100  # each plot shows at least this many pixels of its own colour: it loaded
    assert colours.get(MAGENTA, 0) > plot_area and colours.get(CYAN, 0) > plot_area
    assert colours.get((0x1A, 0x7F, 0x37), 0) > 100 and colours.get((0xCF, 0x22, 0x2E), 0) > 100  # pass, fail badges
