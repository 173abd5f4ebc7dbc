"""``DisruptionWrapper(env, random=...)`` on every REALM env of the disruption protocol: the
random process only draws disruptions the env accepts (each type at places it can strike),
they strike during the episode and are reported, and the episode is the same under a seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401  (registers the ids)
from crab_gym.envs.realm.common.disruptions import DisruptiveEnv
from crab_gym.wrappers.disruption import INFO_KEY, DisruptionWrapper

DISRUPTIVE = sorted(i for i in gym.registry if i.startswith("Realm-") and isinstance(gym.make(i).unwrapped, DisruptiveEnv))


def _episode(env_id: str, seed: int) -> tuple[list[float], int, int]:
    """(rewards, random disruptions reported as struck, random disruptions drawn) of one
    episode played by the first legal choice."""
    env = DisruptionWrapper(gym.make(env_id), random={"rate": 6.0}, seed=11)
    _, info = env.reset(seed=seed)
    base = env.unwrapped
    struck, rewards = len(info[INFO_KEY]), []
    for _ in range(5000):
        choice = int(np.flatnonzero(base.action_masks())[0])
        _, reward, terminated, truncated, info = env.step(base.codec.flat_to_call(choice))
        rewards.append(reward)
        struck += len(info[INFO_KEY])
        if terminated or truncated:
            break
    return rewards, struck, len(env.episode_disruptions)


def test_the_protocol_envs_are_the_expected_ones():
    assert {"Realm-P4-v0", "Realm-P7-v0", "Realm-P10-v0", "Realm-J2-v0", "Realm-J4-v0"} <= set(DISRUPTIVE)


@pytest.mark.parametrize("env_id", DISRUPTIVE)
def test_random_disruptions_are_accepted_strike_and_repeat_under_a_seed(env_id):
    struck = drawn = 0
    for seed in range(4):
        rewards, hit, count = _episode(env_id, seed)
        assert _episode(env_id, seed)[0] == rewards  # the same episode under the same seeds
        struck, drawn = struck + hit, drawn + count
    assert drawn >= 2 and struck >= 1, (drawn, struck)
