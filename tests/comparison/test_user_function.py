"""A user's MODULE:FUNCTION as the comparison oracles evaluate it: every fault an InputError naming the reference."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.comparison.user_function import checked_objective
from tasks.core.inputs import InputError
from tasks.userdata.functions import load_function


@pytest.fixture
def module(tmp_path, monkeypatch):
    (tmp_path / "userobj.py").write_text("import numpy as np\nvalue = 3\n"
                                         "def quad(x):\n    return float(x @ x)\n"
                                         "def nan(x):\n    return float('nan')\n"
                                         "def many(x):\n    return x\n"
                                         "def text(x):\n    return 'low'\n"
                                         "def fails(x):\n    raise ValueError('bad shape')\n")
    monkeypatch.chdir(tmp_path)
    return "userobj"


def test_a_good_function_evaluates_points_and_batches(module):
    f = checked_objective(load_function(f"{module}:quad"), "r", (3,))
    assert f(np.ones(3)) == 3.0 and f(np.ones((2, 3))).tolist() == [3.0, 3.0]


@pytest.mark.parametrize("name, message", [("nan", "not finite"), ("many", "3 values"), ("text", "expected a real number"),
                                           ("fails", "raised ValueError")])
def test_bad_values(module, name, message):
    f = checked_objective(load_function(f"{module}:{name}"), name, (3,))
    with pytest.raises(InputError, match=message):
        f(np.ones(3))
