"""Realm-P11-v0 as a native vector env: N job-shop envs stepped together in numpy arrays.

``gym.make_vec("Realm-P11-v0", num_envs=N, vectorization_mode="vector_entry_point")`` returns a
:class:`JobShopVectorEnv`. Step for step it equals N single ``Realm-P11-v0`` envs driven by
their flat ``dispatch`` actions (same observations, rewards, terminations and final
makespan and optimality; the tests check it on random and shipped instances), with no Python
loop over the envs in a step. The engine is :mod:`crab_gym.envs.realm.jobshop.vector_sim`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector.utils import batch_space

from crab_gym.envs.realm.common.env import checked_init
from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.jobshop.env import DEFAULT_INSTANCE, check_reference_option, observation_space_for
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.references import yardstick
from crab_gym.envs.realm.jobshop.source import SOURCE, generator_options
from crab_gym.envs.realm.jobshop.vector_sim import JobShopBatch

try:  # Gymnasium >= 1.1 names the autoreset modes; 1.0 always resets on the next step
    from gymnasium.vector import AutoresetMode

    _NEXT_STEP: Any = AutoresetMode.NEXT_STEP
except ImportError:  # pragma: no cover - Gymnasium 1.0
    _NEXT_STEP = "NextStep"

InstanceSpec = str | Path | JSSPInstance
@dataclass(frozen=True)
class _Pending:
    """A reference the solver would give, deferred: the reward measures against ``bound``."""

    bound: float | None


#: A reference left for the solver until the env first completes (see ``_measure``).
_UNSOLVED = object()


class JobShopVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` job-shop envs (REALM-Bench P11) advanced together.

    ## Spaces

    * ``single_action_space``: ``Discrete(n_jobs)``, the flat ``dispatch`` choice of the single
      env (choice ``j`` places job ``j``'s next operation at its earliest feasible start);
      ``action_space`` is ``MultiDiscrete([n_jobs] * num_envs)``. Whole plans
      (``submit_plan``) are the single env's.
    * ``single_observation_space``: the single env's ``Dict`` (``processing_time``,
      ``machine``, ``done``, ``lower_bound``, ``machine_available``, ``action_mask``), each
      array stacked with a leading env axis.
    * ``action_masks()``: (num_envs, n_jobs) bool, the jobs with operations left. An env
      waiting for its autoreset marks every job (its action is ignored).

    ## Steps, rewards, episodes

    As in the single env: ``reward_mode="default"`` gives ``progress_weight`` x the rise in the
    share of jobs completed, plus ``optimality_weight`` x ``min(1, reference / makespan)`` on
    the last step (the reference is the single env's: a shipped instance's best known
    makespan, see :func:`~crab_gym.envs.realm.jobshop.references.instance_reference`);
    ``"makespan"`` gives minus each step's rise of the makespan lower bound. A
    masked or out-of-range job changes nothing in its env, which gets
    ``-invalid_action_penalty``; ``info["valid"]``/``info["error"]`` say which and why.

    Autoreset follows Gymnasium's ``NEXT_STEP`` mode: the step that completes an env's
    schedule returns its final observation with ``terminated`` True; on the next step that
    env's action is ignored, it restarts (a fresh instance with a ``generator``), and its
    reward is 0. ``reset(options={"reset_mask": mask})`` restarts only the envs ``mask`` marks.

    ## Info

    Gymnasium's vector convention (an array per key, ``"_key"`` marking the envs that have
    it). On the step an env completes: ``makespan``, ``optimality`` and ``reference`` (the
    reference makespan); on a step with an invalid action: ``valid`` and ``error``. No other
    keys, nothing from the wall clock. :meth:`solution` gives a completed env's plan in REALM's
    shape until its reset.

    ## Arguments

    | parameter | default | description |
    |---|---|---|
    | `num_envs` | 1 | how many envs |
    | `instance` | `"ft06"` | one instance for every env (a shipped name, a file or a `JSSPInstance`), or a sequence of `num_envs` of them, all of one size |
    | `generator` | `None` | `(n_jobs, n_machines)` or the single env's dict: every env draws a fresh instance with Taillard's scheme at each of its resets, from its own seeded generator (env `i` is seeded `seed + i`, as `SyncVectorEnv` seeds its envs) |
    | `reference` | `None` | a makespan every env is scored against, or `"bound"`: as the single env, an instance with no best known value is scored against its lower bound instead of the solver's value (no solver; for training on `generator=`) |
    | `reference_solve` | `"deferred"` | `"deferred"`: an instance with no best known value (a generated one) is never solved inside `step()`: its reward measures against the lower bound and its info says `optimality_pending` (`optimality` NaN); `"inline"`: the solver's value, solved when the env first completes |
    | `reward_mode`, `invalid_action_penalty`, `progress_weight`, `optimality_weight` | | as the single env |
    | `copy` | `True` | return copies of the changing observation arrays (`False`: read-only views, valid until the next step or reset; the instance arrays are never copied, they are read-only and replaced rather than changed) |
    """

    metadata = {"autoreset_mode": _NEXT_STEP, "render_modes": []}

    @checked_init
    def __init__(
        self,
        num_envs: int = 1,
        instance: InstanceSpec | Sequence[InstanceSpec] = DEFAULT_INSTANCE,
        *,
        generator: tuple[int, int] | dict[str, int] | None = None,
        reference: float | str | None = None,
        reward_mode: str = "default",
        reference_solve: str = "deferred",
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
        copy: bool = True,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if reward_mode not in ("default", "makespan"):
            raise ValueError(f"reward_mode must be 'default' or 'makespan', got {reward_mode!r}")
        if reference_solve not in ("deferred", "inline"):
            raise ValueError(f'reference_solve must be "deferred" or "inline", got {reference_solve!r}')
        self.num_envs = int(num_envs)
        self.reward_mode = reward_mode
        self.reference_solve = reference_solve
        self._pending = np.zeros(self.num_envs, dtype=bool)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.progress_weight = float(progress_weight)
        self.optimality_weight = float(optimality_weight)
        self.copy = bool(copy)
        self._bound_only = check_reference_option(reference)
        self._fixed_reference = None if reference is None or self._bound_only else float(reference)
        self._generator = generator_options(generator)
        self._rngs = [seeding.np_random(None)[0] for _ in range(self.num_envs)]
        if self._generator is not None:
            g = self._generator
            instances = [random_instance(g["n_jobs"], g["n_machines"], 0, low=g["low"], high=g["high"])] * self.num_envs
            max_p = g["high"]
        else:
            instances = self._load_all(instance)
            max_p = max(99, max(max(max(row) for row in inst.durations) for inst in instances))
        self._max_p = max(int(max_p), 1)
        self.batch = JobShopBatch(instances, track_bound=reward_mode == "makespan")
        self._measures = self._reference_measures(self.batch.instances)
        n_jobs = self.batch.n_jobs
        self.single_action_space = spaces.Discrete(n_jobs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = observation_space_for(instances[0], self._max_p, n_jobs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._index = np.arange(self.num_envs)

    # ------------------------------------------------------------------ instances
    def _load_all(self, instance: InstanceSpec | Sequence[InstanceSpec]) -> list[JSSPInstance]:
        """One loaded instance per env (a single spec is loaded once and shared)."""
        if isinstance(instance, (str, Path, JSSPInstance)):
            return [SOURCE.load(instance)] * self.num_envs
        specs = list(instance)
        if len(specs) != self.num_envs:
            raise ValueError(f"instance: got {len(specs)} instances for {self.num_envs} envs")
        loaded: dict[int, JSSPInstance] = {}
        out = []
        for spec in specs:
            key = id(spec)  # the same object given twice is loaded once
            if key not in loaded:
                loaded[key] = SOURCE.load(spec)
            out.append(loaded[key])
        return out

    def _reference_measures(self, instances: Sequence[JSSPInstance]) -> list[Any]:
        """Each env's reference makespan, as the single env measures optimality: known at once
        where it is a lookup (shipped data, literature or given values), else
        :data:`_UNSOLVED` until the env first completes (:meth:`_measure` then asks the
        solver, once per instance data), so a reset never waits for a solver."""
        if self._fixed_reference is not None:
            return [self._fixed_reference] * len(instances)
        cache: dict[int, Any] = {}
        for inst in instances:
            if id(inst) not in cache:
                ref = yardstick(inst, solve=False)
                unsolved = not self._bound_only and ref.status == "LOWER_BOUND"
                if unsolved and self.reference_solve == "deferred":  # as the single env: the bound, flagged
                    cache[id(inst)] = _Pending(ref.measure)
                else:
                    cache[id(inst)] = _UNSOLVED if unsolved else ref.measure
        return [cache[id(inst)] for inst in instances]

    def _measure(self, i: int) -> float | None:
        """Env ``i``'s reference makespan (solved now if it was left for the solver; with
        ``reference_solve="deferred"`` the lower bound instead, its optimality pending)."""
        measure = self._measures[i]
        if measure is _UNSOLVED:
            self._measures[i] = measure = yardstick(self.batch.instances[i]).measure
        return measure.bound if isinstance(measure, _Pending) else measure

    def _set_measures(self, rows: Sequence[int], instances: Sequence[JSSPInstance]) -> None:
        for i, measure in zip(rows, self._reference_measures(instances), strict=True):
            self._measures[int(i)] = measure

    def _draw(self, rows: np.ndarray) -> None:
        """Fresh generated instances for the envs ``rows`` (each from its own generator)."""
        g = self._generator
        fresh = [random_instance(g["n_jobs"], g["n_machines"], self._rngs[i], low=g["low"], high=g["high"]) for i in rows]
        self.batch.set_instances(rows, fresh)
        self._set_measures(rows, fresh)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        """Restart every env (or those ``options["reset_mask"]`` marks); ``seed`` seeds env
        ``i`` with ``seed + i`` (or takes a list); ``options["instance"]`` swaps the instance
        of the envs restarted (one spec, or one per env restarted)."""
        super().reset(seed=seed if seed is None or isinstance(seed, (int, np.integer)) else next(iter(seed), None))
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        new_instance = options.pop("instance", None)
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}; valid: reset_mask, instance")
        rows = self._index if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        if mask is not None and np.asarray(mask).shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {np.asarray(mask).shape}")
        if seed is not None:
            seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, (int, np.integer)) else list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: got {len(seeds)} seeds for {self.num_envs} envs")
            for i in rows:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
        if new_instance is not None:
            specs = [new_instance] * len(rows) if isinstance(new_instance, (str, Path, JSSPInstance)) else list(new_instance)
            if len(specs) != len(rows):
                raise ValueError(f"instance: got {len(specs)} instances for {len(rows)} envs to reset")
            fresh = [SOURCE.load(s) for s in specs]
            for inst in fresh:
                if max(max(r) for r in inst.durations) > self._max_p:
                    raise ValueError(f"instance {inst.name} has durations above this env's bound {self._max_p}")
            self.batch.set_instances(rows, fresh)
            self._set_measures(rows, fresh)
        elif self._generator is not None:
            self._draw(rows)
        self.batch.reset(None if mask is None else rows)
        self._autoreset[rows] = False
        return self._observation(), {}

    def step(self, actions: Any):
        """One dispatch per env (an env waiting for its autoreset restarts instead)."""
        batch = self.batch
        jobs = np.asarray(actions)
        if jobs.shape != (self.num_envs,) or jobs.dtype.kind not in "iu":
            jobs = self._as_jobs(actions)
        restarting = self._autoreset
        waiting = restarting.any()
        n_jobs = batch.n_jobs
        default = self.reward_mode == "default"
        before = batch.jobs_done / n_jobs if default else batch.lb_makespan.copy()
        legal = batch.try_dispatch(jobs, restarting if waiting else None)
        if default:  # the rise in the share of jobs completed, as the single env's graph
            rewards = self.progress_weight * (batch.jobs_done / n_jobs - before)
        else:  # minus the rise of the makespan's lower bound
            rewards = -(batch.lb_makespan - before).astype(np.float64)
        all_act = not waiting and bool(legal.all())
        terminated = batch.n_scheduled == batch.n_total
        if not all_act:
            terminated &= legal
        info: dict[str, Any] = {}
        if terminated.any():
            done = np.flatnonzero(terminated)
            # a complete schedule keeps every constraint (the single env's checker agrees)
            optimality = np.array([optimality_ratio(self._measure(i), int(batch.makespan[i])) for i in done])
            if default:
                rewards[done] += self.optimality_weight * optimality
            self._final_info(info, done, optimality)
        if not all_act:
            invalid = ~legal & ~restarting
            if invalid.any():
                rewards[invalid] = 0.0 - self.invalid_action_penalty
                self._invalid_info(info, jobs, invalid)
            if restarting.any():
                self._restart(np.flatnonzero(restarting))
                rewards[restarting] = 0.0
        self._autoreset = terminated
        return self._observation(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), info

    def action_masks(self) -> np.ndarray:
        """(num_envs, n_jobs) bool: the legal jobs (every job for an env awaiting its reset)."""
        mask = self.batch.mask.astype(bool)
        if self._autoreset.any():
            mask[self._autoreset] = True
        return mask

    def solution(self, i: int) -> dict[str, Any]:
        """Env ``i``'s schedule so far in REALM's shape: ``{"sequence", "makespan"}``."""
        return {"sequence": self.batch.sequences(i), "makespan": int(self.batch.makespan[i])}

    # ------------------------------------------------------------------ internals
    def _as_jobs(self, actions: Any) -> np.ndarray:
        return job_indices(actions, self.num_envs)

    def _restart(self, rows: np.ndarray) -> None:
        if self._generator is not None:
            self._draw(rows)
        self.batch.reset(rows)

    def _observation(self) -> dict[str, np.ndarray]:
        b = self.batch
        changing = {"done": b.done, "lower_bound": b.lower_bound, "machine_available": b.machine_available, "action_mask": b.mask}
        if self.copy:
            changing = {k: v.copy() for k, v in changing.items()}
        else:
            changing = {k: _read_only(v) for k, v in changing.items()}
        return {"processing_time": b.processing_time, "machine": b.machine, **changing}

    def _final_info(self, info: dict[str, Any], done: np.ndarray, optimality: np.ndarray) -> None:
        present = np.zeros(self.num_envs, dtype=bool)
        present[done] = True
        makespan = np.zeros(self.num_envs, dtype=np.int64)
        makespan[done] = self.batch.makespan[done]
        pending = np.zeros(self.num_envs, dtype=bool)
        pending[done] = [isinstance(self._measures[i], _Pending) for i in done]
        opt = np.zeros(self.num_envs)
        opt[done] = optimality
        opt[pending] = np.nan  # measured against the lower bound, as the reward: not the metric
        ref = np.full(self.num_envs, np.nan)
        ref[done] = [np.nan if self._measure(i) is None else self._measure(i) for i in done]
        info.update(makespan=makespan, _makespan=present, optimality=opt, _optimality=present.copy(),
                    reference=ref, _reference=present.copy(),
                    optimality_pending=pending, _optimality_pending=present.copy())

    def _invalid_info(self, info: dict[str, Any], jobs: np.ndarray, invalid: np.ndarray) -> None:
        valid = ~invalid
        error = np.full(self.num_envs, "", dtype=object)
        n_jobs = self.batch.n_jobs
        for i in np.flatnonzero(invalid):
            j = int(jobs[i])
            error[i] = (
                f"job {j} has no operation left to schedule (masked)" if 0 <= j < n_jobs
                else f"job {j} is outside the action space (jobs 0..{n_jobs - 1})"
            )
        info.update(valid=valid, _valid=np.ones(self.num_envs, dtype=bool), error=error, _error=invalid.copy())


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def job_indices(actions: Any, num_envs: int) -> np.ndarray:
    """The actions as an int array of one job per env, or a ``ValueError`` naming what is wrong,
    before any env moves (a vector env never steps part of a batch)."""
    try:
        jobs = np.asarray(actions)
    except Exception as exc:  # noqa: BLE001 - any unreadable container
        raise ValueError(f"actions must be {num_envs} job indices, got {actions!r}") from exc
    if jobs.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},) (one job index per env), got {jobs.shape}")
    if jobs.dtype.kind == "f":
        whole = np.isfinite(jobs) & (jobs == np.round(jobs)) & (np.abs(jobs) < 2.0**62)
        if not whole.all():
            raise ValueError(f"actions must be whole job indices, got {jobs[~whole][0]!r} (env {int(np.flatnonzero(~whole)[0])})")
        return jobs.astype(np.int64)
    if jobs.dtype.kind not in "iub":
        raise ValueError(f"actions must be integer job indices, got dtype {jobs.dtype}")
    return jobs.astype(np.int64)


def checked_reset_args(seed: Any, options: dict[str, Any] | None, num_envs: int) -> tuple[list[int | None], Any]:
    """A vector reset's seeds (one per env) and ``reset_mask``, checked before any env resets."""
    options = dict(options or {})
    mask = options.pop("reset_mask", None)
    if mask is not None and np.asarray(mask).shape != (num_envs,):
        raise ValueError(f"reset_mask must have shape ({num_envs},), got {np.asarray(mask).shape}")
    if seed is None or isinstance(seed, (int, np.integer)):
        return [None if seed is None else int(seed) + i for i in range(num_envs)], mask
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"seed: got {len(seeds)} seeds for {num_envs} envs")
    return seeds, mask
