"""Schafer-Turek cylinder and sphere validation."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.cfd.engines import run_lbm
from tasks.cfd.lbm_setup import Body, LBMSetup
from tasks.cfd.validation import (
    Disc,
    cylinder_channel,
    recirculation_end,
    schafer_turek_cylinder,
    schiller_naumann_drag,
    sphere_drag,
    strouhal_number,
)

REFERENCE_CD, REFERENCE_DP, REFERENCE_LA = 5.5795, 0.1175, 0.0846


def test_smoke_validation_is_finite_and_plausible():
    result = schafer_turek_cylinder(re=20, diameter_cells=6, steps=1500)
    assert not result["diverged"]
    assert 4 <= result["cd_mean"] <= 9
    assert all(np.isfinite(result[k]) for k in ("cd_max", "cl_max", "dp", "recirculation_length"))
    assert result["strouhal"] is None and result["grid"] == [132, 27]


def test_channel_geometry_matches_the_benchmark():
    (nx, nz), (xc, zc) = cylinder_channel(10)
    assert (nx, nz) == (220, 43)
    assert (xc, zc - 0.5) == (20.0, 20.0)  # 0.2, 0.2 from the inlet and the lower wall at D = 0.1 = 10 cells


def test_strouhal_number_of_a_sine():
    steps = np.arange(4000)
    lift = 0.8 * np.sin(2 * np.pi * steps / 250.0 + 0.3)
    assert strouhal_number(lift, diameter=10, speed=0.1) == pytest.approx(10 / (250 * 0.1), rel=1e-3)
    assert strouhal_number(0.001 * np.sin(steps / 10), 10, 0.1) is None  # acoustic noise is not shedding


def test_recirculation_end_interpolates_the_sign_change():
    x = np.linspace(0, 10, 101)
    assert recirculation_end(x + 0.1, x) == pytest.approx(0.0)  # no reverse flow: no wake bubble
    assert recirculation_end(np.where(x < 0.5, 0.1, x - 4.0), x) == pytest.approx(4.0)


def test_schiller_naumann_values():
    assert schiller_naumann_drag(1.0) == pytest.approx(24 * 1.15)
    assert schiller_naumann_drag(100.0) == pytest.approx(24 / 100 * (1 + 0.15 * 100**0.687))


@pytest.fixture(scope="module")
def bouzidi_d10():
    return schafer_turek_cylinder(re=20, diameter_cells=10, bounce_back="bouzidi")


@pytest.fixture(scope="module")
def halfway_d10():
    return schafer_turek_cylinder(re=20, diameter_cells=10, bounce_back="halfway")


def test_schafer_turek_d10_bouzidi_within_tolerance(bouzidi_d10):
    """The default validation resolution and boundary (the default data set uses Bouzidi on the body)."""
    assert bouzidi_d10["cd_mean"] == pytest.approx(REFERENCE_CD, rel=0.10)
    assert bouzidi_d10["recirculation_length"] == pytest.approx(REFERENCE_LA, rel=0.08)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured: half-way D = 10 gives Cd 6.22 (+11.5%) and La 0.0928 (+9.7%), "
                                       "outside the spec's 10% / 8% (its prototype got +8%); Bouzidi passes")
def test_schafer_turek_d10_halfway_within_tolerance(halfway_d10):
    assert halfway_d10["cd_mean"] == pytest.approx(REFERENCE_CD, rel=0.10)
    assert halfway_d10["recirculation_length"] == pytest.approx(REFERENCE_LA, rel=0.08)


@pytest.mark.slow
def test_bouzidi_beats_halfway_at_d10(bouzidi_d10, halfway_d10):
    assert abs(bouzidi_d10["cd_mean"] - REFERENCE_CD) < abs(halfway_d10["cd_mean"] - REFERENCE_CD)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured (the same from 6473494 on): half-way D = 20 gives Cd 5.959 (+6.8%) "
                                       "and La 0.0904 (+6.9%), outside the 6% / 5% set here; D = 20 narrows the D = 10 "
                                       "miss (+11.5%) but does not reach them")
def test_schafer_turek_d20():
    halfway = schafer_turek_cylinder(re=20, diameter_cells=20, steps=24000, bounce_back="halfway")
    bouzidi = schafer_turek_cylinder(re=20, diameter_cells=20, steps=20000, bounce_back="bouzidi")
    assert halfway["cd_mean"] == pytest.approx(REFERENCE_CD, rel=0.06)
    assert halfway["recirculation_length"] == pytest.approx(REFERENCE_LA, rel=0.05)
    assert halfway["dp"] == pytest.approx(REFERENCE_DP, rel=0.08)
    assert abs(bouzidi["cd_mean"] - REFERENCE_CD) < abs(halfway["cd_mean"] - REFERENCE_CD)


@pytest.mark.slow
def test_sub_cell_continuity():
    """Cylinder D = 12 swept through 10 sub-cell offsets: Bouzidi varies smoothly, half-way in steps."""
    diameter, offsets = 12, np.linspace(0, 1, 10, endpoint=False)
    (nx, nz), (xc, zc) = cylinder_channel(diameter)
    u_mean = 0.1 * 2 / 3
    ranges, halfway_cd = {}, {}
    for bounce_back in ("halfway", "bouzidi"):
        setup = LBMSetup(grid=(nx, nz), nu=u_mean * diameter / 20, u_lat=u_mean, steps=6000, average_steps=600,
                         ramp_steps=2000, bounce_back=bounce_back, ground="wall", top="wall", inflow="parabolic")
        bodies = [Body(Disc((xc + dx, zc), diameter), float(diameter)) for dx in offsets]
        result = run_lbm(setup, bodies)
        ranges[bounce_back] = np.ptp(result.cd)
        if bounce_back == "halfway":
            masks = result.solid.reshape(len(offsets), -1)
            halfway_cd = {tuple(np.flatnonzero(m)): cd for m, cd in zip(masks, result.cd)}
            for mask, cd in zip(masks, result.cd):
                assert cd == pytest.approx(halfway_cd[tuple(np.flatnonzero(mask))], rel=1e-6)
        else:
            bouzidi_mean = result.cd.mean()
    assert ranges["bouzidi"] <= 0.5 * ranges["halfway"]
    assert ranges["bouzidi"] <= 0.02 * bouzidi_mean


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured: Cd 3.15 vs 2.61 (+21%) at D = 6 in a 72 x 36 x 36 box (blockage "
                                       "D/W = 1/6, 6 cells per diameter), outside the 15% we set before running it")
def test_sphere_against_schiller_naumann():
    result = sphere_drag(re=20, diameter_cells=6)
    assert not result["diverged"]
    assert result["cd"] == pytest.approx(result["reference_cd"], rel=0.15)
