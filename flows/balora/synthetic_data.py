"""The synthetic problem of testbeds A and B (numpy only: the generate stage starts without torch)."""
from __future__ import annotations

import numpy as np


def synthetic_problem(a: int, b: int, r: int, inits: int, seed: int) -> dict[str, np.ndarray]:
    """T, W0 ~ N(0, 1) (one problem), and per init LoRA's B0 ~ N(0, 1) (A0 = 0)."""
    rng = np.random.default_rng(seed)
    return {"T": rng.standard_normal((a, b)), "W0": rng.standard_normal((a, b)),
            "B0": rng.standard_normal((inits, r, b))}
