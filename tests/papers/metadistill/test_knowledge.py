"""The knowledge base: stitching picks the best teacher per segment and copies its parameters unchanged."""
from __future__ import annotations

import numpy as np

from flows.metadistill.functions import TRAINING_FUNCTIONS, ShiftedFunction, shifted
from flows.metadistill.knowledge import collect_episode, stitch


def test_stitching_picks_the_segment_winner_and_copies_it():
    episode = collect_episode("F3", 4, 12, 25, ["cmaes", "de", "pso", "jade"], seed=7)
    runs = episode["trajectories"]
    stitched = stitch(runs, 10)
    assert len(stitched["means"]) == 25 and len(stitched["picks"]) == 3
    for s, (start, end) in enumerate([(0, 9), (10, 19), (20, 24)]):
        winner = stitched["picks"][s]
        assert runs[winner]["best_so_far"][end] == min(r["best_so_far"][end] for r in runs.values())
        assert np.array_equal(stitched["means"][start:end + 1], runs[winner]["means"][start:end + 1])
        assert np.array_equal(stitched["covs"][start:end + 1], runs[winner]["covs"][start:end + 1])
    assert all(np.array_equal(r["populations"][0].shape, (12, 4)) for r in runs.values())


def test_training_functions_vanish_at_their_shift():
    rng = np.random.default_rng(0)
    for name, (_, half) in TRAINING_FUNCTIONS.items():
        function = shifted(name, 6, rng)
        assert np.all(np.abs(function.bias) <= half)
        if name == "F6":  # keep z = 1 inside the box
            function = ShiftedFunction(name, np.clip(function.bias, -half + 1, half - 1))
        at_optimum = function.bias + (1.0 if name == "F6" else 0.0)  # Rosenbrock's minimum is at z = 1
        assert function(at_optimum[None])[0] == 0.0
        assert function(np.clip(function.bias + 1.5, -half, half)[None])[0] > 0


def test_points_are_clamped_before_evaluation():
    function = ShiftedFunction("F2", np.zeros(3))
    assert function(np.array([[50.0, 0, 0]]))[0] == 10.0
