"""The files a P6/P9 instance comes in, and the loader that tells them apart.

* crab_gym's own JSON: a :class:`~.model.ThanksgivingInstance` dumped as is (the shipped
  instances, ``instances/p6`` and ``instances/p9``);
* a user's own upstream REALM-Bench P6 file (``cooking_tasks``, ``family_members``, clock
  times as ``"HH:MM"``) or P9 file (the same plus ``disruptions``), converted by
  :func:`from_upstream`, which fills what upstream lacks and repairs what is broken with one
  :class:`RealmRepairWarning` per repair, and rejects the rest with an
  :class:`InstanceFormatError` naming the file and the field.

Upstream gives no cooking durations, no travel time, no start of the plan and no minute at
which a delay becomes known: the reader uses :data:`DEFAULT_DURATIONS` (others
:data:`OTHER_DURATION`), :data:`DEFAULT_TRAVEL` minutes each way, a plan starting at
:data:`DEFAULT_START` and an announcement :data:`ANNOUNCE_BEFORE` minutes before the
scheduled landing (never before the start), and reports each default once.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.limits import is_number, too_large
from crab_gym.envs.realm.common.loading import validate_model
from crab_gym.envs.realm.thanksgiving.model import (
    INSTANCE_DIRS,
    Car,
    Flight,
    FlightDelay,
    Member,
    Task,
    ThanksgivingInstance,
)

#: Minutes and oven use of the dishes upstream names (it gives no durations).
DEFAULT_DURATIONS: dict[str, tuple[int, bool]] = {
    "turkey": (180, True), "stuffing": (45, True), "gravy": (20, False), "potatoes": (40, False),
    "mashed_potatoes": (20, False), "vegetables": (30, False), "dessert": (60, True),
}
OTHER_DURATION = 30
DEFAULT_TRAVEL = 45
DEFAULT_START = 12 * 60
ANNOUNCE_BEFORE = 60

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


def _repair(source: str, message: str) -> None:
    warnings.warn(f"{source}: {message}", RealmRepairWarning, stacklevel=3)


def clock_minutes(value: Any, source: str, field: str) -> int:
    """``"14:30"`` as minutes from midnight (870)."""
    match = _CLOCK.match(value) if isinstance(value, str) else None
    if match is None or int(match[1]) > 47 or int(match[2]) > 59:
        raise InstanceFormatError(source, f"expected a clock time 'HH:MM', got {value!r}", field=field)
    return 60 * int(match[1]) + int(match[2])


def _count(value: Any, source: str, field: str, low: int = 1) -> int:
    if not is_number(value) or too_large(value) or value != int(value) or value < low:
        raise InstanceFormatError(source, f"expected a whole number >= {low}, got {value!r}", field=field)
    return int(value)


def _id(value: Any, source: str, field: str) -> str:
    """An id as text, not empty: ids name agents and the values of the actions' enums."""
    text = str(value)
    if not text.strip():
        raise InstanceFormatError(source, f"expected a non-empty id, got {value!r}", field=field)
    return text


def _list(data: dict, key: str, source: str) -> list:
    if key not in data:
        raise InstanceFormatError(source, "missing required key", field=key)
    if not isinstance(data[key], list) or not data[key]:
        raise InstanceFormatError(source, "expected a non-empty list", field=key)
    return data[key]


def _object(value: Any, source: str, field: str, keys: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        raise InstanceFormatError(source, f"expected an object, got {type(value).__name__}", field=field)
    for key in keys:
        if key not in value:
            raise InstanceFormatError(source, "missing required key", field=f"{field}.{key}")
    return value


def _tasks(data: dict, source: str) -> list[Task]:
    names = []
    for i, t in enumerate(_list(data, "cooking_tasks", source)):
        if not isinstance(t, str) or not t:
            raise InstanceFormatError(source, f"expected a task name, got {t!r}", field=f"cooking_tasks[{i}]")
        names.append(t)
    _repair(source, "no cooking durations upstream; used crab_gym's defaults ("
            + ", ".join(f"{t} {DEFAULT_DURATIONS.get(t, (OTHER_DURATION, False))[0]} min" for t in names) + ")")
    return [Task(task_id=t, duration=DEFAULT_DURATIONS.get(t, (OTHER_DURATION, False))[0],
                 oven=DEFAULT_DURATIONS.get(t, (OTHER_DURATION, False))[1]) for t in names]


def _flights(data: dict, source: str) -> list[Flight]:
    raw = data.get("flights")
    if not isinstance(raw, dict) or not raw:
        raise InstanceFormatError(source, "expected a non-empty object of flights", field="flights")
    out = []
    for fid, f in raw.items():
        f = _object(f, source, f"flights.{fid}", ("arrival_time",))
        out.append(Flight(flight_id=_id(fid, source, f"flights.{fid}"), arrival=clock_minutes(f["arrival_time"], source, f"flights.{fid}.arrival_time")))
    return out


def _members(data: dict, source: str, tasks: list[str], flights: set[str]) -> list[Member]:
    out = []
    for i, m in enumerate(_list(data, "family_members", source)):
        base = f"family_members[{i}]"
        m = _object(m, source, base, ("id",))
        skills = m.get("skills", [])
        if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
            raise InstanceFormatError(source, f"expected a list of task names, got {skills!r}", field=f"{base}.skills")
        for j, s in enumerate(skills):
            if s not in tasks:
                raise InstanceFormatError(source, f"{s!r} is not one of cooking_tasks", field=f"{base}.skills[{j}]")
        flight = m.get("flight")
        arrival = m.get("arrival", "home" if flight is None else "airport")
        if arrival not in ("home", "airport"):
            raise InstanceFormatError(source, f"expected 'home' or 'airport', got {arrival!r}", field=f"{base}.arrival")
        if arrival == "airport" and (not isinstance(flight, str) or flight not in flights):
            raise InstanceFormatError(source, f"arrives at the airport on an unknown flight {flight!r}", field=f"{base}.flight")
        if arrival == "home" and flight is not None:
            raise InstanceFormatError(source, f"is home from the start yet names flight {flight!r}", field=f"{base}.flight")
        out.append(Member(member_id=_id(m["id"], source, f"{base}.id"), skills=list(skills), flight=flight))
    return out


def _cars(data: dict, source: str) -> list[Car]:
    out = []
    for i, v in enumerate(_list(data, "vehicles", source)):
        base = f"vehicles[{i}]"
        v = _object(v, source, base, ("id", "capacity"))
        place = v.get("location", "home")
        if place not in ("home", "airport"):
            raise InstanceFormatError(source, f"expected 'home' or 'airport', got {place!r}", field=f"{base}.location")
        out.append(Car(car_id=_id(v["id"], source, f"{base}.id"), seats=_count(v["capacity"], source, f"{base}.capacity"), start=place))
    return out


def _dependencies(data: dict, source: str, tasks: list[str]) -> list[tuple[str, str]]:
    raw = data.get("cooking_dependencies", [])
    if not isinstance(raw, list):
        raise InstanceFormatError(source, "expected a list of [before, after] pairs", field="cooking_dependencies")
    out = []
    for i, pair in enumerate(raw):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise InstanceFormatError(source, f"expected [before, after], got {pair!r}", field=f"cooking_dependencies[{i}]")
        missing = [x for x in pair if x not in tasks]
        if missing:
            _repair(source, f"cooking_dependencies[{i}] {pair} names {', '.join(map(repr, missing))}, "
                            "which is not a cooking task; dropped")
            continue
        out.append((pair[0], pair[1]))
    return out


def _delays(data: dict, source: str, flights: dict[str, int], start: int) -> list[FlightDelay]:
    out = []
    for i, d in enumerate(_list(data, "disruptions", source)):
        base = f"disruptions[{i}]"
        d = _object(d, source, base, ("type", "flight", "delay"))
        if d["type"] != "flight_delay":
            raise InstanceFormatError(source, f"unknown disruption type {d['type']!r} (P9 knows 'flight_delay')", field=f"{base}.type")
        if not isinstance(d["flight"], str) or d["flight"] not in flights:
            raise InstanceFormatError(source, f"{d['flight']!r} is not a flight", field=f"{base}.flight")
        delay = _count(d["delay"], source, f"{base}.delay", low=0)
        landing = flights[d["flight"]] + delay
        if "new_arrival_time" in d:
            written = clock_minutes(d["new_arrival_time"], source, f"{base}.new_arrival_time")
            if written != landing:
                _repair(source, f"{base}.new_arrival_time {d['new_arrival_time']!r} is not the scheduled arrival plus "
                                f"{delay} min; recomputed as {landing // 60:02d}:{landing % 60:02d}")
        announced = max(start, flights[d["flight"]] - ANNOUNCE_BEFORE)
        out.append(FlightDelay(flight=d["flight"], delay=delay, announced=announced))
    if out:
        _repair(source, f"no announcement time upstream; each delay is announced {ANNOUNCE_BEFORE} min before the "
                        "scheduled landing (not before the start)")
    return out


def from_upstream(data: Any, source: str) -> ThanksgivingInstance:
    """Convert a user's own upstream REALM-Bench P6 or P9 mapping (see the module docstring
    for the defaults and repairs)."""
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    tasks = _tasks(data, source)
    task_ids = [t.task_id for t in tasks]
    flights = _flights(data, source)
    members = _members(data, source, task_ids, {f.flight_id for f in flights})
    cons = _object(data.get("constraints", {}), source, "constraints", ())
    deadline = clock_minutes(cons.get("dinner_deadline", "18:00"), source, "constraints.dinner_deadline")
    capacity = _count(cons.get("kitchen_capacity", min(len(members), len(task_ids))), source,
                      "constraints.kitchen_capacity")
    if capacity > len(task_ids):
        _repair(source, f"kitchen_capacity {capacity} is above the number of cooking tasks ({len(task_ids)}); "
                        f"read as {len(task_ids)}, since no more tasks can run at once")
        capacity = len(task_ids)
    if "max_cooks" in cons:
        cooks = _count(cons["max_cooks"], source, "constraints.max_cooks")
        if cooks < capacity:
            _repair(source, f"max_cooks {cooks} is below kitchen_capacity {capacity}; at most {cooks} tasks run at once")
            capacity = cooks
    for t in task_ids:
        if not any(t in m.skills for m in members):
            _repair(source, f"no family member has the skill to cook {t!r}; every member may cook it")
            members = [m.model_copy(update={"skills": [*m.skills, t]}) for m in members]
    _repair(source, f"no travel times upstream; home <-> airport takes {DEFAULT_TRAVEL} min each way, "
                    f"and the plan starts at {DEFAULT_START // 60:02d}:{DEFAULT_START % 60:02d}")
    delays = _delays(data, source, {f.flight_id: f.arrival for f in flights}, DEFAULT_START) if "disruptions" in data else []
    data = {
        "name": str(data.get("instance_id") or Path(str(source)).stem),
        "description": str(data.get("description", "")),
        "start_time": DEFAULT_START,
        "deadline": deadline,
        "travel_minutes": DEFAULT_TRAVEL,
        "kitchen_capacity": capacity,
        "cars": _cars(data, source),
        "members": members,
        "flights": flights,
        "tasks": tasks,
        "dependencies": _dependencies(data, source, task_ids),
        "delays": delays,
    }
    return validate_model(ThanksgivingInstance, data, source)  # ids unique, no cycle


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
#: The P6 and P9 files, crab_gym's JSON and upstream's: one loader for each problem.
FILES: dict[str, InstanceFiles] = {
    "P6": InstanceFiles("P6", ThanksgivingInstance, INSTANCE_DIRS["p6"], from_upstream, "Thanksgiving dinner (P6)"),
    "P9": InstanceFiles("P9", ThanksgivingInstance, INSTANCE_DIRS["p9"], from_upstream,
                        "Thanksgiving dinner with flight delays (P9)"),
}


def shipped_p6_names() -> list[str]:
    return FILES["P6"].names()


def shipped_p9_names() -> list[str]:
    return FILES["P9"].names()


def load_p6(instance: str | Path | dict | ThanksgivingInstance) -> ThanksgivingInstance:
    """A P6 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES["P6"].load(instance)


def load_p9(instance: str | Path | dict | ThanksgivingInstance) -> ThanksgivingInstance:
    """A P9 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES["P9"].load(instance)
