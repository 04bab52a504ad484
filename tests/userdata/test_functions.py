"""A user's MODULE:FUNCTION: imported from the working directory, every fault an InputError naming the reference."""
from __future__ import annotations

import pytest

from tasks.core.inputs import InputError
from tasks.userdata.functions import load_function


@pytest.fixture
def module(tmp_path, monkeypatch):
    (tmp_path / "userfns.py").write_text("value = 3\n"
                                         "def quad(x):\n    return float(x @ x)\n"
                                         "class Problems:\n    @staticmethod\n    def zero(x):\n        return 0.0\n")
    (tmp_path / "userexits.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "userbroken.py").write_text("raise RuntimeError('no licence')\n")
    monkeypatch.chdir(tmp_path)
    return "userfns"


def test_functions_are_found_by_plain_and_dotted_names(module):
    assert load_function(f"{module}:quad").__name__ == "quad"
    assert load_function(f"{module}:Problems.zero")(None) == 0.0


@pytest.mark.parametrize("reference, message", [
    ("userfns", "expected MODULE:FUNCTION"), (":quad", "expected MODULE:FUNCTION"), ("userfns:", "expected MODULE:FUNCTION"),
    ("nosuchmodule:f", "no module named 'nosuchmodule'"), ("userfns:missing", "has no attribute 'missing'"),
    ("userfns:Problems.missing", "has no attribute 'Problems.missing'"), ("userfns:value", "int, not callable"),
    ("userexits:f", "importing userexits raised SystemExit"), ("userbroken:f", "RuntimeError: no licence")])
def test_bad_references_name_the_reference(module, reference, message):
    with pytest.raises(InputError, match=message) as error:
        load_function(reference)
    assert repr(reference) in str(error.value)
