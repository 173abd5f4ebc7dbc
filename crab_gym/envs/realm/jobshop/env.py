"""Realm-P11-v0: job-shop scheduling (REALM-Bench problem 11) as a Gymnasium env.

:class:`JobShopEnv`'s docstring is the env's reference: its action and observation spaces,
rewards, starting state, episode end, info and arguments. Its reference makespan comes from
:mod:`crab_gym.envs.realm.jobshop.references` (best known values, and the stored plans the
oracle submits), the
schedule engine from :mod:`crab_gym.envs.realm.jobshop.sim` and the final constraint check
from :mod:`crab_gym.envs.realm.jobshop.checker`.

This module deliberately does not use ``from __future__ import annotations``: the action
signatures are built inside a function with ``Annotated`` bounds that pydantic must resolve.
"""

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import Field

from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.common.env import RealmEnv, checked_init
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.common.viewer import Viewer
from crab_gym.envs.realm.jobshop.checker import check, constraint_satisfaction
from crab_gym.envs.realm.jobshop.constructed import constructed_reference
from crab_gym.envs.realm.jobshop.fast_dispatch import dispatched_job
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.references import instance_reference, literature, yardstick
from crab_gym.envs.realm.jobshop.render import VIEWER
from crab_gym.envs.realm.jobshop.sim import JobShopSchedule
from crab_gym.envs.realm.jobshop.source import SOURCE

RewardMode = Literal["default", "makespan"]
DEFAULT_INSTANCE = "ft06"



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
    """The sub-goal "job ``job`` is complete", built once per job index (it reads the env it
    is given, so every env and episode shares it)."""

    def job_done(env: Any) -> bool:
        return env.schedule.job_finished(job)

    return evaluator(job_done, name=f"job_{job}_completed", description=f"every operation of job {job} is scheduled")


class JobShopEnv(RealmEnv):
    """Job-shop scheduling (REALM-Bench P11), one operation at a time (RL) or by whole plans
    (LLM agents); the cost is the makespan.

    ## Description

    `n` jobs, each a chain of `m` operations: operation `k` of job `j` runs on machine
    `machines[j][k]` for `durations[j][k]` time units. A machine runs one operation at a
    time, a job's operations run in order, and no operation is interrupted. The agent builds a
    schedule and is measured by its makespan (when the last operation ends) against the
    instance's reference. Instances: the 162 shipped classic ones (ft, la, abz, orb, swv, yn,
    ta; `crab_gym.datasets.list_instances('P11')`), a file, an instance object, or a fresh
    one drawn with Taillard's generator on every reset.

    ## Action Space

    A `OneOf` over the two actions' argument `Dict`s: `(0, {"job": j})` is `dispatch(j)`.
    `step` also takes a tool call `{"name": ..., "arguments": {...}}`; `tools()` gives the
    actions' definitions for an LLM API.

    | index | action | arguments | effect |
    |---|---|---|---|
    | 0 | `dispatch` | `job`: `Discrete(n)` | places the job's next operation at its earliest feasible start: after the job's previous operation, in the first idle gap of its machine that is long enough (left-shift insertion), else after the machine's last operation. Every optimal schedule is reachable. |
    | 1 | `submit_plan` | `sequence`: `Sequence(Sequence(Discrete(n)))`, per machine (machine 0 first) the job indices in processing order, each job once per operation it has there | every remaining operation starts as early as its job and machine predecessors in the plan allow (the plan's semi-active schedule); operations already placed keep their times, so each machine's list must begin with them. Ends the episode. |

    `action_masks()` (and `obs["action_mask"]`) marks the jobs with operations left; flat
    choice `j` is `dispatch(j)`. An invalid action (a masked job, an index out of range, a
    malformed element or tool call, a plan that deadlocks or misses operations) changes
    nothing: `info["valid"]` is False, `info["error"]` says why and the reward is
    `-invalid_action_penalty`.

    ## Observation Space

    A `Dict` of fixed-shape arrays (`n` jobs, `m` operations per job, `M` machines);
    the spaces depend on the instance's size only, so instance swaps and a generator keep them.

    | key | shape, dtype | meaning |
    |---|---|---|
    | `processing_time` | (n, m) float32 | duration of each operation, at most `max(99, largest duration)` (the generator's `high` with a generator) |
    | `machine` | (n, m) int64 | its machine, 0-based |
    | `done` | (n, m) int8 | 1 once the operation is scheduled |
    | `lower_bound` | (n, m) float32 | lower bound of the operation's end: its end once scheduled, else its job's ready time plus the durations up to it |
    | `machine_available` | (M,) float32 | end of the machine's last scheduled operation |
    | `action_mask` | (n,) int8 | 1 for each job with operations left |

    ## Rewards

    The reference makespan is `env.unwrapped.reference.value` (a
    `Reference` of `crab_gym.envs.realm.common.references`): for the data of a shipped
    instance the literature's best known makespan (its proven optimum, else its best known
    upper bound), so 1 means a plan as short as the best known; `reference.plan` holds the
    `submit_plan` arguments of the stored CP-SAT plan that `OraclePolicy` submits, which
    scores `best_known / its makespan` (below 1 where it is longer). For any other instance
    its own proven optimum or best known upper bound; for one with neither (a generated one)
    the solver's value: CP-SAT's best schedule on one worker within a deterministic limit,
    solved once per instance data when first needed and cached (its status and bound on the
    reference, its plan in `reference.plan`; `reference="bound"` takes the instance's lower
    bound instead, with no solver). Or the `reference=` value.

    * `reward_mode="default"`: `progress_weight` (0.5) x the rise in the share of jobs
      completed at each step, plus `optimality_weight` (0.5) x the optimality ratio
      `min(1, reference / makespan)` on the last step. The return lies in [0, 1]; 1 is a
      complete schedule no longer than the reference. (The evaluator graph has one sub-goal
      per job, `job_<j>_completed`; its completeness is the share of jobs completed.)
    * `reward_mode="makespan"`: minus the rise of the makespan's lower bound (the largest
      `obs["lower_bound"]`) at each step, the dense reward of L2D: the return is the initial
      lower bound minus the makespan.

    ## Starting State

    No operation is scheduled: `done` and `machine_available` are all 0 and every job is
    legal. `reset(options={"instance": ...})` switches to another instance of the same size
    (kept for later resets); with a `generator`, every reset without that option draws a
    fresh instance, seeded by `reset(seed=...)`.

    ## Episode End

    Termination: every operation is scheduled (by the last `dispatch` or a valid
    `submit_plan`). The env never truncates; wrap it in `TimeLimit` to cap the steps.
    On the last step `info["solution"]` holds `{"sequence", "makespan", "schedule"}`
    (REALM's plan shape, plus `{job, op, machine, start, end}` for every operation) and
    `info["metrics"]` the REALM metrics `planning_quality` (share of operations
    scheduled), `optimality`, `constraint_satisfaction` (share of job-order and machine
    constraints kept, rechecked from the start times by the independent checker), plus
    `makespan`, `reference_makespan`, `reference_kind`, `gap` (to the reference),
    `best_known`, `best_known_kind`, `literature_lower_bound` and `gap_to_best_known`
    (`(makespan - best_known) / best_known`; equal to `gap` unless `reference=` is given).

    ## Info

    Every step: the `CrabEnv` keys plus `makespan` (so far), `lower_bound` (of the
    makespan), `reference` (the reference makespan), `reference_kind` (`"optimum"`,
    `"upper_bound"` (best known, not proven optimal) or `"lower_bound"`; `"given"` for
    `reference=`), `best_known` (the literature's
    optimum, else best known upper bound; None when unpublished) and `scheduled` (`{job,
    op, machine, start, end}` of the operation this dispatch placed, else None).

    ## Arguments

    ``python
    >>> import gymnasium as gym
    >>> env = gym.make("Realm-P11-v0", instance="ta01", reward_mode="makespan", render_mode="ansi")
    ``

    | parameter | type | default | description |
    |---|---|---|---|
    | `instance` | `str`, path or `JSSPInstance` | `"ft06"` | a shipped instance name (`"ta01"`; case and zero padding do not matter), a file in the standard, Taillard or JSON form, or an instance object |
    | `generator` | `(n_jobs, n_machines)` or `{"n_jobs", "n_machines", "low", "high", "construction"}` | `None` | draw a fresh instance with Taillard's scheme (durations in `low..high`, default 1..99) on every reset; overrides `instance`; its reference is the solver's value (see Rewards); `"construction": "bound_tight"` draws instances whose optimum is known by construction instead (reference `OPTIMAL_BY_CONSTRUCTION`, with its plan, no solver; needs `n_jobs >= n_machines`); or your own callable `generator(rng) -> instance` (as in Jumanji), whose draws must fit the env's spaces |
    | `reference` | `float` or `"bound"` | `None` | a known makespan to score against instead of the best known; `"bound"`: an instance with no best known value is scored against its lower bound, without a solver (for training on `generator=`) |
    | `reference_solve` | `"deferred"` or `"inline"` | `"deferred"` | `"deferred"`: an instance with no best known value (a generated one) is not solved inside `step()` or `reset()`: the reward measures against its lower bound, the metrics say `optimality_pending` and `finish_metrics()` (the evaluation runner calls it) solves it; `deferred_reward()` then gives the rest of the optimality term, and the runner adds it to the return (0 with `reward_mode="makespan"`); `"inline"`: solved at the episode's end, inside `step()` |
    | `reward_mode` | `"default"` or `"makespan"` | `"default"` | see Rewards |
    | `render_mode` | `"ansi"`, `"rgb_array"` or `None` | `None` | `ansi`: each machine's operations as text (`j3[0-94)` is job 3 from 0 to 94); `rgb_array`: a Gantt chart with the makespan (black) and the reference (red) |
    | `invalid_action_penalty` | `float` | 0.0 | subtracted from the reward of an invalid action |
    | `progress_weight` | `float` | 0.5 | weight of the rise in jobs completed |
    | `optimality_weight` | `float` | 0.5 | weight of the final optimality ratio |

    ## Version History

    * v0: the initial version. On the REALM base `RealmEnv`, `env.unwrapped.reference`
      is a `Reference` record (value = the reference makespan, status, bound, solver, time
      limit, workers, `plan` = the stored plan's `submit_plan` arguments, `extra` =
      `reference_kind` and the literature's values); it replaces the attributes
      `reference_makespan` and `reference_kind`. `reference=` was added. The info and
      metrics keys are unchanged. Issue 22: the reference of a shipped instance is the
      literature's best known makespan (it was the stored CP-SAT plan's, so a plan 5 %
      above ta01's optimum scored 1.0); an instance with no best known value is measured
      against the solver's value (it was a lower bound); `reference="bound"` was added.
    """

    #: The operation scheduled by the last step (render highlight) and the makespan bound
    #: before it (the makespan reward): per-step scratch, not state.
    transient_attributes = (*RealmEnv.transient_attributes, "_last_op", "_lb_before")
    #: The best known makespan and stored plan of a shipped instance's data, else the
    #: instance's own values, else the solver's (see
    #: :func:`~crab_gym.envs.realm.jobshop.references.yardstick`; ``reference="bound"``: no solver).
    instance_source = SOURCE
    reference_lookup = staticmethod(yardstick)
    viewer = VIEWER
    checker = staticmethod(check)

    @checked_init
    def __init__(
        self,
        instance: str | Path | JSSPInstance = DEFAULT_INSTANCE,
        *,
        generator: tuple[int, int] | dict[str, int] | Callable[..., Any] | None = None,
        reference: float | Literal["bound"] | None = None,
        reward_mode: RewardMode = "default",
        reference_solve: Literal["deferred", "inline"] = "deferred",
        viewer: Viewer | None = None,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        if reward_mode not in ("default", "makespan"):
            raise ValueError(f"reward_mode must be 'default' or 'makespan', got {reward_mode!r}")
        self.reward_mode = reward_mode
        self._bound_only = check_reference_option(reference)
        self._generator, inst = self.instance_source.start(instance, generator)
        if isinstance(self._generator, dict):  # the family's generator: its durations' bound
            max_p = self._generator["high"]
        else:  # an instance or a user's generator: its first instance's (a later draw above it is refused)
            max_p = max(99, max(max(r) for r in inst.durations))
        super().__init__(
            _make_actions(inst.n_jobs), reference=None if self._bound_only else reference,
            reference_solve=reference_solve, render_mode=render_mode,
            invalid_action_penalty=invalid_action_penalty, progress_weight=progress_weight,
            optimality_weight=optimality_weight, viewer=viewer,
        )
        self._max_p = max(int(max_p), 1)
        self.observation_space = observation_space_for(inst, self._max_p, self.codec.n_flat)
        self._dispatch_index = self.codec.index["dispatch"]
        self._graph: nx.DiGraph | None = None
        self._lb_before = 0
        self._use_instance(inst)

    # ================================================================== instance (RealmEnv hooks)
    def _check_fits(self, inst: JSSPInstance) -> None:
        if inst.shape != self.instance.shape or inst.n_machines != self.instance.n_machines:
            raise ValueError(
                f"instance {inst.name} is {inst.n_jobs}x{inst.n_machines} ({inst.n_ops} ops per job); "
                f"this env's spaces are for {self.instance.n_jobs}x{self.instance.n_machines}"
            )
        if max(max(r) for r in inst.durations) > self._max_p:
            raise ValueError(f"instance {inst.name} has durations above this env's bound {self._max_p}")

    def _use_instance(self, inst: JSSPInstance) -> None:
        self.instance = inst
        self.schedule = JobShopSchedule(inst)
        self._literature = literature(inst)  # also without a stored reference (``reference=`` given)
        proc = inst.durations_array().astype(np.float32)
        proc.flags.writeable = False
        self._obs_proc = proc
        self._obs_machine = inst.machines_array()
        self._last_op: dict[str, int] | None = None
        self._verdict: tuple[int, float] | None = None

    def _restart(self) -> None:
        self.schedule.reset()
        self._last_op = None
        self._verdict = None

    # ================================================================== reference and optimality
    def _reference_kind(self) -> str:
        """What the reference makespan is (``"optimum"``, ``"upper_bound"``,
        ``"lower_bound"``, or ``"given"`` for ``reference=``)."""
        return self.reference.extra.get("reference_kind", "given")

    def _solve_reference(self) -> Reference:
        """The yardstick of the current instance (``reference="bound"``: never the solver)."""
        return constructed_reference(self.instance) or yardstick(self.instance, solve=not self._bound_only)

    def _provisional_reference(self) -> Reference:
        """While a drawn instance's solved yardstick waits (``reference_solve="deferred"``):
        its lower bound, as with ``reference="bound"`` (no solver)."""
        return instance_reference(self.instance)

    def _agent_cost(self) -> float | None:
        """The makespan of a complete schedule (None before every operation is placed)."""
        return self.schedule.makespan if self.schedule.complete else None

    def _plan_feasible(self) -> bool:
        return self._constraints_kept() == 1.0

    def _constraints_kept(self) -> float:
        """The independent checker's share of constraints the schedule keeps, computed once per
        schedule state (the episode's end asks for it twice: feasibility and metrics)."""
        s = self.schedule
        if self._verdict is None or self._verdict[0] != s.n_scheduled:
            self._verdict = (s.n_scheduled, constraint_satisfaction(self.instance, s.start))
        return self._verdict[1]

    # ================================================================== CrabEnv hooks
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

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s, ref, published = self.schedule, self.reference.value, self._literature
        mk, best = s.makespan, published["best_known"]
        metrics = {
            "planning_quality": s.n_scheduled / s.n_total,
            "optimality": self._optimality(),
            "constraint_satisfaction": self._constraints_kept(),
            "makespan": mk,
            "reference_makespan": ref,
            "reference_kind": self._reference_kind(),
            "gap": (mk - ref) / ref if ref else 0.0,
            "best_known": best,
            "best_known_kind": published["best_known_kind"],
            "literature_lower_bound": published["literature_lower_bound"],
            "gap_to_best_known": (mk - best) / best if best else None,
        }
        return metrics, self._solution()

    def _solution(self) -> dict[str, Any]:
        """Each machine's job order (the ``submit_plan`` shape), the makespan and every
        operation's interval (needs no reference)."""
        s = self.schedule
        return {"sequence": s.sequences(), "makespan": s.makespan, "schedule": s.operations()}

    def _action_mask(self) -> np.ndarray:
        return self.schedule.mask.astype(bool)

    def _extra_info(self) -> dict[str, Any]:
        s = self.schedule
        return {
            "makespan": s.makespan,
            "lower_bound": s.lb_makespan,
            "reference": self.reference.value,
            "reference_kind": self._reference_kind(),
            "best_known": self._literature["best_known"],
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
        RealmEnv._begin_step(self)  # not super(): on the hot path it costs more than the hook's own work
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

    def _optimality_reward(self, optimality: float) -> float:
        """No optimality term in the makespan mode (its return is the initial bound minus the
        makespan), so nothing of it waits for a solve either (:meth:`deferred_reward` is 0)."""
        return 0.0 if self.reward_mode == "makespan" else super()._optimality_reward(optimality)

    def _fast_dispatch_job(self, action: Any) -> int | None:
        """The job of a well-formed, legal dispatch element or tool call, else None."""
        job, s = dispatched_job(action, self._dispatch_index), self.schedule
        return job if job is not None and 0 <= job < s.n_jobs and s.next_op[job] < s.n_ops else None

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
            f"indices in processing order. Reference makespan: {self._reference_words()}."
        )

    def describe(self) -> str:
        """The state in words: the schedule so far and each job's remaining operations with
        their machines, durations and the earliest start ``dispatch`` would give them."""
        s, inst = self.schedule, self.instance
        lines = [
            f"scheduled {s.n_scheduled}/{s.n_total} operations; makespan so far {s.makespan}; "
            f"lower bound {s.lb_makespan}; reference {self._reference_words()}",
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

    def _reference_words(self) -> str:
        """``55 (optimum)``: the reference makespan and its kind."""
        return f"{self.reference.value} ({self._reference_kind()})"



def observation_space_for(inst: JSSPInstance, max_p: int, n_flat: int) -> spaces.Dict:
    """The observation space of an instance's size (durations bounded by ``max_p``)."""
    n, k = inst.shape
    horizon = float(max_p * n * k)
    return spaces.Dict(
        {
            "processing_time": spaces.Box(0.0, float(max_p), (n, k), np.float32),
            "machine": spaces.Box(0, inst.n_machines - 1, (n, k), np.int64),
            "done": spaces.MultiBinary((n, k)),
            "lower_bound": spaces.Box(0.0, horizon, (n, k), np.float32),
            "machine_available": spaces.Box(0.0, horizon, (inst.n_machines,), np.float32),
            "action_mask": spaces.MultiBinary(n_flat),
        }
    )


def check_reference_option(reference: Any) -> bool:
    """Whether ``reference`` asks for the no-solver yardstick (``"bound"``); any other string
    is refused (a number is a makespan to score against, None the default yardstick)."""
    if isinstance(reference, str):
        if reference != "bound":
            raise ValueError(f'reference must be a makespan, "bound" or None, got {reference!r}')
        return True
    return False
