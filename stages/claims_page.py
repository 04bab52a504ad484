"""The claims page: reports/index.html, every paper's claims, verdicts and plots on one static page.

Self-contained and offline: inline CSS, no script, nothing fetched from the network. The plots are the committed
PNGs under data/<paper>/plots/, referenced by paths relative to reports/, so the page opens from the checkout in
any browser. claims.json is input: every string taken from it is escaped. Same inputs, same bytes (no dates).
"""
from __future__ import annotations

import math
import struct
from html import escape
from pathlib import Path
from urllib.parse import quote

from tasks.core.claims import VERDICTS, interval_end, number_text, read_claims, status_word, verdict_word
from tasks.core.io import atomic_outputs

from .report import claims_paths

PAGE = Path("reports") / "index.html"
NONE = "—"

STYLE = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --band: #f6f8fa; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1240px; padding: 24px 32px 64px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 22px; margin: 48px 0 4px; padding-top: 16px; border-top: 2px solid var(--line); }
.lead, .meta, .muted, figcaption { color: var(--muted); }
.meta { margin: 0 0 12px; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--band); padding: 1px 4px;
       border-radius: 4px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { text-align: left; vertical-align: top; padding: 6px 10px; border-bottom: 1px solid var(--line); }
th { background: var(--band); font-size: 13px; white-space: nowrap; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.summary { width: auto; min-width: 640px; }
.summary td.number, .summary th.number { min-width: 84px; }
.summary td.fail { color: #cf222e; font-weight: 700; }
.summary td.inconclusive { color: #9a6700; font-weight: 700; }
.summary td.zero { color: #b0b8c1; font-weight: 400; }
.summary tfoot th, .summary tfoot td { border-top: 2px solid var(--line); border-bottom: 0; background: none; }
.claims td:first-child { font-weight: 600; white-space: nowrap; }
.claims .statement { min-width: 260px; }
.setting, .reason, .method { display: block; font-size: 13px; color: var(--muted); }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-size: 12px; font-weight: 700;
         letter-spacing: .02em; color: #fff; white-space: nowrap; }
.badge.pass { background: #1a7f37; }
.badge.fail { background: #cf222e; }
.badge.inconclusive { background: #bf8700; }
.badge.undecided { background: #6e7781; }
.badge.report { background: #0969da; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); grid-auto-flow: row dense;
         gap: 16px; margin: 0; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; background: #fff; }
figure img { display: block; width: 100%; height: auto; }
figure.wide { grid-column: 1 / -1; }
figure.wide img { width: auto; max-width: 100%; }
figcaption { font-size: 13px; margin-top: 4px; }
"""


def paper_documents(root: Path) -> dict[str, dict | None]:
    """Every paper's claims document, None for a paper with no claims.json yet."""
    return {path.parent.name: next(iter(read_claims([path])), None) for path in claims_paths(root)}


def shown(value: float | None) -> str:
    """A number as the claims tables write it, but a dash for none and ∞ for an infinite one."""
    if value is None:
        return NONE
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return number_text(value)


def interval_cell(interval: dict | None) -> str:
    if not interval:
        return NONE
    low, high = interval_end(interval, "low"), interval_end(interval, "high")
    level = interval.get("level")  # the file's checks cover low and high only: the rest is shown as it comes
    how = [f"{shown(level * 100)}%" if isinstance(level, (int, float)) else "",
           f"n = {interval['n']}" if interval.get("n") is not None else "", str(interval.get("method") or "")]
    return (f"[{escape(shown(low))}, {escape(shown(high))}]"
            f'<span class="method">{escape(" · ".join(part for part in how if part))}</span>')


def verdict_cell(claim: dict) -> str:
    """The verdict as a coloured badge (its class is the verdict's word), then the reason in words."""
    badge = f'<span class="badge {escape(verdict_word(claim))}">{escape(status_word(claim))}</span>'
    reason = claim.get("reason")
    return badge + (f'<span class="reason">{escape(str(reason))}</span>' if reason else "")


def claim_row(claim: dict) -> str:
    setting = claim["details"].get("setting")
    statement = escape(claim["statement"]) + (f'<span class="setting">{escape(str(setting))}</span>' if setting else "")
    cells = [f"<td>{escape(claim['id'])}</td>", f'<td class="statement">{statement}</td>',
             f"<td>{escape(str(claim['paper_value']))}</td>", f'<td class="number">{escape(shown(claim["ours"]))}</td>',
             f"<td>{interval_cell(claim.get('interval'))}</td>",
             f'<td class="number">{escape(shown(claim["threshold"]))}</td>', f"<td>{verdict_cell(claim)}</td>"]
    return f'<tr class="claim">{"".join(cells)}</tr>'


CLAIM_COLUMNS = ("claim", "statement", "paper's figure", "ours", "interval", "threshold", "verdict")


def claims_table(document: dict) -> str:
    head = "".join(f'<th class="number">{column}</th>' if column in ("ours", "threshold") else f"<th>{column}</th>"
                   for column in CLAIM_COLUMNS)
    rows = "\n".join(claim_row(claim) for claim in document["claims"])
    return f'<table class="claims"><thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody></table>'


def plot_files(root: Path, paper: str) -> list[Path]:
    return sorted((root / "data" / paper / "plots").glob("*.png"))


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's header (its IHDR chunk comes first)."""
    with open(path, "rb") as handle:
        header = handle.read(24)
    return struct.unpack(">II", header[16:24]) if header[12:16] == b"IHDR" else (0, 0)


def figure(paper: str, plot: Path) -> str:
    """A plot by its path from reports/ (the page's folder), linked to the full-size image. A wide one (panels side
    by side) takes a row of its own: in a grid cell its panels would be too small to read."""
    source = escape(f"../data/{quote(paper)}/plots/{quote(plot.name)}")
    alt = escape(f"{paper}: {plot.stem.replace('_', ' ')}")
    width, height = png_size(plot)
    wide = ' class="wide"' if width >= 2 * height > 0 else ""
    return (f'<figure{wide}><a href="{source}"><img src="{source}" alt="{alt}" width="{width}" height="{height}"></a>'
            f"<figcaption>{escape(plot.name)}</figcaption></figure>")


def provenance(document: dict) -> str:
    """Profile, commit (and whether the tree had uncommitted changes) and MLflow run of a paper's results."""
    commit = document.get("commit")
    dirty = {True: "with uncommitted changes", False: "clean tree"}.get(document.get("git_dirty"), "tree state unknown")
    run = document.get("mlflow_run_id")
    return (f'<p class="meta">Profile <code>{escape(document["profile"])}</code> · commit '
            f"<code>{escape(str(commit)[:10]) if commit else NONE}</code> ({dirty}) · MLflow run "
            f"<code>{escape(str(run)) if run else NONE}</code></p>")


def paper_section(root: Path, paper: str, document: dict | None) -> str:
    heading = f'<section id="{escape(paper)}">\n<h2>{escape(paper)}</h2>'
    if document is None:
        return f'{heading}\n<p class="muted">Not run yet: <code>papers run {escape(paper)}</code>.</p>\n</section>'
    plots = "".join(figure(paper, plot) for plot in plot_files(root, paper))
    return "\n".join([heading, provenance(document), claims_table(document),
                      f'<div class="plots">{plots}</div>' if plots else '<p class="muted">No plots.</p>', "</section>"])


def verdict_counts(document: dict) -> dict[str, int]:
    words = [verdict_word(claim) for claim in document["claims"]]
    return {verdict: words.count(verdict) for verdict in VERDICTS}


def count_cells(counts: dict[str, int]) -> str:
    """The counts under their verdicts' columns, a zero greyed so that the others stand out."""
    return "".join(f'<td class="number {verdict}{" zero" if n == 0 else ""}">{n}</td>' for verdict, n in counts.items())


def summary_row(paper: str, document: dict | None) -> str:
    link = f'<td><a href="#{escape(paper)}">{escape(paper)}</a></td>'
    if document is None:
        return f'<tr class="paper">{link}<td>{NONE}</td><td colspan="{len(VERDICTS)}" class="muted">not run yet</td></tr>'
    return f'<tr class="paper">{link}<td>{escape(document["profile"])}</td>{count_cells(verdict_counts(document))}</tr>'


def summary(documents: dict[str, dict | None]) -> str:
    """One row per paper: its verdict counts, linked to its section; a total row under them."""
    head = "<th>paper</th><th>profile</th>" + "".join(f'<th class="number">{v}</th>' for v in VERDICTS)
    rows = "\n".join(summary_row(paper, document) for paper, document in documents.items())
    run = [document for document in documents.values() if document is not None]
    totals = {verdict: sum(verdict_counts(document)[verdict] for document in run) for verdict in VERDICTS}
    total = f'<tr class="total"><th>{len(run)} papers run</th><th></th>{count_cells(totals)}</tr>'
    return f'<table class="summary"><thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n<tfoot>{total}</tfoot></table>'


LEAD = ("Each paper's claims as its <code>data/&lt;paper&gt;/claims.json</code> records them: the paper's figure, ours "
        "with its interval, the gate and the verdict (<b>pass</b> when the interval clears the gate, <b>fail</b> when "
        "it lies wholly on the wrong side, <b>inconclusive</b> when it straddles, <b>undecided</b> when not run at a "
        "size meant to decide, <b>report</b> for a number with no gate). Generated from each claims.json by the "
        "report stage of <code>dvc repro</code> and by <code>papers report --html</code>.")


def claims_page(root: Path) -> str:
    documents = paper_documents(root)
    sections = "\n".join(paper_section(root, paper, document) for paper, document in documents.items())
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>Claims</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n<h1>Claims</h1>\n<p class=\"lead\">{LEAD}</p>\n"
            f"{summary(documents)}\n{sections}\n</body>\n</html>\n")


def write_claims_page(root: Path) -> Path:
    """Write reports/index.html (atomically, as write_report writes claims.md) and return its path."""
    text = claims_page(root)
    with atomic_outputs([root / PAGE]) as staged:
        staged[root / PAGE].write_text(text, encoding="utf-8")
    return root / PAGE
