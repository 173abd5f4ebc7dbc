"""Helpers shared by the campus_tour (P1) and group_tours (P2) tests: their ids, registration,
rolling a policy out, random masked play and comparing the env's metrics with the checker's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

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


def metrics_match(env_metrics, checked):
    """Each metric the checker computed equals the env's."""
    for key, value in checked.items():
        assert env_metrics[key] == pytest.approx(value), key


def random_masked(env, seed):
    """A seeded policy that picks uniformly among the legal flat actions."""
    rng = np.random.default_rng(seed)
    base = env.unwrapped

    def policy(obs, info):
        legal = np.flatnonzero(obs["action_mask"])
        return base.codec.flat_to_call(int(rng.choice(legal)))

    return policy


@contextmanager
def own_json_cache(monkeypatch: Any, folder: Path, *caches: Any) -> Iterator[Path]:
    """A cache folder of one test alone (``CRAB_GYM_CACHE_DIR``) and empty memory tables of
    ``caches`` (JsonCache objects) before and after it."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(folder))
    for cache in caches:
        cache.clear_memory()
    try:
        yield folder
    finally:
        for cache in caches:
            cache.clear_memory()
