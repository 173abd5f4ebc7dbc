"""The files a P7 instance comes in, and the loader that tells them apart.

* crab_gym's own JSON: a :class:`~.model.P7Instance` dumped as is (the shipped instances);
* a user's own upstream REALM-Bench P7 file (``regions``, ``resources``, ``personnel``,
  ``vehicles``, ``deadlines``, ``disruption_scenarios``), converted by
  :func:`from_upstream_p7`.

Upstream leaves out much of the model; the reader fills it in and reports each fill as a
:class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`:

* needs are names only (``["medical", "food"]``): quantities are the population times the
  per-person rates of :data:`~.model.NEED_PER_PERSON` (``medical`` is read as
  ``medical_supplies``);
* the base has no coordinates: it is put at the centroid of the regions; latitude and
  longitude become km on a local flat map (equirectangular at the mean latitude);
* speeds are words: ``fast`` is 200 km/h, ``medium`` 100 km/h, ``slow`` 60 km/h (a number is
  taken as km/h);
* there is no clock: the relief starts at 08:00 and the horizon is the longest deadline
  (24 h) after it; deadlines (hours) become minutes after the start;
* disruptions have no start: a weather event starts one hour after the start, a shortage
  two hours after it; a weather event's ``duration`` is in hours; times are rounded up to
  the 30-minute grid.

Anything unusable raises :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError`
naming the file and the field.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, is_number, too_large
from crab_gym.envs.realm.common.loading import validation_error
from crab_gym.envs.realm.disaster_relief.model import (
    DEADLINE_HOURS,
    INSTANCE_DIR,
    RESOURCES,
    SEVERITY_WEIGHTS,
    P7Instance,
    Region,
    ResourceShortage,
    Vehicle,
    WeatherEvent,
    need_of,
)

#: Upstream's speed words, in km/h.
SPEED_WORDS: dict[str, float] = {"fast": 200.0, "medium": 100.0, "slow": 60.0}
#: Upstream need names that are not our resource names.
NEED_ALIASES: dict[str, str] = {"medical": "medical_supplies"}
#: The reader's clock: start minute, grid, and when upstream's disruptions strike (after the start).
UPSTREAM_START, UPSTREAM_SLOT = 8 * 60, 30
WEATHER_AFTER, SHORTAGE_AFTER = 60, 120
EARTH_KM = 6371.0


def _fill(source: str, field: str, what: str) -> None:
    warnings.warn(f"{source}: {field}: {what}", RealmRepairWarning, stacklevel=3)


def _number(value: Any, source: str, field: str, *, low: float = 0.0, high: float = MAX_QUANTITY) -> float:
    if not is_number(value) or too_large(value) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise InstanceFormatError(source, f"expected a number in [{low:g}, {high:g}], got {shown}", field=field)
    return float(value)


def _object(value: Any, source: str, field: str) -> dict:
    if not isinstance(value, dict):
        raise InstanceFormatError(source, f"expected an object, got {type(value).__name__}", field=field)
    return value


def _list(value: Any, source: str, field: str) -> list:
    if not isinstance(value, list) or not value:
        raise InstanceFormatError(source, "expected a non-empty list", field=field)
    return value


def _up(minutes: float) -> int:
    """Minutes rounded up to the reader's grid."""
    return int(UPSTREAM_SLOT * math.ceil(minutes / UPSTREAM_SLOT - 1e-9))


def _deadlines(data: dict, source: str) -> dict[str, float]:
    raw = data.get("deadlines")
    if raw is None:
        _fill(source, "deadlines", f"missing; used {DEADLINE_HOURS} hours")
        return dict(DEADLINE_HOURS)
    raw = _object(raw, source, "deadlines")
    out = {}
    for sev, hours in DEADLINE_HOURS.items():
        if sev in raw:
            out[sev] = _number(raw[sev], source, f"deadlines.{sev}", high=24 * 365)
        else:
            _fill(source, f"deadlines.{sev}", f"missing; used {hours} hours")
            out[sev] = float(hours)
    return out


def _regions(data: dict, source: str, deadlines: dict[str, float]) -> list[Region]:
    items = _list(data.get("regions"), source, "regions")
    places = []
    for i, item in enumerate(items):
        f = f"regions[{i}]"
        item = _object(item, source, f)
        loc = _object(item.get("location"), source, f"{f}.location")
        lat = _number(loc.get("lat"), source, f"{f}.location.lat", low=-90, high=90)
        lon = _number(loc.get("lon"), source, f"{f}.location.lon", low=-180, high=180)
        places.append((lat, lon))
    lat0 = sum(p[0] for p in places) / len(places)
    lon0 = sum(p[1] for p in places) / len(places)
    _fill(source, "base", f"no coordinates; put at the centroid of the regions (lat {lat0:.4f}, lon {lon0:.4f})")
    regions = []
    for i, item in enumerate(items):
        f = f"regions[{i}]"
        rid = item.get("id")
        if not isinstance(rid, str) or not rid:
            raise InstanceFormatError(source, f"expected a non-empty string, got {rid!r}", field=f"{f}.id")
        sev = item.get("severity")
        if not isinstance(sev, str) or sev not in SEVERITY_WEIGHTS:
            raise InstanceFormatError(source, f"expected one of {', '.join(SEVERITY_WEIGHTS)}, got {sev!r}",
                                      field=f"{f}.severity")
        pop = int(_number(item.get("population"), source, f"{f}.population"))
        names = _list(item.get("needs"), source, f"{f}.needs")
        needs = {}
        for j, name in enumerate(names):
            res = NEED_ALIASES.get(name, name) if isinstance(name, str) else name
            if res not in RESOURCES:
                raise InstanceFormatError(source, f"unknown need {name!r}; known: {', '.join(RESOURCES)}, medical",
                                          field=f"{f}.needs[{j}]")
            needs[res] = max(1, need_of(pop, res))
        _fill(source, f"{f}.needs", "no quantities; derived from the population "
              f"({pop}): " + ", ".join(f"{k} {q}" for k, q in needs.items()))
        lat, lon = places[i]
        x = math.radians(lon - lon0) * math.cos(math.radians(lat0)) * EARTH_KM
        y = math.radians(lat - lat0) * EARTH_KM
        regions.append(Region(id=rid, severity=sev, population=pop, x=round(x, 1), y=round(y, 1), needs=needs,
                              deadline=UPSTREAM_START + _up(deadlines[sev] * 60)))
    return regions


def _vehicles(data: dict, source: str) -> list[Vehicle]:
    out = []
    for i, item in enumerate(_list(data.get("vehicles"), source, "vehicles")):
        f = f"vehicles[{i}]"
        item = _object(item, source, f)
        vid = item.get("id")
        if not isinstance(vid, str) or not vid:
            raise InstanceFormatError(source, f"expected a non-empty string, got {vid!r}", field=f"{f}.id")
        capacity = _number(item.get("capacity"), source, f"{f}.capacity", low=1)
        speed = item.get("speed")
        if isinstance(speed, str) and speed in SPEED_WORDS:
            _fill(source, f"{f}.speed", f"{speed!r} read as {SPEED_WORDS[speed]:g} km/h")
            kmh = SPEED_WORDS[speed]
        elif is_number(speed):
            kmh = _number(speed, source, f"{f}.speed", low=1e-3, high=10_000)
        else:
            raise InstanceFormatError(source, f"expected km/h or one of {', '.join(SPEED_WORDS)}, got {speed!r}",
                                      field=f"{f}.speed")
        where = item.get("location", "base")
        if where != "base":
            _fill(source, f"{f}.location", f"{where!r} is not a known place; the vehicle starts at the base")
        if capacity != int(capacity):
            _fill(source, f"{f}.capacity", f"{capacity:g} rounded down to {int(capacity)}")
        out.append(Vehicle(id=vid, type=_vehicle_type(item, source, f), capacity=int(capacity), speed_kmh=kmh))
    return out


def _vehicle_type(item: dict, source: str, field: str) -> str:
    """A vehicle's ``type`` (a name: it labels the vehicle), ``"vehicle"`` when missing (reported)."""
    if "type" not in item:
        _fill(source, f"{field}.type", "missing; used 'vehicle'")
        return "vehicle"
    kind = item["type"]
    if not isinstance(kind, str) or not kind.strip():
        raise InstanceFormatError(source, f"expected a non-empty name, got {kind!r}", field=f"{field}.type")
    return kind


def _disruptions(data: dict, source: str, region_ids: list[str]) -> list[Any]:
    raw = data.get("disruption_scenarios", [])
    if not isinstance(raw, list):
        raise InstanceFormatError(source, "expected a list", field="disruption_scenarios")
    out: list[Any] = []
    for i, item in enumerate(raw):
        f = f"disruption_scenarios[{i}]"
        item = _object(item, source, f)
        kind = item.get("type")
        if kind == "weather_event":
            region = item.get("region")
            if region not in region_ids:
                raise InstanceFormatError(source, f"{region!r} is not one of the regions", field=f"{f}.region")
            hours = _number(item.get("duration"), source, f"{f}.duration", high=24 * 365)
            start = UPSTREAM_START + WEATHER_AFTER
            _fill(source, f"{f}.start", f"no start; the block starts at {start // 60:02d}:{start % 60:02d}, "
                  f"for {hours:g} h")
            out.append(WeatherEvent(region=region, start=start, duration=_up(hours * 60),
                                    impact=str(item.get("impact", "transport_blocked"))))
        elif kind == "resource_shortage":
            res = item.get("resource")
            if not isinstance(res, str) or NEED_ALIASES.get(res, res) not in RESOURCES:
                raise InstanceFormatError(source, f"unknown resource {item.get('resource')!r}", field=f"{f}.resource")
            res = NEED_ALIASES.get(res, res)
            fraction = _number(item.get("shortage"), source, f"{f}.shortage", high=1.0)
            start = UPSTREAM_START + SHORTAGE_AFTER
            _fill(source, f"{f}.start", f"no start; the shortage strikes at {start // 60:02d}:{start % 60:02d}")
            out.append(ResourceShortage(resource=res, start=start, fraction=fraction))
        else:
            raise InstanceFormatError(source, f"unknown disruption type {kind!r}; known: weather_event, "
                                      "resource_shortage", field=f"{f}.type")
    return out


def from_upstream_p7(data: Any, source: str) -> P7Instance:
    """Convert a user's own upstream REALM-Bench P7 mapping into a :class:`P7Instance`
    (fills reported as warnings; see the module docstring)."""
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    try:
        return _convert(data, source)
    except ValidationError as exc:  # a value the model rejects (a repeated id, ...)
        raise validation_error(exc, source, data) from None


def _convert(data: dict, source: str) -> P7Instance:
    deadlines = _deadlines(data, source)
    regions = _regions(data, source, deadlines)
    stock_raw = _object(data.get("resources"), source, "resources")
    stock = {}
    for key, value in stock_raw.items():
        res = NEED_ALIASES.get(key, key)
        if res not in RESOURCES:
            raise InstanceFormatError(source, f"unknown resource; known: {', '.join(RESOURCES)}",
                                      field=f"resources.{key}")
        stock[res] = int(_number(value, source, f"resources.{key}"))
    personnel = {str(k): int(_number(v, source, f"personnel.{k}"))
                 for k, v in _object(data.get("personnel", {}), source, "personnel").items()}
    horizon = UPSTREAM_START + _up(max(24.0, *deadlines.values()) * 60)
    _fill(source, "start", f"no clock; the relief starts at 08:00 and every trip arrives by "
          f"{horizon // 60 % 24:02d}:{horizon % 60:02d}{' (next day)' if horizon >= 24 * 60 else ''}")
    return P7Instance(
        name=str(data.get("instance_id") or Path(str(source)).stem),
        description=str(data.get("description", "")),
        start=UPSTREAM_START, horizon=horizon, slot_minutes=UPSTREAM_SLOT, stock=stock, personnel=personnel,
        regions=regions, vehicles=_vehicles(data, source),
        disruptions=_disruptions(data, source, [r.id for r in regions]),
    )


#: The shipped P7 files, crab_gym's JSON and upstream's: one loader for all of them.
FILES = InstanceFiles("P7", P7Instance, INSTANCE_DIR, from_upstream_p7, "disaster relief (P7)")


def shipped_p7_names() -> list[str]:
    """Names of the shipped P7 instances, sorted."""
    return FILES.names()


def load_p7(instance: str | Path | dict | P7Instance) -> P7Instance:
    """A P7 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES.load(instance)
