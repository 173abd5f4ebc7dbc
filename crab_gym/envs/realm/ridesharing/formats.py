"""The files a P3/P4 instance comes in, and the loaders that tell them apart.

* crab_gym's own JSON: a :class:`~.model.P3Instance` / :class:`~.model.P4Instance` dumped as
  is (the shipped instances, 20 per problem in ``instances/p3`` and ``instances/p4``);
* a user's own upstream REALM-Bench P3/P4 file, converted by :func:`from_upstream_p3` /
  :func:`from_upstream_p4`.

:func:`load_p3` / :func:`load_p4` take a shipped name, a path to either kind of file, a
mapping or an instance.

Upstream shape (P3): ``city_map{locations, distances{"a-b": minutes}}``,
``ride_requests[{passenger_id, pickup, dropoff, time_window [start_hour, end_hour], deadline}]``,
``vehicles[{vehicle_id, location, capacity, fuel}]``; P4 adds ``disruptions[{type, route |
location, start_time (clock hour), duration (minutes), delay (minutes, traffic_delay only),
impact}]`` (upstream accidents name their place in ``location``; ``route`` is accepted too).

Readings (see :mod:`crab_gym.envs.realm.ridesharing.model`): window hours become minutes from
midnight; ``deadline`` becomes ``latest_dropoff = window_end + deadline``; a missing start time
is one hour before the hour of the first window. Repairs, each reported as a
:class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`: an inverted window gets its
start moved back one hour (the upstream minute-overflow bug); a missing ``b-a`` distance is
filled from ``a-b``; non-integer minutes are rounded. Anything unusable raises
:class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` naming the source and the field.

The writer is :meth:`~crab_gym.envs.realm.ridesharing.model.P3Instance.to_upstream`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.clock_hours import MAX_HOUR, hour_window, hours_to_minutes
from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError
from crab_gym.envs.realm.common.distances import split_pair, whole_minutes
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, is_number, too_large
from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model, validation_error
from crab_gym.envs.realm.common.upstream import detect_problem, is_upstream_for, looks_upstream
from crab_gym.envs.realm.ridesharing.disruptions import (
    DISRUPTION_ADAPTER,
    DISRUPTION_TYPES,
    Disruption,
    check_disruption_fits,
)
from crab_gym.envs.realm.ridesharing.model import (
    INSTANCE_DIRS,
    P3Instance,
    P4Instance,
    RideRequest,
    Vehicle,
    id_problem,
)
from crab_gym.envs.realm.ridesharing.network import NO_ROAD, RoadNetwork


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P3
# ---------------------------------------------------------------------------------------
def _number(value: Any, source: str, field: str, *, low: float = 0.0, high: float = MAX_QUANTITY) -> float:
    if not is_number(value) or too_large(value) or not low <= value <= high:
        got = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}..."
        bounds = ", ".join(str(int(x)) if x == int(x) else f"{x:g}" for x in (low, high))
        raise InstanceFormatError(source, f"expected a number in [{bounds}], got {got}", field=field)
    return float(value)


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


def _new_id(item: Any, base: str, source: str, seen: set[str], *, vehicle: bool) -> str:
    """The id of the object ``item`` (field ``base``), which must not repeat one in ``seen``."""
    if not isinstance(item, dict):
        raise InstanceFormatError(source, "expected an object", field=base)
    what = "vehicle" if vehicle else "passenger"
    field = f"{base}.{what}_id"
    value = _id(item.get(f"{what}_id"), source, field, vehicle=vehicle)
    if value in seen:
        raise InstanceFormatError(source, f"{what} id {value!r} repeats", field=field)
    seen.add(value)
    return value


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
        pair = split_pair(str(key), locations)
        if pair is None:
            raise InstanceFormatError(source, "key is not 'from-to' over known locations", field=field)
        raw[idx[pair[0]]][idx[pair[1]]] = _number(val, source, field)
    roads = whole_minutes(
        raw, locations, source, "city_map.distances", missing="none", note=" (roads are two-way)", stacklevel=3
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
        pid = _new_id(item, base, source, seen, vehicle=False)
        stops = {}
        for key in ("pickup", "dropoff"):
            loc = item.get(key)
            if not isinstance(loc, str) or loc not in names:
                raise InstanceFormatError(source, f"{loc!r} is not one of the locations", field=f"{base}.{key}")
            stops[key] = loc
        window = item.get("time_window")
        field = f"{base}.time_window"
        lo, hi = hour_window(window, source, field)
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
        deadline = _number(item["deadline"], source, f"{base}.deadline", high=MAX_QUANTITY - MAX_HOUR * 60)
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
        vid = _new_id(item, base, source, seen, vehicle=True)
        loc = item.get("location")
        if not isinstance(loc, str) or loc not in names:
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
    start_time = hours_to_minutes(start, source, "start_time") if start is not None else default_start_time(requests)
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
    ``latest_dropoff = window_end + deadline`` (the reading of
    :mod:`crab_gym.envs.realm.ridesharing.model`). Repairs, each
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


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P4: the P3 keys plus ``disruptions``
# ---------------------------------------------------------------------------------------
def _parse_upstream_disruption(item: Any, k: int, source: str, locations: list[str], roads) -> Disruption:
    base = f"disruptions[{k}]"
    if not isinstance(item, dict):
        raise InstanceFormatError(source, "expected an object", field=base)
    kind = item.get("type")
    if kind not in DISRUPTION_TYPES:
        raise InstanceFormatError(
            source, f"unknown type {kind!r}; expected one of {', '.join(DISRUPTION_TYPES)}", field=f"{base}.type"
        )
    if "start_time" not in item:
        raise InstanceFormatError(source, "missing required key", field=f"{base}.start_time")
    if "duration" not in item:
        raise InstanceFormatError(source, "missing required key", field=f"{base}.duration")
    start = hours_to_minutes(item["start_time"], source, f"{base}.start_time")
    duration = int(round(_number(item["duration"], source, f"{base}.duration")))
    fields: dict[str, Any] = {"type": kind, "start": start, "duration": duration, "impact": str(item.get("impact", ""))}
    where = item.get("location") if kind == "accident" else item.get("route")
    if where is None:
        where = item.get("route") if kind == "accident" else item.get("location")
    key = "location" if kind == "accident" else "route"
    if not isinstance(where, str) or not where:
        what = "a place" if kind == "accident" else 'a road "a-b"'
        raise InstanceFormatError(source, f"expected {what}", field=f"{base}.{key}")
    fields[key] = where
    if "delay" in item:
        fields["delay"] = int(round(_number(item["delay"], source, f"{base}.delay")))
    elif kind == "traffic_delay":
        raise InstanceFormatError(source, "a traffic_delay needs 'delay' (minutes)", field=f"{base}.delay")
    if kind == "road_closure":
        fields.pop("delay", None)
    try:
        d = DISRUPTION_ADAPTER.validate_python(fields)
        check_disruption_fits(d, locations, roads)
    except (ValidationError, InvalidDisruptionError) as exc:
        raise InstanceFormatError(source, str(exc).splitlines()[0], field=f"{base}.{key}") from None
    return d


def from_upstream_p4(data: dict, source: str) -> P4Instance:
    """Convert a user's own upstream REALM-Bench P4 mapping into a :class:`P4Instance`.

    Everything of :func:`from_upstream_p3` (units, the
    inverted-window repair, the ``deadline`` reading) plus the disruptions: ``start_time``
    hours become minutes from midnight; ``duration`` and ``delay`` are minutes.
    """
    fields = upstream_p3_fields(data, source)
    raw = data.get("disruptions", [])
    if not isinstance(raw, list):
        raise InstanceFormatError(source, f"expected a list, got {type(raw).__name__}", field="disruptions")
    fields["disruptions"] = [
        _parse_upstream_disruption(item, k, source, fields["locations"], fields["roads"])
        for k, item in enumerate(raw)
    ]
    try:
        return P4Instance(**fields)
    except ValidationError as exc:  # pragma: no cover - the checks above catch these first
        raise validation_error(exc, source) from None


# ---------------------------------------------------------------------------------------
# Any mapping: our own JSON or upstream's
# ---------------------------------------------------------------------------------------
def p3_from_mapping(data: Any, source: str) -> P3Instance:
    """Our own JSON (a dumped :class:`P3Instance`) or any upstream REALM-Bench P3/P4 mapping
    (a P4 file is read as its P3 problem: the same city and requests, without disruptions;
    :func:`p4_from_mapping` keeps them)."""
    if not is_upstream_for(data, source, ("P3", "P4"), "ride-sharing (P3/P4)"):
        return validate_model(P3Instance, data, source)
    return from_upstream_p3(data, source)


def p4_from_mapping(data: Any, source: str) -> P4Instance:
    """Our own P4 JSON, an upstream P4 file (with its disruptions), else anything
    :func:`p3_from_mapping` reads (as a P4 instance without disruptions)."""
    if isinstance(data, dict) and "disruptions" in data and not looks_upstream(data):
        return validate_model(P4Instance, data, source)
    if detect_problem(data) == "P4":
        return from_upstream_p4(data, source)
    return P4Instance.from_p3(p3_from_mapping(data, source))


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
def shipped_p3_names() -> list[str]:
    """Names of the shipped P3 instances, sorted."""
    return shipped_names(INSTANCE_DIRS["p3"], "p3")


def shipped_p4_names() -> list[str]:
    """Names of the shipped P4 instances, sorted."""
    return shipped_names(INSTANCE_DIRS["p4"], "p4")


def load_p3(instance: str | Path | dict | P3Instance) -> P3Instance:
    """A P3 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return load_instance(instance, P3Instance, instance_dir=INSTANCE_DIRS["p3"], problem="P3", from_mapping=p3_from_mapping)


def load_p4(instance: str | Path | dict | P3Instance) -> P4Instance:
    """A P4 instance from a shipped name, a JSON path (ours or upstream's), a mapping or an
    object (a plain P3 instance becomes a P4 instance without disruptions)."""
    if isinstance(instance, P3Instance) and not isinstance(instance, P4Instance):
        return P4Instance.from_p3(instance)
    return load_instance(instance, P4Instance, instance_dir=INSTANCE_DIRS["p4"], problem="P4", from_mapping=p4_from_mapping)
