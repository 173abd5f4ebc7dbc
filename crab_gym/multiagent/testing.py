"""Moved to :mod:`crab_gym.checks.joint_contract` (the checks sit above the envs they drive);
this alias warns and goes in the next release."""

from crab_gym._deprecated import moved
from crab_gym.checks import joint_contract as _new
from crab_gym.checks.joint_contract import *  # noqa: F403

__getattr__ = moved("crab_gym.multiagent.testing", _new)
