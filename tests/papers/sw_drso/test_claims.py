"""The sw_drso claim checks on hand-made results: the thresholds of spec §6 and undecided smoke profiles."""
from __future__ import annotations

from flows.sw_drso.claims import claims, method_means


def row(method: str, seed: int, clean: float, mca: float, outliers: float, wall: float = 1.0) -> dict:
    return {"task": "A", "encoder": "attention", "method": method, "seed": seed, "wall_time_s": wall,
            "accuracy": {"clean": clean, "outliers-0.3": outliers, "mCA": mca}}


def test_verdicts_follow_the_spec_thresholds():
    rows = [row("erm", 0, 0.80, 0.56, 0.36), row("erm", 1, 0.80, 0.58, 0.36, 3.0),
            row("aug", 0, 0.81, 0.62, 0.29), row("random_weights", 0, 0.78, 0.70, 0.50),
            row("sw_drso", 0, 0.75, 0.71, 0.63, 4.0)]
    found = {c.id: c for c in claims(rows, decide=True)}
    assert abs(found["C1"].ours - (0.71 - 0.57)) < 1e-12 and found["C1"].passed
    assert abs(found["C2"].ours - (0.75 - 0.80)) < 1e-12 and found["C2"].passed is False
    assert found["C3a"].passed is True and found["C3b"].passed is True and found["C4"].passed is None
    assert found["C4"].details["wall_time_vs_erm"]["sw_drso"] == 2.0
    assert method_means(rows)["erm"]["seeds"] == 2


def test_smoke_is_undecided_and_missing_baselines_give_none():
    rows = [row("erm", 0, 0.5, 0.4, 0.3), row("sw_drso", 0, 0.5, 0.5, 0.4)]
    found = {c.id: c for c in claims(rows, decide=False)}
    assert all(c.passed is None for c in found.values())
    assert found["C3a"].ours is None and found["C3b"].ours is None and found["C1"].ours is not None
