"""BBOB through IOH against COCO's own conventions and reference values."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.blackbox.bbob import BBOB_FUNCTIONS, BBOBProblem, repair

# COCO's f_opt of instance 1 for f1..f24 (the same in every dimension; COCO draws it once per (function,
# instance) and rounds it to 2 decimals), as COCO's bbob documentation lists them
COCO_FOPT_INSTANCE_1 = [79.48, -209.88, -462.09, -462.09, -9.21, 35.9, 92.94, 149.15, 123.83, -54.94, 76.27, -621.11,
                        29.97, -52.35, 1000.0, 71.35, -16.94, -16.94, -102.55, -546.5, 40.78, -1000.0, 6.87, 102.61]


@pytest.mark.parametrize("dim", [2, 10])
def test_f_opt_matches_coco_instance_1(dim):
    assert [BBOBProblem(fid, 1, dim).f_opt for fid in BBOB_FUNCTIONS] == COCO_FOPT_INSTANCE_1


@pytest.mark.parametrize("fid", BBOB_FUNCTIONS)
def test_optimum_is_where_ioh_says(fid):
    """f(x_opt) = f_opt, |f_opt| <= 1000 on COCO's 2-decimal grid, x_opt inside the box; ids recorded."""
    problem = BBOBProblem(fid, 3, 5)
    assert problem(problem.x_opt[None])[0] == pytest.approx(problem.f_opt, abs=1e-8)
    assert abs(problem.f_opt) <= 1000 and problem.f_opt == round(problem.f_opt, 2)
    assert np.all(np.abs(problem.x_opt) <= 5) and problem.name == f"f{fid}_i3_d5"


def test_sphere_is_cocos_definition():
    """f1(x) = ||x - x_opt||^2 + f_opt (COCO's sphere)."""
    problem = BBOBProblem(1, 2, 7)
    X = np.random.default_rng(0).uniform(-5, 5, (6, 7))
    assert np.allclose(problem(X), ((X - problem.x_opt) ** 2).sum(1) + problem.f_opt)


def test_repair_keeps_points_in_the_box():
    problem = BBOBProblem(1, 1, 4)
    X = np.random.default_rng(1).normal(0, 20, (50, 4))
    R = repair(X, problem.lower, problem.upper)
    assert R.min() >= -5 and R.max() <= 5 and np.array_equal(R[np.abs(X).max(1) <= 5], X[np.abs(X).max(1) <= 5])
    assert np.array_equal(problem(X), problem(R))


def test_unknown_function_is_refused():
    with pytest.raises(ValueError, match="1..24"):
        BBOBProblem(25, 1, 2)
