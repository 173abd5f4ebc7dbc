"""The P3/P4 coordination metric: what the vehicles (the agents) save by working together.

The no-coordination baseline is a fleet of independent taxis: every request is a
**dedicated out-and-back trip** from the vehicle base that makes it cheapest,
``min over vehicles v of t(base_v, pickup) + t(pickup, dropoff) + t(dropoff, base_v)``,
summed over all requests (the classic Clarke-Wright baseline, with each vehicle's start as
its depot). A joint plan saves by chaining requests, pooling passengers and giving each
request to a vehicle near it.

``coordination = max(0, 1 - plan cost / baseline)``, where the plan cost is its travel minutes
plus ``unserved_penalty`` per request it does not serve (the objective), both priced with the
undisrupted shortest-path minutes, so that in P4 the metric judges how the work was shared
and ``adaptation`` judges the delays. It is 0 for an infeasible plan (a constraint broken) and
for a plan that serves nobody; a plan can never reach 1 (a trip costs minutes), and the
shipped references score 0.26 to 0.62.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crab_gym.envs.realm.ridesharing.model import P3Instance


@dataclass(frozen=True)
class RideCoordination:
    """The parts of the P3/P4 coordination score."""

    score: float
    baseline: int
    plan_cost: int
    served: int


def dedicated_trips_cost(instance: P3Instance) -> int:
    """The baseline: every request a dedicated out-and-back trip from its cheapest vehicle base."""
    t, at = instance.travel, instance.index
    bases = [at[v.location] for v in instance.vehicles]
    total = 0
    for r in instance.requests:
        p, d = at[r.pickup], at[r.dropoff]
        total += min(int(t[b, p] + t[p, d] + t[d, b]) for b in bases)
    return total


def static_plan_cost(instance: P3Instance, assignments: Mapping[str, Sequence[str]]) -> tuple[int, int]:
    """(travel minutes + penalty per unserved request, requests served), with the undisrupted
    travel times. A request counts as served when the plan lists both of its stops. Unknown
    vehicles and stops (violations the checker reports) are left out."""
    t, at = instance.travel, instance.index
    requests = {r.passenger_id: r for r in instance.requests}
    home = {v.vehicle_id: at[v.location] for v in instance.vehicles}
    travel = 0
    listed: dict[str, set[str]] = {}
    for vid, stops in assignments.items():
        if vid not in home:
            continue
        here = home[vid]
        for stop in stops:
            kind, _, pid = str(stop).partition(":")
            req = requests.get(pid)
            if req is None or kind not in ("pickup", "dropoff"):
                continue
            there = at[req.pickup if kind == "pickup" else req.dropoff]
            travel += int(t[here, there])
            here = there
            listed.setdefault(pid, set()).add(kind)
    served = sum(1 for kinds in listed.values() if kinds == {"pickup", "dropoff"})
    return travel + instance.unserved_penalty * (len(requests) - served), served


def ride_coordination(
    instance: P3Instance, assignments: Mapping[str, Sequence[str]], *, feasible: bool
) -> RideCoordination:
    """Score a plan ``{vehicle_id: ["pickup:p1", "dropoff:p1", ...]}`` whose ids and stops are
    known; ``feasible`` is the checker's (or the env's) verdict on it."""
    baseline = dedicated_trips_cost(instance)
    cost, served = static_plan_cost(instance, assignments)
    score = 0.0
    if feasible and served and baseline > 0:
        score = max(0.0, 1.0 - cost / baseline)
    return RideCoordination(score, baseline, cost, served)
