"""Baselines: random, heuristics, OR-Tools oracles, Stable-Baselines3 training, LLM agent.

Torch and openai are imported only when the RL and LLM baselines are used.
"""

from crab_gym.baselines.llm_agent import LLMAgent, LLMAgentError, LLMEpisode
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.random_policy import RandomPolicy
from crab_gym.baselines.sb3 import MaskablePPOPolicy, evaluate_masked, train_maskable_ppo

__all__ = [
    "LLMAgent",
    "LLMAgentError",
    "LLMEpisode",
    "MaskablePPOPolicy",
    "OraclePolicy",
    "RandomPolicy",
    "evaluate_masked",
    "train_maskable_ppo",
]
