"""The Hessian-error study and its paths: deterministic per seed, warm-up points not recorded, the path a
normalised-gradient path."""
from __future__ import annotations

import torch

from flows.zovh.experiments import seed_study
from flows.zovh.points import path, start
from tasks.core.device import single_torch_thread
from tasks.zeroth.functions import hessian_study_functions, random_quadratic

single_torch_thread()


def small_study(seed: int) -> list[dict]:
    A, b = random_quadratic(8, torch.Generator().manual_seed(0))
    functions = hessian_study_functions(A, b)
    paths = {(name, regime): path(fn, start(fn, regime, torch.Generator().manual_seed(1), 0.1, 100.0), 3 + 2, 1e-4)
             for name, fn in functions.items() for regime in ("near", "paper")}
    return seed_study(functions, paths, ["s1", "zovh", "zovh_reuse"], 3, [6], 0.1, 1e-3, 3, seed)


def test_study_is_deterministic_and_records_after_the_warm_up():
    first, again = small_study(5), small_study(5)
    assert [r["frob_err"] for r in first] == [r["frob_err"] for r in again]
    assert {r["point"] for r in first} == {0, 1}
    # K = 6 only on R-near
    assert {(r["regime"], r["K"]) for r in first} == {("near", 3), ("near", 6), ("paper", 3)}
    assert small_study(6)[0]["frob_err"] != first[0]["frob_err"]


def test_path_steps_along_the_normalised_gradient():
    A, b = random_quadratic(5, torch.Generator().manual_seed(0))
    fn = hessian_study_functions(A, b)["quadratic"]
    points = path(fn, torch.ones(5, dtype=torch.float64), 4, 0.01)
    steps = torch.linalg.vector_norm(points[1:] - points[:-1], dim=1)
    torch.testing.assert_close(steps, torch.full((3,), 0.01, dtype=torch.float64))
    assert (fn.f(points[1:]) < fn.f(points[:-1])).all()
    inside = start(fn, "paper", torch.Generator().manual_seed(2), 0.1, 100.0)
    assert float(torch.linalg.vector_norm(inside)) <= 100.0


def test_each_points_hessian_is_computed_once_for_every_estimator_and_budget():
    """The study's memory stays one Hessian whatever the path's length (d = 5000 in `full`: 200 MB each)."""
    A, b = random_quadratic(6, torch.Generator().manual_seed(0))
    function = hessian_study_functions(A, b)["quadratic"]
    calls = []

    class Counted(type(function)):
        def hessian(self, x):
            calls.append(x)
            return super().hessian(x)

    counted = Counted(function.name, function.f, function.minimiser)
    points = path(counted, start(counted, "near", torch.Generator().manual_seed(1), 0.1, 100.0), 5, 1e-4)
    rows = seed_study({"quadratic": counted}, {("quadratic", "near"): points}, ["s1", "scd", "zovh_reuse"], 3, [6, 9],
                      0.1, 1e-3, 2, seed=0)
    assert len(calls) == len(points)
    assert len(rows) == 3 * 3 * (len(points) - 2)  # 3 estimators x 3 budgets x the points after the warm-up
