"""Moved to :mod:`crab_gym.checks.contract` (``check_scoring``: :mod:`crab_gym.checks`; the
command: ``python -m crab_gym.checks``); this alias warns and goes in the next release.
``python -m crab_gym.envs.testing`` still runs the command."""

import warnings

from crab_gym._deprecated import moved
from crab_gym.checks import ScoringReport, check_adversarial, check_honest_roles, check_scoring  # noqa: F401
from crab_gym.checks import contract as _new
from crab_gym.checks.cli import main, scoring_main  # noqa: F401
from crab_gym.checks.contract import *  # noqa: F403

__getattr__ = moved("crab_gym.envs.testing", _new)

if __name__ == "__main__":  # the module run as a command: say so where the default filters show it
    warnings.warn("python -m crab_gym.envs.testing is now python -m crab_gym.checks", DeprecationWarning, stacklevel=1)
    raise SystemExit(main())
