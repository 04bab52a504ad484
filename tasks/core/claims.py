"""Claim checks: one shape for every paper's claims.json, and the combined report."""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path



@dataclass
class Claim:
    """A paper's claim checked side by side against its baselines.

    passed is True/False as measured, or None when the profile is too small to decide.
    """

    id: str
    statement: str
    paper_value: str
    ours: float | None
    threshold: float | None
    passed: bool | None
    details: dict = field(default_factory=dict)


def decided(ok: bool, decide: bool, *values) -> bool | None:
    """A claim's verdict: `ok` as measured when the profile decides and every number behind it
    exists (none of `values` is None); None (undecided) otherwise."""
    return bool(ok) if decide and all(v is not None for v in values) else None


def median_of(values: Iterable[float]) -> float | None:
    """Median of the values (over seeds, graphs, instances), None when there are none."""
    values = list(values)
    import numpy as np  # here: `papers report` loads this module and must start without numpy

    return float(np.median(values)) if values else None


def median_where(rows: Iterable[dict], key: str, **where) -> float | None:
    """Median of row[key] over the rows whose fields equal `where` (optimizer="muon", ...); None when none match."""
    return median_of(row[key] for row in rows if all(row.get(k) == v for k, v in where.items()))


def claims_document(paper: str, profile: str, commit: str, claims: list[Claim]) -> dict:
    return {"paper": paper, "profile": profile, "commit": commit, "claims": [asdict(c) for c in claims]}


def headline_metrics(claims: list[Claim], **numbers: float | None) -> dict:
    """A paper's metrics.json: what `dvc metrics show` and `dvc exp show` list for it, one screen per paper.

    Each claim's measured value (`C1`) and verdict (`C1.pass`: 1 pass, 0 fail, absent when undecided),
    then the few headline numbers the paper names; the details stay in claims.json and MLflow.
    """
    if len(numbers) > MAX_HEADLINE_NUMBERS:
        raise ValueError(f"{len(numbers)} headline numbers: metrics.json keeps at most {MAX_HEADLINE_NUMBERS}")
    metrics: dict = {}
    for claim in claims:
        metrics[claim.id] = claim.ours
        if claim.passed is not None:
            metrics[f"{claim.id}.pass"] = int(claim.passed)
    return metrics | numbers


MAX_HEADLINE_NUMBERS = 6


def status_word(passed: bool | None) -> str:
    return {True: "pass", False: "FAIL", None: "undecided"}[passed]


def _number(value) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def claims_rows(document: dict) -> list[tuple[str, ...]]:
    """(paper, id, statement, paper's figure, ours, threshold, status) per claim."""
    return [
        (document["paper"], c["id"], c["statement"], str(c["paper_value"]), _number(c["ours"]),
         _number(c["threshold"]), status_word(c["passed"]))
        for c in document["claims"]
    ]


def read_claims(paths: list[Path]) -> list[dict]:
    return [json.loads(p.read_text()) for p in paths if p.exists()]


def _markdown_rows(document: dict) -> list[tuple[str, ...]]:
    """claims_rows with each statement followed by its setting, cells safe inside a markdown table."""
    rows = []
    for claim, row in zip(document["claims"], claims_rows(document)):
        paper, cid, statement, *rest = (cell.replace("|", "\\|") for cell in row)
        if claim["details"].get("setting"):
            statement += f" ({claim['details']['setting']})"
        rows.append((paper, cid, statement, *rest))
    return rows


def claims_markdown(documents: list[dict]) -> str:
    lines = ["# Claims", "", "| paper | profile | claim | statement | paper's figure | ours | threshold | status |",
             "|---|---|---|---|---|---|---|---|"]
    for document in documents:
        for paper, cid, statement, paper_value, ours, threshold, status in _markdown_rows(document):
            lines.append(f"| {paper} | {document['profile']} | {cid} | {statement} | {paper_value} | {ours} | {threshold} | {status} |")
    return "\n".join(lines) + "\n"


def paper_results_markdown(document: dict) -> list[str]:
    """One paper's claims as the table its README shows (stages/readme.py)."""
    lines = ["| claim | statement | paper's figure | ours | threshold | result |", "|---|---|---|---|---|---|"]
    lines += [f"| {cid} | {statement} | {paper_value} | {ours} | {threshold} | {status} |"
              for _, cid, statement, paper_value, ours, threshold, status in _markdown_rows(document)]
    return lines
