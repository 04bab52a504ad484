"""`papers ncrs minimize`'s parts in process: the start point (--x0), the step schedule, the best-so-far report and the
objective's memory of its last two points."""
from __future__ import annotations

import numpy as np
import pytest

from flows.ncrs.cli import BestSoFar, RememberingObjective, ScheduledDirections, parse_x0
from tasks.comparison.oracles import ComparisonOracle, Noise
from tasks.comparison.random_search import ncrs
from tasks.core.inputs import InputError


def test_x0_from_a_list_a_file_or_zeros(tmp_path):
    assert parse_x0(None, 3).tolist() == [0.0, 0.0, 0.0]
    assert parse_x0(" 1, -2.5e1 ,.5", 3).tolist() == [1.0, -25.0, 0.5]
    (tmp_path / "row.csv").write_text("1,2,3\n")
    (tmp_path / "column.txt").write_text("1\n2\n3\n")
    np.save(tmp_path / "x0.npy", np.array([4.0, 5.0, 6.0]))
    assert parse_x0(str(tmp_path / "row.csv"), 3).tolist() == [1.0, 2.0, 3.0]
    assert parse_x0(str(tmp_path / "column.txt"), 3).tolist() == [1.0, 2.0, 3.0]
    assert parse_x0(str(tmp_path / "x0.npy"), 3).tolist() == [4.0, 5.0, 6.0]


@pytest.mark.parametrize("text, named", [
    ("1,2", "2 values, expected --dim 3"), ("1,2,3,", "4 values"), ("1,nan,3", "value 2 must be a finite number"),
    ("1,inf,3", "'inf'"), ("1,1e999,3", "value 2 is not finite"), ("1,1_0,3", "'1_0'"), ("a", "1 values"),
    ("x,y,z", "value 1 must be a finite number"), ("missing.csv", "--x0 missing.csv"), ("", "1 values"),
])
def test_bad_x0_is_one_line_naming_it(text, named):
    with pytest.raises(InputError, match="--x0") as error:
        parse_x0(text, 3)
    assert named in str(error.value) and "\n" not in str(error.value)


def test_a_file_x0_of_the_wrong_shape_or_values_is_refused(tmp_path):
    (tmp_path / "table.csv").write_text("1,2\n3,4\n")
    (tmp_path / "long.csv").write_text("1,2,3,4\n")
    (tmp_path / "nan.csv").write_text("1,nan,3\n")
    for name, named in (("table.csv", "2 x 2 table"), ("long.csv", "4 values, expected --dim 3"), ("nan.csv", "non-finite")):
        with pytest.raises(InputError, match=named):
            parse_x0(str(tmp_path / name), 3)


def test_the_schedules_scale_the_directions():
    constant, decaying = ScheduledDirections(0.2, "constant"), ScheduledDirections(0.2, "inv-sqrt")
    draws = [(constant(np.random.default_rng(t), (1, 4)), decaying(np.random.default_rng(t), (1, 4))) for t in range(4)]
    for t, (c, d) in enumerate(draws):
        assert np.allclose(d, c / np.sqrt(t + 1))
    assert decaying.step(99) == pytest.approx(0.02) and constant.step(99) == 0.2


def test_a_constant_schedule_is_the_plain_search():
    def f(x):
        return np.sum((x - 1.0) ** 2, axis=-1)

    runs = [ncrs(ComparisonOracle(f, Noise("margin", p=0.3), np.random.default_rng(0)), np.zeros((1, 5)), alpha, 300,
                 np.random.default_rng(1), sample=sample).x
            for alpha, sample in ((0.1, lambda rng, shape: rng.standard_normal(shape)),
                                  (1.0, ScheduledDirections(0.1, "constant")))]
    assert np.allclose(runs[0], runs[1], atol=1e-12)


def test_best_so_far_is_the_least_f_visited_and_reads_no_new_point():
    calls = []

    def f(x):
        calls.append(np.array(x))
        return np.sum(np.asarray(x) ** 2, axis=-1)

    objective = RememberingObjective(f)
    x0 = np.full(3, 2.0)
    best = BestSoFar(objective, x0, float(objective(x0)))
    visited = [float(objective(x0))]

    def record(x, queries, info):
        visited.append(float(f(x[0])))  # the test's own look at f: not through the memory
        return best(x, queries, info)

    result = ncrs(ComparisonOracle(objective, Noise("margin", p=0.1), np.random.default_rng(0)), x0[None], 1.0, 400,
                  np.random.default_rng(1), record=record, sample=ScheduledDirections(0.3, "constant"))
    # through the memory: x0 as one point and as a batch of one, then one new point (the candidate) a comparison
    assert len(calls) - (len(visited) - 1) == 2 + result.queries
    assert best.f == pytest.approx(min(visited)) and best.f <= visited[-1] and best.f == pytest.approx(f(best.x))
    assert 0 < best.at <= result.queries


def test_the_memory_keeps_the_last_two_points_by_shape_and_value():
    seen = []
    objective = RememberingObjective(lambda x: (seen.append(1), np.sum(x, axis=-1))[1])
    a, b, c = np.ones((1, 2)), np.zeros((1, 2)), np.full((1, 2), 3.0)
    for x in (a, b, a, b, a):
        objective(x)
    assert len(seen) == 2
    objective(c)  # b was the older: forgotten
    objective(a)
    objective(b)
    assert len(seen) == 4
    objective(np.ones(2))  # the same values in another shape: another point for the objective
    assert len(seen) == 5
