"""Our numpy Acrobot against gymnasium's Acrobot-v1 itself: the same next state, observation and end of episode
from states across the whole state space, and the same returns for a fixed policy."""
from __future__ import annotations

import gymnasium
import numpy as np

from flows.metadistill import acrobot


def random_states(rng: np.random.Generator, count: int) -> np.ndarray:
    angles = rng.uniform(-np.pi, np.pi, (count, 2))
    speeds = rng.uniform(-1, 1, (count, 2)) * acrobot.MAX_SPEED
    return np.concatenate([angles, speeds], axis=1)


def test_one_step_matches_gymnasium_from_anywhere_in_the_state_space():
    env = gymnasium.make("Acrobot-v1").unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(7)
    states, actions = random_states(rng, 300), rng.integers(0, 3, 300)
    ours = acrobot.step(states, actions)
    for state, action, mine in zip(states, actions, ours):
        env.state = state.copy()
        observation, reward, terminated, _, _ = env.step(int(action))
        np.testing.assert_allclose(env.state, mine, rtol=0, atol=1e-10)
        # gymnasium hands out float32 observations
        np.testing.assert_allclose(observation, acrobot.observe(mine[None])[0].astype(np.float32), rtol=0, atol=0)
        assert terminated == bool(acrobot.reached(mine[None])[0])
        assert reward == (0.0 if terminated else -1.0)


def test_a_fixed_policy_earns_gymnasiums_return():
    """A bang-bang policy (torque along the first joint's speed) from gymnasium's own start states."""
    def policy(observations: np.ndarray) -> np.ndarray:
        return np.where(observations[:, 4] > 0, 2, 0)

    env = gymnasium.make("Acrobot-v1").unwrapped
    starts, theirs = [], []
    for seed in range(8):
        env.reset(seed=seed)
        starts.append(env.state.copy())
        total, observation = 0.0, acrobot.observe(env.state[None])[0]
        for _ in range(200):
            observation, reward, terminated, _, _ = env.step(int(policy(observation[None])[0]))
            total += reward
            if terminated:
                break
        theirs.append(total)
    np.testing.assert_array_equal(acrobot.episode_returns(policy, np.array(starts), 200), theirs)
