"""Folded-Cauchy quantile, c_eps constants and the temperature schedule (spec §3.2, §10)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from tasks.optim.muon import algebraic_soft_sign
from tasks.optim.temperature import (TemperatureSchedule, Transition, algebraic_c_eps, folded_cauchy_quantile,
                                     robust_cauchy_fit, tanh_c_eps)

LEVELS = np.linspace(0, 0.995, 200)


def test_quantile_closed_form_at_zero_location():
    q = folded_cauchy_quantile(LEVELS, 0.0, 2.5)
    assert np.allclose(q, 2.5 * np.tan(np.pi * LEVELS / 2), rtol=1e-12)
    assert folded_cauchy_quantile(0.5, 0.0, 2.5) == pytest.approx(2.5)


@pytest.mark.parametrize("loc, scale", [(0.3, 1.0), (-2.0, 0.5), (1e-3, 2e-3)])
def test_quantile_newton_solves_folded_cdf(loc, scale):
    q = folded_cauchy_quantile(LEVELS, loc, scale)
    folded_cdf = stats.cauchy.cdf(q, loc, scale) - stats.cauchy.cdf(-q, loc, scale)
    assert np.abs(folded_cdf - LEVELS).max() < 1e-8
    assert np.all(np.diff(q) >= 0) and q[0] == 0.0


def test_quantile_rejects_bad_levels_and_scale():
    with pytest.raises(ValueError, match="p"):
        folded_cauchy_quantile([0.5, 1.0], 0.0, 1.0)
    with pytest.raises(ValueError, match="scale"):
        folded_cauchy_quantile(0.5, 0.0, 0.0)


def test_c_eps_constants():
    assert tanh_c_eps(1e-4) == pytest.approx(4.95172, abs=1e-5)
    assert algebraic_c_eps(1e-4) == pytest.approx(70.7054, abs=1e-4)
    assert float(algebraic_soft_sign(torch.tensor(algebraic_c_eps(1e-4), dtype=torch.float64))) == pytest.approx(1 - 1e-4, abs=1e-12)
    assert math.tanh(tanh_c_eps(1e-4)) == pytest.approx(1 - 1e-4, abs=1e-12)


def test_robust_fit_is_median_and_mad_of_signed_values():
    values = torch.tensor([-3.0, -1.0, 0.0, 2.0, 10.0, 11.0])
    loc, scale = robust_cauchy_fit(values)
    assert loc == 1.0 and scale == float(np.median(np.abs(values.numpy() - 1.0)))
    assert robust_cauchy_fit(torch.zeros(5)) == (0.0, 1e-12)


def test_schedule_shape_monotone_clamped_and_matches_empirical_tail():
    x = torch.from_numpy(stats.cauchy.rvs(size=100_000, random_state=np.random.default_rng(0)))
    c_eps, length = tanh_c_eps(1e-4), 500
    schedule = TemperatureSchedule.build(x, length, c_eps, tau_max=20.0)
    taus = schedule.taus.numpy()
    assert schedule.taus.dtype == torch.float64 and taus.shape == (length,)
    assert taus[0] == 20.0 and np.all(np.diff(taus) <= 0) and np.all((taus >= 1) & (taus <= 20))
    assert schedule.at(10_000) == taus[-1]
    levels = np.arange(length) / length
    q = c_eps / taus  # unclamped where 1 < tau < tau_max: q_j is the fitted quantile
    inside = (taus > 1) & (taus < 20)
    assert inside.sum() > 100
    tail = (np.abs(x.numpy())[None, :] >= q[inside][:, None]).mean(axis=1)
    assert np.abs(tail - (1 - levels[inside])).max() < 0.02


def test_transition_step_bookkeeping():
    t = Transition(total_steps=300, alpha_sign=0.7)
    assert (t.sign_steps, t.length) == (210, 90)
    assert t.in_sign_phase(210) and not t.in_sign_phase(211) and t.builds_at(211) and not t.builds_at(212)
    assert t.index(211) == 0 and t.index(300) == 89 and t.index(400) == 89
    whole = Transition(total_steps=10, alpha_sign=1.0)
    assert whole.length == 0 and whole.in_sign_phase(11) and not whole.builds_at(11)
    with pytest.raises(ValueError, match="total_steps"):
        Transition(total_steps=0, alpha_sign=0.5)
    with pytest.raises(ValueError, match="alpha_sign"):
        Transition(total_steps=10, alpha_sign=1.5)
