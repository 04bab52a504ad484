"""`papers prox-last-iterate solve` refuses a hostile PROBLEM file in one line: JSON nested 100,000 deep, an
integer of 5,000 digits."""
from __future__ import annotations

import pytest

from tests.cli_table import bad, check_rows, write

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s


def test_hostile_json_is_one_line(tmp_path):
    f = lambda name, text: write(tmp_path / name, text)  # noqa: E731
    deep = f("deep.json", "[" * 100_000 + "]" * 100_000)
    digits = f("digits.json", '{"problem": "lasso", "X": "X.npy", "y": "y.npy", "lam": 0.1, "iterations": ' + "7" * 5000 + "}")
    check_rows([
        bad(("prox-last-iterate", "solve", deep), "PROBLEM", "deep.json", "nested too deeply"),
        bad(("prox-last-iterate", "solve", digits), "PROBLEM", "digits.json", "4,300 digits"),
    ], cwd=tmp_path)
