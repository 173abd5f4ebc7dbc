"""Moved to :mod:`crab_gym.evaluation.benchmark` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import benchmark as _new
from crab_gym.evaluation.benchmark import *  # noqa: F403

__getattr__ = moved("crab_gym.core.benchmark", _new)
