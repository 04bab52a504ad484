"""BBOB test functions through IOHprofiler's `ioh` (the COCO definitions, instances and optima).

A problem is evaluated on a whole population at once; points are repaired (clipped) into the box first, as the
learned optimisers of the field do, so every evaluated point lies in [-5, 5]^d.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BBOB_FUNCTIONS = tuple(range(1, 25))
BBOB_BOUND = 5.0  # COCO's search box is [-5, 5]^d for every function


def repair(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Out-of-bound coordinates clipped onto the box."""
    return np.clip(X, lower, upper)


@dataclass
class BBOBProblem:
    """BBOB function `fid`, IOH instance `instance` (COCO's instance ids), dimension `dim`.

    f_opt and x_opt are IOH's record of the optimum; precision(y) = y - f_opt is the metric."""

    fid: int
    instance: int
    dim: int
    _problem: object = field(init=False, repr=False)

    def __post_init__(self):
        import ioh  # here: importing this module (ids, bounds) does not load the C++ library

        if self.fid not in BBOB_FUNCTIONS:
            raise ValueError(f"BBOB function id must be in 1..24, got {self.fid}")
        self._problem = ioh.get_problem(self.fid, self.instance, self.dim, ioh.ProblemClass.BBOB)

    @property
    def f_opt(self) -> float:
        return float(self._problem.optimum.y)

    @property
    def x_opt(self) -> np.ndarray:
        return np.asarray(self._problem.optimum.x, dtype=float)

    @property
    def lower(self) -> np.ndarray:
        return np.full(self.dim, -BBOB_BOUND)

    @property
    def upper(self) -> np.ndarray:
        return np.full(self.dim, BBOB_BOUND)

    @property
    def name(self) -> str:
        return f"f{self.fid}_i{self.instance}_d{self.dim}"

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """f of each row of X (N, d), after repair."""
        X = repair(np.atleast_2d(np.asarray(X, dtype=float)), self.lower, self.upper)
        return np.asarray(self._problem(X.tolist()), dtype=float)
