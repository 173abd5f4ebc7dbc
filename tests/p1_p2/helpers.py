"""Shared helpers for the P1/P2 tests."""

from __future__ import annotations

import gymnasium as gym

P1_ID, P2_ID = "Realm-P1-v0", "Realm-P2-v0"


def ensure_registered() -> None:
    import crab_gym  # noqa: F401  (registers the suite's ids)

    if P1_ID not in gym.registry:
        gym.register(id=P1_ID, entry_point="crab_gym.envs.realm.campus_tour.env:CampusTourEnv")
    if P2_ID not in gym.registry:
        gym.register(id=P2_ID, entry_point="crab_gym.envs.realm.group_tours.env:GroupToursEnv")


def run_policy(env, policy, seed=0, max_steps=500):
    """Roll a policy to the end; return (final info, total reward, steps)."""
    obs, info = env.reset(seed=seed)
    total = 0.0
    for step in range(1, max_steps + 1):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        total += reward
        if terminated or truncated:
            return info, total, step
    raise AssertionError("episode did not end")
