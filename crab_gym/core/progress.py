"""Moved to :mod:`crab_gym.evaluation.progress` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import progress as _new
from crab_gym.evaluation.progress import *  # noqa: F403

__getattr__ = moved("crab_gym.core.progress", _new)
