"""What each paper costs CI: its smoke pipeline, reproduced alone in a throwaway copy, against the budget.

CI (`.ci/run`, 2 cores) must stay under 20 minutes with all 19 papers. The suite reproduces every
paper's smoke pipeline once (one session fixture) and runs the unit tests; so a paper may spend
at most SMOKE_BUDGET_S on its smoke repro (about 20 s of work and the orchestration of its stages)
and about 15 s on its own tests. This benchmark times the first part per paper and per stage (from
DVC's own output), so a paper over its share is found before CI grows past the budget.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stages.spec import papers
from tasks.core.provenance import copy_project

from .common import ROOT, write_result
from .orchestration import environment

SMOKE_BUDGET_S = 30.0
CI_BUDGET_S = 20 * 60
PAPERS_PLANNED = 19


def timed_repro(root: Path, paper: str) -> tuple[float, dict[str, float]]:
    """Wall time of `dvc repro stages/<paper>/dvc.yaml`, and per stage (between DVC's `Running stage` lines)."""
    stages = {}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "dvc", "repro", f"stages/{paper}/dvc.yaml"], cwd=root,
                               env=environment(root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    current, since = None, start
    for line in process.stdout:
        found = re.match(r"Running stage '(?:stages/\S+:)?([^']+)'", line)
        if found:
            now = time.perf_counter()
            if current:
                stages[current] = now - since
            current, since = found.group(1), now
    if process.wait() != 0:
        raise RuntimeError(f"smoke repro of {paper} failed")
    total = time.perf_counter() - start
    if current:
        stages[current] = start + total - since
    return total, stages


def main(only: list[str] | None = None) -> dict:
    """`python -m benchmarks.ci_budget [PAPER ...]`: every paper, or the ones named."""
    per_paper = {}
    with tempfile.TemporaryDirectory() as folder:
        root = copy_project(ROOT, Path(folder) / "repo")
        params = root / "params.yaml"
        params.write_text(re.sub(r"(?m)^profile:.*$", "profile: smoke", params.read_text()))
        for paper in only or papers(root):
            total, stages = timed_repro(root, paper)
            per_paper[paper] = {"smoke_repro_s": total, "stages_s": stages, "within_budget": total <= SMOKE_BUDGET_S}
            print(f"{paper}: {total:.1f} s ({', '.join(f'{k} {v:.1f}' for k, v in stages.items())})"
                  f"{'' if total <= SMOKE_BUDGET_S else '  OVER BUDGET'}", flush=True)
    result = {"smoke_budget_s": SMOKE_BUDGET_S, "ci_budget_s": CI_BUDGET_S, "papers_planned": PAPERS_PLANNED,
              "papers": per_paper, "total_smoke_s": sum(p["smoke_repro_s"] for p in per_paper.values())}
    print(f"-> {write_result('ci_budget', result)}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
