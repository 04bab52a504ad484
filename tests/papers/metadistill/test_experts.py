"""The three teachers added to the four of tasks/blackbox/teachers.py (GA, SHADE, L-SHADE): they improve, record the
shapes the knowledge base reads, stay in the box, are deterministic; their operators keep the properties they are
built on (SBX keeps each pair's midpoint, bounded polynomial mutation stays in the box, L-SHADE's population
shrinks on its linear schedule, the success memory takes weighted Lehmer means)."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.blackbox.experts import (EXPERTS, L_SHADE_SMALLEST, SuccessHistory, lshade, polynomial_mutation, sbx,
                                    tournament)

LOWER, UPPER = -5 * np.ones(6), 5 * np.ones(6)


def sphere(X):
    return (X ** 2).sum(1)


def rastrigin(X):
    return 10 * X.shape[1] + (X ** 2 - 10 * np.cos(2 * np.pi * X)).sum(1)


def start(seed=0, n=24):
    return np.random.default_rng(seed).uniform(LOWER, UPPER, (n, 6))


def test_the_seven_teachers_of_the_spec():
    assert set(EXPERTS) == {"cmaes", "de", "pso", "jade", "ga", "shade", "lshade"}


@pytest.mark.parametrize("name", ["ga", "shade", "lshade"])
@pytest.mark.parametrize("function, factor", [(sphere, 1e-3), (rastrigin, 0.5)])
def test_new_teacher_improves_and_records(name, function, factor):
    population0 = start()
    run = EXPERTS[name](function, population0, LOWER, UPPER, 60, 1)
    assert run.populations.shape == (60, 24, 6) and run.covs.shape == (60, 6, 6) and np.isfinite(run.covs).all()
    assert np.all(np.diff(run.best_so_far) <= 0) and run.best_so_far[-1] < factor * function(population0).min()
    assert function(run.best_x[None])[0] == pytest.approx(run.best_so_far[-1])
    live = run.populations[~np.isnan(run.populations)]
    assert np.all(live >= -5) and np.all(live <= 5)
    again = EXPERTS[name](function, population0, LOWER, UPPER, 60, 1)
    assert np.array_equal(run.covs, again.covs) and np.array_equal(run.best_so_far, again.best_so_far)


def test_lshade_shrinks_linearly_over_its_plan():
    run = lshade(sphere, start(n=20), LOWER, UPPER, 30, 0)
    sizes = (~np.isnan(run.populations[:, :, 0])).sum(1)
    assert np.all(np.diff(sizes) <= 0) and sizes[0] < 20 and sizes[-1] >= L_SHADE_SMALLEST
    used = 20 + np.concatenate([[20], sizes[:-1]]).cumsum()  # evaluations after each generation
    assert np.array_equal(sizes, np.maximum(L_SHADE_SMALLEST, np.round(20 + (L_SHADE_SMALLEST - 20) * used / 600)))
    assert run.evaluations == used[-1]
    assert np.all(np.isinf(run.fitness[np.isnan(run.populations[:, :, 0])]))


def test_sbx_keeps_each_pairs_midpoint_and_none_without_crossover():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(50, 6)), rng.normal(size=(50, 6))
    c, d = sbx(a, b, 0.9, 15.0, rng)
    assert np.allclose(c + d, a + b) and not np.allclose(c, a)
    c, d = sbx(a, b, 0.0, 15.0, rng)
    assert np.array_equal(c, a) and np.array_equal(d, b)


def test_polynomial_mutation_stays_in_the_box_and_mutates_at_its_rate():
    rng = np.random.default_rng(1)
    x = np.random.default_rng(2).uniform(LOWER, UPPER, (2000, 6))
    y = polynomial_mutation(x, 1 / 6, 20.0, LOWER, UPPER, rng)
    assert np.all((y >= -5) & (y <= 5)) and abs((y != x).mean() - 1 / 6) < 0.02
    assert np.array_equal(polynomial_mutation(x, 0.0, 20.0, LOWER, UPPER, rng), x)


def test_tournament_winner_is_the_best_of_its_entrants():
    values = np.random.default_rng(3).normal(size=30)
    winners = tournament(values, 500, 3, np.random.default_rng(4))
    entrants = np.random.default_rng(4).integers(0, 30, (500, 3))
    assert np.array_equal(values[winners], values[entrants].min(1))


def test_success_memory_takes_weighted_lehmer_means_and_lshades_terminal_cr():
    F, CR, gains = np.array([0.2, 0.8]), np.array([0.4, 0.6]), np.array([1.0, 3.0])
    shade_memory, lshade_memory = SuccessHistory(2, linear=False), SuccessHistory(2, linear=True)
    shade_memory.update(F, CR, gains)
    lshade_memory.update(F, CR, gains)
    w = gains / gains.sum()
    assert shade_memory.location_f[0] == pytest.approx((w * F ** 2).sum() / (w * F).sum())
    assert shade_memory.mean_cr[0] == pytest.approx((w * CR).sum())
    assert lshade_memory.mean_cr[0] == pytest.approx((w * CR ** 2).sum() / (w * CR).sum())
    lshade_memory.update(F, np.zeros(2), gains)
    assert np.isnan(lshade_memory.mean_cr[1]) and lshade_memory.next == 0
    lshade_memory.mean_cr[0] = np.nan
    CR_drawn, _ = lshade_memory.draw(10, np.random.default_rng(0))
    assert np.all(CR_drawn == 0)
