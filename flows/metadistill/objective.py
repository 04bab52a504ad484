"""A user's black-box function f(x: 1-D array) -> float, as scipy.optimize takes it (tasks.userdata.functions
imports it), made safe to optimise: evaluated row by row; a function that raises, returns a non-number or a
non-finite value stops the run with an ObjectiveError (an InputError) naming the function, the evaluation and
the fault, never a traceback."""
from __future__ import annotations

import math

import numpy as np

from tasks.core.inputs import InputError


class ObjectiveError(InputError):
    """The user's function failed on a point."""


class SafeObjective:
    """f applied to each row of a population (N, d); counts evaluations."""

    def __init__(self, function, name: str):
        self.function, self.name, self.evaluations = function, name, 0

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return np.array([self.one(x) for x in np.atleast_2d(X)])

    def one(self, x: np.ndarray) -> float:
        self.evaluations += 1
        where = f"{self.name} at evaluation {self.evaluations}"
        try:
            value = self.function(x.copy())
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, InputError)):  # an InputError: its process crashed, said as it is
                raise
            raise ObjectiveError(f"{where}: raised {type(error).__name__}: {error}") from None
        try:
            value = float(np.asarray(value, dtype=float).reshape(()))
        except (TypeError, ValueError):
            raise ObjectiveError(f"{where}: returned {_short(value)}, expected one real number") from None
        if not math.isfinite(value):
            raise ObjectiveError(f"{where}: returned {value}, not a finite number")
        return value


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
