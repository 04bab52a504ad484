"""The CUDA engine against the torch reference, on numba's CUDA simulator (so on any CPU).

numba reads NUMBA_ENABLE_CUDASIM once, at its import, and this process has imported numba
already, so the simulated runs happen in one subprocess (`python -m tests.cfd.test_fused_cuda OUT`)
that saves both engines' results; the tests compare them here. The simulator runs every CUDA thread
as a Python thread (~0.3 ms of CPU each), hence grids of a few hundred nodes and a dozen steps
(~10 s of CPU for this file, measured).
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numba
import numpy as np
import pytest
import torch

from tasks.cfd.engines import run_lbm
from tasks.cfd.lbm_setup import Body, LBMSetup, validate_setup
from tasks.cfd.validation import Disc
from tests.cfd.test_fused import assert_same_run

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "moving-ground-bouzidi-2-bodies": (
        LBMSetup(grid=(12, 7), nu=0.04, u_lat=0.08, steps=12, average_steps=4, ramp_steps=6, bounce_back="bouzidi",
                 profile_bins=4),
        [Body(Disc((4.0, 3.2), 3.0), 3.0), Body(Disc((4.6, 3.6), 2.4), 2.4)]),
    "channel-trt": (
        LBMSetup(grid=(12, 7), nu=0.05, u_lat=0.05, steps=12, average_steps=4, ramp_steps=6, bounce_back="bouzidi",
                 collision="trt", ground="wall", top="wall", inflow="parabolic", profile_bins=4),
        [Body(Disc((4.3, 3.4), 2.6), 2.6)]),
    "d3q19-regularized-float64": (
        LBMSetup(lattice="D3Q19", grid=(6, 5, 5), nu=0.05, u_lat=0.05, steps=4, average_steps=2, ramp_steps=2,
                 bounce_back="bouzidi", collision="regularized", dtype="float64", profile_bins=1),  # 58 links: 2 chunks
        [Body(Disc((2.6, 2.4, 2.3), 2.4), 2.4)]),
}
REPEATED = "channel-trt"  # run twice on the cuda engine: the determinism check
FIELDS = ("diverged", "cd", "coefficient_trace", "drag_profile", "rho_mean", "u_mean", "solid")


def simulated_runs(out: Path) -> None:
    """In a process started with NUMBA_ENABLE_CUDASIM=1: every case on torch and cuda, REPEATED twice on cuda."""
    torch.set_num_threads(1)
    arrays = {}
    for name, (setup, bodies) in CASES.items():
        runs = {"torch": run_lbm(replace(setup, engine="torch"), bodies),
                "cuda": run_lbm(replace(setup, engine="cuda"), bodies)}
        if name == REPEATED:
            runs["cuda-again"] = run_lbm(replace(setup, engine="cuda"), bodies)
        arrays |= {f"{name}/{engine}/{field}": getattr(result, field) for engine, result in runs.items()
                   for field in FIELDS}
    np.savez(out, **arrays)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> dict[str, np.ndarray]:
    out = tmp_path_factory.mktemp("cuda_sim") / "runs.npz"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "tests.cfd.test_fused_cuda", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    with np.load(out) as runs:
        return dict(runs)


def _result(runs: dict[str, np.ndarray], case: str, engine: str) -> SimpleNamespace:
    return SimpleNamespace(**{field: runs[f"{case}/{engine}/{field}"] for field in FIELDS})


@pytest.mark.parametrize("case", list(CASES))
def test_cuda_engine_reproduces_the_torch_solver_on_the_simulator(simulated, case):
    """Moving ground + Bouzidi with two bodies, a TRT channel (walls, parabolic inflow), D3Q19 in float64."""
    assert_same_run(_result(simulated, case, "torch"), _result(simulated, case, "cuda"), cd_tolerance=1e-5)


def test_cuda_engine_gives_the_same_bits_twice(simulated):
    for field in FIELDS:
        np.testing.assert_array_equal(simulated[f"{REPEATED}/cuda/{field}"], simulated[f"{REPEATED}/cuda-again/{field}"])


@pytest.mark.skipif(numba.config.ENABLE_CUDASIM, reason="the simulator stands in for a GPU")
def test_cuda_engine_without_a_gpu_or_the_simulator_is_refused():
    with pytest.raises(ValueError, match="engine: 'cuda' needs a CUDA device"):
        validate_setup(LBMSetup(nu=0.05, engine="cuda", device="cpu"))


@pytest.mark.skipif(not torch.cuda.is_available() or numba.config.ENABLE_CUDASIM, reason="needs a CUDA device")
@pytest.mark.parametrize("case", list(CASES))
def test_cuda_engine_reproduces_the_torch_solver_on_a_gpu(case):
    setup, bodies = CASES[case]
    setup = replace(setup, device="cuda", steps=400, average_steps=100, ramp_steps=100)
    reference = run_lbm(replace(setup, engine="torch"), bodies)
    assert_same_run(reference, run_lbm(replace(setup, engine="cuda"), bodies), cd_tolerance=1e-5)


if __name__ == "__main__":
    simulated_runs(Path(sys.argv[1]))
