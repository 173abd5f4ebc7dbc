"""The P10 oracle: a CP-SAT model of the remaining plan from any state (from day 0 knowing
every disruption, it gives the reference: the optimum with foresight), and the adaptive
oracle that re-solves it whenever a disruption strikes (the adaptation yardstick).

CP-SAT on integers (one worker, a deterministic time limit) proves every shipped instance
optimal in well under a second of deterministic time; ``pywraplp`` with SCIP would need
fractional units rounded back, so CP-SAT is the one used (docs/supply_chain.md compares them).

The model (days ``t0 .. end_day``, the horizon, from the state of a :class:`~.sim.SupplySim`):

* ``x[c, s, t]`` units of component ``c`` ordered from supplier ``s`` on day ``t``, created only
  when they arrive by the component's last arrival day (its hard deadline, else the
  horizon), at most the supplier's capacity that day under the *known* disruptions;
* ``p[k, t]`` units made by stage ``k`` on day ``t``, at most its capacity that day;
* on hand ``I[c, t] = I[c, t-1] + arrivals - bom[c] * p[assembly, t] >= 0``;
  stage stocks ``W[k, t] = W[k, t-1] + p[k, t] - p[k+1, t]`` with ``p[k+1, t] <= W[k, t-1]``
  (a stage uses what the previous one finished on earlier days);
* purchases + production <= budget; packaged <= demand;
* minimise purchases + production + holding of ``I`` and ``W`` at the end of each day +
  lateness (``lateness_penalty * (t - due_day)`` per unit of ``p[packaging, t]`` after the
  due day; a component's ``late_penalty * (t + lead - deadline)`` per unit of ``x[c, s, t]``
  arriving after its soft deadline) + the penalty per GPU not packaged by the horizon.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from itertools import product
from typing import Any

from ortools.sat.python import cp_model

from crab_gym.envs.realm.common.cp_sat import new_solver
from crab_gym.envs.realm.common.oracle_result import OracleResult
from crab_gym.envs.realm.common.solver_budget import time_limit
from crab_gym.envs.realm.supply_chain.model import STAGES, P10Instance, facility_capacity, supplier_capacity
from crab_gym.envs.realm.supply_chain.sim import SupplySim

#: CP-SAT deterministic-time budget by size class (its "seconds" do not depend on machine load).
DETERMINISTIC_LIMITS = {"small": 5.0, "medium": 20.0, "large": 60.0, "late": 20.0}
#: Budget by plan size (order variables) for instances without a size class.
LIMITS_BY_COUNT = ((200, 5.0), (2000, 20.0), (float("inf"), 60.0))
#: A wall-clock cap on top, so that a loaded machine cannot hang a solve for long.
WALL_CAP_S = 120.0
WORKERS = 1
SOLVER = "CP-SAT (integer program, one worker, deterministic time limit)"
#: What plays the adaptive oracle.
ADAPTIVE_SOLVER = SOLVER + ", re-solved from the day each disruption strikes"


@dataclass
class RemainingPlan:
    """One CP-SAT solve's remaining plan from a state, in the model's indices (what the
    oracles carry out day by day with :func:`carry_out_day`; the oracles' results are
    :class:`~crab_gym.envs.realm.common.oracle_result.OracleResult`: :func:`solve_p10`,
    :meth:`AdaptiveRun.result`).

    Attributes:
        status: CP-SAT's status name (``OPTIMAL``, ``FEASIBLE``, ...).
        cost: the whole plan's cost, what is already spent included (None: no plan found).
        bound: CP-SAT's proven lower bound on that cost.
        orders: ``(c, s, quantity, day)`` to place.
        runs: ``(k, day, quantity)`` to make.
        limit: the deterministic-time budget used.
    """

    status: str
    cost: float | None
    bound: float | None
    orders: list[tuple[int, int, int, int]] = field(default_factory=list)
    runs: list[tuple[int, int, int]] = field(default_factory=list)
    limit: float = 0.0


def budget_for(inst: P10Instance) -> float:
    """The deterministic-time budget of ``inst`` (by size class, else by its plan size)."""
    count = len(inst.components) * len(inst.suppliers) * inst.n_days
    return time_limit(inst.size, count, DETERMINISTIC_LIMITS, LIMITS_BY_COUNT)


def solve_from(sim: SupplySim, known: list[Any] | None = None, limit: float | None = None) -> RemainingPlan:
    """The cheapest remaining plan from ``sim``'s state, facing the ``known`` disruptions
    (default: those that have struck, ``sim.fired``)."""
    inst = sim.inst
    known = sim.fired if known is None else known
    limit = budget_for(inst) if limit is None else float(limit)
    K = len(STAGES)
    t0 = sim.day
    days = range(t0, inst.end_day + 1)
    m = cp_model.CpModel()
    top_of: dict[tuple[int, ...], int] = {}  # each variable's upper bound
    x, x_top = _order_vars(m, sim, known, days, top_of)
    p = _run_vars(m, sim, known, days, top_of)
    holding_terms = _component_stocks(m, sim, x, x_top, p, days) + _stage_stocks(m, sim, p, days)
    m.Add(sim.assembled + sum(p[0, t] for t in days) <= inst.demand)
    packaged = sim.delivered + sim.made_today[K - 1] + sum(p[K - 1, t] for t in days)
    m.Add(packaged <= inst.demand)
    spend = (sum(inst.prices[s][c] * v for (c, s, _), v in x.items())
             + sum(inst.facilities[k].cost_per_unit * v for (k, _), v in p.items()))
    m.Add(sim.spent + spend <= inst.budget)
    late = (sum(inst.arrival_lateness(c, t + inst.suppliers[s].lead_time) * v for (c, s, t), v in x.items())
            + sum(inst.packing_lateness(t) * p[K - 1, t] for t in days))
    cost = spend + sum(holding_terms) + late + inst.shortfall_penalty * (inst.demand - packaged)
    # Ties between cheapest plans are broken the same way by every OR-Tools version: the
    # earliest (then lowest-numbered supplier, then stage) plan wins, so that the adaptive
    # reference, whose later re-solves depend on the earlier plan, does not change with it.
    S = len(inst.suppliers)
    weights = [(v, (t - t0) * (S + K) + s + 1, top_of[key]) for key, v in x.items() for _, s, t in [key]]
    weights += [(v, (t - t0) * (S + K) + S + k + 1, top_of[key]) for key, v in p.items() for k, t in [key]]
    tie_top = sum(w * top for _, w, top in weights)
    m.Minimize((tie_top + 1) * cost + sum(w * v for v, w, _ in weights))

    solver = new_solver(WALL_CAP_S, WORKERS, max_deterministic_time=limit, random_seed=0)
    code = solver.Solve(m)
    status = solver.StatusName(code)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return RemainingPlan(status, None, None, limit=limit)
    const = sim.spent + sim.holding + sim.lateness
    orders = [(c, s, int(solver.Value(v)), t) for (c, s, t), v in sorted(x.items(), key=lambda kv: kv[0][2])
              if solver.Value(v) > 0]
    runs = [(k, t, int(solver.Value(v))) for (k, t), v in sorted(p.items(), key=lambda kv: (kv[0][1], kv[0][0]))
            if solver.Value(v) > 0]
    value = round(solver.Value(cost))
    bound = math.ceil(solver.BestObjectiveBound() / (tie_top + 1) - 1e-9)
    return RemainingPlan(status, const + value, const + min(bound, value),
                    orders, runs, limit)


def solve_p10(inst: P10Instance, limit: float | None = None) -> OracleResult:
    """The optimum with foresight of ``inst``'s disruptions (one solve from day 0 knowing them
    all), carried out day by day facing them: ``cost`` the episode's (the solve's value),
    ``plan`` the ``submit_plan`` arguments, ``bound`` CP-SAT's, ``time_limit_s`` the
    deterministic budget; ``detail["shortfall"]``: GPUs not packaged."""
    used = budget_for(inst) if limit is None else float(limit)
    sol = solve_from(SupplySim(inst, []), known=list(inst.disruptions), limit=used)
    sim = SupplySim(inst)
    while not sim.done:
        carry_out_day(sim, sol.orders, sol.runs)
        sim.next_day()
    return OracleResult(sim.cost(), sol.status, plan_arguments(sim), bound=sol.bound, time_limit_s=used,
                        workers=WORKERS, solver=SOLVER, detail={"shortfall": sim.shortfall()})


def _order_vars(
    m: cp_model.CpModel, sim: SupplySim, known: list[Any], days: range, top_of: dict[tuple[int, ...], int]
) -> tuple[dict[tuple[int, int, int], Any], dict[int, int]]:
    """``x[c, s, t]`` for the orders that arrive in time and have capacity left, and the most
    each component can be ordered in all (bounds recorded in ``top_of``)."""
    inst, t0 = sim.inst, sim.day
    x: dict[tuple[int, int, int], Any] = {}
    x_top: dict[int, int] = defaultdict(int)
    for t in days:
        for s, sup in enumerate(inst.suppliers):
            for c in range(len(inst.components)):
                if t + sup.lead_time > inst.last_arrival(c):
                    continue
                ub = supplier_capacity(inst, known, s, c, t) - (sim.ordered_today[s][c] if t == t0 else 0)
                ub = min(ub, inst.need(c))
                if ub > 0:
                    x[c, s, t] = m.NewIntVar(0, ub, f"x_{c}_{s}_{t}")
                    top_of[c, s, t] = ub
                    x_top[c] += ub
    return x, x_top


def _run_vars(
    m: cp_model.CpModel, sim: SupplySim, known: list[Any], days: range, top_of: dict[tuple[int, ...], int]
) -> dict[tuple[int, int], Any]:
    """``p[k, t]``: units stage ``k`` makes on day ``t``, within what it has left that day."""
    inst, t0 = sim.inst, sim.day
    p: dict[tuple[int, int], Any] = {}
    for k in range(len(STAGES)):
        for t in days:
            ub = facility_capacity(inst, known, k, t) - (sim.made_today[k] if t == t0 else 0)
            top_of[k, t] = max(0, min(ub, inst.demand))
            p[k, t] = m.NewIntVar(0, top_of[k, t], f"p_{k}_{t}")
    return p


def _component_stocks(
    m: cp_model.CpModel, sim: SupplySim, x: dict[tuple[int, int, int], Any], x_top: dict[int, int],
    p: dict[tuple[int, int], Any], days: range,
) -> list[Any]:
    """``I[c, t]``: components on hand at the end of each day (never negative); their holding terms."""
    inst = sim.inst
    coming: dict[tuple[int, int], int] = defaultdict(int)
    for t, c, q in sim.in_transit():
        coming[t, c] += q
    holding_terms = []
    for c, comp in enumerate(inst.components):
        top = sim.on_hand[c] + sum(q for (_, cc), q in coming.items() if cc == c) + x_top[c]
        prev: Any = sim.on_hand[c]
        for t in days:
            arrivals = [x[c, s, t - sup.lead_time] for s, sup in enumerate(inst.suppliers)
                        if (c, s, t - sup.lead_time) in x]
            level = m.NewIntVar(0, top, f"I_{c}_{t}")
            m.Add(level == prev + coming[t, c] + sum(arrivals) - comp.bom * p[0, t])
            holding_terms.append(comp.holding * level)
            prev = level
    return holding_terms


def _stage_stocks(m: cp_model.CpModel, sim: SupplySim, p: dict[tuple[int, int], Any], days: range) -> list[Any]:
    """``W[k, t]``: what stage ``k`` finished and the next has not used (it uses only earlier
    days' work); their holding terms."""
    inst, t0 = sim.inst, sim.day
    holding_terms = []
    for k in range(len(STAGES) - 1):
        top = sim.stock[k] + sim.made_today[k] + inst.demand
        prev = sim.stock[k]
        for t in days:
            level = m.NewIntVar(0, top, f"W_{k}_{t}")
            m.Add(p[k + 1, t] <= prev)
            joins = sim.made_today[k] if t == t0 else 0
            m.Add(level == prev + joins + p[k, t] - p[k + 1, t])
            holding_terms.append(inst.wip_holding * level)
            prev = level
    return holding_terms


def carry_out_day(sim: SupplySim, orders: list[tuple[int, int, int, int]], runs: list[tuple[int, int, int]]) -> None:
    """Do the entries dated today in ``sim`` (orders first, then stages in order)."""
    today = sim.day
    for c, s, q, t in orders:
        if t == today:
            sim.order(c, s, q)
    for k, t, q in sorted(runs, key=lambda r: r[0]):
        if t == today:
            sim.produce(k, q)


@dataclass
class AdaptiveRun:
    """The adaptive oracle's episode: the final state and every solve's status and bound."""

    sim: SupplySim
    statuses: list[str]
    bounds: list[float | None]
    limit: float

    @property
    def status(self) -> str:
        """``OPTIMAL`` when no disruption struck (one solve), ``ADAPTIVE_OPTIMAL`` when every
        re-solve was proved optimal, else ``ADAPTIVE_FEASIBLE`` / the failing status."""
        if len(self.statuses) == 1:
            return self.statuses[0]
        bad = [s for s in self.statuses if s not in ("OPTIMAL", "FEASIBLE")]
        if bad:
            return bad[0]
        return "ADAPTIVE_OPTIMAL" if all(s == "OPTIMAL" for s in self.statuses) else "ADAPTIVE_FEASIBLE"

    def result(self) -> OracleResult:
        """The episode as the oracle's result: its cost, what it did (``submit_plan``
        arguments), ``feasible`` when every solve found a plan; ``detail``: ``statuses`` (one
        per solve) and ``shortfall`` (GPUs not packaged)."""
        return OracleResult(
            self.sim.cost(), self.status, plan_arguments(self.sim), time_limit_s=self.limit, workers=WORKERS,
            solver=ADAPTIVE_SOLVER, detail={"statuses": list(self.statuses), "shortfall": self.sim.shortfall()},
            feasible=all(s in ("OPTIMAL", "FEASIBLE") for s in self.statuses),
        )


#: Adaptive runs by (instance, state, budget): an episode's end re-solves from states that
#: repeat (replays, seeded evaluations); CP-SAT is deterministic, so a cached run is the run.
_RUNS: dict[tuple[Any, ...], AdaptiveRun] = {}
_RUNS_KEPT = 256


def adaptive(sim: SupplySim, limit: float | None = None) -> AdaptiveRun:
    """Play the oracle from ``sim``'s state (a copy): solve, follow the plan until a
    disruption strikes, re-solve from that day knowing it, and so on to the due day. The
    oracle never sees a disruption before it strikes."""
    key = (sim.inst.fingerprint(), sim.state_key(), limit)
    if key not in _RUNS:
        if len(_RUNS) >= _RUNS_KEPT:
            _RUNS.pop(next(iter(_RUNS)))
        _RUNS[key] = _adaptive(sim, limit)
    return _RUNS[key]


def _adaptive(sim: SupplySim, limit: float | None) -> AdaptiveRun:
    sim = sim.copy()
    statuses: list[str] = []
    bounds: list[float | None] = []
    used = budget_for(sim.inst) if limit is None else float(limit)
    while not sim.done:
        sol = solve_from(sim, limit=used)
        statuses.append(sol.status)
        bounds.append(sol.bound)
        if sol.cost is None:
            sim.run_to_end()
            break
        while not sim.done:
            carry_out_day(sim, sol.orders, sol.runs)
            if sim.next_day() and not sim.done:
                break  # a disruption struck: re-solve from today
    return AdaptiveRun(sim, statuses, bounds, used)


def plan_arguments(sim: SupplySim) -> dict[str, list[dict[str, Any]]]:
    """What ``sim`` did, as ``submit_plan`` arguments."""
    inst = sim.inst
    return {
        "orders": [{"component": inst.component_names[o.c], "supplier": inst.supplier_ids[o.s],
                    "quantity": o.quantity, "day": o.day} for o in sim.orders],
        "production": [{"facility": STAGES[r.k], "day": r.day, "quantity": r.quantity} for r in sim.runs],
    }


def brute_force_p10(inst: P10Instance) -> int:
    """The optimum facing every disruption of ``inst`` from day 0 (with foresight), by
    exhaustive search over every day's orders and production, memoised on the state. Written
    apart from the CP-SAT model and the simulation, to check both; only for tiny instances
    (a few units, two or three days of decisions)."""
    start = tuple(comp.stock for comp in inst.components)
    return int(_Exhaustive(inst).best(0, start, (), (0, 0), 0, 0))


class _Exhaustive:
    """:func:`brute_force_p10`'s search: the best cost from a day's state, memoised."""

    def __init__(self, inst: P10Instance) -> None:
        self.inst = inst
        self.C, self.K = len(inst.components), len(STAGES)
        self.known = list(inst.disruptions)
        self.boms = [comp.bom for comp in inst.components]
        self.best = cache(self._best)

    def _best(self, t: int, on_hand: tuple[int, ...], coming: tuple[tuple[int, int, int], ...],
              stock: tuple[int, int], delivered: int, spent: int) -> float:
        """The least cost still to come from day ``t``'s state (every order, then every production)."""
        inst = self.inst
        if t > inst.end_day:
            return inst.shortfall_penalty * (inst.demand - delivered)
        arrived = list(on_hand)
        for day, c, q in coming:
            if day == t:
                arrived[c] += q
        later = tuple(e for e in coming if e[0] > t)
        choices = self._order_choices(t)
        result = float("inf")
        for qs in product(*(r for _, _, r in choices)):
            cost = spent + sum(q * inst.prices[s][c] for (s, c, _), q in zip(choices, qs))
            if cost > inst.budget:
                continue
            hand, pipe, tardy = self._place_orders(t, choices, qs, arrived, later)
            result = min(result, self._best_production(t, hand, pipe, tardy, stock, delivered, spent, cost))
        return result

    def _order_choices(self, t: int) -> list[tuple[int, int, range]]:
        """(supplier, component, quantities) for every order that can be placed on day ``t``."""
        inst = self.inst
        choices = []
        for s, sup in enumerate(inst.suppliers):
            for c in range(self.C):
                if t + sup.lead_time <= inst.last_arrival(c):
                    top = min(supplier_capacity(inst, self.known, s, c, t), inst.need(c))
                    choices.append((s, c, range(top + 1)))
        return choices

    def _place_orders(
        self, t: int, choices: list[tuple[int, int, range]], qs: tuple[int, ...], arrived: list[int],
        later: tuple[tuple[int, int, int], ...],
    ) -> tuple[list[int], list[tuple[int, int, int]], int]:
        """Day ``t``'s orders ``qs``: (on hand, in transit, their late-arrival cost)."""
        inst = self.inst
        hand, pipe = list(arrived), list(later)
        tardy = 0
        for (s, c, _), q in zip(choices, qs):
            eta = t + inst.suppliers[s].lead_time
            deadline, per_day = inst.components[c].deadline, inst.components[c].late_penalty
            if per_day is not None and deadline is not None and eta > deadline:
                tardy += q * per_day * (eta - deadline)
            if q and eta == t:
                hand[c] += q
            elif q:
                pipe.append((eta, c, q))
        return hand, pipe, tardy

    def _best_production(
        self, t: int, hand: list[int], pipe: list[tuple[int, int, int]], tardy: int, stock: tuple[int, int],
        delivered: int, spent: int, cost: int,
    ) -> float:
        """The least cost still to come over every production of day ``t`` after its orders (``cost``: spent so far)."""
        inst, C, boms = self.inst, self.C, self.boms
        caps = [facility_capacity(inst, self.known, k, t) for k in range(self.K)]
        top0 = min([caps[0]] + [hand[c] // boms[c] for c in range(C)])
        result = float("inf")
        for p0 in range(top0 + 1):
            for p1 in range(min(caps[1], stock[0]) + 1):
                for p2 in range(min(caps[2], stock[1], inst.demand - delivered) + 1):
                    pay = cost + sum(q * f.cost_per_unit for q, f in zip((p0, p1, p2), inst.facilities))
                    if pay > inst.budget:
                        continue
                    left = tuple(hand[c] - boms[c] * p0 for c in range(C))
                    wip = (stock[0] + p0 - p1, stock[1] + p1 - p2)
                    hold = sum(comp.holding * q for comp, q in zip(inst.components, left)) + inst.wip_holding * sum(wip)
                    hold += tardy + p2 * inst.lateness_penalty * max(0, t - inst.due_day)
                    value = hold + self.best(t + 1, left, tuple(sorted(pipe)), wip, delivered + p2, pay)
                    result = min(result, value + pay - spent)
        return result
