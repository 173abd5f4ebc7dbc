"""Seeded generators of P3 and P4 (ride-sharing, without and with disruptions).

Each instance is drawn around a hidden plan that serves every request on time, so every
generated instance can be fully served; ``generate_p3_with_plan`` / ``generate_p4_with_plan``
return that plan as the certificate. The same ``(size, seed)`` always gives the same instance
(the shipped ones are ``generate_p3(size, seed=k)`` for k = 1, 2, ..., see
:mod:`crab_gym.envs.realm.ridesharing.build`).

* a city: places on a 20 km x 14 km map, complete symmetric roads (2 minutes per km + 2);
* P4 only: its disruptions, drawn first (start on 15-minute marks, 30 to 120 minutes long);
* vehicles and requests: each vehicle drives a hidden route, one passenger at a time, through
  the disruptions; each window is drawn around the hidden pickup minute and each latest
  dropoff after the hidden dropoff minute.
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


def draw_city(rng: np.random.Generator, size: str) -> tuple[list[str], list[tuple[float, float]], list[list[int]]]:
    """Places on a 20 km x 14 km map; minutes = 2 per km (30 km/h) + 2, complete and symmetric."""
    lo, hi = SIZE_TARGETS[size][0]
    n = int(rng.integers(lo, hi + 1))
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
) -> tuple[list[Vehicle], list[RideRequest], dict[str, list[str]]]:
    """Vehicles and requests around a hidden plan that serves every request on time.

    Each vehicle drives a hidden route, one passenger at a time, departing as soon as it has
    served a stop (travel times from the network at departure, so ``disruptions`` are
    honoured); each window is drawn around the hidden pickup minute and each latest dropoff
    after the hidden dropoff minute. So every generated instance can be fully served; the
    hidden plan (REALM solution shape) is returned as the certificate.
    """
    network = RoadNetwork(names, roads)
    (_, _), (vlo, vhi), (rlo, rhi) = SIZE_TARGETS[size]
    n_vehicles = int(rng.integers(vlo, vhi + 1))
    n_requests = int(rng.integers(rlo, rhi + 1))
    n = len(names)
    vehicles = [
        Vehicle(
            vehicle_id=f"v{k + 1}",
            location=names[int(rng.integers(n))],
            capacity=int(rng.integers(2, 5)),
            fuel=100.0,
        )
        for k in range(n_vehicles)
    ]
    owner = np.sort(rng.integers(0, n_vehicles, n_requests))
    owner[: min(n_vehicles, n_requests)] = np.arange(min(n_vehicles, n_requests))
    rng.shuffle(owner)

    def tt(a: int, b: int, t: int) -> int:
        return int(network.matrix_at(active_at(disruptions, t), t)[a, b])

    requests: list[tuple[int, RideRequest]] = []
    owners: list[str] = []
    for k, veh in enumerate(vehicles):
        here, t = network.index[veh.location], start_time
        for _ in range(int((owner == k).sum())):
            p = int(rng.integers(n))
            d = int(rng.choice([x for x in range(n) if x != p]))
            arrive = t + tt(here, p, t)
            service = arrive + 5 * int(rng.integers(0, 9))  # an optional wait of 0..40 minutes
            width = 5 * int(rng.integers(4, 10))  # 20..45 minutes
            earliest = max(_floor5(service - 5 * int(rng.integers(0, width // 5))), 0)
            latest = max(earliest + width, service)
            drop = service + tt(p, d, service)
            latest_dropoff = max(latest + int(network.static[p, d]) + 5 * int(rng.integers(2, 7)), drop + 5)
            requests.append(
                (
                    service,
                    RideRequest(
                        passenger_id="tmp",
                        pickup=names[p],
                        dropoff=names[d],
                        pickup_window=(earliest, latest),
                        latest_dropoff=latest_dropoff,
                    ),
                )
            )
            owners.append(veh.vehicle_id)
            here, t = d, drop
    # passenger ids in order of the hidden pickup times (ties: by drawing order)
    order = sorted(range(len(requests)), key=lambda i: requests[i][0])
    pid = {i: f"p{rank + 1}" for rank, i in enumerate(order)}
    named = [requests[i][1].model_copy(update={"passenger_id": pid[i]}) for i in order]
    hidden: dict[str, list[str]] = {v.vehicle_id: [] for v in vehicles}
    for i in range(len(requests)):  # drawing order = each vehicle's driving order
        hidden[owners[i]] += [f"pickup:{pid[i]}", f"dropoff:{pid[i]}"]
    return vehicles, named, hidden


_IMPACTS = {
    "traffic_delay": "increased_travel_time",
    "road_closure": "route_unavailable",
    "accident": "local_traffic_congestion",
    "construction": "reduced_capacity",
}


def draw_disruptions(
    rng: np.random.Generator, size: str, names: list[str], first: int, last: int
) -> list[Disruption]:
    """Disruptions starting between ``first`` and ``last`` (minutes, on 15-minute marks)."""
    lo, hi = N_DISRUPTIONS[size]
    out: list[Disruption] = []
    for _ in range(int(rng.integers(lo, hi + 1))):
        kind = DISRUPTION_TYPES[int(rng.integers(len(DISRUPTION_TYPES)))]
        start = 15 * int(rng.integers(first // 15, last // 15 + 1))
        duration = 15 * int(rng.integers(2, 9))  # 30 .. 120 minutes
        a, b = (str(x) for x in rng.choice(names, size=2, replace=False))
        common = {"start": start, "duration": duration, "impact": _IMPACTS[kind]}
        if kind == "traffic_delay":
            out.append(TrafficDelay(route=f"{a}-{b}", delay=5 * int(rng.integers(2, 9)), **common))
        elif kind == "road_closure":
            out.append(RoadClosure(route=f"{a}-{b}", **common))
        elif kind == "accident":
            out.append(Accident(location=a, delay=5 * int(rng.integers(2, 6)), **common))
        else:
            out.append(Construction(route=f"{a}-{b}", delay=5 * int(rng.integers(1, 5)), **common))
    return sorted(out, key=lambda d: (d.start, d.type, d.where))


def generate_p3(size: Size = "small", seed: int = 0, name: str | None = None) -> P3Instance:
    """Draw a ride-sharing instance of a size class; the same seed gives the same instance.

    Every generated instance can serve all its requests (see :func:`plant_requests`).
    """
    return generate_p3_with_plan(size, seed, name)[0]


def generate_p3_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None
) -> tuple[P3Instance, dict[str, list[str]]]:
    """:func:`generate_p3` and the hidden plan that serves every request (a feasibility proof)."""
    return _generate(3, size, seed, name)


def generate_p4(size: Size = "small", seed: int = 0, name: str | None = None) -> P4Instance:
    """Draw a ride-sharing instance with disruptions; the same seed gives the same instance.

    The disruptions are drawn first and the hidden plan behind the requests is driven
    *through* them, so every generated instance can serve all its requests even with the
    disruptions (though not necessarily with a plan made before they were known).
    """
    return generate_p4_with_plan(size, seed, name)[0]


def generate_p4_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None
) -> tuple[P4Instance, dict[str, list[str]]]:
    """:func:`generate_p4` and the hidden plan that serves every request through the
    disruptions (a feasibility proof)."""
    return _generate(4, size, seed, name)


def _generate(problem: int, size: str, seed: int, name: str | None) -> tuple[P3Instance, dict[str, list[str]]]:
    """One instance of P3 (``problem=3``) or P4 (``4``) and its hidden plan."""
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([problem, seed, list(SIZE_TARGETS).index(size)])
    names, coords, roads = draw_city(rng, size)
    disruptions: list[Disruption] = []
    if problem == 4:
        span = {"small": 150, "medium": 240, "large": 300}[size]
        disruptions = draw_disruptions(rng, size, names, START_TIME + 30, START_TIME + span)
    vehicles, requests, hidden = plant_requests(rng, size, names, roads, tuple(disruptions), START_TIME)
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
