"""Moved to :mod:`crab_gym.evaluation.report_rows` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import report_rows as _new
from crab_gym.evaluation.report_rows import *  # noqa: F403

__getattr__ = moved("crab_gym.core.report_rows", _new)
