"""The P5/P8 coordination metric: what the vehicles (the agents) gain by working together.

The no-coordination baseline is the **best single-vehicle plan** (``solo``): one vehicle
does every pickup and errand, the others drive straight to the venue (the cheapest such plan
the routing oracle finds, over every choice of the vehicle; the reference record's
``solo_value``, with ``unserved_penalty`` per guest or errand that one vehicle cannot fit in
time). The score is the share of the gain from working together (``solo`` -> ``best``, the
best known plan) that the plan realises::

    coordination = savings_share(cost, feasible, solo, best) = (solo - cost) / (solo - best), clipped to [0, 1]

where the plan's cost is its driving minutes (each vehicle from its place through its stops,
then to the venue) plus ``unserved_penalty`` per guest or errand it never visits, priced
with the undisrupted shortest-path minutes, so that in P8 the metric judges how the work was
shared and ``adaptation`` judges the delays. An infeasible plan scores 0 (so does an empty
one); a plan in which one vehicle does all the work alone scores 0; when working together
gains nothing on the instance (``solo <= best``: one vehicle alone reaches the best known
plan) the metric does not apply and is ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crab_gym.envs.realm.common.coordination import savings_share
from crab_gym.envs.realm.common.references import NOT_APPLICABLE
from crab_gym.envs.realm.wedding.model import VENUE_STOP, WeddingInstance


@dataclass(frozen=True)
class FleetCoordination:
    """The parts of the P5/P8 coordination score (``score`` None: not applicable)."""

    score: float | None
    solo: float | None
    best: float | None
    plan_cost: int
    actors: int


def _stop_places(instance: WeddingInstance) -> dict[str, int]:
    at = instance.index
    places = {f"pickup:{g.guest_id}": at[g.place] for g in instance.guests}
    places.update({f"errand:{e.errand_id}": at[e.shop] for e in instance.errands})
    places[VENUE_STOP] = at[instance.venue]
    return places


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


def actors(instance: WeddingInstance, routes: Mapping[str, Sequence[str]]) -> int:
    """How many vehicles serve at least one guest or errand in ``routes``."""
    ids = {v.vehicle_id for v in instance.vehicles}
    return sum(1 for vid, stops in routes.items() if vid in ids and any(s != VENUE_STOP for s in stops))


def fleet_coordination(
    instance: WeddingInstance, routes: Mapping[str, Sequence[str]], *, feasible: bool,
    solo: float | None, best: float | None,
) -> FleetCoordination:
    """Score a plan ``{vehicle_id: ["pickup:alex", "errand:gift", ...]}``; ``feasible`` is the
    checker's verdict on it, ``solo`` and ``best`` the single-vehicle and best known costs."""
    cost = static_plan_cost(instance, routes)
    n = actors(instance, routes)
    if not feasible:
        score: float | None = 0.0
    elif solo is None or best is None or solo <= best:
        score = NOT_APPLICABLE
    elif n <= 1:
        score = 0.0
    else:
        score = savings_share(cost, True, float(solo), float(best))
    return FleetCoordination(score, solo, best, cost, n)
