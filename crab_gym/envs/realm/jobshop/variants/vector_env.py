"""Realm-J2/J3/J4 as vector envs (``gym.make_vec(id, num_envs=N)``): N envs behind one
``VectorEnv`` with flat ``dispatch`` actions, equal step for step to N single envs.

Each env is the single env itself (its unwrapped class), so observations, rewards,
terminations, disruptions and metrics are the single env's by construction; the vector env
saves Gymnasium's per-env wrappers and ``SyncVectorEnv``'s bookkeeping and stacks the
observations into preallocated arrays. It is **not** numpy-batched: a step is a Python loop
over the N envs (P11's :mod:`~crab_gym.envs.realm.jobshop.vector_sim` batches fixed-length
jobs only), so it runs at about the single env's speed per env-step (see docs/jobshop.md).

Autoreset is Gymnasium's ``NEXT_STEP``: the completing step returns the final observation
with ``terminated`` and, in ``info``, ``makespan`` and ``optimality`` of that env
(``info["_makespan"]`` marks which); on the next step its action is ignored and it restarts.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from crab_gym.envs.realm.jobshop.variants.env import ShopEnv
from crab_gym.envs.realm.jobshop.variants.env_disruptions import DisruptedShopEnv, J4Env

try:
    from gymnasium.vector import AutoresetMode

    _NEXT_STEP: Any = AutoresetMode.NEXT_STEP
except ImportError:  # pragma: no cover - Gymnasium 1.0
    _NEXT_STEP = "NextStep"


class ShopVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` Realm-J3-v0 envs (subclasses: J2, J4) stepped together.

    Actions: ``MultiDiscrete([n_jobs] * num_envs)`` (``single_action_space`` is
    ``Discrete(n_jobs)``, the single env's flat ``dispatch`` choice); a masked job changes
    nothing in its env (``info["valid"]`` False there). ``action_masks()`` is (N, n_jobs).
    ``kwargs`` go to every env; ``instances=[...]`` gives one instance per env (one shape).
    """

    env_class: ClassVar[type[ShopEnv]] = ShopEnv
    metadata: dict[str, Any] = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, instances: list[Any] | None = None, **kwargs: Any) -> None:
        if instances is not None and len(instances) != num_envs:
            raise ValueError(f"instances must list {num_envs} instances, got {len(instances)}")
        specs = instances or [kwargs.pop("instance", None)] * num_envs
        kwargs.pop("render_mode", None)
        self.envs = [self.env_class(spec, **kwargs) for spec in specs]
        first = self.envs[0]
        if any(e.instance.shape != first.instance.shape for e in self.envs):
            raise ValueError("every env of a vector env needs an instance of the same shape")
        self.num_envs = num_envs
        self.single_observation_space = first.observation_space
        self.single_action_space = spaces.Discrete(first.instance.n_jobs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._obs = {k: np.zeros((num_envs, *s.shape), s.dtype) for k, s in self.single_observation_space.spaces.items()}

    def _write(self, i: int, obs: dict[str, np.ndarray]) -> None:
        for key, value in obs.items():
            self._obs[key][i] = value

    def _observation(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self._obs.items()}

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        seeds = seed if isinstance(seed, list) else [None if seed is None else seed + i for i in range(self.num_envs)]
        mask = (options or {}).get("reset_mask")
        for i, env in enumerate(self.envs):
            if mask is None or mask[i]:
                obs, _ = env.reset(seed=seeds[i])
                self._write(i, obs)
                self._needs_reset[i] = False
        return self._observation(), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = np.asarray(actions).reshape(self.num_envs)
        n = self.num_envs
        rewards, terminated = np.zeros(n), np.zeros(n, dtype=bool)
        valid, makespan, optimality, done_mask = np.ones(n, bool), np.zeros(n), np.zeros(n), np.zeros(n, bool)
        for i, env in enumerate(self.envs):
            if self._needs_reset[i]:
                obs, _ = env.reset()
                self._needs_reset[i] = False
                self._write(i, obs)
                continue
            obs, reward, term, _, info = env.step((0, {"job": int(actions[i])}))
            self._write(i, obs)
            rewards[i], terminated[i], valid[i] = reward, term, info["valid"]
            if term:
                self._needs_reset[i] = done_mask[i] = True
                makespan[i] = info["metrics"].get("makespan", 0)
                optimality[i] = info["metrics"].get("optimality") or 0.0
        infos = {"valid": valid, "makespan": makespan, "_makespan": done_mask,
                 "optimality": optimality, "_optimality": done_mask}
        return self._observation(), rewards, terminated, np.zeros(n, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        return np.stack([e.action_masks()[: self.single_action_space.n] for e in self.envs])

    def solution(self, i: int) -> dict[str, Any]:
        return self.envs[i]._solution()


J3VectorEnv = ShopVectorEnv


class J2VectorEnv(ShopVectorEnv):
    """``num_envs`` Realm-J2-v0 envs."""

    env_class = DisruptedShopEnv


class J4VectorEnv(ShopVectorEnv):
    """``num_envs`` Realm-J4-v0 envs."""

    env_class = J4Env
