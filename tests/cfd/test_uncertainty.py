"""Bootstrap intervals of R^2: paired resampling across model kinds, determinism, coverage."""
from __future__ import annotations

import numpy as np

from tasks.cfd.surrogate.uncertainty import r2_intervals, r2_rows


def test_r2_rows_matches_the_definition():
    truth, predicted = np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[1.5, 2.0, 2.5, 4.0]])
    expected = 1 - 0.5 / 5.0
    assert r2_rows(truth, predicted)[0] == expected


def test_intervals_are_paired_deterministic_and_shrink_with_more_shapes():
    rng = np.random.default_rng(1)

    def intervals(n):
        truth = rng.normal(size=n)
        good = truth + 0.3 * rng.normal(size=(2, n))  # two seeds
        return r2_intervals(truth, {"a": good, "b": good.copy(), "perfect": truth[None]}, [("a", "b")], 500, seed=3)

    small, large = intervals(32), intervals(512)
    assert small["a-b"]["ci_low"] == small["a-b"]["ci_high"] == 0.0  # same predictions: the paired gap is exactly 0
    assert small["perfect"]["ci_low"] == small["perfect"]["value"] == 1.0
    assert small["a"]["ci_low"] <= small["a"]["value"] <= small["a"]["ci_high"]
    assert large["a"]["se"] < small["a"]["se"] / 2  # ~ 1 / sqrt(n)
    rng = np.random.default_rng(1)
    assert intervals(32) == small


def test_a_tiny_test_set_still_gives_finite_intervals():
    """With 4 shapes some resamples draw one shape four times (no variance, no R^2): they are left out."""
    truth = np.array([1.0, 2.0, 3.0, 4.0])
    intervals = r2_intervals(truth, {"a": truth + 0.1, "b": truth[::-1]}, pairs=[("a", "b")], resamples=500, seed=0)
    assert all(np.isfinite([v["ci_low"], v["ci_high"], v["se"]]).all() for v in intervals.values())
