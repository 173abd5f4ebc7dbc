"""The P7 oracle: CP-SAT on trip counts per (vehicle, region, time slot), and an exhaustive
search for tiny instances (the tests' independent yardstick).

Formulation (every time of an instance lies on its grid of ``slot_minutes``):

* ``x[v, r, t]`` in {0, 1}: vehicle ``v`` leaves for region ``r`` at slot ``t`` -- only where
  no known weather block covers the departure and the load arrives by the horizon;
* ``q[v, r, t, k]`` integer: units of resource ``k`` on that trip, ``sum_k q <= capacity * x``;
* one trip at a time: per vehicle and slot, at most one trip is under way (a round trip
  occupies ``2 * one_way`` minutes);
* stock: each shortage at minute ``s`` destroys ``floor(f * R)`` of the ``R`` units left at
  the base after the departures before ``s`` (two linear inequalities with ``f`` as the exact
  ratio of :func:`~.model.shortage_ratio`); everything shipped fits in the stock net of the losses.
  The stock is bounded by what the need can use (:func:`useful_stock`), so that the model's
  numbers, and the solve, are those of the need however large the stock is;
* credit: per region and resource, units credited on time ``<= `` units arriving by the
  deadline, late credit ``<=`` units arriving after it, both together ``<=`` the need;
* objective: ``K * shortfall + transport minutes`` (see :mod:`.model`).

The solver starts from a :class:`ReliefState` (the start of an instance, or an episode's state
at a disruption, for the adaptive re-solve) and knows the disruptions it is given. Semi-active
timings are on the grid, so the time-indexed model is exact for the model's plans.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from crab_gym.envs.realm.common import solver_budget
from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.disaster_relief.checker import check_plan
from crab_gym.envs.realm.disaster_relief.model import (
    RESOURCES,
    P7Instance,
    ResourceShortage,
    WeatherEvent,
    shortage_ratio,
)

SOLVER = "ortools CP-SAT (time-indexed trips, one worker)"
#: Deterministic search budget (CP-SAT's deterministic seconds) per size class.
DETERMINISTIC_LIMITS: dict[str, float] = {"small": 10.0, "medium": 4.0, "large": 4.0}
#: ``(most regions x vehicles, deterministic seconds)`` for instances without a size class.
LIMITS_BY_COUNT = ((6, 10.0), (20, 4.0), (math.inf, 4.0))
#: Wall-clock guard: a solve never runs longer than this many seconds times its deterministic
#: budget (generous, so that the deterministic budget, not the machine's load, stops a solve).
WALL_GUARD = 40.0


def default_limit(inst: P7Instance) -> float:
    return solver_budget.time_limit(inst.size, len(inst.regions) * len(inst.vehicles), DETERMINISTIC_LIMITS,
                                    LIMITS_BY_COUNT)


@dataclass
class ReliefState:
    """Where a plan continues from: the clock, when each vehicle is free, the stock at the
    base, what regions have received or will receive (trips already under way), and the trips
    already made (kept in the plan the oracle returns)."""

    now: int
    vehicle_free: list[int]
    stock: dict[str, int]
    trips: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def initial(cls, inst: P7Instance) -> ReliefState:
        return cls(inst.start, [inst.start] * len(inst.vehicles), {k: inst.stock.get(k, 0) for k in RESOURCES})


def relief_result(cost: float | None, status: str, bound: float | None, trips: Sequence[dict[str, Any]],
                  limit: float, *, solver: str = SOLVER, deterministic_time: float = 0.0) -> OracleResult:
    """What the oracle found: ``cost`` is the whole plan's (kept trips included), ``plan`` the
    trips as ``submit_plan`` arguments, ``time_limit_s`` CP-SAT's deterministic budget and
    ``detail["deterministic_time"]`` what the search used (below the budget: it stopped early)."""
    plan = {"trips": [dict(t, load=dict(t["load"])) for t in trips]}
    return OracleResult(cost, status, plan, bound=bound, time_limit_s=limit, workers=1, solver=solver,
                        detail={"deterministic_time": deterministic_time})


def _received(inst: P7Instance, trips: Sequence[dict[str, Any]]) -> tuple[list[dict[str, int]], list[dict[str, int]], int]:
    """Units of the kept trips arriving by each deadline / after it, and their minutes."""
    on = [dict.fromkeys(RESOURCES, 0) for _ in inst.regions]
    late = [dict.fromkeys(RESOURCES, 0) for _ in inst.regions]
    minutes = 0
    for t in trips:
        v, r = inst.vehicle_ids.index(t["vehicle"]), inst.region_ids.index(t["region"])
        leg = inst.one_way[v][r]
        minutes += 2 * leg
        box = on if t["depart"] + leg <= inst.regions[r].deadline else late
        for k, q in t["load"].items():
            box[r][k] += q
    return on, late, minutes


def solve_p7(
    inst: P7Instance,
    state: ReliefState | None = None,
    known: Sequence[Any] | None = None,
    deterministic_limit: float | None = None,
    *,
    vehicles: Sequence[int] | None = None,
    hint: Mapping[str, Any] | None = None,
) -> OracleResult:
    """The best plan CP-SAT finds from ``state`` (default: the start) knowing the disruptions
    ``known`` (default: the instance's own, all of them: the full-information optimum).

    ``vehicles`` restricts the new trips to those vehicle indices (the solo baseline of
    :mod:`.coordination`: one vehicle alone, priced with the instance's own ``K``); ``hint``
    is a plan (``submit_plan`` arguments) CP-SAT starts its search from (the build seeds it
    with the local search's polish of its last plan)."""
    state = state or ReliefState.initial(inst)
    known = list(inst.disruptions if known is None else known)
    limit = float(deterministic_limit if deterministic_limit is not None else default_limit(inst))
    K = inst.minute_weight
    on0, late0, fixed_minutes = _received(inst, state.trips)
    blocks = [d for d in known if isinstance(d, WeatherEvent)]
    m = cp_model.CpModel()
    resid = {
        (r, k): max(0, need - on0[r][k] - late0[r][k]) for r, reg in enumerate(inst.regions) for k, need in reg.needs.items()
    }
    made = _Trips(m, inst, state)
    for v in range(len(inst.vehicles)):
        if vehicles is not None and v not in vehicles:
            continue
        made.add_vehicle(v, blocks, resid)
    x, q, caps, minutes_terms = made.x, made.q, made.caps, made.minutes_terms
    points = _credit_points(m, inst, q, on0, late0)
    _add_stock(m, inst, state, known, q, resid)
    m.Minimize(K * sum(points) + sum(minutes_terms))
    if hint is not None:
        _add_hint(m, inst, x, q, caps, hint)
    solver = new_solver(limit * WALL_GUARD, 1, random_seed=0, max_deterministic_time=limit)
    code = solver.Solve(m)
    status = solver.StatusName(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return relief_result(None, status, None, state.trips, limit,
                             deterministic_time=solver.ResponseProto().deterministic_time)
    trips = list(state.trips) + _new_trips(solver, inst, x, q)
    # the kept trips' credit is inside c_on / c_late; only their minutes are outside the model
    value = float(round(solver.ObjectiveValue())) + fixed_minutes
    bound = float(math.ceil(solver.BestObjectiveBound() - 1e-6) + fixed_minutes)
    return relief_result(value, status, bound, trips, limit, deterministic_time=solver.ResponseProto().deterministic_time)


class _Trips:
    """The trip variables of :func:`solve_p7`: ``x[v, r, t]`` (a trip leaves), ``q[v, r, t, k]``
    (its load), the loads' upper bounds and the transport minutes."""

    def __init__(self, m: cp_model.CpModel, inst: P7Instance, state: ReliefState) -> None:
        self.m, self.inst, self.state = m, inst, state
        self.x: dict[tuple[int, int, int], Any] = {}
        self.q: dict[tuple[int, int, int, str], Any] = {}
        self.caps: dict[tuple[int, int, int, str], int] = {}
        self.minutes_terms: list[Any] = []
        self.t_now = -(-(state.now - inst.start) // inst.slot_minutes)

    def add_vehicle(self, v: int, blocks: list[WeatherEvent], resid: dict[tuple[int, str], int]) -> None:
        """Vehicle ``v``'s possible trips (from when it is free, not into a weather block, a
        needed resource in stock), one under way at a time."""
        m, inst, state, x, q, slot = self.m, self.inst, self.state, self.x, self.q, self.inst.slot_minutes
        veh = inst.vehicles[v]
        first = max(self.t_now, -(-(state.vehicle_free[v] - inst.start) // slot))
        for r, reg in enumerate(inst.regions):
            d = inst.one_way[v][r] // slot
            wanted = [k for k in reg.needs if resid[r, k] > 0 and state.stock.get(k, 0) > 0]
            if not wanted:
                continue
            for t in range(first, inst.n_slots - d + 1):
                minute = inst.start + t * slot
                if any(b.region == reg.id and b.start <= minute < b.end for b in blocks):
                    continue
                x[v, r, t] = lit = m.NewBoolVar(f"x{v}_{r}_{t}")
                loads = []
                for k in wanted:
                    self.caps[v, r, t, k] = cap = min(veh.capacity, resid[r, k], state.stock[k])
                    q[v, r, t, k] = var = m.NewIntVar(0, cap, f"q{v}_{r}_{t}_{k}")
                    loads.append(var)
                m.Add(sum(loads) <= veh.capacity * lit)
                m.Add(sum(loads) >= 1).OnlyEnforceIf(lit)  # an empty trip only drives
                self.minutes_terms.append(2 * inst.one_way[v][r] * lit)
        for s in range(first, inst.n_slots):
            busy = [lit for (vv, r, t), lit in x.items() if vv == v and t <= s < t + 2 * inst.one_way[v][r] // slot]
            if len(busy) > 1:
                m.AddAtMostOne(busy)


def _credit_points(
    m: cp_model.CpModel, inst: P7Instance, q: dict[tuple[int, int, int, str], Any],
    on0: list[dict[str, int]], late0: list[dict[str, int]],
) -> list[Any]:
    """Per region and resource, the units credited on time and late (at most what arrives, in
    all at most the need); each region's weighted points missed."""
    slot = inst.slot_minutes
    points = []
    for r, reg in enumerate(inst.regions):
        for k, need in reg.needs.items():
            arrive_on = [var for (v, rr, t, kk), var in q.items()
                         if rr == r and kk == k and inst.start + t * slot + inst.one_way[v][r] <= reg.deadline]
            arrive_late = [var for (v, rr, t, kk), var in q.items()
                           if rr == r and kk == k and inst.start + t * slot + inst.one_way[v][r] > reg.deadline]
            c_on, c_late = m.NewIntVar(0, need, f"on{r}_{k}"), m.NewIntVar(0, need, f"late{r}_{k}")
            m.Add(c_on <= on0[r][k] + sum(arrive_on))
            m.Add(c_late <= late0[r][k] + sum(arrive_late))
            m.Add(c_on + c_late <= need)
            points.append(reg.weight * (2 * need - 2 * c_on - c_late))
    return points


def useful_stock(have: int, need_left: int, fractions: Sequence[float]) -> int:
    """A stock that serves the need as well as ``have`` does: ``min(have, C)``, ``C`` a stock
    with ``g(C) >= need_left``, ``g`` the shortages of ``fractions`` in order (each leaves
    ``R - floor(f R)`` of ``R``; those from a shortage of everything left on do not count).

    Why: loads beyond a region's need earn nothing, so some optimal plan ships at most
    ``need_left`` in all (trim the excess; a trip left empty is dropped, saving its minutes).
    ``g(R - x) >= g(R) - x`` (shipping before a shortage saves at least what it ships), so
    with ``C`` at the base, whatever such a plan has shipped by a time, at least
    ``need_left`` minus that is left until a shortage of everything, which leaves nothing
    of ``have`` either. Such a plan fits ``C`` exactly when it fits ``have``."""
    fractions = list(fractions)
    total = next((i for i, f in enumerate(fractions) if shortage_ratio(f)[0] >= shortage_ratio(f)[1]), len(fractions))
    want = need_left
    for f in reversed(fractions[:total]):
        p, q = shortage_ratio(f)
        want = -(-want * q // (q - p))  # g(want') >= want' (q - p) / q >= want
    return min(have, want)


def _add_stock(m: cp_model.CpModel, inst: P7Instance, state: ReliefState, known: Sequence[Any], q: dict,
               resid: Mapping[tuple[int, str], int]) -> None:
    """Stock: what leaves the base never exceeds what is there, shortages included (each
    destroys ``floor(left * p / q)`` of what is left when it strikes, modelled exactly), the
    stock bounded by :func:`useful_stock`."""
    slot = inst.slot_minutes
    for k in RESOURCES:
        shipped = [(t, var) for (v, r, t, kk), var in q.items() if kk == k]
        if not shipped:
            continue
        lost_total: list[Any] = []
        shortages = sorted((d for d in known if isinstance(d, ResourceShortage) and d.resource == k
                            and d.start > state.now), key=lambda d: d.start)
        need_left = sum(n for (_, kk), n in resid.items() if kk == k)
        have = useful_stock(state.stock.get(k, 0), need_left, [d.fraction for d in shortages])
        for n, d in enumerate(shortages):
            before = [var for t, var in shipped if inst.start + t * slot < d.start]
            left = m.NewIntVar(0, have, f"left{k}_{n}")
            m.Add(left == have - sum(before) - sum(lost_total))
            lost = m.NewIntVar(0, have, f"lost{k}_{n}")
            p, q_ = shortage_ratio(d.fraction)  # lost = floor(left * p / q_)
            m.Add(q_ * lost <= p * left)
            m.Add(p * left <= q_ * lost + q_ - 1)
            lost_total.append(lost)
        m.Add(sum(var for _, var in shipped) + sum(lost_total) <= have)


def _new_trips(solver: cp_model.CpSolver, inst: P7Instance, x: dict, q: dict) -> list[dict[str, Any]]:
    """The trips the solution makes, by departure (then vehicle, region)."""
    trips = []
    for (v, r, t), lit in sorted(x.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        if solver.Value(lit):
            load = {k: int(solver.Value(q[v, r, t, k])) for k in RESOURCES if (v, r, t, k) in q}
            trips.append({"vehicle": inst.vehicle_ids[v], "region": inst.region_ids[r],
                          "load": {k: n for k, n in load.items() if n > 0}, "depart": inst.start + t * inst.slot_minutes})
    return trips


def _add_hint(m: cp_model.CpModel, inst: P7Instance, x: dict, q: dict, caps: dict, hint: Mapping[str, Any]) -> None:
    """Hint every trip variable with ``hint``'s plan (trips off the model's grid are left out;
    loads are clipped to their variable's upper bound, ``caps``)."""
    slot, planned = inst.slot_minutes, {}
    for trip in hint.get("trips", []):
        v, r = inst.vehicle_ids.index(trip["vehicle"]), inst.region_ids.index(trip["region"])
        if (trip["depart"] - inst.start) % slot == 0:
            planned[v, r, (trip["depart"] - inst.start) // slot] = dict(trip["load"])
    for key, lit in x.items():
        m.AddHint(lit, int(key in planned))  # an int: OR-Tools 9.8 refuses a bool here
    for (v, r, t, k), var in q.items():
        m.AddHint(var, min(caps[v, r, t, k], planned.get((v, r, t), {}).get(k, 0)))


# ---------------------------------------------------------------------------------------
# Exhaustive search (tests only; independent of CP-SAT: every grid plan, scored by the checker)
# ---------------------------------------------------------------------------------------
def _loads(inst: P7Instance, r: int, capacity: int) -> list[dict[str, int]]:
    """Every non-empty load of region ``r``'s needed resources within ``capacity`` and need."""
    needs = inst.regions[r].needs
    keys = list(needs)
    out = []
    for amounts in itertools.product(*(range(min(capacity, needs[k]) + 1) for k in keys)):
        if 0 < sum(amounts) <= capacity:
            out.append({k: a for k, a in zip(keys, amounts) if a})
    return out


def brute_force_p7(inst: P7Instance, schedule: Sequence[Any] | None = None, max_plans: int = 2_000_000) -> tuple[float, dict]:
    """The exact optimum over every plan on the grid: at each slot each free vehicle idles or
    leaves for a region with some load. Use only on tiny instances."""
    slot, t_total = inst.slot_minutes, inst.n_slots
    options = [
        [(r, load) for r in range(len(inst.regions)) for load in _loads(inst, r, veh.capacity)]
        for veh in inst.vehicles
    ]
    best: list[Any] = [math.inf, {"trips": []}]
    count = [0]

    def walk(t: int, free: tuple[int, ...], trips: list[dict[str, Any]]) -> None:
        if t >= t_total:
            count[0] += 1
            if count[0] > max_plans:
                raise ValueError(f"more than {max_plans} plans: the instance is too large for brute force")
            plan = {"trips": list(trips)}
            res = check_plan(inst, plan, schedule)
            if res.feasible and res.cost < best[0]:
                best[:] = [res.cost, plan]
            return
        ready = [v for v in range(len(inst.vehicles)) if free[v] <= t]
        for choice in itertools.product(*([None, *options[v]] for v in ready)):
            new_free, new_trips = list(free), list(trips)
            for v, pick in zip(ready, choice):
                if pick is None:
                    continue
                r, load = pick
                new_trips.append({"vehicle": inst.vehicle_ids[v], "region": inst.region_ids[r], "load": load,
                                  "depart": inst.start + t * slot})
                new_free[v] = t + 2 * inst.one_way[v][r] // slot
            walk(t + 1, tuple(new_free), new_trips)

    walk(0, (0,) * len(inst.vehicles), [])
    return float(best[0]), best[1]
