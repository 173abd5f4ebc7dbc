"""Moved to :mod:`crab_gym.evaluation.cpu_turn` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import cpu_turn as _new
from crab_gym.evaluation.cpu_turn import *  # noqa: F403

__getattr__ = moved("crab_gym.core.cpu_turn", _new)
