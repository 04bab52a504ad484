"""Acrobot-v1 (Sutton's two-link swing-up task, with the constants, equations and rules Gymnasium's Acrobot-v1
uses), in numpy and batched over episodes, for the control-transfer claim C3 (Gymnasium steps one environment at a
time; tests/papers/metadistill/test_acrobot_gymnasium.py checks this against it).

State (theta1, theta2, dtheta1, dtheta2): theta1 the first link's angle from hanging straight down, theta2 the
second link's angle relative to the first. Only the joint between the links is driven, by a torque in {-1, 0, +1}.
One step integrates the "book" equations of motion (the ones that include the centripetal term
m2 l1 lc2 dtheta1^2 sin theta2, so energy is conserved without torque) by one classical Runge-Kutta step of
0.2 s, then wraps both angles into [-pi, pi] and clips the speeds at 4 pi and 9 pi. An episode starts uniform in
[-0.1, 0.1]^4; the reward is -1 per step until the tip rises more than one link length above the pivot
(-cos theta1 - cos(theta1 + theta2) > 1), where the episode ends with reward 0; returns lie in [-steps, 0].
"""
from __future__ import annotations

import numpy as np

DT = 0.2
LINK_LENGTH_1 = 1.0
MASS_1 = MASS_2 = 1.0
CENTRE_1 = CENTRE_2 = 0.5  # distance of each link's centre of mass from its pivot
INERTIA_1 = INERTIA_2 = 1.0
GRAVITY = 9.8
MAX_SPEED = np.array([4 * np.pi, 9 * np.pi])
TORQUES = np.array([-1.0, 0.0, 1.0])  # action k applies TORQUES[k]
START_RANGE = 0.1
OBSERVATION_SIZE, ACTIONS = 6, len(TORQUES)


def accelerations(state: np.ndarray, torque: np.ndarray) -> np.ndarray:
    """(N, 2) angular accelerations of the states (N, 4) under the joint torques (N,)."""
    theta1, theta2, speed1, speed2 = state.T
    d1 = (MASS_1 * CENTRE_1 ** 2 + MASS_2 * (LINK_LENGTH_1 ** 2 + CENTRE_2 ** 2
                                             + 2 * LINK_LENGTH_1 * CENTRE_2 * np.cos(theta2)) + INERTIA_1 + INERTIA_2)
    d2 = MASS_2 * (CENTRE_2 ** 2 + LINK_LENGTH_1 * CENTRE_2 * np.cos(theta2)) + INERTIA_2
    coupling = MASS_2 * LINK_LENGTH_1 * CENTRE_2 * np.sin(theta2)
    gravity2 = MASS_2 * CENTRE_2 * GRAVITY * np.sin(theta1 + theta2)
    phi1 = (-coupling * speed2 ** 2 - 2 * coupling * speed2 * speed1
            + (MASS_1 * CENTRE_1 + MASS_2 * LINK_LENGTH_1) * GRAVITY * np.sin(theta1) + gravity2)
    accel2 = ((torque + d2 / d1 * phi1 - coupling * speed1 ** 2 - gravity2)
              / (MASS_2 * CENTRE_2 ** 2 + INERTIA_2 - d2 ** 2 / d1))
    accel1 = -(d2 * accel2 + phi1) / d1
    return np.stack([accel1, accel2], axis=1)


def derivative(state: np.ndarray, torque: np.ndarray) -> np.ndarray:
    return np.concatenate([state[:, 2:], accelerations(state, torque)], axis=1)


def runge_kutta(state: np.ndarray, torque: np.ndarray, dt: float = DT) -> np.ndarray:
    """One classical fourth-order Runge-Kutta step of length dt (no wrapping or clipping)."""
    k1 = derivative(state, torque)
    k2 = derivative(state + dt / 2 * k1, torque)
    k3 = derivative(state + dt / 2 * k2, torque)
    k4 = derivative(state + dt * k3, torque)
    return state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def wrap_angle(angle: np.ndarray) -> np.ndarray:
    """Angles in [-pi, pi] unchanged, the others shifted by whole turns into it."""
    return np.where(np.abs(angle) <= np.pi, angle, np.mod(angle + np.pi, 2 * np.pi) - np.pi)


def step(state: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The states (N, 4) one time step after taking actions (N,) in {0, 1, 2}."""
    moved = runge_kutta(state, TORQUES[actions])
    return np.concatenate([wrap_angle(moved[:, :2]), np.clip(moved[:, 2:], -MAX_SPEED, MAX_SPEED)], axis=1)


def observe(state: np.ndarray) -> np.ndarray:
    """(N, 6): cos theta1, sin theta1, cos theta2, sin theta2, dtheta1, dtheta2."""
    theta1, theta2 = state[:, 0], state[:, 1]
    return np.stack([np.cos(theta1), np.sin(theta1), np.cos(theta2), np.sin(theta2), state[:, 2], state[:, 3]], 1)


def reached(state: np.ndarray) -> np.ndarray:
    """(N,) whether the tip is more than one link length above the pivot (the episode's end)."""
    return -np.cos(state[:, 0]) - np.cos(state[:, 0] + state[:, 1]) > 1.0


def start_states(count: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-START_RANGE, START_RANGE, (count, 4))


def episode_returns(policy, starts: np.ndarray, steps: int) -> np.ndarray:
    """The return of one episode per start state (N, 4), truncated at `steps`; policy: observations (N, 6) ->
    actions (N,). Finished episodes stay where they ended."""
    state, done, returns = starts.copy(), np.zeros(len(starts), bool), np.zeros(len(starts))
    for _ in range(steps):
        if done.all():
            break
        state = np.where(done[:, None], state, step(state, policy(observe(state))))
        ended = reached(state) & ~done
        returns -= ~done & ~ended
        done |= ended
    return returns
