"""The combined claims report: every paper's data/<paper>/claims.json in one table."""
from __future__ import annotations

from pathlib import Path

from tasks.core.claims import claims_markdown, read_claims
from tasks.core.io import atomic_outputs

from .spec import papers

REPORT = Path("reports") / "claims.md"


def claims_paths(root: Path) -> list[Path]:
    return [root / "data" / paper / "claims.json" for paper in papers(root)]


def write_report(root: Path) -> str:
    text = claims_markdown(read_claims(claims_paths(root)))
    with atomic_outputs([root / REPORT]) as staged:
        staged[root / REPORT].write_text(text)
    return text
