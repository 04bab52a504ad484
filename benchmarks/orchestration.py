"""Orchestration overhead: a stage through `python -m stages` (params validation, Prefect flow
run against the local server, MLflow run, atomic outputs, artifacts) against the same
task-library calls in a bare process, for the first paper with such a bare twin of its stages
(benchmarks/<paper>_bare_stage.py, its STAGES). All are whole processes, timed from outside, in a
throwaway copy of the project at the smoke profile: the stage as DVC runs it (in a fork of the
warm host, stages/warm.py), the stage in a fresh interpreter (PAPERS_WARM=0), and the bare
process (a fresh interpreter). Target: at most 1.0 s extra per stage as DVC runs it.
Also a no-op `dvc repro` (nothing changed) of every paper, after reproducing them all at smoke:
target under 3 s.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from stages.warm import host_key, paths
from tasks.core.provenance import copy_project

from .common import ROOT, write_result

REPEATS = 3
BARE = "_bare_stage"


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PAPERS_INVOCATION")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PAPERS_ROOT"] = str(root)
    return env


def timed(command: list[str], root: Path, **env: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=root, env=environment(root) | env, check=True, capture_output=True)
    return time.perf_counter() - start


def wait_for_warm_host(root: Path) -> None:
    """The first stage started a host for this environment; time the stages once it serves."""
    key = host_key(environment(root))
    deadline = time.monotonic() + 180
    while not paths(key)["sock"].exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no warm host after 180 s (log: {paths(key)['log']})")
        time.sleep(0.5)


def bare_twin() -> tuple[str, str]:
    """(paper, module) of the first benchmarks/<paper>_bare_stage.py."""
    module = sorted(Path(__file__).parent.glob(f"*{BARE}.py"))[0].stem
    return module.removesuffix(BARE), f"benchmarks.{module}"


def main() -> dict:
    paper, bare_module = bare_twin()
    with tempfile.TemporaryDirectory() as folder:
        root = copy_project(ROOT, Path(folder) / "repo")
        params = root / "params.yaml"
        params.write_text(params.read_text().replace("profile: default", "profile: smoke"))
        subprocess.run([sys.executable, "-m", "dvc", "repro", f"stages/{paper}/dvc.yaml"], cwd=root,
                       env=environment(root), check=True, capture_output=True)
        wait_for_warm_host(root)
        stages = {}
        for stage in importlib.import_module(bare_module).STAGES:
            command = [sys.executable, "-m", "stages", paper, stage]
            orchestrated = [timed(command, root) for _ in range(REPEATS)]
            cold = [timed(command, root, PAPERS_WARM="0") for _ in range(REPEATS)]
            bare = [timed([sys.executable, "-m", bare_module, stage], root) for _ in range(REPEATS)]
            stages[stage] = {"orchestrated_s": orchestrated, "cold_interpreter_s": cold, "bare_s": bare,
                             "overhead_s": float(np.median(orchestrated) - np.median(bare)),
                             "ratio": float(np.median(orchestrated) / np.median(bare)),
                             "cold_overhead_s": float(np.median(cold) - np.median(bare))}
            print(f"{stage}: orchestrated {np.median(orchestrated):.2f} s (fresh interpreter {np.median(cold):.2f} s), "
                  f"bare {np.median(bare):.2f} s, overhead {stages[stage]['overhead_s']:.2f} s", flush=True)
        imports = {name: timed([sys.executable, "-c", f"import {name}"], root) for name in ("prefect", "mlflow", "numpy")}
        subprocess.run([sys.executable, "-m", "dvc", "repro"], cwd=root, env=environment(root), check=True, capture_output=True)
        noop = [timed([sys.executable, "-m", "dvc", "repro"], root) for _ in range(REPEATS)]
        print(f"no-op dvc repro of every paper: {np.median(noop):.2f} s", flush=True)
    result = {"paper": paper, "profile": "smoke", "repeats": REPEATS, "target_overhead_s": 1.0, "stages": stages,
              "import_process_s": imports, "noop_repro_all_s": noop, "target_noop_repro_s": 3.0}
    print(f"-> {write_result('orchestration_overhead', result)}")
    return result


if __name__ == "__main__":
    main()
