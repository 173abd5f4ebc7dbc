"""The files a P2 instance comes in, and the loader that tells them apart.

* crab_gym's own JSON: a :class:`~.model.P2Instance` dumped as is (the shipped instances);
* a user's own upstream REALM-Bench P2 file (``visitor_groups``, ``tour_guides``, times in
  clock hours), converted by :func:`from_upstream_p2`, which repairs what it can with a
  warning per repair and rejects the rest with an :class:`InstanceFormatError`.

:func:`load_p2` takes a shipped name, a path to either kind of file, a mapping or an instance.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.clock_hours import hour_window, hours_to_minutes
from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.limits import is_number, too_large
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR, P2Group, P2Guide, P2Instance


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P2 JSON -> P2Instance
# ---------------------------------------------------------------------------------------
def _number(value: Any, source: str, field: str) -> float:
    if not is_number(value) or too_large(value):
        raise InstanceFormatError(source, f"expected a number within ±1e9, got {value!r}", field=field)
    return float(value)


def _count(value: Any, source: str, field: str) -> int:
    x = _number(value, source, field)
    if x != int(x) or x < 1:
        raise InstanceFormatError(source, f"expected a positive whole number, got {value!r}", field=field)
    return int(x)


def _check_entry(raw: Any, source: str, base: str, keys: tuple[str, ...]) -> None:
    """A list entry must be an object holding ``keys``."""
    if not isinstance(raw, dict):
        raise InstanceFormatError(source, "expected an object", field=base)
    for key in keys:
        if key not in raw:
            raise InstanceFormatError(source, "missing required key", field=f"{base}.{key}")


_GuideRow = tuple[str, int, int, int | None]


def _guide_rows(raw_guides: list, source: str) -> list[_GuideRow]:
    """Each guide as (id, from, to, its cap or None), availability in minutes (inverted: swapped)."""
    guides: list[_GuideRow] = []
    for k, raw in enumerate(raw_guides):
        base = f"tour_guides[{k}]"
        _check_entry(raw, source, base, ("guide_id", "availability"))
        avail = raw["availability"]
        a, b = hour_window(avail, source, f"{base}.availability")
        if b < a:
            warnings.warn(
                f"{source}: {base}.availability {avail} is inverted; swapped", RealmRepairWarning, stacklevel=3
            )
            a, b = b, a
        cap = raw.get("max_group_size")
        if cap is not None:
            cap = _count(cap, source, f"{base}.max_group_size")
        guides.append((str(raw["guide_id"]), a, b, cap))
    return guides


def _global_cap(data: dict, caps_seen: list[int], source: str) -> int:
    """``max_group_size``, else (with a warning) the largest guide cap."""
    if "max_group_size" in data:
        return _count(data["max_group_size"], source, "max_group_size")
    if caps_seen:
        global_cap = max(caps_seen)
        warnings.warn(
            f"{source}: max_group_size missing; used the largest guide cap {global_cap}",
            RealmRepairWarning, stacklevel=3,
        )
        return global_cap
    raise InstanceFormatError(source, "missing, and no guide states a cap", field="max_group_size")


def _capped_guides(guides: list[_GuideRow], global_cap: int, source: str) -> list[P2Guide]:
    """The guides, one without a cap given the campus-wide cap (with a warning)."""
    fixed_guides = []
    for k, (gid, a, b, cap) in enumerate(guides):
        if cap is None:
            warnings.warn(
                f"{source}: tour_guides[{k}].max_group_size missing; used max_group_size {global_cap}",
                RealmRepairWarning, stacklevel=3,
            )
            cap = global_cap
        fixed_guides.append(P2Guide(guide_id=gid, available_from=a, available_to=b, max_group_size=int(cap)))
    return fixed_guides


def _groups(raw_groups: list, source: str) -> list[P2Group]:
    """The visitor groups, times in minutes (a preferred start before arrival moved to it)."""
    groups: list[P2Group] = []
    for g, raw in enumerate(raw_groups):
        base = f"visitor_groups[{g}]"
        _check_entry(raw, source, base, ("group_id", "size", "preferred_time", "arrival_time"))
        arrival = hours_to_minutes(raw["arrival_time"], source, f"{base}.arrival_time")
        preferred = hours_to_minutes(raw["preferred_time"], source, f"{base}.preferred_time")
        if preferred < arrival:
            warnings.warn(
                f"{source}: {base}.preferred_time ({raw['preferred_time']}) is before its "
                f"arrival_time ({raw['arrival_time']}); moved to the arrival",
                RealmRepairWarning, stacklevel=3,
            )
            preferred = arrival
        groups.append(
            P2Group(
                group_id=str(raw["group_id"]),
                size=_count(raw["size"], source, f"{base}.size"),
                arrival=arrival,
                preferred=preferred,
            )
        )
    return groups


def _check_unique_ids(groups: list[P2Group], guides: list[P2Guide], source: str) -> None:
    """Group ids and guide ids must not repeat (the first repeat is named)."""
    id_lists = (("visitor_groups", [g.group_id for g in groups]), ("tour_guides", [g.guide_id for g in guides]))
    for key, ids in id_lists:
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if x in seen:
                field = f"{key}[{i}].{'group_id' if key == 'visitor_groups' else 'guide_id'}"
                raise InstanceFormatError(source, f"id {x!r} repeats", field=field)
            seen.add(x)


def from_upstream_p2(data: dict, source: str) -> P2Instance:
    """Convert a user's own upstream REALM-Bench P2 mapping into a :class:`P2Instance`.

    Hours (``preferred_time``, ``arrival_time``, ``availability``) become minutes from
    midnight. Repairs, each reported as a :class:`RealmRepairWarning`: an inverted
    availability swapped; a preferred start before the arrival moved to the arrival (a
    group cannot start before it is there); a guide without ``max_group_size`` given the
    campus-wide cap. Anything else unusable raises :class:`InstanceFormatError` naming
    ``source`` and the field.
    """
    if not isinstance(data, dict):
        raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
    for key in ("visitor_groups", "tour_guides", "tour_duration"):
        if key not in data:
            raise InstanceFormatError(source, "missing required key", field=key)
    raw_groups, raw_guides = data["visitor_groups"], data["tour_guides"]
    for key, val in (("visitor_groups", raw_groups), ("tour_guides", raw_guides)):
        if not isinstance(val, list) or not val:
            raise InstanceFormatError(source, "expected a non-empty list", field=key)
    duration = _count(data["tour_duration"], source, "tour_duration")
    guides = _guide_rows(raw_guides, source)
    global_cap = _global_cap(data, [cap for *_, cap in guides if cap is not None], source)
    fixed_guides = _capped_guides(guides, global_cap, source)
    groups = _groups(raw_groups, source)
    _check_unique_ids(groups, fixed_guides, source)
    return P2Instance(
        name=str(data.get("instance_id") or Path(str(source)).stem),
        description=str(data.get("description", "")),
        groups=groups,
        guides=fixed_guides,
        tour_duration=duration,
        max_group_size=global_cap,
    )


# ---------------------------------------------------------------------------------------
# Loading: shipped name | path | mapping | object
# ---------------------------------------------------------------------------------------
#: The shipped P2 files, crab_gym's JSON and upstream's: one loader for all of them.
FILES = InstanceFiles("P2", P2Instance, INSTANCE_DIR, from_upstream_p2, "multi-group tour (P2)")


def shipped_p2_names() -> list[str]:
    """Names of the shipped P2 instances, sorted."""
    return FILES.names()


def load_p2(instance: str | Path | dict | P2Instance) -> P2Instance:
    """A P2 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return FILES.load(instance)
