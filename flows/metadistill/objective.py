"""A user's black-box function f(x: 1-D array) -> float, as scipy.optimize takes it, made safe to optimise:
imported by "MODULE:FUNCTION" and evaluated row by row; a function that raises, returns a non-number or a
non-finite value stops the run with an ObjectiveError (an InputError) naming the function, the evaluation and
the fault, never a traceback."""
from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError


class ObjectiveError(InputError):
    """The user's function failed on a point."""


def import_function(reference: str):
    """The callable MODULE:FUNCTION (MODULE importable from the working directory or the path)."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise InputError(f"MODULE:FUNCTION: expected a module and a function name separated by ':', got {reference!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except BaseException as error:  # the module's own code may raise anything, exit included
        if isinstance(error, KeyboardInterrupt):
            raise
        raise InputError(f"MODULE:FUNCTION {reference}: importing {module_name!r} failed: "
                         f"{type(error).__name__}: {error}") from None
    function = module
    for part in attribute.split("."):
        if not hasattr(function, part):
            raise InputError(f"MODULE:FUNCTION {reference}: {module_name!r} has no attribute {attribute!r}")
        function = getattr(function, part)
    if not callable(function):
        raise InputError(f"MODULE:FUNCTION {reference}: {attribute!r} is a {type(function).__name__}, not callable")
    return function


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
            if isinstance(error, KeyboardInterrupt):
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
