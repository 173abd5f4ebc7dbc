"""Candidate views: how an env's observation becomes rows for :class:`~.candidate_policy.CandidatePolicy`.

A view names a problem's candidates (P11: its jobs, the flat ``dispatch`` index), turns an
observation into one feature row per candidate, and says which candidates the policy may pick
(a subset of the env's legal actions). The same view serves the single env
(:class:`CandidateObservations`, over ``DiscreteActions``) and the native vector env
(:class:`CandidateVecEnv`), and its name is saved with a trained model so that
``crab-gym run --policy sb3:model.zip`` plays it through the same view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.jobshop.features import N_FEATURES, job_features, non_delay_mask


@dataclass(frozen=True)
class CandidateView:
    """One problem's candidates: ``features(obs) -> (..., n, F)`` and ``mask(obs) -> (..., n)``."""

    name: str
    env_ids: tuple[str, ...]
    n_features: int
    features: Callable[[dict[str, np.ndarray]], np.ndarray]
    mask: Callable[[dict[str, np.ndarray]], np.ndarray]
    doc: str

    def observation_space(self, n_candidates: int) -> gym.spaces.Box:
        return gym.spaces.Box(-np.inf, np.inf, (int(n_candidates), self.n_features), np.float32)


JOBSHOP = CandidateView(
    "jobshop", ("Realm-P11-v0",), N_FEATURES, job_features, non_delay_mask,
    "P11's jobs: crab_gym.envs.realm.jobshop.features (non-delay candidates)",
)

#: The views by name (the name a trained model records).
VIEWS: dict[str, CandidateView] = {v.name: v for v in (JOBSHOP,)}


def view_for(env_id: str) -> CandidateView:
    """The view of an env id; a KeyError names the ids that have one."""
    for view in VIEWS.values():
        if env_id in view.env_ids:
            return view
    known = sorted(i for v in VIEWS.values() for i in v.env_ids)
    raise KeyError(f"{env_id} has no candidate view (ids with one: {', '.join(known)})")


def get_view(name: str) -> CandidateView:
    if name not in VIEWS:
        raise KeyError(f"unknown candidate view {name!r} (known: {', '.join(sorted(VIEWS))})")
    return VIEWS[name]


class CandidateObservations(gym.Wrapper):
    """Over an env with ``DiscreteActions``: observations become the view's rows and
    ``action_masks()`` the view's candidates (never all False while a legal action exists)."""

    def __init__(self, env: gym.Env, view: CandidateView) -> None:
        super().__init__(env)
        self.view = view
        n_candidates = int(env.action_space.n)
        self.observation_space = view.observation_space(n_candidates)
        self._last: dict[str, np.ndarray] | None = None

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last = obs
        return self.view.features(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._last = obs
        return self.view.features(obs), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        legal = np.asarray(self.env.get_wrapper_attr("action_masks")(), dtype=bool)
        if self._last is None:
            return legal
        mask = legal & np.asarray(self.view.mask(self._last), dtype=bool)
        return mask if mask.any() else legal


def candidate_vec_env(venv: gym.vector.VectorEnv, view: CandidateView, *, reward_scale: float = 1.0) -> Any:
    """An SB3 ``VecEnv`` over a native vector env, seen through ``view`` (:class:`CandidateVecEnv`)."""
    from crab_gym.baselines.sb3_vector import SB3VectorEnv

    class CandidateVecEnv(SB3VectorEnv):
        """SB3VectorEnv whose observations are the view's rows, masks the view's candidates, and
        rewards scaled by ``reward_scale`` (for the value function; the episode stats are unscaled)."""

        def _obs(self, obs: dict[str, np.ndarray]) -> np.ndarray:  # type: ignore[override]
            self._raw = obs
            return view.features(obs)

        def action_masks(self) -> np.ndarray:
            legal = np.asarray(self.venv.action_masks(), dtype=bool)
            mask = legal & np.asarray(view.mask(self._raw), dtype=bool)
            empty = ~mask.any(axis=1)
            mask[empty] = legal[empty]
            return mask

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            if method_name == "action_masks":
                return list(self.action_masks()[list(self._get_indices(indices))])
            return super().env_method(method_name, *args, indices=indices, **kwargs)

        def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            obs, rewards, dones, infos = super().step_wait()
            return obs, rewards * np.float32(reward_scale), dones, infos

    return CandidateVecEnv(venv, observation_space=view.observation_space(venv.single_action_space.n))
