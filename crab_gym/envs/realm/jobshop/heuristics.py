"""Priority dispatching rules for Realm-P11-v0 (job-shop scheduling).

Each rule is a policy that reads only the observation and the action mask, scores every job
that still has operations, and dispatches the best one. "Next operation" means the job's
first operation whose ``done`` flag is 0.

============  ===========================================================================
rule          picks the legal job with ...
============  ===========================================================================
``SPT``       the shortest processing time of its next operation
``LPT``       the longest processing time of its next operation
``MWKR``      the most work remaining (sum of durations of its unscheduled operations)
``MOR``       the most operations remaining
``FIFO``      the earliest ready time of its next operation: the completion time of the
              job's previous operation (``lower_bound`` of that done operation), 0 if the
              job has not started -- the job that has waited longest
============  ===========================================================================

**Ties** are always broken by the **lowest job index** (``numpy.argmin`` over the scores
with illegal jobs set to +inf returns the first minimum). With an all-zero mask (episode
over) the rules return job 0, which the env reports as invalid.

Usage::

    env = gymnasium.make("Realm-P11-v0", instance="ta01")
    obs, info = env.reset()
    rule = RULES["MWKR"]
    while True:
        obs, reward, terminated, truncated, info = env.step(rule(obs))
        if terminated: break
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.policy_fit import EnvFit, observation_fit_error

#: The env the rules act on, and the observation keys they read.
JOBSHOP_ENV = "crab_gym.envs.realm.jobshop.env.JobShopEnv"
OBS_KEYS = ("action_mask", "done", "lower_bound", "processing_time")


def _next_op_arrays(obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(done as bool, durations, operations done per job, duration of each job's next op)."""
    done = np.asarray(obs["done"], dtype=bool)
    proc = np.asarray(obs["processing_time"], dtype=np.float64)
    n, m = done.shape
    n_done = done.sum(axis=1)
    rows = np.arange(n)
    p_next = proc[rows, np.minimum(n_done, m - 1)]
    return done, proc, n_done, p_next


def spt_scores(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Shortest processing time of the next operation first."""
    return _next_op_arrays(obs)[3]


def lpt_scores(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Longest processing time of the next operation first."""
    return -_next_op_arrays(obs)[3]


def mwkr_scores(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Most work remaining first."""
    done, proc, _, _ = _next_op_arrays(obs)
    return -np.where(done, 0.0, proc).sum(axis=1)


def mor_scores(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Most operations remaining first."""
    done = np.asarray(obs["done"], dtype=bool)
    return -(done.shape[1] - done.sum(axis=1)).astype(np.float64)


def fifo_scores(obs: dict[str, np.ndarray]) -> np.ndarray:
    """Earliest ready time of the next operation first."""
    done, _, n_done, _ = _next_op_arrays(obs)
    lb = np.asarray(obs["lower_bound"], dtype=np.float64)
    rows = np.arange(done.shape[0])
    prev_end = lb[rows, np.maximum(n_done - 1, 0)]
    return np.where(n_done > 0, prev_end, 0.0)


class DispatchingRule:
    """A priority rule as a policy: the legal job with the lowest score (ties: lowest index).

    ``rule.select(obs, mask)`` returns the job index (= the flat action index of
    ``dispatch``); ``rule(obs, info_or_mask)`` returns the tool call
    ``{"name": "dispatch", "arguments": {"job": j}}``, which ``env.step`` accepts whatever
    the wrapper stack, and which matches the benchmark policy signature ``(obs, info)``.
    """

    def __init__(self, name: str, scores: Callable[[dict[str, np.ndarray]], np.ndarray], doc: str):
        self.name = name
        self.scores = scores
        self.description = doc
        self.fit = EnvFit(f"dispatching rule {name}", JOBSHOP_ENV, ("Realm-P11-v0",))

    def select(self, observation: dict[str, np.ndarray], mask: np.ndarray | None = None) -> int:
        try:
            legal = np.asarray(observation["action_mask"] if mask is None else mask, dtype=bool)
            if not legal.any():
                return 0
            keyed = np.where(legal, self.scores(observation), np.inf)
        except (KeyError, IndexError, TypeError):  # no cost on the way a P11 observation takes
            self._check_observation(observation)
            raise
        return int(np.argmin(keyed))

    def _check_observation(self, observation: Any) -> None:
        """A PolicyFitError if ``observation`` is not a P11 observation (one that lacks a key)."""
        if not isinstance(observation, dict) or not set(OBS_KEYS) <= set(observation):
            raise observation_fit_error(self.fit.policy, self.fit.acts_on, OBS_KEYS, observation) from None

    def __call__(self, observation: dict[str, np.ndarray], info: Any = None, *, mask: np.ndarray | None = None) -> dict:
        if mask is None and isinstance(info, np.ndarray):
            mask = info
        return {"name": "dispatch", "arguments": {"job": self.select(observation, mask)}}

    def reset(self, env: Any = None) -> None:
        """Rules keep no state between episodes; ``env`` (if given) must be a P11 env."""
        if env is not None:
            self.fit.check(env)

    def __repr__(self) -> str:
        return f"DispatchingRule({self.name})"


SPT = DispatchingRule("SPT", spt_scores, "shortest processing time of the next operation")
LPT = DispatchingRule("LPT", lpt_scores, "longest processing time of the next operation")
MWKR = DispatchingRule("MWKR", mwkr_scores, "most work remaining")
MOR = DispatchingRule("MOR", mor_scores, "most operations remaining")
FIFO = DispatchingRule("FIFO", fifo_scores, "earliest ready time of the next operation")

#: The rules by name, in the order tables list them.
RULES: dict[str, DispatchingRule] = {r.name: r for r in (SPT, LPT, MWKR, MOR, FIFO)}


def run_rule(env: Any, rule: DispatchingRule, *, seed: int | None = None, options: dict | None = None) -> dict:
    """Play one episode of ``rule`` in a P11 env; returns the final ``info``."""
    obs, info = env.reset(seed=seed, options=options)
    while True:
        obs, _, terminated, truncated, info = env.step(rule(obs, info))
        if not info["valid"]:
            raise RuntimeError(f"{rule.name} chose an invalid action: {info['error']}")
        if terminated or truncated:
            return info
