"""Moved to :mod:`crab_gym.evaluation.episode_runner` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import episode_runner as _new
from crab_gym.evaluation.episode_runner import *  # noqa: F403

__getattr__ = moved("crab_gym.core.episode_runner", _new)
