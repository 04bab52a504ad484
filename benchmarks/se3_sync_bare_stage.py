"""The task-library calls of a se3_sync stage in a bare process: no Prefect flow run, no
MLflow, no validation beyond building the params object. The orchestration benchmark times
this process against `python -m stages se3_sync <stage>` for each stage of STAGES."""
from __future__ import annotations

import sys
import tempfile
from itertools import product
from pathlib import Path

from flows.se3_sync import pipeline as se3_sync
from tasks.core.claims import claims_document, headline_metrics
from tasks.core.io import repo_root, write_json
from tasks.core.params import load_paper_params
from tasks.core.stage import StageContext
from tasks.sync.methods import METHODS
from tasks.sync.store import load_instance, save_result

DATA = Path("data") / "se3_sync"


def solve(params: se3_sync.Params, out: Path) -> None:
    root = repo_root()
    for path, method in product(sorted((root / DATA / "instances").glob("*.npz")), params.methods):
        options = se3_sync._solver_options(method, params.solver)
        save_result(out / f"{method}__{path.stem}.npz", METHODS[method](load_instance(path).graph, **options))
    variants = se3_sync.timing_variants(params.solver, params.timing.eig_matched_tol)
    write_json(out / "timing.json", se3_sync.time_runs.fn(sorted((root / DATA / "timing_instances").glob("*.npz")),
                                                          variants, params.timing.repeats))


def evaluate(params: se3_sync.Params, out: Path) -> None:
    outputs = {name: out / name for name in ("claims.json", "errors.csv", "error_vs_noise.csv", "plots", "metrics.json")}
    context = StageContext(repo_root(), "se3_sync", "smoke", "bare", "cpu", ("instances", "runs", "timing.json"), outputs)
    report = se3_sync.evaluate.fn(params, context)
    write_json(outputs["claims.json"], claims_document("se3_sync", "smoke", "bare", report.claims))
    write_json(outputs["metrics.json"], headline_metrics(report.claims, **report.headline))


STAGES = {"solve": solve, "evaluate": evaluate}

if __name__ == "__main__":
    params = load_paper_params(repo_root(), "se3_sync", "smoke", se3_sync.Params)
    with tempfile.TemporaryDirectory() as folder:
        STAGES[sys.argv[1]](params, Path(folder))
