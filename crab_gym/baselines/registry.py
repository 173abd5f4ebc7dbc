"""Named baseline policies for the CLI and benchmarks: name -> factory(env) -> policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from crab_gym.baselines.random_policy import RandomPolicy


def policy_factories() -> dict[str, Callable[[gym.Env], Any]]:
    """Every named policy. Heuristics apply only to their own problems."""
    return {"random": lambda env: RandomPolicy(env, seed=0)}
