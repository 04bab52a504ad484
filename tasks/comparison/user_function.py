"""A user's objective given as `MODULE:FUNCTION` (a function of one numpy array returning a real number, as
scipy.optimize takes one), checked at the door: every fault is an InputError naming the reference and the value."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tasks.core.inputs import InputError


def checked_objective(function: Callable, reference: str, shape: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """The objective the oracle evaluates: one point of `shape` (or a batch, evaluated point by point) to a real
    finite value; an exception of the user's function or a non-finite, non-scalar value is an InputError."""

    def one(x: np.ndarray) -> float:
        try:
            value = function(np.array(x, dtype=float))
        except InputError:  # its process crashed (tasks.userdata.functions): said as it is
            raise
        except Exception as error:
            raise InputError(f"FUNCTION {reference!r} raised {type(error).__name__} on a point of shape {shape}: "
                             f"{error} (is --dim right?)") from None
        try:
            number = float(np.asarray(value).item() if np.ndim(value) == 0 or np.size(value) == 1 else math.nan)
        except (TypeError, ValueError):
            raise InputError(f"FUNCTION {reference!r}: returned {type(value).__name__} {value!r}, "
                             "expected a real number") from None
        if np.size(value) != 1:
            raise InputError(f"FUNCTION {reference!r}: returned {np.size(value)} values, expected one real number")
        if not math.isfinite(number):
            raise InputError(f"FUNCTION {reference!r}: returned {number} (not finite) at a point of shape {shape}")
        return number

    def objective(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        if x.shape == shape:
            return np.float64(one(x))
        batch = x.reshape((-1,) + shape)
        return np.array([one(point) for point in batch]).reshape(x.shape[: x.ndim - len(shape)])

    return objective
