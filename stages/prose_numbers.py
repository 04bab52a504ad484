"""Findings prose that cannot go stale: every measured number a paper README quotes in its findings sections
("What we found", "What we measured", "Results") must be held by a committed file of the paper.

A number counts as held when it is, at the precision written, a number of the paper's claims.json (values, details
and the numbers inside their strings), of its other committed tables and JSON under data/<paper>/, of a committed
benchmark JSON the README cites, of its params.yaml, or of the README's own "What the paper claims" section (the
paper's figures). Only numbers that look measured are checked: a decimal point, an exponent or a percent sign
("0.21", "7.7e-6", "38%"); counts and sizes ("80 steps") are settings. The generated results block is skipped:
it is generated from claims.json.
"""
from __future__ import annotations

import csv
import json
import math
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import yaml

from .readme import BEGIN, END, readme_path

MEASURED = re.compile(r"(?<![\w.\-/`])(\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:\.\d+)?[eE][-+]?\d+|\d+(?:\.\d+)?%)(?![\w`])")
ANY_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
FINDINGS = re.compile(r"^## .*(what we found|what we measured|results)", re.IGNORECASE)
PAPER_SECTION = re.compile(r"^## .*paper claims", re.IGNORECASE)
CITED_BENCHMARK = re.compile(r"benchmarks/results/[\w.-]+\.json")


def numbers_of(value, found: list[float]) -> list[float]:
    """Every finite number in a JSON-like value, the ones inside its strings too (magnitudes: prose drops signs)."""
    if isinstance(value, bool):
        return found
    if isinstance(value, (int, float)):
        if math.isfinite(value):
            found.append(abs(float(value)))
    elif isinstance(value, str):
        found.extend(float(match.group()) for match in ANY_NUMBER.finditer(value))
    elif isinstance(value, dict):
        for item in value.values():
            numbers_of(item, found)
    elif isinstance(value, list):
        for item in value:
            numbers_of(item, found)
    return found


def _csv_numbers(path: Path) -> list[float]:
    found = []
    with open(path, newline="") as handle:
        for row in csv.reader(handle):
            for cell in row:
                try:
                    found.append(abs(float(cell)))
                except ValueError:
                    pass
    return [value for value in found if math.isfinite(value)]


def committed_files(root: Path, *paths: str) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *paths], cwd=root, capture_output=True, text=True, check=True)
    return [root / name for name in listed.stdout.split()]


def sections(text: str) -> dict[str, str]:
    """Each `## ` heading -> the text under it (the generated results block left out)."""
    text = re.sub(re.escape(BEGIN.split("{paper}")[0]) + r".*?" + re.escape(END), "", text, flags=re.DOTALL)
    found, heading = {}, ""
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line
            found[heading] = ""
        elif heading:
            found[heading] += line + "\n"
    return found


def held_numbers(root: Path, paper: str, readme: str) -> list[float]:
    """What the README may quote: see the module's docstring."""
    folder = f"data/{paper}"
    held = numbers_of(json.loads((root / folder / "claims.json").read_text()), [])
    numbers_of(yaml.safe_load((root / "stages" / paper / "params.yaml").read_text()), held)
    cited = sorted(set(CITED_BENCHMARK.findall(readme)))
    for path in committed_files(root, folder, *cited) if cited else committed_files(root, folder):
        if path.suffix == ".json":
            numbers_of(json.loads(path.read_text()), held)
        elif path.suffix == ".csv":
            held += _csv_numbers(path)
    for heading, body in sections(readme).items():
        if PAPER_SECTION.search(heading):
            numbers_of(body, held)
    return held


def _is_held(token: str, held: Iterable[float]) -> bool:
    """Whether `token` ("0.21", "7.7e-6", "38%") is some held number rounded as written (a percentage may also be
    a held fraction)."""
    text = token.rstrip("%")
    mantissa = text.lower().partition("e")[0]
    decimals = len(mantissa.partition(".")[2])
    value = float(text)
    scale = 10 ** math.floor(math.log10(value)) if "e" in text.lower() and value else 1.0
    half = 0.5 * 10 ** -decimals * scale * (1 + 1e-9)
    targets = [(value, half)] + ([(value / 100, half / 100)] if token.endswith("%") else [])
    return any(abs(number - target) <= tolerance for number in held for target, tolerance in targets)


def unheld_numbers(root: Path, paper: str) -> list[str]:
    """The measured numbers of the README's findings that no committed file of the paper holds, as
    'heading: number'."""
    readme = readme_path(root, paper).read_text()
    held = held_numbers(root, paper, readme)
    return [f"{heading.removeprefix('## ')}: {match.group(1)}"
            for heading, body in sections(readme).items() if FINDINGS.search(heading)
            for match in MEASURED.finditer(body) if not _is_held(match.group(1), held)]
