"""Realm-P6-v0: Thanksgiving dinner (REALM-Bench P6), as the Gymnasium env
:class:`ThanksgivingEnv`; its docstring is the env's reference (model, spaces, reward, episode
end, arguments). Realm-P9-v0 (flight delays) extends it in :mod:`.env_delays`.

This module does not use ``from __future__ import annotations``: the action signatures are
built inside a function with ``Literal`` types that pydantic must resolve.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import networkx as nx
import numpy as np
from gymnasium import spaces
from pydantic import ConfigDict, Field, create_model

from crab_gym.core.action import Action
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.envs.realm.common.env import DAY, RealmEnv, checked_init, clipped, goal_graph, hhmm
from crab_gym.envs.realm.common.instance_source import InstanceSource, SizedGenerator, files_kind
from crab_gym.envs.realm.common.keywords import realm_keywords
from crab_gym.envs.realm.thanksgiving.checker import ThanksgivingCheck, check, check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.coordination import solo_cost
from crab_gym.envs.realm.thanksgiving.formats import FILES, load_p6
from crab_gym.envs.realm.thanksgiving.generator import generate_p6
from crab_gym.envs.realm.thanksgiving.model import FlightDelay, ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.references import p6_reference
from crab_gym.envs.realm.thanksgiving.render import VIEWER
from crab_gym.envs.realm.thanksgiving.scoring import coordination, optimality, optimality_baseline
from crab_gym.envs.realm.thanksgiving.sim import Kitchen, plan_entries

DEFAULT_INSTANCE = "p6_small_00"
#: The counts of a ``generator`` dict (ids stay the same for the same counts).
GENERATOR_COUNTS = {"n_members": 4, "n_tasks": 5, "n_cars": 2}

#: The ``instance`` and ``generator`` arguments of Realm-P6-v0.
SOURCE = InstanceSource(files_kind(FILES["P6"]), load_p6, SizedGenerator(generate_p6, GENERATOR_COUNTS, "p6"), DEFAULT_INSTANCE)


def _make_actions(inst: ThanksgivingInstance, env_name: str) -> list[Action]:
    CarId = Literal[tuple(inst.car_ids)]  # type: ignore[valid-type]
    MemberId = Literal[tuple(inst.member_ids)]  # type: ignore[valid-type]
    TaskId = Literal[tuple(inst.task_ids)]  # type: ignore[valid-type]
    strict = ConfigDict(extra="forbid")
    Pickup = create_model(
        "Pickup", __config__=strict,
        car=(CarId, Field(description="car id")),
        member=(MemberId, Field(description="the traveller it fetches")),
        depart=(int, Field(ge=0, le=DAY, description="minute the car leaves (from midnight)")),
    )
    Cooking = create_model(
        "Cooking", __config__=strict,
        task=(TaskId, Field(description="task id")),
        cook=(MemberId, Field(description="the member who cooks it")),
        start=(int, Field(ge=0, le=DAY, description="start minute (from midnight)")),
    )
    n_members, n_tasks = len(inst.members), len(inst.tasks)

    def send_car(car: CarId, member: MemberId, env: Any) -> None:  # type: ignore[valid-type]
        """Send a car to the airport to fetch a traveller: an idle car leaves now; a car still
        at (or on its way to) the airport takes them along if it has a free seat. The car
        waits at the airport until every passenger has landed, then drives home.

        Args:
            car: id of the car.
            member: id of the family member to fetch.
        """
        env._send(car, member)

    def start_task(task: TaskId, cook: MemberId, env: Any) -> None:  # type: ignore[valid-type]
        """A family member who is home, idle and has the skill starts a cooking task now
        (its predecessors done, a free place in the kitchen, the oven free for an oven task).

        Args:
            task: id of the cooking task.
            cook: id of the family member who cooks it.
        """
        env._start(task, cook)

    def wait(env: Any) -> None:
        """Let time pass until the next event: a task ends, a car comes home, a delay is announced."""
        env._wait()

    def submit_plan(
        pickups: Annotated[list[Pickup], Field(max_length=n_members)],  # type: ignore[valid-type]
        cooking_schedule: Annotated[list[Cooking], Field(max_length=n_tasks)],  # type: ignore[valid-type]
        env: Any,
    ) -> None:
        """Finish with a whole plan in REALM's shape: the pickups (pickups with the same car
        and departure share the trip) and each task's cook and start. Trips and tasks already
        under way must be kept as they are (or left out); everything else starts now or later.
        The plan is carried out as written and then scored.

        Args:
            pickups: list of {"car", "member", "depart"}.
            cooking_schedule: list of {"task", "cook", "start"}.
        """
        env._run_plan()

    return [Action.from_function(f, env_name=env_name) for f in (send_car, start_task, wait, submit_plan)]


def _task_done(task: str) -> Evaluator:
    return evaluator(lambda env: env.kitchen.task_done(task), name=f"cooked_{task}", description=f"{task} is cooked")


def _home(member: str) -> Evaluator:
    return evaluator(lambda env: env.kitchen.is_home(member), name=f"home_{member}", description=f"{member} is home")


@evaluator(name="dinner_on_time")
def _dinner_on_time(env: Any) -> bool:
    """Every task is cooked and every traveller is home, all by the deadline, no rule broken."""
    if not env.kitchen.complete:  # the checker's verdict is asked only then: before, the answer is no
        return False
    verdict = env._verdict()
    return verdict.feasible and verdict.late == 0


class ThanksgivingEnv(RealmEnv):
    """Cook Thanksgiving dinner as early as possible while the cars fetch the family members
    who fly in (REALM-Bench P6).

    ## Description

    A family cooks dinner for the deadline (18:00; soft: every minute late costs 10 more). Some members are home from the start;
    others land at the airport and must be fetched by car before they can cook. The model
    (``docs/thanksgiving.md``; :mod:`crab_gym.envs.realm.thanksgiving.model`); times are minutes
    from midnight:

    | part | model |
    |---|---|
    | decision | which car fetches whom and when it leaves; each task's cook and start |
    | constraints | a cook works only once home, on one task at a time, with the skill; precedences; at most `kitchen_capacity` tasks at once; one oven task at a time; a car does one trip at a time with at most `seats` passengers; a pickup leaves the airport no earlier than the flight lands |
    | objective | minimise `(ready - start_time) + 10 x late + 0.01 x driving minutes` (`ready`: the last task's end; `late`: minutes after the deadline until dinner is ready and everyone home) |

    A car leaving home reaches the airport `travel_minutes` later (a car that starts at the
    airport is there), waits for its passengers' flights, and is home `travel_minutes` after
    leaving. Time jumps from event to event (a task ends, a car is home): actions happen now,
    `wait` moves to the next event.

    ## Action Space

    A `OneOf` over one `Dict` of arguments per action; `env.step` also takes a tool call
    `{"name": ..., "arguments": {...}}`. `C` cars, `M` members, `N` tasks.

    | action | arguments | effect |
    |---|---|---|
    | `send_car` | `car`: `Discrete(C)`, `member`: `Discrete(M)` | an idle car leaves now to fetch the traveller; a car still at (or heading to) the airport takes them along if a seat is free |
    | `start_task` | `task`: `Discrete(N)`, `cook`: `Discrete(M)` | the cook starts the task now |
    | `wait` | none | time moves to the next event |
    | `submit_plan` | `pickups`: list of `{car, member, depart}`, `cooking_schedule`: list of `{task, cook, start}` | the whole plan (REALM's shape), carried out as written, then scored; ends the episode |

    `action_masks()` (also `obs["action_mask"]`: `C x M` sends, `N x M` starts, then `wait`)
    allows exactly the moves that are legal now. An invalid action (masked, malformed, outside
    the action space, a plan that changes what is under way or starts in the past) changes
    nothing, earns `-invalid_action_penalty` and says why in `info["error"]`. A submitted plan
    may break rules: it is scored, and infeasible.

    ## Observation Space

    A `Dict` (times are minutes from midnight, clipped to [-1, 2880]; -1: not known or none):

    | key | shape | meaning |
    |---|---|---|
    | `clock`, `deadline` | (1,) | now; the dinner deadline |
    | `task_duration` | (N,) | minutes |
    | `task_oven` | (N,) | 1: uses the oven |
    | `task_status` | (N,) int | 0 to do, 1 cooking, 2 done |
    | `task_end` | (N,) | when it ends (-1: not started) |
    | `precedence` | (N, N) | 1 at [a, b]: b starts after a ends |
    | `skills` | (M, N) | 1: the member can cook the task |
    | `member_landing` | (M,) | when their flight lands, as known now (-1: home from the start) |
    | `member_home_at` | (M,) | when they are (expected) home (-1: not fetched yet) |
    | `member_busy_until` | (M,) | end of their last task |
    | `car_free_at` | (C,) | when the car is back home |
    | `car_at_airport` | (C,) | 1: idle at the airport (a car that starts there) |
    | `kitchen_free` | (1,) int | places left in the kitchen now |
    | `action_mask` | (n_flat,) | the moves legal now |

    ## Rewards

    A valid step earns `progress_weight` x the rise of the sub-goal completeness (each task
    cooked, each traveller home, then `dinner_on_time`: everything by the deadline, no rule
    broken). The last step adds `optimality_weight` x the optimality: `(baseline - cost) /
    (baseline - reference)` clipped to [0, 1], 0 for an afternoon that breaks a rule, where
    `baseline` is dinner at the deadline (`deadline - start_time`), or the one-at-a-time
    afternoon when even the reference is late (:mod:`.scoring`, `docs/thanksgiving.md`). With the
    default weights a return lies in [0, 1].

    ## Starting State

    `start_time`, nobody cooking, every car at its start place. `reset(options={"instance":
    ...})` switches to another instance with the same ids; with a `generator`, every reset
    draws a fresh instance seeded by `reset(seed=...)`.

    ## Episode End

    Terminates when every task is cooked and every traveller is home, when a plan is
    submitted, or when nothing is legal any more; never truncated. `info` always holds
    `clock`, `events` (what happened during the step, in words) and `dinner_ready` besides
    the common keys. At the end, `info["metrics"]` holds `planning_quality` (share of tasks
    and travellers served within the rules), `optimality`, `constraint_satisfaction` (share of
    the declared constraints kept, see :mod:`.checker`), `coordination` (the share of the
    gain of working together realised: `(base - cost) / (base - reference)` clipped to
    [0, 1], 0 if a rule is broken, `base` the optimality baseline capped at `solo_cost`, the
    cheapest afternoon done one thing at a time: one car fetching the travellers one per
    trip, one task at a time in the kitchen; None when that loses nothing; see
    :mod:`.coordination`), `solo_cost`, `baseline_cost`, `feasible`, `cost`, `late_minutes`,
    `ready`, `driving_minutes`, `reference`, `reference_status` and `violations`;
    `info["solution"]` holds `{"pickups", "cooking_schedule", "dinner_ready", "cost"}`.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | `instance` | `"p6_small_00"` | a shipped name (`crab_gym.datasets.list_instances("P6")`), a JSON file (crab_gym's format or an upstream REALM-Bench P6 file), a mapping, or a `ThanksgivingInstance` (its delays are ignored) |
    | `generator` | `None` | `{"n_members": 4, "n_tasks": 5, "n_cars": 2, "size": "small"}`: a fresh instance per reset; overrides `instance`; its reference is solved after the episode (see `reference_solve`) and cached; or your own callable `generator(rng) -> instance` (as in Jumanji), whose draws must fit the env's spaces |
    | `reference` | `None` | a known reference cost instead of the shipped, cached or solved one |
    | `reference_solve` | `"deferred"` | `"deferred"`: an instance nobody shipped (generated, your file, a schedule changed by an injected disruption) is not solved inside `step()`; `finish_metrics()` solves it after the episode (the evaluation runner calls it; until then the metrics say `optimality_pending` and the last reward's optimality term is 0: `deferred_reward()` gives that term after the episode, and the runner adds it to the return); `"inline"`: solved inside the last `step()` |
    | `render_mode` | `None` | `"ansi"` or `"rgb_array"` (a Gantt chart of cooks, cars and the oven) |
    | `invalid_action_penalty`, `progress_weight`, `optimality_weight` | `0.0`, `0.5`, `0.5` | the reward weights |

    `env.unwrapped.reference` is the instance's `Reference`; its `plan` is `submit_plan`'s
    arguments.

    ## Version History

    * v0: initial version.
    """

    instance_source: ClassVar[Any] = SOURCE
    #: The step's event lines and the checker's cached verdict: per-step scratch, not state.
    transient_attributes = (*RealmEnv.transient_attributes, "_events", "_check", "_mask")
    #: Each task's mask positions, worked out once per instance (see CrabEnv).
    derived_attributes = (*RealmEnv.derived_attributes, "_mask_index_of")
    reference_lookup = staticmethod(p6_reference)
    checker = staticmethod(check)
    viewer = VIEWER
    env_name = "realm-p6"
    #: Each car and each cook is an agent (``crab_gym.parallel_env``); when all pass, the clock moves on.
    agent_arguments = ("car", "cook")

    @checked_init
    @realm_keywords
    def __init__(
        self, instance: str | Path | dict | ThanksgivingInstance = DEFAULT_INSTANCE, *,
        generator: dict | Callable[..., Any] | None = None, **options: Any,
    ) -> None:
        self._generator, inst = self.instance_source.start(instance, generator)
        super().__init__(_make_actions(inst, self.env_name), **options)
        C, M, N = len(inst.cars), len(inst.members), len(inst.tasks)
        day = float(DAY)
        self.observation_space = spaces.Dict(
            {
                "clock": spaces.Box(0.0, day, (1,), np.float32),
                "deadline": spaces.Box(0.0, day, (1,), np.float32),
                "task_duration": spaces.Box(0.0, day, (N,), np.float32),
                "task_oven": spaces.MultiBinary(N),
                "task_status": spaces.Box(0, 2, (N,), np.int64),
                "task_end": spaces.Box(-1.0, day, (N,), np.float32),
                "precedence": spaces.MultiBinary((N, N)),
                "skills": spaces.MultiBinary((M, N)),
                "member_landing": spaces.Box(-1.0, day, (M,), np.float32),
                "member_home_at": spaces.Box(-1.0, day, (M,), np.float32),
                "member_busy_until": spaces.Box(0.0, day, (M,), np.float32),
                "car_free_at": spaces.Box(0.0, day, (C,), np.float32),
                "car_at_airport": spaces.MultiBinary(C),
                "kitchen_free": spaces.Box(0, N, (1,), np.int64),
                "action_mask": spaces.MultiBinary(self.codec.n_flat),
            }
        )
        self._use_instance(inst)

    # ================================================================== RealmEnv hooks
    def _delays(self, inst: ThanksgivingInstance) -> list[FlightDelay]:
        """The delays an episode faces: none in P6."""
        return []

    def _check_fits(self, inst: ThanksgivingInstance) -> None:
        cur = self.instance
        if (inst.car_ids, inst.member_ids, inst.task_ids) != (cur.car_ids, cur.member_ids, cur.task_ids):
            raise ValueError(f"instance {inst.name} has other car/member/task ids than {cur.name}; make a new env")

    def _use_instance(self, inst: ThanksgivingInstance) -> None:
        self.instance = inst
        N, M = len(inst.tasks), len(inst.members)
        prec = np.zeros((N, N), dtype=np.int8)
        for a, b in inst.dependencies:
            prec[inst.task_index[a], inst.task_index[b]] = 1
        skills = np.zeros((M, N), dtype=np.int8)
        for i, m in enumerate(inst.members):
            for t in m.skills:
                skills[i, inst.task_index[t]] = 1
        self._obs_static = {
            "deadline": np.array([min(inst.deadline, DAY)], dtype=np.float32),
            "task_duration": np.clip([t.duration for t in inst.tasks], 0, DAY).astype(np.float32),
            "task_oven": np.array([t.oven for t in inst.tasks], dtype=np.int8),
            "precedence": prec,
            "skills": skills,
        }
        self._goals = [_task_done(t) for t in inst.task_ids] + [_home(m) for m in inst.travellers]
        # the ids, listed once (the instance's properties build new lists; every step reads them)
        self._ids = (inst.task_ids, inst.member_ids, inst.car_ids)
        self._restart()

    def _restart(self) -> None:
        self.kitchen = Kitchen.start_of(self.instance, self._delays(self.instance))
        self._submitted = False
        self._paused = False  # P9: a submitted plan waits at a delay announcement
        self._pending_plan: list[dict[str, Any]] = []
        self._events: list[str] = []
        self._check: tuple[tuple[int, ...], ThanksgivingCheck] | None = None
        self._mask: tuple[tuple[Any, ...], np.ndarray] | None = None

    # ================================================================== scoring
    def _verdict(self) -> ThanksgivingCheck:
        """The independent checker's verdict on what happened so far (kept per state)."""
        k = self.kitchen
        key = k.version()
        if self._check is None or self._check[0] != key:
            landings = landings_of(self.instance, k.true_delays)
            self._check = (key, check_plan(self.instance, k.plan(), landings))
        return self._check[1]

    def _agent_cost(self) -> float | None:
        cost = self._verdict().cost
        return cost if np.isfinite(cost) else None

    def _plan_feasible(self) -> bool:
        return self._verdict().feasible

    def _solo(self) -> float:
        """The one-at-a-time afternoon's cost: the reference's proven ``solo_bound``, else (a
        reference value given to the env) the heuristic solo afternoon's (no solver)."""
        solo = self.reference.extra.get("solo_bound")
        if solo is not None:
            return float(solo)
        return solo_cost(self.instance, landings_of(self.instance, self.kitchen.true_delays))

    def _optimality(self) -> float:
        """The share of the avoidable cost saved (:mod:`.scoring`), not ``reference / cost``."""
        return optimality(self.instance, self.reference.measure, self._agent_cost(), self._plan_feasible(), self._solo())

    # ================================================================== CrabEnv hooks
    def _build_graph(self) -> nx.DiGraph:
        return self._instance_graph(lambda: goal_graph(_dinner_on_time, self._goals))

    def _get_obs(self) -> dict[str, Any]:
        k, inst = self.kitchen, self.instance
        task_ids, members, cars = self._ids
        obs = {key: value.copy() for key, value in self._obs_static.items()}
        obs["clock"] = np.array([min(k.now, DAY)], dtype=np.float32)
        cooked, now = k.cooked, k.now
        tasks = [cooked.get(t) for t in task_ids]  # None: not started
        obs["task_status"] = np.array(  # k.task_done: ended by now
            [0 if c is None else 2 if c.end <= now else 1 for c in tasks], dtype=np.int64
        )
        landings = k.known_landings()
        T, M = len(task_ids), len(members)
        every = clipped([  # one array for the three tables of times (each a view of it; -1: none)
            *[-1 if c is None else c.end for c in tasks],
            *[landings.get(m, -1) for m in members],  # k.known_landing of the travellers
            *[-1 if at is None else at for at in k.expected_homes(members)],
        ], -1, DAY)
        obs["task_end"], obs["member_landing"], obs["member_home_at"] = every[:T], every[T:T + M], every[T + M:]
        free_at, at_airport = k.car_views(cars)
        busy = clipped([*k.busy_untils(members), *free_at], 0, DAY)
        obs["member_busy_until"], obs["car_free_at"] = busy[:M], busy[M:]
        obs["car_at_airport"] = np.array(at_airport, dtype=np.int8)
        obs["kitchen_free"] = np.array([max(0, inst.kitchen_capacity - len(k.running()))], dtype=np.int64)
        obs["action_mask"] = self._current_mask().astype(np.int8)
        return obs

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        k = self.kitchen
        if name == "send_car":
            return k.why_not_send(args["car"], args["member"])
        if name == "start_task":
            return k.why_not_start(args["task"], args["cook"])
        if name == "wait":
            return None if k.can_wait() else "nothing is left to wait for"
        plan = {
            "pickups": [p.model_dump() for p in args["pickups"]],
            "cooking_schedule": [c.model_dump() for c in args["cooking_schedule"]],
        }
        reason, entries = plan_entries(k, plan)
        if reason is None:
            self._pending = entries
        return reason

    def _is_terminated(self) -> bool:
        k = self.kitchen
        return self._submitted or k.complete or not self._current_mask().any()

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        v, ref, inst = self._verdict(), self.reference, self.instance
        cost = v.cost if np.isfinite(v.cost) else None
        solo = self._solo()
        metrics = {
            **v.metrics,
            "optimality": self._optimality(),
            "coordination": coordination(inst, ref.measure, cost, v.feasible, solo),
            "solo_cost": solo,
            "baseline_cost": optimality_baseline(inst, ref.measure, solo),
            "feasible": v.feasible,
            "cost": cost,
            "late_minutes": v.late,
            "ready": None if v.ready is None else hhmm(v.ready),
            "driving_minutes": v.driving,
            "reference": ref.value,
            "reference_status": ref.status,
            "violations": v.violations,
        }
        return metrics, self._solution()

    def _solution(self) -> dict[str, Any]:
        """The pickups and the cooking schedule, with the dinner's time and cost (no reference)."""
        v, k = self._verdict(), self.kitchen
        return {
            "pickups": k.pickups(),
            "cooking_schedule": k.cooking_schedule(),
            "dinner_ready": None if v.ready is None else hhmm(v.ready),
            "cost": v.cost if np.isfinite(v.cost) else None,
        }

    def _action_mask(self) -> np.ndarray:
        key = (*self.kitchen.version(), self._submitted)
        if self._mask is None or self._mask[0] != key:
            self._mask = (key, self._legal_moves())
        return self._mask[1].copy()

    def _legal_moves(self) -> np.ndarray:
        k, inst = self.kitchen, self.instance
        mask = np.zeros(self.codec.n_flat, dtype=bool)
        if self._submitted:
            return mask
        sends, starts = self._mask_index()
        mask[sends] = [ok for row in k.sendable(self._ids[2], inst.travellers) for ok in row]  # k.can_send
        mask[starts] = k.startable()  # k.can_start
        mask[self.codec.flat_offsets["wait"]] = k.can_wait()
        return mask

    def _mask_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Where each ``(car, traveller)`` send and each ``(task, skilled cook)`` start sits in
        the mask, in the orders of :meth:`Kitchen.sendable` and :meth:`Kitchen.startable`
        (worked out once per instance)."""
        inst = self.instance
        known = getattr(self, "_mask_index_of", None)
        if known is None or known[0] is not inst:
            base, M, at = self.codec.flat_offsets, len(inst.members), inst.member_index
            sends = [base["send_car"] + c * M + at[m] for c in range(len(inst.cars)) for m in inst.travellers]
            starts = [base["start_task"] + t * M + at[cook] for t, (_, cooks, _, _) in enumerate(inst.task_rows)
                      for cook in cooks]
            known = self._mask_index_of = (inst, np.array(sends, dtype=np.intp), np.array(starts, dtype=np.intp))
        return known[1], known[2]

    def _extra_info(self) -> dict[str, Any]:
        ready = self.kitchen.ready
        return {
            "clock": hhmm(self.kitchen.now),
            "events": list(self._events),
            "dinner_ready": None if ready is None else hhmm(ready),
        }

    def _begin_step(self) -> None:
        super()._begin_step()
        self._events = []

    # ================================================================== action entries
    def _acted(self) -> None:
        """A valid action was taken: a paused plan is no longer waiting."""
        self._paused, self._pending_plan = False, []

    def _send(self, car: str, member: str) -> None:
        self._acted()
        trip = self.kitchen.send(car, member)
        self._events.append(f"{hhmm(self.kitchen.now)} {car} goes for {member} (left {hhmm(trip.depart)})")

    def _start(self, task: str, cook: str) -> None:
        self._acted()
        done = self.kitchen.start(task, cook)
        self._events.append(f"{hhmm(done.start)} {cook} starts {task} (until {hhmm(done.end)})")

    def _wait(self) -> None:
        self._acted()
        self._events += self.kitchen.wait()

    def _run_plan(self) -> None:
        entries, self._pending = self._pending, None
        if entries is None:
            raise RuntimeError("submit_plan runs through env.step(), which validates the plan first")
        self._acted()
        remaining, log = self.kitchen.run_plan(entries)
        self._events += log
        self._after_plan(remaining)

    def _after_plan(self, remaining: list[Any]) -> None:
        """A plan was carried out (P6: to the end, so the episode is over)."""
        self._submitted = True

    def submit_plan(self, plan: dict) -> tuple:
        """Convenience: ``env.step`` with a ``submit_plan`` tool call for a plan in REALM's shape."""
        return self.step({"name": "submit_plan", "arguments": {k: plan.get(k, []) for k in ("pickups", "cooking_schedule")}})

