"""Multi-agent REALM: PettingZoo views of the multi-agent problems (the ``multiagent`` extra).

``crab_gym.parallel_env(id)`` gives a :class:`RealmParallelEnv`; ``crab_gym.multiagent.aec_env(id)`` its
turn-based (AEC) form for agents that act one at a time, such as LLMs. The single-agent env
stays the only copy of every problem's rules.
"""

from crab_gym.multiagent.aec import aec_env
from crab_gym.multiagent.binding import NOOP, AgentBinding
from crab_gym.multiagent.parallel import INFO_KEYS, RealmParallelEnv

__all__ = ["NOOP", "INFO_KEYS", "AgentBinding", "RealmParallelEnv", "aec_env"]
