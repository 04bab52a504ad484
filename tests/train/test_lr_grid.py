"""The shared LR calibration rule: widen at an edge, stop when interior, respect the cap, diverged points lose,
a one-point grid is a pass-through."""
from __future__ import annotations

import math

import pytest

from tasks.train.lr_grid import (
    MAX_EXTENSIONS,
    best_point,
    calibrate_grids,
    check_grid,
    check_same_shape,
    edge_of,
    next_point,
)


def recording(loss_of):
    """An evaluate callback over loss_of(method, lr) that keeps every batch it was handed."""
    batches = []

    def evaluate(pending):
        batches.append(list(pending))
        return [loss_of(name, lr) for name, lr in pending]

    return evaluate, batches


def bowl(center):
    """Loss (log lr - log center)^2: the best point of any grid is the one nearest `center` in log."""
    return lambda name, lr: math.log(lr / center) ** 2


def test_interior_best_stops_without_widening():
    evaluate, batches = recording(bowl(0.02))
    result = calibrate_grids({"muon": [0.01, 0.02, 0.04]}, evaluate)["muon"]
    assert result.best_lr == 0.02 and result.edge is None and result.extensions == 0
    assert len(batches) == 1 and list(result.losses) == [0.01, 0.02, 0.04]


def test_edge_best_widens_with_the_grids_own_spacing_until_interior():
    evaluate, batches = recording(bowl(0.1))  # best beyond the top: 0.04 -> 0.08 -> 0.16, then 0.08 is interior
    result = calibrate_grids({"muon": [0.01, 0.02, 0.04]}, evaluate)["muon"]
    assert batches[1:] == [[("muon", 0.08)], [("muon", 0.16)]]
    assert result.best_lr == 0.08 and result.edge is None and result.extensions == 2
    assert result.initial == (0.01, 0.02, 0.04) and list(result.losses) == [0.01, 0.02, 0.04, 0.08, 0.16]


def test_low_edge_widens_downwards_and_rounds_the_new_point():
    evaluate, batches = recording(bowl(1e-4))
    result = calibrate_grids({"signum": [3e-4, 1e-3, 3e-3]}, evaluate)["signum"]
    assert batches[1] == [("signum", 9e-5)]  # 3e-4 * 3e-4 / 1e-3, rounded (no 8.999999999999999e-05)
    assert result.best_lr == 9e-5 and result.extensions == 2 and result.edge is None
    assert next_point({3e-4: 3.0, 1e-3: 2.0, 3e-3: 1.0}) == 0.009


def test_cap_is_respected_and_the_pick_is_reported_at_its_edge():
    evaluate, batches = recording(lambda name, lr: -lr)  # larger is always better
    result = calibrate_grids({"adamw": [1e-3, 3e-3, 1e-2]}, evaluate, max_extensions=MAX_EXTENSIONS)["adamw"]
    assert result.extensions == MAX_EXTENSIONS == 3 and len(batches) == 1 + MAX_EXTENSIONS
    assert result.best_lr == max(result.losses) and result.edge == "high"
    assert result.to_json()["at_edge"] is True and result.metrics("adamw")["adamw.at_edge"] == 1.0
    assert calibrate_grids({"adamw": [1e-3, 3e-3]}, evaluate, max_extensions=0)["adamw"].extensions == 0


def test_non_finite_losses_lose():
    assert best_point({0.01: float("nan"), 0.02: 2.0, 0.04: float("inf")}) == 0.02
    assert edge_of({0.01: float("nan"), 0.02: 2.0, 0.04: float("inf")}) is None  # a diverged neighbour bounds it
    evaluate, _ = recording(lambda name, lr: float("nan") if lr >= 0.08 else -lr)
    result = calibrate_grids({"muon": [0.01, 0.02, 0.04]}, evaluate)["muon"]
    assert result.best_lr == 0.04 and result.edge is None and math.isnan(result.losses[0.08])
    with pytest.raises(ValueError, match="every grid point diverged"):
        best_point({0.01: float("nan")})


def test_one_point_grid_is_a_pass_through():
    evaluate, batches = recording(lambda name, lr: 1.0)
    result = calibrate_grids({"muon": [0.02], "adamw": [3e-3]}, evaluate)
    assert len(batches) == 1 and result["muon"].best_lr == 0.02 and result["muon"].extensions == 0
    assert result["muon"].edge is None and next_point({0.02: 1.0}) is None


def test_methods_widen_independently_in_shared_rounds():
    evaluate, batches = recording(lambda name, lr: bowl(0.1 if name == "muon" else 3e-3)(name, lr))
    result = calibrate_grids({"muon": [0.01, 0.02, 0.04], "adamw": [1e-3, 3e-3, 1e-2]}, evaluate)
    assert len(batches[0]) == 6 and batches[1] == [("muon", 0.08)]
    assert result["adamw"].extensions == 0 and result["muon"].extensions == 2


def test_grids_are_checked_at_the_door():
    assert check_grid([1e-3, 3e-3]) == [1e-3, 3e-3]
    for bad in ([], [0.0, 1.0], [3e-3, 1e-3], [1e-3, 1e-3], [float("nan")]):
        with pytest.raises(ValueError, match="grid"):
            check_grid(bad)
    check_same_shape({"a": [1.0, 2.0, 3.0], "b": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match="same number of points"):
        check_same_shape({"a": [1.0, 2.0, 3.0], "b": [0.1]})
    with pytest.raises(ValueError, match="max_extensions"):
        calibrate_grids({"a": [1.0]}, lambda pending: [0.0], max_extensions=-1)


def test_losses_equal_up_to_rounding_tie_and_the_smaller_rate_wins_without_widening():
    from tasks.train.lr_grid import best_point, edge_of

    losses = {1.0: 0.05, 10.0: 0.015318 + 1.8e-16, 100.0: 0.015318}
    assert best_point(losses) == 10.0
    assert edge_of(losses) is None
