"""Moved to :mod:`crab_gym.checks.scoring_probes` (the checks sit above the baselines they drive); this
alias warns and goes in the next release."""

from crab_gym._deprecated import moved
from crab_gym.checks import scoring_probes as _new
from crab_gym.checks.scoring_probes import *  # noqa: F403

__getattr__ = moved("crab_gym.envs.scoring_probes", _new)
