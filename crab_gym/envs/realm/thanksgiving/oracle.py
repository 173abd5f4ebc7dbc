"""OR-Tools CP-SAT oracle for P6/P9: car trips and the cooking schedule in one model.

* **Trips**: per car, ``len(travellers)`` optional trip slots, used in order. A boolean
  ``b[f, c, s]`` puts traveller ``f`` on slot ``s`` of car ``c`` (exactly one each); a used
  slot leaves at ``d``, is at the airport ``d + out`` (``out = 0`` for a car's first trip from
  the airport), leaves it at ``l >= landing(f)`` for each passenger and is home at
  ``l + travel``; its interval ``[d, l + travel)`` is optional, ``NoOverlap`` per car; at most
  ``seats`` passengers. A traveller's home minute is its slot's.
* **Cooking**: per task a start and a fixed duration; an optional interval per (task, skilled
  cook), exactly one present, ``NoOverlap`` per cook (with the tasks already cooked), the
  start after the cook's home minute; ``Cumulative`` (capacity ``kitchen_capacity``) over all
  tasks, ``NoOverlap`` over the oven tasks; precedences ``start(b) >= end(a)``.
* **Objective**: ``SCALE x (dinner - start_time) + SCALE x LATE_WEIGHT x late + driving``
  with ``served`` the latest of the last end (``ready``) and every home minute, ``late >=
  served - deadline``, ``late >= 0``, ``late = 0`` unless a boolean ``is_late``, ``dinner >=
  ready`` and ``dinner >= served`` if ``is_late``: ``SCALE x`` the model's cost
  (:func:`~.model.dinner_cost`).
  Every time lies below a horizon (:func:`horizon`) that no optimal plan needs to pass.

:func:`solve` plans from the start; :func:`solve_from` plans the rest of an afternoon from a
:class:`~.sim.Kitchen` state (what is under way stays, with the delays announced so far), which
is what the P9 re-solve and the adaptation metric use. One worker and a deterministic time
limit (``max_deterministic_time``) make every result independent of the machine's load.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ortools.sat.python import cp_model

from crab_gym.envs.realm.common import solver_budget
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.thanksgiving.model import LATE_WEIGHT, SCALE, ThanksgivingInstance
from crab_gym.envs.realm.thanksgiving.sim import Kitchen

#: Deterministic seconds of search per size class (CP-SAT's ``max_deterministic_time``).
DETERMINISTIC_LIMITS: dict[str, float] = {"small": 5.0, "medium": 20.0, "large": 60.0}
#: ``(most tasks, deterministic seconds)`` for an instance without a size class.
LIMITS_BY_TASKS = ((8, 5.0), (14, 20.0), (math.inf, 60.0))
#: A wall-clock guard on top of the deterministic limit (it should never be what stops a solve).
WALL_GUARD_S = 300.0
WORKERS = 1
SOLVER = "ortools CP-SAT (interval model, 1 worker, deterministic limit)"


def default_limit(inst: ThanksgivingInstance) -> float:
    return solver_budget.time_limit(inst.size, len(inst.tasks), DETERMINISTIC_LIMITS, LIMITS_BY_TASKS)


def _result(pickups: list[dict[str, Any]], cooking: list[dict[str, Any]], cost: float | None, status: str,
            bound: float | None, limit: float, elapsed: float) -> OracleResult:
    """What CP-SAT found: the plan as ``submit_plan`` arguments, its cost (the model's cost
    units), status (OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN), bound and settings; the time
    limit is CP-SAT's deterministic one."""
    plan = {"pickups": [dict(p) for p in pickups], "cooking_schedule": [dict(c) for c in cooking]}
    return OracleResult(cost, status, plan, bound=bound, time_limit_s=limit, workers=WORKERS, solver=SOLVER,
                        solve_seconds=elapsed)


def solve(inst: ThanksgivingInstance, limit: float | None = None, delays: Any = ()) -> OracleResult:
    """The best plan from ``start_time`` with flights landing as ``delays`` say (default:
    on schedule)."""
    return solve_from(Kitchen.start_of(inst), limit, known=list(delays))


def solve_from(state: Kitchen, limit: float | None = None, known: list[Any] | None = None) -> OracleResult:
    """The best rest of the afternoon from ``state``: its trips and started tasks stay as
    they are; new ones start at ``state.now`` or later; flights land as the delays announced
    in ``state`` (or ``known``) say."""
    inst = state.inst
    limit = float(default_limit(inst) if limit is None else limit)
    delays = list(state.announced) if known is None else list(known)
    tic = time.perf_counter()
    built = _Model(inst, state, {m: inst.landing(m, delays) for m in inst.travellers})
    solver = new_solver(WALL_GUARD_S, WORKERS, max_deterministic_time=limit, random_seed=0)
    code = solver.Solve(built.m)
    status = solver.StatusName(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _result([], [], None, status, None, limit, time.perf_counter() - tic)
    pickups, cooking = built.read(solver)
    scaled = round(solver.ObjectiveValue()) + built.const_scaled
    bound = (math.ceil(solver.BestObjectiveBound() - 1e-6) + built.const_scaled) / SCALE
    return _result(pickups, cooking, scaled / SCALE, status, bound, limit, time.perf_counter() - tic)


def horizon(state: Kitchen, landing: dict[str, int]) -> int:
    """A minute no optimal rest of the afternoon from ``state`` needs to pass: from the latest
    of now, the deadline, every landing and everything under way, one car fetching each
    traveller left in turn (two legs each) and the kitchen cooking every task left one after
    another is a plan; an optimal plan costs no more, and cost grows with the minute dinner
    is served, so it is served by then (its driving, at 0.01 per minute, is worth less than
    the two spare legs added)."""
    inst, T = state.inst, state.inst.travel_minutes
    fetched = {x for t in state.trips for x in t.members}
    todo = [f for f in inst.travellers if f not in fetched]
    busy = [state.known_times(t)[1] for t in state.trips] + [c.end for c in state.cooked.values()]
    begin = max([state.now, inst.deadline, *busy] + [landing[f] for f in todo])
    left = sum(t.duration for t in inst.tasks if t.task_id not in state.cooked)
    return begin + 2 * T * (len(todo) + 1) + left


class _Model:
    """The CP-SAT model of the rest of an afternoon (see the module docstring)."""

    def __init__(self, inst: ThanksgivingInstance, state: Kitchen, landing: dict[str, int]) -> None:
        self.m = cp_model.CpModel()
        self.inst, self.state = inst, state
        H = horizon(state, landing)
        self.slots: dict[tuple[str, int], tuple[Any, Any]] = {}  # (car, s) -> (depart var, used var)
        self.onboard: dict[tuple[str, str, int], Any] = {}
        self.choice: dict[tuple[str, str], Any] = {}
        self.const_scaled = state.driving - SCALE * inst.start_time  # driving already done or under way
        home, driving = self._add_trips(landing, H)
        ends = self._add_cooking(home, H)
        self._minimise_cost(ends, list(home.values()), sum(driving), H + inst.travel_minutes)

    def _add_trips(self, landing: dict[str, int], H: int) -> tuple[dict[str, Any], list[Any]]:
        """The trips of the travellers not fetched yet: (every member's home minute, a constant
        or a variable; the driving terms)."""
        m, inst, state = self.m, self.inst, self.state
        fetched = {x for t in state.trips for x in t.members}
        todo = [f for f in inst.travellers if f not in fetched]
        home: dict[str, Any] = {x: inst.start_time for x in inst.member_ids if x not in inst.travellers}
        for t in state.trips:  # as far as the family knows now (no unannounced delay)
            for x in t.members:
                home[x] = state.known_times(t)[1]
        driving: list[Any] = []
        for f in todo:
            home[f] = m.NewIntVar(state.now, max(state.now, H), f"home_{f}")
        for car in inst.car_ids:
            self._add_car_slots(car, todo, home, landing, H, driving)
        for f in todo:
            m.AddExactlyOne(self.onboard[f, c, s] for c in inst.car_ids for s in range(len(todo)))
        return home, driving

    def _add_car_slots(
        self, car: str, todo: list[str], home: dict[str, Any], landing: dict[str, int], H: int, driving: list[Any]
    ) -> None:
        """Car ``car``'s optional trip slots, used in order, ``NoOverlap`` (see the module docstring)."""
        m, inst, state, T = self.m, self.inst, self.state, self.inst.travel_minutes
        free, place = max(state.now, state.known_free_at(car)), state.car_place(car)
        seats = inst.cars[inst.car_index[car]].seats
        intervals, prev = [], None
        for s in range(len(todo)):
            out = 0 if s == 0 and place == "airport" else T
            used = m.NewBoolVar(f"u_{car}_{s}")
            d = m.NewIntVar(free, max(free, H), f"d_{car}_{s}")
            lv = m.NewIntVar(free, max(free, H), f"l_{car}_{s}")
            back = m.NewIntVar(free, max(free, H) + T, f"h_{car}_{s}")
            m.Add(lv >= d + out)
            m.Add(back == lv + T)
            m.Add(back <= H).OnlyEnforceIf(used)
            span = m.NewIntVar(0, max(free, H) + T - free, f"span_{car}_{s}")
            m.Add(span == back - d)
            intervals.append(m.NewOptionalIntervalVar(d, span, back, used, f"trip_{car}_{s}"))
            on = []
            for f in todo:
                b = self.onboard[f, car, s] = m.NewBoolVar(f"b_{f}_{car}_{s}")
                m.Add(lv >= landing[f]).OnlyEnforceIf(b)
                m.AddImplication(b, used)
                on.append(b)
            m.Add(sum(on) <= seats)
            m.Add(sum(on) >= 1).OnlyEnforceIf(used)
            if prev is not None:
                m.AddImplication(used, prev[1])
                m.Add(d >= prev[2]).OnlyEnforceIf(used)
            prev = (d, used, back)
            self.slots[car, s] = (d, used)
            driving.append((out + T) * used)
            for f in todo:
                m.Add(home[f] == back).OnlyEnforceIf(self.onboard[f, car, s])
        m.AddNoOverlap(intervals)

    def _add_cooking(self, home: dict[str, Any], H: int) -> list[Any]:
        """The tasks (cooked ones fixed), their cooks, the kitchen, the oven and the
        precedences; returns every task's end (a constant or a variable)."""
        m, inst, state, now = self.m, self.inst, self.state, self.state.now
        per_cook: dict[str, list[Any]] = {x: [] for x in inst.member_ids}
        all_iv, oven_iv, ends, start_of, end_of = [], [], [], {}, {}
        for t in inst.tasks:
            done = state.cooked.get(t.task_id)
            if done is not None:
                iv = m.NewIntervalVar(done.start, t.duration, done.end, f"fixed_{t.task_id}")
                per_cook[done.cook].append(iv)
                start_of[t.task_id], end_of[t.task_id] = done.start, done.end
                ends.append(done.end)
            else:
                st = m.NewIntVar(now, max(now, H - t.duration), f"s_{t.task_id}")
                en = m.NewIntVar(now + t.duration, max(now, H - t.duration) + t.duration, f"e_{t.task_id}")
                iv = m.NewIntervalVar(st, t.duration, en, f"task_{t.task_id}")
                opts = []
                for cook in inst.skilled(t.task_id):
                    p = self.choice[t.task_id, cook] = m.NewBoolVar(f"p_{t.task_id}_{cook}")
                    per_cook[cook].append(m.NewOptionalIntervalVar(st, t.duration, en, p, f"o_{t.task_id}_{cook}"))
                    m.Add(st >= home[cook]).OnlyEnforceIf(p)
                    opts.append(p)
                m.AddExactlyOne(opts)
                start_of[t.task_id], end_of[t.task_id] = st, en
                ends.append(en)
            all_iv.append(iv)
            if t.oven:
                oven_iv.append(iv)
        for ivs in per_cook.values():
            if len(ivs) > 1:
                m.AddNoOverlap(ivs)
        m.AddCumulative(all_iv, [1] * len(all_iv), inst.kitchen_capacity)
        if len(oven_iv) > 1:
            m.AddNoOverlap(oven_iv)
        for a, b in inst.dependencies:
            m.Add(start_of[b] >= end_of[a])
        self.start_of = start_of
        return ends

    def _minimise_cost(self, ends: list[Any], homes: list[Any], driving: Any, top: int) -> None:
        """``SCALE x`` :func:`~.model.dinner_cost`: ``ready`` (the last end), ``served`` (also
        every home), ``late`` and ``dinner`` (``ready`` on time, ``served`` when late)."""
        m, inst = self.m, self.inst
        top = max([top] + [e for e in ends if isinstance(e, int)])
        ready = self.ready = m.NewIntVar(inst.start_time, top, "ready")
        m.AddMaxEquality(ready, ends)
        served = m.NewIntVar(inst.start_time, top, "served")
        m.AddMaxEquality(served, [ready, *homes])  # the last task done, everyone home
        late = self.late = m.NewIntVar(0, max(0, top - inst.deadline), "late")  # minutes after the deadline
        m.Add(late >= served - inst.deadline)
        is_late = m.NewBoolVar("is_late")
        m.Add(late == 0).OnlyEnforceIf(is_late.Not())
        dinner = self.dinner = m.NewIntVar(inst.start_time, top, "dinner")
        m.Add(dinner >= ready)  # on time: the last task's end
        m.Add(dinner >= served).OnlyEnforceIf(is_late)  # late: when dinner is served
        m.Minimize(SCALE * dinner + SCALE * LATE_WEIGHT * late + driving)

    def read(self, solver: cp_model.CpSolver) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The solved plan, the state's own trips and tasks included."""
        inst, state = self.inst, self.state
        pickups = [{"car": t.car, "member": x, "depart": t.depart} for t in state.trips for x in t.members]
        for (f, car, s), b in self.onboard.items():
            if solver.Value(b):
                pickups.append({"car": car, "member": f, "depart": int(solver.Value(self.slots[car, s][0]))})
        cooking = []
        for t in inst.tasks:
            done = state.cooked.get(t.task_id)
            if done is not None:
                cooking.append({"task": t.task_id, "cook": done.cook, "start": done.start})
                continue
            cook = next(c for c in inst.skilled(t.task_id) if solver.Value(self.choice[t.task_id, c]))
            cooking.append({"task": t.task_id, "cook": cook, "start": int(solver.Value(self.start_of[t.task_id]))})
        pickups.sort(key=lambda p: (p["depart"], inst.car_index[p["car"]], inst.member_index[p["member"]]))
        cooking.sort(key=lambda c: (c["start"], inst.task_index[c["task"]]))
        return pickups, cooking
