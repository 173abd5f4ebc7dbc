"""Baselines: random, heuristics, OR-Tools oracles, Stable-Baselines3 training, LLM agent."""

from crab_gym.baselines.random_policy import RandomPolicy

__all__ = ["RandomPolicy"]
