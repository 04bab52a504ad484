"""The one result every comparison method returns, and the callback through which a caller watches a run.

A method never sees the true objective; a caller that wants per-iteration diagnostics (true f, gradient norm,
wrong decisions) passes `record(x, queries, info)`, which may return True to stop the run early (used only to
stop once every chain has reached a target; it never changes a trajectory).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

Recorder = Callable[..., "bool | None"]


@dataclass
class Result:
    """x: final iterate (chains first where the method is vectorised); iterations; queries: comparisons (or function
    evaluations for value-based methods) per chain; wall_time_s; extra: method-specific counts (projections, LMO
    calls, ...)."""

    x: np.ndarray
    iterations: int
    queries: int
    wall_time_s: float
    extra: dict = field(default_factory=dict)


def notify(record: Recorder | None, x, queries: int, **info) -> bool:
    """Call the caller's recorder if there is one; True when it asks to stop."""
    return bool(record(x, queries, info)) if record is not None else False


class Tracker:
    """A recorder that keeps, every `every` calls (and at the last), the queries and each of `metrics`(x): the
    diagnostics a caller computes from the true objective, which the method never sees."""

    def __init__(self, metrics: dict[str, Callable[[np.ndarray], float]], every: int = 1):
        self.metrics, self.every, self.calls = metrics, every, 0
        self.rows: dict[str, list] = {"queries": [], **{name: [] for name in metrics}}
        self._last: tuple | None = None

    def __call__(self, x: np.ndarray, queries: int, info: dict) -> bool:
        if self.calls % self.every == 0:
            self._append(x, queries)
            self._last = None
        else:
            self._last = (np.array(x), queries)
        self.calls += 1
        return False

    def _append(self, x, queries) -> None:
        self.rows["queries"].append(queries)
        for name, metric in self.metrics.items():
            self.rows[name].append(float(metric(x)))

    def arrays(self) -> dict[str, np.ndarray]:
        """The recorded rows, the final iterate included."""
        if self._last is not None:
            self._append(*self._last)
            self._last = None
        return {name: np.asarray(values) for name, values in self.rows.items()}
