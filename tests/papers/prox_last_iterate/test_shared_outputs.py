"""`papers prox-last-iterate solve --out` on a shared machine (tests/output_table.py): a planted link and the problem's own data
file are refused before any work."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.output_table import assert_link_refused, assert_refused, output_case
from tests.platform.second_user import other  # noqa: F401

SOLVE = ("prox-last-iterate", "solve", "problem.json")


def inputs(work: Path) -> None:
    np.save(work / "X.npy", np.ones((6, 2)))
    (work / "problem.json").write_text('{"problem": "lasso", "X": "X.npy", "y": "y.csv", "lam": 0.1, "iterations": 10}')


def rows(shared: Path) -> dict[str, tuple[str, ...]]:
    return {"link": (*SOLVE, "--out", str(shared / "prox.npy")), "input-data": (*SOLVE, "--out", "X.npy")}


@pytest.fixture(scope="module")
def case(tmp_path_factory, other):  # noqa: F811 - the fixture
    yield from output_case(tmp_path_factory, other, inputs, rows, links=("prox.npy",))


def test_a_planted_link_and_the_problems_data_are_refused(case):
    assert_link_refused(case, "link", "--out")
    assert_refused(case.results["input-data"], "--out", "is the input", "input X X.npy")
    assert np.array_equal(np.load(case.work / "X.npy"), np.ones((6, 2)))
