"""Shared fixtures: an isolated oracle cache, and the P5/P8 ids registered for these tests
(whether or not the package registers them yet)."""

from __future__ import annotations

import gymnasium as gym
import pytest

ENTRY_POINTS = {
    "Realm-P5-v0": "crab_gym.envs.realm.wedding.env:WeddingEnv",
    "Realm-P8-v0": "crab_gym.envs.realm.wedding.env_disruptions:WeddingDisruptionEnv",
}


def pytest_configure(config):
    import crab_gym  # noqa: F401

    for env_id, entry in ENTRY_POINTS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """On-demand oracle results go to a temporary folder, not the user's cache."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "crab_cache"))
