"""Doing nothing as a policy: the floor of every score (the scoring contract's promise 2).

It submits the emptiest plan the env's ``submit_plan`` tool allows (again at each pause of a
disruption problem), or, on a multi-agent problem without one, passes every actor's turn.
Problems where every move does something (P1's single walker, the job shops' dispatches) have
no way to do nothing: building the policy there raises :class:`PolicyFitError`, so a report
never shows a do-nothing row that did something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from crab_gym.core.schema import emptiest_arguments
from crab_gym.envs.realm.common.policy_fit import PolicyFitError
from crab_gym.envs.realm.index import problem_specs


class DoNothingPolicy:
    """Submits an empty plan, or passes; raises :class:`PolicyFitError` where neither exists."""

    name = "do_nothing"

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        env_id = getattr(getattr(env, "spec", None), "id", None) or type(env.unwrapped).__name__
        problem = next((s for s in problem_specs() if s.env_id == env_id), None)
        if (problem is not None and not problem.idle_plan) or self._call() is None:
            raise PolicyFitError(f"doing nothing does not apply to {env_id}: it has no submit_plan tool and "
                                 "no pass move (every move does something)")

    def reset(self, env: gym.Env | None = None) -> None:
        """A reused policy acts in the env it is given."""
        if env is not None:
            self.env = env

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        return self._call()

    def _call(self) -> dict[str, Any] | None:
        base = self.env.unwrapped
        schema = _submit_schema(base)
        if schema is not None:
            return {"name": "submit_plan", "arguments": emptiest_arguments(schema)}
        if getattr(base, "agent_arguments", ()) and callable(getattr(base, "joint_pass_call", None)):
            return base.joint_pass_call()
        return None


def _submit_schema(base: Any) -> Mapping[str, Any] | None:
    tools = base.tools() if callable(getattr(base, "tools", None)) else []
    return next((t["function"]["parameters"] for t in tools if t["function"]["name"] == "submit_plan"), None)
