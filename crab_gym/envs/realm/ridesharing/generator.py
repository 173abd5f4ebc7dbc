"""Seeded generators of P3 and P4 (ride-sharing, without and with disruptions).

Each instance is drawn around a hidden plan that serves every request on time, so every
generated instance can be fully served; ``generate_p3_with_plan`` / ``generate_p4_with_plan``
return that plan as the certificate. The same ``(size, seed)`` always gives the same instance
(the shipped ones are ``generate_p3(size, seed=k)`` for k = 1, 2, ..., see
:mod:`crab_gym.envs.realm.ridesharing.build`).

Counts: each size class draws its number of places, vehicles and requests from a range
(:data:`SIZE_TARGETS`); ``n_locations``, ``n_vehicles`` and ``n_requests`` fix any of them
instead (what an env's ``generator`` option does, so that every drawn instance has the
same shape). A count left as None is drawn exactly as before, so the shipped instances
regenerate unchanged.

* a city: places on a 20 km x 14 km map, complete symmetric roads (2 minutes per km + 2);
* vehicles and requests: each vehicle drives a hidden route, one passenger at a time; each
  window is drawn around the hidden pickup minute and each latest dropoff after the hidden
  dropoff minute;
* P4 only: its disruptions, **aimed at the rides** (:func:`aim_disruptions`): each strikes
  a request's pickup place or its ride road from before its pickup window opens until after
  it closes (start on 15-minute marks, 30 to 150 minutes long), so that every plan serving
  that request meets it and the plans made without the disruptions cost more under them;
  then windows and deadlines are widened just enough for the hidden plan to stay on time
  through the disruptions (:func:`fit_through`).
"""

from __future__ import annotations

import math

import numpy as np

from crab_gym.envs.realm.ridesharing.disruptions import (
    DISRUPTION_TYPES,
    Accident,
    Construction,
    Disruption,
    RoadClosure,
    TrafficDelay,
)
from crab_gym.envs.realm.ridesharing.model import P3Instance, P4Instance, RideRequest, Size, Vehicle
from crab_gym.envs.realm.ridesharing.network import RoadNetwork, active_at

#: (places, vehicles, requests) ranges per size class.
SIZE_TARGETS: dict[str, tuple[tuple[int, int], tuple[int, int], tuple[int, int]]] = {
    "small": ((6, 8), (2, 2), (3, 5)),
    "medium": ((10, 12), (3, 4), (8, 12)),
    "large": ((15, 20), (5, 6), (20, 28)),
}

#: Number of disruptions per size class (P4).
N_DISRUPTIONS = {"small": (1, 2), "medium": (2, 3), "large": (3, 5)}

#: The counts a caller may fix instead of drawing them.
COUNT_KEYS = ("n_locations", "n_vehicles", "n_requests")

#: Largest number of places a generated city can have (one name each).
MAX_LOCATIONS = 25

#: Minute the vehicles become available in every generated instance (07:00).
START_TIME = 7 * 60

_PLACES = (
    "downtown", "airport", "stadium", "mall", "university", "park", "suburb", "hospital",
    "train_station", "harbor", "old_town", "museum", "market", "zoo", "riverside", "tech_park",
    "convention_center", "city_hall", "beach", "industrial_zone", "north_end", "south_end",
    "west_side", "east_side", "library",
)


def _floor5(x: float) -> int:
    return int(math.floor(x / 5.0) * 5)


def _count(rng: np.random.Generator, bounds: tuple[int, int], fixed: int | None) -> int:
    """``fixed`` if given (no draw), else a draw in ``bounds`` (inclusive)."""
    return int(rng.integers(bounds[0], bounds[1] + 1)) if fixed is None else int(fixed)


def check_counts(n_locations: int | None = None, n_vehicles: int | None = None, n_requests: int | None = None) -> None:
    """Raise ValueError if a fixed count cannot be generated (None: drawn by size)."""
    bounds = {"n_locations": (2, MAX_LOCATIONS), "n_vehicles": (1, None), "n_requests": (1, None)}
    values = {"n_locations": n_locations, "n_vehicles": n_vehicles, "n_requests": n_requests}
    for key, value in values.items():
        if value is None:
            continue
        lo, hi = bounds[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo or (hi is not None and value > hi):
            top = f" and <= {hi}" if hi is not None else ""
            raise ValueError(f"{key} must be a whole number >= {lo}{top}, got {value!r}")


def draw_city(
    rng: np.random.Generator, size: str, n_locations: int | None = None
) -> tuple[list[str], list[tuple[float, float]], list[list[int]]]:
    """Places on a 20 km x 14 km map; minutes = 2 per km (30 km/h) + 2, complete and symmetric.

    ``n_locations`` fixes the number of places (else drawn from the size class's range)."""
    n = _count(rng, SIZE_TARGETS[size][0], n_locations)
    names = [str(x) for x in rng.permutation(_PLACES)[:n]]
    xy = np.column_stack([rng.uniform(0, 20, n), rng.uniform(0, 14, n)])
    dist = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    minutes = np.ceil(2.0 * dist + 2.0 - 1e-9).astype(int)
    np.fill_diagonal(minutes, 0)
    coords = [(round(float(x), 2), round(float(y), 2)) for x, y in xy]
    return names, coords, minutes.tolist()


def plant_requests(
    rng: np.random.Generator,
    size: str,
    names: list[str],
    roads: list[list[int]],
    disruptions: tuple = (),
    start_time: int = START_TIME,
    n_vehicles: int | None = None,
    n_requests: int | None = None,
) -> tuple[list[Vehicle], list[RideRequest], dict[str, list[str]]]:
    """Vehicles and requests around a hidden plan that serves every request on time.

    Each vehicle drives a hidden route, one passenger at a time, departing as soon as it has
    served a stop (travel times from the network at departure, so ``disruptions`` are
    honoured); each window is drawn around the hidden pickup minute and each latest dropoff
    after the hidden dropoff minute. So every generated instance can be fully served; the
    hidden plan (REALM solution shape) is returned as the certificate. ``n_vehicles`` and
    ``n_requests`` fix those counts (else drawn from the size class's ranges).
    """
    network = RoadNetwork(names, roads)
    _, vehicle_range, request_range = SIZE_TARGETS[size]
    n_vehicles = _count(rng, vehicle_range, n_vehicles)
    n_requests = _count(rng, request_range, n_requests)
    vehicles = _draw_vehicles(rng, names, n_vehicles)
    owner = np.sort(rng.integers(0, n_vehicles, n_requests))
    owner[: min(n_vehicles, n_requests)] = np.arange(min(n_vehicles, n_requests))
    rng.shuffle(owner)
    requests: list[tuple[int, RideRequest]] = []
    owners: list[str] = []
    for k, veh in enumerate(vehicles):
        here, t = network.index[veh.location], start_time
        for _ in range(int((owner == k).sum())):
            service, request, here, t = _hidden_ride(rng, network, disruptions, names, here, t)
            requests.append((service, request))
            owners.append(veh.vehicle_id)
    return vehicles, *_named(requests, owners, vehicles)


def _draw_vehicles(rng: np.random.Generator, names: list[str], n_vehicles: int) -> list[Vehicle]:
    """Vehicles at random places with 2..4 seats."""
    n = len(names)
    return [
        Vehicle(vehicle_id=f"v{k + 1}", location=names[int(rng.integers(n))], capacity=int(rng.integers(2, 5)), fuel=100.0)
        for k in range(n_vehicles)
    ]


def _hidden_ride(
    rng: np.random.Generator, network: RoadNetwork, disruptions: tuple, names: list[str], here: int, t: int
) -> tuple[int, RideRequest, int, int]:
    """One ride of a vehicle's hidden route from place ``here`` at minute ``t``: (its pickup
    minute, the request, where and when the vehicle is free after the dropoff)."""

    def tt(a: int, b: int, at: int) -> int:
        return int(network.matrix_at(active_at(disruptions, at), at)[a, b])

    n = len(names)
    p = int(rng.integers(n))
    d = int(rng.choice([x for x in range(n) if x != p]))
    arrive = t + tt(here, p, t)
    service = arrive + 5 * int(rng.integers(0, 9))  # an optional wait of 0..40 minutes
    width = 5 * int(rng.integers(4, 10))  # 20..45 minutes
    earliest = max(_floor5(service - 5 * int(rng.integers(0, width // 5))), 0)
    latest = max(earliest + width, service)
    drop = service + tt(p, d, service)
    latest_dropoff = max(latest + int(network.static[p, d]) + 5 * int(rng.integers(2, 7)), drop + 5)
    request = RideRequest(
        passenger_id="tmp", pickup=names[p], dropoff=names[d], pickup_window=(earliest, latest), latest_dropoff=latest_dropoff
    )
    return service, request, d, drop


def _named(
    requests: list[tuple[int, RideRequest]], owners: list[str], vehicles: list[Vehicle]
) -> tuple[list[RideRequest], dict[str, list[str]]]:
    """Passenger ids in order of the hidden pickup times (ties: by drawing order), and the
    hidden plan (drawing order = each vehicle's driving order)."""
    order = sorted(range(len(requests)), key=lambda i: requests[i][0])
    pid = {i: f"p{rank + 1}" for rank, i in enumerate(order)}
    named = [requests[i][1].model_copy(update={"passenger_id": pid[i]}) for i in order]
    hidden: dict[str, list[str]] = {v.vehicle_id: [] for v in vehicles}
    for i in range(len(requests)):
        hidden[owners[i]] += [f"pickup:{pid[i]}", f"dropoff:{pid[i]}"]
    return named, hidden


_IMPACTS = {
    "traffic_delay": "increased_travel_time",
    "road_closure": "route_unavailable",
    "accident": "local_traffic_congestion",
    "construction": "reduced_capacity",
}


def _cover(open_: int, close: int, rng: np.random.Generator) -> tuple[int, int]:
    """(start, duration) on 15-minute marks, in force from before ``open_`` until after
    ``close``: every ride of the request starts while it is active."""
    start = 15 * (open_ // 15)
    duration = 15 * (-(-(close + 1 - start) // 15)) + 15 * int(rng.integers(0, 3))
    return start, int(min(max(duration, 30), 150))


def aim_disruptions(
    rng: np.random.Generator, size: str, names: list[str], requests: list[RideRequest], first: int
) -> list[Disruption]:
    """Disruptions aimed at rides: each picks a request (a different one each, among those
    whose window opens at ``first`` or later when there are any) and strikes its pickup place (accident) or its ride
    road pickup-dropoff (delay, closure, construction) from before its pickup window opens
    until after it closes (never starting before ``first``). Every plan that serves the
    request departs from its pickup place while it is in force, so the plans made without it
    cost more under it (design item 7)."""
    lo, hi = N_DISRUPTIONS[size]
    later = [k for k, r in enumerate(requests) if r.pickup_window[0] >= first]
    pool = later or list(range(len(requests)))
    count = min(int(rng.integers(lo, hi + 1)), len(pool))
    out: list[Disruption] = []
    for k in rng.choice(pool, size=count, replace=False):
        req = requests[int(k)]
        kind = DISRUPTION_TYPES[int(rng.integers(len(DISRUPTION_TYPES)))]
        start, duration = _cover(req.pickup_window[0], req.pickup_window[1], rng)
        if start < first:  # never before ``first``: an empty plan ends the episode untouched
            start, duration = first, max(30, start + duration - first)
        common = {"start": start, "duration": duration, "impact": _IMPACTS[kind]}
        route = f"{req.pickup}-{req.dropoff}"
        if kind == "traffic_delay":
            out.append(TrafficDelay(route=route, delay=5 * int(rng.integers(2, 9)), **common))
        elif kind == "road_closure":
            out.append(RoadClosure(route=route, **common))
        elif kind == "accident":
            out.append(Accident(location=req.pickup, delay=5 * int(rng.integers(2, 6)), **common))
        else:
            out.append(Construction(route=route, delay=5 * int(rng.integers(1, 5)), **common))
    return sorted(out, key=lambda d: (d.start, d.type, d.where))


def fit_through(
    names: list[str], roads: list[list[int]], vehicles: list[Vehicle], requests: list[RideRequest],
    hidden: dict[str, list[str]], disruptions: list[Disruption], start_time: int = START_TIME,
) -> list[RideRequest]:
    """The requests with windows and deadlines widened just enough that the hidden plan,
    driven through ``disruptions`` (each vehicle leaving as soon as it has served a stop),
    stays on time: so the instance can still serve everyone. Windows only grow, so the
    hidden plan stays on time without the disruptions too."""
    network = RoadNetwork(names, roads)
    by_id = {r.passenger_id: r for r in requests}
    for veh in vehicles:
        here, t = network.index[veh.location], start_time
        for stop in hidden[veh.vehicle_id]:
            kind, _, pid = stop.partition(":")
            r = by_id[pid]
            there = network.index[r.pickup if kind == "pickup" else r.dropoff]
            arrive = t + int(network.matrix_at(active_at(disruptions, t), t)[here, there])
            if kind == "pickup":
                lo, hi = r.pickup_window
                if arrive > hi:
                    r = r.model_copy(update={"pickup_window": (lo, 5 * (-(-arrive // 5)))})
                t = max(arrive, lo)
            else:
                if arrive > r.latest_dropoff:
                    r = r.model_copy(update={"latest_dropoff": 5 * (-(-arrive // 5))})
                t = arrive
            by_id[pid], here = r, there
    return [by_id[r.passenger_id] for r in requests]


def generate_p3(size: Size = "small", seed: int = 0, name: str | None = None, **counts: int | None) -> P3Instance:
    """Draw a ride-sharing instance of a size class; the same seed gives the same instance.

    Every generated instance can serve all its requests (see :func:`plant_requests`).
    ``counts``: ``n_locations``, ``n_vehicles``, ``n_requests`` fix those numbers (each left
    out, or None, is drawn from the size class's range).
    """
    return generate_p3_with_plan(size, seed, name, **counts)[0]


def generate_p3_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None, **counts: int | None
) -> tuple[P3Instance, dict[str, list[str]]]:
    """:func:`generate_p3` and the hidden plan that serves every request (a feasibility proof)."""
    return _generate(3, size, seed, name, **counts)


def generate_p4(size: Size = "small", seed: int = 0, name: str | None = None, **counts: int | None) -> P4Instance:
    """Draw a ride-sharing instance with disruptions; the same seed gives the same instance.

    The disruptions are aimed at the requests' rides, and the windows widened so that the
    hidden plan behind the requests stays on time *through* them: every generated instance
    can serve all its requests even with the disruptions (though not necessarily with a plan
    made before they were known). ``counts``
    as for :func:`generate_p3`.
    """
    return generate_p4_with_plan(size, seed, name, **counts)[0]


def generate_p4_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None, **counts: int | None
) -> tuple[P4Instance, dict[str, list[str]]]:
    """:func:`generate_p4` and the hidden plan that serves every request through the
    disruptions (a feasibility proof)."""
    return _generate(4, size, seed, name, **counts)


def _generate(
    problem: int, size: str, seed: int, name: str | None, **counts: int | None
) -> tuple[P3Instance, dict[str, list[str]]]:
    """One instance of P3 (``problem=3``) or P4 (``4``) and its hidden plan."""
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    unknown = sorted(set(counts) - set(COUNT_KEYS))
    if unknown:
        raise TypeError(f"unknown count(s) {', '.join(map(repr, unknown))}; the counts are {', '.join(COUNT_KEYS)}")
    check_counts(**counts)
    n_locations, n_vehicles, n_requests = (counts.get(k) for k in COUNT_KEYS)
    rng = np.random.default_rng([problem, seed, list(SIZE_TARGETS).index(size)])
    names, coords, roads = draw_city(rng, size, n_locations)
    vehicles, requests, hidden = plant_requests(
        rng, size, names, roads, (), START_TIME, n_vehicles=n_vehicles, n_requests=n_requests
    )
    disruptions: list[Disruption] = []
    if problem == 4:
        disruptions = aim_disruptions(rng, size, names, requests, START_TIME + 30)
        requests = fit_through(names, roads, vehicles, requests, hidden, disruptions)
    fields = {
        "name": name or f"p{problem}_{size}_seed{seed}",
        "size": size,
        "locations": names,
        "roads": roads,
        "coords": coords,
        "requests": requests,
        "vehicles": vehicles,
        "start_time": START_TIME,
    }
    if problem == 3:
        description = (
            f"Urban ride-sharing ({size}): {len(vehicles)} vehicles serve {len(requests)} "
            f"passenger requests across {len(names)} places."
        )
        return P3Instance(description=description, **fields), hidden
    description = (
        f"Urban ride-sharing with disruptions ({size}): {len(vehicles)} vehicles serve "
        f"{len(requests)} requests across {len(names)} places; {len(disruptions)} disruptions."
    )
    return P4Instance(description=description, disruptions=disruptions, **fields), hidden
