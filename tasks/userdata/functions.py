"""A user's black-box function named `MODULE:FUNCTION` (as scipy.optimize users write one), imported at the door:
every fault is an InputError naming the reference, never a traceback."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from tasks.core.inputs import InputError


def load_function(reference: str) -> Callable:
    """Import MODULE (from the working directory first, as `python -m` would) and return its callable FUNCTION
    (a dotted name reaches into a class or namespace: `mymodule:Problems.rosenbrock`)."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise InputError(f"FUNCTION {reference!r}: expected MODULE:FUNCTION, e.g. mymodule:objective")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise InputError(f"FUNCTION {reference!r}: no module named {error.name!r}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the user's module ran and failed while importing (sys.exit included)
        raise InputError(f"FUNCTION {reference!r}: importing {module_name} raised {type(error).__name__}: {error}") from None
    function = module
    for part in attribute.split("."):
        if not hasattr(function, part):
            raise InputError(f"FUNCTION {reference!r}: module {module_name} has no attribute {attribute!r}")
        function = getattr(function, part)
    if not callable(function):
        raise InputError(f"FUNCTION {reference!r}: {attribute} is a {type(function).__name__}, not callable")
    return function
