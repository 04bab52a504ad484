"""Rules for a user's input at every entry point: refuse early, name the culprit, never allocate blind.

An `InputError` is a user's mistake (a bad file, value or reference), not a bug: the `papers`
command prints its message as one line and exits 2, without a traceback. Readers of user files
raise it (or a subclass naming their format) with the path, the problem and, where useful,
the fix; the checks here are the ones every reader needs. A command's option values (a range, a finite
number, a choice) are checked by check_range, check_number and check_choice, which share one refusal
naming the option, the rule and the value got: "--steps: must be in 1..100,000, got 0". A setting read from the
environment (env_int) is refused the same way, naming the variable. A JSON document (parse_json, read_json) is
refused as one line whatever Python's parser trips on: bad syntax, nesting too deep, an integer too long.
"""
from __future__ import annotations

import json
import math
import operator
import os
import re
import stat
import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

MAX_INPUT_BYTES = 256 * 2**20  # the largest user file any command reads into memory


class InputError(ValueError):
    """A user's input is unusable; str(error) is the one line to show them."""


def check_readable(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> Path:
    """A user's file that exists, is a regular readable file and is not over `max_bytes`."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{what} {path}: no such file")
    if not path.is_file():
        raise InputError(f"{what} {path}: not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{what} {path}: {size:,} bytes is over the limit of {max_bytes:,} bytes")
    if not os.access(path, os.R_OK):
        raise InputError(f"{what} {path}: not readable (permission denied)")
    return path


def read_text(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a user's file, refusing a missing, unreadable, oversized or binary one."""
    data = check_readable(path, what, max_bytes).read_bytes()
    if b"\0" in data:
        raise InputError(f"{what} {path}: a binary file, expected text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{what} {path}: not UTF-8 text (byte {error.start}), expected a text file") from None


def parse_json(text: str, where: str, expected: str = "") -> Any:
    """The JSON document `text` (from `where`: "PROBLEM x.json", "GROUP g.jsonl line 3"; `expected` says what it
    should hold); its syntax, a nesting deeper than the parser's recursion allows and an integer of more than
    Python's 4,300 digits are InputErrors."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno} column {error.colno}" if "\n" in text.strip() else f"column {error.colno}"
        raise InputError(f"{where}: not JSON ({error.msg} at {at})" + (f"; expected {expected}" if expected else "")) from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read (arrays or objects inside one another); "
                         "flatten it") from None
    except ValueError:  # int() refuses a literal of more than sys.get_int_max_str_digits() digits
        raise InputError(f"{where}: a JSON integer of more than {sys.get_int_max_str_digits():,} digits, too long to "
                         "read; write it with fewer digits") from None


def read_json(path: Path, what: str, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in a user's file (read_text's checks, then parse_json's)."""
    return parse_json(read_text(path, what, max_bytes), f"{what} {path}")


def check_output(path: Path, what: str, inputs: Mapping[str, Path] | None = None) -> Path:
    """An output path that is safe to write, checked before any work starts: its folder exists and is
    writable, nothing but a regular file lies there (see check_replaceable), and it is none of the
    command's `inputs` ({name: path}, e.g. {"--g2o": g2o}), which writing it would destroy."""
    path = Path(path)
    check_replaceable(path, what)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"{what} {path}: the folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK):
        raise InputError(f"{what} {path}: the folder {folder} is not writable")
    for name, source in (inputs or {}).items():
        if same_file(path, source):
            raise InputError(f"{what} {path}: is the input {name} {source} (writing it would destroy it); "
                             "choose another file")
    return path


def check_replaceable(path: Path, what: str) -> None:
    """Nothing lies at `path`, or a regular file (no link, see check_not_link). A device, FIFO or folder
    is no file to replace (/dev/full would fail the write after all the work, a FIFO would block)."""
    check_not_link(path, what)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise InputError(f"{what} {path}: is a folder, expected a file path")
    if not stat.S_ISREG(mode):
        raise InputError(f"{what} {path}: is not a regular file (a device, FIFO or socket); choose a file path")


def check_not_link(path: Path, what: str) -> None:
    """No symbolic link at an output path, dangling or not (lstat, not stat): on a shared machine another
    user can plant one where you will write (in /tmp, say), aimed at a file of yours they cannot touch,
    or at a path of their choosing that the write would create."""
    if os.path.islink(path):
        raise InputError(f"{what} {path}: is a symbolic link (refused: it could point at another user's file); "
                         "remove it or choose another path")


def same_file(a: Path, b: Path) -> bool:
    """Whether two spellings name one file: samefile where both exist (hard links, a/../a, links above),
    the resolved paths otherwise."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_count(what: str, value: int, limit: int, unit: str = "") -> int:
    """A size or id that decides an allocation: refused above `limit`, before anything is allocated."""
    if value > limit:
        raise InputError(f"{what}: {value:,}{unit} is over the limit of {limit:,}{unit}")
    return value


def check_range(name: str, value: int, low: int, high: int | None = None, note: str = "") -> int:
    """An integer option in low..high, both included (no upper bound when `high` is None)."""
    if value < low or (high is not None and value > high):
        rule = f"in {low:,}..{high:,}" if high is not None else f">= {low:,}"
        raise _refusal(name, rule, f"{value:,}", note)
    return value


_COMPARISONS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_BRACKETS = {">": "(", ">=": "[", "<": ")", "<=": "]"}  # the interval notation of each bound


def check_number(name: str, value: float, *, above: float | None = None, at_least: float | None = None,
                 below: float | None = None, at_most: float | None = None, note: str = "") -> float:
    """A real option: finite, and within the bounds given (`above`, `below` excluded; `at_least`, `at_most`
    included). The rule is told as one bound ("a finite number > 0") or as an interval ("in [0, 0.5)")."""
    bounds = [(sign, bound) for sign, bound in zip((">", ">=", "<", "<="), (above, at_least, below, at_most))
              if bound is not None]
    if not math.isfinite(value) or not all(_COMPARISONS[sign](value, bound) for sign, bound in bounds):
        if len(bounds) == 2:
            (low_sign, low), (high_sign, high) = bounds
            rule = f"in {_BRACKETS[low_sign]}{low:g}, {high:g}{_BRACKETS[high_sign]}"
        else:
            rule = " ".join(["a finite number", *(f"{sign} {bound:g}" for sign, bound in bounds)])
        raise _refusal(name, rule, f"{value}", note)
    return value


def check_choice(name: str, value: str, choices: Collection[str]) -> str:
    """An option that names one of `choices` (a dict: one of its keys)."""
    if value not in choices:
        raise _refusal(name, f"one of {', '.join(choices)}", repr(value))
    return value


INTEGER = re.compile(r"[+-]?[0-9]+")  # a plain decimal integer: int() alone also takes "1_000", " 7 " and other digits


def env_int(name: str, default: int, low: int, high: int | None = None, note: str = "") -> int:
    """An integer setting from the environment variable `name` (`default` when it is unset or empty), in low..high:
    "environment variable PAPERS_MAX_WORKERS: must be an integer in 1..1,024 (...; unset it for the default 2), got 'abc'"."""
    text = os.environ.get(name, "")
    if not text:
        return default
    what, fix = f"environment variable {name}", f"unset it for the default {default}"
    note = f"{note}; {fix}" if note else fix
    if not INTEGER.fullmatch(text):
        rule = f"an integer in {low:,}..{high:,}" if high is not None else f"an integer >= {low:,}"
        raise _refusal(what, rule, repr(text), note)
    return check_range(what, int(text), low, high, note)


def _refusal(name: str, rule: str, got: str, note: str = "") -> InputError:
    return InputError(f"{name}: must be {rule}{f' ({note})' if note else ''}, got {got}")
