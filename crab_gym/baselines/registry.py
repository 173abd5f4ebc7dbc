"""Named baseline policies for the CLI and benchmarks: name -> factory(env) -> policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from crab_gym.baselines.random_policy import RandomPolicy


def policy_factories() -> dict[str, Callable[[gym.Env], Any]]:
    """Every named policy. Problem-specific heuristics only apply to their own env."""
    from crab_gym.baselines.dispatching import RULES

    factories: dict[str, Callable[[gym.Env], Any]] = {"random": lambda env: RandomPolicy(env, seed=0)}
    factories.update({name.lower(): (lambda env, rule=rule: rule) for name, rule in RULES.items()})
    return factories
