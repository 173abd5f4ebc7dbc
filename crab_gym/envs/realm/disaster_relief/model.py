"""REALM-Bench P7, disaster relief: the instance type, its disruptions and the scoring rules.

| part | model |
|---|---|
| decision | a sequence of trips per vehicle; a trip leaves the base at ``depart``, carries a load of each resource to one region and comes back |
| hard constraints | a load fits the vehicle's ``capacity`` (units, all resources together); a load is in stock at the base when the trip leaves (after shortages); a trip may not leave for a region while a weather block is in force there; a vehicle makes one trip at a time; a trip arrives by the ``horizon`` |
| objective | minimise ``K * shortfall + transport_minutes`` (lexicographic: first the severity-weighted need left unmet, then the transport time) |

Units: minutes from midnight for every time, units (kits, rations, litres, tents) for every
quantity, kilometres for positions, km/h for speeds. A trip's one-way time is the distance
over the speed, rounded *up* to the instance's time grid (``slot_minutes``); the round trip
takes twice that, and the load arrives after the one-way time.

Scoring (:func:`shortfall_points`): a region of weight ``w`` (critical 4, urgent 2, normal 1)
costs ``2 w`` per unit of need not met, ``w`` per unit met late (after its deadline, by the
horizon: half credit) and nothing per unit met by its deadline. Units beyond a need earn
nothing. ``K`` (:attr:`P7Instance.minute_weight`) exceeds any possible transport time, so
one point of shortfall outweighs every minute of driving.

Disruptions fire at their ``start``: a ``weather_event`` blocks departures to its region
for ``duration`` minutes (a trip already under way still arrives); a ``resource_shortage``
destroys ``floor(fraction * remaining)`` units of a resource at the base.
"""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import Coordinate, NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique

#: Where the shipped instances and their ``references.json`` live.
INSTANCE_DIR = Path(__file__).with_name("instances")

#: The resources, in the order of every array and of the step action's ``resource``.
RESOURCES: tuple[str, ...] = ("medical_supplies", "food", "water", "shelter")
#: Severity classes, most urgent first, and their weight per unit of need.
SEVERITY_WEIGHTS: dict[str, int] = {"critical": 4, "urgent": 2, "normal": 1}
#: Upstream's deadlines in hours after the start, by severity.
DEADLINE_HOURS: dict[str, int] = {"critical": 2, "urgent": 6, "normal": 24}
#: Units of need per person, by resource (upstream gives none; see ``docs/disaster_relief.md``).
NEED_PER_PERSON: dict[str, float] = {"medical_supplies": 0.2, "food": 1.0, "water": 1.0, "shelter": 0.25}

Severity = Literal["critical", "urgent", "normal"]
Resource = Literal["medical_supplies", "food", "water", "shelter"]


def need_of(population: int, resource: str) -> int:
    """Units of ``resource`` a population needs (the per-person rate, rounded up)."""
    return int(math.ceil(population * NEED_PER_PERSON[resource] - 1e-9))


@lru_cache(maxsize=1024)
def shortage_ratio(fraction: float) -> tuple[int, int]:
    """``fraction`` as the nearest ratio ``p / q`` with ``q <= 10**6``: the exact value every
    computation of a shortage uses (the simulation, the checker and the oracle agree on it).
    Kept per fraction: ``limit_denominator`` is slow, and a shortage strikes every episode."""
    ratio = Fraction(fraction).limit_denominator(10**6)
    return ratio.numerator, ratio.denominator


def lost_units(remaining: int, fraction: float) -> int:
    """Units a shortage of ``fraction`` destroys from ``remaining`` units (rounded down)."""
    p, q = shortage_ratio(fraction)
    return remaining * p // q


class Region(BaseModel):
    """A region in need: where it is, how urgent, what it needs and by when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    severity: Severity
    population: NonNegInt
    x: Coordinate = Field(description="km east of the map origin")
    y: Coordinate = Field(description="km north of the map origin")
    needs: dict[Resource, PosInt] = Field(min_length=1, description="units needed per resource")
    deadline: NonNegInt = Field(description="minute from midnight by which the need is met on time")

    @property
    def weight(self) -> int:
        return SEVERITY_WEIGHTS[self.severity]


class Vehicle(BaseModel):
    """A vehicle at the base: how much it carries per trip and how fast it goes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    type: str = Field(min_length=1, description="helicopter, truck, ... (display only)")
    capacity: PosInt = Field(description="units per trip, all resources together")
    speed_kmh: Annotated[float, Field(gt=0, le=10_000, allow_inf_nan=False)]


class WeatherEvent(BaseModel):
    """A weather block: no trip may leave for ``region`` during ``[start, start + duration)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["weather_event"] = "weather_event"
    region: str = Field(min_length=1)
    start: NonNegInt | None = Field(default=None, description="minute from midnight; None = now")
    duration: NonNegInt = Field(description="minutes")
    impact: str = "transport_blocked"

    @property
    def end(self) -> int | None:
        return None if self.start is None else self.start + self.duration

    @property
    def where(self) -> str:
        return self.region

    def describe(self) -> str:
        return f"weather blocks {self.region} from {_hhmm(self.start)} for {self.duration} min"


class ResourceShortage(BaseModel):
    """A shortage: at ``start`` the base loses ``floor(fraction * remaining)`` units of ``resource``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["resource_shortage"] = "resource_shortage"
    resource: Resource
    start: NonNegInt | None = Field(default=None, description="minute from midnight; None = now")
    fraction: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
    duration: Literal[0] = Field(default=0, description="a shortage is instantaneous")

    @property
    def end(self) -> int | None:
        return self.start

    @property
    def where(self) -> str:
        return self.resource

    def describe(self) -> str:
        return f"shortage destroys {self.fraction:.0%} of the {self.resource} left at {_hhmm(self.start)}"


Disruption = Annotated[WeatherEvent | ResourceShortage, Field(discriminator="type")]
#: Validates a mapping into the right :data:`Disruption` model (by its ``type``).
DISRUPTION_ADAPTER: TypeAdapter = TypeAdapter(Disruption)


def _hhmm(minute: int | None) -> str:
    return "now" if minute is None else f"{minute // 60:02d}:{minute % 60:02d}"


class P7Instance(BaseModel):
    """One disaster-relief instance (see the module docstring for the model)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    size: str | None = None
    start: NonNegInt = Field(description="minute from midnight when the relief starts")
    horizon: NonNegInt = Field(description="minute from midnight by which every trip arrives")
    slot_minutes: PosInt = Field(default=30, description="the time grid: travel, disruptions, deadlines")
    base: tuple[Coordinate, Coordinate] = Field(default=(0.0, 0.0), description="base position in km")
    stock: dict[Resource, NonNegInt] = Field(description="units at the base at the start")
    personnel: dict[str, NonNegInt] = Field(default_factory=dict, description="informational (upstream)")
    regions: list[Region] = Field(min_length=1)
    vehicles: list[Vehicle] = Field(min_length=1)
    disruptions: list[Disruption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> P7Instance:
        check_unique([r.id for r in self.regions], "regions[{}].id", "region id")
        check_unique([v.id for v in self.vehicles], "vehicles[{}].id", "vehicle id")
        slot = self.slot_minutes
        if self.horizon <= self.start:
            raise FieldProblem("horizon", f"minute {self.horizon} is not after the start ({self.start})")
        for key in ("start", "horizon"):
            if getattr(self, key) % slot:
                raise FieldProblem(key, f"expected a multiple of slot_minutes ({slot})")
        for i, r in enumerate(self.regions):
            if r.deadline % slot or not self.start <= r.deadline:
                raise FieldProblem(f"regions[{i}].deadline", f"expected a multiple of {slot} from the start on")
        ids = {r.id for r in self.regions}
        for i, d in enumerate(self.disruptions):
            if d.start is None:
                raise FieldProblem(f"disruptions[{i}].start", "an instance's disruption needs a start minute")
            if d.start % slot or d.duration % slot:
                raise FieldProblem(f"disruptions[{i}]", f"start and duration must be multiples of {slot}")
            if isinstance(d, WeatherEvent) and d.region not in ids:
                raise FieldProblem(f"disruptions[{i}].region", f"{d.region!r} is not one of the regions")
        return self

    # -- derived data -------------------------------------------------------------------
    @property
    def region_ids(self) -> list[str]:
        return [r.id for r in self.regions]

    @property
    def vehicle_ids(self) -> list[str]:
        return [v.id for v in self.vehicles]

    @property
    def n_slots(self) -> int:
        """Grid slots from the start to the horizon."""
        return (self.horizon - self.start) // self.slot_minutes

    def distance_km(self, r: int) -> float:
        """Straight-line km from the base to region ``r``."""
        reg = self.regions[r]
        return math.hypot(reg.x - self.base[0], reg.y - self.base[1])

    @cached_property
    def one_way(self) -> list[list[int]]:
        """``one_way[v][r]``: minutes from the base to region ``r`` by vehicle ``v``, rounded
        up to the grid (at least one slot)."""
        slot = self.slot_minutes
        return [
            [max(slot, slot * math.ceil(self.distance_km(r) / v.speed_kmh * 60 / slot - 1e-9))
             for r in range(len(self.regions))]
            for v in self.vehicles
        ]

    def need(self, r: int, resource: str) -> int:
        return self.regions[r].needs.get(resource, 0)  # type: ignore[call-overload]

    @property
    def minute_weight(self) -> int:
        """``K``: more than any plan's transport minutes (each vehicle drives at most the
        horizon plus one more trip)."""
        longest = max(max(row) for row in self.one_way)
        return len(self.vehicles) * 2 * (self.horizon - self.start + longest) + 1

    @property
    def total_points(self) -> int:
        """Shortfall points of doing nothing: ``2 w`` per unit of need."""
        return sum(2 * r.weight * q for r in self.regions for q in r.needs.values())

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name or description)."""
        core = self.model_dump(exclude={"name", "description", "size", "personnel"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]


def shortfall_points(inst: P7Instance, on_time: list[dict[str, int]], late: list[dict[str, int]]) -> int:
    """Severity-weighted need left unmet, from the units each region received by its deadline
    (``on_time[r]``) and after it, by the horizon (``late[r]``), per resource."""
    return inst.total_points - sum(region_credit(inst, r, on_time[r], late[r]) for r in range(len(inst.regions)))


def region_credit(inst: P7Instance, r: int, on_time: dict[str, int], late: dict[str, int]) -> int:
    """Shortfall points region ``r`` is spared by what it received: ``2 w`` per unit needed and
    received by the deadline, ``w`` per unit received late (the complement of its shortfall)."""
    reg, credit = inst.regions[r], 0
    for res, need in reg.needs.items():
        on = min(need, on_time.get(res, 0))
        credit += reg.weight * (2 * on + min(need - on, late.get(res, 0)))
    return credit
