"""The LBM benchmark's roofline shares (benchmarks/lbm_speed.py, issue 42): a rate and the copy roofline it is
divided by are always on the same clock, so load on the shared cores cannot push a share over 100%."""
from __future__ import annotations

import pytest

from benchmarks.lbm_speed import roofline, shares


def test_shares_divide_on_one_clock_each():
    """A thread that held the core half the time: 100 MLUPS per wall second is 200 per CPU second; the copy, timed
    under the same load, 250 per wall and 500 per CPU second. Both shares 40%; a CPU-second rate over the wall-second
    copy (the old formula) would read 80%, and over 100% at a quarter of the core."""
    row = {"roofline_mlups": 250.0, "roofline_mlups_cpu": 500.0}
    assert shares(100.0, 0.5, row) == pytest.approx({"wall": 0.4, "cpu": 0.4})
    loaded = {"roofline_mlups": 125.0, "roofline_mlups_cpu": 500.0}  # a quarter of the core for the copy too
    assert shares(50.0, 0.25, loaded) == pytest.approx({"wall": 0.4, "cpu": 0.4})
    assert 50.0 / 0.25 / loaded["roofline_mlups"] == pytest.approx(1.6)  # what the old formula printed


def test_shares_refuse_a_rate_or_cpu_share_that_is_not_positive():
    row = {"roofline_mlups": 250.0, "roofline_mlups_cpu": 500.0}
    for rate, cpu_share in [(0.0, 0.5), (100.0, 0.0), (float("nan"), 0.5)]:
        with pytest.raises(ValueError, match="cpu_share"):
            shares(rate, cpu_share, row)


def test_the_roofline_reports_the_copy_on_both_clocks():
    row = roofline(9, 20_000, "cpu", steps=3)
    assert set(row) == {"copy_gb_s", "roofline_mlups", "roofline_mlups_cpu"} and set(row["copy_gb_s"]) == {"numpy", "torch"}
    assert row["roofline_mlups"] > 0 and row["roofline_mlups_cpu"] > 0
