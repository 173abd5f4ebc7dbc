"""Realm-J3-v0 (job shop at 200 x 50, jobs that revisit machines) and Realm-J2-v0 / Realm-J4-v0
(the same with disruptions) as Gymnasium envs.

:class:`ShopEnv`'s docstring is the reference of all three; :class:`DisruptedShopEnv` adds
the disruptions. The schedule engine is :mod:`.sim`, the independent checker :mod:`.checker`.

This module deliberately does not use ``from __future__ import annotations``: the action
signatures are built inside a function with ``Annotated`` bounds that pydantic must resolve.
"""

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import Field

from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.common.env import RealmEnv, checked_init
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.jobshop.fast_dispatch import dispatched_job
from crab_gym.envs.realm.jobshop.variants.checker import check, constraint_satisfaction
from crab_gym.envs.realm.jobshop.variants.model import MAX_TIME, ShopInstance
from crab_gym.envs.realm.jobshop.variants.references import bound_reference, reference
from crab_gym.envs.realm.jobshop.variants.render import VIEWER
from crab_gym.envs.realm.jobshop.variants.sim import ShopSim
from crab_gym.envs.realm.jobshop.variants.source import SOURCES

#: Bound of every time in the observation (float32 holds whole numbers exactly up to 2^24);
#: the instance's checks keep every time of an episode within it (:data:`.model.MAX_TIME`).
HORIZON = float(MAX_TIME)


def _make_actions(n_jobs: int, env_name: str) -> list[Action]:
    """``dispatch`` and ``submit_plan``, with the job index bounded by the instance size."""
    Job = Annotated[int, Field(ge=0, le=n_jobs - 1)]

    def dispatch(job: Job, env: Any) -> None:
        """Schedule the next unscheduled operation of a job at its earliest feasible start
        (after the job's previous operation and the clock, in the first idle gap of its
        machine that fits, outside known down-times and holds).

        Args:
            job: index of the job (0-based) whose next operation to schedule.
        """
        env._dispatch(job)

    def submit_plan(sequence: list[list[Job]], env: Any) -> None:
        """Submit a plan: for each machine (machine 0 first), the job indices in the order
        the machine processes them, each job listed once per operation it has on that
        machine. Operations already placed keep their place, so each machine's list must
        begin with them. The plan runs until a disruption strikes; then it pauses and waits
        for the next action (submit the plan again, or a new one).

        Args:
            sequence: one list per machine of job indices in processing order.
        """
        env._apply_plan(sequence)

    return [Action.from_function(dispatch, env_name=env_name), Action.from_function(submit_plan, env_name=env_name)]


@functools.cache
@functools.cache
def _job_done(job: int) -> Evaluator:
    def job_done(env: Any) -> bool:
        return env.sim.job_finished(job)

    return evaluator(job_done, name=f"job_{job}_completed", description=f"every operation of job {job} is scheduled")


class ShopEnv(RealmEnv):
    """Job shop with jobs of any length (REALM-Bench J3: 200 jobs x 50 machines, a job may
    visit a machine more than once); the cost is the makespan.

    ## Description

    `n` jobs, job `j` a chain of operations, operation `k` on machine `jobs[j][k][0]` for
    `jobs[j][k][1]` time units. A machine runs one operation at a time, a job's operations
    run in order, no operation is interrupted. Build a schedule, one dispatch at a time or by
    a whole plan; the makespan (when the last operation ends) is measured against the
    instance's reference. REALM-Bench's J1 is P11 (`Realm-P11-v0`).

    ## Action Space

    `OneOf` over `dispatch(job)` (`Discrete(n)`; left-shift insertion as in Realm-P11-v0)
    and `submit_plan(sequence)` (per machine, the jobs in processing order, each once per
    operation it has there; the plan's semi-active schedule). `action_masks()` and
    `obs["action_mask"]` mark the jobs with operations left. An invalid action changes
    nothing (`info["valid"]` False, `info["error"]` says why).

    ## Observation Space

    | key | shape, dtype | meaning |
    |---|---|---|
    | `processing_time` | (n, K) float32 | duration of each operation (K: the longest job's operation count; 0 past a job's end) |
    | `machine` | (n, K) int64 | its machine (0 past a job's end) |
    | `n_ops` | (n,) int64 | the job's operation count |
    | `done` | (n, K) int8 | 1 once the operation is scheduled (and past a job's end) |
    | `lower_bound` | (n, K) float32 | lower bound of the operation's end |
    | `machine_available` | (M,) float32 | end of the machine's last operation |
    | `action_mask` | (n,) int8 | 1 for each job with operations left |

    ## Rewards

    `progress_weight` (0.5) x the rise in the share of jobs completed per step, plus
    `optimality_weight` (0.5) x `min(1, reference / makespan)` on the last step. The
    reference is `env.unwrapped.reference`: the shipped instance's best plan known (certified
    optimal where it meets the trivial lower bound or CP-SAT proves it; else CP-SAT's with
    status, bound, time and workers), or, for another instance, solved once by
    `finish_metrics()` (deferred: the reward then measures against the trivial lower bound;
    `deferred_reward()` gives the rest of the term after the episode, and the evaluation
    runner adds it to the return).

    ## Starting State

    Nothing scheduled. `reset(options={"instance": ...})` swaps in an instance of the same
    shape; with `generator=` every reset draws one.

    ## Episode End

    Termination: every operation scheduled. `info["solution"]`: `sequence`, `makespan`,
    `schedule` (`{job, op, machine, start, end}`). `info["metrics"]`: `planning_quality`
    (share of operations scheduled), `optimality`, `constraint_satisfaction` (the
    independent checker on the start times), `makespan`, `reference_makespan`, `gap`,
    `lower_bound` (the trivial bound).

    ## Info

    Every step: the `CrabEnv` keys plus `makespan`, `reference`, `clock` and `scheduled`
    (`{job, op, machine, start, end}` of the operation a dispatch placed, else None).

    ## Arguments

    | parameter | default | description |
    |---|---|---|
    | `instance` | the first shipped one | a shipped name (`"j3_large_00"`), a file (crab_gym's JSON or an upstream REALM-Bench file), a mapping or a `ShopInstance` |
    | `generator` | None | `{"size": "large"}` (`small`, `medium`, `large` = 200 x 50; optional `n_jobs`, `n_machines`): a fresh seeded instance on every reset; or your own callable `generator(rng) -> instance` (as in Jumanji), whose draws must fit the env's spaces |
    | `reference` | None | a makespan to score against; `"bound"`: the trivial lower bound, no solver |
    | `reference_solve` | `"deferred"` | `"inline"` solves a missing reference inside the last `step()` |
    | `render_mode` | None | `"ansi"` or `"rgb_array"` (a Gantt chart that reads at 200 x 50) |
    | `invalid_action_penalty`, `progress_weight`, `optimality_weight` | 0, 0.5, 0.5 | reward weights |

    ## Version History

    * v0: initial version (issue 25).
    """

    problem: ClassVar[str] = "J3"
    instance_source = SOURCES["J3"]
    checker = staticmethod(check)
    viewer = VIEWER
    env_name: ClassVar[str] = "realm-j3"
    transient_attributes = (*RealmEnv.transient_attributes, "_last_op", "_events")

    @checked_init
    @realm_keywords
    def __init__(self, instance: str | Path | dict | ShopInstance | None = None, *,
                 generator: dict | Callable[..., Any] | None = None, **options: Any) -> None:
        reference = options.pop("reference", None)
        self._bound_only = reference == "bound"
        if isinstance(reference, str) and not self._bound_only:
            raise ValueError(f'reference must be a makespan, "bound" or None, got {reference!r}')
        self._generator, inst = self.instance_source.start(instance, generator)
        super().__init__(_make_actions(inst.n_jobs, self.env_name), reference=None if self._bound_only else reference,
                         **options)
        self._shape = inst.shape
        self.observation_space = self._observation_space(inst)
        self._dispatch_index = self.codec.index["dispatch"]
        self._events: list[str] = []
        self._use_instance(inst)

    # ================================================================== instances
    def _check_fits(self, inst: ShopInstance) -> None:
        if inst.shape != self._shape:
            raise ValueError(f"instance {inst.name} has shape (jobs, operations per job, machines) {inst.shape}; "
                             f"this env's spaces are for {self._shape}")

    def _use_instance(self, inst: ShopInstance) -> None:
        self.instance = inst
        self.sim = ShopSim(inst)
        n, K, _ = inst.shape
        proc = np.zeros((n, K), np.float32)
        mach = np.zeros((n, K), np.int64)
        for j, row in enumerate(inst.jobs):
            for k, (m, p) in enumerate(row):
                proc[j, k], mach[j, k] = p, m
        proc.flags.writeable = mach.flags.writeable = False
        self._obs_proc, self._obs_machine = proc, mach
        self._obs_nops = np.asarray([len(r) for r in inst.jobs], dtype=np.int64)
        self._last_op: dict[str, int] | None = None
        self._verdict: tuple[int, float] | None = None

    def _restart(self) -> None:
        self.sim.reset()
        self._last_op = None
        self._verdict = None
        self._events = []

    def _observation_space(self, inst: ShopInstance) -> spaces.Dict:
        n, K, M = inst.shape
        return spaces.Dict({
            "processing_time": spaces.Box(0.0, HORIZON, (n, K), np.float32),
            "machine": spaces.Box(0, M - 1, (n, K), np.int64),
            "n_ops": spaces.Box(1, K, (n,), np.int64),
            "done": spaces.MultiBinary((n, K)),
            "lower_bound": spaces.Box(0.0, HORIZON, (n, K), np.float32),
            "machine_available": spaces.Box(0.0, HORIZON, (M,), np.float32),
            "action_mask": spaces.MultiBinary(self.codec.n_flat),
        })

    # ================================================================== reference
    def _solve_reference(self) -> Reference:
        if self._bound_only:
            return bound_reference(self.instance)
        return self.yardstick.memo("reference", lambda: reference(self.instance))

    def _provisional_reference(self) -> Reference:
        return bound_reference(self.instance)

    @property
    def most_steps(self) -> int:
        """The most steps a legal episode takes: a dispatch per operation, plus a plan at the
        start and at every pause (one per disruption), for step caps of runners and checks."""
        return self.instance.n_ops + len(self.instance.disruptions) + 1

    def _agent_cost(self) -> float | None:
        return float(self.sim.makespan) if self.sim.complete else None

    def _plan_feasible(self) -> bool:
        return self._constraints_kept() == 1.0

    def _constraints_kept(self) -> float:
        s = self.sim
        key = (s.n_scheduled, len(s.applied))
        if self._verdict is None or self._verdict[0] != key:
            self._verdict = (key, constraint_satisfaction(self._faced_instance(), s.start))
        return self._verdict[1]

    def _faced_instance(self) -> ShopInstance:
        return self.instance

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        def build() -> nx.DiGraph:
            graph = nx.DiGraph()
            graph.add_nodes_from(_job_done(j) for j in range(self.instance.n_jobs))
            return graph

        return self._instance_graph(build)

    def _get_obs(self) -> dict[str, np.ndarray]:
        s = self.sim
        return {"processing_time": self._obs_proc.copy(), "machine": self._obs_machine.copy(),
                "n_ops": self._obs_nops.copy(), "done": s.done.copy(), "lower_bound": s.lower_bound.copy(),
                "machine_available": s.machine_available.copy(), "action_mask": s.mask.copy()}

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        if name == "dispatch":
            job = args["job"]
            return None if self.sim.can_dispatch(job) else f"job {job} has no operation left to schedule (masked)"
        reason, order = self.sim.check_plan(args["sequence"])
        if reason is None:
            self._pending = order
        return reason

    def _is_terminated(self) -> bool:
        return self.sim.complete

    def _action_mask(self) -> np.ndarray:
        return self.sim.mask.astype(bool)

    def _progress_may_change(self, name: str, args: dict[str, Any]) -> bool:
        return name == "submit_plan" or self.sim.job_finished(args["job"])

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        s, ref = self.sim, self.reference.value
        mk = s.makespan
        metrics = {
            "planning_quality": s.n_scheduled / s.n_total,
            "optimality": self._optimality(),
            "constraint_satisfaction": self._constraints_kept(),
            "makespan": mk,
            "reference_makespan": ref,
            "gap": (mk - ref) / ref if ref else 0.0,
            "lower_bound": self.instance.trivial_lower_bound(),
        }
        return metrics, self._solution()

    def _solution(self) -> dict[str, Any]:
        s = self.sim
        return {"sequence": s.sequences(), "makespan": s.makespan, "schedule": s.operations(),
                "not_before": [list(row) for row in s.not_before]}

    def _extra_info(self) -> dict[str, Any]:
        events, self._events = self._events, []
        return {"makespan": self.sim.makespan, "reference": self.reference.value, "clock": int(self.sim.now),
                "scheduled": self._last_op, "events": events}

    # ================================================================== actions
    def _dispatch(self, job: int) -> None:
        if not self.sim.can_dispatch(job):
            raise ActionArgumentError("dispatch", "job", f"job {job} has no operation left to schedule (masked)")
        struck = len(self.sim.applied)
        k, start, end = self.sim.dispatch(job)
        self._last_op = {"job": job, "op": k, "machine": self.instance.jobs[job][k][0], "start": start, "end": end}
        if len(self.sim.applied) > struck:
            self._struck(struck)

    def _apply_plan(self, sequence: list[list[int]]) -> None:
        order = self._pending
        if order is None:
            reason, order = self.sim.check_plan(sequence)
            if reason:
                raise ActionArgumentError("submit_plan", "sequence", reason)
        struck = len(self.sim.applied)
        left = self.sim.apply_plan(order)
        self._last_op = None
        if len(self.sim.applied) > struck:
            self._struck(struck)
        self._after_plan(sequence, left)

    def _struck(self, before: int) -> None:
        """Disruptions struck in this step (none in J3)."""

    def _after_plan(self, sequence: list[list[int]], left: int) -> None:
        """A plan ran (``left`` of its operations wait after a strike)."""

    def _begin_step(self) -> None:
        RealmEnv._begin_step(self)
        self._last_op = None

    def _fast_step(self, action: Any) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
        """A legal ``dispatch`` without pydantic (same result as the generic path)."""
        job = self._fast_job(action)
        if job is None:
            return None
        self._dispatch(job)
        return {"name": "dispatch", "arguments": {"job": job}}, "dispatch", {"job": job}

    def _fast_job(self, action: Any) -> int | None:
        """The job of a well-formed, legal dispatch element or tool call, else None."""
        job, s = dispatched_job(action, self._dispatch_index), self.sim
        return job if job is not None and 0 <= job < s.n_jobs and s.next_op[job] < s.length[job] else None

    # ================================================================== words and pictures
    @property
    def task_description(self) -> str:
        inst = self.instance
        return (f"Job-shop scheduling ({self.problem}), instance {inst.name}: {inst.n_jobs} jobs of 1 to "
                f"{inst.max_ops} operations on {inst.n_machines} machines (a job may visit a machine more than once); "
                "a machine runs one operation at a time and a job's operations run in order. Minimise the makespan. "
                "Call dispatch(job) repeatedly, or submit_plan(sequence) with, for each machine, the job indices in "
                f"processing order. Reference makespan: {self.reference.value}.")


