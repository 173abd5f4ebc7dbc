"""The turn-based (AEC) form of a multi-agent REALM env, for agents that act one at a time.

PettingZoo's ``parallel_to_aec`` collects one choice per agent, in ``possible_agents`` order,
and runs the joint step once the last live agent has chosen; the joint-step rules of
:mod:`crab_gym.multiagent.parallel` (order, conflicts, passing) are therefore the same.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec

from crab_gym.multiagent.parallel import RealmParallelEnv


def aec_env(env_id: str, **kwargs: Any) -> Any:
    """A PettingZoo ``AECEnv`` over :class:`RealmParallelEnv` ``(env_id, **kwargs)``."""
    return parallel_to_aec(RealmParallelEnv(env_id, **kwargs))
