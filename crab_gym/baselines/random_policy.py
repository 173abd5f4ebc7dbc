"""A uniformly random policy over the *legal* finite choices (or the whole space)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class RandomPolicy:
    """Picks uniformly among legal finite actions (``action_masks``), seeded for reproducibility.

    Envs without finite choices fall back to ``action_space.sample()``.
    """

    name = "random"

    def __init__(self, env: gym.Env, seed: int | None = 0) -> None:
        self.env = env
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the action draws from ``seed`` (a benchmark calls it with each episode's
        seed, so that episodes differ and each one replays exactly)."""
        self.rng = np.random.default_rng(seed)
        self.env.action_space.seed(seed)

    def reset(self, env: gym.Env | None = None) -> None:
        """Nothing to forget between episodes (the generator keeps running)."""

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        base = self.env.unwrapped
        if getattr(base, "codec", None) is not None and base.codec.n_flat and hasattr(base, "action_masks"):
            legal = np.flatnonzero(base.action_masks())
            if legal.size:
                return base.codec.flat_to_call(int(self.rng.choice(legal)))
        return self.env.action_space.sample()
