"""Orchestration overhead: a stage through `python -m stages` (params validation, Prefect flow
run against the local server, MLflow run, atomic outputs, artifacts) against the same
task-library calls in a bare process. Both are whole processes, timed from outside, in a
throwaway copy of the project at the smoke profile. Target: at most 1.0 s extra per stage.
Also a no-op `dvc repro` (nothing changed) of every paper, after reproducing them all at smoke:
target under 3 s.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tasks.core.provenance import copy_project

from .common import ROOT, write_result

REPEATS = 3
STAGES = ("solve", "evaluate")


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PAPERS_INVOCATION")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PAPERS_ROOT"] = str(root)
    return env


def timed(command: list[str], root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=root, env=environment(root), check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        root = copy_project(ROOT, Path(folder) / "repo")
        params = root / "params.yaml"
        params.write_text(params.read_text().replace("profile: default", "profile: smoke"))
        subprocess.run([sys.executable, "-m", "dvc", "repro", "stages/se3_sync/dvc.yaml"], cwd=root,
                       env=environment(root), check=True, capture_output=True)
        stages = {}
        for stage in STAGES:
            orchestrated = [timed([sys.executable, "-m", "stages", "se3_sync", stage], root) for _ in range(REPEATS)]
            bare = [timed([sys.executable, "-m", "benchmarks.bare_stage", stage], root) for _ in range(REPEATS)]
            stages[stage] = {"orchestrated_s": orchestrated, "bare_s": bare,
                             "overhead_s": float(np.median(orchestrated) - np.median(bare)),
                             "ratio": float(np.median(orchestrated) / np.median(bare))}
            print(f"{stage}: orchestrated {np.median(orchestrated):.2f} s, bare {np.median(bare):.2f} s, "
                  f"overhead {stages[stage]['overhead_s']:.2f} s", flush=True)
        imports = {name: timed([sys.executable, "-c", f"import {name}"], root) for name in ("prefect", "mlflow", "numpy")}
        subprocess.run([sys.executable, "-m", "dvc", "repro"], cwd=root, env=environment(root), check=True, capture_output=True)
        noop = [timed([sys.executable, "-m", "dvc", "repro"], root) for _ in range(REPEATS)]
        print(f"no-op dvc repro of every paper: {np.median(noop):.2f} s", flush=True)
    result = {"profile": "smoke", "repeats": REPEATS, "target_overhead_s": 1.0, "stages": stages,
              "import_process_s": imports, "noop_repro_all_s": noop, "target_noop_repro_s": 3.0}
    print(f"-> {write_result('orchestration_overhead', result)}")
    return result


if __name__ == "__main__":
    main()
