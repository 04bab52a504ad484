"""LBM throughput (MLUPS) of the D2Q9 and D3Q19 kernels against a memory-bandwidth roofline.

Measured in the same run on the same array sizes: the roofline is the node rate of a plain copy
of the population array (read + write Q floats per node: the least traffic any LBM step needs),
with a triad a = b + s c for reference. Per case: the bare kernel (collide + stream) and the full
solver step (a body with half-way bounce-back, moving ground, inlet, outlet, force). One torch
thread on the CPU; on a GPU (when present) larger grids as well. Medians of repeats.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from tasks.cfd.kernels import StepOperators, collide, stream
from tasks.cfd.lattice import get_lattice
from tasks.cfd.lbm import Body, LBMSetup, run_lbm
from tasks.cfd.validation import Disc
from tasks.core.device import single_torch_thread

from .common import write_result

CPU_CASES = (("D2Q9", 8, (160, 65)), ("D2Q9", 1, (440, 84)), ("D3Q19", 1, (64, 24, 24)), ("D3Q19", 1, (96, 48, 48)))
GPU_CASES = (("D2Q9", 16, (1024, 512)), ("D3Q19", 1, (320, 96, 80)), ("D3Q19", 1, (512, 128, 128)))
REPEATS = 5


def _synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _median_seconds(action, steps: int, device: str) -> float:
    action()  # warm-up
    times = []
    for _ in range(REPEATS):
        _synchronize(device)
        start = time.perf_counter()
        for _ in range(steps):
            action()
        _synchronize(device)
        times.append((time.perf_counter() - start) / steps)
    return float(np.median(times))


def measure(lattice_name: str, batch: int, grid: tuple[int, ...], device: str, steps: int) -> dict:
    lattice = get_lattice(lattice_name)
    nodes = batch * math.prod(grid)
    f = torch.rand((lattice.q, batch, *grid), device=device) * 0.1
    post, other = torch.empty_like(f), torch.empty_like(f)
    operators = StepOperators.build(lattice, 1 / 0.6, "bgk", torch.float32, device)

    def kernel():
        collide(f.view(lattice.q, -1), operators, out=post.view(lattice.q, -1))
        stream(post, f, lattice)

    copy_s = _median_seconds(lambda: other.copy_(post), steps, device)
    triad_s = _median_seconds(lambda: torch.add(post, f, alpha=0.5, out=other), steps, device)
    kernel_s = _median_seconds(kernel, steps, device)
    bytes_f = f.numel() * f.element_size()
    centre = tuple(n / 3 if a == 0 else n / 2 for a, n in enumerate(grid))
    setup = LBMSetup(lattice=lattice_name, grid=grid, nu=0.02, u_lat=0.05, steps=steps * REPEATS, average_steps=steps,
                     ramp_steps=steps, device=device)
    solver = run_lbm(setup, [Body(Disc(centre, grid[-1] / 4), 1.0)] * batch)
    roofline = nodes / copy_s / 1e6
    row = {"lattice": lattice_name, "batch": batch, "grid": list(grid), "nodes": nodes, "device": device,
           "copy_gb_s": 2 * bytes_f / copy_s / 1e9, "triad_gb_s": 3 * bytes_f / triad_s / 1e9,
           "roofline_mlups": roofline, "kernel_mlups": nodes / kernel_s / 1e6, "solver_mlups": solver.mlups}
    row["kernel_fraction_of_roofline"] = row["kernel_mlups"] / roofline
    row["solver_fraction_of_roofline"] = row["solver_mlups"] / roofline
    print(f"{device} {lattice_name} B={batch} {grid}: copy {row['copy_gb_s']:.1f} GB/s -> roofline "
          f"{roofline:.1f} MLUPS; kernel {row['kernel_mlups']:.1f} ({100 * row['kernel_fraction_of_roofline']:.0f}%), "
          f"solver {row['solver_mlups']:.1f} ({100 * row['solver_fraction_of_roofline']:.0f}%)", flush=True)
    return row


def main() -> dict:
    single_torch_thread()
    rows = [measure(name, batch, grid, "cpu", steps=20) for name, batch, grid in CPU_CASES]
    if torch.cuda.is_available():
        rows += [measure(name, batch, grid, "cuda", steps=50) for name, batch, grid in GPU_CASES]
    d2q9_cpu = [r for r in rows if r["device"] == "cpu" and r["lattice"] == "D2Q9"]
    result = {"target": "D2Q9 kernel >= 25% of the copy roofline on CPU", "repeats": REPEATS,
              "torch": torch.__version__, "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
              "d2q9_cpu_target_met": all(r["kernel_fraction_of_roofline"] >= 0.25 for r in d2q9_cpu), "rows": rows}
    print(f"-> {write_result('lbm_speed', result)}")
    return result


if __name__ == "__main__":
    main()
