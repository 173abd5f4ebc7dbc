"""A Gymnasium vector env as a Stable-Baselines3 ``VecEnv``: batched envs without subprocesses.

SB3 and sb3-contrib's ``MaskablePPO`` expect a ``VecEnv`` that resets a finished env within the
same step (its final observation goes to ``infos[i]["terminal_observation"]``) and gives masks
through ``env_method("action_masks")``. :class:`SB3VectorEnv` adapts any Gymnasium
``VectorEnv`` that supports ``reset(options={"reset_mask": ...})`` and ``action_masks()``,
such as the native vector env of ``Realm-P11-v0``::

    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from crab_gym.baselines.sb3_vector import SB3VectorEnv

    venv = SB3VectorEnv(gym.make_vec("Realm-P11-v0", num_envs=64, instance="ft06"))
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=32).learn(100_000)

Needs the ``rl`` extra: ``pip install "crab_gym[rl]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym._optional import require
from crab_gym.baselines.candidate_views import CandidateView

require("torch", "rl")
require("stable_baselines3", "rl", package="stable-baselines3")
from stable_baselines3.common.vec_env.base_vec_env import VecEnv  # noqa: E402

ObsTransform = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


class SB3VectorEnv(VecEnv):
    """SB3's ``VecEnv`` over a Gymnasium ``VectorEnv`` (same-step resets, masks, episode stats).

    Args:
        venv: the vector env (it must accept ``options={"reset_mask": mask}`` in ``reset``).
        transform: a function applied to every batched observation dict (e.g. scaling),
            with ``observation_space`` the single space it produces.
        observation_space: the single observation space after ``transform`` (default: the
            vector env's own).

    Each finished episode adds ``infos[i]["episode"] = {"r": return, "l": length}`` (what SB3
    logs as ``rollout/ep_rew_mean``) and the vector env's final ``info`` entries of that env.
    """

    def __init__(
        self,
        venv: gym.vector.VectorEnv,
        transform: ObsTransform | None = None,
        observation_space: gym.Space | None = None,
    ) -> None:
        self.venv = venv
        self.transform = transform
        super().__init__(
            venv.num_envs,
            observation_space if observation_space is not None else venv.single_observation_space,
            venv.single_action_space,
        )
        self._actions: np.ndarray | None = None
        self._copies: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> Any:
        seeds = self._seeds
        seed = None if all(s is None for s in seeds) else [s if s is not None else 0 for s in seeds]
        obs, _ = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._obs(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            finished = np.flatnonzero(dones)
            final = self._obs(obs)
            for i in finished:
                entry = infos[i]
                for key, value in info.items():
                    if not key.startswith("_") and info.get(f"_{key}", np.ones(self.num_envs, bool))[i]:
                        entry[key] = value[i]
                entry["terminal_observation"] = (
                    {k: v[i] for k, v in final.items()} if isinstance(final, dict) else final[i])
                entry["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                entry["episode"] = {"r": float(self._returns[i]), "l": int(self._lengths[i])}
            self._returns[finished] = 0.0
            self._lengths[finished] = 0
            obs, _ = self.venv.reset(options={"reset_mask": dones})
        return self._obs(obs), rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def action_masks(self) -> np.ndarray:
        """(num_envs, n) bool masks of the vector env."""
        return self.venv.action_masks()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name) if attr_name == "action_masks" else getattr(self.venv, attr_name)] * len(
            self._get_indices(indices)
        )

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.venv, attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.venv.action_masks()[rows])
        raise AttributeError(f"SB3VectorEnv: no per-env method {method_name!r} (only action_masks)")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    # ------------------------------------------------------------------ internals
    def _obs(self, obs: dict[str, np.ndarray]) -> Any:
        """The batched observation SB3 gets: the transform's dict (or array) of writable arrays."""
        out = self.transform(obs) if self.transform is not None else obs
        if not isinstance(out, dict):
            return self._writable("", np.asarray(out))
        return {k: self._writable(k, v) for k, v in out.items()}

    def _writable(self, key: str, value: np.ndarray) -> np.ndarray:
        """A writable array (torch warns on read-only ones). A vector env's read-only arrays
        are replaced, never changed, when they change: one copy per new array."""
        if value.flags.writeable:
            return value
        cached = self._copies.get(key)
        if cached is None or cached[0] is not value:
            cached = self._copies[key] = (value, value.copy())
        return cached[1]


class CandidateVecEnv(SB3VectorEnv):
    """:class:`SB3VectorEnv` seen through a candidate view (``crab_gym.baselines.candidate_views``):
    observations are the view's rows, masks the view's candidates (never empty where a move is
    legal), rewards scaled by ``reward_scale`` for the value function (episode stats unscaled)."""

    def __init__(self, venv: gym.vector.VectorEnv, view: CandidateView, *, reward_scale: float = 1.0) -> None:
        self.view = view
        self.reward_scale = np.float32(reward_scale)
        self._raw: dict[str, np.ndarray] | None = None
        super().__init__(venv, observation_space=view.observation_space(venv.single_action_space.n))

    def _obs(self, obs: dict[str, np.ndarray]) -> np.ndarray:  # type: ignore[override]
        self._raw = obs
        return self.view.features(obs)

    def action_masks(self) -> np.ndarray:
        legal = np.asarray(self.venv.action_masks(), dtype=bool)
        mask = legal & np.asarray(self.view.mask(self._raw), dtype=bool)
        empty = ~mask.any(axis=1)
        mask[empty] = legal[empty]
        return mask

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            return list(self.action_masks()[list(self._get_indices(indices))])
        return super().env_method(method_name, *args, indices=indices, **kwargs)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, dones, infos = super().step_wait()
        return obs, rewards * self.reward_scale, dones, infos


def candidate_vec_env(venv: gym.vector.VectorEnv, view: CandidateView, *, reward_scale: float = 1.0) -> CandidateVecEnv:
    """An SB3 ``VecEnv`` over a native vector env, seen through ``view`` (:class:`CandidateVecEnv`)."""
    return CandidateVecEnv(venv, view, reward_scale=reward_scale)
