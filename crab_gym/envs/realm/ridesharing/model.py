"""REALM-Bench P3, urban ride-sharing: instance model, seeded generator, upstream reader.

The problem is a dial-a-ride problem (DARP) with open routes:

* **Decision**: which vehicle serves which passenger request, and the order of each
  vehicle's stops (``pickup:<id>`` and ``dropoff:<id>``). A request may be left unserved.
* **Constraints**: each vehicle starts at its location at ``start_time``; it drives from stop
  to stop as soon as it has served a stop; arriving at a pickup before its window opens means
  waiting there; the pickup must happen no later than the window's close, and the dropoff no
  later than the request's ``latest_dropoff``; a request's dropoff follows its pickup in the
  same vehicle; the passengers on board never exceed the vehicle's ``capacity``.
* **Objective**: minimise the total travel time of all vehicles (minutes driven; waiting is
  free) plus ``unserved_penalty`` minutes for each request left unserved. Routes are open:
  a vehicle ends where it drops its last passenger.

Units: every time is an integer number of minutes; clock times are minutes from midnight.
Travel between two places is the shortest path over the listed roads (see
:mod:`crab_gym.envs.realm.ridesharing.network`).

Reading of upstream ``deadline`` (undocumented upstream): **minutes after the close of the
pickup window** by which the passenger must be dropped off, i.e.
``latest_dropoff = window_end + deadline``. Upstream values (about 25 to 60) are always at
least the direct ride time, so under this reading a passenger picked up at any time inside
the window and driven straight to the destination is on time; read as clock hours or
minutes from midnight they would be in the past, and read from the window's *start* they
would contradict the window's own end for the longer rides.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, Coordinate, NonNegInt, PosInt, is_number, too_large
from crab_gym.envs.realm.common.loading import (
    load_instance,
    read_json,  # noqa: F401 (re-exported: public here before loading.py)
    shipped_names,
    validate_model,
    validation_error,
)
from crab_gym.envs.realm.common.upstream import is_upstream_for
from crab_gym.envs.realm.ridesharing.network import (
    NO_ROAD,
    RoadNetwork,
    active_at,
    split_route,
)

Size = Literal["small", "medium", "large"]

INSTANCE_DIR = Path(__file__).with_name("instances") / "p3"

#: Default minutes charged for each unserved request (more than any detour in our cities).
DEFAULT_UNSERVED_PENALTY = 1000

#: (places, vehicles, requests) ranges per size class.
SIZE_TARGETS: dict[str, tuple[tuple[int, int], tuple[int, int], tuple[int, int]]] = {
    "small": ((6, 8), (2, 2), (3, 5)),
    "medium": ((10, 12), (3, 4), (8, 12)),
    "large": ((15, 20), (5, 6), (20, 28)),
}

_PLACES = (
    "downtown", "airport", "stadium", "mall", "university", "park", "suburb", "hospital",
    "train_station", "harbor", "old_town", "museum", "market", "zoo", "riverside", "tech_park",
    "convention_center", "city_hall", "beach", "industrial_zone", "north_end", "south_end",
    "west_side", "east_side", "library",
)


def id_problem(value: str, *, vehicle: bool) -> str | None:
    """Why ``value`` cannot be a passenger (or vehicle) id, or None if it can.

    Ids appear inside stop names (``pickup:<id>``) and vehicle ids name the fields of the
    env's ``submit_plan`` schema, so a passenger id is one word and a vehicle id a name.
    """
    if not value:
        return "expected a non-empty id"
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        example = "'v1'" if vehicle else "'p1'"
        return f"id {value!r} contains spaces or control characters; expected one word such as {example}"
    if vehicle and (not value.isidentifier() or value.startswith(("_", "model_"))):
        return (
            f"vehicle id {value!r} is not a name: expected letters, digits and '_', not starting with a "
            "digit, '_' or 'model_' (vehicle ids name the fields of submit_plan)"
        )
    return None


class Vehicle(BaseModel):
    """A vehicle: where it waits at ``start_time`` and how many passengers it seats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vehicle_id: str = Field(min_length=1)
    location: str
    capacity: PosInt
    fuel: Annotated[float, Field(ge=0, le=MAX_QUANTITY, allow_inf_nan=False)] | None = Field(
        default=None, description="upstream value, kept but not enforced"
    )

    @model_validator(mode="after")
    def _named(self) -> Vehicle:
        problem = id_problem(self.vehicle_id, vehicle=True)
        if problem:
            raise FieldProblem("vehicle_id", problem)
        return self


class RideRequest(BaseModel):
    """A passenger's ride: pickup window and latest dropoff, in minutes from midnight."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    passenger_id: str = Field(min_length=1)
    pickup: str
    dropoff: str
    pickup_window: tuple[NonNegInt, NonNegInt] = Field(description="[earliest, latest] pickup minute")
    latest_dropoff: NonNegInt
    passengers: PosInt = 1

    @model_validator(mode="after")
    def _ordered(self) -> RideRequest:
        problem = id_problem(self.passenger_id, vehicle=False)
        if problem:
            raise FieldProblem("passenger_id", problem)
        lo, hi = self.pickup_window
        if hi < lo:
            raise FieldProblem(
                "pickup_window", f"closes (minute {hi}) before it opens ({lo}); expected [earliest, latest]"
            )
        if self.latest_dropoff < lo:
            raise FieldProblem("latest_dropoff", f"minute {self.latest_dropoff} is before the window opens ({lo})")
        return self


class P3Instance(BaseModel):
    """One ride-sharing instance (see the module docstring for the model)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    size: str | None = None
    locations: list[str] = Field(min_length=2)
    roads: list[list[NonNegInt | None]] = Field(
        description="roads[i][j]: minutes on the direct road i -> j (None: no road)"
    )
    coords: list[tuple[Coordinate, Coordinate]] | None = Field(default=None, description="map positions, drawing only")
    requests: list[RideRequest] = Field(min_length=1)
    vehicles: list[Vehicle] = Field(min_length=1)
    start_time: NonNegInt = Field(description="minute the vehicles become available")
    unserved_penalty: NonNegInt = DEFAULT_UNSERVED_PENALTY

    @model_validator(mode="after")
    def _consistent(self) -> P3Instance:
        n = len(self.locations)
        for i, name in enumerate(self.locations):
            if name in self.locations[:i]:
                raise FieldProblem(f"locations[{i}]", f"location {name!r} repeats; names must be unique")
        if len(self.roads) != n:
            raise FieldProblem("roads", f"expected a {n}x{n} matrix (one row per location), got {len(self.roads)} rows")
        for i, row in enumerate(self.roads):
            if len(row) != n:
                raise FieldProblem(f"roads[{i}]", f"expected {n} entries (one per location), got {len(row)}")
        if self.coords is not None and len(self.coords) != n:
            raise FieldProblem("coords", f"expected one position per location ({n}), got {len(self.coords)}")
        names = set(self.locations)
        seen: set[str] = set()
        for k, r in enumerate(self.requests):
            if r.passenger_id in seen:
                raise FieldProblem(f"requests[{k}].passenger_id", f"passenger id {r.passenger_id!r} repeats")
            seen.add(r.passenger_id)
            for key in ("pickup", "dropoff"):
                if getattr(r, key) not in names:
                    raise FieldProblem(f"requests[{k}].{key}", f"{getattr(r, key)!r} is not one of the locations")
        seen = set()
        for k, v in enumerate(self.vehicles):
            if v.vehicle_id in seen:
                raise FieldProblem(f"vehicles[{k}].vehicle_id", f"vehicle id {v.vehicle_id!r} repeats")
            seen.add(v.vehicle_id)
            if v.location not in names:
                raise FieldProblem(f"vehicles[{k}].location", f"{v.location!r} is not one of the locations")
        if not self.network.connected():
            raise FieldProblem("roads", "some places cannot be reached from others over the roads")
        return self

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Location name -> matrix row."""
        return {name: i for i, name in enumerate(self.locations)}

    @cached_property
    def network(self) -> RoadNetwork:
        return RoadNetwork(self.locations, self.roads)

    @cached_property
    def travel(self) -> np.ndarray:
        """Undisrupted shortest-path minutes between places (read-only)."""
        t = self.network.static.copy()
        t.setflags(write=False)
        return t

    @property
    def n_requests(self) -> int:
        return len(self.requests)

    @property
    def n_vehicles(self) -> int:
        return len(self.vehicles)

    @property
    def horizon(self) -> int:
        """Latest minute anything can matter (the last latest dropoff)."""
        ends = [r.latest_dropoff for r in self.requests] or [self.start_time]
        return max(max(ends), self.start_time)

    def stop_names(self) -> list[str]:
        """Stop labels in stop-code order: ``pickup:<id>`` = 2r, ``dropoff:<id>`` = 2r + 1."""
        out = []
        for r in self.requests:
            out += [f"pickup:{r.passenger_id}", f"dropoff:{r.passenger_id}"]
        return out

    def stop_location(self, code: int) -> int:
        """Matrix row of a stop code."""
        r = self.requests[code // 2]
        return self.index[r.dropoff if code % 2 else r.pickup]

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name or the drawing)."""
        core = self.model_dump(
            mode="json", exclude={"name", "description", "size", "coords"}
        )
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)

    def to_upstream(self) -> dict[str, Any]:
        """This instance in upstream REALM-Bench's P3 shape (hours, ``deadline``).

        Adds ``start_time`` (hours), which upstream files lack, so that a round trip keeps it.
        """
        return _to_upstream(self)


# ---------------------------------------------------------------------------------------
# Seeded generator
# ---------------------------------------------------------------------------------------
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
    start_time: int = 7 * 60,
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


def generate_p3(size: Size = "small", seed: int = 0, name: str | None = None) -> P3Instance:
    """Draw a ride-sharing instance of a size class; the same seed gives the same instance.

    Every generated instance can serve all its requests (see :func:`plant_requests`).
    """
    return generate_p3_with_plan(size, seed, name)[0]


def generate_p3_with_plan(
    size: Size = "small", seed: int = 0, name: str | None = None
) -> tuple[P3Instance, dict[str, list[str]]]:
    """:func:`generate_p3` and the hidden plan that serves every request (a feasibility proof)."""
    if size not in SIZE_TARGETS:
        raise ValueError(f"size must be one of {sorted(SIZE_TARGETS)}, got {size!r}")
    rng = np.random.default_rng([3, seed, list(SIZE_TARGETS).index(size)])
    names, coords, roads = draw_city(rng, size)
    start_time = 7 * 60
    vehicles, requests, hidden = plant_requests(rng, size, names, roads, (), start_time)
    inst = P3Instance(
        name=name or f"p3_{size}_seed{seed}",
        description=(
            f"Urban ride-sharing ({size}): {len(vehicles)} vehicles serve {len(requests)} "
            f"passenger requests across {len(names)} places."
        ),
        size=size,
        locations=names,
        roads=roads,
        coords=coords,
        requests=requests,
        vehicles=vehicles,
        start_time=start_time,
    )
    return inst, hidden


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P3 JSON -> P3Instance (and back)
# ---------------------------------------------------------------------------------------
def _number(value: Any, source: str, field: str, *, low: float = 0.0, high: float = MAX_QUANTITY) -> float:
    if not is_number(value) or too_large(value) or not low <= value <= high:
        got = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}..."
        bounds = ", ".join(str(int(x)) if x == int(x) else f"{x:g}" for x in (low, high))
        raise InstanceFormatError(source, f"expected a number in [{bounds}], got {got}", field=field)
    return float(value)


def _hours(value: Any, source: str, field: str) -> int:
    return int(round(_number(value, source, field, high=48.0) * 60))


def _text(value: Any, source: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InstanceFormatError(source, f"expected a non-empty string, got {value!r}", field=field)
    return value


def _id(value: Any, source: str, field: str, *, vehicle: bool) -> str:
    text = _text(value, source, field)
    problem = id_problem(text, vehicle=vehicle)
    if problem:
        raise InstanceFormatError(source, problem, field=field)
    return text


def _list(data: dict, key: str, source: str) -> list:
    if key not in data:
        raise InstanceFormatError(source, "missing required key", field=key)
    value = data[key]
    if not isinstance(value, list):
        raise InstanceFormatError(source, f"expected a list, got {type(value).__name__}", field=key)
    return value


def _parse_city(data: dict, source: str) -> tuple[list[str], list[list[int | None]]]:
    city = data.get("city_map")
    if not isinstance(city, dict):
        raise InstanceFormatError(source, "missing or not an object", field="city_map")
    locations = city.get("locations")
    if not isinstance(locations, list) or len(locations) < 2 or not all(isinstance(x, str) and x for x in locations):
        raise InstanceFormatError(source, "expected a list of at least two names", field="city_map.locations")
    if len(set(locations)) != len(locations):
        raise InstanceFormatError(source, "location names repeat", field="city_map.locations")
    distances = city.get("distances")
    if not isinstance(distances, dict):
        raise InstanceFormatError(source, 'expected an object {"a-b": minutes}', field="city_map.distances")
    n, idx = len(locations), {x: i for i, x in enumerate(locations)}
    raw: list[list[float | None]] = [[None] * n for _ in range(n)]
    for key, val in distances.items():
        field = f"city_map.distances[{key!r}]"
        pair = split_route(str(key), locations)
        if pair is None:
            raise InstanceFormatError(source, "key is not 'from-to' over known locations", field=field)
        raw[idx[pair[0]]][idx[pair[1]]] = _number(val, source, field)
    roads: list[list[int | None]] = [[None] * n for _ in range(n)]
    rounded = 0
    for i in range(n):
        for j in range(n):
            if i == j:
                roads[i][j] = 0
                continue
            val = raw[i][j]
            if val is None and raw[j][i] is not None:
                val = raw[j][i]
                warnings.warn(
                    f"{source}: city_map.distances['{locations[i]}-{locations[j]}'] missing; "
                    f"used '{locations[j]}-{locations[i]}' = {val:g} (roads are two-way)",
                    RealmRepairWarning,
                    stacklevel=3,
                )
            if val is None:
                continue
            if val != int(val):
                rounded += 1
            roads[i][j] = int(math.floor(val + 0.5))
    if rounded:
        warnings.warn(
            f"{source}: rounded {rounded} non-integer distances to whole minutes",
            RealmRepairWarning,
            stacklevel=3,
        )
    net = RoadNetwork(locations, roads)
    if not net.connected():
        bad = [
            f"{locations[i]}-{locations[j]}"
            for i in range(n)
            for j in range(n)
            if net.static[i, j] >= NO_ROAD
        ]
        raise InstanceFormatError(
            source, f"no way between some places over the listed roads (e.g. {bad[0]})", field="city_map.distances"
        )
    return list(locations), roads


def _parse_requests(data: dict, source: str, names: set[str]) -> list[RideRequest]:
    out: list[RideRequest] = []
    seen: set[str] = set()
    for k, item in enumerate(_list(data, "ride_requests", source)):
        base = f"ride_requests[{k}]"
        if not isinstance(item, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        pid = _id(item.get("passenger_id"), source, f"{base}.passenger_id", vehicle=False)
        if pid in seen:
            raise InstanceFormatError(source, f"passenger id {pid!r} repeats", field=f"{base}.passenger_id")
        seen.add(pid)
        stops = {}
        for key in ("pickup", "dropoff"):
            loc = item.get(key)
            if loc not in names:
                raise InstanceFormatError(source, f"{loc!r} is not one of the locations", field=f"{base}.{key}")
            stops[key] = loc
        window = item.get("time_window")
        field = f"{base}.time_window"
        if not isinstance(window, (list, tuple)) or len(window) != 2:
            raise InstanceFormatError(source, f"expected [start_hour, end_hour], got {window!r}", field=field)
        lo = _hours(window[0], source, field + "[0]")
        hi = _hours(window[1], source, field + "[1]")
        if hi < lo:
            # Upstream added the minute overflow to the shared hour without carrying it:
            # the start belongs to the previous hour.
            fixed = lo - 60
            if fixed < 0 or hi < fixed:
                raise InstanceFormatError(
                    source, f"inverted window {list(window)} cannot be repaired by moving its start back one hour",
                    field=field,
                )
            warnings.warn(
                f"{source}: {field} is inverted ({window[0]:g} > {window[1]:g} hours); "
                f"moved its start back one hour: [{fixed / 60:g}, {hi / 60:g}] hours",
                RealmRepairWarning,
                stacklevel=3,
            )
            lo = fixed
        if "deadline" not in item:
            raise InstanceFormatError(source, "missing required key", field=f"{base}.deadline")
        deadline = _number(item["deadline"], source, f"{base}.deadline", high=MAX_QUANTITY - 48 * 60)
        out.append(
            RideRequest(
                passenger_id=pid,
                pickup=stops["pickup"],
                dropoff=stops["dropoff"],
                pickup_window=(lo, hi),
                latest_dropoff=hi + int(round(deadline)),
            )
        )
    if not out:
        raise InstanceFormatError(source, "no ride requests; expected at least one", field="ride_requests")
    return out


def _parse_vehicles(data: dict, source: str, names: set[str]) -> list[Vehicle]:
    out: list[Vehicle] = []
    seen: set[str] = set()
    items = _list(data, "vehicles", source)
    if not items:
        raise InstanceFormatError(source, "needs at least one vehicle", field="vehicles")
    for k, item in enumerate(items):
        base = f"vehicles[{k}]"
        if not isinstance(item, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        vid = _id(item.get("vehicle_id"), source, f"{base}.vehicle_id", vehicle=True)
        if vid in seen:
            raise InstanceFormatError(source, f"vehicle id {vid!r} repeats", field=f"{base}.vehicle_id")
        seen.add(vid)
        loc = item.get("location")
        if loc not in names:
            raise InstanceFormatError(source, f"{loc!r} is not one of the locations", field=f"{base}.location")
        cap = item.get("capacity")
        if not is_number(cap) or too_large(cap) or cap < 1 or cap != int(cap):
            raise InstanceFormatError(
                source, f"expected a whole number in [1, {MAX_QUANTITY}], got {cap!r}", field=f"{base}.capacity"
            )
        fuel = item.get("fuel")
        if fuel is not None:
            fuel = _number(fuel, source, f"{base}.fuel")
        out.append(Vehicle(vehicle_id=vid, location=loc, capacity=int(cap), fuel=fuel))
    return out


def default_start_time(requests: list[RideRequest]) -> int:
    """Upstream files have no start time: one hour before the hour of the first window."""
    if not requests:
        return 0
    first = min(r.pickup_window[0] for r in requests)
    return max(0, (first // 60) * 60 - 60)


def upstream_p3_fields(data: Any, source: str) -> dict[str, Any]:
    """The keyword arguments of :class:`P3Instance` read from an upstream mapping."""
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    locations, roads = _parse_city(data, source)
    names = set(locations)
    requests = _parse_requests(data, source, names)
    vehicles = _parse_vehicles(data, source, names)
    start = data.get("start_time")
    start_time = _hours(start, source, "start_time") if start is not None else default_start_time(requests)
    return {
        "name": str(data.get("instance_id") or Path(str(source)).stem),
        "description": str(data.get("description", "")),
        "locations": locations,
        "roads": roads,
        "requests": requests,
        "vehicles": vehicles,
        "start_time": start_time,
    }


def from_upstream_p3(data: dict, source: str) -> P3Instance:
    """Convert a user's own upstream REALM-Bench P3 mapping into a :class:`P3Instance`.

    Window hours become minutes from midnight; ``deadline`` becomes
    ``latest_dropoff = window_end + deadline`` (see the module docstring). Repairs, each
    reported as a :class:`RealmRepairWarning`: an inverted window gets its start moved back one
    hour (the upstream minute-overflow bug); a missing ``b-a`` distance is filled from
    ``a-b``; non-integer minutes are rounded. Anything unusable raises
    :class:`InstanceFormatError` naming ``source`` and the field.
    """
    fields = upstream_p3_fields(data, source)
    try:
        return P3Instance(**fields)
    except ValidationError as exc:  # pragma: no cover - the checks above catch these first
        raise validation_error(exc, source) from None


def _hours_out(minutes: int) -> float:
    return minutes / 60.0


def _to_upstream(inst: P3Instance) -> dict[str, Any]:
    distances = {}
    for i, a in enumerate(inst.locations):
        for j, b in enumerate(inst.locations):
            if i != j and inst.roads[i][j] is not None:
                distances[f"{a}-{b}"] = int(inst.roads[i][j])
    return {
        "instance_id": inst.name,
        "city_map": {"locations": list(inst.locations), "distances": distances},
        "ride_requests": [
            {
                "passenger_id": r.passenger_id,
                "pickup": r.pickup,
                "dropoff": r.dropoff,
                "time_window": [_hours_out(r.pickup_window[0]), _hours_out(r.pickup_window[1])],
                "deadline": r.latest_dropoff - r.pickup_window[1],
            }
            for r in inst.requests
        ],
        "vehicles": [
            {
                "vehicle_id": v.vehicle_id,
                "location": v.location,
                "capacity": v.capacity,
                "fuel": v.fuel if v.fuel is not None else 100,
            }
            for v in inst.vehicles
        ],
        "start_time": _hours_out(inst.start_time),
        "description": inst.description or "Urban ride-sharing instance",
    }


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
def shipped_p3_names() -> list[str]:
    """Names of the shipped P3 instances, sorted."""
    return shipped_names(INSTANCE_DIR, "p3")


def load_p3(instance: str | Path | dict | P3Instance) -> P3Instance:
    """A P3 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return load_instance(instance, P3Instance, instance_dir=INSTANCE_DIR, problem="P3", from_mapping=from_mapping)


def from_mapping(data: Any, source: str) -> P3Instance:
    """Our own JSON (a dumped :class:`P3Instance`) or any upstream REALM-Bench P3/P4 mapping
    (a P4 file is read as its P3 problem: the same city and requests, without disruptions;
    :func:`~crab_gym.envs.realm.ridesharing.disruptions.load_p4` keeps them)."""
    if not is_upstream_for(data, source, ("P3", "P4"), "ride-sharing (P3/P4)"):
        return validate_model(P3Instance, data, source)
    return from_upstream_p3(data, source)
