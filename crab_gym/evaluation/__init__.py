"""The evaluation runner: play policies on Gymnasium env ids for seeded episodes, in threads,
processes or on Ray, keep every finished episode, and report (intervals, LLM tables, cards).

It imports nothing else of crab_gym: it plays any registered env, so the vocabulary
(:mod:`crab_gym.core`, which names its :class:`Benchmark`) and the envs (which score an episode
by its :mod:`~crab_gym.evaluation.unfinished` rule) sit above it.
"""

from crab_gym.evaluation.benchmark import Benchmark, BenchmarkReport
from crab_gym.evaluation.episode import EnvCase, EpisodeResult, EpisodeSpec

__all__ = ["Benchmark", "BenchmarkReport", "EnvCase", "EpisodeResult", "EpisodeSpec"]
