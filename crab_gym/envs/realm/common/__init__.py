"""What every REALM problem family shares: the env base and its mixins, instance loading and
its errors, the solver cache, numeric limits, upstream-file detection.

Imports only :mod:`crab_gym.core`, :mod:`crab_gym.envs.base` and :mod:`crab_gym.envs.canvas`.
"""
