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

from crab_gym.envs.realm.campus_tour import features as campus_features
from crab_gym.envs.realm.disaster_relief import features as relief
from crab_gym.envs.realm.group_tours import features as group_features
from crab_gym.envs.realm.jobshop.features import N_FEATURES, job_features, non_delay_mask
from crab_gym.envs.realm.ridesharing import features as ride_features
from crab_gym.envs.realm.supply_chain import features as supply_features
from crab_gym.envs.realm.thanksgiving import features as thanksgiving
from crab_gym.envs.realm.wedding import features as wedding
from crab_gym.wrappers.discrete import DiscreteActions


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
    #: ``TrainSpec.ppo`` overrides them in turn), so that ``crab-gym train`` reproduces them.
    ppo: dict[str, Any] = field(default_factory=dict)

    def observation_space(self, n_candidates: int) -> gym.spaces.Box:
        return gym.spaces.Box(-np.inf, np.inf, (int(n_candidates), self.n_features), np.float32)


JOBSHOP = CandidateView(
    "jobshop", ("Realm-P11-v0", "Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"), N_FEATURES, job_features, non_delay_mask,
    "P11's jobs: crab_gym.envs.realm.jobshop.features (non-delay candidates)",
    vector_kwargs={"reference": "bound", "reward_mode": "makespan"}, reward_scale=0.01,
)

#: The views trained on a pool of dev instances (episodes of 10-40 steps, a few CPU-minutes):
#: shorter rollouts and smaller batches give ~4x the gradient steps of P11's for the same samples.
SHORT_EPISODES: dict[str, Any] = {"n_steps": 256, "batch_size": 512, "n_epochs": 4}

CAMPUS_TOUR = CandidateView(
    "campus_tour", ("Realm-P1-v0",), campus_features.N_FEATURES, campus_features.visit_features,
    campus_features.visit_mask, "P1's visits: crab_gym.envs.realm.campus_tour.features (end only when no target is legal)",
    ppo=SHORT_EPISODES,
)

GROUP_TOURS = CandidateView(
    "group_tours", ("Realm-P2-v0",), group_features.N_FEATURES, group_features.assign_features,
    group_features.assign_mask, "P2's (group, guide) assignments: crab_gym.envs.realm.group_tours.features",
)

RIDESHARING = CandidateView(
    "ridesharing", ("Realm-P3-v0", "Realm-P4-v0"), ride_features.N_FEATURES, ride_features.dispatch_features,
    ride_features.dispatch_mask,
    "P3/P4's dispatches and parks: crab_gym.envs.realm.ridesharing.features (park only with no legal dispatch)",
)

SUPPLY_CHAIN = CandidateView(
    "supply_chain", ("Realm-P10-v0",), supply_features.N_FEATURES, supply_features.supply_features,
    supply_features.supply_mask,
    "P10's orders, runs and next_day: crab_gym.envs.realm.supply_chain.features (runs at their largest legal level)",
    ppo=SHORT_EPISODES,
)


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
VIEWS: dict[str, CandidateView] = {
    v.name: v for v in (JOBSHOP, CAMPUS_TOUR, GROUP_TOURS, RIDESHARING, SUPPLY_CHAIN, WEDDING, THANKSGIVING, RELIEF)
}


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


class PooledCandidates(gym.Env):
    """Training on a problem without a generator of fresh instances: one env per instance of a
    pool (e.g. the id's ``dev`` split), a random one at each reset (drawn from the env's own
    seeded generator), seen through ``view`` with the rows padded to ``n_candidates`` (illegal,
    all-zero rows: the size-agnostic policy ignores them)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, envs: list[gym.Env], view: CandidateView, n_candidates: int | None = None) -> None:
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


class CandidateModelPolicy:
    """A trained :class:`CandidatePolicy` model as a crab_gym policy ``(obs, info) -> tool call``,
    on an instance of any size: the env's observation goes through the model's view, the
    scorer's logits are masked to the view's candidates, and the flat index becomes a tool call
    through the env's codec. Sampling (``deterministic=False``) draws from torch's generator,
    which :meth:`seed` sets per episode."""

    def __init__(self, model: Any, env: gym.Env, *, deterministic: bool = True, name: str = "candidate_ppo") -> None:
        self.model = model
        self.deterministic = deterministic
        self.name = name
        self.view = get_view(model.policy.view) if model.policy.view else None
        self.env = env
        env_id = getattr(getattr(env, "spec", None), "id", None)
        if self.view is None or (env_id is not None and env_id not in self.view.env_ids):
            raise ValueError(f"the model plays {self.view.env_ids if self.view else 'no known view'}, "
                             f"not {env_id}")

    def reset(self, env: gym.Env | None = None) -> None:
        if env is not None:
            self.env = env

    def seed(self, seed: int) -> None:
        if not self.deterministic:
            import torch

            torch.manual_seed(int(seed))

    def choose(self, observation: dict[str, np.ndarray], legal: np.ndarray) -> int:
        """The flat index the model picks among ``legal`` (narrowed to the view's candidates)."""
        import torch

        legal = np.asarray(legal, dtype=bool)
        mask = legal & np.asarray(self.view.mask(observation), dtype=bool)
        if not mask.any():
            mask = legal if legal.any() else np.ones_like(legal)
        rows = torch.as_tensor(self.view.features(observation)[None])
        with torch.no_grad():
            logits = self.model.policy.mlp_extractor.forward_actor(rows.reshape(1, -1))[0]
            logits = logits.masked_fill(~torch.as_tensor(mask), float("-inf"))
            if self.deterministic:
                return int(torch.argmax(logits))
            return int(torch.distributions.Categorical(logits=logits).sample())

    def __call__(self, observation: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        base = self.env.unwrapped
        return base.codec.flat_to_call(self.choose(observation, base.action_masks()))
