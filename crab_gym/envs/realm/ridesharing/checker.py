"""Independent checker for P3/P4 plans: recompute the schedule and the metrics from a plan.

It shares no code with the env's simulation (:mod:`~crab_gym.envs.realm.ridesharing.sim`) or
the network module: travel times come from networkx shortest paths over the instance's roads,
with disruption effects written out again here. The env's ``info["metrics"]`` must agree with it.

Rules it checks (see :mod:`crab_gym.envs.realm.ridesharing.model`): each vehicle leaves ``start_time``
from its place, drives to each listed stop as soon as it has served the previous one, waits
at a pickup until the window opens; the pickup must be by the window's close, the dropoff by
the latest dropoff; the dropoff follows the pickup in the same vehicle; the load never
exceeds the capacity. Trip times are those of the network at the trip's departure minute.

Declared constraints (for ``constraint_satisfaction``): per request, (1) pickup in its window,
(2) dropoff in time, (3) consistent service (both stops, once, same vehicle, pickup first, or
neither); per vehicle, (4) capacity respected. An unserved request meets (1) and (2).

``coordination`` is the share of the gain from working together that the plan realises,
from the best one-vehicle plan's cost (``solo_cost``) to the reference's
(:mod:`crab_gym.envs.realm.ridesharing.coordination`); 0 if the plan is infeasible, None
without those two costs or when one vehicle alone is as good as the reference.

P3's and P4's ``check`` role (:func:`check`): the checker above on a
plan given as ``submit_plan`` arguments, facing the instance's own disruptions (P4).

Plan: ``{"assignments": {vehicle_id: ["pickup:<id>", "dropoff:<id>", ...]}}`` (what
``Reference.plan`` stores and ``OraclePolicy`` submits); vehicles not listed park. On a P4
instance the plan is judged as the env plays it when the same plan is submitted again at
each pause: every trip at the network's minutes in force when it departs, under the
instance's scheduled disruptions.

Cost: travel minutes plus ``unserved_penalty`` per request left unserved, the unit of the
reference value. P3: ``check(inst, ref.plan).cost == ref.value``. P4: the reference plan is
the best plan known *facing the instance's disruptions* (found with hindsight), and its
check cost is the reference value too (``ref.extra["adaptive_oracle_value"]`` is the
adaptive oracle's own cost, which the reference may beat).

Constraints, named from the checker's violations: ``window:<request>`` (picked up by the
window's close), ``deadline:<request>`` (dropped off by the latest dropoff),
``service:<request>`` (both stops, once each, one vehicle, pickup first -- or neither),
``capacity:<vehicle>``, and ``plan_shape`` (every vehicle and stop known). A violation the
names do not cover is kept under its own text. Optimality and coordination need the
reference (and the best one-vehicle plan) and are left out of ``metrics``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.references import optimality_ratio
from crab_gym.envs.realm.ridesharing.adaptation import adaptation_score
from crab_gym.envs.realm.ridesharing.coordination import ride_coordination
from crab_gym.envs.realm.ridesharing.model import P3Instance


def _route_ends(route: str, names: Sequence[str]) -> tuple[str, str] | None:
    for i, ch in enumerate(route):
        if ch == "-" and route[:i] in names and route[i + 1 :] in names:
            return route[:i], route[i + 1 :]
    return None


class _Travel:
    """Trip minutes at a departure minute, by Dijkstra over the roads in force then."""

    def __init__(self, instance: P3Instance, disruptions: Sequence[Mapping[str, Any]]) -> None:
        self.names = list(instance.locations)
        self.graph = nx.DiGraph()
        self.graph.add_nodes_from(self.names)
        for i, a in enumerate(self.names):
            for j, b in enumerate(self.names):
                w = instance.roads[i][j]
                if i != j and w is not None:
                    self.graph.add_edge(a, b, minutes=int(w))
        self.disruptions = [dict(d) for d in disruptions]

    def _extra(self, a: str, b: str, t: int) -> int:
        extra = 0
        for d in self.disruptions:
            start, dur = d.get("start"), int(d.get("duration", 0))
            if start is None or not (start <= t < start + dur):
                continue
            kind = d["type"]
            if kind == "accident":
                if d["location"] in (a, b):
                    extra += int(d.get("delay", 15))
                continue
            ends = _route_ends(d["route"], self.names)
            if ends is None or {a, b} != set(ends):
                continue
            if kind == "road_closure":
                extra += start + dur - t
            elif kind == "construction":
                extra += int(d.get("delay", 10))
            else:
                extra += int(d["delay"])
        return extra

    def minutes(self, a: str, b: str, t: int) -> int:
        if a == b:
            return 0
        return int(
            nx.shortest_path_length(
                self.graph, a, b, weight=lambda u, v, e: e["minutes"] + self._extra(u, v, t)
            )
        )


@dataclass
class _Tally:
    """What driving the plan finds: violations, broken constraints, stops served, minutes."""

    violations: list[str] = field(default_factory=list)
    broken: dict[str, set[str]] = field(default_factory=dict)
    picked: dict[str, tuple[str, int]] = field(default_factory=dict)
    dropped: dict[str, tuple[str, int]] = field(default_factory=dict)
    over_capacity: set[str] = field(default_factory=set)
    travel: int = 0
    schedule: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass
class _Ride:
    """One vehicle on its way: where, from which minute, its load and passengers."""

    vid: str
    capacity: int
    here: str
    t: int
    load: int = 0
    aboard: set[str] = field(default_factory=set)


def _pick_up(tally: _Tally, ride: _Ride, req: Any, pos: int, arrive: int) -> int:
    """Board passenger ``req`` arriving at ``arrive``; returns the service minute."""
    pid = req.passenger_id
    service = max(arrive, req.pickup_window[0])
    if pid in tally.picked:
        tally.violations.append(f"{pid} picked up twice")
        tally.broken[pid].add("service")
    else:
        tally.picked[pid] = (ride.vid, pos)
    if arrive > req.pickup_window[1]:
        tally.violations.append(f"{pid} picked up late ({arrive} > {req.pickup_window[1]})")
        tally.broken[pid].add("window")
    ride.load += req.passengers
    ride.aboard.add(pid)
    if ride.load > ride.capacity:
        tally.violations.append(f"{ride.vid} carries {ride.load} > capacity {ride.capacity}")
        tally.over_capacity.add(ride.vid)
    return service


def _drop_off(tally: _Tally, ride: _Ride, req: Any, pos: int, arrive: int) -> int:
    """Drop passenger ``req`` arriving at ``arrive``; returns the service minute."""
    pid = req.passenger_id
    if pid in tally.dropped:
        tally.violations.append(f"{pid} dropped off twice")
        tally.broken[pid].add("service")
    else:
        tally.dropped[pid] = (ride.vid, pos)
    if pid not in ride.aboard:
        tally.violations.append(f"{ride.vid} drops {pid} who is not on board")
        tally.broken[pid].add("service")
    else:
        ride.aboard.discard(pid)
        ride.load -= req.passengers
    if arrive > req.latest_dropoff:
        tally.violations.append(f"{pid} dropped off late ({arrive} > {req.latest_dropoff})")
        tally.broken[pid].add("deadline")
    return arrive


def _drive(tally: _Tally, ride: _Ride, stops: Sequence[str], requests: Mapping[str, Any], travel: _Travel) -> None:
    """Drive one vehicle through its stops, in order, recording what it breaks."""
    schedule = tally.schedule[ride.vid] = []
    for pos, stop in enumerate(stops):
        kind, _, pid = str(stop).partition(":")
        if kind not in ("pickup", "dropoff") or pid not in requests:
            tally.violations.append(f"{ride.vid}: unknown stop {stop!r}")
            continue
        req = requests[pid]
        target = req.pickup if kind == "pickup" else req.dropoff
        t = ride.t
        arrive = t + travel.minutes(ride.here, target, t)
        tally.travel += arrive - t
        serve = _pick_up if kind == "pickup" else _drop_off
        service = serve(tally, ride, req, pos, arrive)
        schedule.append({"stop": stop, "depart": t, "arrive": arrive, "service": service})
        ride.here, ride.t = target, service
    for pid in ride.aboard:
        tally.violations.append(f"{pid} is never dropped off")
        tally.broken[pid].add("service")


def _served(tally: _Tally, requests: Mapping[str, Any]) -> int:
    """Requests served consistently (both stops, once, same vehicle, pickup first); a
    request served in part breaks its service constraint."""
    served = 0
    for pid in requests:
        p, d = tally.picked.get(pid), tally.dropped.get(pid)
        if p and d and p[0] == d[0] and p[1] < d[1] and "service" not in tally.broken[pid]:
            served += 1
        elif p or d:
            tally.broken[pid].add("service")
    return served


def _faced(instance: P3Instance, solution: Mapping[str, Any], disruptions: Sequence[Any] | None) -> list[Any]:
    """The disruptions to check against, as plain mappings: given, else the solution's, else
    the instance's."""
    if disruptions is None:
        disruptions = solution.get("disruptions")
    if disruptions is None:
        disruptions = getattr(instance, "disruptions", [])
    return [d if isinstance(d, Mapping) else d.model_dump() for d in disruptions]


def check_plan(
    instance: P3Instance,
    solution: Mapping[str, Any],
    *,
    reference_cost: float | None = None,
    disruptions: Sequence[Any] | None = None,
    adaptation_reference: float | None = None,
    solo_cost: float | None = None,
    adaptation_trivial: float | None = None,
) -> dict[str, Any]:
    """Recompute a plan's schedule, violations, cost and REALM metrics.

    Args:
        instance: the P3/P4 instance.
        solution: ``{"assignments": {vehicle_id: ["pickup:p1", "dropoff:p1", ...]}}``; for P4 it
            may carry ``"disruptions"`` (the ones applied, with their effective start minutes),
            which then replace the instance's schedule.
        reference_cost: the oracle's cost, for ``optimality`` (None: not computed).
        disruptions: disruptions to use (overrides both of the above).
        adaptation_reference: the adaptation yardstick's cost, for ``adaptation`` (P4; None: left out).
        adaptation_trivial: the trivial continuation's cost from the yardstick's start (the
            env's ``adaptation_trivial_cost``): adaptation is the share of the avoidable cost
            avoided (:func:`~crab_gym.envs.realm.ridesharing.adaptation.adaptation_score`;
            None without it, unless the plan is infeasible: 0).
        solo_cost: the best one-vehicle plan's cost, for ``coordination`` (with
            ``reference_cost``; None: coordination is None, not applicable).

    Returns a dict with ``feasible``, ``violations`` (list of text), ``cost``, ``travel``,
    ``served``, ``schedule`` and ``metrics``.
    """
    travel = _Travel(instance, _faced(instance, solution, disruptions))
    requests = {r.passenger_id: r for r in instance.requests}
    vehicles = {v.vehicle_id: v for v in instance.vehicles}
    tally = _Tally(broken={pid: set() for pid in requests})
    for vid, stops in solution.get("assignments", {}).items():
        if vid not in vehicles:
            tally.violations.append(f"unknown vehicle {vid!r}")
            continue
        veh = vehicles[vid]
        _drive(tally, _Ride(vid, veh.capacity, veh.location, instance.start_time), stops, requests, travel)
    served = _served(tally, requests)
    n_req, n_veh = len(requests), len(vehicles)
    declared = 3 * n_req + n_veh
    failed = sum(len(b) for b in tally.broken.values()) + len(tally.over_capacity)
    feasible = not tally.violations
    cost = tally.travel + instance.unserved_penalty * (n_req - served)
    metrics: dict[str, Any] = {
        "planning_quality": served / n_req if n_req else 1.0,
        "optimality": optimality_ratio(reference_cost, cost, feasible) if reference_cost is not None else None,
        "constraint_satisfaction": 1.0 - failed / declared if declared else 1.0,
        "coordination": ride_coordination(cost, feasible, solo_cost, reference_cost),
    }
    if adaptation_reference is not None:
        metrics["adaptation"] = adaptation_score(adaptation_reference, adaptation_trivial, cost, feasible)
    return {
        "feasible": feasible,
        "violations": tally.violations,
        "cost": cost,
        "travel": tally.travel,
        "served": served,
        "schedule": tally.schedule,
        "metrics": metrics,
    }


#: The checker's violation texts -> the constraint each breaks (``{}``: the id it names).
_VIOLATED = (
    (re.compile(r"^unknown vehicle "), "plan_shape"),
    (re.compile(r"^.+: unknown stop "), "plan_shape"),
    (re.compile(r"^(.+) picked up late \("), "window:{}"),
    (re.compile(r"^(.+) dropped off late \("), "deadline:{}"),
    (re.compile(r"^(.+) (?:picked up|dropped off) twice$"), "service:{}"),
    (re.compile(r"^.+ drops (.+) who is not on board$"), "service:{}"),
    (re.compile(r"^(.+) is never dropped off$"), "service:{}"),
    (re.compile(r"^(.+) carries \d+ > capacity \d+$"), "capacity:{}"),
)


@dataclass
class RideCheck(PlanCheck):
    """The verdict, plus the checker's travel minutes, requests served, schedule per vehicle
    and violations in words."""

    travel: int = 0
    served: int = 0
    schedule: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    violations_text: list[str] = field(default_factory=list)


def _constraint(violation: str) -> str:
    """The declared constraint a violation breaks (its own text when none matches)."""
    for pattern, name in _VIOLATED:
        found = pattern.match(violation)
        if found:
            return name.format(*found.groups())
    return violation


def _constraints(instance: P3Instance, violations: list[str]) -> dict[str, bool]:
    names = ["plan_shape"]
    for r in instance.requests:
        names += [f"window:{r.passenger_id}", f"deadline:{r.passenger_id}", f"service:{r.passenger_id}"]
    names += [f"capacity:{v.vehicle_id}" for v in instance.vehicles]
    held = dict.fromkeys(names, True)
    for text in violations:
        held[_constraint(text)] = False
    return held


def check(instance: P3Instance, plan: Mapping[str, Any]) -> RideCheck:
    """The verdict of :func:`check_plan` on ``plan`` facing ``instance``'s disruptions."""
    assignments = {str(vid): [str(s) for s in stops] for vid, stops in dict(plan.get("assignments") or {}).items()}
    report = check_plan(instance, {"assignments": assignments})
    metrics = {k: report["metrics"][k] for k in ("planning_quality", "constraint_satisfaction")}
    return RideCheck(
        feasible=bool(report["feasible"]),
        cost=float(report["cost"]),
        constraints=_constraints(instance, report["violations"]),
        metrics=metrics,
        travel=int(report["travel"]),
        served=int(report["served"]),
        schedule=report["schedule"],
        violations_text=list(report["violations"]),
    )
