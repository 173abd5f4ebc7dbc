"""Moved to :mod:`crab_gym.evaluation.llm_report` (the evaluation runner); this alias warns and goes in
the next release."""

from crab_gym._deprecated import moved
from crab_gym.evaluation import llm_report as _new
from crab_gym.evaluation.llm_report import *  # noqa: F403

__getattr__ = moved("crab_gym.core.llm_report", _new)
