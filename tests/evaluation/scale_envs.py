"""Toy envs for the evaluation-at-scale tests, importable by worker processes and Ray workers.

Importing this module registers ``SlowLamps-v0`` (so ``gym.make("tests.evaluation.scale_envs:SlowLamps-v0")``
works in a fresh process, e.g. ``python -m crab_gym.cli run``) and ``CrashingLamps-v0``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from tests.core.toy_env import LampsEnv


class SlowLamps(LampsEnv):
    """The lamps env with a pause per step: long enough to kill a run between episodes."""

    def __init__(self, step_seconds: float = 0.05, **kwargs):
        super().__init__(**kwargs)
        self.step_seconds = step_seconds

    def step(self, action):
        time.sleep(self.step_seconds)
        return super().step(action)


class CrashingLamps(LampsEnv):
    """Kills its own process on reset with ``crash_seed`` (a worker dying mid-episode), after
    appending a line to ``marker`` so the test can count the attempts."""

    def __init__(self, crash_seed: int = -1, marker: str = "", **kwargs):
        super().__init__(**kwargs)
        self.crash_seed, self.marker = crash_seed, marker

    def reset(self, *, seed=None, options=None):
        if seed == self.crash_seed:
            with Path(self.marker).open("a") as f:
                f.write(f"{os.getpid()}\n")
            os._exit(3)
        return super().reset(seed=seed, options=options)


class FirstLegal:
    """A light policy (no baselines import, so workers start fast): the first legal action."""

    def __init__(self, env: gym.Env) -> None:
        self.env = env

    def __call__(self, observation, info):
        base = self.env.unwrapped
        return base.codec.flat_to_call(int(np.flatnonzero(base.action_masks())[0]))


def first_legal(env: gym.Env) -> FirstLegal:
    """A module-level factory: picklable by reference, so process workers can rebuild it."""
    return FirstLegal(env)


for _id, _entry in (("SlowLamps-v0", "tests.evaluation.scale_envs:SlowLamps"),
                    ("CrashingLamps-v0", "tests.evaluation.scale_envs:CrashingLamps")):
    if _id not in gym.registry:
        gym.register(_id, entry_point=_entry)
