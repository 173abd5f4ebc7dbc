"""Job-shop instances (REALM P11), as before the family layout: a facade over
:mod:`crab_gym.envs.realm.jobshop`, which owns them."""

from crab_gym.envs.realm.jobshop import *  # noqa: F403
from crab_gym.envs.realm.jobshop import __all__  # noqa: F401
