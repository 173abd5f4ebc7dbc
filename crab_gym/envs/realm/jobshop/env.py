"""Realm-P11-v0: job-shop scheduling (REALM-Bench problem 11) as a Gymnasium env.

Two actions drive the same schedule:

* ``dispatch(job)`` places the job's next operation at its earliest feasible start,
  including left-shift insertion into idle machine gaps (see
  :mod:`crab_gym.envs.realm.jobshop.sim`), so every optimal schedule is reachable;
* ``submit_plan(sequence)`` completes the schedule from a whole plan in REALM's shape
  ``[[job indices in order] for each machine]``, each remaining operation starting as early
  as its job and its machine predecessor allow (the plan's semi-active schedule).

The episode terminates when every operation is scheduled; the cost is the makespan,
measured against the instance's reference: for a shipped instance the makespan of its stored
reference plan (what ``OraclePolicy`` submits, so the oracle scores exactly 1; see
:mod:`crab_gym.envs.realm.jobshop.references`), otherwise the optimum, else best known upper bound,
else a lower bound. ``info["reference_kind"]`` says which; the literature's values stay
apart in ``best_known`` / ``gap_to_best_known``.

This module deliberately does not use ``from __future__ import annotations``: the action
signatures are built inside a function with ``Annotated`` bounds that pydantic must resolve.
"""

import functools
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import Field

from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.common.env import (
    InstanceKind,
    InstanceSwapMixin,
    RenderModesMixin,
    check_option_keys,
    checked_init,
)
from crab_gym.envs.realm.jobshop import render as rendering
from crab_gym.envs.realm.jobshop.checker import constraint_satisfaction
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.references import reference_plan
from crab_gym.envs.realm.jobshop.sim import JobShopSchedule

RewardMode = Literal["default", "makespan"]
DEFAULT_INSTANCE = "ft06"

#: What ``instance`` accepts (checked, and explained when wrong).
INSTANCE_KIND = InstanceKind(
    problem="JSSP",
    types=(JSSPInstance,),
    names=list_jssp_instances,
    list_all="crab_gym.datasets.list_instances('P11')",
    examples=("ft06", "la01", "ta01"),
    files="a path to an instance file (standard, Taillard or JSON form)",
    mappings=False,
)
#: Keys of a ``generator`` dict (``n_jobs`` and ``n_machines`` are required).
GENERATOR_KEYS = ("n_jobs", "n_machines", "low", "high")


def _make_actions(n_jobs: int) -> list[Action]:
    """The two actions, with the job index bounded by this instance size."""
    Job = Annotated[int, Field(ge=0, le=n_jobs - 1)]

    def dispatch(job: Job, env: Any) -> None:
        """Schedule the next unscheduled operation of a job at its earliest feasible start
        (after the job's previous operation, in the first idle gap of its machine that fits).

        Args:
            job: index of the job (0-based) whose next operation to schedule.
        """
        env._dispatch(job)

    def submit_plan(sequence: list[list[Job]], env: Any) -> None:
        """Submit a whole plan: for each machine (machine 0 first), the job indices in the
        order the machine processes them, each job listed once per operation it has on that
        machine. Every remaining operation then starts as early as its job and machine
        predecessors allow. Operations already scheduled keep their place, so each machine's
        list must begin with them.

        Args:
            sequence: one list per machine of job indices in processing order.
        """
        env._apply_plan(sequence)

    return [
        Action.from_function(dispatch, env_name="realm-p11"),
        Action.from_function(submit_plan, env_name="realm-p11"),
    ]


@functools.cache
def _job_done_evaluator(job: int) -> Evaluator:
    @evaluator(name=f"job_{job}_completed")
    def check(env: Any) -> bool:
        return env.schedule.job_finished(job)

    check.description = f"every operation of job {job} is scheduled"
    return check


class JobShopEnv(RenderModesMixin, InstanceSwapMixin, CrabEnv):
    """Job-shop scheduling by dispatching (RL) or whole plans (LLM agents).

    Args:
        instance: a shipped instance name (``"ft06"``, ``"ta01"``, ...; see
            :func:`~crab_gym.datasets.jssp.list_jssp_instances`), a path to an instance file
            (standard, Taillard or JSON form), or a :class:`JSSPInstance`.
        generator: ``(n_jobs, n_machines)`` or ``{"n_jobs", "n_machines", "low", "high"}``:
            draw a fresh instance with Taillard's scheme on every reset (seeded by
            ``reset(seed=...)``); overrides ``instance``. Its reference is a lower bound.
        reward_mode: ``"default"`` (graph progress + optimality ratio, return in [0, 1]) or
            ``"makespan"`` (minus the rise of the makespan lower bound at each step: the
            return is minus the makespan plus the initial bound).
        render_mode: ``"ansi"`` or ``"rgb_array"``.
        invalid_action_penalty, progress_weight, optimality_weight: see ``CrabEnv``.
    """

    #: The operation scheduled by the last step (render highlight), not state.
    transient_attributes = ("_last_op", "_lb_before")

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    @checked_init
    def __init__(
        self,
        instance: str | Path | JSSPInstance = DEFAULT_INSTANCE,
        *,
        generator: tuple[int, int] | dict[str, int] | None = None,
        reward_mode: RewardMode = "default",
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        if reward_mode not in ("default", "makespan"):
            raise ValueError(f"reward_mode must be 'default' or 'makespan', got {reward_mode!r}")
        self.reward_mode = reward_mode
        self._generator = _generator_options(generator)
        if self._generator is not None:
            g = self._generator
            self.instance = random_instance(g["n_jobs"], g["n_machines"], 0, low=g["low"], high=g["high"])
            max_p = g["high"]
        else:
            self.instance = INSTANCE_KIND.load(instance, load_jssp_instance)
            max_p = max(99, max(max(r) for r in self.instance.durations))
        inst = self.instance
        super().__init__(
            _make_actions(inst.n_jobs),
            render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty,
            progress_weight=progress_weight,
            optimality_weight=optimality_weight,
        )
        n, k = inst.shape
        self._max_p = max(int(max_p), 1)
        self._horizon = self._max_p * n * k
        horizon = float(self._horizon)
        self.observation_space = spaces.Dict(
            {
                "processing_time": spaces.Box(0.0, float(self._max_p), (n, k), np.float32),
                "machine": spaces.Box(0, inst.n_machines - 1, (n, k), np.int64),
                "done": spaces.MultiBinary((n, k)),
                "lower_bound": spaces.Box(0.0, horizon, (n, k), np.float32),
                "machine_available": spaces.Box(0.0, horizon, (inst.n_machines,), np.float32),
                "action_mask": spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self._dispatch_index = self.codec.index["dispatch"]
        self._graph: nx.DiGraph | None = None
        self._use_instance(inst)
        self._last_op: dict[str, int] | None = None
        self._lb_before = 0

    # ================================================================== instance
    def _use_instance(self, inst: JSSPInstance) -> None:
        self.instance = inst
        self.schedule = JobShopSchedule(inst)
        self.reference_makespan, self.reference_kind = _reference(inst)
        self.best_known, self.best_known_kind = _best_known(inst)
        proc = inst.durations_array().astype(np.float32)
        proc.flags.writeable = False
        self._obs_proc = proc
        self._obs_machine = inst.machines_array()

    def _check_fits(self, inst: JSSPInstance) -> None:
        if inst.shape != self.instance.shape or inst.n_machines != self.instance.n_machines:
            raise ValueError(
                f"instance {inst.name} is {inst.n_jobs}x{inst.n_machines} ({inst.n_ops} ops per job); "
                f"this env's spaces are for {self.instance.n_jobs}x{self.instance.n_machines}"
            )
        if max(max(r) for r in inst.durations) > self._max_p:
            raise ValueError(f"instance {inst.name} has durations above this env's bound {self._max_p}")

    def _load_instance(self, spec: Any) -> JSSPInstance:
        return INSTANCE_KIND.load(spec, load_jssp_instance)

    def _draw_instance(self) -> JSSPInstance:
        g = self._generator
        return random_instance(g["n_jobs"], g["n_machines"], self.np_random, low=g["low"], high=g["high"])

    # ================================================================== CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if not self._next_instance(options):
            self.schedule.reset()
        self._last_op = None

    def _build_graph(self) -> nx.DiGraph:
        """One sub-goal per job: completeness is the share of jobs completed, so a complete
        schedule has completeness 1 however long it is (its quality is ``optimality``).

        The evaluators read the env they are given, so one graph serves every episode
        (it depends on the number of jobs only); GraphEvaluator keeps the passes.
        """
        if self._graph is None:
            self._graph = nx.DiGraph()
            self._graph.add_nodes_from(_job_done_evaluator(j) for j in range(self.instance.n_jobs))
        return self._graph

    def _get_obs(self) -> dict[str, np.ndarray]:
        s = self.schedule
        return {
            "processing_time": self._obs_proc.copy(),
            "machine": self._obs_machine.copy(),
            "done": s.done.copy(),
            "lower_bound": s.lower_bound.copy(),
            "machine_available": s.machine_available.copy(),
            "action_mask": s.mask.copy(),
        }

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        if name == "dispatch":
            job = args["job"]
            if not self.schedule.can_dispatch(job):
                return f"job {job} has no operation left to schedule (masked)"
            return None
        return self.schedule.check_plan(args["sequence"])[0]

    def _is_terminated(self) -> bool:
        return self.schedule.complete

    def _optimality(self) -> float:
        if not self.schedule.complete or self.schedule.makespan <= 0:
            return 0.0
        return min(1.0, self.reference_makespan / self.schedule.makespan)

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s = self.schedule
        mk = s.makespan
        metrics = {
            "planning_quality": s.n_scheduled / s.n_total,
            "optimality": self._optimality(),
            "constraint_satisfaction": constraint_satisfaction(self.instance, s.start),
            "makespan": mk,
            "reference_makespan": self.reference_makespan,
            "reference_kind": self.reference_kind,
            "gap": (mk - self.reference_makespan) / self.reference_makespan if self.reference_makespan else 0.0,
            "best_known": self.best_known,
            "best_known_kind": self.best_known_kind,
            "literature_lower_bound": self.instance.lower_bound,
            "gap_to_best_known": (mk - self.best_known) / self.best_known if self.best_known else None,
        }
        solution = {"sequence": s.sequences(), "makespan": mk, "schedule": s.operations()}
        return metrics, solution

    def _action_mask(self) -> np.ndarray:
        return self.schedule.mask.astype(bool)

    def _extra_info(self) -> dict[str, Any]:
        s = self.schedule
        return {
            "makespan": s.makespan,
            "lower_bound": s.lb_makespan,
            "reference": self.reference_makespan,
            "reference_kind": self.reference_kind,
            "best_known": self.best_known,
            "scheduled": self._last_op,
        }

    def _progress_may_change(self, name: str, args: dict[str, Any]) -> bool:
        return name == "submit_plan" or self.schedule.job_finished(args["job"])

    # ================================================================== action entries
    def _dispatch(self, job: int) -> None:
        if not self.schedule.can_dispatch(job):  # reached only when run outside step()
            raise ActionArgumentError("dispatch", "job", f"job {job} has no operation left to schedule (masked)")
        k, start, end = self.schedule.dispatch(job)
        self._last_op = {"job": job, "op": k, "machine": self.instance.machines[job][k], "start": start, "end": end}

    def _apply_plan(self, sequence: list[list[int]]) -> None:
        reason, order = self.schedule.check_plan(sequence)
        if reason:  # reached only when run outside step(); nothing was changed
            raise ActionArgumentError("submit_plan", "sequence", reason)
        self.schedule.apply_plan(order)
        self._last_op = None

    # ================================================================== step
    def _begin_step(self) -> None:
        self._lb_before = self.schedule.lb_makespan
        self._last_op = None

    def _fast_step(self, action: Any) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
        """A legal ``dispatch`` without pydantic: the one hot action of RL training (same
        result, same info as the generic path; anything else takes the generic path)."""
        job = self._fast_dispatch_job(action)
        if job is None:
            return None
        self._dispatch(job)
        return {"name": "dispatch", "arguments": {"job": job}}, "dispatch", {"job": job}

    def _step_reward(self, name: str, values: dict[str, Any], reward: float) -> float:
        if self.reward_mode == "makespan":  # minus the rise of the makespan lower bound
            return -float(self.schedule.lb_makespan - self._lb_before)
        return reward

    def _fast_dispatch_job(self, action: Any) -> int | None:
        """The job of a well-formed, legal dispatch element or tool call, else None."""
        if type(action) is tuple:
            if len(action) != 2:
                return None
            head = action[0]
            # exactly what OneOf.contains accepts as an index: int or np.int64
            if (type(head) is not int and type(head) is not np.int64) or head != self._dispatch_index:
                return None
            args = action[1]
            if type(args) is not dict or len(args) != 1:
                return None
        elif type(action) is dict:
            if action.get("name") != "dispatch" or len(action) > 2:
                return None
            args = action.get("arguments")
            if type(args) is not dict or len(args) != 1:
                return None
        else:
            return None
        job = args.get("job")
        if type(job) is not int and not isinstance(job, np.signedinteger):
            return None
        job = int(job)
        s = self.schedule
        if 0 <= job < s.n_jobs and s.next_op[job] < s.n_ops:
            return job
        return None

    # ================================================================== words, for LLM agents
    @property
    def task_description(self) -> str:
        """The goal in words (read by :class:`~crab_gym.wrappers.LLMAdapter`)."""
        inst = self.instance
        return (
            f"Job-shop scheduling, instance {inst.name}: {inst.n_jobs} jobs, each a chain of "
            f"{inst.n_ops} operations; every operation runs on one machine (0..{inst.n_machines - 1}) "
            "for a fixed time, a machine runs one operation at a time, and a job's operations run "
            "in order. Minimise the makespan (when the last operation ends). Either call "
            "dispatch(job) repeatedly (it schedules the job's next operation at its earliest "
            "feasible start) or call submit_plan(sequence) once with, for each machine, the job "
            f"indices in processing order. Reference makespan: {self.reference_makespan} "
            f"({self.reference_kind})."
        )

    def describe(self) -> str:
        """The state in words: the schedule so far and each job's remaining operations with
        their machines, durations and the earliest start ``dispatch`` would give them."""
        s, inst = self.schedule, self.instance
        lines = [
            f"scheduled {s.n_scheduled}/{s.n_total} operations; makespan so far {s.makespan}; "
            f"lower bound {s.lb_makespan}; reference {self.reference_makespan} ({self.reference_kind})",
            "machines busy until: "
            + ", ".join(f"M{mc}={int(t)}" for mc, t in enumerate(s.machine_available)),
        ]
        for j in range(inst.n_jobs):
            k = s.next_op[j]
            if k >= inst.n_ops:
                lines.append(f"job {j}: done at {s.job_ready[j]}")
                continue
            start, _ = s.earliest_start(j)
            rest = " ".join(
                f"(M{inst.machines[j][q]},{inst.durations[j][q]})" for q in range(k, inst.n_ops)
            )
            lines.append(f"job {j}: next op {k} could start at {start}; remaining (machine,duration): {rest}")
        return "\n".join(lines)

    # ================================================================== rendering
    def _render_text(self) -> str:
        return rendering.text(self.instance, self.schedule, self.reference_makespan, self.reference_kind)

    def _render_image(self) -> np.ndarray:
        return rendering.draw(self.instance, self.schedule, self.reference_makespan, self.reference_kind)


def _reference(inst: JSSPInstance) -> tuple[int, str]:
    """The makespan agents are scored against, and its kind.

    A shipped instance's stored plan (kind ``"optimum"`` if proven optimal, ``"best_known"`` if
    it equals the literature's best known makespan, else ``"plan"``), so the reference is always
    reached by a schedule the oracle policy submits; other instances fall back to their own
    bounds (``"optimum"``, ``"upper_bound"`` or ``"lower_bound"``).
    """
    plan = reference_plan(inst)
    if plan is not None:
        return plan.makespan, plan.kind(inst)
    return inst.reference


def _best_known(inst: JSSPInstance) -> tuple[int | None, str | None]:
    """The literature's best makespan: the proven optimum, else the best known upper bound."""
    if inst.optimum is not None:
        return inst.optimum, "optimum"
    if inst.upper_bound is not None:
        return inst.upper_bound, "upper_bound"
    return None, None


def _generator_options(generator: Any) -> dict[str, int] | None:
    if generator is None:
        return None
    if isinstance(generator, dict):
        check_option_keys("generator option", generator, GENERATOR_KEYS)
        missing = [k for k in ("n_jobs", "n_machines") if k not in generator]
        if missing:
            raise ValueError(f"generator needs {' and '.join(missing)} (keys: {', '.join(GENERATOR_KEYS)})")
        opts = {"low": 1, "high": 99, **generator}
    elif isinstance(generator, (tuple, list)) and len(generator) == 2:
        n_jobs, n_machines = generator
        opts = {"n_jobs": n_jobs, "n_machines": n_machines, "low": 1, "high": 99}
    else:
        raise TypeError(
            'generator must be (n_jobs, n_machines) or a dict like {"n_jobs": 6, "n_machines": 6} '
            f"(keys: {', '.join(GENERATOR_KEYS)}); got {type(generator).__name__} {generator!r}"
        )
    opts = {k: int(v) for k, v in opts.items()}
    if opts["n_jobs"] < 1 or opts["n_machines"] < 1 or not 0 <= opts["low"] <= opts["high"]:
        raise ValueError(f"invalid generator options {opts}")
    return opts
