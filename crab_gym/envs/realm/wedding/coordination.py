"""The P5/P8 coordination metric: what the vehicles (the agents) save by working together.

The no-coordination baseline treats the venue as the depot of the classic Clarke-Wright
savings: every vehicle drives from its place straight to the venue, and every guest and
every errand is a **dedicated out-and-back trip** from the venue,
``sum over vehicles of t(place, venue) + sum over guests and errands of t(venue, x) + t(x, venue)``.
A joint plan saves by giving each guest or errand to a vehicle that passes near it and by
chaining several in one route.

``coordination = max(0, 1 - plan cost / baseline)``, where the plan cost is its driving
minutes (each vehicle from its place through its stops, then to the venue) plus
``unserved_penalty`` per guest or errand it never visits, both priced with the undisrupted
shortest-path minutes, so that in P8 the metric judges how the work was shared and
``adaptation`` judges the delays. It is 0 for an infeasible plan (a constraint broken or
something left undone), so an empty plan scores 0; no plan reaches 1 (a trip costs minutes),
and the shipped P5 references score 0.58 to 0.80.

It replaces ``(solo - cost) / (solo - reference)``, which gave every feasible plan 1 when a
single vehicle could do the optimum alone; ``solo_value`` stays in the reference records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance


@dataclass(frozen=True)
class FleetCoordination:
    """The parts of the P5/P8 coordination score."""

    score: float
    baseline: int
    plan_cost: int


def _stop_places(instance: WeddingInstance) -> dict[str, int]:
    at = instance.index
    places = {f"pickup:{g.guest_id}": at[g.place] for g in instance.guests}
    places.update({f"errand:{e.errand_id}": at[e.shop] for e in instance.errands})
    places[VENUE_STOP] = at[instance.venue]
    return places


def dedicated_trips_cost(instance: WeddingInstance) -> int:
    """The baseline: every vehicle straight to the venue, every guest and errand a dedicated
    out-and-back trip from the venue."""
    t, venue = instance.travel, instance.index[instance.venue]
    places = _stop_places(instance)
    total = sum(int(t[instance.index[v.place], venue]) for v in instance.vehicles)
    return total + sum(int(t[venue, x] + t[x, venue]) for stop, x in places.items() if stop != VENUE_STOP)


def static_plan_cost(instance: WeddingInstance, routes: Mapping[str, Sequence[str]]) -> int:
    """Driving minutes of ``routes`` at undisrupted travel times (vehicles not listed drive
    straight to the venue) + the penalty per guest or errand never visited. Unknown stops
    (which the env rejects) are left out."""
    t, venue = instance.travel, instance.index[instance.venue]
    places = _stop_places(instance)
    visited: set[str] = set()
    travel = 0
    for veh in instance.vehicles:
        here = instance.index[veh.place]
        for stop in routes.get(veh.vehicle_id, ()):
            if stop not in places:
                continue
            travel += int(t[here, places[stop]])
            here = places[stop]
            visited.add(stop)
        travel += int(t[here, venue])
    undone = sum(1 for stop in places if stop != VENUE_STOP and stop not in visited)
    return travel + instance.unserved_penalty * undone


def fleet_coordination(
    instance: WeddingInstance, routes: Mapping[str, Sequence[str]], *, feasible: bool
) -> FleetCoordination:
    """Score a plan ``{vehicle_id: ["pickup:alex", "errand:gift", ...]}``; ``feasible`` is the
    checker's verdict on it."""
    baseline = dedicated_trips_cost(instance)
    cost = static_plan_cost(instance, routes)
    score = max(0.0, 1.0 - cost / baseline) if feasible and baseline > 0 else 0.0
    return FleetCoordination(score, baseline, cost)
