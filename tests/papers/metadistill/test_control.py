"""Acrobot-v1 in numpy against checks derived here: the equations of motion against the two-link Lagrangian solved
as a linear system, energy conservation without torque, mirror symmetry, rest and the goal, wrapping and speed
limits, the reward rule; the MLP policy's layout; the paired fitness; one seed of every optimiser on it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.metadistill import acrobot
from flows.metadistill.acrobot import (GRAVITY, MAX_SPEED, TORQUES, accelerations, episode_returns, observe, reached,
                                       runge_kutta, step, wrap_angle)
from flows.metadistill.control import AcrobotFitness, mlp_policy, optimiser_runs, parameter_count
from flows.metadistill.les import LES
from tasks.blackbox.teachers import default_popsize

M1 = M2 = 1.0
L1, C1, C2, I1, I2 = 1.0, 0.5, 0.5, 1.0, 1.0


def mass_matrix(theta2):
    m11 = M1 * C1 ** 2 + M2 * (L1 ** 2 + C2 ** 2 + 2 * L1 * C2 * np.cos(theta2)) + I1 + I2
    m12 = M2 * (C2 ** 2 + L1 * C2 * np.cos(theta2)) + I2
    return np.array([[m11, m12], [m12, M2 * C2 ** 2 + I2]])


def lagrangian_accelerations(state, torque):
    """M(theta) ddtheta = (0, torque) - Coriolis/centripetal - gravity, solved as a 2 x 2 system."""
    theta1, theta2, speed1, speed2 = state
    h = M2 * L1 * C2 * np.sin(theta2)
    coriolis = np.array([-h * speed2 ** 2 - 2 * h * speed1 * speed2, h * speed1 ** 2])
    gravity = np.array([(M1 * C1 + M2 * L1) * GRAVITY * np.sin(theta1) + M2 * C2 * GRAVITY * np.sin(theta1 + theta2),
                        M2 * C2 * GRAVITY * np.sin(theta1 + theta2)])
    return np.linalg.solve(mass_matrix(theta2), np.array([0.0, torque]) - coriolis - gravity)


def energy(state):
    theta1, theta2, speed1, speed2 = state.T
    kinetic = np.array([0.5 * v @ mass_matrix(t2) @ v for v, t2 in zip(state[:, 2:], theta2)])
    potential = -(M1 * C1 + M2 * L1) * GRAVITY * np.cos(theta1) - M2 * C2 * GRAVITY * np.cos(theta1 + theta2)
    return kinetic + potential


def random_states(n=50, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-np.pi, np.pi, (n, 2)), rng.uniform(-3, 3, (n, 2))])


def test_equations_of_motion_are_the_two_link_lagrangian():
    states, torques = random_states(), np.random.default_rng(1).choice(TORQUES, 50)
    ours = accelerations(states, torques)
    expected = np.array([lagrangian_accelerations(s, t) for s, t in zip(states, torques)])
    assert np.allclose(ours, expected, rtol=1e-12, atol=1e-12)


def test_energy_is_conserved_without_torque():
    states, zero = random_states(10, seed=2) * np.array([0.5, 0.5, 0.3, 0.3]), np.zeros(10)
    start = energy(states)
    fine = states.copy()
    for _ in range(200):  # 2 s at dt 0.01: RK4's error ~ dt^4
        fine = runge_kutta(fine, zero, 0.01)
    assert np.max(np.abs(energy(fine) - start)) < 1e-6
    coarse = states.copy()
    for _ in range(10):  # 2 s at the environment's dt 0.2
        coarse = runge_kutta(coarse, zero, acrobot.DT)
    assert np.max(np.abs(energy(coarse) - start)) < 0.05 * np.max(np.abs(start))


def test_mirror_symmetry_and_rest():
    states, actions = random_states(30, seed=3), np.random.default_rng(4).integers(0, 3, 30)
    assert np.allclose(step(-states, 2 - actions), -step(states, actions), atol=1e-12)  # TORQUES[2 - a] = -TORQUES[a]
    rest = np.zeros((1, 4))
    assert np.array_equal(step(rest, np.array([1])), rest)
    assert accelerations(rest, np.array([1.0]))[0, 1] > 0  # a positive torque speeds the second joint up


def test_goal_wrapping_and_speed_limits():
    assert reached(np.array([[np.pi, 0, 0, 0]]))[0] and not reached(np.zeros((1, 4)))[0]
    assert not reached(np.array([[np.pi / 2, 0, 0, 0]]))[0]  # tip level with the pivot: height 0 < 1
    assert np.allclose(wrap_angle(np.array([1.5 * np.pi, -1.5 * np.pi, np.pi, 0.3])), [-0.5 * np.pi, 0.5 * np.pi, np.pi, 0.3])
    state = np.zeros((1, 4))
    for t in range(300):  # pumping with the largest torques
        state = step(state, np.array([2 if np.sin(0.3 * t) > 0 else 0]))
        assert np.all(np.abs(state[:, :2]) <= np.pi) and np.all(np.abs(state[:, 2:]) <= MAX_SPEED)
    assert np.allclose(observe(np.array([[0.0, np.pi / 2, 1.0, -2.0]])), [[1, 0, 0, 1, 1, -2]])


def reference_return(parameters, hidden, start, steps):
    """One episode, one step at a time, the rule written out: -1 per step unless that step reaches the goal."""
    policy, state, total = mlp_policy(parameters[None], hidden), start[None].copy(), 0.0
    for _ in range(steps):
        state = step(state, policy(observe(state)))
        if reached(state)[0]:
            return total
        total -= 1.0
    return total


def test_batched_episodes_equal_one_at_a_time_and_stay_in_range():
    rng = np.random.default_rng(5)
    hidden, steps = 16, 200
    parameters = rng.uniform(-5, 5, (24, parameter_count(hidden)))
    starts = acrobot.start_states(24, rng)
    returns = episode_returns(mlp_policy(parameters, hidden), starts, steps)
    expected = [reference_return(p, hidden, s, steps) for p, s in zip(parameters, starts)]
    assert np.array_equal(returns, expected)
    assert np.all((returns <= 0) & (returns >= -steps)) and (returns > -steps).any() and (returns == -steps).any()


def test_policy_layout():
    assert parameter_count(16) == 163  # the spec's 6-16-3
    hidden = 3
    parameters = np.zeros((2, parameter_count(hidden)))
    parameters[0, -1] = 1.0  # the last output bias: action 2
    parameters[1, -3] = 1.0  # the first: action 0
    assert mlp_policy(parameters, hidden)(np.ones((2, 6))).tolist() == [2, 0]
    rng = np.random.default_rng(6)
    vector, obs = rng.normal(size=parameter_count(hidden)), rng.normal(size=6)
    w1, b1 = vector[:18].reshape(3, 6), vector[18:21]
    w2, b2 = vector[21:30].reshape(3, 3), vector[30:]
    h = w1 @ obs + b1
    assert mlp_policy(vector[None], hidden)(obs[None])[0] == np.argmax(w2 @ np.where(h > 0, h, 0.01 * h) + b2)


def test_fitness_is_paired_by_seed_and_negates_the_return(monkeypatch):
    drawn = []
    original = acrobot.start_states

    def recording(count, rng):
        drawn.append(original(count, rng))
        return drawn[-1]

    monkeypatch.setattr("flows.metadistill.control.start_states", recording)
    X = np.random.default_rng(7).uniform(-5, 5, (6, parameter_count(4)))
    a, b, c = AcrobotFitness(4, 60, 1), AcrobotFitness(4, 60, 1), AcrobotFitness(4, 60, 2)
    first = a(X)
    assert np.array_equal(first, b(X)) and np.array_equal(drawn[0], drawn[1])  # same seed: the same starts
    a(X), c(X)
    assert not np.array_equal(drawn[2], drawn[0]) and not np.array_equal(drawn[3], drawn[0])  # fresh per call, seed
    starts_returns = episode_returns(mlp_policy(np.clip(X, -5, 5), 4), drawn[0], 60)
    assert np.array_equal(first, -starts_returns) and np.all((first >= 0) & (first <= 60))


@pytest.mark.heavy
def test_every_optimiser_runs_on_acrobot_at_the_same_evaluations():
    torch.manual_seed(0)
    models = {"baseline": LES().double(), "md": LES().double()}
    runs = optimiser_runs(models, 2, 8, 3, 15, [0, 1], 1e-4, seed=0)
    assert set(runs) == {"baseline", "md_j0", "md_j1", "cmaes", "cmaes_default"}
    small = default_popsize(parameter_count(2))
    assert all(run.evaluations[-1] == 24 for name, run in runs.items() if name != "cmaes_default")
    assert runs["cmaes_default"].evaluations[-1] == 24 // small * small
    assert all(np.all(np.diff(run.best_so_far) <= 0) and np.all(run.best_so_far >= 0) for run in runs.values())
    again = optimiser_runs(models, 2, 8, 3, 15, [0, 1], 1e-4, seed=0)
    assert all(np.array_equal(runs[n].best_so_far, again[n].best_so_far) for n in runs)


@pytest.mark.parametrize("dim", [2, 10, 20, 30, 163])
def test_default_popsize_is_cmas(dim):
    import cma

    es = cma.CMAEvolutionStrategy(np.zeros(dim), 1.0, {"verbose": -9})
    assert default_popsize(dim) == es.popsize
