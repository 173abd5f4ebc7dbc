"""Moved to :mod:`crab_gym.evaluation.worker_death` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import worker_death as _new
from crab_gym.evaluation.worker_death import *  # noqa: F403

__getattr__ = moved("crab_gym.core.worker_death", _new)
