"""REALM-Bench P2, multi-group campus tours: instance model, generator, upstream reader.

* **Decision**: for every visitor group, the tour guide who leads it and the minute its tour
  starts.
* **Constraints**: a group is toured once; its tour starts no earlier than it arrives; the
  group fits the guide (``size <= guide.max_group_size``) and the campus-wide cap
  (``size <= max_group_size``); the whole tour (``tour_duration`` minutes) lies inside the
  guide's availability; a guide leads one group at a time (its tours do not overlap).
* **Objective**: minimise ``total waiting + balance_weight * imbalance``, where a group's
  waiting is ``max(0, start - preferred)`` minutes and the imbalance is the largest minus the
  smallest number of tours led by any guide (every guide counts, idle ones with 0).

Units: every time is an integer number of minutes; clock times are minutes from midnight.
Upstream REALM-Bench writes ``preferred_time``, ``arrival_time`` and ``availability`` in
clock hours and ``tour_duration`` in minutes; :func:`from_upstream_p2` converts.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem, InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.limits import NonNegInt, PosInt, is_number, too_large
from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model
from crab_gym.envs.realm.common.upstream import is_upstream_for

Size = Literal["small", "medium", "large"]

#: (groups low, groups high, guides low, guides high) per size class.
SIZE_COUNTS: dict[str, tuple[int, int, int, int]] = {
    "small": (4, 6, 2, 3),
    "medium": (10, 14, 3, 4),
    "large": (22, 30, 5, 7),
}

INSTANCE_DIR = Path(__file__).with_name("instances")


class P2Group(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    group_id: str
    size: PosInt
    arrival: NonNegInt = Field(description="clock minute the group arrives")
    preferred: NonNegInt = Field(description="clock minute the group would like to start")


class P2Guide(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    guide_id: str
    available_from: NonNegInt
    available_to: NonNegInt
    max_group_size: PosInt

    @model_validator(mode="after")
    def _ordered(self) -> P2Guide:
        if self.available_to < self.available_from:
            raise FieldProblem(
                "available_to",
                f"availability ends (minute {self.available_to}) before it starts ({self.available_from})",
            )
        return self


class P2Instance(BaseModel):
    """One multi-group tour instance; all times in minutes (clock times from midnight)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    groups: list[P2Group] = Field(min_length=1)
    guides: list[P2Guide] = Field(min_length=1)
    tour_duration: PosInt = Field(description="minutes every tour lasts")
    max_group_size: PosInt = Field(description="campus-wide cap on a group's size")
    balance_weight: NonNegInt = Field(default=30, description="cost minutes per tour of imbalance")
    size: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> P2Instance:
        for key, ids in (("groups", self.group_ids), ("guides", self.guide_ids)):
            for i, x in enumerate(ids):
                if x in ids[:i]:
                    kind = key[:-1]
                    raise FieldProblem(f"{key}[{i}].{kind}_id", f"{kind} id {x!r} repeats; ids must be unique")
        return self

    @property
    def group_ids(self) -> list[str]:
        return [g.group_id for g in self.groups]

    @property
    def guide_ids(self) -> list[str]:
        return [g.guide_id for g in self.guides]

    @cached_property
    def group_index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.group_ids)}

    @cached_property
    def guide_index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.guide_ids)}

    @property
    def horizon(self) -> int:
        """Latest minute any tour can end."""
        return max(g.available_to for g in self.guides)

    def compatible(self, group: int, guide: int) -> bool:
        """Whether the guide could lead the group at all (size and availability alone)."""
        gr, gu = self.groups[group], self.guides[guide]
        return (
            gr.size <= gu.max_group_size
            and gr.size <= self.max_group_size
            and max(gr.arrival, gu.available_from) + self.tour_duration <= gu.available_to
        )

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name)."""
        core = self.model_dump(
            include={"groups", "guides", "tour_duration", "max_group_size", "balance_weight"}
        )
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)


# ---------------------------------------------------------------------------------------
# Seeded generator
# ---------------------------------------------------------------------------------------
def generate_p2(
    size: Size = "small",
    seed: int = 0,
    name: str | None = None,
    n_groups: int | None = None,
    n_guides: int | None = None,
) -> P2Instance:
    """Draw a feasible multi-group tour instance; the same seed gives the same instance.

    ``n_groups`` / ``n_guides`` override the counts drawn for the size class (an env that
    draws a new instance per episode keeps its spaces and ids).

    Feasibility holds by construction: a hidden schedule places every group's tour on some
    guide first (inside the guide's availability, one tour at a time, within its size cap);
    each group then prefers a start up to 1.5 tours before its hidden start and arrives up
    to 30 minutes before that, so guides are contended and some waiting is unavoidable.
    """
    if size not in SIZE_COUNTS:
        raise ValueError(f"size must be one of {sorted(SIZE_COUNTS)}, got {size!r}")
    rng = np.random.default_rng([2, seed, list(SIZE_COUNTS).index(size)])
    g_lo, g_hi, k_lo, k_hi = SIZE_COUNTS[size]
    n_groups_drawn = int(rng.integers(g_lo, g_hi + 1))
    n_guides_drawn = int(rng.integers(k_lo, k_hi + 1))
    if n_groups is not None and n_groups < 1 or n_guides is not None and n_guides < 1:
        raise ValueError("n_groups and n_guides must be at least 1")
    n_groups = int(n_groups) if n_groups is not None else n_groups_drawn
    n_guides = int(n_guides) if n_guides is not None else n_guides_drawn
    duration = int(rng.choice([45, 60, 75, 90]))
    caps = [int(rng.choice([12, 15, 20, 25])) for _ in range(n_guides)]
    global_cap = max(caps)
    shifts = [(9 * 60, 17 * 60), (8 * 60, 13 * 60), (12 * 60, 18 * 60), (10 * 60, 16 * 60)]
    avail = [shifts[0]] + [shifts[int(rng.integers(0, len(shifts)))] for _ in range(n_guides - 1)]

    # Hidden schedule: guides take tours almost back to back, in random turns.
    free = [a for a, _ in avail]
    hidden: list[tuple[int, int]] = []  # (guide, start) per group
    for _ in range(n_groups):
        for k in rng.permutation(n_guides):
            start = free[k] + 5 * int(rng.integers(0, 3))
            if start + duration <= avail[k][1]:
                break
        else:  # every guide is full: lengthen the earliest-free guide's day
            k = int(np.argmin(free))
            start = free[k]
            avail[k] = (avail[k][0], start + duration)
        hidden.append((int(k), int(start)))
        free[k] = start + duration

    # Preferences cluster before the hidden starts, so some waiting is unavoidable.
    groups = []
    for g, (k, start) in enumerate(hidden):
        preferred = max(7 * 60 + 30, start - 5 * int(rng.integers(0, (3 * duration) // 10 + 1)))
        arrival = max(7 * 60, preferred - 5 * int(rng.integers(0, 7)))
        groups.append(
            P2Group(
                group_id=f"group{g + 1}",
                size=int(rng.integers(4, caps[k] + 1)),
                arrival=arrival,
                preferred=preferred,
            )
        )
    guides = [
        P2Guide(guide_id=f"guide{k + 1}", available_from=a, available_to=b, max_group_size=caps[k])
        for k, (a, b) in enumerate(avail)
    ]
    return P2Instance(
        name=name or f"p2_{size}_seed{seed}",
        description=(
            f"Campus tours ({size}): {n_groups} visitor groups, {n_guides} guides, "
            f"{duration}-minute tours."
        ),
        groups=groups,
        guides=guides,
        tour_duration=duration,
        max_group_size=global_cap,
        size=size,
    )


# ---------------------------------------------------------------------------------------
# Upstream REALM-Bench P2 JSON -> P2Instance
# ---------------------------------------------------------------------------------------
def _number(value: Any, source: str, field: str) -> float:
    if not is_number(value) or too_large(value):
        raise InstanceFormatError(source, f"expected a number within ±1e9, got {value!r}", field=field)
    return float(value)


def _hours(value: Any, source: str, field: str) -> int:
    h = _number(value, source, field)
    if not 0 <= h <= 48:
        raise InstanceFormatError(source, f"expected clock hours in [0, 48], got {value!r}", field=field)
    return int(round(h * 60))


def _count(value: Any, source: str, field: str) -> int:
    x = _number(value, source, field)
    if x != int(x) or x < 1:
        raise InstanceFormatError(source, f"expected a positive whole number, got {value!r}", field=field)
    return int(x)


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

    guides: list[P2Guide] = []
    caps_seen: list[int] = []
    for k, raw in enumerate(raw_guides):
        base = f"tour_guides[{k}]"
        if not isinstance(raw, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        for key in ("guide_id", "availability"):
            if key not in raw:
                raise InstanceFormatError(source, "missing required key", field=f"{base}.{key}")
        avail = raw["availability"]
        if not isinstance(avail, (list, tuple)) or len(avail) != 2:
            raise InstanceFormatError(
                source, f"expected [start_hour, end_hour], got {avail!r}", field=f"{base}.availability"
            )
        a = _hours(avail[0], source, f"{base}.availability[0]")
        b = _hours(avail[1], source, f"{base}.availability[1]")
        if b < a:
            warnings.warn(
                f"{source}: {base}.availability {avail} is inverted; swapped", RealmRepairWarning, stacklevel=2
            )
            a, b = b, a
        cap = raw.get("max_group_size")
        if cap is not None:
            caps_seen.append(_count(cap, source, f"{base}.max_group_size"))
        guides.append((str(raw["guide_id"]), a, b, cap))  # type: ignore[arg-type]

    if "max_group_size" in data:
        global_cap = _count(data["max_group_size"], source, "max_group_size")
    elif caps_seen:
        global_cap = max(caps_seen)
        warnings.warn(
            f"{source}: max_group_size missing; used the largest guide cap {global_cap}",
            RealmRepairWarning, stacklevel=2,
        )
    else:
        raise InstanceFormatError(source, "missing, and no guide states a cap", field="max_group_size")
    fixed_guides = []
    for k, (gid, a, b, cap) in enumerate(guides):  # type: ignore[misc]
        if cap is None:
            warnings.warn(
                f"{source}: tour_guides[{k}].max_group_size missing; used max_group_size {global_cap}",
                RealmRepairWarning, stacklevel=2,
            )
            cap = global_cap
        fixed_guides.append(P2Guide(guide_id=gid, available_from=a, available_to=b, max_group_size=int(cap)))

    groups: list[P2Group] = []
    for g, raw in enumerate(raw_groups):
        base = f"visitor_groups[{g}]"
        if not isinstance(raw, dict):
            raise InstanceFormatError(source, "expected an object", field=base)
        for key in ("group_id", "size", "preferred_time", "arrival_time"):
            if key not in raw:
                raise InstanceFormatError(source, "missing required key", field=f"{base}.{key}")
        arrival = _hours(raw["arrival_time"], source, f"{base}.arrival_time")
        preferred = _hours(raw["preferred_time"], source, f"{base}.preferred_time")
        if preferred < arrival:
            warnings.warn(
                f"{source}: {base}.preferred_time ({raw['preferred_time']}) is before its "
                f"arrival_time ({raw['arrival_time']}); moved to the arrival",
                RealmRepairWarning, stacklevel=2,
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
    id_lists = (("visitor_groups", [g.group_id for g in groups]), ("tour_guides", [g.guide_id for g in fixed_guides]))
    for key, ids in id_lists:
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if x in seen:
                field = f"{key}[{i}].{'group_id' if key == 'visitor_groups' else 'guide_id'}"
                raise InstanceFormatError(source, f"id {x!r} repeats", field=field)
            seen.add(x)
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
def shipped_p2_names() -> list[str]:
    """Names of the shipped P2 instances, sorted."""
    return shipped_names(INSTANCE_DIR, "p2")


def _from_mapping(data: Any, source: str) -> P2Instance:

    if is_upstream_for(data, source, ("P2",), "multi-group tour (P2)"):
        return from_upstream_p2(data, source)
    return validate_model(P2Instance, data, source)


def load_p2(instance: str | Path | dict | P2Instance) -> P2Instance:
    """A P2 instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
    return load_instance(instance, P2Instance, instance_dir=INSTANCE_DIR, problem="P2", from_mapping=_from_mapping)
