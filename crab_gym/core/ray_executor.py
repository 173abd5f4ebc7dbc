"""Moved to :mod:`crab_gym.evaluation.ray_executor` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import ray_executor as _new
from crab_gym.evaluation.ray_executor import *  # noqa: F403

__getattr__ = moved("crab_gym.core.ray_executor", _new)
