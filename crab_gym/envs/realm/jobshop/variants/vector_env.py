"""Realm-J2/J3/J4 as vector envs (``gym.make_vec(id, num_envs=N)``): N envs behind one
``VectorEnv`` with flat ``dispatch`` actions, equal step for step to N single envs.

* :class:`J3VectorEnv`: numpy-batched (P11's engine on padded jobs, see its docstring).
* :class:`ShopVectorEnv` (:class:`J2VectorEnv`, :class:`J4VectorEnv`): each env is the
  single env itself (its unwrapped class), stepped in a Python loop, so observations,
  rewards, terminations, disruptions and metrics are the single env's by construction; it
  runs at about the single env's speed per env-step (see docs/jobshop.md). It is not
  Gymnasium's ``SyncVectorEnv`` of the single envs because that measured slower
  (``benchmarks/jobshop_j_vector.py``, two runs: its per-step ``concatenate`` and ``deepcopy``
  of the observations and its merging of every env's whole ``info`` made it 1.3-3.2x slower
  at N=1, 16 and 256; with the info cut to what this env reports, 1.2-2.3x slower at N=1 and
  16, level at N=256 (0.84-1.11x)); the step is the same loop with ``SyncVectorEnv``'s
  ``NEXT_STEP`` semantics, and it checks the whole batch before any env moves.

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

from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.recycled_obs import RecycledObservations
from crab_gym.envs.realm.jobshop.variants.env import ShopEnv
from crab_gym.envs.realm.jobshop.variants.env_disruptions import DisruptedShopEnv, J4Env
from crab_gym.envs.realm.jobshop.vector_env import checked_reset_args, job_indices
from crab_gym.envs.realm.jobshop.vector_sim import JobShopBatch

try:
    from gymnasium.vector import AutoresetMode

    _NEXT_STEP: Any = AutoresetMode.NEXT_STEP
except ImportError:  # pragma: no cover - Gymnasium 1.0
    _NEXT_STEP = "NextStep"


class ShopVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` Realm-J3-v0 envs (subclasses: J2, J4) stepped together.

    Actions: ``MultiDiscrete([n_jobs] * num_envs)`` (``single_action_space`` is
    ``Discrete(n_jobs)``, the single env's flat ``dispatch`` choice); a masked job changes
    nothing in its env (``info["valid"]`` False there). ``action_masks()`` is (N, n_jobs),
    every job marked for an env awaiting its autoreset (its action is ignored).
    ``kwargs`` go to every env; ``instances=[...]`` gives one instance per env (one shape).
    """

    env_class: ClassVar[type[ShopEnv]] = ShopEnv
    metadata: dict[str, Any] = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, instances: list[Any] | None = None, **kwargs: Any) -> None:
        specs = _instance_specs(num_envs, instances, kwargs)
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
        seeds, mask = checked_reset_args(seed, options, self.num_envs)
        for i, env in enumerate(self.envs):
            if mask is None or mask[i]:
                obs, _ = env.reset(seed=seeds[i])
                self._write(i, obs)
                self._needs_reset[i] = False
        return self._observation(), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = job_indices(actions, self.num_envs)  # the whole batch checked before any env moves
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
        """(N, n_jobs) bool: the legal jobs (every job for an env awaiting its reset: its
        action is ignored, and a maskable policy needs one legal choice per row)."""
        mask = np.stack([e.action_masks()[: self.single_action_space.n] for e in self.envs])
        mask[self._needs_reset] = True
        return mask

    def solution(self, i: int) -> dict[str, Any]:
        return self.envs[i]._solution()


class J3VectorEnv(gym.vector.VectorEnv):
    """``num_envs`` Realm-J3-v0 envs in numpy arrays: P11's batched engine
    (:class:`~crab_gym.envs.realm.jobshop.vector_sim.JobShopBatch`) on the jobs padded to one
    length with zero-duration operations on spare machines of their own (at most
    :data:`PER_SPARE` per spare machine), which are never dispatched: the engine is given each
    job's real length (``job_lengths``), so a job completes with its last real operation and
    its bounds never move into the padding. Equal step for step to N single
    envs: same observations (padding shown as in the single env), rewards, terminations,
    makespans and optimality (tested). Actions, autoreset, ``info`` and ``action_masks()`` as
    :class:`ShopVectorEnv`; ``copy=True`` returns arrays nothing writes afterwards (copies
    nobody holds any more are refreshed row by row: :class:`RecycledObservations`),
    ``copy=False`` read-only views of the state arrays (valid until the next step)."""

    metadata: dict[str, Any] = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, instances: list[Any] | None = None, copy: bool = True,
                 **kwargs: Any) -> None:
        specs = _instance_specs(num_envs, instances, kwargs)
        kwargs.pop("render_mode", None)
        singles: dict[int, ShopEnv] = {}
        keys = []
        for spec in specs:  # one single env per distinct instance: its spaces and its reference
            key = id(spec) if not isinstance(spec, str) and spec is not None else hash(spec)
            if key not in singles:
                singles[key] = ShopEnv(spec, **kwargs)
            keys.append(key)
        envs = [singles[k] for k in keys]
        first = envs[0]
        if any(e.instance.shape != first.instance.shape for e in envs):
            raise ValueError("every env of a vector env needs an instance of the same shape")
        self.num_envs, self.copy = num_envs, copy
        self.instances = [e.instance for e in envs]
        self.single_observation_space = first.observation_space
        self.single_action_space = spaces.Discrete(first.instance.n_jobs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._weights = (first.progress_weight, first.optimality_weight, first.invalid_action_penalty)
        self._measure = np.array([e.reference.measure or 0.0 for e in envs], dtype=np.float64)
        self.batch, real = _padded_batch(self.instances)
        self._length = real.sum(axis=2)
        self._machine = np.where(real, self.batch.machine, 0)
        self._n_ops = np.stack([e._obs_nops for e in envs])
        for a in (self._machine, self._n_ops):
            a.flags.writeable = False
        self._total = self._length.sum(axis=1)  # real operations per env
        self._real_machines = first.instance.n_machines  # the spare machines are not observed
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        b = self.batch
        self._state = {"done": b.done, "lower_bound": b.lower_bound,
                       "machine_available": b.machine_available[:, : self._real_machines], "action_mask": b.mask}
        self._copies = RecycledObservations(self._state, ("done", "lower_bound", "action_mask"))
        self._job_rows = np.arange(b.n_jobs)

    def _restart(self, rows: np.ndarray) -> None:
        self.batch.reset(rows)
        self._needs_reset[rows] = False
        if self.copy:  # with views nothing takes the noted rows: noting them would only pile up
            self._copies.changed((rows[:, None] * self.batch.n_jobs + self._job_rows).ravel())

    def _observation(self) -> dict[str, np.ndarray]:
        """The engine's state arrays: copied (``copy=True``: nothing the env later writes is
        handed out; see :class:`RecycledObservations`) or read-only views; the instance arrays
        are read-only and never change."""
        b = self.batch
        if self.copy:
            state = self._copies.take()
        else:
            state = {k: v.view() for k, v in self._state.items()}
            for v in state.values():
                v.flags.writeable = False
        return {"processing_time": b.processing_time, "machine": self._machine, "n_ops": self._n_ops, **state}

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        _, mask = checked_reset_args(seed, options, self.num_envs)
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        self._restart(rows)
        return self._observation(), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        b = self.batch
        jobs = job_indices(actions, self.num_envs)
        resetting = self._needs_reset.copy()
        waiting = bool(resetting.any())
        before = b.jobs_done.copy()
        legal = b.try_dispatch(jobs, skip=resetting if waiting else None)
        if self.copy:
            moved = np.flatnonzero(legal)
            self._copies.changed(moved * b.n_jobs + jobs[moved])
        pw, ow, penalty = self._weights
        n = b.n_jobs
        rewards = np.where(legal, 0.0 + pw * (b.jobs_done / n - before / n), 0.0 - penalty)
        terminated = legal & (b.n_scheduled == self._total)
        done_mask = terminated.copy()
        makespan = np.where(terminated, b.makespan, 0)
        optimality = np.zeros(self.num_envs)
        if terminated.any():
            rows = np.flatnonzero(terminated)
            optimality[rows] = [optimality_ratio(self._measure[i] or None, float(b.makespan[i])) for i in rows]
            rewards[rows] += ow * optimality[rows]
            self._needs_reset[rows] = True
        if waiting:
            rows = np.flatnonzero(resetting)
            self._restart(rows)
            rewards[rows] = 0.0
        infos = {"valid": legal | resetting, "makespan": makespan, "_makespan": done_mask,
                 "optimality": optimality, "_optimality": done_mask}
        return self._observation(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        """(N, n_jobs) bool: the legal jobs (every job for an env awaiting its reset)."""
        mask = self.batch.mask.astype(bool)
        mask[self._needs_reset] = True
        return mask

    def solution(self, i: int) -> dict[str, Any]:
        """Env ``i``'s plan in REALM's shape (the spare machines left out)."""
        seq = self.batch.sequences(i)[: self.instances[i].n_machines]
        return {"sequence": seq, "makespan": int(self.batch.makespan[i])}


def _instance_specs(num_envs: int, instances: list[Any] | None, kwargs: dict[str, Any]) -> list[Any]:
    """One instance spec per env: ``instances=[...]``, or ``instance=`` one spec for every
    env or a list of one per env (as P11's vector env takes it)."""
    one = kwargs.pop("instance", None)
    if instances is None and isinstance(one, (list, tuple)):
        instances = list(one)
    if instances is None:
        return [one] * num_envs
    if len(instances) != num_envs:
        raise ValueError(f"instances must list {num_envs} instances, got {len(instances)}")
    return list(instances)


#: Padding operations per spare machine (the batch's slot rows are as wide as the fullest machine).
PER_SPARE = 64


def _padded_batch(instances: list[Any]) -> tuple[JobShopBatch, np.ndarray]:
    """The batch engine over the instances padded to one job length, and the (N, n, K) mask
    of real operations."""
    n, K, M = instances[0].shape
    pads = [sum(K - len(r) for r in inst.jobs) for inst in instances]
    spare = -(-max(pads) // PER_SPARE) if max(pads) else 0
    padded, real = [], np.zeros((len(instances), n, K), dtype=bool)
    memo: dict[int, JSSPInstance] = {}
    for i, inst in enumerate(instances):
        for j, row in enumerate(inst.jobs):
            real[i, j, : len(row)] = True
        if id(inst) not in memo:
            counter = 0
            durations, machines = [], []
            for row in inst.jobs:
                extra = K - len(row)
                durations.append([p for _, p in row] + [0] * extra)
                machines.append([m for m, _ in row] + [M + (counter + x) // PER_SPARE for x in range(extra)])
                counter += extra
            memo[id(inst)] = JSSPInstance(durations=durations, machines=machines, name=inst.name, n_machines=M + spare)
        padded.append(memo[id(inst)])
    return JobShopBatch(padded, track_bound=False, job_lengths=real.sum(axis=2)), real


class J2VectorEnv(ShopVectorEnv):
    """``num_envs`` Realm-J2-v0 envs."""

    env_class = DisruptedShopEnv


class J4VectorEnv(ShopVectorEnv):
    """``num_envs`` Realm-J4-v0 envs."""

    env_class = J4Env
