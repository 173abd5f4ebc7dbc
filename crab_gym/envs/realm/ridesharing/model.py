"""REALM-Bench P3 and P4, urban ride-sharing: the instance models.

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

P4 is P3 plus a schedule of disruptions that happen at given minutes
(:class:`P4Instance`; the disruptions are :mod:`crab_gym.envs.realm.ridesharing.disruptions`).

Units: every time is an integer number of minutes; clock times are minutes from midnight.
Travel between two places is the shortest path over the listed roads (see
:mod:`crab_gym.envs.realm.ridesharing.network`).

The generators are :mod:`~crab_gym.envs.realm.ridesharing.generator`; the upstream reader and
the loaders are :mod:`~crab_gym.envs.realm.ridesharing.formats` (the writer is
:meth:`P3Instance.to_upstream`).

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
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError
from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, Coordinate, NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique
from crab_gym.envs.realm.ridesharing.disruptions import (
    Accident,
    Construction,
    Disruption,
    TrafficDelay,
    check_disruption_fits,
)
from crab_gym.envs.realm.ridesharing.network import RoadNetwork

Size = Literal["small", "medium", "large"]

#: Folder of each problem's shipped instances and their ``references.json``.
INSTANCE_DIRS: dict[str, Path] = {p: Path(__file__).with_name("instances") / p for p in ("p3", "p4")}

#: Default minutes charged for each unserved request (more than any detour in our cities).
DEFAULT_UNSERVED_PENALTY = 5000


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


def check_id(value: str, field: str, *, vehicle: bool) -> None:
    """Raise :class:`FieldProblem` at ``field`` if ``value`` cannot be an id (:func:`id_problem`)."""
    problem = id_problem(value, vehicle=vehicle)
    if problem:
        raise FieldProblem(field, problem)


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
        check_id(self.vehicle_id, "vehicle_id", vehicle=True)
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
        check_id(self.passenger_id, "passenger_id", vehicle=False)
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
        check_unique(self.locations, "locations[{}]", "location")
        if len(self.roads) != n:
            raise FieldProblem("roads", f"expected a {n}x{n} matrix (one row per location), got {len(self.roads)} rows")
        for i, row in enumerate(self.roads):
            if len(row) != n:
                raise FieldProblem(f"roads[{i}]", f"expected {n} entries (one per location), got {len(row)}")
        if self.coords is not None and len(self.coords) != n:
            raise FieldProblem("coords", f"expected one position per location ({n}), got {len(self.coords)}")
        check_unique((r.passenger_id for r in self.requests), "requests[{}].passenger_id", "passenger id", "ids must be unique")
        check_unique((v.vehicle_id for v in self.vehicles), "vehicles[{}].vehicle_id", "vehicle id", "ids must be unique")
        names = set(self.locations)
        places = [(f"requests[{k}].{key}", getattr(r, key)) for k, r in enumerate(self.requests) for key in ("pickup", "dropoff")]
        places += [(f"vehicles[{k}].location", v.location) for k, v in enumerate(self.vehicles)]
        for field, place in places:
            if place not in names:
                raise FieldProblem(field, f"{place!r} is not one of the locations")
        if not self.network.connected():
            raise FieldProblem("roads", "some places cannot be reached from others over the roads")
        return self

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def network(self) -> RoadNetwork:
        """The roads as a network (shortest paths, disruption effects)."""
        return RoadNetwork(self.locations, self.roads)

    @property
    def index(self) -> dict[str, int]:
        """Location name -> matrix row (the network's)."""
        return self.network.index

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
        distances = {}
        for i, a in enumerate(self.locations):
            for j, b in enumerate(self.locations):
                if i != j and self.roads[i][j] is not None:
                    distances[f"{a}-{b}"] = int(self.roads[i][j])
        return {
            "instance_id": self.name,
            "city_map": {"locations": list(self.locations), "distances": distances},
            "ride_requests": [
                {
                    "passenger_id": r.passenger_id,
                    "pickup": r.pickup,
                    "dropoff": r.dropoff,
                    "time_window": [r.pickup_window[0] / 60.0, r.pickup_window[1] / 60.0],
                    "deadline": r.latest_dropoff - r.pickup_window[1],
                }
                for r in self.requests
            ],
            "vehicles": [
                {
                    "vehicle_id": v.vehicle_id,
                    "location": v.location,
                    "capacity": v.capacity,
                    "fuel": v.fuel if v.fuel is not None else 100,
                }
                for v in self.vehicles
            ],
            "start_time": self.start_time / 60.0,
            "description": self.description or "Urban ride-sharing instance",
        }


class P4Instance(P3Instance):
    """A P3 instance plus its schedule of disruptions (each with a start minute)."""

    disruptions: list[Disruption] = Field(default_factory=list)

    @model_validator(mode="after")
    def _disruptions_fit(self) -> P4Instance:
        for k, d in enumerate(self.disruptions):
            if d.start is None:
                raise FieldProblem(f"disruptions[{k}].start", "a scheduled disruption needs a start minute")
            try:
                check_disruption_fits(d, self.locations, self.roads)
            except InvalidDisruptionError as exc:
                raise FieldProblem(f"disruptions[{k}]", str(exc)) from None
        return self

    @classmethod
    def from_p3(cls, instance: P3Instance) -> P4Instance:
        """A plain P3 instance as a P4 instance without disruptions."""
        return cls(**{k: getattr(instance, k) for k in P3Instance.model_fields}, disruptions=[])

    def to_upstream(self) -> dict[str, Any]:
        """This instance in upstream REALM-Bench's P4 shape (start_time in hours)."""
        out = super().to_upstream()
        items = []
        for d in self.disruptions:
            item: dict[str, Any] = {"type": d.type}
            if isinstance(d, Accident):
                item["location"] = d.location
            else:
                item["route"] = d.route
            item["start_time"] = d.start / 60.0
            item["duration"] = d.duration
            if isinstance(d, TrafficDelay):
                item["delay"] = d.delay
            elif isinstance(d, (Accident, Construction)):
                item["delay"] = d.delay  # not upstream, but keeps our reading on a round trip
            item["impact"] = d.impact
            items.append(item)
        out["disruptions"] = items
        out["description"] = self.description or "Urban ride-sharing with disruptions instance"
        return out
