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
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym.envs.realm.disaster_relief import features as relief
from crab_gym.envs.realm.jobshop.features import N_FEATURES, job_features, non_delay_mask
from crab_gym.envs.realm.thanksgiving import features as thanksgiving
from crab_gym.envs.realm.wedding import features as wedding


@dataclass(frozen=True)
class CandidateView:
    """One problem's candidates: ``features(obs) -> (..., n, F)`` and ``mask(obs) -> (..., n)``."""

    name: str
    env_ids: tuple[str, ...]
    n_features: int
    features: Callable[[dict[str, np.ndarray]], np.ndarray]
    mask: Callable[[dict[str, np.ndarray]], np.ndarray]
    doc: str
    #: Train on fresh generated instances through the id's native vector env, made with these
    #: keywords (plus ``generator=``); None: train on a pool of the split's instances.
    vector_kwargs: dict[str, Any] | None = None
    #: Rewards are multiplied by this while training (the value function's scale).
    reward_scale: float = 1.0
    #: MaskablePPO keywords for this view's ids, over ``rl_train.PPO_DEFAULTS`` (a
    #: ``TrainSpec.ppo`` overrides them in turn); ``crab-gym train`` applies them.
    ppo: dict[str, Any] = field(default_factory=dict)

    def observation_space(self, n_candidates: int) -> gym.spaces.Box:
        return gym.spaces.Box(-np.inf, np.inf, (int(n_candidates), self.n_features), np.float32)


JOBSHOP = CandidateView(
    "jobshop", ("Realm-P11-v0",), N_FEATURES, job_features, non_delay_mask,
    "P11's jobs: crab_gym.envs.realm.jobshop.features (non-delay candidates)",
    vector_kwargs={"reference": "bound", "reward_mode": "makespan"}, reward_scale=0.01,
)

#: PPO for the routing/scheduling families trained on a pool of dev instances (episodes of
#: 10-40 steps, a few CPU-minutes of training): smaller, more frequent updates than P11's.
SHORT_EPISODES: dict[str, Any] = {"n_steps": 256, "batch_size": 512, "n_epochs": 4}

WEDDING = CandidateView(
    "wedding", ("Realm-P5-v0", "Realm-P8-v0"), wedding.N_FEATURES, wedding.wedding_features, wedding.wedding_mask,
    "P5/P8's drives, waits and finishes: crab_gym.envs.realm.wedding.features (every legal action)",
    # a larger step and more epochs: at P6's settings P5 stays at the heuristic's level (dev 0.61
    # after 120k steps); with these it climbs past it (dev 0.87 after 61k steps)
    ppo={**SHORT_EPISODES, "learning_rate": 1e-3, "ent_coef": 0.003, "n_epochs": 8},
)
THANKSGIVING = CandidateView(
    "thanksgiving", ("Realm-P6-v0", "Realm-P9-v0"), thanksgiving.N_FEATURES, thanksgiving.thanksgiving_features,
    thanksgiving.thanksgiving_mask,
    "P6/P9's car sends, task starts and wait: crab_gym.envs.realm.thanksgiving.features (every legal action)",
    ppo=SHORT_EPISODES,
)
RELIEF = CandidateView(
    "disaster_relief", ("Realm-P7-v0",), relief.N_FEATURES, relief.relief_features, relief.relief_mask,
    "P7's sends and waits: crab_gym.envs.realm.disaster_relief.features (every legal action)",
    ppo=SHORT_EPISODES,
)

#: The views by name (the name a trained model records).
VIEWS: dict[str, CandidateView] = {v.name: v for v in (JOBSHOP, WEDDING, THANKSGIVING, RELIEF)}


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


class PooledCandidates(gym.Env):
    """Training on a problem without a generator of fresh instances: one env per instance of a
    pool (e.g. the id's ``dev`` split), a random one at each reset (drawn from the env's own
    seeded generator), seen through ``view`` with the rows padded to ``n_candidates`` (illegal,
    all-zero rows: the size-agnostic policy ignores them)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, envs: list[gym.Env], view: CandidateView, n_candidates: int | None = None) -> None:
        from crab_gym.wrappers.discrete import DiscreteActions

        if not envs:
            raise ValueError("PooledCandidates needs at least one env")
        self.envs = [CandidateObservations(DiscreteActions(e), view) for e in envs]
        most = max(int(e.action_space.n) for e in self.envs)
        self.n_candidates = int(n_candidates if n_candidates is not None else most)
        if self.n_candidates < most:
            raise ValueError(f"n_candidates={self.n_candidates} is below the pool's largest instance ({most})")
        self.view = view
        self.observation_space = view.observation_space(self.n_candidates)
        self.action_space = gym.spaces.Discrete(self.n_candidates)
        self.current = self.envs[0]

    def _pad(self, rows: np.ndarray) -> np.ndarray:
        out = np.zeros((self.n_candidates, self.view.n_features), dtype=np.float32)
        out[: rows.shape[0]] = rows
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.current = self.envs[int(self.np_random.integers(len(self.envs)))]
        obs, info = self.current.reset(seed=int(self.np_random.integers(2**31 - 1)), options=options)
        return self._pad(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        index = int(np.asarray(action).reshape(-1)[0])
        if index >= self.current.action_space.n:  # a padded row: the env rejects it, unchanged
            index = -1
        obs, reward, terminated, truncated, info = self.current.step(index)
        return self._pad(obs), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        mask = np.zeros(self.n_candidates, dtype=bool)
        own = self.current.action_masks()
        mask[: own.shape[0]] = own
        return mask

    def close(self) -> None:
        for env in self.envs:
            env.close()
