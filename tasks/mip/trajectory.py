"""A recorded solve: the solver state sampled along one SCIP run, in minimization sense.

Spec §2-3. Everything here is in minimization sense (a maximization problem's
objective, bounds and incumbent are negated) and bounds are clipped to [-B, B], B the family's
bound constant, so that "no incumbent yet" reads as U = B.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

COLUMNS = ("t", "wall", "lb", "ub", "nsols", "nodes", "lp_iters")

# SCIP's statuses (getStatus) of a solve that proved its incumbent optimal to its tolerance: "optimal"
# (gap closed) or "gaplimit" (relative gap |U - L| / min(|U|, |L|) <= limits/gap = 1e-4, below the
# 1e-3 of eps; limits/absgap stays at its default 0). Every other status (a node or time limit, a
# solution limit, an interrupt, a memory limit) leaves U_final unproven, so y = U - U_final is no label.
PROVED = ("optimal", "gaplimit")


@dataclass
class Trajectory:
    """One solve of one instance.

    t: solver time of each sample minus the event handler's accumulated overhead (the feature clock).
    wall: wall-clock seconds since the solve started, overhead included (what a user waits).
    lb, ub: dual bound and incumbent (minimization sense, clipped to [-bound, bound]).
    nsols: solutions found so far; nodes: B&B nodes; lp_iters: LP iterations.
    final_ub: the incumbent at the end of the full 1e-4 solve (U_final, minimization sense).
    solve_time: total wall time of the solve; status: SCIP's final status string.
    overhead: seconds spent inside the event handler (sampling, and inference when stopping).
    """

    instance: str
    family: str
    sense: int  # +1 minimize, -1 maximize (the original problem's sense)
    bound: float
    t: np.ndarray
    wall: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    nsols: np.ndarray
    nodes: np.ndarray
    lp_iters: np.ndarray
    final_ub: float
    solve_time: float
    status: str
    overhead: float = 0.0
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.t)

    @property
    def proved(self) -> bool:
        """SCIP proved final_ub optimal to its tolerance: only then is the trajectory a label."""
        return self.status in PROVED

    @property
    def y(self) -> np.ndarray:
        """Absolute true gap U_k - U_final (>= 0, non-increasing, 0 at the end)."""
        return self.ub - self.final_ub

    @property
    def r(self) -> np.ndarray:
        """Relative true gap (U_k - U_final) / (|U_final| + 0.1), the code's definition."""
        return self.y / (abs(self.final_ub) + 0.1)


def save_trajectory(path: Path, trajectory: Trajectory) -> None:
    import json

    arrays = {name: getattr(trajectory, name) for name in COLUMNS}
    meta = {"instance": trajectory.instance, "family": trajectory.family, "sense": trajectory.sense,
            "bound": trajectory.bound, "final_ub": trajectory.final_ub, "solve_time": trajectory.solve_time,
            "status": trajectory.status, "overhead": trajectory.overhead, "info": trajectory.info}
    np.savez_compressed(path, **arrays, meta=np.array(json.dumps(meta)))


def load_trajectory(path: Path) -> Trajectory:
    import json

    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        return Trajectory(**meta, **{name: data[name] for name in COLUMNS})
