"""Named baseline policies for the CLI and benchmarks: name -> factory(env) -> policy.

Problem-specific heuristics only apply to their own env; ``crab-gym run`` reports an error
for a policy that does not fit the env it is asked to run on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from crab_gym.baselines.random_policy import RandomPolicy


class _EnvPolicy:
    """Adapts ``f(env) -> action`` heuristics to the ``policy(obs, info)`` signature."""

    def __init__(self, env: gym.Env, choose: Callable[[gym.Env], Any]) -> None:
        self.env, self.choose = env, choose

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.choose(self.env)


def _llm_agent() -> Any:
    """An :class:`LLMAgent` configured from the environment ($CRAB_GYM_LLM_MODEL, $OPENAI_BASE_URL)."""
    from crab_gym.baselines.llm_agent import LLMAgent

    return LLMAgent()


def policy_factories() -> dict[str, Callable[[gym.Env], Any]]:
    """Every named policy."""
    from crab_gym.baselines.dispatching import RULES
    from crab_gym.baselines.heuristics_p1_p2 import EarliestStartPolicy, InsertionTourPolicy
    from crab_gym.baselines.heuristics_p3_p4 import greedy_action
    from crab_gym.baselines.oracle_policy import OraclePolicy

    factories: dict[str, Callable[[gym.Env], Any]] = {
        "random": lambda env: RandomPolicy(env, seed=0),
        "oracle": lambda env: OraclePolicy(env),
        "p1_insertion": lambda env: InsertionTourPolicy(env),
        "p2_earliest_start": lambda env: EarliestStartPolicy(env),
        "ridesharing_greedy": lambda env: _EnvPolicy(env, greedy_action),
        "llm": lambda env: _llm_agent(),
    }
    factories.update({name.lower(): (lambda env, rule=rule: rule) for name, rule in RULES.items()})
    return factories
