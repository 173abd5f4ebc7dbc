"""The files a P5/P8 instance comes in, and the loaders that tell them apart.

* crab_gym's own JSON: a :class:`~.model.WeddingInstance` / :class:`~.model.P8Instance` dumped
  as is (the shipped instances in ``instances/p5`` and ``instances/p8``);
* a user's own upstream REALM-Bench P5/P8 file, converted by :func:`from_upstream_p5` /
  :func:`from_upstream_p8`.

Upstream's wedding files are degenerate (see ``docs/wedding.md``): the vehicles start at places
that are not in ``travel_times``, errands are bare words, only two shop windows exist, and
P8's disruptions strike roads named after places missing from the map. The reader completes
the model with the documented defaults below, and reports every fill once, as a
:class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`:

* ``travel_times`` lists one direction per pair: roads are two-way (one warning);
* a place named but not in the map (a vehicle's ``location``, a shop, a road of a disruption)
  is added with the roads of :data:`DEFAULT_ROADS` (unknown names: 15 minutes to the venue);
* a place name is also matched by a word of a map label (``airport`` = ``B``, "Boston
  Airport");
* a bare errand is done at the shop of :data:`ERRAND_SHOPS`, open :data:`DEFAULT_HOURS`,
  with :data:`DEFAULT_SERVICE` minutes of service; ``gift_store_opens`` and
  ``tailor_closes`` add the errands ``gift`` (at the gift shop, from that hour) and
  ``tailor`` (at the tailor, until that hour);
* vehicles become available at :data:`DEFAULT_START`; a guest with a car drives it
  (``car_capacity`` counts the driver, so it seats one fewer), from their arrival time;
* a ``traffic_delay`` without a duration lasts until the wedding deadline.

Anything unusable raises :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError`
naming the source and the field.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.limits import is_number, too_large
from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model, validation_error
from crab_gym.envs.realm.common.upstream import detect_problem, is_upstream_for, looks_upstream
from crab_gym.envs.realm.wedding.disruptions import DISRUPTION_ADAPTER, DISRUPTION_TYPES
from crab_gym.envs.realm.wedding.model import INSTANCE_DIRS, P8Instance, WeddingInstance

#: Roads of a place the upstream map lacks: name -> {other place or role: minutes}. Roles
#: ``venue`` and ``airport`` are the map's places whose labels say so.
DEFAULT_ROADS: dict[str, dict[str, int]] = {
    "hotel": {"venue": 10, "airport": 25, "church": 8},
    "church": {"venue": 12, "hotel": 8},
    "reception_venue": {"venue": 5},
    "florist": {"venue": 12},
    "bakery": {"venue": 15},
    "party_store": {"venue": 18},
    "photo_studio": {"venue": 14},
    "music_shop": {"venue": 10},
}
#: Minutes to the venue of a place neither the map nor :data:`DEFAULT_ROADS` knows.
FALLBACK_ROAD = 15
#: Where a bare upstream errand is done.
ERRAND_SHOPS = {"flowers": "florist", "cake": "bakery", "decorations": "party_store",
                "photographer": "photo_studio", "music": "music_shop"}
DEFAULT_HOURS = (9 * 60, 18 * 60)
DEFAULT_SERVICE = 15
DEFAULT_START = 9 * 60
DEFAULT_PHOTO = 15 * 60
DEFAULT_DEADLINE = 18 * 60


def _warn(source: str, message: str) -> None:
    warnings.warn(f"{source}: {message}", RealmRepairWarning, stacklevel=4)


def _clock(value: Any, source: str, field: str) -> int:
    """``"HH:MM"`` (or clock hours as a number) -> minutes from midnight."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value)
        if match and int(match[1]) <= 47 and int(match[2]) < 60:
            return int(match[1]) * 60 + int(match[2])
    elif is_number(value) and not too_large(value) and 0 <= value <= 48:
        return int(round(value * 60))
    raise InstanceFormatError(source, f"expected a clock time 'HH:MM', got {value!r}", field=field)


def _minutes(value: Any, source: str, field: str) -> int:
    if not is_number(value) or too_large(value) or value < 0:
        raise InstanceFormatError(source, f"expected minutes (a number >= 0), got {value!r}", field=field)
    return int(round(value))


def _name(value: Any, source: str, field: str) -> str:
    """An upstream name as an id: lower case, words joined by ``_``."""
    if not isinstance(value, str) or not value.strip():
        raise InstanceFormatError(source, f"expected a non-empty name, got {value!r}", field=field)
    ident = re.sub(r"\W+", "_", value.strip().lower()).strip("_")
    if not ident or not ident.isidentifier():
        ident = f"x_{ident}"
    return ident


def _list(data: dict, key: str, source: str) -> list:
    value = data.get(key)
    if not isinstance(value, list):
        raise InstanceFormatError(source, f"expected a list, got {type(value).__name__}", field=key)
    return value


class _Town:
    """The places and roads being read, growing as upstream names places it lacks."""

    def __init__(self, data: dict, source: str) -> None:
        self.source = source
        locs = data.get("locations")
        if not isinstance(locs, dict) or not locs or not all(isinstance(k, str) and k for k in locs):
            raise InstanceFormatError(source, 'expected an object {"key": "name"}', field="locations")
        self.places = list(locs)
        self.labels = {k: str(v) for k, v in locs.items()}
        self.roads: dict[tuple[str, str], int] = {}
        times = data.get("travel_times")
        if not isinstance(times, dict):
            raise InstanceFormatError(source, 'expected an object {"a-b": minutes}', field="travel_times")
        one_way = 0
        for key, val in times.items():
            field = f"travel_times[{key!r}]"
            parts = str(key).split("-")
            if len(parts) != 2 or parts[0] not in self.labels or parts[1] not in self.labels:
                raise InstanceFormatError(source, "key is not 'from-to' over the keys of locations", field=field)
            a, b = parts
            self.roads[a, b] = _minutes(val, source, field)
            one_way += (b, a) not in self.roads
        missing = [(b, a) for (a, b) in list(self.roads) if (b, a) not in self.roads]
        for b, a in missing:
            self.roads[b, a] = self.roads[a, b]
        if missing:
            _warn(source, f"travel_times gives one direction for {len(missing)} pairs; roads are two-way, "
                  "so each time was used both ways")
        self.venue = self._role("venue", "venue", required=True)

    def _role(self, word: str, field: str, required: bool = False) -> str | None:
        hits = [k for k, label in self.labels.items() if word in re.findall(r"[a-z]+", label.lower())]
        if len(hits) == 1:
            return hits[0]
        if required:
            raise InstanceFormatError(self.source, f"no single place whose name says {word!r}", field="locations")
        return None

    def place(self, name: Any, field: str) -> str:
        """The place ``name`` refers to: a map key, a word of one map label, or a place added
        with default roads (reported)."""
        if not isinstance(name, str) or not name:
            raise InstanceFormatError(self.source, f"expected a place name, got {name!r}", field=field)
        if name in self.labels:
            return name
        role = self._role(name.lower(), field)
        if role is not None:
            _warn(self.source, f"{field}: {name!r} is not a key of locations; read as {role!r} "
                  f"({self.labels[role]!r})")
            return role
        ident = _name(name, self.source, field)
        if ident not in self.labels:
            self._add(ident, field)
        return ident

    def _add(self, ident: str, field: str) -> None:
        known = DEFAULT_ROADS.get(ident, {"venue": FALLBACK_ROAD})
        self.places.append(ident)
        self.labels[ident] = ident.replace("_", " ")
        added = []
        for other, minutes in known.items():
            target = {"venue": self.venue, "airport": self._role("airport", field)}.get(other, other)
            if target is None:
                continue
            if target not in self.labels:
                self._add(target, field)
            self.roads[ident, target] = self.roads[target, ident] = minutes
            added.append(f"{target} {minutes} min")
        _warn(self.source, f"{field}: place {ident!r} is not in the map; added it with default roads ({', '.join(added)})")

    def road(self, route: Any, field: str) -> str:
        """A route "a-b" over the places, adding the road with default minutes if missing."""
        parts = route.split("-") if isinstance(route, str) else []
        if len(parts) != 2:
            raise InstanceFormatError(self.source, f"expected a road 'a-b', got {route!r}", field=field)
        a, b = (self.place(p, field) for p in parts)
        if (a, b) not in self.roads:
            self.roads[a, b] = self.roads[b, a] = FALLBACK_ROAD
            _warn(self.source, f"{field}: no road joins {a} and {b}; added one of {FALLBACK_ROAD} min")
        return f"{a}-{b}"

    def matrix(self) -> list[list[int | None]]:
        return [[0 if a == b else self.roads.get((a, b)) for b in self.places] for a in self.places]


def _constraint_clock(cons: dict, key: str, default: int, source: str) -> int:
    """``constraints.<key>`` as minutes from midnight (missing: ``default``, with a warning)."""
    if key in cons:
        return _clock(cons[key], source, f"constraints.{key}")
    _warn(source, f"constraints.{key} missing; used {default // 60:02d}:{default % 60:02d}")
    return default


def _arrival(item: dict, source: str, field: str, deadline: int) -> int:
    """A guest's ``arrival_time``, by the wedding deadline (after it nothing can be served)."""
    arrival = _clock(item.get("arrival_time"), source, field)
    if arrival > deadline:
        raise InstanceFormatError(source, f"the guest lands at {item.get('arrival_time')}, after the wedding deadline "
                                  f"({deadline // 60:02d}:{deadline % 60:02d})", field=field)
    return arrival


def _guests(data: dict, source: str, town: _Town, deadline: int) -> tuple[list[dict], list[dict]]:
    """The guests who need a ride, and the guests' own cars (a vehicle each, from landing)."""
    guests, vehicles = [], []
    for k, item in enumerate(_list(data, "guests", source)):
        base = f"guests[{k}]"
        if not isinstance(item, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        gid = _name(item.get("name"), source, f"{base}.name")
        place = town.place(item.get("location"), f"{base}.location")
        arrival = _arrival(item, source, f"{base}.arrival_time", deadline)
        if item.get("has_car"):
            seats = item.get("car_capacity", 4)
            if not is_number(seats) or too_large(seats) or seats < 2 or seats != int(seats):
                raise InstanceFormatError(source, f"expected a whole number >= 2, got {seats!r}", field=f"{base}.car_capacity")
            _warn(source, f"{base}: {gid} drives their own car from {place} at {item.get('arrival_time')}; "
                  f"car_capacity {int(seats)} counts the driver, so it seats {int(seats) - 1}")
            vehicles.append(dict(vehicle_id=gid, place=place, capacity=int(seats) - 1, available=arrival, driver=gid))
        elif item.get("needs_ride", True):
            guests.append(dict(guest_id=gid, place=place, arrival=arrival))
        else:
            _warn(source, f"{base}: {gid} needs no ride and has no car; assumed to reach the venue on their own")
    return guests, vehicles


def _add_vehicles(data: dict, source: str, town: _Town, vehicles: list[dict]) -> None:
    """The listed vehicles, inserted before the guests' cars, available from the day's start."""
    raw_vehicles = _list(data, "vehicles", source)
    if raw_vehicles:
        _warn(source, f"vehicles have no start time; every vehicle is available from "
              f"{DEFAULT_START // 60:02d}:{DEFAULT_START % 60:02d}")
    for k, item in enumerate(raw_vehicles):
        base = f"vehicles[{k}]"
        if not isinstance(item, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        cap = item.get("capacity")
        if not is_number(cap) or too_large(cap) or cap < 1 or cap != int(cap):
            raise InstanceFormatError(source, f"expected a whole number >= 1, got {cap!r}", field=f"{base}.capacity")
        vehicles.insert(k, dict(vehicle_id=_name(item.get("id"), source, f"{base}.id"),
                                   place=town.place(item.get("location"), f"{base}.location"),
                                   capacity=int(cap), available=DEFAULT_START))


def _errands(data: dict, source: str, town: _Town, cons: dict, deadline: int) -> list[dict]:
    """The listed errands (at their shops, default hours), then those the constraints imply."""
    errands = []
    for k, item in enumerate(_list(data, "errands", source)):
        base = f"errands[{k}]"
        eid = _name(item, source, base)
        shop = ERRAND_SHOPS.get(eid, f"{eid}_shop")
        place = town.place(shop, base)
        lo, hi = DEFAULT_HOURS[0], min(DEFAULT_HOURS[1], deadline)
        _warn(source, f"{base} {item!r} has no place or hours; done at {place} ({lo // 60:02d}:00-{hi // 60:02d}:00) "
              f"with {DEFAULT_SERVICE} min of service")
        errands.append(dict(errand_id=eid, shop=place, opens=lo, closes=hi, service=DEFAULT_SERVICE))
    for key, eid, word in (("gift_store_opens", "gift", "gift"), ("tailor_closes", "tailor", "tailor")):
        if key not in cons:
            continue
        minute = _clock(cons[key], source, f"constraints.{key}")
        shop = town._role(word, f"constraints.{key}") or town.place(f"{word}_shop", f"constraints.{key}")
        lo, hi = (minute, deadline) if key.endswith("opens") else (DEFAULT_HOURS[0], minute)
        _warn(source, f"constraints.{key}: added the errand {eid!r} at {shop} ({lo // 60:02d}:{lo % 60:02d}-"
              f"{hi // 60:02d}:{hi % 60:02d}, {DEFAULT_SERVICE} min of service)")
        errands.append(dict(errand_id=eid, shop=shop, opens=lo, closes=hi, service=DEFAULT_SERVICE))
    return errands


def _fields(data: Any, source: str) -> tuple[dict[str, Any], _Town]:
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    town = _Town(data, source)
    cons = data.get("constraints", {})
    if not isinstance(cons, dict):
        raise InstanceFormatError(source, "expected an object", field="constraints")
    photo = _constraint_clock(cons, "photo_time", DEFAULT_PHOTO, source)
    deadline = _constraint_clock(cons, "wedding_deadline", DEFAULT_DEADLINE, source)
    guests, vehicles = _guests(data, source, town, deadline)
    _add_vehicles(data, source, town, vehicles)
    errands = _errands(data, source, town, cons, deadline)
    fields = {
        "name": str(data.get("instance_id") or Path(str(source)).stem),
        "description": str(data.get("description", "")),
        "venue": town.venue, "guests": guests, "errands": errands, "vehicles": vehicles,
        "photo_time": photo, "deadline": deadline,
    }
    return fields, town


def _disruptions(data: dict, source: str, town: _Town, deadline: int) -> list[Any]:
    raw = data.get("disruptions", [])
    if not isinstance(raw, list):
        raise InstanceFormatError(source, f"expected a list, got {type(raw).__name__}", field="disruptions")
    out = []
    for k, item in enumerate(raw):
        base = f"disruptions[{k}]"
        if not isinstance(item, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        kind = item.get("type")
        if kind not in DISRUPTION_TYPES:
            raise InstanceFormatError(source, f"unknown type {kind!r}; expected one of {', '.join(DISRUPTION_TYPES)}",
                                      field=f"{base}.type")
        start = _clock(item.get("start_time"), source, f"{base}.start_time")
        fields: dict[str, Any] = {"type": kind, "route": town.road(item.get("route"), f"{base}.route"), "start": start}
        if kind == "traffic_delay":
            fields["delay"] = _minutes(item.get("delay"), source, f"{base}.delay")
        if "duration" in item:
            fields["duration"] = _minutes(item["duration"], source, f"{base}.duration")
        elif kind == "traffic_delay":
            fields["duration"] = max(0, deadline - start)
            _warn(source, f"{base}.duration missing; the delay lasts until the deadline ({fields['duration']} min)")
        else:
            raise InstanceFormatError(source, "missing required key", field=f"{base}.duration")
        out.append(DISRUPTION_ADAPTER.validate_python(fields))
    return out


def _build(model: type[WeddingInstance], fields: dict[str, Any], town: _Town, source: str) -> Any:
    try:
        return model(**fields, places=town.places, labels=town.labels, roads=town.matrix())
    except ValidationError as exc:
        raise validation_error(exc, source) from None
    except FieldProblem as exc:  # pragma: no cover - pydantic wraps these
        raise InstanceFormatError(source, exc.problem, field=exc.field) from None


def from_upstream_p5(data: Any, source: str) -> WeddingInstance:
    """Convert a user's own upstream REALM-Bench P5 (or P8, without its disruptions) mapping."""
    fields, town = _fields(data, source)
    return _build(WeddingInstance, fields, town, source)


def from_upstream_p8(data: Any, source: str) -> P8Instance:
    """Convert a user's own upstream REALM-Bench P8 mapping, disruptions included."""
    fields, town = _fields(data, source)
    fields["disruptions"] = _disruptions(data, source, town, fields["deadline"])
    return _build(P8Instance, fields, town, source)


def p5_from_mapping(data: Any, source: str) -> WeddingInstance:
    """Our own JSON, or an upstream P5 or P8 file (read as its P5 problem)."""
    if not is_upstream_for(data, source, ("P5", "P8"), "wedding (P5/P8)"):
        return validate_model(WeddingInstance, data, source)
    return from_upstream_p5(data, source)


def p8_from_mapping(data: Any, source: str) -> P8Instance:
    """Our own P8 JSON, an upstream P8 file, else anything P5 reads (without disruptions)."""
    if isinstance(data, dict) and "disruptions" in data and not looks_upstream(data):
        return validate_model(P8Instance, data, source)
    if detect_problem(data) == "P8":
        return from_upstream_p8(data, source)
    return P8Instance.from_p5(p5_from_mapping(data, source))


def shipped_p5_names() -> list[str]:
    return shipped_names(INSTANCE_DIRS["p5"], "p5")


def shipped_p8_names() -> list[str]:
    return shipped_names(INSTANCE_DIRS["p8"], "p8")


def load_p5(instance: str | Path | dict | WeddingInstance) -> WeddingInstance:
    """A P5 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    if isinstance(instance, WeddingInstance):
        return instance
    return load_instance(instance, WeddingInstance, instance_dir=INSTANCE_DIRS["p5"], problem="P5",
                         from_mapping=p5_from_mapping)


def load_p8(instance: str | Path | dict | WeddingInstance) -> P8Instance:
    """A P8 instance likewise (a P5 instance becomes a P8 instance without disruptions)."""
    if isinstance(instance, WeddingInstance) and not isinstance(instance, P8Instance):
        return P8Instance.from_p5(instance)
    return load_instance(instance, P8Instance, instance_dir=INSTANCE_DIRS["p8"], problem="P8",
                         from_mapping=p8_from_mapping)
