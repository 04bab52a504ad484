"""The combined claims report: every paper's data/<paper>/claims.json in one table (reports/claims.md) and on one
page with its plots (reports/index.html, stages/claims_page.py)."""
from __future__ import annotations

from pathlib import Path

from tasks.core.claims import claims_markdown, read_claims
from tasks.core.io import atomic_outputs

from .spec import papers

REPORT = Path("reports") / "claims.md"


def claims_paths(root: Path) -> list[Path]:
    return [root / "data" / paper / "claims.json" for paper in papers(root)]


def write_report(root: Path) -> str:
    """Write the claims table and the claims page together; return the table."""
    from .claims_page import PAGE, claims_page  # it reads claims_paths from here

    text, page = claims_markdown(read_claims(claims_paths(root))), claims_page(root)
    with atomic_outputs([root / REPORT, root / PAGE]) as staged:
        staged[root / REPORT].write_text(text)
        staged[root / PAGE].write_text(page, encoding="utf-8")
    return text
