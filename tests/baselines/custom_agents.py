"""Policies for ``crab-gym run --policy tests.baselines.custom_agents:NAME`` (tests/baselines/test_custom_policy.py):
module-level, so that worker processes import them by name."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class LegalAtRandom:
    """Uniform over the legal flat actions, from a stream the episode's seed sets: a policy whose
    episodes differ by seed, so that a run in workers must seed each episode as a serial run does."""

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        self.rng = np.random.default_rng(0)

    def reset(self, env: gym.Env) -> None:
        self.env = env

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        base = self.env.unwrapped
        legal = np.flatnonzero(np.asarray(base.action_masks(), dtype=bool))
        return base.codec.flat_to_call(int(self.rng.choice(legal)))


def make_legal_at_random(env: gym.Env) -> LegalAtRandom:
    """A seeded random legal player (the factory form of --policy module:factory)."""
    return LegalAtRandom(env)


def job_shop_only(env: gym.Env) -> LegalAtRandom:
    """The same player, declaring the envs it fits."""
    return LegalAtRandom(env)


job_shop_only.env_ids = ("Realm-P11-v0",)  # type: ignore[attr-defined]

#: Not callable: --policy refuses it.
NOT_A_FACTORY = 3


def a_policy_not_a_factory(observation: Any, info: dict[str, Any], extra: Any) -> Any:
    """A policy-shaped function with no env: --policy refuses it (it needs a factory)."""
    raise AssertionError("never called")
