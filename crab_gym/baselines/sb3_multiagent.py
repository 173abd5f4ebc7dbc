"""Shared-parameter MaskablePPO over agents: the agents of REALM parallel envs as one SB3 ``VecEnv``.

:class:`AgentVecEnv` presents every agent of one or more
:class:`~crab_gym.multiagent.RealmParallelEnv` copies as one env of a Stable-Baselines3
``VecEnv`` (``num_envs`` = the copies' agents, copy by copy, in agent order), so one
``MaskablePPO`` policy acts for every agent (parameter sharing, independent PPO on a shared
team reward)::

    from sb3_contrib import MaskablePPO
    from crab_gym.baselines.sb3_multiagent import make_agent_vec_env

    venv = make_agent_vec_env("Realm-P3-v0", instances=["p3_small_01", "p3_small_02"], seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128).learn(20_000)

What each env of the vector holds:

* **Observation**: a flat ``float32`` vector (:class:`FlatAgentObservation`): the agent's
  parallel-env observation with every part padded to the largest shape among the copies,
  ``Discrete``/``MultiDiscrete`` parts one-hot, ``MultiBinary`` as 0/1, ``Box`` parts divided by
  a scale, then its legal-choice mask. Flat rather than a ``Dict`` for ``MultiInputPolicy``
  because copies of different sizes (P3's small instances have 3 to 5 requests and 6 to 8
  places) must share one observation space, so every part needs padding anyway, and a flat
  vector needs no reshaping of 2-D ``MultiDiscrete`` parts, which SB3 cannot take.
* **Action**: ``Discrete(max_n)`` over the *slots* (:class:`ChoiceSlots`): every local choice
  any agent of any copy has, keyed by its action name and arguments other than the agent's own
  name, so slot ``k`` means the same move (``dispatch`` to ``pickup:p3``, ``park``) for every
  agent and every copy. Slot 0 is ``noop``. A slot an agent lacks (padding) is never legal.
* **Masks**: ``action_masks()`` returns ``(num_envs, max_n)`` bool from the parallel env's own
  masks, which ``MaskablePPO`` reads through ``env_method("action_masks")``.
* **Reward**: the shared team reward (each agent of a copy gets the copy's joint-step reward),
  so an agent's episode return equals the single-agent env's return for the same moves.
* **Episode end**: a copy whose agents are all done is reset in the same step (SB3 semantics):
  ``infos[i]["terminal_observation"]``, ``infos[i]["episode"] = {"r", "l"}`` (return and
  joint steps, no wall clock), ``infos[i]["TimeLimit.truncated"]``, plus the agent's own
  parallel-env info (``metrics``, ``solution``, ``valid``, ...) at every step.
* **Adaptation**: an env with disruptions defers its adaptation re-solve out of ``step()``, so
  while training the last ``metrics`` say ``adaptation_pending`` (adaptation None) and no
  solver runs. With ``finish_adaptation=True`` (what :func:`play_copies`, the evaluation, sets)
  a copy's re-solve runs as its episode ends, before the reset, as the single-agent runner does
  (:func:`~crab_gym.evaluation.episode_runner.finished_metrics`), and every agent's ``metrics`` hold it.

Needs the ``rl`` and ``multiagent`` extras: ``pip install "crab_gym[rl,multiagent]"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from crab_gym._optional import require
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.multiagent import NOOP, RealmParallelEnv

require("torch", "rl")
require("stable_baselines3", "rl", package="stable-baselines3")
from stable_baselines3.common.vec_env.base_vec_env import VecEnv  # noqa: E402

#: A policy over the whole vector: (observations, masks) -> one slot per env.
VectorPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---------------------------------------------------------------------- action slots
def _choice_key(call: dict[str, Any] | None, agent: str) -> str:
    """What a local choice does, without who does it: the action name and its arguments
    other than the agent's own name (``noop`` for the pass move)."""
    if call is None:
        return "noop"
    args = {k: v for k, v in call["arguments"].items() if str(v) != agent}
    return json.dumps([call["name"], args], sort_keys=True, default=str)


@dataclass(frozen=True)
class ChoiceSlots:
    """The shared action layout of several parallel envs' agents.

    Attributes:
        keys: per slot, what it does (``"noop"`` for slot 0, else ``[name, arguments]`` as
            JSON), in order of first appearance over the copies and their agents.
        to_local: per copy, an ``(n_agents, n_slots)`` array: the agent's local choice for
            each slot, -1 where the agent has no such choice.
    """

    keys: tuple[str, ...]
    to_local: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, envs: Sequence[RealmParallelEnv]) -> ChoiceSlots:
        keys: dict[str, int] = {"noop": NOOP}
        per_copy: list[list[list[str]]] = []
        for env in envs:
            rows = []
            for agent in env.possible_agents:
                row = [_choice_key(call, agent) for call in env.choices(agent)]
                for key in row:
                    keys.setdefault(key, len(keys))
                rows.append(row)
            per_copy.append(rows)
        tables = []
        for rows in per_copy:
            table = np.full((len(rows), len(keys)), -1, dtype=np.int64)
            for a, row in enumerate(rows):
                for local, key in enumerate(row):
                    table[a, keys[key]] = local
            tables.append(table)
        return cls(tuple(keys), tuple(tables))

    @property
    def n(self) -> int:
        return len(self.keys)

    def mask(self, copy: int, agent: int, local_mask: np.ndarray) -> np.ndarray:
        """An agent's slot mask (bool) from its local mask; padding slots are False."""
        table = self.to_local[copy][agent]
        out = np.zeros(self.n, dtype=bool)
        have = table >= 0
        out[have] = np.asarray(local_mask, dtype=bool)[table[have]]
        return out


# ---------------------------------------------------------------------- observations
@dataclass
class _Part:
    kind: str  # "box", "binary", "onehot"
    shape: tuple[int, ...]  # padded shape of the raw part
    width: int = 1  # one-hot width
    scale: float = 1.0
    size: int = field(init=False)  # entries in the flat vector

    def __post_init__(self) -> None:
        self.size = int(np.prod(self.shape, dtype=np.int64)) * self.width


@dataclass
class FlatAgentObservation:
    """Turns an agent's Dict observation into one padded, scaled ``float32`` vector.

    Built from the observation spaces of every agent of every copy (same keys, shapes that
    may differ): each part is padded with zeros to the largest shape. ``Discrete`` and
    ``MultiDiscrete`` parts are one-hot (padding: all zeros, i.e. "absent"), ``MultiBinary``
    parts stay 0/1, ``Box`` parts are divided by ``scales[key]`` (default: the space's upper
    bound when finite and positive, else 1). The slot mask is appended, so the policy sees
    which moves are legal. ``action_mask`` itself is not encoded (the slot mask replaces it).
    """

    spaces: Sequence[gym.spaces.Dict]
    n_slots: int
    scales: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keys = [k for k in self.spaces[0].spaces if k != "action_mask"]
        for space in self.spaces[1:]:
            if [k for k in space.spaces if k != "action_mask"] != keys:
                raise ValueError("every agent of every copy must have the same observation keys")
        self.parts: dict[str, _Part] = {k: self._part(k, [s[k] for s in self.spaces]) for k in keys}
        self.size = sum(p.size for p in self.parts.values()) + self.n_slots
        self.space = gym.spaces.Box(-np.inf, np.inf, (self.size,), np.float32)

    def _part(self, key: str, spaces: list[gym.Space]) -> _Part:
        kinds = {type(s) for s in spaces}
        if len(kinds) != 1:
            raise ValueError(f"observation part {key!r} has different space types across agents: {kinds}")
        first = spaces[0]
        if isinstance(first, gym.spaces.Discrete):
            return _Part("onehot", (), width=max(int(s.n) for s in spaces))
        shape = tuple(int(d) for d in np.max([s.shape for s in spaces], axis=0))
        if isinstance(first, gym.spaces.MultiDiscrete):
            return _Part("onehot", shape, width=max(int(s.nvec.max()) for s in spaces))
        if isinstance(first, gym.spaces.MultiBinary):
            return _Part("binary", shape)
        if isinstance(first, gym.spaces.Box):
            if key in self.scales:
                scale = float(self.scales[key])
            else:
                highs = [float(np.max(s.high)) for s in spaces]
                scale = max(highs) if all(np.isfinite(highs)) and max(highs) > 0 else 1.0
            return _Part("box", shape, scale=scale)
        raise TypeError(f"observation part {key!r}: {type(first).__name__} spaces are not supported")

    def encode(self, obs: Mapping[str, Any], slot_mask: np.ndarray) -> np.ndarray:
        """One agent's observation (its parallel-env Dict) and slot mask as a flat vector."""
        out = np.zeros(self.size, dtype=np.float32)
        at = 0
        for key, part in self.parts.items():
            value = np.asarray(obs[key])
            padded = np.zeros(part.shape, dtype=np.float64)
            padded[tuple(slice(0, d) for d in value.shape)] = value
            if part.kind == "onehot":
                present = np.zeros(part.shape, dtype=bool)
                present[tuple(slice(0, d) for d in value.shape)] = True
                hot = np.zeros((*part.shape, part.width), dtype=np.float32)
                idx = padded.astype(np.int64)
                np.put_along_axis(hot, idx[..., None], present[..., None].astype(np.float32), axis=-1)
                out[at: at + part.size] = hot.reshape(-1)
            elif part.kind == "box":
                out[at: at + part.size] = (padded / part.scale).reshape(-1)
            else:
                out[at: at + part.size] = padded.reshape(-1)
            at += part.size
        out[at:] = slot_mask
        return out


# ---------------------------------------------------------------------- the VecEnv
class AgentVecEnv(VecEnv):
    """Every agent of ``envs`` as one env of an SB3 ``VecEnv`` (see the module docstring).

    Args:
        envs: parallel env copies (of one problem; sizes may differ). Copy ``c`` is reset
            with ``seed`` = the SB3 seed of its first agent's slot (``venv.seed(s)``), then
            auto-reset unseeded; ``venv.set_options`` works the same way, per copy.
        scales: per ``Box`` observation key, the divisor (see :class:`FlatAgentObservation`).
        reset_options: per copy, the ``options`` of every reset (e.g. ``{"instance": name}``).
        finish_adaptation: run a copy's deferred adaptation re-solve as its episode ends (a
            solver call per episode: for evaluation; training leaves it ``adaptation_pending``).

    Attributes:
        slots: per env index, ``(copy, agent name)``.
        choice_slots: the shared action layout.
    """

    def __init__(
        self,
        envs: Sequence[RealmParallelEnv],
        *,
        scales: Mapping[str, float] | None = None,
        reset_options: Sequence[Mapping[str, Any] | None] | None = None,
        finish_adaptation: bool = False,
    ) -> None:
        if not envs:
            raise ValueError("AgentVecEnv needs at least one parallel env")
        self.envs = list(envs)
        self.finish_adaptation = finish_adaptation
        self.reset_options = list(reset_options) if reset_options is not None else [None] * len(self.envs)
        if len(self.reset_options) != len(self.envs):
            raise ValueError("reset_options needs one entry per copy")
        self.choice_slots = ChoiceSlots.of(self.envs)
        self.slots: list[tuple[int, str]] = [(c, a) for c, env in enumerate(self.envs) for a in env.possible_agents]
        self._first = [self.slots.index((c, env.possible_agents[0])) for c, env in enumerate(self.envs)]
        spaces = [env.observation_space(a) for env in self.envs for a in env.possible_agents]
        self.encoder = FlatAgentObservation(spaces, self.choice_slots.n, dict(scales or {}))
        super().__init__(len(self.slots), self.encoder.space, gym.spaces.Discrete(self.choice_slots.n))
        self._obs = np.zeros((self.num_envs, self.encoder.size), dtype=np.float32)
        self._masks = np.zeros((self.num_envs, self.choice_slots.n), dtype=bool)
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        for c in range(len(self.envs)):
            self._reset_copy(c, self._seeds[self._first[c]], self._options[self._first[c]])
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        assert self._actions is not None, "step_async first"
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for c, env in enumerate(self.envs):
            rows = self._rows(c)
            joint = {}
            for i in rows:
                _, agent = self.slots[i]
                if agent in env.agents:
                    joint[agent] = self._local(c, agent, int(self._actions[i]))
            obs, reward, terminated, truncated, info = env.step(joint)
            over = not env.agents
            for i in rows:
                _, agent = self.slots[i]
                rewards[i] = float(reward.get(agent, 0.0))
                infos[i] = dict(info.get(agent, {}))
                self._returns[i] += rewards[i]
                self._lengths[i] += 1
                self._set_obs(c, i, obs.get(agent))
            if over:
                for i in rows:
                    _, agent = self.slots[i]
                    infos[i]["terminal_observation"] = self._obs[i].copy()
                    infos[i]["TimeLimit.truncated"] = bool(truncated.get(agent, False) and not terminated.get(agent, False))
                    infos[i]["episode"] = {"r": float(self._returns[i]), "l": int(self._lengths[i])}
                    dones[i] = True
                if self.finish_adaptation:
                    _finish_adaptation(env, [infos[i] for i in rows])
                self._returns[rows] = 0.0
                self._lengths[rows] = 0
                self._reset_copy(c, None)
        return self._obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_slots)`` bool: each agent's legal slots now (slot 0 is ``noop``)."""
        return self._masks.copy()

    def close(self) -> None:
        for env in self.envs:
            env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        rows = list(self._get_indices(indices))
        if attr_name == "action_masks":
            return [self.action_masks] * len(rows)
        return [getattr(self.envs[self.slots[i][0]], attr_name) for i in rows]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.envs[0], attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        for c in sorted({self.slots[i][0] for i in self._get_indices(indices)}):
            setattr(self.envs[c], attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            return [self._masks[i].copy() for i in rows]
        raise AttributeError(f"AgentVecEnv: no per-env method {method_name!r} (only action_masks)")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    # ------------------------------------------------------------------ helpers
    def slot_call(self, index: int, slot: int) -> dict[str, Any] | None:
        """The tool call slot ``slot`` of env ``index`` stands for (None: ``noop`` or padding)."""
        c, agent = self.slots[index]
        local = self._local(c, agent, slot)
        env = self.envs[c]
        return env.choices(agent)[local] if 0 <= local < env.action_space(agent).n else None

    # ------------------------------------------------------------------ internals
    def _rows(self, copy: int) -> list[int]:
        return [i for i, (c, _) in enumerate(self.slots) if c == copy]

    def _local(self, copy: int, agent: str, slot: int) -> int:
        """The agent's local choice for ``slot``; a padding slot becomes an out-of-space
        choice, which the parallel env rejects as invalid (with its penalty)."""
        env = self.envs[copy]
        k = env.possible_agents.index(agent)
        if not 0 <= slot < self.choice_slots.n:
            return int(env.action_space(agent).n)
        local = int(self.choice_slots.to_local[copy][k, slot])
        return local if local >= 0 else int(env.action_space(agent).n)

    def _reset_copy(self, copy: int, seed: int | None, options: Mapping[str, Any] | None = None) -> None:
        """Reset a copy with its own ``reset_options``, updated by SB3's ``set_options``
        entry of its first agent (that reset only)."""
        merged = {**(self.reset_options[copy] or {}), **(options or {})}
        obs, _ = self.envs[copy].reset(seed=seed, options=merged or None)
        for i in self._rows(copy):
            self._set_obs(copy, i, obs.get(self.slots[i][1]))

    def _set_obs(self, copy: int, index: int, obs: Mapping[str, Any] | None) -> None:
        """Encode an agent's observation; an agent with none (no longer live) keeps its last
        one and may only pass."""
        env = self.envs[copy]
        agent = self.slots[index][1]
        if obs is None:
            self._masks[index] = False
            self._masks[index, NOOP] = True
            return
        k = env.possible_agents.index(agent)
        self._masks[index] = self.choice_slots.mask(copy, k, obs["action_mask"])
        self._obs[index] = self.encoder.encode(obs, self._masks[index])


def _finish_adaptation(env: RealmParallelEnv, infos: list[dict[str, Any]]) -> None:
    """A copy's episode just ended: run the adaptation re-solve its env deferred (if any) and
    give every agent's info the complete metrics."""
    metrics = next((info["metrics"] for info in infos if info.get("metrics")), None)
    if not metrics or not metrics.get("adaptation_pending"):
        return
    done = finished_metrics(env.env, {"metrics": metrics})
    for info in infos:
        if "metrics" in info:
            info["metrics"] = dict(done)


def make_agent_vec_env(
    env_id: str,
    *,
    instances: Sequence[str] | None = None,
    copies: int = 1,
    seed: int | None = 0,
    max_cycles: int | None = 200,
    scales: Mapping[str, float] | None = None,
    finish_adaptation: bool = False,
    **env_kwargs: Any,
) -> AgentVecEnv:
    """An :class:`AgentVecEnv` of ``crab_gym.parallel_env(env_id)`` copies, seeded.

    Args:
        env_id: a multi-agent REALM id (``crab_gym.multiagent_ids()``).
        instances: one copy per instance name (times ``copies``); None: ``copies`` copies
            made with ``env_kwargs`` alone (e.g. ``generator={...}`` for fresh instances).
        copies: copies per instance.
        seed: SB3 seed (copy ``c`` starts from ``seed`` + its first env index); None: unseeded.
        max_cycles: truncate an episode after this many joint steps (a policy that only
            passes would otherwise never end one).
        scales: ``Box`` divisors, see :class:`FlatAgentObservation`.
        finish_adaptation: see :class:`AgentVecEnv` (:func:`play_copies` turns it on itself).
        **env_kwargs: passed to every copy's ``gym.make``.
    """
    names: list[str | None] = list(instances) if instances is not None else [None]
    envs = []
    for name in names:
        kwargs = dict(env_kwargs) if name is None else {**env_kwargs, "instance": name}
        envs += [RealmParallelEnv(env_id, max_cycles=max_cycles, **kwargs) for _ in range(copies)]
    venv = AgentVecEnv(envs, scales=scales, finish_adaptation=finish_adaptation)
    if seed is not None:
        venv.seed(seed)
    return venv


# ---------------------------------------------------------------------- evaluation
@dataclass(frozen=True)
class CopyEpisode:
    """One finished episode of one copy: team return, joint steps, how it ended, metrics."""

    copy: int
    ret: float
    length: int
    truncated: bool
    metrics: dict[str, Any]

    @property
    def optimality(self) -> float:
        """The episode's optimality (0 when it was truncated before a plan was complete)."""
        return float(self.metrics.get("optimality", 0.0))


def play_copies(venv: VecEnv, policy: VectorPolicy, *, episodes: int = 1, max_steps: int = 100_000) -> list[CopyEpisode]:
    """Run ``policy`` until every copy of ``venv`` (an :class:`AgentVecEnv`, possibly under
    SB3 ``VecEnvWrapper``\\ s such as ``VecNormalize``) finished ``episodes`` episodes.

    The first ``episodes`` episodes of each copy are returned, copy by copy. The policy
    gets the observations ``venv`` gives and its masks. Their metrics are complete: a deferred
    adaptation re-solve runs as each episode ends (``finish_adaptation``, for this call only).
    """
    inner = venv.unwrapped
    if not isinstance(inner, AgentVecEnv):
        raise TypeError(f"play_copies needs an AgentVecEnv (possibly wrapped), not {type(inner).__name__}")
    was, inner.finish_adaptation = inner.finish_adaptation, True
    try:
        return _play(venv, inner, policy, episodes, max_steps)
    finally:
        inner.finish_adaptation = was


def _play(venv: VecEnv, inner: AgentVecEnv, policy: VectorPolicy, episodes: int, max_steps: int) -> list[CopyEpisode]:
    """:func:`play_copies`' loop."""
    first = inner._first
    done: dict[int, list[CopyEpisode]] = {c: [] for c in range(len(inner.envs))}
    obs = venv.reset()
    for _ in range(max_steps):
        if all(len(v) >= episodes for v in done.values()):
            break
        masks = np.stack(venv.env_method("action_masks"))
        obs, _, dones, infos = venv.step(np.asarray(policy(obs, masks)).reshape(-1))
        for c, i in enumerate(first):
            if dones[i] and len(done[c]) < episodes:
                info = infos[i]
                done[c].append(
                    CopyEpisode(c, info["episode"]["r"], info["episode"]["l"], info["TimeLimit.truncated"],
                                dict(info.get("metrics") or {}))
                )
    else:
        raise RuntimeError(f"not every copy finished {episodes} episodes in {max_steps} steps")
    return [e for c in sorted(done) for e in done[c]]


def model_policy(model: Any, *, deterministic: bool = True) -> VectorPolicy:
    """A trained ``MaskablePPO`` as a :data:`VectorPolicy` (masks applied)."""

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks, deterministic=deterministic)
        return np.asarray(actions)

    return act


def random_policy(seed: int | None = 0) -> VectorPolicy:
    """Uniform over each agent's legal slots (``noop`` included), seeded."""
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([int(rng.choice(np.flatnonzero(row))) for row in masks], dtype=np.int64)

    return act
