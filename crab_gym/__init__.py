"""crab_gym: real-world planning problems and a real desktop as Gymnasium environments."""

from crab_gym.envs.registration import multiagent_ids, parallel_env, register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["multiagent_ids", "parallel_env", "register_envs"]
