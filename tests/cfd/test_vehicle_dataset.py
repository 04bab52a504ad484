"""Data-set plumbing of UniDrag part 1: placement round trip, labels of a tiny LBM run, drift, splits."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.cfd.engines import run_lbm
from tasks.cfd.lbm_setup import LBMSetup
from tasks.cfd.vehicle_dataset import Placement, convergence_drift, count_nonfinite, labels, splits, tunnel_body
from tasks.cfd.vehicles import sample_family


def test_placement_round_trip_and_labels_of_a_tiny_run():
    placement = Placement(length_cells=16, x_front=16.0)  # smoke scale (at L = 8 the underbody gap is sub-cell)
    points = np.random.default_rng(0).uniform(0, 1, (50, 2))
    np.testing.assert_allclose(placement.to_body(placement.to_lattice(points)), points, atol=1e-12)
    vehicles = sample_family(1, seed=1)[:2]
    setup = LBMSetup(grid=(80, 33), tau=0.6, steps=80, average_steps=30, ramp_steps=20)
    result = run_lbm(setup, [tunnel_body(v, placement) for v in vehicles])
    record = labels(result, 1, vehicles[1], placement, surface_count=32, volume_count=40, seed=0)
    assert record["profile"][-1] == pytest.approx(float(record["cd"]), rel=1e-6)
    assert record["a_ref_cells"] == pytest.approx(16 * vehicles[1].h_ref)
    assert record["surface_points"].shape == (32, 2) and record["volume_u"].shape == (40, 2)
    volume = record["volume_points"]
    assert (volume[:, 0] >= -0.5).all() and (volume[:, 0] <= 2.5).all() and (volume[:, 1] > 0).all()
    assert not vehicles[1].inside(volume).any() and count_nonfinite(record) == 0


def test_convergence_drift():
    trace = np.concatenate([np.full(10, 5.0), np.full(10, 2.0), np.full(10, 2.2)])
    assert convergence_drift(trace, 10) == pytest.approx(0.2 / 2.2)


def test_splits_are_stratified_deterministic_and_checked():
    types = [v.body_type for v in sample_family(6, seed=0)]
    split = splits(types, {"train": 4, "val": 1, "test": 1}, seed=3)
    assert sorted(i for part in split.values() for i in part) == list(range(24))
    assert all(sum(types[i] == t for i in split["test"]) == 1 for t in set(types))
    assert split == splits(types, {"train": 4, "val": 1, "test": 1}, seed=3)
    with pytest.raises(ValueError, match="split"):
        splits(types, {"train": 4, "val": 1, "test": 2}, seed=3)
