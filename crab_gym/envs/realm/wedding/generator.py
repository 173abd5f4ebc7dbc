"""Seeded generators of P5/P8 instances: a town, guests, shops with opening hours, vehicles.

Feasible by construction: a *witness* plan (items dealt round-robin to the vehicles, each
guest taken straight to the venue) is simulated, then every shop's closing time and the photo
time and deadline are moved late enough for the witness to keep them. The oracle then finds
far better plans, but one that serves everyone always exists.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.road_network import shortest_paths
from crab_gym.envs.realm.wedding.checker import check_plan
from crab_gym.envs.realm.wedding.disruptions import RoadClosure, TrafficDelay
from crab_gym.envs.realm.wedding.model import VENUE_STOP, Errand, Guest, P8Instance, Vehicle, WeddingInstance

#: Counts per size class: guests, errands, vehicles (the last one a guest's own car from medium on).
SIZES: dict[str, dict[str, int]] = {
    "small": {"n_guests": 3, "n_errands": 3, "n_vehicles": 2},
    "medium": {"n_guests": 5, "n_errands": 5, "n_vehicles": 3},
    "large": {"n_guests": 8, "n_errands": 7, "n_vehicles": 4},
}
#: Disruptions per P8 instance by size class.
N_DISRUPTIONS = {"small": 2, "medium": 2, "large": 3}

GUEST_NAMES = ("alex", "jamie", "sam", "robin", "casey", "morgan", "taylor", "jordan", "riley", "quinn",
               "avery", "drew", "kai", "lee", "noor", "eli")
#: Errand -> the shop it is done at.
ERRAND_SHOPS = (("gift", "gift_shop"), ("tailor", "tailor"), ("flowers", "florist"), ("cake", "bakery"),
                ("decorations", "party_store"), ("rings", "jeweller"), ("music", "music_shop"),
                ("photographer", "photo_studio"), ("wine", "wine_shop"), ("favors", "craft_store"))
VEHICLE_BASES = (("van", "hotel", 7), ("car1", "church", 4), ("car2", "reception", 4), ("car3", "hotel", 4),
                 ("car4", "church", 4), ("car5", "reception", 4))

START = 9 * 60
PHOTO = 15 * 60
DEADLINE = 18 * 60


def _roads(coords: np.ndarray, rng: np.random.Generator) -> list[list[int | None]]:
    """Two-way roads: each place to its 3 nearest, plus links that join the components;
    minutes = 1.5 x distance + 3, give or take 20 %."""
    n = len(coords)
    dist = np.linalg.norm(coords[:, None, :] - coords[None, :, :], axis=2)
    edges = set()
    for i in range(n):
        for j in np.argsort(dist[i])[1:4]:
            edges.add((min(i, int(j)), max(i, int(j))))
    comp = list(range(n))

    def find(x: int) -> int:
        while comp[x] != x:
            x = comp[x]
        return x

    for i, j in edges:
        comp[find(i)] = find(j)
    pairs = sorted(((a, b) for a in range(n) for b in range(a + 1, n)), key=lambda p: dist[p])
    for i, j in pairs:
        if find(i) != find(j):
            edges.add((i, j))
            comp[find(i)] = find(j)
    roads: list[list[int | None]] = [[None] * n for _ in range(n)]
    for i, j in sorted(edges):
        minutes = int(round((1.5 * dist[i, j] + 3) * rng.uniform(0.8, 1.2)))
        roads[i][j] = roads[j][i] = max(2, minutes)
    return roads


def _witness(inst: WeddingInstance) -> dict[str, list[str]]:
    """Items dealt round-robin, each vehicle taking its own in order of readiness, with a
    venue drop after every guest."""
    names = inst.stop_names()
    ready = [g.arrival for g in inst.guests] + [e.opens for e in inst.errands]
    order = sorted(range(inst.n_items), key=lambda s: (ready[s], s))
    routes: dict[str, list[str]] = {v.vehicle_id: [] for v in inst.vehicles}
    for k, s in enumerate(order):
        vid = inst.vehicles[k % len(inst.vehicles)].vehicle_id
        routes[vid].append(names[s])
        if s < inst.n_guests:
            routes[vid].append(VENUE_STOP)
    return routes


def _round_up(minute: int, step: int = 15) -> int:
    return int(math.ceil(minute / step) * step)


def generate_p5(
    size: str = "small", seed: int = 0, name: str | None = None, *, n_guests: int | None = None,
    n_errands: int | None = None, n_vehicles: int | None = None,
) -> WeddingInstance:
    """A seeded P5 instance of a size class (counts may be overridden)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    counts = dict(SIZES[size])
    for key, value in (("n_guests", n_guests), ("n_errands", n_errands), ("n_vehicles", n_vehicles)):
        if value is not None:
            counts[key] = int(value)
    G, E, V = counts["n_guests"], counts["n_errands"], counts["n_vehicles"]
    if G + E < 1 or V < 1 or G > len(GUEST_NAMES) - 1 or E > len(ERRAND_SHOPS) or V > len(VEHICLE_BASES) + 1:
        raise ValueError(f"unsupported counts {counts}: guests <= {len(GUEST_NAMES) - 1}, errands <= "
                         f"{len(ERRAND_SHOPS)}, vehicles 1..{len(VEHICLE_BASES) + 1}, at least one guest or errand")
    rng = np.random.default_rng([int(seed), 5])
    guest_car = V >= 3  # from three vehicles on, the last one is a guest's own car
    fleet = VEHICLE_BASES[: V - 1 if guest_car else V]
    errands = [ERRAND_SHOPS[k] for k in sorted(rng.choice(len(ERRAND_SHOPS), size=E, replace=False))]
    places = ["venue", "airport"] + sorted({base for _, base, _ in fleet}) + [shop for _, shop in errands]
    coords = rng.uniform([0, 0], [40, 30], size=(len(places), 2))
    coords[0] = [20 + rng.uniform(-4, 4), 15 + rng.uniform(-3, 3)]
    coords[1] = [rng.uniform(0, 6), rng.uniform(0, 30)]  # the airport is out of town
    roads = _roads(coords, rng)
    people = list(rng.choice(GUEST_NAMES, size=G + int(guest_car), replace=False))
    guests = [Guest(guest_id=str(p), place="airport", arrival=int(600 + 5 * rng.integers(0, 43))) for p in people[:G]]
    shops = []
    for eid, shop in errands:
        opens = int(START + 30 * rng.integers(0, 7))
        shops.append(Errand(errand_id=eid, shop=shop, opens=opens, closes=opens + int(30 * rng.integers(4, 13)),
                            service=int(5 * rng.integers(2, 6))))
    vehicles = [Vehicle(vehicle_id=vid, place=base, capacity=int(cap) - int(rng.integers(0, 2)), available=START)
                for vid, base, cap in fleet]
    if guest_car:
        driver = str(people[G])
        vehicles.append(Vehicle(vehicle_id=driver, place="airport", capacity=3, driver=driver,
                                available=int(600 + 5 * rng.integers(0, 25))))
    draft = WeddingInstance(
        name=name or f"p5_{size}_{seed:02d}", description=f"Wedding logistics, {size}, seed {seed}", size=size,
        places=places, roads=roads, coords=[tuple(map(float, c)) for c in np.round(coords, 2)], venue="venue",
        guests=guests, errands=shops, vehicles=vehicles, photo_time=DEADLINE * 2, deadline=DEADLINE * 2,
    )
    return _fit_to_witness(draft)


def _fit_to_witness(draft: WeddingInstance) -> WeddingInstance:
    """Move closing times, the photo time and the deadline so that the witness plan keeps them."""
    witness = check_plan(draft, _witness(draft))
    starts = {d["errand"]: d["time"] for d in witness.errands_done}
    errands = [
        e if starts[e.errand_id] <= e.latest_start
        else e.model_copy(update={"closes": _round_up(starts[e.errand_id] + e.service + 30, 30)})
        for e in draft.errands
    ]
    latest = max(list(witness.delivered.values()) + [witness.ends[v.vehicle_id] for v in draft.vehicles if v.driver])
    photo = max(PHOTO, _round_up(latest + 15))
    deadline = max(DEADLINE, _round_up(max(witness.ends.values()) + 30, 30), photo)
    inst = WeddingInstance.model_validate(
        {**draft.model_dump(), "errands": [e.model_dump() for e in errands], "photo_time": photo, "deadline": deadline}
    )
    assert check_plan(inst, _witness(inst)).feasible, "the witness plan must be feasible"
    return inst


def _roads_on_paths(base: WeddingInstance, ends: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The roads ``(i, j)``, ``i < j``, on some shortest path between a pair of ``ends``."""
    net = base.network
    d, w = net.static, net.base
    out = []
    for i, j in net.roads():
        for a, b in ends:
            if min(d[a, i] + w[i, j] + d[j, b], d[a, j] + w[j, i] + d[i, b], d[b, i] + w[i, j] + d[j, a],
                   d[b, j] + w[j, i] + d[i, a]) == d[a, b]:
                out.append((i, j))
                break
    return out


def _ferry_roads(base: WeddingInstance, delay: int) -> list[tuple[int, int]]:
    """The roads between the airport and the venue, the one whose ``delay`` slows that trip
    most first (every guest rides it; going round may be quicker than the delay)."""
    venue, airport = base.index[base.venue], base.index.get("airport", 1)
    net = base.network
    d, w = net.static, net.base
    slowed = []
    for i, j in _roads_on_paths(base, [(airport, venue)]):
        bumped = w.copy()
        bumped[i, j] += delay
        bumped[j, i] += delay
        slowed.append((-int(shortest_paths(bumped)[airport, venue] - d[airport, venue]), i, j))
    return [(i, j) for _, i, j in sorted(slowed)] or net.roads()


def _ferry_disruptions(base: WeddingInstance, size: str, rng: np.random.Generator) -> list[Any]:
    """Heavy traffic between the airport and the venue while the guests land (every guest
    rides that way), on the road where it slows the trip most (and the next one), and on
    large days a closure of a road to a shop while errands are run."""
    arrivals = sorted(g.arrival for g in base.guests) or [START + 120]
    delay = int(5 * rng.integers(6, 13))
    ferry = _ferry_roads(base, delay)
    out: list[Any] = []
    for k in range(N_DISRUPTIONS.get(size, 1)):
        if k < min(2, len(ferry)):
            i, j = ferry[k]
            start = int(START + 15 + 5 * rng.integers(0, 10))
            until = arrivals[len(arrivals) * 3 // 4] + int(15 * rng.integers(1, 5))
            out.append(TrafficDelay(route=f"{base.places[i]}-{base.places[j]}", start=start,
                                    duration=max(60, until - start), delay=delay))
            continue
        i, j = _errand_roads(base)[int(rng.integers(len(_errand_roads(base))))]
        out.append(RoadClosure(route=f"{base.places[i]}-{base.places[j]}", start=int(START + 30 + 5 * rng.integers(0, 13)),
                               duration=int(15 * rng.integers(4, 9))))
    return out


def _errand_roads(base: WeddingInstance) -> list[tuple[int, int]]:
    """The roads on a shortest path between a shop and the venue or the airport."""
    shops = [base.index[e.shop] for e in base.errands]
    ends = [(base.index[base.venue], x) for x in shops] + [(base.index.get("airport", 1), x) for x in shops]
    return _roads_on_paths(base, ends) or base.network.roads()


def _errand_disruptions(base: WeddingInstance, size: str, rng: np.random.Generator) -> list[Any]:
    """Heavy traffic on the roads to the shops from late morning into the afternoon, while
    errands and the last trips to the venue are run."""
    pool = _errand_roads(base)
    out: list[Any] = []
    for _ in range(N_DISRUPTIONS.get(size, 1)):
        i, j = pool[int(rng.integers(len(pool)))]
        out.append(TrafficDelay(route=f"{base.places[i]}-{base.places[j]}", start=int(600 + 5 * rng.integers(0, 31)),
                                duration=int(15 * rng.integers(6, 17)), delay=int(5 * rng.integers(4, 13))))
    return out


def _p8_disruptions(base: WeddingInstance, size: str, rng: np.random.Generator, draw: int = 0) -> list[Any]:
    """Disruptions that strike what every plan must do: even draws strike the trips between
    the airport and the venue (:func:`_ferry_disruptions`), odd draws the roads to the shops
    (:func:`_errand_disruptions`)."""
    out = (_errand_disruptions if draw % 2 else _ferry_disruptions)(base, size, rng)
    out.sort(key=lambda d: d.start)
    return out


def generate_p8(
    size: str = "small", seed: int = 0, name: str | None = None, *, draw: int = 0, **counts: Any
) -> P8Instance:
    """A seeded P8 instance: the P5 instance of the same seed plus road disruptions during
    the day that strike roads every plan needs (:func:`_p8_disruptions`); ``draw`` picks
    another schedule for the same day (the shipped set keeps the first that matters)."""
    base = generate_p5(size, seed, name=name or f"p8_{size}_{seed:02d}", **counts)
    if draw:
        base = base.model_copy(update={"description": f"{base.description}, disruptions draw {draw}"})
    rng = np.random.default_rng([int(seed), 8, 2, int(draw)])
    out = _p8_disruptions(base, size, rng, draw)
    return P8Instance(**{k: getattr(base, k) for k in WeddingInstance.model_fields}, disruptions=out)
